//! Every catalogue kind provoked through the running proxy, with a legal
//! look-alike beside it that must stay silent; the caller's bytes always
//! equal the upstream's.

use crate::support::a2a::*;
use crate::support::proxied::read_until;
use crate::support::scenes::*;
use crate::support::{Hold, Proxied, Reply};
use serde_json::json;

#[tokio::test]
async fn terminal_exit_on_a_stream() {
    let (up, p) = setup("").await;
    // Look-alike: a task that fails legally (working then failed) is silent.
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-ok", "c", "TASK_STATE_WORKING"),
            status("t-ok", "c", "TASK_STATE_FAILED"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        2,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
            status("t-1", "c", "TASK_STATE_FAILED"),
        ],
    )
    .await;
    let recs = settle_expecting(
        &up,
        &p,
        &[expect("terminal_exit", "error", Some("t-1"), Some(2))],
        "SendStreamingMessage",
    )
    .await;
    assert!(recs[0]["evidence"]
        .as_str()
        .unwrap()
        .contains("TASK_STATE_FAILED"));
    assert_eq!(recs[0]["context_id"], "c");
}

#[tokio::test]
async fn terminal_exit_across_requests() {
    let (up, p) = setup("").await;
    let done = |t: &str, id| {
        frames(
            id,
            &[
                task(t, "c", "TASK_STATE_WORKING"),
                with_ts(
                    status(t, "c", "TASK_STATE_COMPLETED"),
                    "2026-11-29T10:00:10Z",
                ),
            ],
        )
    };
    // Look-alikes: GetTask repeating the terminal state; a stale status
    // stamped before the completion.
    exchange(&up, &p, stream_req(1), Reply::sse(&done("t-same", 1))).await;
    get_task(
        &up,
        &p,
        2,
        "t-same",
        bare_task("t-same", "c", "TASK_STATE_COMPLETED", None),
    )
    .await;
    exchange(&up, &p, stream_req(3), Reply::sse(&done("t-stale", 3))).await;
    get_task(
        &up,
        &p,
        4,
        "t-stale",
        bare_task(
            "t-stale",
            "c",
            "TASK_STATE_WORKING",
            Some("2026-11-29T10:00:05Z"),
        ),
    )
    .await;
    // Provoked: completed on a stream, then GetTask says working.
    exchange(&up, &p, stream_req(5), Reply::sse(&done("t-2", 5))).await;
    get_task(
        &up,
        &p,
        6,
        "t-2",
        bare_task("t-2", "c", "TASK_STATE_WORKING", None),
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[expect("terminal_exit", "error", Some("t-2"), None)],
        "GetTask",
    )
    .await;
}

#[tokio::test]
async fn unspecified_state() {
    let (up, p) = setup("").await;
    // Look-alike: the words in a message part are not a state.
    let mut m = status("t-ok", "c", "TASK_STATE_INPUT_REQUIRED");
    m["statusUpdate"]["status"]["message"] = json!({"role": "ROLE_AGENT", "messageId": "q", "parts": [{"text": "TASK_STATE_UNSPECIFIED?"}]});
    exchange(
        &up,
        &p,
        stream_req(1),
        Reply::sse(&frames(1, &[task("t-ok", "c", "TASK_STATE_SUBMITTED"), m])),
    )
    .await;
    send_stream(
        &up,
        &p,
        2,
        &[
            task("t-1", "c", "TASK_STATE_SUBMITTED"),
            status("t-1", "c", "TASK_STATE_UNSPECIFIED"),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[expect("unspecified_state", "error", Some("t-1"), Some(1))],
        "SendStreamingMessage",
    )
    .await;
}

#[tokio::test]
async fn unknown_state() {
    let (up, p) = setup("").await;
    // Look-alike: spellings seen in the wild are known states.
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-ok", "c", "task_state_working"),
            status("t-ok", "c", "TASK_STATE_CANCELLED"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        2,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            status("t-1", "c", "TASK_STATE_PAUSED"),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    let recs = settle_expecting(
        &up,
        &p,
        &[expect("unknown_state", "error", Some("t-1"), Some(1))],
        "SendStreamingMessage",
    )
    .await;
    assert!(recs[0]["evidence"]
        .as_str()
        .unwrap()
        .contains("TASK_STATE_PAUSED"));
}

#[tokio::test]
async fn task_id_mismatch() {
    let (up, p) = setup("").await;
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-ok", "c", "TASK_STATE_WORKING"),
            artifact("t-ok", "c", "a1", false, true),
            artifact("t-ok", "c", "a2", false, true),
            status("t-ok", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        2,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            status("t-other", "c", "TASK_STATE_WORKING"),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    // The record names the stream's task; the detail names the intruder.
    let recs = settle_expecting(
        &up,
        &p,
        &[expect("task_id_mismatch", "error", Some("t-1"), Some(1))],
        "SendStreamingMessage",
    )
    .await;
    assert!(recs[0]["detail"].as_str().unwrap().contains("t-other"));
}

#[tokio::test]
async fn context_id_mismatch() {
    let (up, p) = setup("").await;
    // Look-alike: an update that omits contextId changes nothing.
    let mut no_ctx = status("t-ok", "c", "TASK_STATE_WORKING");
    no_ctx["statusUpdate"]
        .as_object_mut()
        .unwrap()
        .remove("contextId");
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-ok", "c", "TASK_STATE_SUBMITTED"),
            no_ctx,
            status("t-ok", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        2,
        &[
            task("t-1", "c1", "TASK_STATE_SUBMITTED"),
            status("t-1", "c2", "TASK_STATE_WORKING"),
            status("t-1", "c1", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    // c1 → c2, then back to c1: two changes on one exchange, one record.
    let recs = settle_expecting(
        &up,
        &p,
        &[expect(
            "context_id_mismatch",
            "warning",
            Some("t-1"),
            Some(1),
        )],
        "SendStreamingMessage",
    )
    .await;
    assert_eq!(recs[0]["occurrences"], 2, "{:#?}", recs[0]);
}

/// Across exchanges: a GetTask answer that puts a task the proxy saw in
/// one context into another.
#[tokio::test]
async fn context_id_mismatch_across_exchanges() {
    let (up, p) = setup("").await;
    for t in ["t-ok", "t-1"] {
        send_stream(
            &up,
            &p,
            1,
            &[
                task(t, "c1", "TASK_STATE_WORKING"),
                status(t, "c1", "TASK_STATE_COMPLETED"),
            ],
        )
        .await;
    }
    // Look-alike: the same context again.
    let answer = |t, ctx| bare_task(t, ctx, "TASK_STATE_COMPLETED", None);
    get_task(&up, &p, 2, "t-ok", answer("t-ok", "c1")).await;
    get_task(&up, &p, 3, "t-1", answer("t-1", "c2")).await;
    settle_expecting(
        &up,
        &p,
        &[expect("context_id_mismatch", "warning", Some("t-1"), None)],
        "GetTask",
    )
    .await;
}

#[tokio::test]
async fn abandoned_artifact_on_completed_is_an_error_and_on_failed_a_warning() {
    let (up, p) = setup("").await;
    // Look-alikes: every artifact closed with lastChunk; a subscribe
    // stream replaying the end without the artifact's frames.
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-ok", "c", "TASK_STATE_WORKING"),
            artifact("t-ok", "c", "a1", false, false),
            artifact("t-ok", "c", "a1", true, true),
            status("t-ok", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    let sub = frames(
        2,
        &[
            task("t-sub", "c", "TASK_STATE_WORKING"),
            artifact("t-sub", "c", "a1", true, false),
            status("t-sub", "c", "TASK_STATE_COMPLETED"),
        ],
    );
    exchange(
        &up,
        &p,
        request(json!(2), "SubscribeToTask", json!({"id": "t-sub"})),
        Reply::sse(&sub),
    )
    .await;
    send_stream(
        &up,
        &p,
        3,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            artifact("t-1", "c", "a1", false, false),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        4,
        &[
            task("t-2", "c", "TASK_STATE_WORKING"),
            artifact("t-2", "c", "a1", false, false),
            status("t-2", "c", "TASK_STATE_FAILED"),
        ],
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[
            expect("abandoned_artifact", "error", Some("t-1"), Some(2)),
            expect("abandoned_artifact", "warning", Some("t-2"), Some(2)),
        ],
        "SendStreamingMessage",
    )
    .await;
}

#[tokio::test]
async fn append_to_unknown_artifact() {
    let (up, p) = setup("").await;
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-ok", "c", "TASK_STATE_WORKING"),
            artifact("t-ok", "c", "a1", false, false),
            artifact("t-ok", "c", "a1", true, true),
            status("t-ok", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        2,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            artifact("t-1", "c", "a9", true, true),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[expect(
            "append_to_unknown_artifact",
            "warning",
            Some("t-1"),
            Some(1),
        )],
        "SendStreamingMessage",
    )
    .await;
}

#[tokio::test]
async fn event_after_terminal() {
    let (up, p) = setup("").await;
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-ok", "c", "TASK_STATE_WORKING"),
            artifact("t-ok", "c", "a1", false, true),
            status("t-ok", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        2,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
            artifact("t-1", "c", "a1", false, true),
        ],
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[expect(
            "event_after_terminal",
            "error",
            Some("t-1"),
            Some(2),
        )],
        "SendStreamingMessage",
    )
    .await;
}

#[tokio::test]
async fn stream_start() {
    let (up, p) = setup("").await;
    // Look-alike: a streamed send answered by exactly one Message.
    exchange(
        &up,
        &p,
        stream_req(1),
        Reply::sse(&frames(1, &[message("c")])),
    )
    .await;
    send_stream(
        &up,
        &p,
        2,
        &[
            status("t-1", "c", "TASK_STATE_WORKING"),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[expect("stream_start", "error", Some("t-1"), Some(0))],
        "SendStreamingMessage",
    )
    .await;
}

#[tokio::test]
async fn stream_start_severity_can_be_lowered() {
    let (up, p) = setup("[severity]\nstream_start = \"warning\"\n").await;
    send_stream(
        &up,
        &p,
        2,
        &[
            status("t-1", "c", "TASK_STATE_WORKING"),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[expect("stream_start", "warning", Some("t-1"), Some(0))],
        "SendStreamingMessage",
    )
    .await;
}

#[tokio::test]
async fn message_not_alone() {
    let (up, p) = setup("").await;
    // Look-alike: a status message carrying the agent's question.
    let mut q = status("t-ok", "c", "TASK_STATE_INPUT_REQUIRED");
    q["statusUpdate"]["status"]["message"] = message("c")["message"].clone();
    exchange(
        &up,
        &p,
        stream_req(1),
        Reply::sse(&frames(1, &[task("t-ok", "c", "TASK_STATE_WORKING"), q])),
    )
    .await;
    let bad = frames(2, &[message("c"), status("t-1", "c", "TASK_STATE_WORKING")]);
    exchange(&up, &p, stream_req(2), Reply::sse(&bad)).await;
    settle_expecting(
        &up,
        &p,
        &[expect("message_not_alone", "error", Some("t-1"), Some(1))],
        "SendStreamingMessage",
    )
    .await;
}

#[tokio::test]
async fn jsonrpc_id_mismatch() {
    let (up, p) = setup("").await;
    // Look-alike: a string id echoed exactly.
    let ok: Vec<String> = [
        task("t-ok", "c", "TASK_STATE_WORKING"),
        status("t-ok", "c", "TASK_STATE_COMPLETED"),
    ]
    .iter()
    .map(|e| rpc(json!("req-α"), e.clone()))
    .collect();
    exchange(
        &up,
        &p,
        request(json!("req-α"), "SendStreamingMessage", new_message()),
        Reply::sse(&ok),
    )
    .await;
    let bad = vec![
        rpc(json!(2), task("t-1", "c", "TASK_STATE_WORKING")),
        rpc(json!(3), status("t-1", "c", "TASK_STATE_COMPLETED")),
    ];
    exchange(&up, &p, stream_req(2), Reply::sse(&bad)).await;
    settle_expecting(
        &up,
        &p,
        &[expect("jsonrpc_id_mismatch", "error", Some("t-1"), Some(1))],
        "SendStreamingMessage",
    )
    .await;
}

#[tokio::test]
async fn malformed_event() {
    let (up, p) = setup("").await;
    // Look-alike: pings, CRLF line ends, unknown fields and an event name.
    let mut ok = Reply::sse(&[]);
    ok.chunks = vec![
        ": ping\r\n\r\n".into(),
        format!("event: update\r\ndata: {}\r\n\r\n", rpc(json!(1), json!({"task": {"id": "t-ok", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}, "x-vendor": 1}}))).into(),
        format!("data: {}\n\n", rpc(json!(1), status("t-ok", "c", "TASK_STATE_COMPLETED"))).into(),
    ];
    exchange(&up, &p, stream_req(1), ok).await;
    let bad = vec![
        rpc(json!(2), task("t-1", "c", "TASK_STATE_WORKING")),
        r#"{"jsonrpc":"2.0","id":2,"result":{"weird":true}}"#.to_string(),
        rpc(json!(2), status("t-1", "c", "TASK_STATE_COMPLETED")),
    ];
    exchange(&up, &p, stream_req(2), Reply::sse(&bad)).await;
    let recs = settle_expecting(
        &up,
        &p,
        &[expect("malformed_event", "error", Some("t-1"), Some(1))],
        "SendStreamingMessage",
    )
    .await;
    assert!(recs[0]["evidence"].as_str().unwrap().contains("weird"));
}

#[tokio::test]
async fn blocking_returned_active() {
    let (up, p) = setup("").await;
    // Look-alikes: returnImmediately asked for; a blocking send that stops
    // at input-required.
    let mut imm = new_message();
    imm["configuration"] = json!({"returnImmediately": true});
    exchange(
        &up,
        &p,
        request(json!(1), "SendMessage", imm),
        Reply::json(200, &rpc(json!(1), task("t-ok", "c", "TASK_STATE_WORKING"))),
    )
    .await;
    exchange(
        &up,
        &p,
        request(json!(2), "SendMessage", new_message()),
        Reply::json(
            200,
            &rpc(json!(2), task("t-ok2", "c", "TASK_STATE_INPUT_REQUIRED")),
        ),
    )
    .await;
    exchange(
        &up,
        &p,
        request(json!(3), "SendMessage", new_message()),
        Reply::json(200, &rpc(json!(3), task("t-1", "c", "TASK_STATE_WORKING"))),
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[expect(
            "blocking_returned_active",
            "error",
            Some("t-1"),
            None,
        )],
        "SendMessage",
    )
    .await;
}

#[tokio::test]
async fn terminal_task_accepted() {
    let (up, p) = setup("").await;
    let done = |t: &str, id| {
        frames(
            id,
            &[
                task(t, "c", "TASK_STATE_WORKING"),
                status(t, "c", "TASK_STATE_COMPLETED"),
            ],
        )
    };
    // Look-alikes: the correct refusals, and cancel racing completion.
    exchange(&up, &p, stream_req(1), Reply::sse(&done("t-ok", 1))).await;
    let refuse = |id: i64, code: i64| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "no"}}).to_string()
    };
    exchange(
        &up,
        &p,
        request(json!(2), "SendMessage", follow_up("t-ok", "c")),
        Reply::json(200, &refuse(2, -32004)),
    )
    .await;
    exchange(
        &up,
        &p,
        request(json!(3), "CancelTask", json!({"id": "t-ok"})),
        Reply::json(200, &refuse(3, -32002)),
    )
    .await;
    get_task(
        &up,
        &p,
        4,
        "t-ok",
        bare_task("t-ok", "c", "TASK_STATE_COMPLETED", None),
    )
    .await;
    // Provoked: a message to the completed task accepted.
    exchange(&up, &p, stream_req(5), Reply::sse(&done("t-1", 5))).await;
    exchange(
        &up,
        &p,
        request(json!(6), "SendMessage", follow_up("t-1", "c")),
        Reply::json(
            200,
            &rpc(json!(6), task("t-1", "c", "TASK_STATE_COMPLETED")),
        ),
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[expect("terminal_task_accepted", "error", Some("t-1"), None)],
        "SendMessage",
    )
    .await;
}

/// The causal order through the running proxy: a cancel that reached the
/// upstream while the stream that completes its task was still held open
/// may be answered with the completed task; the same answer to a cancel
/// sent after the stream passed is a terminal task accepting work. (A
/// repeated cancel of a task already canceled, answered canceled, is legal
/// in 1.0: §3.3.1, `trust::a_repeated_cancel_is_idempotent_in_1_0`.)
#[tokio::test]
async fn terminal_task_accepted_only_after_the_terminal_frame_passed() {
    let (up, p) = setup("").await;
    let answer = |id: i64| {
        Reply::json(
            200,
            &rpc(json!(id), task("t-r", "c", "TASK_STATE_COMPLETED")),
        )
    };
    let cancel_req = |id: i64| request(json!(id), "CancelTask", json!({"id": "t-r"}));
    let call = |req: String| {
        let listen = p.listen;
        tokio::spawn(async move { crate::support::request_to(listen, "POST", "/", V1, &req).await })
    };
    // The stream: its first frame (working) passes, the completed one is
    // held back.
    let mut stream = Reply::sse(&frames(
        1,
        &[
            task("t-r", "c", "TASK_STATE_WORKING"),
            status("t-r", "c", "TASK_STATE_COMPLETED"),
        ],
    ));
    let stream_hold = Hold::after(1);
    stream.hold = Some(stream_hold.clone());
    let stream_want = stream.bytes();
    up.push(stream);
    let streaming = call(stream_req(1));
    up.wait_taken().await;
    // Look-alike: the cancel reaches the upstream (it began at the proxy)
    // before the completed frame passes; its answer waits for it.
    let mut racing = answer(2);
    let racing_hold = Hold::after(0);
    racing.hold = Some(racing_hold.clone());
    let racing_want = racing.bytes();
    up.push(racing);
    let cancelling = call(cancel_req(2));
    up.wait_taken().await;
    stream_hold.release.notify_one();
    let (_, _, got) = streaming.await.expect("stream caller");
    assert_eq!(got, stream_want);
    racing_hold.release.notify_one();
    let (_, _, got) = cancelling.await.expect("cancel caller");
    assert_eq!(got, racing_want);
    // Provoked: the same answer to a cancel sent once the stream had ended.
    exchange(&up, &p, cancel_req(3), answer(3)).await;
    settle_expecting(
        &up,
        &p,
        &[expect("terminal_task_accepted", "error", Some("t-r"), None)],
        "CancelTask",
    )
    .await;
}

#[tokio::test]
async fn stream_truncated() {
    let (up, p) = setup("").await;
    // Look-alikes: a stream ending at input-required; a 0.3 stream ending
    // with final:true at working.
    exchange(
        &up,
        &p,
        stream_req(1),
        Reply::sse(&frames(
            1,
            &[
                task("t-ok", "c", "TASK_STATE_WORKING"),
                status("t-ok", "c", "TASK_STATE_INPUT_REQUIRED"),
            ],
        )),
    )
    .await;
    let v03 = vec![
        json!({"jsonrpc": "2.0", "id": 2, "result": {"kind": "task", "id": "t-ok3", "contextId": "c", "status": {"state": "working"}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {"kind": "status-update", "taskId": "t-ok3", "contextId": "c", "status": {"state": "working"}, "final": true}}).to_string(),
    ];
    up.push(Reply::sse(&v03));
    let body03 = json!({"jsonrpc": "2.0", "id": 2, "method": "message/stream", "params": {"message": {"kind": "message", "role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "hi"}]}}}).to_string();
    let (_, got) = p.send("POST", "/", &[], &body03).await;
    assert!(String::from_utf8_lossy(&got).contains("\"final\":true"));
    // Provoked: the upstream ends the stream while the task works.
    exchange(
        &up,
        &p,
        stream_req(3),
        Reply::sse(&frames(
            3,
            &[
                task("t-1", "c", "TASK_STATE_SUBMITTED"),
                status("t-1", "c", "TASK_STATE_WORKING"),
            ],
        )),
    )
    .await;
    settle_expecting(
        &up,
        &p,
        &[expect("stream_truncated", "warning", Some("t-1"), None)],
        "SendStreamingMessage",
    )
    .await;
}

/// Stalls need evidence. Look-alikes, silent: a task whose stream closed at
/// input-required and that a poll then shows working (unstamped); a task
/// whose caller hung up while it was working (the conformance kit's case).
/// Provoked: a stream held open, silent in working past the limit; and a
/// poll past the limit showing the very status (same timestamp) seen when
/// the task entered working. Each once per state entry.
#[tokio::test]
async fn stalled_task_needs_an_open_stream_or_an_unchanged_status() {
    let (up, p) = setup("[stall]\nworking = \"1s\"\n").await;
    exchange(
        &up,
        &p,
        stream_req(1),
        Reply::sse(&frames(
            1,
            &[
                task("t-closed", "c", "TASK_STATE_WORKING"),
                status("t-closed", "c", "TASK_STATE_INPUT_REQUIRED"),
            ],
        )),
    )
    .await;
    get_task(
        &up,
        &p,
        2,
        "t-closed",
        bare_task("t-closed", "c", "TASK_STATE_WORKING", None),
    )
    .await;
    // The caller hangs up on a working task (its stream goes on upstream).
    let mut left = Reply::sse(&frames(3, &[task("t-left", "c", "TASK_STATE_WORKING")]));
    let left_hold = Hold::after(1);
    left.hold = Some(left_hold.clone());
    up.push(left);
    let (tcp, _) = p
        .post_until("/", V1, &stream_req(3), "TASK_STATE_WORKING")
        .await;
    drop(tcp);
    // Provoked (open stream): held open after its working snapshot.
    let mut open = Reply::sse(&frames(
        4,
        &[
            task("t-open", "c", "TASK_STATE_WORKING"),
            status("t-open", "c", "TASK_STATE_COMPLETED"),
        ],
    ));
    let open_hold = Hold::after(1);
    open.hold = Some(open_hold.clone());
    up.push(open);
    let snapshots = |m: &str| {
        crate::support::total(m, "a2a_stream_events_total", &[("event", "task")]).unwrap_or(0.0)
    };
    let before = snapshots(&p.metrics().await);
    let (mut streaming, mut got) = p
        .post_until("/", V1, &stream_req(4), "TASK_STATE_WORKING")
        .await;
    // The proxy hands a stream's bytes to judging when the upstream
    // pauses, which may be after the caller has them: the snapshot is
    // judged (counted), so the stream is watched, before the clock moves.
    p.wait_metrics("t-open's snapshot judged", |m| snapshots(m) > before)
        .await;
    // Provoked (unchanged status): stamped when first seen working.
    let ts = "2026-11-29T10:00:00Z";
    get_task(
        &up,
        &p,
        5,
        "t-poll",
        bare_task("t-poll", "c", "TASK_STATE_WORKING", Some(ts)),
    )
    .await;
    p.clock.advance(std::time::Duration::from_millis(2500));
    get_task(
        &up,
        &p,
        6,
        "t-poll",
        bare_task("t-poll", "c", "TASK_STATE_WORKING", Some(ts)),
    )
    .await;
    // The first tick past the limit finds the held stream silent (before
    // the stream goes on: a tick may come after its next frame is judged).
    p.wait_matching("t-open's stall", 1, |r| r["task_id"] == "t-open")
        .await;
    // Two more ticks, another poll: still one record per state entry.
    p.clock.advance(std::time::Duration::from_millis(2100));
    get_task(
        &up,
        &p,
        7,
        "t-poll",
        bare_task("t-poll", "c", "TASK_STATE_WORKING", Some(ts)),
    )
    .await;
    open_hold.release.notify_one();
    left_hold.release.notify_one();
    read_until(&mut streaming, &mut got, "TASK_STATE_COMPLETED").await;
    let mut recs = settle(&up, &p).await;
    // The tick and the poll race on the analysis thread: order by task.
    recs.sort_by_key(|r| r["task_id"].as_str().unwrap_or("").to_owned());
    let stalled: Vec<(&str, Option<&str>)> = recs
        .iter()
        .map(|r| (r["kind"].as_str().unwrap_or("?"), r["task_id"].as_str()))
        .collect();
    assert_eq!(
        stalled,
        [
            ("stalled_task", Some("t-open")),
            ("stalled_task", Some("t-poll"))
        ],
        "{recs:#?}"
    );
    assert!(recs[0]["detail"]
        .as_str()
        .unwrap()
        .contains("open stream has been silent"));
    assert_eq!(recs[1]["method"], "GetTask", "{:#?}", recs[1]);
    assert_eq!(recs[1]["severity"], "warning");
    let m = p.metrics().await;
    assert_eq!(
        crate::support::total(
            &m,
            "a2a_violations_total",
            &[("kind", "stalled_task"), ("severity", "warning")]
        ),
        Some(2.0)
    );
}

/// A kind added to the catalogue without its test here fails this one:
/// each kind names a test of this file, spec_kinds.rs, field_kinds.rs or
/// push_kinds.rs (`async fn
/// <kind>...`).
#[test]
fn every_catalogue_kind_has_its_test_here() {
    let source = [
        include_str!("kinds.rs"),
        include_str!("spec_kinds.rs"),
        include_str!("field_kinds.rs"),
        include_str!("push_kinds.rs"),
    ]
    .concat();
    let missing: Vec<&str> = a2a_tap::findings::Kind::ALL
        .iter()
        .map(|k| k.as_str())
        .filter(|name| !source.contains(&format!("async fn {name}")))
        .collect();
    assert!(missing.is_empty(), "kinds without a live test: {missing:?}");
}
