//! Graceful shutdown with streams in flight, and the inspection seams.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{request, response, Request, Response, StatusCode};
use http_body_util::BodyExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use crate::support::*;
use a2a_tap::config::HumanDuration;
use a2a_tap::proxy::{
    BodyEnd, ExchangeLabels, ExchangeObserver, Inspector, ProxyBody, ProxyError, ResponseTransform,
    Transformed,
};

type Sender = http_body_util::channel::Sender<Bytes, BoxError>;

async fn stream_upstream() -> (std::net::SocketAddr, mpsc::Receiver<Sender>) {
    let (tx, rx) = mpsc::channel(4);
    let addr = upstream(move |_req| {
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
    (addr, rx)
}

async fn open_stream(addr: std::net::SocketAddr) -> hyper::body::Incoming {
    let resp = get_head(&client(), &format!("http://{addr}/stream")).await;
    assert_eq!(resp.status(), StatusCode::OK);
    resp.into_body()
}

async fn next_data(body: &mut hyper::body::Incoming) -> Bytes {
    let frame = within("frame", body.frame())
        .await
        .expect("frame")
        .expect("no error");
    frame.into_data().expect("data")
}

#[tokio::test]
async fn shutdown_lets_a_stream_in_flight_finish_and_refuses_new_callers() {
    let (up, mut senders) = stream_upstream().await;
    let tap = proxy(config(up)).await;
    let (addr, admin) = (tap.listen_addr(), tap.admin_addr());
    let mut body = open_stream(addr).await;
    let mut sender = within("upstream", senders.recv()).await.expect("sender");
    sender
        .send_data(Bytes::from_static(b"data: 1\n\n"))
        .await
        .expect("send");
    assert_eq!(&next_data(&mut body).await[..], b"data: 1\n\n");

    tap.begin_shutdown();
    // Readiness goes false, the port stops accepting.
    eventually_ready(admin, StatusCode::SERVICE_UNAVAILABLE).await;
    within("listener closed", async {
        while TcpStream::connect(addr).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // The stream in flight goes on and ends cleanly.
    sender
        .send_data(Bytes::from_static(b"data: 2\n\n"))
        .await
        .expect("send");
    assert_eq!(&next_data(&mut body).await[..], b"data: 2\n\n");
    drop(sender);
    let rest = within("end", body.collect()).await.expect("clean end");
    assert!(rest.to_bytes().is_empty());
    within("server stops", tap.shutdown()).await;
}

#[tokio::test]
async fn streams_that_never_end_are_closed_at_the_end_of_the_grace_period() {
    let (up, mut senders) = stream_upstream().await;
    let mut c = config(up);
    c.proxy.grace_period = HumanDuration(Duration::from_millis(300));
    let tap = proxy(c).await;
    let mut body = open_stream(tap.listen_addr()).await;
    let mut sender = within("upstream", senders.recv()).await.expect("sender");
    sender
        .send_data(Bytes::from_static(b"data: 1\n\n"))
        .await
        .expect("send");
    assert_eq!(&next_data(&mut body).await[..], b"data: 1\n\n");
    let asked = Instant::now();
    within("server stops", tap.shutdown()).await;
    let took = asked.elapsed();
    assert!(
        took >= Duration::from_millis(300),
        "stopped before the grace period: {took:?}"
    );
    // The caller's stream is cut, and the upstream's request dropped.
    let end = within("caller cut", body.collect()).await;
    assert!(end.is_err(), "a cut stream must not look complete");
    within("upstream dropped", sender.closed_or_fails()).await;
}

async fn eventually_ready(admin: std::net::SocketAddr, want: StatusCode) {
    within("readiness", async {
        while get(admin, "/readyz").await.0.status != want {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

trait ClosedOrFails {
    async fn closed_or_fails(&mut self);
}

impl ClosedOrFails for Sender {
    async fn closed_or_fails(&mut self) {
        while self
            .send_data(Bytes::from_static(b": ping\n\n"))
            .await
            .is_ok()
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

// === the inspection seam ===

#[derive(Default)]
struct Record {
    begun: Vec<(u64, String)>,
    request: Vec<u8>,
    request_ends: Vec<BodyEnd>,
    statuses: Vec<u16>,
    response: Vec<u8>,
    response_ends: Vec<BodyEnd>,
    failures: Vec<String>,
}

#[derive(Default)]
struct Recorder(Mutex<Record>);

impl Recorder {
    fn with<T>(&self, f: impl FnOnce(&mut Record) -> T) -> T {
        f(&mut self.0.lock().expect("lock"))
    }
}

struct Tap(Arc<Recorder>);

impl Inspector for Tap {
    fn begin(
        &self,
        id: u64,
        head: &request::Parts,
        _has_body: bool,
    ) -> Option<Arc<dyn ExchangeObserver>> {
        self.0
            .with(|r| r.begun.push((id, head.uri.path().to_string())));
        Some(self.0.clone())
    }

    fn transform_for(&self, head: &request::Parts) -> Option<Box<dyn ResponseTransform>> {
        (head.uri.path() == "/card").then(|| Box::new(Rewrite) as Box<dyn ResponseTransform>)
    }
}

impl ExchangeObserver for Recorder {
    fn request_data(&self, data: &Bytes) {
        self.with(|r| r.request.extend_from_slice(data));
    }
    fn request_end(&self, end: BodyEnd) {
        self.with(|r| r.request_ends.push(end));
    }
    fn response_head(&self, head: &response::Parts) {
        self.with(|r| r.statuses.push(head.status.as_u16()));
    }
    fn response_data(&self, data: &[u8]) {
        self.with(|r| r.response.extend_from_slice(data));
    }
    fn response_end(&self, data: &[u8], end: BodyEnd) {
        self.with(|r| {
            r.response.extend_from_slice(data);
            r.response_ends.push(end);
        });
    }
    fn upstream_failed(&self, error: &ProxyError) {
        self.with(|r| r.failures.push(error.to_string()));
    }
    fn labels(&self) -> ExchangeLabels {
        ExchangeLabels {
            binding: "jsonrpc",
            method: "SendStreamingMessage",
            slot: 1,
        }
    }
}

struct Rewrite;

impl ResponseTransform for Rewrite {
    fn apply(self: Box<Self>, mut head: response::Parts, body: ProxyBody) -> Transformed {
        head.headers.remove(http::header::CONTENT_LENGTH);
        let body = body
            .map_frame(|f| f.map_data(|d| Bytes::from(d.to_ascii_uppercase())))
            .boxed_unsync();
        Box::pin(std::future::ready((head, body)))
    }
}

#[tokio::test]
async fn the_inspector_sees_every_byte_and_each_end_once() {
    let sse = "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n";
    let up = upstream(move |req| async move {
        let _ = req.into_body().collect().await;
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(full(sse))
            .expect("response")
    })
    .await;
    let rec = Arc::new(Recorder::default());
    let tap = proxy_with(config(up), Some(Arc::new(Tap(rec.clone())))).await;
    let request_body = r#"{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage"}"#;
    let req = Request::post(format!("http://{}/rpc", tap.listen_addr()))
        .body(full(request_body))
        .expect("request");
    let (head, body) = send(&client(), req).await;
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(&body[..], sse.as_bytes());
    // The ends are reported as the bodies finish; wait for the metric, then read.
    eventually_metric(&tap, "labelled count", |t| {
        let labels = [
            ("binding", "jsonrpc"),
            ("method", "SendStreamingMessage"),
            ("code", "2xx"),
        ];
        total(t, "a2a_requests_total", &labels) == Some(1.0)
    })
    .await;
    rec.with(|r| {
        assert_eq!(r.begun.len(), 1);
        assert_eq!(r.begun[0].1, "/rpc");
        assert_eq!(r.request, request_body.as_bytes());
        assert_eq!(r.request_ends, vec![BodyEnd::Complete]);
        assert_eq!(r.statuses, vec![200]);
        assert_eq!(r.response, sse.as_bytes());
        assert_eq!(r.response_ends, vec![BodyEnd::Complete]);
        assert!(r.failures.is_empty());
    });

    // The transform seam alters only what it was asked to; the observer saw the original.
    let (_, body) = get(tap.listen_addr(), "/card").await;
    assert_eq!(&body[..], sse.to_ascii_uppercase().as_bytes());
    eventually_metric(&tap, "second count", |t| {
        total(t, "a2a_requests_total", &[("code", "2xx")]) == Some(2.0)
    })
    .await;
    rec.with(|r| assert_eq!(r.response, format!("{sse}{sse}").as_bytes()));
}

#[tokio::test]
async fn the_inspector_hears_of_upstream_failures() {
    let port = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let dead = port.local_addr().expect("addr");
    drop(port);
    let rec = Arc::new(Recorder::default());
    let tap = proxy_with(config(dead), Some(Arc::new(Tap(rec.clone())))).await;
    let (head, _) = get(tap.listen_addr(), "/").await;
    assert_eq!(head.status, StatusCode::BAD_GATEWAY);
    rec.with(|r| {
        assert_eq!(r.failures.len(), 1);
        assert!(r.statuses.is_empty());
    });
}
