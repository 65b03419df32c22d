//! The shared fixtures (/work/shared/fixtures, copied into the test as text)
//! run through the reducer. A test-only reader maps their few shapes to
//! `Decoded`; the real decoder is tested elsewhere.

use crate::world::*;
use a2a_tap::a2a::model::*;
use a2a_tap::findings::{Kind, Policy, Severity};
use a2a_tap::lifecycle::{End, Outcome};
use serde_json::Value;

const BOOKING_1: &str = r#"data: {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "tsk_7", "contextId": "ctx_3", "status": {"state": "TASK_STATE_SUBMITTED"}}}}

data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "tsk_7", "contextId": "ctx_3", "status": {"state": "TASK_STATE_WORKING"}}}}

data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "tsk_7", "contextId": "ctx_3", "status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": {"role": "ROLE_AGENT", "messageId": "m-2", "parts": [{"text": "Two flights match. Depart 07:10 or 09:45?"}]}}}}}
"#;

const BOOKING_2: &str = r#"data: {"jsonrpc": "2.0", "id": 2, "result": {"task": {"id": "tsk_7", "contextId": "ctx_3", "status": {"state": "TASK_STATE_WORKING"}}}}

data: {"jsonrpc": "2.0", "id": 2, "result": {"artifactUpdate": {"taskId": "tsk_7", "contextId": "ctx_3", "artifact": {"artifactId": "itin", "parts": [{"text": "Booked 09:45, ref Q7XK2"}]}, "lastChunk": true}}}

data: {"jsonrpc": "2.0", "id": 2, "result": {"statusUpdate": {"taskId": "tsk_7", "contextId": "ctx_3", "status": {"state": "TASK_STATE_COMPLETED"}}}}
"#;

const CODEGEN: &str = r#"event: TaskArtifactUpdateEvent
data: {"taskId":"t-9f2","artifact":{"artifactId":"a-1","parts":[{"text":"def f("}]},"lastChunk":false}

event: TaskStatusUpdateEvent
data: {"taskId":"t-9f2","status":{"state":"working"},"final":false}

event: TaskArtifactUpdateEvent
data: {"taskId":"t-9f2","artifact":{"artifactId":"a-1","parts":[{"text":"x):\n  return x"}]},"lastChunk":false}

event: TaskStatusUpdateEvent
data: {"taskId":"t-9f2","status":{"state":"failed","message":{"parts":[{"text":"upstream model 529"}]}},"final":true}
"#;

/// The `data:` payloads of an SSE text, one per event.
fn frames(sse: &str) -> Vec<Decoded<'static>> {
    sse.split("\n\n")
        .filter_map(|block| block.lines().find_map(|l| l.strip_prefix("data:")))
        .map(|data| read(&serde_json::from_str(data.trim()).expect("fixture JSON")))
        .collect()
}

fn read(v: &Value) -> Decoded<'static> {
    let rpc_id = v.get("id").map(|id| RpcId::Number(id.to_string().into()));
    let r = v.get("result").unwrap_or(v);
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(owned);
    let status = |v: &Value| Status {
        state: state(v["status"]["state"].as_str().unwrap_or("")),
        timestamp: None,
    };
    let ev = if let Some(t) = r.get("task") {
        Event::Task(TaskSnapshot {
            id: s(t, "id").unwrap_or_default(),
            context_id: s(t, "contextId"),
            status: status(t),
            artifact_ids: vec![],
        })
    } else {
        let u = r
            .get("statusUpdate")
            .or(r.get("artifactUpdate"))
            .unwrap_or(r);
        let task_id = s(u, "taskId").unwrap_or_default();
        let context_id = s(u, "contextId");
        if let Some(a) = u.get("artifact") {
            Event::ArtifactUpdate(ArtifactUpdate {
                task_id,
                context_id,
                artifact_id: s(a, "artifactId").unwrap_or_default(),
                append: u["append"].as_bool().unwrap_or(false),
                last_chunk: u["lastChunk"].as_bool().unwrap_or(false),
            })
        } else {
            Event::StatusUpdate(StatusUpdate {
                task_id,
                context_id,
                status: status(u),
                final_flag: u["final"].as_bool(),
            })
        }
    };
    // The dialect the result says it is in: 0.3's `kind`, a 1.0 wrapper.
    let wrapped = ["task", "message", "statusUpdate", "artifactUpdate"]
        .iter()
        .any(|k| r.get(k).is_some());
    let dialect = match (v.get("result").is_some(), r.get("kind").is_some(), wrapped) {
        (false, _, _) => None,
        (true, true, _) => Some(Version::V0_3),
        (true, false, true) => Some(Version::V1_0),
        (true, false, false) => None,
    };
    Decoded {
        rpc_id,
        payload: Payload::Event(ev),
        dialect,
    }
}

fn state(raw: &str) -> StateValue {
    let norm = raw
        .trim_start_matches("TASK_STATE_")
        .to_ascii_lowercase()
        .replace('-', "_");
    st(&norm)
}

fn rpc(op: Operation, id: &str, task: Option<&str>) -> Exchange {
    let mut e = ex(op, task);
    e.rpc_id = Some(RpcId::Number(owned(id)));
    e
}

#[test]
fn booking_is_clean_across_two_streams() {
    let mut w = World::new();
    let first = rpc(Operation::SendStreamingMessage, "1", None);
    let (f, o) = w.stream(first, &frames(BOOKING_1), End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(o, Outcome::Interrupted);
    let follow_up = rpc(Operation::SendStreamingMessage, "2", Some("tsk_7"));
    let (f, o) = w.stream(follow_up, &frames(BOOKING_2), End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(o, Outcome::Terminal);
    // A poll afterwards agrees; a cancel is refused.
    let f = w.body(
        ex(Operation::GetTask, Some("tsk_7")),
        200,
        &task("tsk_7", "ctx_3", "completed"),
    );
    assert!(f.is_empty(), "{f:#?}");
    let f = w.body(
        ex(Operation::CancelTask, Some("tsk_7")),
        400,
        &err(A2aError::TaskNotCancelable, -32002),
    );
    assert!(f.is_empty(), "{f:#?}");
    let mut seen = Vec::new();
    w.reg
        .take_transitions(&mut |from, to, n| seen.push((from, to, n)));
    use TaskState::*;
    seen.sort();
    let expected = [
        (None, Submitted, 1),
        (Some(Submitted), Working, 1),
        (Some(Working), InputRequired, 1),
        (Some(Working), Completed, 1),
        (Some(InputRequired), Working, 1),
    ];
    assert_eq!(seen, expected);
}

#[test]
fn booking_follow_up_as_the_python_sdk_sends_it() {
    let mut w = World::new();
    w.stream(
        rpc(Operation::SendStreamingMessage, "1", None),
        &frames(BOOKING_1),
        End::Upstream,
    );
    let mut second = frames(BOOKING_2);
    second[0] = with_id(
        upd("tsk_7", "ctx_3", "working"),
        Some(RpcId::Number("2".into())),
    );
    let (f, _) = w.stream(
        rpc(Operation::SendStreamingMessage, "2", Some("tsk_7")),
        &second,
        End::Upstream,
    );
    let f0 = only(&f, Kind::StreamStart);
    is(
        f0,
        Kind::StreamStart,
        Severity::Error,
        Some("tsk_7"),
        Some(0),
    );
    // Operators lower it through the policy.
    let mut policy = Policy::default();
    policy.set(Kind::StreamStart, Some(Severity::Warning));
    let lowered = policy.apply(f0.clone()).map(|f| f.severity);
    assert_eq!(lowered, Some(Severity::Warning));
}

#[test]
fn codegen_failed_with_an_open_artifact() {
    let mut w = World::new();
    let (f, o) = w.stream(
        ex(Operation::SendStreamingMessage, None),
        &frames(CODEGEN),
        End::Upstream,
    );
    assert_eq!(kinds(&f), vec![Kind::StreamStart, Kind::AbandonedArtifact]);
    is(
        &f[0],
        Kind::StreamStart,
        Severity::Error,
        Some("t-9f2"),
        Some(0),
    );
    is(
        &f[1],
        Kind::AbandonedArtifact,
        Severity::Warning,
        Some("t-9f2"),
        Some(3),
    );
    assert_eq!(
        f[1].detail,
        "expected artifact a-1 to end with lastChunk:true before task t-9f2 turned failed; it was still open"
    );
    assert_eq!(o, Outcome::Terminal);
}

#[test]
fn codegen_as_a_subscribe_stream_reconciles() {
    let mut w = World::new();
    let (f, _) = w.stream(
        rest(Operation::SubscribeToTask, Some("t-9f2")),
        &frames(CODEGEN),
        End::Upstream,
    );
    assert_eq!(kinds(&f), vec![Kind::StreamStart]);
}

#[test]
fn codegen_completing_with_the_artifact_open_is_an_error() {
    let mut w = World::new();
    let mut trace = frames(&CODEGEN.replace("\"failed\"", "\"completed\""));
    trace.insert(0, task("t-9f2", "c", "submitted"));
    let (f, _) = w.stream(
        ex(Operation::SendStreamingMessage, None),
        &trace,
        End::Upstream,
    );
    is(
        only(&f, Kind::AbandonedArtifact),
        Kind::AbandonedArtifact,
        Severity::Error,
        Some("t-9f2"),
        Some(4),
    );
}
