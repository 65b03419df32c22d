//! The kinds of issue 38, rules that implementations in the field broke and
//! no other kind names (timestamps, error codes against their reason,
//! streams left open), each provoked through the running proxy with its
//! legal look-alike.

use crate::support::a2a::*;
use crate::support::scenes::*;
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
        &stamped(
            "t-ok",
            "2026-12-01T10:00:00Z",
            "2026-12-01T10:00:00.123456Z",
        ),
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
        bare_task(
            "t-2",
            "c",
            "TASK_STATE_WORKING",
            Some("2026-12-01T10:00:00"),
        ),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["invalid_timestamp"; 2], "{recs:#?}");
    assert_eq!(recs[0]["task_id"], "t-1");
    assert_eq!(recs[0]["event_index"], 1);
    assert_eq!(recs[0]["method"], "SendStreamingMessage");
    assert!(recs[0]["evidence"].as_str().unwrap().contains("+02:00"));
    assert_eq!(recs[1]["task_id"], "t-2");
    assert_eq!(recs[1]["method"], "GetTask");
    for r in &recs {
        check_fields(r);
        assert_eq!(r["severity"], "warning");
        assert!(r["detail"].as_str().unwrap().contains("ending in Z"), "{r}");
        assert_eq!(
            r["rule"],
            json!({"spec": "1.0.1 §5.6.1", "tck": ["DM-SERIAL-003"]}),
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
        exchange(
            &up,
            &p,
            ask(id, method, "t-ok"),
            Reply::json(200, &err(id, code, reason)),
        )
        .await;
    }
    up.push(Reply::json(
        200,
        &err(5, -32001, Some("TASK_NOT_CANCELABLE")),
    ));
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

/// A held SSE answer: `frames` (then `extra` raw chunks) at once, the end
/// only once its hold is released.
fn held(frames_: Vec<String>, extra: &[&str]) -> (Reply, crate::support::Hold) {
    let mut r = Reply::sse(&frames_);
    r.chunks
        .extend(extra.iter().map(|c| bytes::Bytes::from(c.to_string())));
    let hold = crate::support::Hold::after(r.chunks.len());
    r.hold = Some(hold.clone());
    (r, hold)
}

/// A stream still open `close_wait` (5 s) after its task's terminal state
/// (1.0 §3.1.2 "MUST close"), with a keep-alive comment after it, and a
/// stream still open after its one Message ("then close immediately"):
/// each reported once, while still open, by the analysis thread's tick.
/// Look-alikes: a stream closed 10 ms after its terminal event, one whose
/// caller hung up first, one still working (nothing ended it yet).
#[tokio::test]
async fn stream_not_closed() {
    let (up, p) = setup("").await;
    let ms = std::time::Duration::from_millis;
    let done = |t: &str, id| {
        frames(
            id,
            &[
                task(t, "c", "TASK_STATE_WORKING"),
                status(t, "c", "TASK_STATE_COMPLETED"),
            ],
        )
    };
    // Look-alike: closed 10 ms after its terminal event.
    let (reply, ok_hold) = held(done("t-ok", 1), &[]);
    up.push(reply);
    let (tcp_ok, _) = p
        .post_until("/", V1, &stream_req(1), "TASK_STATE_COMPLETED")
        .await;
    p.clock.advance(ms(10));
    ok_hold.release.notify_one();
    // Look-alike: the caller hangs up first.
    let (reply, gone_hold) = held(done("t-gone", 2), &[]);
    up.push(reply);
    let (tcp, _) = p
        .post_until("/", V1, &stream_req(2), "TASK_STATE_COMPLETED")
        .await;
    drop(tcp);
    gone_hold.dropped.notified().await;
    // Look-alike: a task still working, its stream open.
    let (reply, work_hold) = held(frames(3, &[task("t-work", "c", "TASK_STATE_WORKING")]), &[]);
    up.push(reply);
    let (tcp_work, _) = p
        .post_until("/", V1, &stream_req(3), "TASK_STATE_WORKING")
        .await;
    // Provoked: completed, then only a keep-alive comment; a lone Message.
    let (reply, open_hold) = held(done("t-1", 4), &[": keep-alive\n\n"]);
    up.push(reply);
    let (_tcp_open, _) = p.post_until("/", V1, &stream_req(4), "keep-alive").await;
    let (reply, msg_hold) = held(frames(5, &[message("c-m")]), &[]);
    up.push(reply);
    let (_tcp_msg, _) = p.post_until("/", V1, &stream_req(5), "hello").await;
    drop(tcp_ok);
    // Everything so far judged, nothing reported yet.
    assert!(settle(&up, &p).await.is_empty());
    p.clock.advance(ms(5_500));
    let recs = p.wait_kind("stream_not_closed", 2).await;
    let mut by_task: Vec<(Option<&str>, &str)> = recs
        .iter()
        .map(|r| (r["task_id"].as_str(), r["detail"].as_str().unwrap_or("")))
        .collect();
    by_task.sort();
    assert_eq!(by_task.len(), 2, "{recs:#?}");
    assert_eq!(by_task[0].0, None, "the Message stream names no task");
    assert!(by_task[0].1.contains("its one Message"), "{}", by_task[0].1);
    assert_eq!(by_task[1].0, Some("t-1"));
    assert!(
        by_task[1].1.contains("reached completed"),
        "{}",
        by_task[1].1
    );
    // Once per stream: more ticks add nothing; the streams' ends write no more.
    p.clock.advance(ms(6_000));
    drop(tcp_work);
    work_hold.dropped.notified().await;
    for h in [&open_hold, &msg_hold] {
        h.release.notify_one();
    }
    let rest = settle(&up, &p).await;
    let all = p.records();
    let not_closed: Vec<_> = all
        .iter()
        .filter(|r| r["kind"] == "stream_not_closed")
        .collect();
    assert_eq!(not_closed.len(), 2, "{all:#?}");
    for r in &not_closed {
        check_fields(r);
        assert_eq!(r["severity"], "warning");
        assert_eq!(r["method"], "SendStreamingMessage");
        assert_eq!(r["occurrences"], 1);
    }
    assert!(
        rest.iter().all(|r| r["kind"] == "stream_not_closed"),
        "no other finding: {rest:#?}"
    );
}

/// A 1.0 subscribe stream open while another exchange (a cancel answered
/// CANCELED) showed its task terminal, still silent `close_wait` later
/// (§3.1.6: the stream MUST terminate when the task reaches a terminal
/// state; §3.5.2: every stream receives the same events). Look-alike: a
/// subscribe stream that carries the terminal state a GetTask showed, and
/// ends with the task.
#[tokio::test]
async fn subscriber_not_notified() {
    let (up, p) = setup("").await;
    let subscribe = |id: i64, t: &str| request(json!(id), "SubscribeToTask", json!({"id": t}));
    // Look-alike: the subscriber hears the completion and the stream ends.
    let mut reply = Reply::sse(&frames(
        1,
        &[
            task("t-ok", "c", "TASK_STATE_WORKING"),
            status("t-ok", "c", "TASK_STATE_COMPLETED"),
        ],
    ));
    let ok_hold = crate::support::Hold::after(1);
    reply.hold = Some(ok_hold.clone());
    up.push(reply);
    let (tcp_ok, _) = p
        .post_until("/", V1, &subscribe(1, "t-ok"), "TASK_STATE_WORKING")
        .await;
    get_task(
        &up,
        &p,
        2,
        "t-ok",
        bare_task("t-ok", "c", "TASK_STATE_COMPLETED", None),
    )
    .await;
    ok_hold.release.notify_one();
    // Provoked: canceled on another exchange, the subscriber never told.
    let (reply, hold) = held(frames(3, &[task("t-1", "c", "TASK_STATE_WORKING")]), &[]);
    up.push(reply);
    let (tcp, _) = p
        .post_until("/", V1, &subscribe(3, "t-1"), "TASK_STATE_WORKING")
        .await;
    exchange(
        &up,
        &p,
        request(json!(4), "CancelTask", json!({"id": "t-1"})),
        Reply::json(
            200,
            &rpc(json!(4), bare_task("t-1", "c", "TASK_STATE_CANCELED", None)),
        ),
    )
    .await;
    assert!(
        settle(&up, &p).await.is_empty(),
        "nothing before close_wait"
    );
    drop(tcp_ok);
    p.clock.advance(std::time::Duration::from_millis(5_500));
    let recs = p.wait_kind("subscriber_not_notified", 1).await;
    assert_eq!(recs.len(), 1, "{recs:#?}");
    let r = &recs[0];
    check_fields(r);
    assert_eq!(r["task_id"], "t-1");
    assert_eq!(r["method"], "SubscribeToTask");
    assert_eq!(r["severity"], "warning");
    assert!(r["detail"].as_str().unwrap().contains("canceled"), "{r}");
    // The caller hangs up; nothing else was found.
    drop(tcp);
    hold.dropped.notified().await;
    let all = p.records();
    let others: Vec<_> = all
        .iter()
        .filter(|r| r["kind"] != "subscriber_not_notified" && r["kind"] != "malformed_event")
        .collect();
    assert!(others.is_empty(), "{others:#?}");
}

/// A look-alike of `subscriber_not_notified`: the subscribe stream had a
/// frame that was not read (over `max_event_bytes`), which may have been
/// the terminal state itself; its silence is no evidence, so nothing is
/// reported however long it stays open.
#[tokio::test]
async fn a_subscriber_with_an_unread_frame_is_not_accused() {
    let (up, p) = setup("[analysis]\nmax_event_bytes = \"1KiB\"\n").await;
    let big = rpc(
        json!(1),
        json!({"statusUpdate": {"taskId": "t-g", "contextId": "c",
            "status": {"state": "TASK_STATE_CANCELED"}, "metadata": {"pad": "x".repeat(4096)}}}),
    );
    let mut events = frames(1, &[task("t-g", "c", "TASK_STATE_WORKING")]);
    events.push(big);
    let (reply, hold) = held(events, &[]);
    up.push(reply);
    let (tcp, _) = p
        .post_until(
            "/",
            V1,
            &request(json!(1), "SubscribeToTask", json!({"id": "t-g"})),
            "TASK_STATE_CANCELED",
        )
        .await;
    exchange(
        &up,
        &p,
        request(json!(2), "CancelTask", json!({"id": "t-g"})),
        Reply::json(
            200,
            &rpc(json!(2), bare_task("t-g", "c", "TASK_STATE_CANCELED", None)),
        ),
    )
    .await;
    // The control: a subscriber on another task, canceled elsewhere too,
    // every frame read: its finding shows that judging ran past close_wait.
    let (reply, control) = held(frames(3, &[task("t-h", "c", "TASK_STATE_WORKING")]), &[]);
    up.push(reply);
    let (tcp_h, _) = p
        .post_until(
            "/",
            V1,
            &request(json!(3), "SubscribeToTask", json!({"id": "t-h"})),
            "TASK_STATE_WORKING",
        )
        .await;
    exchange(
        &up,
        &p,
        request(json!(4), "CancelTask", json!({"id": "t-h"})),
        Reply::json(
            200,
            &rpc(json!(4), bare_task("t-h", "c", "TASK_STATE_CANCELED", None)),
        ),
    )
    .await;
    // Both cancels judged before the clock moves: a terminal state judged
    // after the advance would be stamped at the advanced time.
    assert!(
        settle(&up, &p)
            .await
            .iter()
            .all(|r| r["kind"] != "subscriber_not_notified"),
        "nothing before close_wait"
    );
    p.clock.advance(std::time::Duration::from_millis(5_500));
    let recs = p.wait_kind("subscriber_not_notified", 1).await;
    let accused: Vec<_> = recs.iter().map(|r| r["task_id"].clone()).collect();
    assert_eq!(accused, ["t-h"], "{recs:#?}");
    drop(tcp_h);
    control.dropped.notified().await;
    drop(tcp);
    hold.dropped.notified().await;
}
