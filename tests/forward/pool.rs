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

/// The stream hog, scaled down: with 64 upstream connections
/// (`max_upstream_connections`), twelve h2 caller connections open twenty
/// streams each to an upstream that holds its answers. No caller connection
/// holds more than its share (64 / 8 = 8) and the last eighth goes at most
/// one per caller connection, so another caller's plain request is served
/// at once; the hogs' excess streams wait their turn and are all answered
/// once the upstream lets go. (On main, the hogs took all 64 and the other
/// caller waited for `upstream_header_timeout`.)
#[tokio::test]
async fn one_callers_streams_cannot_take_every_upstream_connection() {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use http_body_util::BodyExt;
    use std::time::{Duration, Instant};

    const HOGS: usize = 12;
    const STREAMS: usize = 20;
    const BUDGET: usize = 64;
    const SHARE: usize = BUDGET / 8;
    // The shared slots: all but the last eighth, reserved for caller
    // connections that hold none (one each)...
    const SHARED: usize = BUDGET - SHARE;
    // ...so the hogs hold at most the shared slots and one reserved slot
    // for each hog that got no shared one.
    const HELD: usize = SHARED + (HOGS - SHARED / SHARE);

    #[derive(Default)]
    struct Held {
        now: usize,
        per_hog: HashMap<String, (usize, usize)>,
    }
    let held: Arc<Mutex<Held>> = Arc::default();
    let (release, released) = tokio::sync::watch::channel(false);
    let up = upstream({
        let held = held.clone();
        move |req: http::Request<hyper::body::Incoming>| {
            let held = held.clone();
            let mut released = released.clone();
            async move {
                if req.uri().path() == "/slow" {
                    let hog = req.headers()["x-hog"].to_str().unwrap().to_string();
                    {
                        let mut h = held.lock().unwrap();
                        h.now += 1;
                        let (now, max) = h.per_hog.entry(hog.clone()).or_default();
                        *now += 1;
                        *max = (*max).max(*now);
                    }
                    let _ = released.wait_for(|r| *r).await;
                    let mut h = held.lock().unwrap();
                    h.now -= 1;
                    h.per_hog.entry(hog).or_default().0 -= 1;
                }
                http::Response::new(full("ok"))
            }
        }
    })
    .await;
    let mut cfg = config(up);
    cfg.proxy.max_upstream_connections = BUDGET;
    let tap = proxy(cfg).await;
    let addr = tap.listen_addr();

    let mut hogs = Vec::new();
    for hog in 0..HOGS {
        let client = h2_client();
        for _ in 0..STREAMS {
            let client = client.clone();
            hogs.push(tokio::spawn(async move {
                let req = http::Request::get(format!("http://{addr}/slow"))
                    .header("x-hog", hog.to_string())
                    .body(full(""))
                    .unwrap();
                let resp = client.request(req).await.expect("a hog's answer");
                let status = resp.status();
                let _ = resp.into_body().collect().await;
                status
            }));
        }
    }
    let deadline = Instant::now() + WAIT;
    while held.lock().unwrap().now < SHARED {
        assert!(Instant::now() < deadline, "the hogs never held {SHARED}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let start = Instant::now();
    let req = http::Request::get(format!("http://{addr}/fast"))
        .body(full(""))
        .unwrap();
    let other = tokio::time::timeout(Duration::from_secs(5), client().request(req)).await;
    let waited = start.elapsed();
    let status = other
        .unwrap_or_else(|_| {
            panic!(
                "another caller waited {waited:?} while the hogs held {}",
                held.lock().unwrap().now
            )
        })
        .expect("the other caller's answer")
        .status();
    assert_eq!(status, StatusCode::OK);
    assert!(
        waited < Duration::from_secs(1),
        "another caller waited {waited:?}"
    );
    {
        let h = held.lock().unwrap();
        assert!(h.now <= HELD, "{} upstream connections held", h.now);
        for (hog, (_, max)) in &h.per_hog {
            assert!(*max <= SHARE, "caller connection {hog} held {max}");
        }
    }

    release.send_replace(true);
    for hog in hogs {
        let status = within("a hog's stream", hog).await.expect("task");
        assert_eq!(
            status,
            StatusCode::OK,
            "an excess stream waited, not failed"
        );
    }
}
