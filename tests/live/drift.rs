//! Known SDK drifts through the running proxy: the official Python SDK's
//! follow-up stream (1.0 §3.1.2: a stream "MUST begin with the Task") is a
//! `stream_start` whose detail says so, and `[severity] sdk_drift` lowers
//! that drift alone, never the kind's other findings.

use crate::support::a2a::*;
use crate::support::scenes::setup;
use crate::support::{tap::Proxy, Reply, Upstream};
use bytes::Bytes;
use serde_json::{json, Value};

const SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sdk/");
const TASK: &str = "eb55d4fb-c4ff-4a8b-b453-0a650993d4c7";

/// The recorded follow-up of a2a-sdk 1.3.0 (JSON-RPC, 1.0): its request,
/// and its answer's bytes as the SDK wrote them.
fn recorded_follow_up() -> (String, Reply) {
    let read = |name: &str| std::fs::read(format!("{SDK}{name}")).expect("fixture");
    let meta: Value = serde_json::from_slice(&read("jsonrpc-1.0-ask-followup.json")).expect("json");
    let body = meta["exchanges"][0]["request"]["body"]
        .as_str()
        .expect("body");
    let mut reply = Reply::sse(&[]);
    reply.content_type = "text/event-stream; charset=utf-8".into();
    reply.chunks = vec![Bytes::from(read("jsonrpc-1.0-ask-followup.sse"))];
    (body.to_owned(), reply)
}

/// A new task's stream that begins with a status update: the same kind,
/// no drift (no SDK is known to do this).
async fn new_task_begins_with_status(up: &Upstream, p: &Proxy) {
    let events = [
        status("t-new", "c", "TASK_STATE_WORKING"),
        status("t-new", "c", "TASK_STATE_COMPLETED"),
    ];
    exchange(up, p, stream_req(7), Reply::sse(&frames(7, &events))).await;
}

/// A follow-up whose stream begins with an artifact update: not what the
/// SDK does, so not its drift.
async fn follow_up_begins_with_artifact(up: &Upstream, p: &Proxy) {
    let events = [
        artifact("t-2", "c", "a", false, true),
        status("t-2", "c", "TASK_STATE_COMPLETED"),
    ];
    let req = request(json!(8), "SendStreamingMessage", follow_up("t-2", "c"));
    exchange(up, p, req, Reply::sse(&frames(8, &events))).await;
}

fn stream_req(id: i64) -> String {
    request(json!(id), "SendStreamingMessage", new_message())
}

fn detail(r: &Value) -> &str {
    r["detail"].as_str().unwrap_or("")
}

#[tokio::test]
async fn the_python_sdk_follow_up_is_an_error_that_names_its_drift() {
    let (up, p) = setup("").await;
    let (req, reply) = recorded_follow_up();
    exchange(&up, &p, req, reply).await;
    let recs = settle_expecting(
        &up,
        &p,
        &[expect("stream_start", "error", Some(TASK), Some(0))],
        "SendStreamingMessage",
    )
    .await;
    let d = detail(&recs[0]);
    assert!(
        d.contains(&format!("a follow-up on existing task {TASK}")),
        "{d}"
    );
    assert!(d.contains("known drift of the official Python SDK"), "{d}");
    assert!(d.contains("sdk_drift = \"warning\""), "{d}");
}

#[tokio::test]
async fn sdk_drift_lowers_the_drift_and_nothing_else() {
    let (up, p) = setup("[severity]\nsdk_drift = \"warning\"\n").await;
    let (req, reply) = recorded_follow_up();
    exchange(&up, &p, req, reply).await;
    new_task_begins_with_status(&up, &p).await;
    follow_up_begins_with_artifact(&up, &p).await;
    let recs = settle_expecting(
        &up,
        &p,
        &[
            expect("stream_start", "warning", Some(TASK), Some(0)),
            expect("stream_start", "error", Some("t-new"), Some(0)),
            expect("stream_start", "error", Some("t-2"), Some(0)),
        ],
        "SendStreamingMessage",
    )
    .await;
    assert!(
        detail(&recs[0]).contains("Python SDK"),
        "{}",
        detail(&recs[0])
    );
    for r in &recs[1..3] {
        assert!(!detail(r).contains("drift"), "{}", detail(r));
    }
}

#[tokio::test]
async fn a_kind_line_wins_over_sdk_drift() {
    let config = "[severity]\nsdk_drift = \"warning\"\nstream_start = \"off\"\n";
    let (up, p) = setup(config).await;
    let (req, reply) = recorded_follow_up();
    exchange(&up, &p, req, reply).await;
    new_task_begins_with_status(&up, &p).await;
    settle_expecting(&up, &p, &[], "SendStreamingMessage").await;
}
