//! A scripted A2A 1.0 agent for the probe's tests: JSON-RPC at `/rpc`,
//! HTTP+JSON under `/rest`, its card at `/.well-known/agent-card.json`.
//! Correct by default; each `Defect` breaks exactly one rule, the one a
//! probe check is about.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{json, Value};

use crate::support::{channel, full, upstream, Body};

/// One broken rule (or none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Defect {
    None,
    CardInvalid,
    BlockingReturnsWorking,
    FollowUpNewTask,
    ReturnImmediatelyBlocks,
    CancelActiveRefused,
    TerminalAcceptsMessage,
    CancelTerminalAccepted,
    CancelCompletedFlips,
    SubscribeTerminalStreams,
    GetUnknownWrongError,
    StreamStartsWithStatus,
    StreamStaysOpen,
    StreamingUndeclared,
    PushAccepted,
    VersionIgnored,
    RestWrongStatus,
}

/// The A2A errors the agent answers with.
#[derive(Debug, Clone, Copy)]
enum Err {
    NotFound,
    NotCancelable,
    Unsupported,
    PushNotSupported,
    VersionNotSupported,
    Internal,
}

impl Err {
    /// JSON-RPC code, HTTP status, ErrorInfo reason (spec 1.0 §5.4).
    fn codes(self) -> (i64, u16, &'static str) {
        match self {
            Err::NotFound => (-32001, 404, "TASK_NOT_FOUND"),
            Err::NotCancelable => (-32002, 409, "TASK_NOT_CANCELABLE"),
            Err::PushNotSupported => (-32003, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"),
            Err::Unsupported => (-32004, 400, "UNSUPPORTED_OPERATION"),
            Err::VersionNotSupported => (-32009, 400, "VERSION_NOT_SUPPORTED"),
            Err::Internal => (-32603, 500, ""),
        }
    }
}

enum Out {
    Task(Value),
    Sent(Value),
    Error(Err),
    Stream(Vec<Value>),
    /// A stream whose body stays open after its frames.
    Held(Vec<Value>),
    Other(Value),
}

struct Agent {
    defect: Defect,
    port: OnceLock<u16>,
    /// Task id → (context id, state).
    tasks: Mutex<HashMap<String, (String, &'static str)>>,
    next: AtomicU64,
}

/// Starts the agent; its base URL is `http://ADDR`.
pub async fn start(defect: Defect) -> SocketAddr {
    let agent = Arc::new(Agent {
        defect,
        port: OnceLock::new(),
        tasks: Mutex::new(HashMap::new()),
        next: AtomicU64::new(0),
    });
    let a = agent.clone();
    let addr = upstream(move |req| {
        let a = a.clone();
        async move { a.serve(req).await }
    })
    .await;
    let _ = agent.port.set(addr.port());
    addr
}

impl Agent {
    async fn serve(&self, req: Request<Incoming>) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let body = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let path = parts.uri.path().to_owned();
        let version = parts
            .headers
            .get("a2a-version")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("1.0");
        if path == "/.well-known/agent-card.json" {
            return respond(200, "application/json", self.card().to_string());
        }
        let unsupported = !matches!(version, "1.0" | "1") && self.defect != Defect::VersionIgnored;
        if path == "/rpc" {
            let id = body["id"].clone();
            let out = if unsupported {
                Out::Error(Err::VersionNotSupported)
            } else {
                self.rpc(body["method"].as_str().unwrap_or(""), &body["params"])
                    .await
            };
            return rpc_answer(&id, out);
        }
        let Some(tail) = path.strip_prefix("/rest") else {
            return respond(404, "text/plain", "no such path".into());
        };
        let out = if unsupported {
            Out::Error(Err::VersionNotSupported)
        } else {
            self.rest(&parts.method, tail, &body).await
        };
        self.rest_answer(out)
    }

    fn card(&self) -> Value {
        let base = format!("http://127.0.0.1:{}", self.port.get().copied().unwrap_or(0));
        let mut card = json!({
            "name": "scripted probe agent",
            "description": "a2a-tap probe tests",
            "version": "1.0.0",
            "supportedInterfaces": [
                {"url": format!("{base}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": format!("{base}/rest"), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": "http://elsewhere.invalid/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": format!("{base}/grpc"), "protocolBinding": "GRPC", "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": self.defect != Defect::StreamingUndeclared, "pushNotifications": false},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": []
        });
        if self.defect == Defect::CardInvalid {
            card.as_object_mut().map(|c| c.remove("version"));
        }
        card
    }

    async fn rpc(&self, method: &str, p: &Value) -> Out {
        let id = p["id"].as_str().unwrap_or("");
        match method {
            "SendMessage" => self.send(p).await,
            "SendStreamingMessage" => self.stream(p),
            "GetTask" => self.get(id),
            "CancelTask" => self.cancel(id),
            "SubscribeToTask" => self.subscribe(id),
            "CreateTaskPushNotificationConfig" => self.push(p),
            _ => Out::Error(Err::Internal),
        }
    }

    async fn rest(&self, method: &http::Method, tail: &str, body: &Value) -> Out {
        let task = |s: &str| s.strip_prefix("/tasks/").map(str::to_owned);
        match (method.as_str(), tail) {
            ("POST", "/message:send") => self.send(body).await,
            ("POST", "/message:stream") => self.stream(body),
            ("POST", t) if t.ends_with(":cancel") => {
                self.cancel(&task(t.trim_end_matches(":cancel")).unwrap_or_default())
            }
            ("GET", t) if t.ends_with(":subscribe") => {
                self.subscribe(&task(t.trim_end_matches(":subscribe")).unwrap_or_default())
            }
            ("POST", t) if t.ends_with("/pushNotificationConfigs") => self.push(body),
            ("GET", t) => self.get(&task(t).unwrap_or_default()),
            _ => Out::Error(Err::Internal),
        }
    }

    fn new_task(&self, state: &'static str) -> (String, String) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let (id, ctx) = (format!("task-{n}"), format!("ctx-{n}"));
        self.set(&id, &ctx, state);
        (id, ctx)
    }

    fn set(&self, id: &str, ctx: &str, state: &'static str) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.insert(id.to_owned(), (ctx.to_owned(), state));
    }

    fn lookup(&self, id: &str) -> Option<(String, &'static str)> {
        let tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.get(id).cloned()
    }

    async fn send(&self, p: &Value) -> Out {
        let m = &p["message"];
        let text = m["parts"][0]["text"].as_str().unwrap_or("");
        let immediate = p["configuration"]["returnImmediately"].as_bool() == Some(true);
        if let Some(id) = m["taskId"].as_str() {
            let Some((ctx, state)) = self.lookup(id) else {
                return Out::Error(Err::NotFound);
            };
            return match state {
                "TASK_STATE_INPUT_REQUIRED" if self.defect == Defect::FollowUpNewTask => {
                    let (new, _) = self.new_task("TASK_STATE_COMPLETED");
                    self.set(&new, &ctx, "TASK_STATE_COMPLETED");
                    Out::Sent(task(&new, &ctx, "TASK_STATE_COMPLETED"))
                }
                "TASK_STATE_INPUT_REQUIRED" => {
                    self.set(id, &ctx, "TASK_STATE_COMPLETED");
                    Out::Sent(task(id, &ctx, "TASK_STATE_COMPLETED"))
                }
                s if self.defect == Defect::TerminalAcceptsMessage => Out::Sent(task(id, &ctx, s)),
                _ => Out::Error(Err::Unsupported),
            };
        }
        if text.starts_with("ask") && !immediate {
            let (id, ctx) = self.new_task("TASK_STATE_INPUT_REQUIRED");
            return Out::Sent(task(&id, &ctx, "TASK_STATE_INPUT_REQUIRED"));
        }
        if immediate {
            if self.defect == Defect::ReturnImmediatelyBlocks {
                tokio::time::sleep(Duration::from_millis(3500)).await;
            }
            let (id, ctx) = self.new_task("TASK_STATE_WORKING");
            return Out::Sent(task(&id, &ctx, "TASK_STATE_WORKING"));
        }
        let state = if self.defect == Defect::BlockingReturnsWorking {
            "TASK_STATE_WORKING"
        } else {
            "TASK_STATE_COMPLETED"
        };
        let (id, ctx) = self.new_task(state);
        Out::Sent(task(&id, &ctx, state))
    }

    fn stream(&self, _p: &Value) -> Out {
        let (id, ctx) = self.new_task("TASK_STATE_COMPLETED");
        let status = |s: &str| json!({"statusUpdate": {"taskId": id, "contextId": ctx, "status": {"state": s}}});
        let mut frames = vec![
            json!({"task": task(&id, &ctx, "TASK_STATE_SUBMITTED")}),
            status("TASK_STATE_WORKING"),
            json!({"artifactUpdate": {"taskId": id, "contextId": ctx, "lastChunk": true,
                   "artifact": {"artifactId": "a-1", "parts": [{"text": "brief"}]}}}),
            status("TASK_STATE_COMPLETED"),
        ];
        match self.defect {
            Defect::StreamStartsWithStatus => {
                frames.remove(0);
                Out::Stream(frames)
            }
            Defect::StreamStaysOpen => Out::Held(frames),
            _ => Out::Stream(frames),
        }
    }

    fn get(&self, id: &str) -> Out {
        match self.lookup(id) {
            Some((ctx, state)) => Out::Task(task(id, &ctx, state)),
            None if self.defect == Defect::GetUnknownWrongError => Out::Error(Err::Internal),
            None => Out::Error(Err::NotFound),
        }
    }

    fn cancel(&self, id: &str) -> Out {
        let Some((ctx, state)) = self.lookup(id) else {
            return Out::Error(Err::NotFound);
        };
        match state {
            "TASK_STATE_CANCELED" if self.defect == Defect::CancelTerminalAccepted => {
                Out::Task(task(id, &ctx, state))
            }
            "TASK_STATE_COMPLETED" if self.defect == Defect::CancelCompletedFlips => {
                self.set(id, &ctx, "TASK_STATE_CANCELED");
                Out::Error(Err::NotCancelable)
            }
            "TASK_STATE_COMPLETED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_REJECTED" => Out::Error(Err::NotCancelable),
            "TASK_STATE_WORKING" if self.defect == Defect::CancelActiveRefused => {
                Out::Error(Err::NotCancelable)
            }
            _ => {
                self.set(id, &ctx, "TASK_STATE_CANCELED");
                Out::Task(task(id, &ctx, "TASK_STATE_CANCELED"))
            }
        }
    }

    fn subscribe(&self, id: &str) -> Out {
        match self.lookup(id) {
            None => Out::Error(Err::NotFound),
            Some((ctx, state)) if self.defect == Defect::SubscribeTerminalStreams => {
                Out::Stream(vec![json!({"task": task(id, &ctx, state)})])
            }
            Some(_) => Out::Error(Err::Unsupported),
        }
    }

    fn push(&self, p: &Value) -> Out {
        if self.defect == Defect::PushAccepted {
            return Out::Other(p.clone());
        }
        Out::Error(Err::PushNotSupported)
    }

    fn rest_answer(&self, out: Out) -> Response<Body> {
        match out {
            Out::Task(t) | Out::Other(t) => respond(200, "application/json", t.to_string()),
            Out::Sent(t) => respond(200, "application/json", json!({"task": t}).to_string()),
            Out::Stream(frames) => sse(frames.iter().map(Value::to_string)),
            Out::Held(frames) => held(frames.iter().map(Value::to_string)),
            Out::Error(e) => {
                let (_, mut status, reason) = e.codes();
                if self.defect == Defect::RestWrongStatus && matches!(e, Err::NotFound) {
                    status = 400;
                }
                let details = if reason.is_empty() {
                    json!([])
                } else {
                    json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": reason, "domain": "a2a-protocol.org"}])
                };
                let body =
                    json!({"error": {"code": status, "message": reason, "details": details}});
                respond(status, "application/json", body.to_string())
            }
        }
    }
}

fn task(id: &str, ctx: &str, state: &str) -> Value {
    json!({"id": id, "contextId": ctx, "status": {"state": state}})
}

fn rpc_answer(id: &Value, out: Out) -> Response<Body> {
    let envelope = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match out {
        Out::Task(t) | Out::Other(t) => respond(200, "application/json", envelope(t).to_string()),
        Out::Sent(t) => respond(
            200,
            "application/json",
            envelope(json!({"task": t})).to_string(),
        ),
        Out::Stream(frames) => sse(frames.into_iter().map(|f| envelope(f).to_string())),
        Out::Held(frames) => held(frames.into_iter().map(|f| envelope(f).to_string())),
        Out::Error(e) => {
            let (code, _, reason) = e.codes();
            let body =
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": reason}});
            respond(200, "application/json", body.to_string())
        }
    }
}

fn sse(frames: impl Iterator<Item = String>) -> Response<Body> {
    let body: String = frames.map(|f| format!("data: {f}\n\n")).collect();
    respond(200, "text/event-stream", body)
}

/// An SSE answer that sends `frames`, then holds the body open (until the
/// caller hangs up, or a minute).
fn held(frames: impl Iterator<Item = String>) -> Response<Body> {
    let (mut tx, body) = channel();
    let text: String = frames.map(|f| format!("data: {f}\n\n")).collect();
    tokio::spawn(async move {
        if tx.send_data(text.into()).await.is_ok() {
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        drop(tx);
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(body)
        .unwrap_or_else(|_| Response::new(full("")))
}

fn respond(status: u16, content_type: &str, body: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(full(body))
        .unwrap_or_else(|_| Response::new(full("")))
}
