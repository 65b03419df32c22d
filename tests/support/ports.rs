//! Ports for a server that cannot take a listener from the test nor bind
//! :0 and say which port it got: a2a-tap where an agent's card (or its own
//! `public_url`) must name its address before it starts, `redis-server`
//! (whose `--port 0` turns TCP off), a2a-tap signalled the moment its
//! listener accepts (before its startup line). Everything else binds
//! 127.0.0.1:0; an address that refuses connections is held bound, never
//! listening.

use std::net::TcpListener;

/// A port that was free a moment ago, for such a server to bind: drawn,
/// released and bound again (a race, narrowed): below the kernel's
/// ephemeral range (32768-60999 by default), where the outgoing connections
/// of the tests running beside this one and every bind to port 0 take
/// their ports, so a port found free here is not taken by them before the
/// server binds it (a port from `:0` was, now and then, under load).
/// Picked at random, tried until free; a counter, so that tests asking at
/// the same moment never draw alike.
pub fn port_named_in_advance() -> u16 {
    static DRAWN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let drawn = DRAWN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut seed = u64::from(std::process::id()).wrapping_mul(1_000_003)
        ^ drawn.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
    for _ in 0..1000 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let port = 20_000 + ((seed >> 33) % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

/// An address on which a connect is refused, for as long as the returned
/// socket lives: bound but never listening, so nothing else can take the
/// port meanwhile (a listener bound and dropped could be taken by the next
/// bind to :0 and then answer).
pub fn refused() -> (tokio::net::TcpSocket, std::net::SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .bind("127.0.0.1:0".parse().expect("addr"))
        .expect("bind 127.0.0.1:0");
    let addr = socket.local_addr().expect("local addr");
    (socket, addr)
}
