//! Failures: unreachable upstream (502), slow upstream (504), caller gone,
//! upstream gone mid-stream, oversized request (413), malformed HTTP (400).

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use crate::support::*;
use a2a_tap::config::HumanDuration;

#[tokio::test]
async fn unreachable_upstream_gives_502_with_a_one_line_reason() {
    let (_refusing, closed) = crate::support::ports::refused();
    let tap = proxy(config(closed)).await;
    let (head, body) = get(tap.listen_addr(), "/").await;
    assert_eq!(head.status, StatusCode::BAD_GATEWAY);
    assert_eq!(head.headers["content-type"], "text/plain; charset=utf-8");
    let text = String::from_utf8(body.to_vec()).expect("utf-8");
    assert!(text.starts_with("a2a-tap: upstream connect"), "{text}");
    assert_eq!(text.matches('\n').count(), 1, "one line: {text:?}");
    let m = scrape(&tap).await;
    assert_eq!(
        total(&m, "a2a_upstream_errors_total", &[("reason", "connect")]),
        Some(1.0)
    );
    assert_eq!(
        total(&m, "a2a_requests_total", &[("code", "error")]),
        Some(1.0)
    );
    let (ready, _) = get(tap.admin_addr(), "/readyz").await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn upstream_header_timeout_gives_504() {
    let (hold_tx, mut hold_rx) = mpsc::channel::<oneshot::Sender<()>>(4);
    let up = upstream(move |_req| {
        let hold_tx = hold_tx.clone();
        async move {
            // Never answer until the test is over.
            let (tx, rx) = oneshot::channel();
            let _ = hold_tx.send(tx).await;
            let _ = rx.await;
            Response::new(full("late"))
        }
    })
    .await;
    let mut c = config(up);
    c.proxy.upstream_header_timeout = HumanDuration(Duration::from_millis(200));
    let tap = proxy(c).await;
    let (head, body) = get(tap.listen_addr(), "/").await;
    assert_eq!(head.status, StatusCode::GATEWAY_TIMEOUT);
    assert!(String::from_utf8_lossy(&body).contains("no response headers"));
    let m = scrape(&tap).await;
    assert_eq!(
        total(&m, "a2a_upstream_errors_total", &[("reason", "timeout")]),
        Some(1.0)
    );
    assert_eq!(
        total(&m, "a2a_requests_total", &[("code", "error")]),
        Some(1.0)
    );
    // The upstream saw the request, and then the proxy dropped it.
    let mut held = hold_rx.recv().await.expect("request reached upstream");
    within("upstream request dropped", held.closed()).await;
}

#[tokio::test]
async fn caller_disconnect_mid_stream_drops_the_upstream_exchange() {
    let (tx, mut rx) = mpsc::channel(1);
    let up = upstream(move |_req| {
        let tx = tx.clone();
        async move {
            let (sender, body) = channel();
            let _ = tx.send(sender).await;
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .expect("response")
        }
    })
    .await;
    let tap = proxy(config(up)).await;
    let mut caller = TcpStream::connect(tap.listen_addr())
        .await
        .expect("connect");
    caller
        .write_all(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let mut sender = within("upstream request", rx.recv()).await.expect("sender");
    within("send", sender.send_data(Bytes::from_static(b"data: 1\n\n")))
        .await
        .expect("send");
    let mut buf = vec![0u8; 4096];
    let mut got = Vec::new();
    while !String::from_utf8_lossy(&got).contains("data: 1") {
        let n = within("read", caller.read(&mut buf)).await.expect("read");
        assert!(n > 0, "caller saw EOF");
        got.extend_from_slice(&buf[..n]);
    }
    drop(caller);
    // The proxy drops its upstream request: the upstream's body channel closes.
    within("upstream response dropped", async {
        loop {
            if sender
                .send_data(Bytes::from_static(b": ping\n\n"))
                .await
                .is_err()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    eventually_metric(&tap, "exchange counted", |t| {
        total(t, "a2a_requests_total", &[("code", "2xx")]) == Some(1.0)
    })
    .await;
}

#[tokio::test]
async fn upstream_dying_mid_stream_ends_the_callers_response_with_an_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let up = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        // Skip the readiness probe's connections, which send nothing.
        let mut s = loop {
            let Ok((s, _)) = listener.accept().await else {
                return;
            };
            let mut peek = [0u8; 1];
            if matches!(s.peek(&mut peek).await, Ok(n) if n > 0) {
                break s;
            }
        };
        let mut buf = vec![0u8; 4096];
        let _ = s.read(&mut buf).await;
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n9\r\ndata: 1\n\n\r\n")
            .await;
        let _ = s.flush().await;
        // Then die without the last chunk.
    });
    let tap = proxy(config(up)).await;
    let resp = get_head(&client(), &format!("http://{}/", tap.listen_addr())).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let result = within("body", resp.into_body().collect()).await;
    assert!(
        result.is_err(),
        "the caller must see the stream broken, not ended"
    );
    eventually_metric(&tap, "reset counted", |t| {
        total(t, "a2a_upstream_errors_total", &[("reason", "reset")]) == Some(1.0)
    })
    .await;
}

/// Over HTTP/1.1 and HTTP/2 upstream legs alike: a body declared too
/// large never leaves; one that grows past the limit is cut and answered
/// 413, not 502.
#[tokio::test]
async fn oversized_request_bodies_get_413() {
    for http2 in [false, true] {
        oversized_request_body_gets_413(http2).await;
    }
}

async fn oversized_request_body_gets_413(http2: bool) {
    let up = upstream(|req| async move {
        let n = req
            .into_body()
            .collect()
            .await
            .map(|c| c.to_bytes().len())
            .unwrap_or(0);
        Response::new(full(format!("{n}")))
    })
    .await;
    let mut c = config(up);
    c.proxy.max_request_body = 1000;
    c.proxy.upstream_http2 = http2;
    let tap = proxy(c).await;
    let url = format!("http://{}/", tap.listen_addr());
    // Declared too large: refused before anything is sent upstream.
    let req = Request::post(&url)
        .body(full(vec![b'x'; 1001]))
        .expect("request");
    let (head, _) = send(&client(), req).await;
    assert_eq!(head.status, StatusCode::PAYLOAD_TOO_LARGE);
    // At the limit: forwarded.
    let req = Request::post(&url)
        .body(full(vec![b'x'; 1000]))
        .expect("request");
    let (head, body) = send(&client(), req).await;
    assert_eq!((head.status, &body[..]), (StatusCode::OK, &b"1000"[..]));
    // Chunked, no length: cut at the limit.
    let (mut sender, body) = channel();
    tokio::spawn(async move {
        for _ in 0..3 {
            if sender
                .send_data(Bytes::from(vec![b'y'; 600]))
                .await
                .is_err()
            {
                return;
            }
        }
    });
    let req = Request::post(&url).body(body).expect("request");
    let (head, _) = send(&client(), req).await;
    assert_eq!(head.status, StatusCode::PAYLOAD_TOO_LARGE, "http2 {http2}");
}

#[tokio::test]
async fn malformed_http_gets_400_and_is_counted() {
    let up = upstream(|_req| async move { Response::new(full("ok")) }).await;
    let tap = proxy(config(up)).await;
    let mut s = TcpStream::connect(tap.listen_addr())
        .await
        .expect("connect");
    s.write_all(b"GET / HTTP/1.1\r\nbad header line\r\n\r\n")
        .await
        .expect("write");
    let mut answer = Vec::new();
    within("answer", s.read_to_end(&mut answer))
        .await
        .expect("read");
    assert!(
        answer.starts_with(b"HTTP/1.1 400"),
        "{:?}",
        String::from_utf8_lossy(&answer)
    );
    eventually_metric(&tap, "400 counted", |t| {
        total(
            t,
            "a2a_requests_total",
            &[("code", "4xx"), ("binding", "unknown")],
        ) == Some(1.0)
    })
    .await;
}

#[tokio::test]
async fn admin_endpoints() {
    let up = upstream(|_req| async move { Response::new(full("ok")) }).await;
    let tap = proxy(config(up)).await;
    let admin = tap.admin_addr();
    assert_eq!(get(admin, "/healthz").await.0.status, StatusCode::OK);
    assert_eq!(get(admin, "/readyz").await.0.status, StatusCode::OK);
    assert_eq!(get(admin, "/nope").await.0.status, StatusCode::NOT_FOUND);
    let (head, body) = get(admin, "/metrics").await;
    assert_eq!(head.status, StatusCode::OK);
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("# TYPE a2a_upstream_errors_total counter"));
    assert_eq!(
        metric(
            &text,
            "a2a_upstream_errors_total",
            &[("upstream", "test"), ("reason", "tls")]
        ),
        Some(0.0)
    );
}

#[tokio::test]
async fn tls_failure_to_an_https_upstream_is_a_counted_502() {
    // An https:// upstream that does not speak TLS: the handshake fails.
    let plain = upstream(|_req| async move { Response::new(full("plain")) }).await;
    let mut c = config(plain);
    c.upstream = Some(format!("https://{plain}").parse().expect("url"));
    let tap = proxy(c).await;
    let (head, body) = get(tap.listen_addr(), "/").await;
    assert_eq!(head.status, StatusCode::BAD_GATEWAY);
    assert!(String::from_utf8_lossy(&body).starts_with("a2a-tap: upstream tls"));
    let m = scrape(&tap).await;
    assert_eq!(
        total(&m, "a2a_upstream_errors_total", &[("reason", "tls")]),
        Some(1.0),
        "{m}"
    );
}

#[tokio::test]
async fn connections_beyond_max_connections_wait_for_a_free_slot() {
    let (tx, mut rx) = mpsc::channel(4);
    let up = upstream(move |req| {
        let tx = tx.clone();
        async move {
            if req.uri().path() == "/hold" {
                let (sender, body) = channel();
                let _ = tx.send(sender).await;
                return Response::new(body);
            }
            Response::new(full("ok"))
        }
    })
    .await;
    let mut c = config(up);
    c.proxy.max_connections = 1;
    let tap = proxy(c).await;
    let addr = tap.listen_addr();
    // The first caller holds the only slot with an open stream.
    let mut first = TcpStream::connect(addr).await.expect("connect");
    first
        .write_all(b"GET /hold HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let mut sender = within("held stream", rx.recv()).await.expect("sender");
    sender
        .send_data(Bytes::from_static(b"data: 1\n\n"))
        .await
        .expect("send");
    let mut buf = [0u8; 1024];
    let n = within("first bytes", first.read(&mut buf))
        .await
        .expect("read");
    assert!(n > 0);
    // The second waits: no answer while the slot is taken.
    let second = tokio::spawn(async move { get(addr, "/").await });
    let early = tokio::time::timeout(Duration::from_millis(300), async {
        while !second.is_finished() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        early.is_err(),
        "second connection served beyond max_connections"
    );
    // Freeing the slot lets it through.
    drop(first);
    let (head, body) = within("second", second).await.expect("task");
    assert_eq!((head.status, &body[..]), (StatusCode::OK, &b"ok"[..]));
}

#[tokio::test]
async fn a_caller_leaving_mid_upload_is_not_an_upstream_error() {
    let (arrived_tx, mut arrived) = mpsc::channel(1);
    let up = upstream(move |req| {
        let arrived_tx = arrived_tx.clone();
        async move {
            let _ = arrived_tx.send(()).await;
            let _ = req.into_body().collect().await;
            Response::new(full("ok"))
        }
    })
    .await;
    let tap = proxy(config(up)).await;
    let mut s = TcpStream::connect(tap.listen_addr())
        .await
        .expect("connect");
    s.write_all(b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n0123456789")
        .await
        .expect("write");
    within("request at the upstream", arrived.recv()).await;
    drop(s);
    eventually_metric(&tap, "exchange counted", |t| {
        total(t, "a2a_requests_total", &[("upstream", "test")]).is_some()
    })
    .await;
    let m = scrape(&tap).await;
    for reason in ["connect", "timeout", "reset", "tls", "other"] {
        let n = total(&m, "a2a_upstream_errors_total", &[("reason", reason)]);
        assert_eq!(n, Some(0.0), "{reason}: {m}");
    }
}
