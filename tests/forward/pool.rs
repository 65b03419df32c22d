//! The upstream connection pools (one per serving thread): kept-alive
//! connections are reused, and a pooled connection the upstream closed is
//! replaced without failing a request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use http::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::*;

/// A raw HTTP/1.1 upstream answering GETs with "ok"; counts the connections
/// that carried a request. With `close_after_one`, it closes each connection
/// after its first answer, without saying so.
async fn counting_upstream(close_after_one: bool) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let used = Arc::new(AtomicUsize::new(0));
    let count = used.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                let mut first = true;
                loop {
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4;
                    buf.drain(..end);
                    if first {
                        count.fetch_add(1, Ordering::SeqCst);
                        first = false;
                    }
                    let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                    if s.write_all(answer).await.is_err() || close_after_one {
                        return;
                    }
                }
            });
        }
    });
    (addr, used)
}

#[tokio::test]
async fn sequential_requests_reuse_kept_alive_upstream_connections() {
    let (up, used) = counting_upstream(false).await;
    let tap = proxy(config(up)).await;
    for _ in 0..20 {
        let (head, body) = get(tap.listen_addr(), "/").await;
        assert_eq!((head.status, &body[..]), (StatusCode::OK, &b"ok"[..]));
    }
    // Each request comes on a new caller connection; the connections are
    // shared out among the serving threads, each with its own pool: at most
    // one upstream connection per thread.
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let used = used.load(Ordering::SeqCst);
    assert!(
        (1..=threads.min(19)).contains(&used),
        "{used} upstream connections for 20 requests, {threads} serving threads"
    );
}

#[tokio::test]
async fn a_pooled_connection_closed_by_the_upstream_is_replaced() {
    let (up, used) = counting_upstream(true).await;
    let tap = proxy(config(up)).await;
    for _ in 0..20 {
        let (head, body) = get(tap.listen_addr(), "/").await;
        assert_eq!((head.status, &body[..]), (StatusCode::OK, &b"ok"[..]));
    }
    assert_eq!(used.load(Ordering::SeqCst), 20);
}
