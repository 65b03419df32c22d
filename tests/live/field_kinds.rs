//! The kinds of issue 38, rules that implementations in the field broke and
//! no other kind names (timestamps, error codes against their reason,
//! streams left open), each provoked through the running proxy with its
//! legal look-alike.

use super::kinds::*;
use crate::support::a2a::*;
use crate::support::{Proxied, Reply};
use serde_json::json;

/// A 1.0 status timestamp with an offset, without a zone, or no time at
/// all (§5.6.1: "ISO 8601 formatted strings in UTC", "MUST NOT include
/// timezone offsets other than 'Z'"). Look-alikes: whole and fractional
/// seconds in `Z`, and a 0.3 answer with `+00:00` (0.3 asks only for an
/// ISO 8601 date and time).
#[tokio::test]
async fn invalid_timestamp() {
    let (up, p) = setup("").await;
    let stamped = |t: &str, a: &str, b: &str| {
        [
            with_ts_task(task(t, "c", "TASK_STATE_WORKING"), a),
            with_ts(status(t, "c", "TASK_STATE_COMPLETED"), b),
        ]
    };
    // Look-alikes.
    send_stream(
        &up,
        &p,
        1,
        &stamped("t-ok", "2026-12-01T10:00:00Z", "2026-12-01T10:00:00.123456Z"),
    )
    .await;
    let v03 = json!({"jsonrpc": "2.0", "id": 2, "method": "message/stream", "params": {"message": {"kind": "message", "role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "hi"}]}}}).to_string();
    let v03_frames = [
        json!({"jsonrpc": "2.0", "id": 2, "result": {"kind": "task", "id": "t-ok03", "contextId": "c", "status": {"state": "working", "timestamp": "2026-12-01T10:00:00+00:00"}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {"kind": "status-update", "taskId": "t-ok03", "contextId": "c", "status": {"state": "completed", "timestamp": "2026-12-01T10:00:01.5+00:00"}, "final": true}}).to_string(),
    ];
    up.push(Reply::sse(&v03_frames));
    p.send("POST", "/", &[], &v03).await;
    // Provoked: an offset on a stream's status, no zone in a GetTask body.
    send_stream(
        &up,
        &p,
        3,
        &stamped("t-1", "2026-12-01T10:00:00Z", "2026-12-01T12:00:00+02:00"),
    )
    .await;
    get_task(
        &up,
        &p,
        4,
        "t-2",
        bare_task("t-2", "c", "TASK_STATE_WORKING", Some("2026-12-01T10:00:00")),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(
        kinds(&recs),
        ["invalid_timestamp"; 2],
        "{recs:#?}"
    );
    assert_eq!(recs[0]["task_id"], "t-1");
    assert_eq!(recs[0]["event_index"], 1);
    assert_eq!(recs[0]["method"], "SendStreamingMessage");
    assert!(recs[0]["evidence"].as_str().unwrap().contains("+02:00"));
    assert_eq!(recs[1]["task_id"], "t-2");
    assert_eq!(recs[1]["method"], "GetTask");
    for r in &recs {
        check_fields(r);
        assert_eq!(r["severity"], "warning");
        assert!(
            r["detail"].as_str().unwrap().contains("ending in Z"),
            "{r}"
        );
    }
}

fn with_ts_task(mut ev: serde_json::Value, ts: &str) -> serde_json::Value {
    ev["task"]["status"]["timestamp"] = json!(ts);
    ev
}

/// A JSON-RPC 1.0 error whose `code` is one A2A error's and whose typed
/// ErrorInfo `reason` names another (§5.4's table). Look-alikes: a code
/// and reason that agree, a code with no details, a reason under -32603
/// (a code naming no A2A error is not judged), and a 0.3 error (free-form
/// `data`).
#[tokio::test]
async fn error_code_mismatch_over_jsonrpc() {
    let (up, p) = setup("").await;
    let err = |id: i64, code: i64, reason: Option<&str>| {
        let mut e = json!({"code": code, "message": "m"});
        if let Some(r) = reason {
            e["data"] = json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": r, "domain": "a2a-protocol.org"}]);
        }
        json!({"jsonrpc": "2.0", "id": id, "error": e}).to_string()
    };
    let ask = |id: i64, method: &str, t: &str| request(json!(id), method, json!({"id": t}));
    // Look-alikes.
    let fine = [
        (1, "GetTask", -32001, Some("TASK_NOT_FOUND")),
        (2, "CancelTask", -32002, Some("TASK_NOT_CANCELABLE")),
        (3, "GetTask", -32001, None),
        (4, "GetTask", -32603, Some("TASK_NOT_FOUND")),
    ];
    for (id, method, code, reason) in fine {
        exchange(&up, &p, ask(id, method, "t-ok"), Reply::json(200, &err(id, code, reason))).await;
    }
    up.push(Reply::json(200, &err(5, -32001, Some("TASK_NOT_CANCELABLE"))));
    let v03 = json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/get", "params": {"id": "t-ok"}});
    p.send("POST", "/", &[], &v03.to_string()).await;
    // Provoked: a cancel answered TaskNotFound's code with TaskNotCancelable's reason.
    exchange(
        &up,
        &p,
        ask(6, "CancelTask", "t-1"),
        Reply::json(200, &err(6, -32001, Some("TASK_NOT_CANCELABLE"))),
    )
    .await;
    let recs = settle_expecting(
        &up,
        &p,
        &[expect("error_code_mismatch", "warning", Some("t-1"), None)],
        "CancelTask",
    )
    .await;
    let detail = recs[0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("code -32001 is TaskNotFound") && detail.contains("TaskNotCancelable"),
        "{detail}"
    );
}
