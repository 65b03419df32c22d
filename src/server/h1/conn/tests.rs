//! The connection's own behaviour, on an in-memory connection: requests
//! in a row, bodies whole or streamed, `100 Continue` when the exchange
//! asks, refusals as hyper writes them, and the drain.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::watch;

use super::{serve, Ended, Limits};
use crate::proxy::activity::{Activity, Closed, Deadlines, Verdict};
use crate::proxy::inbound::Inbound;
use crate::proxy::{BoxError, ProxyBody};

fn limits() -> Limits {
    Limits {
        max_buf: 64 * 1024,
        header_read_timeout: Duration::from_secs(5),
    }
}

fn text(body: impl Into<Bytes>) -> ProxyBody {
    Full::new(body.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// An exchange that answers with what it read: the method, the path and
/// the body (or `body failed`).
async fn echo(req: Request<Inbound>) -> Response<ProxyBody> {
    let (parts, body) = req.into_parts();
    let read = match body.collect().await {
        Ok(b) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        Err(_) => "body failed".to_owned(),
    };
    Response::new(text(format!(
        "{} {} {read}",
        parts.method,
        parts.uri.path()
    )))
}

/// A connection served with `echo` until it ends (buffers of `room`
/// bytes): the caller's end, the drain's sender, the serving task.
fn connection(
    room: usize,
) -> (
    DuplexStream,
    watch::Sender<bool>,
    tokio::task::JoinHandle<Ended>,
) {
    connection_to(room, echo)
}

/// `connection`, its exchanges answered by `handle`.
fn connection_to<F, Fut>(
    room: usize,
    handle: F,
) -> (
    DuplexStream,
    watch::Sender<bool>,
    tokio::task::JoinHandle<Ended>,
)
where
    F: FnMut(Request<Inbound>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Response<ProxyBody>> + Send,
{
    let (client, server) = tokio::io::duplex(room);
    let (drain_tx, drain) = watch::channel(false);
    let served = tokio::spawn(async move {
        let activity = Activity::new(std::time::Instant::now());
        serve(server, BytesMut::new(), &limits(), drain, &activity, handle).await
    });
    (client, drain_tx, served)
}

async fn read_until(client: &mut DuplexStream, got: &mut Vec<u8>, needle: &str) {
    let found = |got: &Vec<u8>| String::from_utf8_lossy(got).contains(needle);
    tokio::time::timeout(Duration::from_secs(5), async {
        let mut chunk = [0u8; 4096];
        while !found(got) {
            let n = client.read(&mut chunk).await.expect("read");
            assert!(
                n > 0,
                "closed before {needle:?}: {:?}",
                String::from_utf8_lossy(got)
            );
            got.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {needle:?} in {:?}", String::from_utf8_lossy(got)));
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order_on_one_connection() {
    let (mut client, _drain_tx, served) = connection(1 << 16);
    client
        .write_all(
            b"GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\ncontent-length: 3\r\n\r\nxyzPOST /c HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n1\r\n!\r\n0\r\n\r\n",
        )
        .await
        .expect("write");
    let mut got = Vec::new();
    read_until(&mut client, &mut got, "POST /c hi!").await;
    let text = String::from_utf8_lossy(&got);
    let (a, b, c) = (
        text.find("GET /a ").expect("a"),
        text.find("POST /b xyz").expect("b"),
        text.find("POST /c hi!").expect("c"),
    );
    assert!(a < b && b < c, "{text}");
    assert_eq!(text.matches("HTTP/1.1 200 OK\r\n").count(), 3, "{text}");
    drop(client);
    assert!(matches!(served.await.expect("task"), Ended::Closed));
}

#[tokio::test]
async fn a_body_sent_in_pieces_reaches_the_exchange_whole() {
    let (mut client, _drain_tx, _served) = connection(1 << 16);
    client
        .write_all(b"POST /up HTTP/1.1\r\ncontent-length: 10\r\n\r\n0123")
        .await
        .expect("write");
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.write_all(b"456789").await.expect("write");
    let mut got = Vec::new();
    read_until(&mut client, &mut got, "POST /up 0123456789").await;
}

#[tokio::test]
async fn continue_goes_when_the_exchange_asks_for_the_body_and_never_to_http_1_0() {
    let (mut client, _drain_tx, _served) = connection(1 << 16);
    client
        .write_all(b"POST /e HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: 2\r\n\r\n")
        .await
        .expect("write");
    let mut got = Vec::new();
    read_until(&mut client, &mut got, "HTTP/1.1 100 Continue\r\n\r\n").await;
    client.write_all(b"ok").await.expect("write");
    read_until(&mut client, &mut got, "POST /e ok").await;

    let (mut client, _drain_tx, _served) = connection(1 << 16);
    client
        .write_all(b"POST /e HTTP/1.0\r\nexpect: 100-continue\r\ncontent-length: 2\r\n\r\nok")
        .await
        .expect("write");
    let mut got = Vec::new();
    read_until(&mut client, &mut got, "POST /e ok").await;
    assert!(!String::from_utf8_lossy(&got).contains("100 Continue"));
}

#[tokio::test]
async fn a_refused_head_is_answered_as_hyper_answers_it_and_the_connection_ends() {
    for (wire, answer) in [
        (
            &b"G@T / HTTP/1.1\r\n\r\n"[..],
            "HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
        ),
        (
            &b"POST / HTTP/1.1\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n"[..],
            "HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
        ),
    ] {
        let (mut client, _drain_tx, served) = connection(1 << 16);
        client.write_all(wire).await.expect("write");
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.expect("read");
        assert_eq!(String::from_utf8_lossy(&got), answer);
        assert!(matches!(served.await.expect("task"), Ended::Refused(_)));
    }
    let (mut client, _drain_tx, served) = connection(1 << 20);
    let long = format!("GET / HTTP/1.1\r\nx-long: {}\r\n", "a".repeat(70_000));
    let _ = client.write_all(long.as_bytes()).await;
    let mut got = Vec::new();
    let _ = client.read_to_end(&mut got).await;
    assert!(
        String::from_utf8_lossy(&got).starts_with("HTTP/1.1 431 "),
        "{got:?}"
    );
    assert!(matches!(served.await.expect("task"), Ended::Refused(_)));
}

#[tokio::test]
async fn a_drain_ends_the_connection_after_the_answer_in_flight_which_says_so() {
    let (mut client, drain_tx, served) = connection(1 << 16);
    client
        .write_all(b"POST /d HTTP/1.1\r\ncontent-length: 4\r\n\r\nab")
        .await
        .expect("write");
    tokio::time::sleep(Duration::from_millis(50)).await;
    drain_tx.send(true).expect("drain");
    client.write_all(b"cd").await.expect("write");
    let mut got = Vec::new();
    client.read_to_end(&mut got).await.expect("read");
    let text = String::from_utf8_lossy(&got);
    assert!(text.contains("connection: close\r\n"), "{text}");
    assert!(text.ends_with("POST /d abcd"), "{text}");
    assert!(matches!(served.await.expect("task"), Ended::Closed));
}

#[tokio::test]
async fn a_silent_caller_is_closed_at_the_header_deadline() {
    let (mut client, server) = tokio::io::duplex(1 << 16);
    let (_drain_tx, drain) = watch::channel(false);
    let served = tokio::spawn(async move {
        let limits = Limits {
            max_buf: 64 * 1024,
            header_read_timeout: Duration::from_millis(100),
        };
        let activity = Activity::new(std::time::Instant::now());
        serve(server, BytesMut::new(), &limits, drain, &activity, echo).await
    });
    client
        .write_all(b"GET / HTTP/1.1\r\n")
        .await
        .expect("write");
    let ended = tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("ended")
        .expect("task");
    assert!(matches!(ended, Ended::HeaderTimeout));
}

/// A head is due the header timeout after its own first wait. The
/// connection's one timer, set for an earlier head, fires while a slow
/// exchange runs or while a later head is still in time: it is set again
/// for the head being read, which closes the caller at that head's own
/// deadline and not before.
#[tokio::test(start_paused = true)]
async fn each_head_is_due_from_its_own_wait_after_slow_exchanges() {
    let (mut client, server) = tokio::io::duplex(1 << 16);
    let (_drain_tx, drain) = watch::channel(false);
    let began = tokio::time::Instant::now();
    let served = tokio::spawn(async move {
        let limits = Limits {
            max_buf: 64 * 1024,
            header_read_timeout: Duration::from_millis(100),
        };
        let slow = |req| async move {
            tokio::time::sleep(Duration::from_millis(80)).await;
            echo(req).await
        };
        let activity = Activity::new(std::time::Instant::now());
        serve(server, BytesMut::new(), &limits, drain, &activity, slow).await
    });
    let at = |ms| began + Duration::from_millis(ms);
    client
        .write_all(b"GET /a HTTP/1.1\r\n\r\n")
        .await
        .expect("write");
    let mut got = Vec::new();
    read_until(&mut client, &mut got, "GET /a").await;
    // Answered at 80 ms: the next head is due at 180, past the first's 100.
    client
        .write_all(b"GET /b HTTP/1.1\r\n")
        .await
        .expect("write");
    tokio::time::sleep_until(at(150)).await;
    client.write_all(b"\r\n").await.expect("write");
    read_until(&mut client, &mut got, "GET /b").await;
    // Answered at 230 ms: a head that never ends is closed at 330.
    client
        .write_all(b"GET /c HTTP/1.1\r\n")
        .await
        .expect("write");
    let ended = served.await.expect("task");
    assert!(matches!(ended, Ended::HeaderTimeout), "{ended:?}");
    let closed = began.elapsed();
    assert!(
        closed >= Duration::from_millis(330) && closed < Duration::from_millis(340),
        "closed after {closed:?}"
    );
}

/// An exchange that answers with the body's data and its trailers.
async fn echo_trailers(req: Request<Inbound>) -> Response<ProxyBody> {
    let collected = req.into_body().collect().await.expect("body");
    let trailers = collected.trailers().cloned().unwrap_or_default();
    let named = |k: &str| trailers.get(k).and_then(|v| v.to_str().ok()).unwrap_or("-");
    let line = format!(
        "{} x-sum={}",
        String::from_utf8_lossy(&collected.to_bytes()),
        named("x-sum")
    );
    Response::new(text(line))
}

#[tokio::test]
async fn trailers_read_with_the_last_data_reach_the_exchange_after_it() {
    // Streamed (the head came alone), then data, the last chunk and the
    // trailers in one read; and in a read of their own.
    for tail in [
        &b"3\r\nabc\r\n0\r\nx-sum: 7\r\n\r\n"[..],
        &b"3\r\nabc\r\n"[..],
    ] {
        let (mut client, _drain_tx, _served) = connection_to(1 << 16, echo_trailers);
        client
            .write_all(b"POST /t HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n")
            .await
            .expect("write");
        tokio::time::sleep(Duration::from_millis(20)).await;
        client.write_all(tail).await.expect("write");
        if !tail.ends_with(b"\r\n\r\n") {
            tokio::time::sleep(Duration::from_millis(20)).await;
            client
                .write_all(b"0\r\nx-sum: 7\r\n\r\n")
                .await
                .expect("write");
        }
        let mut got = Vec::new();
        read_until(&mut client, &mut got, "abc x-sum=7").await;
    }
}

/// An exchange that answers `abc` with a trailer, its length untold.
async fn with_trailer(_: Request<Inbound>) -> Response<ProxyBody> {
    let mut trailers = http::HeaderMap::new();
    trailers.insert("x-sum", http::HeaderValue::from_static("7"));
    let (mut tx, body) = http_body_util::channel::Channel::<Bytes, BoxError>::new(2);
    tx.send_data(Bytes::from_static(b"abc"))
        .await
        .expect("data");
    tx.send_trailers(trailers).await.expect("trailers");
    Response::new(body.boxed_unsync())
}

#[tokio::test]
async fn trailers_go_only_to_a_caller_that_takes_them() {
    for (te, sent) in [
        ("te: gzip, Trailers\r\n", true),
        ("te: gzip\r\n", false),
        ("", false),
    ] {
        let (mut client, _drain_tx, _served) = connection_to(1 << 16, with_trailer);
        let req = format!("GET / HTTP/1.1\r\n{te}\r\n");
        client.write_all(req.as_bytes()).await.expect("write");
        // The last chunk, then the trailer or at once the end.
        let end = if sent {
            "abc\r\n0\r\nx-sum: 7\r\n\r\n"
        } else {
            "abc\r\n0\r\n\r\n"
        };
        let mut got = Vec::new();
        read_until(&mut client, &mut got, end).await;
    }
}

/// A body that tells `activity` what the exchange's response tap tells
/// it: each poll takes what was handed before, each chunk is handed, and
/// its end ends the exchange. It gives `chunks`, then ends (`ends`) or has
/// nothing more (an upstream gone quiet).
struct Tapped {
    activity: std::sync::Arc<Activity>,
    chunks: std::collections::VecDeque<Bytes>,
    ends: bool,
}

impl http_body::Body for Tapped {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        self.activity.taken();
        match self.chunks.pop_front() {
            Some(chunk) => {
                self.activity.handed();
                std::task::Poll::Ready(Some(Ok(http_body::Frame::data(chunk))))
            }
            None if self.ends => {
                self.ends = false;
                self.activity.end();
                std::task::Poll::Ready(None)
            }
            None => std::task::Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        false
    }
}

/// A connection with a 1 KiB pipe to its caller, each exchange answered
/// by a `Tapped` body of one 64 KiB chunk that ends or not (`ends`): the
/// caller's end and the connection's activity, once a request was sent
/// and the writer filled the pipe and waits.
async fn tapped_connection(ends: bool) -> (DuplexStream, std::sync::Arc<Activity>) {
    let activity = std::sync::Arc::new(Activity::new(std::time::Instant::now()));
    let (mut client, server) = tokio::io::duplex(1024);
    let on_conn = activity.clone();
    tokio::spawn(async move {
        let (_drain_tx, drain) = watch::channel(false);
        let for_body = on_conn.clone();
        serve(
            server,
            BytesMut::new(),
            &limits(),
            drain,
            &on_conn,
            move |_req| {
                for_body.begin();
                let body = Tapped {
                    activity: for_body.clone(),
                    chunks: [Bytes::from(vec![b'x'; 64 * 1024])].into(),
                    ends,
                };
                std::future::ready(Response::new(body.boxed_unsync()))
            },
        )
        .await
    });
    client
        .write_all(b"GET /answer HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("request");
    tokio::time::sleep(Duration::from_millis(200)).await;
    (client, activity)
}

/// The deadlines the tapped connections are judged by.
const D: Deadlines = Deadlines {
    header_read: Duration::from_secs(30),
    idle: Duration::from_secs(4),
    write: Duration::from_secs(8),
};

/// The writer asks the body once more before it writes a chunk (an end
/// already there goes out with the data). When nothing more is there,
/// the body counts its chunk as taken before it is written: a caller that
/// takes none of it must still be seen stalled by the connection's
/// watchdog, and cut at `write_timeout` (before, this interleaving held
/// both connections for good; `tests/forward/hostile.rs` met it once in
/// CI). Look-alikes: a caller that takes some of it is reading, and once
/// the chunk is all written, the quiet upstream is not the caller's.
#[tokio::test]
async fn a_write_the_caller_takes_nothing_of_is_a_stall_though_the_body_was_asked_again() {
    let (mut client, activity) = tapped_connection(false).await;
    let d = D;
    let t = std::time::Instant::now();
    let at = |s: u64| t + Duration::from_secs(s);
    assert!(matches!(activity.verdict(at(0), &d), Verdict::Wait(_)));
    assert!(matches!(activity.verdict(at(4), &d), Verdict::Wait(_)));
    // Taking some: the caller reads, the write goes on (and waits again).
    let mut got = vec![0u8; 512];
    client.read_exact(&mut got).await.expect("some");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(matches!(activity.verdict(at(8), &d), Verdict::Wait(_)));
    assert!(matches!(activity.verdict(at(12), &d), Verdict::Wait(_)));
    assert_eq!(
        activity.verdict(at(16), &d),
        Verdict::Close(Closed::WriteTimeout),
        "nothing taken since the look at 8 s"
    );
    // All of it taken: the writer waits on the body, not on the caller.
    let mut left = 64 * 1024 - got.iter().filter(|&&b| b == b'x').count();
    let mut chunk = vec![0u8; 4096];
    while left > 0 {
        let n = client.read(&mut chunk).await.expect("read");
        assert!(n > 0, "closed with {left} bytes left");
        left -= chunk[..n].iter().filter(|&&b| b == b'x').count();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(matches!(activity.verdict(at(20), &d), Verdict::Wait(_)));
    assert!(matches!(activity.verdict(at(500), &d), Verdict::Wait(_)));
}

/// The body's end came with its last chunk, so the exchange ended before
/// the write the caller takes nothing of: that is a stalled write, cut at
/// `write_timeout` and counted so, not an idle connection (before, the
/// idle deadline closed it, as `idle`). Look-alike: written out, the
/// connection is idle from the exchange's end.
#[tokio::test]
async fn a_last_write_the_caller_takes_nothing_of_is_a_stall_not_idleness() {
    let (mut client, activity) = tapped_connection(true).await;
    let t = std::time::Instant::now();
    let at = |s: u64| t + Duration::from_secs(s);
    assert!(matches!(activity.verdict(at(0), &D), Verdict::Wait(_)));
    assert!(
        matches!(activity.verdict(at(6), &D), Verdict::Wait(_)),
        "past the idle deadline, not idle"
    );
    assert_eq!(
        activity.verdict(at(8), &D),
        Verdict::Close(Closed::WriteTimeout)
    );
    let mut got = Vec::new();
    read_until(&mut client, &mut got, "\r\n0\r\n\r\n").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let now = std::time::Instant::now();
    assert!(matches!(activity.verdict(now, &D), Verdict::Wait(_)));
    assert_eq!(activity.verdict(at(9), &D), Verdict::Close(Closed::Idle));
}
