//! A scripted A2A 1.0 agent (JSON-RPC binding) that breaks the protocol on purpose.
//!
//! It exists so that operators (and `scripts/ops-test.sh`) can watch a2a-tap
//! report violations end to end: agent → a2a-tap → `/metrics` → Prometheus.
//!
//! ```text
//! cargo run --release --features example-agent --bin misbehaving_agent -- 127.0.0.1:PORT [--pace-ms N]
//! ```
//!
//! Port 0 picks a free port; the bound address is printed on stdout as
//! `misbehaving_agent listening on ADDR`.
//!
//! `SendStreamingMessage` (0.3: `message/stream`) answers with an SSE stream
//! chosen by the first text part of the message:
//!
//! | text                 | frames                                                    | expected finding            |
//! |----------------------|-----------------------------------------------------------|-----------------------------|
//! | `terminal_exit`      | Task SUBMITTED, WORKING, COMPLETED, WORKING               | `terminal_exit` (error)     |
//! | `abandoned_artifact` | Task SUBMITTED, WORKING, artifact without lastChunk, COMPLETED | `abandoned_artifact` (error) |
//! | `unspecified_state`  | Task SUBMITTED, TASK_STATE_UNSPECIFIED, COMPLETED         | `unspecified_state` (error) |
//! | `clean`              | Task SUBMITTED, WORKING, whole artifact, COMPLETED        | none                        |
//!
//! Any other text cycles through the three misbehaving scripts. Every stream
//! uses a fresh task id, so streams never interfere with each other.
//! Anything else gets a small valid JSON-RPC response: `SendMessage` a Message,
//! task operations TaskNotFound, unknown methods MethodNotFound; `GET
//! /.well-known/agent-card.json` serves an agent card.
#![forbid(unsafe_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// Largest request body the agent reads.
const MAX_BODY: usize = 1 << 20;

type Reply = Response<Either<Full<Bytes>, SseBody>>;

/// The misbehaviours (and one legal stream) the agent can play.
#[derive(Clone, Copy, Debug)]
enum Script {
    TerminalExit,
    AbandonedArtifact,
    UnspecifiedState,
    Clean,
}

// === impl Script ===

impl Script {
    const CYCLE: [Script; 3] = [
        Script::TerminalExit,
        Script::AbandonedArtifact,
        Script::UnspecifiedState,
    ];

    fn from_text(text: &str, n: u64) -> Script {
        match text.trim() {
            "terminal_exit" => Script::TerminalExit,
            "abandoned_artifact" => Script::AbandonedArtifact,
            "unspecified_state" => Script::UnspecifiedState,
            "clean" => Script::Clean,
            // `n % 3` is below 3, so the index is in range.
            _ => Self::CYCLE[(n % 3) as usize],
        }
    }

    /// The `StreamResponse` objects of this script, in order.
    fn results(self, task: &str, ctx: &str) -> Vec<Value> {
        let snapshot = json!({"task": {"id": task, "contextId": ctx,
            "status": {"state": "TASK_STATE_SUBMITTED"}}});
        let status = |state: &str| {
            json!({"statusUpdate": {"taskId": task, "contextId": ctx,
                "status": {"state": state}}})
        };
        // 1.0 JSON omits fields at their default, so an open chunk has no `lastChunk`.
        let artifact = |last: bool| {
            let mut update = json!({"taskId": task, "contextId": ctx,
                "artifact": {"artifactId": "a-1", "name": "report.txt",
                    "parts": [{"text": "report body"}]}});
            if last {
                update["lastChunk"] = Value::Bool(true);
            }
            json!({ "artifactUpdate": update })
        };
        match self {
            Script::TerminalExit => vec![
                snapshot,
                status("TASK_STATE_WORKING"),
                status("TASK_STATE_COMPLETED"),
                status("TASK_STATE_WORKING"),
            ],
            Script::AbandonedArtifact => vec![
                snapshot,
                status("TASK_STATE_WORKING"),
                artifact(false),
                status("TASK_STATE_COMPLETED"),
            ],
            Script::UnspecifiedState => vec![
                snapshot,
                status("TASK_STATE_UNSPECIFIED"),
                status("TASK_STATE_COMPLETED"),
            ],
            Script::Clean => vec![
                snapshot,
                status("TASK_STATE_WORKING"),
                artifact(true),
                status("TASK_STATE_COMPLETED"),
            ],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Script::TerminalExit => "terminal_exit",
            Script::AbandonedArtifact => "abandoned_artifact",
            Script::UnspecifiedState => "unspecified_state",
            Script::Clean => "clean",
        }
    }
}

/// A response body fed frame by frame from a channel, so SSE events leave as
/// they are produced.
struct SseBody(mpsc::Receiver<Bytes>);

// === impl SseBody ===

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.get_mut()
            .0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(Frame::data(b))))
    }
}

/// Shared state: the public address (for the card), pacing, a counter of answers (for unique ids).
struct Agent {
    addr: SocketAddr,
    pace: Duration,
    served: AtomicU64,
}

// === impl Agent ===

impl Agent {
    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Result<Reply, Infallible> {
        if req.method() == Method::GET {
            return Ok(self.get(req.uri().path()));
        }
        if req.method() != Method::POST {
            return Ok(plain(StatusCode::METHOD_NOT_ALLOWED, "POST only"));
        }
        let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => return Ok(plain(StatusCode::BAD_REQUEST, "unreadable body")),
        };
        let Ok(call) = serde_json::from_slice::<Value>(&body) else {
            return Ok(rpc_error(&Value::Null, -32700, "Parse error"));
        };
        let id = call.get("id").cloned().unwrap_or(Value::Null);
        let method = call.get("method").and_then(Value::as_str).unwrap_or("");
        Ok(match method {
            "SendStreamingMessage" | "message/stream" => self.stream(id, first_text(&call)),
            "SendMessage" | "message/send" => {
                let n = self.served.fetch_add(1, Ordering::Relaxed);
                json_reply(&json!({"jsonrpc": "2.0", "id": id, "result": {"message": {
                    "messageId": format!("agent-msg-{n}"), "role": "ROLE_AGENT",
                    "parts": [{"text": "ok"}]}}}))
            }
            "GetTask" | "CancelTask" | "SubscribeToTask" | "tasks/get" | "tasks/cancel"
            | "tasks/resubscribe" => rpc_error(&id, -32001, "Task not found"),
            _ => rpc_error(&id, -32601, "Method not found"),
        })
    }

    fn get(&self, path: &str) -> Reply {
        match path {
            "/.well-known/agent-card.json" => json_reply(&json!({
                "name": "misbehaving-agent",
                "description": "Breaks the A2A protocol on purpose (a2a-tap ops tests).",
                "version": "0.1.0",
                "supportedInterfaces": [{"url": format!("http://{}/", self.addr),
                    "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {"streaming": true},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                "skills": []
            })),
            "/" => plain(StatusCode::OK, "misbehaving_agent"),
            _ => plain(StatusCode::NOT_FOUND, "not found"),
        }
    }

    /// Starts a scripted SSE stream; the frames are written by a task, paced.
    fn stream(&self, id: Value, text: &str) -> Reply {
        let n = self.served.fetch_add(1, Ordering::Relaxed);
        let script = Script::from_text(text, n);
        let task = format!("task-{}-{n}", script.name());
        let ctx = format!("ctx-{n}");
        let frames: Vec<Bytes> = script
            .results(&task, &ctx)
            .into_iter()
            .map(|result| {
                let envelope = json!({"jsonrpc": "2.0", "id": id, "result": result});
                Bytes::from(format!("data: {envelope}\n\n"))
            })
            .collect();
        let (tx, rx) = mpsc::channel(frames.len().max(1));
        let pace = self.pace;
        tokio::spawn(async move {
            for frame in frames {
                tokio::time::sleep(pace).await;
                if tx.send(frame).await.is_err() {
                    return; // the caller hung up
                }
            }
        });
        eprintln!("misbehaving_agent: stream {n}: {} ({task})", script.name());
        let mut resp = Response::new(Either::Right(SseBody(rx)));
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("text/event-stream"),
        );
        resp.headers_mut().insert(
            header::CACHE_CONTROL,
            header::HeaderValue::from_static("no-cache"),
        );
        resp
    }
}

/// The first text part of `params.message`, or "" when there is none.
fn first_text(call: &Value) -> &str {
    call.pointer("/params/message/parts")
        .and_then(Value::as_array)
        .and_then(|parts| parts.iter().find_map(|p| p.get("text")?.as_str()))
        .unwrap_or("")
}

fn plain(status: StatusCode, text: &'static str) -> Reply {
    let mut resp = Response::new(Either::Left(Full::new(Bytes::from_static(text.as_bytes()))));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain"),
    );
    resp
}

fn json_reply(value: &Value) -> Reply {
    let mut resp = Response::new(Either::Left(Full::new(Bytes::from(value.to_string()))));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    resp
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Reply {
    json_reply(&json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": code, "message": message}}))
}

/// `ADDR [--pace-ms N]`
fn parse_args() -> Result<(SocketAddr, Duration), String> {
    let mut args = std::env::args().skip(1);
    let mut addr = None;
    let mut pace = Duration::from_millis(20);
    while let Some(arg) = args.next() {
        if arg == "--pace-ms" {
            let ms = args.next().ok_or("--pace-ms needs a value")?;
            let ms: u64 = ms.parse().map_err(|e| format!("--pace-ms {ms}: {e}"))?;
            pace = Duration::from_millis(ms);
        } else if addr.is_none() {
            addr = Some(arg.parse().map_err(|e| format!("address {arg}: {e}"))?);
        } else {
            return Err(format!("unexpected argument {arg}"));
        }
    }
    let addr = addr.ok_or("usage: misbehaving_agent ADDR [--pace-ms N]")?;
    Ok((addr, pace))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (addr, pace) = match parse_args() {
        Ok(parsed) => parsed,
        Err(msg) => {
            eprintln!("misbehaving_agent: {msg}");
            std::process::exit(2);
        }
    };
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    println!("misbehaving_agent listening on {addr}");
    let agent = Arc::new(Agent {
        addr,
        pace,
        served: AtomicU64::new(0),
    });
    loop {
        let (conn, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("misbehaving_agent: accept: {e}");
                continue;
            }
        };
        let agent = Arc::clone(&agent);
        tokio::spawn(async move {
            let svc = service_fn(move |req| Arc::clone(&agent).handle(req));
            let served = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(conn), svc)
                .await;
            if let Err(e) = served {
                eprintln!("misbehaving_agent: connection: {e}");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(results: &[Value]) -> Vec<&str> {
        results
            .iter()
            .filter_map(|r| {
                r.pointer("/task/status/state")
                    .or_else(|| r.pointer("/statusUpdate/status/state"))
                    .and_then(Value::as_str)
            })
            .collect()
    }

    #[test]
    fn every_script_starts_with_a_snapshot_of_its_own_task() {
        for script in [
            Script::Clean,
            Script::TerminalExit,
            Script::AbandonedArtifact,
            Script::UnspecifiedState,
        ] {
            let results = script.results("t-1", "c-1");
            assert!(results[0].get("task").is_some(), "{script:?}");
            for r in &results {
                let task = r
                    .pointer("/task/id")
                    .or_else(|| r.pointer("/statusUpdate/taskId"))
                    .or_else(|| r.pointer("/artifactUpdate/taskId"));
                assert_eq!(task.and_then(Value::as_str), Some("t-1"), "{script:?}: {r}");
            }
        }
    }

    #[test]
    fn terminal_exit_leaves_completed() {
        let results = Script::TerminalExit.results("t", "c");
        let s = states(&results);
        let done = s.iter().position(|x| *x == "TASK_STATE_COMPLETED");
        assert!(
            matches!(done, Some(i) if s.get(i + 1) == Some(&"TASK_STATE_WORKING")),
            "{s:?}"
        );
    }

    #[test]
    fn abandoned_artifact_is_open_at_completion_and_clean_is_closed() {
        let open = Script::AbandonedArtifact.results("t", "c");
        assert!(open[2].pointer("/artifactUpdate/lastChunk").is_none());
        assert_eq!(states(&open).last(), Some(&"TASK_STATE_COMPLETED"));
        let clean = Script::Clean.results("t", "c");
        assert_eq!(
            clean[2].pointer("/artifactUpdate/lastChunk"),
            Some(&Value::Bool(true))
        );
        assert_eq!(states(&clean).last(), Some(&"TASK_STATE_COMPLETED"));
    }

    #[test]
    fn unspecified_state_is_on_the_wire() {
        let results = Script::UnspecifiedState.results("t", "c");
        let s = states(&results);
        assert!(s.contains(&"TASK_STATE_UNSPECIFIED"), "{s:?}");
    }

    #[test]
    fn scripts_are_chosen_by_text_and_cycle_otherwise() {
        assert!(matches!(Script::from_text("clean", 0), Script::Clean));
        assert!(matches!(
            Script::from_text(" terminal_exit ", 1),
            Script::TerminalExit
        ));
        let cycled: Vec<_> = (0..3)
            .map(|n| Script::from_text("hello", n).name())
            .collect();
        assert_eq!(
            cycled,
            ["terminal_exit", "abandoned_artifact", "unspecified_state"]
        );
    }

    #[test]
    fn first_text_reads_the_message_parts() {
        let call = json!({"params": {"message": {"parts": [{"data": {}}, {"text": "clean"}]}}});
        assert_eq!(first_text(&call), "clean");
        assert_eq!(first_text(&json!({"params": {}})), "");
    }
}
