//! A fast scripted A2A-like upstream for benchmarks: `/sse` answers a ~5 KB
//! task stream of 20 JSON-RPC 1.0 StreamResponse events; `/storm` the same
//! stream with one more event, a working status after the completed one (a
//! task leaving its terminal state: one finding a stream); a gRPC call to
//! `/lf.a2a.v1.A2AService/SendStreamingMessage` (h2c) the same task as 20
//! protobuf StreamResponse messages, then `grpc-status: 0`; anything else a
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

/// The task stream with a working status after the completed one.
fn storm_stream(task: &str) -> Vec<Bytes> {
    let mut events = task_stream(task);
    events.push(Bytes::from(format!(
        "data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"statusUpdate\":{{\"taskId\":\"{task}\",\"contextId\":\"ctx_3\",\"status\":{{\"state\":\"TASK_STATE_WORKING\",\"timestamp\":\"2026-01-01T00:00:01Z\"}}}}}}}}\n\n"
    )));
    events
}

fn json(task: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"id":"{task}","contextId":"ctx_3","status":{{"state":"TASK_STATE_COMPLETED"}}}}}}"#
    ))
}

/// The gRPC messages of the same task (1.0 `StreamResponse`s, each with
/// its 5-byte prefix), written with prost from the spec's field numbers.
fn grpc_stream(task: &str) -> Vec<Bytes> {
    use prost::Message;
    #[derive(Clone, PartialEq, prost::Message)]
    struct Status {
        #[prost(int32, tag = "1")]
        state: i32,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    struct Part {
        #[prost(string, tag = "1")]
        text: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    struct Artifact {
        #[prost(string, tag = "1")]
        artifact_id: String,
        #[prost(message, repeated, tag = "4")]
        parts: Vec<Part>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    struct Event {
        // Task (1) and TaskStatusUpdateEvent (3) share these fields' numbers.
        #[prost(string, tag = "1")]
        id: String,
        #[prost(string, tag = "2")]
        context_id: String,
        #[prost(message, optional, tag = "3")]
        status: Option<Status>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    struct ArtifactUpdate {
        #[prost(string, tag = "1")]
        task_id: String,
        #[prost(string, tag = "2")]
        context_id: String,
        #[prost(message, optional, tag = "3")]
        artifact: Option<Artifact>,
        #[prost(bool, tag = "4")]
        append: bool,
        #[prost(bool, tag = "5")]
        last_chunk: bool,
    }
    let framed = |field: u32, body: Vec<u8>| {
        let mut msg = Vec::new();
        prost::encoding::bytes::encode(field, &body, &mut msg);
        let mut out = vec![0u8];
        out.extend_from_slice(&(msg.len() as u32).to_be_bytes());
        out.extend_from_slice(&msg);
        Bytes::from(out)
    };
    let event = |field: u32, state: i32| {
        let e = Event {
            id: task.to_owned(),
            context_id: "ctx_3".into(),
            status: Some(Status { state }),
        };
        framed(field, e.encode_to_vec())
    };
    let mut out = vec![event(1, 1), event(3, 2)];
    for i in 0..17 {
        let a = ArtifactUpdate {
            task_id: task.to_owned(),
            context_id: "ctx_3".into(),
            artifact: Some(Artifact {
                artifact_id: "art_1".into(),
                parts: vec![Part {
                    text: format!("chunk {i:02} of the generated itinerary, with enough words to look like model output ..."),
                }],
            }),
            append: i > 0,
            last_chunk: i == 16,
        };
        out.push(framed(4, a.encode_to_vec()));
    }
    out.push(event(3, 3));
    out
}

/// Yields its frames one by one, then its trailers (a gRPC answer's).
struct Frames(VecDeque<Bytes>, Option<http::HeaderMap>);

impl Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(b) = self.0.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        Poll::Ready(self.1.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty() && self.1.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

fn answer(req: &Request<Incoming>) -> Response<Frames> {
    let task = task_id();
    let mut trailers = None;
    let (frames, ctype) = if req.uri().path() == "/sse" {
        (VecDeque::from(task_stream(&task)), "text/event-stream")
    } else if req.uri().path() == "/storm" {
        (VecDeque::from(storm_stream(&task)), "text/event-stream")
    } else if req.uri().path().ends_with("/SendStreamingMessage") {
        let mut t = http::HeaderMap::new();
        t.insert("grpc-status", HeaderValue::from_static("0"));
        trailers = Some(t);
        (VecDeque::from(grpc_stream(&task)), "application/grpc")
    } else {
        (VecDeque::from([json(&task)]), "application/json")
    };
    let len: usize = frames.iter().map(Bytes::len).sum();
    let mut resp = Response::new(Frames(frames, trailers));
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
