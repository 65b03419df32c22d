//! A fast scripted A2A-like upstream for benchmarks: `/sse` answers a ~5 KB
//! task stream of 20 JSON-RPC 1.0 StreamResponse events, anything else a
//! small JSON-RPC response. Usage: `bench_upstream [ADDR]` (default 127.0.0.1:18900).
#![forbid(unsafe_code)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;

/// Task ids: every answer is about a new task, as a real agent's are (a
/// reused id would be a task leaving its terminal state).
static NEXT_TASK: AtomicU64 = AtomicU64::new(1);

fn task_id() -> String {
    format!("tsk_{:016x}", NEXT_TASK.fetch_add(1, Ordering::Relaxed))
}

/// The events of one task stream, each an SSE frame.
fn task_stream(task: &str) -> Vec<Bytes> {
    let rpc = |result: String| {
        Bytes::from(format!(
            "data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{result}}}\n\n"
        ))
    };
    let status = |state: &str| {
        rpc(format!(
            "{{\"statusUpdate\":{{\"taskId\":\"{task}\",\"contextId\":\"ctx_3\",\"status\":{{\"state\":\"{state}\",\"timestamp\":\"2026-01-01T00:00:00Z\"}}}}}}"
        ))
    };
    let mut events = vec![rpc(
        format!("{{\"task\":{{\"id\":\"{task}\",\"contextId\":\"ctx_3\",\"status\":{{\"state\":\"TASK_STATE_SUBMITTED\"}}}}}}"),
    )];
    events.push(status("TASK_STATE_WORKING"));
    for i in 0..17 {
        let last = i == 16;
        events.push(rpc(format!(
            "{{\"artifactUpdate\":{{\"taskId\":\"{task}\",\"contextId\":\"ctx_3\",\"append\":{},\"lastChunk\":{last},\"artifact\":{{\"artifactId\":\"art_1\",\"parts\":[{{\"text\":\"chunk {i:02} of the generated itinerary, with enough words to look like model output ...\"}}]}}}}}}",
            i > 0
        )));
    }
    events.push(status("TASK_STATE_COMPLETED"));
    events
}

fn json(task: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"id":"{task}","contextId":"ctx_3","status":{{"state":"TASK_STATE_COMPLETED"}}}}}}"#
    ))
}

/// Yields its frames one by one.
struct Frames(VecDeque<Bytes>);

impl Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|b| Ok(Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

fn answer(req: &Request<Incoming>) -> Response<Frames> {
    let task = task_id();
    let (frames, ctype) = if req.uri().path() == "/sse" {
        (VecDeque::from(task_stream(&task)), "text/event-stream")
    } else {
        (VecDeque::from([json(&task)]), "application/json")
    };
    let len: usize = frames.iter().map(Bytes::len).sum();
    let mut resp = Response::new(Frames(frames));
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    if ctype == "application/json" {
        resp.headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    resp
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18900".to_string());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let stream = task_stream(&task_id());
    let total: usize = stream.iter().map(Bytes::len).sum();
    eprintln!(
        "bench_upstream on {addr}: /sse = {} events, {total} bytes",
        stream.len()
    );
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let resp = answer(&req);
                async move {
                    // Drain the request body so the connection stays reusable.
                    let _ = http_body_util::BodyExt::collect(req.into_body()).await;
                    Ok::<_, Infallible>(resp)
                }
            });
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tcp), service)
                .await;
        });
    }
}
