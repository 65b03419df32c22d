//! Hostile and faulty peers: answers framed every way an upstream may frame
//! them (Content-Length and Transfer-Encoding together included), a caller
//! naming `Host` in `Connection`, a `CONNECT`.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{Request, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::support::*;

/// An upstream that answers every request with `raw` (status line,
/// headers and body as written), then closes the connection.
pub(crate) async fn raw_upstream(raw: &'static [u8]) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                if read_head(&mut s).await.is_none() {
                    return;
                }
                let _ = s.write_all(raw).await;
                let _ = s.shutdown().await;
            });
        }
    });
    addr
}

/// Every way an upstream may frame an answer reaches HTTP/1.1 and h2c
/// callers whole: Content-Length, chunked, both (RFC 9112 §6.3: chunked
/// wins and the length must go; before, the caller got the first 5 bytes
/// of a 3-event stream), close-delimited, HTTP/1.0 with and without a
/// length, and bodiless statuses.
#[tokio::test]
async fn every_framing_of_an_upstream_answer_reaches_the_caller_whole() {
    let chunked = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
    let cases: [(&str, &'static [u8], u16, &str); 7] = [
        ("content-length", b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello", 200, "hello"),
        (
            "chunked",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n9\r\ndata: 1\n\n\r\n12\r\ndata: 2\n\ndata: 3\n\n\r\n0\r\n\r\n",
            200,
            chunked,
        ),
        (
            "both",
            b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\ncontent-type: text/event-stream\r\n\r\n9\r\ndata: 1\n\n\r\n12\r\ndata: 2\n\ndata: 3\n\n\r\n0\r\n\r\n",
            200,
            chunked,
        ),
        ("close-delimited", b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end", 200, "until the end"),
        ("http/1.0 length", b"HTTP/1.0 200 OK\r\ncontent-length: 3\r\n\r\nold", 200, "old"),
        ("http/1.0 close", b"HTTP/1.0 200 OK\r\n\r\nold and open", 200, "old and open"),
        ("no content", b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n", 204, ""),
    ];
    for (name, raw, status, body) in cases {
        let tap = proxy(config(raw_upstream(raw).await)).await;
        for client in [client(), h2_client()] {
            let req = Request::get(format!("http://{}/x", tap.listen_addr()))
                .body(full(Bytes::new()))
                .expect("request");
            let (head, got) = send(&client, req).await;
            assert_eq!(head.status.as_u16(), status, "{name} {:?}", head.version);
            assert_eq!(
                String::from_utf8_lossy(&got),
                body,
                "{name} {:?}",
                head.version
            );
            if name == "both" {
                assert!(
                    head.headers.get("content-length").is_none(),
                    "{name}: {head:?}"
                );
            }
        }
    }
}

/// `Connection: host` cannot strip Host: the upstream always gets the
/// upstream's authority (before, a caller could make it receive an
/// HTTP/1.1 request without Host); `Connection` naming Content-Length
/// leaves the body's framing alone.
#[tokio::test]
async fn connection_cannot_name_host_or_content_length_away() {
    let up = upstream(|req| async move {
        let host = format!("{:?}", req.headers().get("host"));
        let len = format!("{:?}", req.headers().get("content-length"));
        http::Response::new(full(format!("host={host} len={len}")))
    })
    .await;
    let tap = proxy(config(up)).await;
    let mut s = TcpStream::connect(tap.listen_addr())
        .await
        .expect("connect");
    s.write_all(b"POST /x HTTP/1.1\r\nhost: evil\r\nconnection: host, content-length\r\ncontent-length: 2\r\n\r\nhi")
        .await
        .expect("write");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("len=") {
        let n = within("answer", s.read(&mut buf)).await.expect("read");
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.contains(&format!("host=Some({:?})", up.to_string())),
        "{text}"
    );
    assert!(text.contains("len=Some(\"2\")"), "{text}");
}

/// `CONNECT` is a tunnel, not an exchange a reverse proxy forwards: 405
/// with `Allow`, counted as a 4xx (before: forwarded as `CONNECT /`, the
/// caller's connection closed with no answer, counted 2xx).
#[tokio::test]
async fn connect_is_refused_with_405() {
    let up = upstream(|_req| async move { http::Response::new(full("never")) }).await;
    let tap = proxy(config(up)).await;
    let mut s = TcpStream::connect(tap.listen_addr())
        .await
        .expect("connect");
    s.write_all(b"CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n")
        .await
        .expect("write");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = within("answer", s.read(&mut buf)).await.expect("read");
        assert!(
            n > 0,
            "closed with no answer: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).to_lowercase();
    assert!(text.starts_with("http/1.1 405"), "{text}");
    assert!(text.contains("allow: get"), "{text}");
    let m = scrape(&tap).await;
    assert_eq!(
        total(&m, "a2a_requests_total", &[("code", "4xx")]),
        Some(1.0)
    );
    assert_eq!(total(&m, "a2a_requests_total", &[("code", "2xx")]), None);
}

/// An HTTP/1.1 answer head the proxy does not read (a status code of four
/// digits, a header name with a space, a head past the limit) is the
/// upstream's protocol fault: 502, counted under `reason="protocol"` as the
/// same fault over HTTP/2 is (it was `other`).
#[tokio::test]
async fn an_upstream_head_the_proxy_refuses_is_counted_as_protocol() {
    const TOO_LONG: &str = "x-long: aaaaaaaa";
    let long: &'static [u8] = format!(
        "HTTP/1.1 200 OK\r\n{}content-length: 0\r\n\r\n",
        format!("{TOO_LONG}\r\n").repeat(30_000)
    )
    .into_bytes()
    .leak();
    let heads: [&'static [u8]; 3] = [
        b"HTTP/1.1 2000 OK\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nbad header: x\r\ncontent-length: 0\r\n\r\n",
        long,
    ];
    for (n, head) in heads.into_iter().enumerate() {
        let up = raw_upstream(head).await;
        let tap = proxy(config(up)).await;
        let (got, _) = get(tap.listen_addr(), "/").await;
        assert_eq!(got.status, StatusCode::BAD_GATEWAY, "head {n}");
        let m = scrape(&tap).await;
        let count = |reason| total(&m, "a2a_upstream_errors_total", &[("reason", reason)]);
        assert_eq!(count("protocol"), Some(1.0), "head {n}: {m}");
        assert_eq!(count("other"), Some(0.0), "head {n}: {m}");
    }
}

/// A config whose connection deadlines are a second.
fn short_deadlines(up: SocketAddr) -> a2a_tap::config::Config {
    use a2a_tap::config::HumanDuration;
    let mut c = config(up);
    c.proxy.header_read_timeout = HumanDuration::secs(1);
    c.proxy.idle_timeout = HumanDuration::secs(1);
    c.proxy.write_timeout = HumanDuration::secs(1);
    c
}

/// Reads until the peer closes; the bytes read.
pub(crate) async fn until_closed(s: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match within("the proxy closing the connection", s.read(&mut buf)).await {
            Ok(0) | Err(_) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// Every connection state has a deadline: a caller that sends nothing, an
/// h2c caller that sends only the preface, a slowloris trickling its
/// headers, and an HTTP/1.1 keep-alive connection left idle are closed
/// and counted (before: kept forever, so `max_connections` of them locked
/// every caller out). Look-alike: an exchange whose upstream is slow
/// (in flight) is not idle, and completes.
#[tokio::test]
async fn silent_and_idle_connections_are_closed() {
    let up = upstream(|req| async move {
        if req.uri().path() == "/slow" {
            tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        }
        http::Response::new(full("ok"))
    })
    .await;
    let tap = proxy(short_deadlines(up)).await;
    let addr = tap.listen_addr();
    let mut silent = TcpStream::connect(addr).await.expect("connect");
    let mut preface = TcpStream::connect(addr).await.expect("connect");
    preface
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .expect("preface");
    let mut slowloris = TcpStream::connect(addr).await.expect("connect");
    slowloris
        .write_all(b"GET / HTTP/1.1\r\nho")
        .await
        .expect("start");
    let slow = tokio::spawn(async move { get(addr, "/slow").await });
    let mut idle = TcpStream::connect(addr).await.expect("connect");
    idle.write_all(b"GET /x HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("request");
    let answer = until_closed(&mut idle).await;
    assert!(
        String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"),
        "answered, then closed when idle"
    );
    assert!(until_closed(&mut silent).await.is_empty());
    until_closed(&mut preface).await;
    for _ in 0..3 {
        // Trickled bytes do not move the deadline.
        let _ = slowloris.write_all(b"s").await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    until_closed(&mut slowloris).await;
    let (head, body) = within("the slow exchange", slow).await.expect("join");
    assert_eq!(head.status, StatusCode::OK, "in flight is not idle");
    assert_eq!(&body[..], b"ok");
    let m = scrape(&tap).await;
    let closed = |r| metric(&m, "a2a_connections_closed_total", &[("reason", r)]).unwrap_or(0.0);
    assert!(closed("header_timeout") >= 3.0, "{m}");
    assert!(closed("idle") >= 1.0, "{m}");
}

/// An upstream whose streams do not end: `/flood` sends 64 KiB chunks
/// (a next one always there), `/trickle` 8 KiB chunks 2 ms apart (the
/// proxy's writer, asking for more before each write, mostly finds
/// nothing); each tells `dropped` once the proxy lets it go. Any other
/// path: one event, 2.5 s of silence, another, and the end.
async fn endless_upstream(dropped: tokio::sync::mpsc::Sender<()>) -> SocketAddr {
    upstream(move |req| {
        let dropped = dropped.clone();
        async move {
            let (mut tx, body) = channel();
            let path = req.uri().path().to_owned();
            if path == "/flood" || path == "/trickle" {
                tokio::spawn(async move {
                    let (size, pause) = if path == "/flood" {
                        (64 * 1024, None)
                    } else {
                        (8 * 1024, Some(std::time::Duration::from_millis(2)))
                    };
                    let chunk = Bytes::from(vec![b'x'; size]);
                    while tx.send_data(chunk.clone()).await.is_ok() {
                        if let Some(pause) = pause {
                            tokio::time::sleep(pause).await;
                        }
                    }
                    let _ = dropped.send(()).await;
                });
            } else {
                tokio::spawn(async move {
                    let _ = tx.send_data(Bytes::from_static(b"data: 1\n\n")).await;
                    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
                    let _ = tx.send_data(Bytes::from_static(b"data: 2\n\n")).await;
                });
            }
            http::Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .expect("response")
        }
    })
    .await
}

/// A caller that stops reading a stream no longer holds both connections
/// forever: past `write_timeout` with a chunk it never took, the
/// connection is cut, the upstream stream let go, and it is counted,
/// whether the upstream floods or trickles (before, a caller that stopped
/// while the writer had found nothing more was never cut).
/// Look-alike: a stream whose upstream is silent for longer than the
/// timeout, with a caller that reads, stays open.
#[tokio::test]
async fn a_caller_that_stops_reading_is_cut_after_the_write_timeout() {
    let (dropped_tx, mut dropped_rx) = tokio::sync::mpsc::channel::<()>(2);
    let up = endless_upstream(dropped_tx).await;
    let tap = proxy(short_deadlines(up)).await;
    let addr = tap.listen_addr();
    let quiet = tokio::spawn(async move { get(addr, "/quiet").await });
    let mut stopped = Vec::new();
    for path in ["/flood", "/trickle"] {
        let mut s = TcpStream::connect(addr).await.expect("connect");
        s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .expect("request");
        let mut head = [0u8; 16];
        s.read_exact(&mut head).await.expect("head");
        // ...and never read again.
        stopped.push(s);
    }
    cut_and_let_go(&tap, &mut dropped_rx, 2).await;
    let (h, body) = within("the quiet stream", quiet).await.expect("join");
    assert_eq!(h.status, StatusCode::OK);
    assert_eq!(
        &body[..],
        b"data: 1\n\ndata: 2\n\n",
        "a reading caller is not cut"
    );
}

/// Waits until `n` endless upstream streams were let go, and checks that
/// `n` caller connections were cut at `write_timeout`.
async fn cut_and_let_go(
    tap: &a2a_tap::app::App,
    dropped: &mut tokio::sync::mpsc::Receiver<()>,
    n: usize,
) {
    for _ in 0..n {
        within("the upstream stream let go", dropped.recv()).await;
    }
    let m = scrape(tap).await;
    assert_eq!(
        metric(
            &m,
            "a2a_connections_closed_total",
            &[("reason", "write_timeout")]
        ),
        Some(n as f64),
        "{m}"
    );
}

/// The same over h2c: a caller that stops reading (its stream window
/// fills and no WINDOW_UPDATE comes) is cut at `write_timeout`, each of
/// its connections counted, and the upstream streams let go.
#[tokio::test]
async fn an_h2_caller_that_stops_reading_is_cut_after_the_write_timeout() {
    let (dropped_tx, mut dropped_rx) = tokio::sync::mpsc::channel::<()>(2);
    let up = endless_upstream(dropped_tx).await;
    let tap = proxy(short_deadlines(up)).await;
    let addr = tap.listen_addr();
    let mut held = Vec::new();
    for path in ["/flood", "/trickle"] {
        // A client each: a connection each.
        let answer = get_head(&h2_client(), &format!("http://{addr}{path}")).await;
        assert_eq!(answer.status(), StatusCode::OK);
        // The body is never read.
        held.push(answer);
    }
    cut_and_let_go(&tap, &mut dropped_rx, 2).await;
}

/// Idle pooled upstream connections are closed on a timer, not only when
/// later traffic on the same thread notices them (before, a proxy that
/// went quiet kept them open forever).
#[tokio::test]
async fn idle_pooled_upstream_connections_are_reaped_on_a_timer() {
    let (closed_tx, mut closed_rx) = tokio::sync::mpsc::channel::<()>(4);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let up = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let closed_tx = closed_tx.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut served = false;
                loop {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            served = true;
                            let _ = s
                                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                                .await;
                        }
                    }
                }
                // The readiness probe's connections carry no request.
                if served {
                    let _ = closed_tx.send(()).await;
                }
            });
        }
    });
    let mut c = config(up);
    c.proxy.pool_idle_timeout = a2a_tap::config::HumanDuration::secs(1);
    let tap = proxy(c).await;
    let (head, body) = get(tap.listen_addr(), "/x").await;
    assert_eq!((head.status, &body[..]), (StatusCode::OK, &b"ok"[..]));
    let answered = std::time::Instant::now();
    // No more traffic: the reaper alone closes the pooled connection, once
    // it has been idle for the timeout.
    within("the idle connection closed", closed_rx.recv())
        .await
        .expect("closed");
    let idle = answered.elapsed();
    assert!(
        idle >= std::time::Duration::from_millis(900),
        "closed after {idle:?}: kept idle first"
    );
}
