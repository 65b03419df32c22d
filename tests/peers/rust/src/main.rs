//! A small A2A 1.0 agent on the official Rust SDK (`a2a-lf`, `a2a-server-lf`),
//! a real peer of a2a-tap's tests (tests/real_peer.rs).
//!
//! Usage: rust-peer-agent [--port N] [--public-url URL] [--record FILE]
//!
//! Serves the SDK's JSON-RPC router at `/`, its HTTP+JSON router under
//! `/rest` and its agent card at `/.well-known/agent-card.json`, whose
//! interfaces name `--public-url` (default: the address it listens on).
//! Prints `READY <port>` once it listens. `--record FILE` appends one JSON
//! line per HTTP exchange, `{"method", "path", "status", "content_type",
//! "body_b64"}`, with the response body exactly as sent, written when the
//! body ends or is cut short (as tests/peers/agent.py does).
//!
//! The executor plays the scenarios of tests/peers/README.md, chosen by the
//! message text, the way the SDK's own helloworld example writes an
//! executor: its stream opens with a `working` status update, since the
//! SDK's handler sends what the executor yields and opens a new task's
//! stream with nothing of its own.
//!
//!   echo WORDS   working, the words as chunks of artifact `echo`, completed
//!   ask          working, input-required; a follow-up on the task completes it
//!   fail         working, a chunk of `partial` left open, failed
//!   long         working until canceled
//!   direct       a Message, no task

use std::fs::OpenOptions;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use a2a::*;
use a2a_server::*;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use base64::Engine;
use futures::StreamExt;
use futures::stream::{self, BoxStream};
use tokio_stream::wrappers::ReceiverStream;

// === the executor ===

struct Scenarios;

fn status(ctx: &ExecutorContext, state: TaskState, text: Option<&str>) -> StreamResponse {
    let message = text.map(|t| Message {
        task_id: Some(ctx.task_id.clone()),
        context_id: Some(ctx.context_id.clone()),
        ..Message::new(Role::Agent, vec![Part::text(t)])
    });
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: ctx.task_id.clone(),
        context_id: ctx.context_id.clone(),
        status: TaskStatus {
            state,
            message,
            timestamp: Some(chrono_now()),
        },
        metadata: None,
    })
}

fn chrono_now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// One chunk of artifact `name` (id `id`): `append` after the first,
/// `last_chunk` on the last (`None` where false, as the SDK's types leave it).
fn chunk(
    ctx: &ExecutorContext,
    (id, name): (&str, &str),
    text: &str,
    append: bool,
    last_chunk: bool,
) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: ctx.task_id.clone(),
        context_id: ctx.context_id.clone(),
        artifact: Artifact {
            artifact_id: id.to_string(),
            name: Some(name.to_string()),
            description: None,
            parts: vec![Part::text(text)],
            metadata: None,
            extensions: None,
        },
        append: Some(append),
        last_chunk: Some(last_chunk),
        metadata: None,
    })
}

fn text_of(message: Option<&Message>) -> String {
    message
        .map(|m| {
            m.parts
                .iter()
                .filter_map(|p| match &p.content {
                    PartContent::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect::<String>()
        })
        .unwrap_or_default()
}

type Events = BoxStream<'static, Result<StreamResponse, A2AError>>;

impl AgentExecutor for Scenarios {
    fn execute(&self, ctx: ExecutorContext) -> Events {
        let text = text_of(ctx.message.as_ref());
        let waiting = ctx
            .stored_task
            .as_ref()
            .is_some_and(|t| t.status.state == TaskState::InputRequired);
        let working = status(&ctx, TaskState::Working, None);
        let events: Vec<StreamResponse> = if waiting {
            let id = new_artifact_id();
            vec![
                working,
                chunk(
                    &ctx,
                    (&id, "answer"),
                    &format!("you said {text}"),
                    false,
                    true,
                ),
                status(&ctx, TaskState::Completed, None),
            ]
        } else if text == "ask" {
            vec![
                working,
                status(&ctx, TaskState::InputRequired, Some("which number?")),
            ]
        } else if text == "fail" {
            let id = new_artifact_id();
            vec![
                working,
                chunk(&ctx, (&id, "partial"), "half", false, false),
                status(&ctx, TaskState::Failed, Some("failed on purpose")),
            ]
        } else if text == "long" {
            // Working until CancelTask: the channel stays open until the
            // handler drops the execution.
            let (tx, rx) = tokio::sync::mpsc::channel(1);
            tokio::spawn(async move {
                let _ = tx.send(Ok(working)).await;
                tx.closed().await;
            });
            return Box::pin(ReceiverStream::new(rx));
        } else if text == "direct" {
            let reply = Message {
                context_id: Some(ctx.context_id.clone()),
                ..Message::new(Role::Agent, vec![Part::text("direct reply")])
            };
            vec![StreamResponse::Message(reply)]
        } else {
            let words = text.strip_prefix("echo ").unwrap_or(&text).to_string();
            let id = new_artifact_id();
            let pieces: Vec<String> = words
                .split_inclusive(' ')
                .map(str::to_string)
                .collect::<Vec<_>>();
            // "hello tap world" -> "hello", " tap", " world".
            let pieces: Vec<String> = pieces
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let p = p.trim_end();
                    if i == 0 {
                        p.to_string()
                    } else {
                        format!(" {p}")
                    }
                })
                .collect();
            let last = pieces.len().saturating_sub(1);
            let mut events = vec![working];
            for (i, piece) in pieces.iter().enumerate() {
                events.push(chunk(&ctx, (&id, "echo"), piece, i > 0, i == last));
            }
            events.push(status(&ctx, TaskState::Completed, None));
            events
        };
        Box::pin(stream::iter(events.into_iter().map(Ok)))
    }

    fn cancel(&self, ctx: ExecutorContext) -> Events {
        Box::pin(stream::iter([Ok(status(&ctx, TaskState::Canceled, None))]))
    }
}

// === recording the wire ===

/// One exchange's record, written once when dropped: when the response
/// body has been sent whole, or when it was cut short.
/// The line's members in the Python peers' order (method, path, status,
/// content_type, body_b64), so equal records are equal lines.
struct Record {
    path: PathBuf,
    method: String,
    uri_path: String,
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

impl Drop for Record {
    fn drop(&mut self) {
        let json = |v: serde_json::Value| v.to_string();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&self.body);
        let text = format!(
            "{{\"method\":{},\"path\":{},\"status\":{},\"content_type\":{},\"body_b64\":{}}}",
            json(self.method.as_str().into()),
            json(self.uri_path.as_str().into()),
            self.status,
            json(self.content_type.clone().into()),
            json(b64.into()),
        );
        if let Ok(mut file) = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
        {
            let _ = writeln!(file, "{text}");
        }
    }
}

async fn record(path: Arc<PathBuf>, request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let uri_path = request.uri().path().to_string();
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    let content_type = parts
        .headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let record = Arc::new(Mutex::new(Record {
        path: (*path).clone(),
        method,
        uri_path,
        status: parts.status.as_u16(),
        content_type,
        body: Vec::new(),
    }));
    let body = body.into_data_stream().map(move |chunk| {
        if let (Ok(bytes), Ok(mut record)) = (&chunk, record.lock()) {
            record.body.extend_from_slice(bytes);
        }
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

// === main ===

struct Args {
    port: u16,
    public_url: Option<String>,
    record: Option<PathBuf>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        port: 0,
        public_url: None,
        record: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--port" => out.port = value.parse().map_err(|e| format!("--port: {e}"))?,
            "--public-url" => out.public_url = Some(value.trim_end_matches('/').to_string()),
            "--record" => out.record = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    Ok(out)
}

#[tokio::main]
async fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("rust-peer-agent: {e}");
            std::process::exit(2);
        }
    };
    let listener =
        match tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], args.port))).await {
            Ok(listener) => listener,
            Err(e) => {
                eprintln!("rust-peer-agent: bind: {e}");
                std::process::exit(1);
            }
        };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(args.port);
    let base = args
        .public_url
        .unwrap_or_else(|| format!("http://127.0.0.1:{port}"));

    let capabilities = AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(false),
        extensions: None,
        extended_agent_card: None,
    };
    let handler = Arc::new(
        DefaultRequestHandler::new(Scenarios, InMemoryTaskStore::new())
            .with_capabilities(capabilities.clone()),
    );
    let card = AgentCard {
        name: "a2a-tap Rust SDK peer".to_string(),
        description: "Plays the scenarios of a2a-tap's real-peer tests.".to_string(),
        version: "1.0.0".to_string(),
        supported_interfaces: vec![
            AgentInterface::new(base.clone(), TRANSPORT_PROTOCOL_JSONRPC),
            AgentInterface::new(format!("{base}/rest"), TRANSPORT_PROTOCOL_HTTP_JSON),
        ],
        capabilities,
        default_input_modes: vec!["text/plain".to_string()],
        default_output_modes: vec!["text/plain".to_string()],
        skills: vec![AgentSkill {
            id: "scenarios".to_string(),
            name: "Scenarios".to_string(),
            description: "echo, ask, fail, long, direct".to_string(),
            tags: vec!["test".to_string()],
            examples: None,
            input_modes: None,
            output_modes: None,
            security_requirements: None,
        }],
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: None,
        security_requirements: None,
        signatures: None,
    };
    let mut app = axum::Router::new()
        .merge(a2a_server::jsonrpc::jsonrpc_router(handler.clone()))
        .nest("/rest", a2a_server::rest::rest_router(handler))
        .merge(a2a_server::agent_card::agent_card_router(Arc::new(
            StaticAgentCard::new(card),
        )));
    if let Some(path) = args.record {
        let path = Arc::new(path);
        app = app.layer(middleware::from_fn(move |request, next| {
            record(path.clone(), request, next)
        }));
    }
    println!("READY {port}");
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("rust-peer-agent: serve: {e}");
        std::process::exit(1);
    }
}
