//! Hostile and faulty peers: answers framed every way an upstream may frame
//! them (Content-Length and Transfer-Encoding together included), a caller
//! naming `Host` in `Connection`, a `CONNECT`.

mod support;

use std::net::SocketAddr;

use bytes::Bytes;
use http::Request;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use support::*;

/// An upstream that answers every request with `raw` (status line,
/// headers and body as written), then closes the connection.
async fn raw_upstream(raw: &'static [u8]) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
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
        metric(&m, "a2a_requests_total", &[("code", "4xx")]),
        Some(1.0)
    );
    assert_eq!(metric(&m, "a2a_requests_total", &[("code", "2xx")]), None);
}
