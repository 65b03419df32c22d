//! The false-alarm classes seen in the field, through the running proxy:
//! each legal look-alike stays silent, and a violation twin in the same
//! odd shape shows that the legal case was judged, not skipped. The
//! caller's bytes always equal the upstream's.

use crate::support::a2a::*;
use crate::support::{tap::Proxy, Proxied, Reply, Upstream};
use serde_json::{json, Value};

async fn setup(extra: &str) -> (Upstream, Proxy) {
    let up = Upstream::start().await;
    let proxy = Proxy::start(up.addr, extra).await;
    (up, proxy)
}

/// One exchange of any method and path; checks the caller got the
/// upstream's bytes.
async fn call(
    up: &Upstream,
    p: &Proxy,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    reply: Reply,
) {
    let want = reply.bytes();
    up.push(reply);
    let (_, got) = p.send(method, path, headers, body).await;
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want),
        "forwarded bytes differ from upstream bytes"
    );
}

/// A streamed send answered by `events`.
async fn send_stream(up: &Upstream, p: &Proxy, id: i64, events: &[Value]) {
    let req = request(json!(id), "SendStreamingMessage", new_message());
    exchange(up, p, req, Reply::sse(&frames(id, events))).await;
}

/// What one record says, for comparing with the expected.
#[derive(Debug, PartialEq)]
struct Seen {
    kind: String,
    severity: String,
    task_id: Option<String>,
    event_index: Option<u64>,
    binding: String,
    version: String,
    method: String,
}

fn seen(
    kind: &str,
    severity: &str,
    task_id: Option<&str>,
    event_index: Option<u64>,
    (binding, version, method): (&str, &str, &str),
) -> Seen {
    Seen {
        kind: kind.into(),
        severity: severity.into(),
        task_id: task_id.map(Into::into),
        event_index,
        binding: binding.into(),
        version: version.into(),
        method: method.into(),
    }
}

/// Waits until every exchange so far is judged; asserts the records are
/// exactly `want`, every contract field there, and the metric counted.
async fn settle_to(up: &Upstream, p: &Proxy, want: &[Seen]) -> Vec<Value> {
    let recs = settle(up, p).await;
    let got: Vec<Seen> = recs
        .iter()
        .map(|r| {
            check_fields(r);
            let text = |f: &str| r[f].as_str().unwrap_or("?").to_owned();
            Seen {
                kind: text("kind"),
                severity: text("severity"),
                task_id: r["task_id"].as_str().map(Into::into),
                event_index: r["event_index"].as_u64(),
                binding: text("binding"),
                version: text("version"),
                method: text("method"),
            }
        })
        .collect();
    assert_eq!(got, want, "{recs:#?}");
    let scrape = p.metrics().await;
    for w in want {
        let mut n = want
            .iter()
            .filter(|x| x.kind == w.kind && x.severity == w.severity)
            .count() as f64;
        if w.kind == "malformed_event" && w.severity == "error" {
            n += 1.0; // the sentinel's
        }
        let labels = [("kind", w.kind.as_str()), ("severity", w.severity.as_str())];
        assert_eq!(
            crate::support::total(&scrape, "a2a_violations_total", &labels),
            Some(n),
            "{labels:?}"
        );
    }
    recs
}

const RPC10: (&str, &str, &str) = ("jsonrpc", "1.0", "SendStreamingMessage");

fn rest_task(id: &str, ctx: &str, state: &str) -> String {
    json!({"id": id, "contextId": ctx, "status": {"state": state}}).to_string()
}

/// Class 1: proto3 JSON leaves out what is at its default. Legal: an empty
/// ListTasks page as `{}` (JSON-RPC) and as `{"pageSize":50}` (REST); a
/// Task with no artifacts or history; artifact updates without `append`;
/// events without `contextId`. Twins in the same shapes: `{}` answering a
/// send; a page without `tasks`' sibling fields holding an unspecified task;
/// a chunk without `lastChunk` left open at completion.
#[tokio::test]
async fn proto3_defaults_are_read_as_defaults() {
    let (up, p) = setup("").await;
    let list = |id: i64| request(json!(id), "ListTasks", json!({}));
    exchange(
        &up,
        &p,
        list(1),
        Reply::json(200, &rpc(json!(1), json!({}))),
    )
    .await;
    call(
        &up,
        &p,
        "GET",
        "/tasks",
        V1,
        "",
        Reply::json(200, r#"{"pageSize":50}"#),
    )
    .await;
    send_stream(
        &up,
        &p,
        3,
        &[
            json!({"task": {"id": "t-ok", "status": {"state": "TASK_STATE_WORKING"}}}),
            json!({"artifactUpdate": {"taskId": "t-ok", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}, "lastChunk": true}}),
            json!({"statusUpdate": {"taskId": "t-ok", "status": {"state": "TASK_STATE_COMPLETED"}}}),
        ],
    )
    .await;
    // Twins.
    let send = request(json!(4), "SendMessage", new_message());
    exchange(&up, &p, send, Reply::json(200, &rpc(json!(4), json!({})))).await;
    let page = json!({"tasks": [{"id": "t-u", "status": {}}]});
    exchange(&up, &p, list(5), Reply::json(200, &rpc(json!(5), page))).await;
    send_stream(
        &up,
        &p,
        6,
        &[
            json!({"task": {"id": "t-open", "status": {"state": "TASK_STATE_WORKING"}}}),
            json!({"artifactUpdate": {"taskId": "t-open", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}),
            json!({"statusUpdate": {"taskId": "t-open", "status": {"state": "TASK_STATE_COMPLETED"}}}),
        ],
    )
    .await;
    let recs = settle_to(
        &up,
        &p,
        &[
            seen(
                "malformed_event",
                "error",
                None,
                None,
                ("jsonrpc", "1.0", "SendMessage"),
            ),
            seen(
                "unspecified_state",
                "error",
                Some("t-u"),
                None,
                ("jsonrpc", "1.0", "ListTasks"),
            ),
            seen(
                "abandoned_artifact",
                "error",
                Some("t-open"),
                Some(2),
                RPC10,
            ),
        ],
    )
    .await;
    assert!(
        recs[0]["detail"]
            .as_str()
            .unwrap()
            .contains("empty ListTasks result (or an empty object)"),
        "{}",
        recs[0]
    );
}

/// Class 2: answers that are not the agent's protocol. Legal: an auth
/// layer's 401 JSON, a gateway's 429, a 0.3 HTTP+JSON error
/// (`{"code":-32001,..}`, as @a2a-js/sdk 0.3 answers), an RFC 9457
/// problem; on a REST path only guessed to be A2A, a body that is no A2A
/// shape at all and one with a state no version defines. Twins: the same
/// 200 body on JSON-RPC (certain A2A); the guessed path's unknown state
/// once the agent card names the path as an HTTP+JSON interface.
#[tokio::test]
async fn non_a2a_answers_and_guessed_paths_are_not_accused() {
    let (up, p) = setup("").await;
    let send = |id: i64| request(json!(id), "SendMessage", new_message());
    exchange(
        &up,
        &p,
        send(1),
        Reply::json(401, r#"{"detail":"Not authenticated"}"#),
    )
    .await;
    exchange(
        &up,
        &p,
        send(2),
        Reply::json(429, r#"{"error":"rate limited","retry_after":3}"#),
    )
    .await;
    call(
        &up,
        &p,
        "GET",
        "/v1/tasks/t-404",
        &[],
        "",
        Reply::json(404, r#"{"code":-32001,"message":"Task not found: t-404"}"#),
    )
    .await;
    let problem = Reply::json(404, r#"{"type":"https://a2a-protocol.org/errors/task-not-found","title":"Task not found","status":404}"#)
        .header("content-type", "application/problem+json");
    call(&up, &p, "GET", "/tasks/t-p", V1, "", problem).await;
    // A path of the agent's own API that looks like an A2A route.
    call(
        &up,
        &p,
        "GET",
        "/api/tasks/42",
        &[],
        "",
        Reply::json(200, r#"{"id":"42","status":"running"}"#),
    )
    .await;
    call(
        &up,
        &p,
        "GET",
        "/rest/tasks/43",
        &[],
        "",
        Reply::json(200, &rest_task("43", "c", "running")),
    )
    .await;
    // Twin on JSON-RPC: the auth layer's body with a 200 is no A2A answer.
    exchange(
        &up,
        &p,
        send(3),
        Reply::json(200, r#"{"detail":"Not authenticated"}"#),
    )
    .await;
    // The card names /rest as the HTTP+JSON interface: now certain.
    let card = json!({"name": "a", "version": "1", "supportedInterfaces": [
        {"url": "http://agent.example/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "http://agent.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}});
    call(
        &up,
        &p,
        "GET",
        "/.well-known/agent-card.json",
        &[],
        "",
        Reply::json(200, &card.to_string()),
    )
    .await;
    call(
        &up,
        &p,
        "GET",
        "/rest/tasks/44",
        &[],
        "",
        Reply::json(200, &rest_task("44", "c", "running")),
    )
    .await;
    // Still guessed: not under the card's interface.
    call(
        &up,
        &p,
        "GET",
        "/api/tasks/45",
        &[],
        "",
        Reply::json(200, &rest_task("45", "c", "running")),
    )
    .await;
    let recs = settle_to(
        &up,
        &p,
        &[
            seen(
                "malformed_event",
                "error",
                None,
                None,
                ("jsonrpc", "1.0", "SendMessage"),
            ),
            seen(
                "unknown_state",
                "error",
                Some("44"),
                None,
                ("rest", "1.0", "GetTask"),
            ),
        ],
    )
    .await;
    assert_eq!(
        recs[1]["request_id"].as_str().map(|s| !s.is_empty()),
        Some(true)
    );
}

/// Class 3: spec 1.0 §11.7, servers "MAY optionally resend a final Task
/// snapshot before closing". Legal: one snapshot repeating the terminal
/// state, on a send stream. Twins: a second such snapshot, and a status
/// update repeating the terminal state.
#[tokio::test]
async fn one_final_task_snapshot_is_legal() {
    let (up, p) = setup("").await;
    let done = |t: &str| {
        vec![
            task(t, "c", "TASK_STATE_WORKING"),
            status(t, "c", "TASK_STATE_COMPLETED"),
            task(t, "c", "TASK_STATE_COMPLETED"),
        ]
    };
    send_stream(&up, &p, 1, &done("t-ok")).await;
    let mut twice = done("t-2");
    twice.push(task("t-2", "c", "TASK_STATE_COMPLETED"));
    send_stream(&up, &p, 2, &twice).await;
    let mut update = done("t-3");
    update[2] = status("t-3", "c", "TASK_STATE_COMPLETED");
    send_stream(&up, &p, 3, &update).await;
    settle_to(
        &up,
        &p,
        &[
            seen("event_after_terminal", "error", Some("t-2"), Some(3), RPC10),
            seen("event_after_terminal", "error", Some("t-3"), Some(2), RPC10),
        ],
    )
    .await;
}

/// Class 4: an event over `analysis.max_event_bytes` is not read: a gap,
/// counted, never evidence. Legal: a huge final chunk with lastChunk:true,
/// a huge terminal status before the end, a huge first snapshot before an
/// append. Twins, the same events small enough to read: the chunk without
/// lastChunk, a working status at the end, a first snapshot without the
/// artifact.
#[tokio::test]
async fn unread_events_are_gaps_not_evidence() {
    let (up, p) = setup("[analysis]\nmax_event_bytes = 4096\n").await;
    let pad = "x".repeat(8192);
    let big_chunk = json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c",
        "artifact": {"artifactId": "a", "parts": [{"text": pad}]}, "lastChunk": true}});
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            big_chunk,
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    let big_end = json!({"statusUpdate": {"taskId": "t-2", "contextId": "c",
        "status": {"state": "TASK_STATE_COMPLETED", "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": pad}]}}}});
    send_stream(
        &up,
        &p,
        2,
        &[task("t-2", "c", "TASK_STATE_WORKING"), big_end],
    )
    .await;
    let big_first = json!({"task": {"id": "t-3", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"},
        "artifacts": [{"artifactId": "a", "parts": [{"text": pad}]}]}});
    send_stream(
        &up,
        &p,
        3,
        &[
            big_first,
            artifact("t-3", "c", "a", true, true),
            status("t-3", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    // Twins.
    send_stream(
        &up,
        &p,
        4,
        &[
            task("t-4", "c", "TASK_STATE_WORKING"),
            artifact("t-4", "c", "a", false, false),
            status("t-4", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        5,
        &[
            task("t-5", "c", "TASK_STATE_WORKING"),
            status("t-5", "c", "TASK_STATE_WORKING"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        6,
        &[
            task("t-6", "c", "TASK_STATE_WORKING"),
            artifact("t-6", "c", "a", true, true),
            status("t-6", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    settle_to(
        &up,
        &p,
        &[
            seen("abandoned_artifact", "error", Some("t-4"), Some(2), RPC10),
            seen("stream_truncated", "warning", Some("t-5"), None, RPC10),
            seen(
                "append_to_unknown_artifact",
                "warning",
                Some("t-6"),
                Some(1),
                RPC10,
            ),
        ],
    )
    .await;
    let m = p.metrics().await;
    assert_eq!(
        crate::support::total(
            &m,
            "a2a_analysis_skipped_total",
            &[("reason", "event_too_large")]
        ),
        Some(3.0)
    );
}

/// Class 6: a rule holds for the versions whose specification states it.
/// Legal in 0.3: `tasks/resubscribe` to a finished task replaying its
/// final state and closing (@a2a-js/sdk 0.3.14 does), and a follow-up
/// stream beginning with a status update (both SDKs' 0.3 lines). Twins in
/// 1.0: `SubscribeToTask` accepted for the finished task, and the same
/// follow-up start.
#[tokio::test]
async fn rules_hold_for_the_versions_that_state_them() {
    let (up, p) = setup("").await;
    let v03 = |id: i64, kind: &str, state: &str, fin: bool| {
        let mut r = json!({"kind": kind, "taskId": "t-03", "contextId": "c", "status": {"state": state}, "final": fin});
        if kind == "task" {
            r = json!({"kind": "task", "id": "t-03", "contextId": "c", "status": {"state": state}});
        }
        rpc(json!(id), r)
    };
    let send03 = |id: i64, task: Option<&str>| {
        let mut msg = json!({"kind": "message", "role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "hi"}]});
        if let Some(t) = task {
            msg["taskId"] = json!(t);
            msg["contextId"] = json!("c");
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "message/stream", "params": {"message": msg}})
            .to_string()
    };
    // 0.3: the task asks for input, a follow-up (status update first)
    // completes it, a resubscribe replays the completed task.
    let first = Reply::sse(&[
        v03(1, "task", "submitted", false),
        v03(1, "status-update", "input-required", true),
    ]);
    pass(&up, &p, "/", &[], &send03(1, None), first).await;
    let follow = Reply::sse(&[
        v03(2, "status-update", "working", false),
        v03(2, "status-update", "completed", true),
    ]);
    pass(&up, &p, "/", &[], &send03(2, Some("t-03")), follow).await;
    let resub =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/resubscribe", "params": {"id": "t-03"}})
            .to_string();
    pass(
        &up,
        &p,
        "/",
        &[],
        &resub,
        Reply::sse(&[v03(3, "task", "completed", false)]),
    )
    .await;
    // 1.0 twins.
    let ask = frames(
        4,
        &[
            task("t-10", "c", "TASK_STATE_SUBMITTED"),
            status("t-10", "c", "TASK_STATE_INPUT_REQUIRED"),
        ],
    );
    exchange(
        &up,
        &p,
        request(json!(4), "SendStreamingMessage", new_message()),
        Reply::sse(&ask),
    )
    .await;
    let done = frames(
        5,
        &[
            status("t-10", "c", "TASK_STATE_WORKING"),
            status("t-10", "c", "TASK_STATE_COMPLETED"),
        ],
    );
    exchange(
        &up,
        &p,
        request(json!(5), "SendStreamingMessage", follow_up("t-10", "c")),
        Reply::sse(&done),
    )
    .await;
    let sub = request(json!(6), "SubscribeToTask", json!({"id": "t-10"}));
    exchange(
        &up,
        &p,
        sub,
        Reply::sse(&frames(6, &[task("t-10", "c", "TASK_STATE_COMPLETED")])),
    )
    .await;
    settle_to(
        &up,
        &p,
        &[
            seen("stream_start", "error", Some("t-10"), Some(0), RPC10),
            seen(
                "terminal_task_accepted",
                "error",
                Some("t-10"),
                Some(0),
                ("jsonrpc", "1.0", "SubscribeToTask"),
            ),
        ],
    )
    .await;
}

/// Class 7: JSON-RPC ids compare as JSON values. Legal: `1.0` and `1e0`
/// answering `1`. Twin: `"1"` answering `1`.
#[tokio::test]
async fn jsonrpc_ids_compare_as_json_values() {
    let (up, p) = setup("").await;
    let req = request(json!(1), "GetTask", json!({"id": "t-1"}));
    let body = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#,
            rest_task("t-1", "c", "TASK_STATE_WORKING")
        )
    };
    for id in ["1.0", "1e0", "1"] {
        exchange(&up, &p, req.clone(), Reply::json(200, &body(id))).await;
    }
    exchange(&up, &p, req, Reply::json(200, &body("\"1\""))).await;
    settle_to(
        &up,
        &p,
        &[seen(
            "jsonrpc_id_mismatch",
            "error",
            Some("t-1"),
            None,
            ("jsonrpc", "1.0", "GetTask"),
        )],
    )
    .await;
}

/// Class 8: findings that were missed. A follow-up naming task T answered
/// about another task (stream and body), a GetTask answered with another
/// task, and a 1.0 streamed send ended with no event. Legal look-alikes:
/// the answers about T, and a stream with its one Message.
#[tokio::test]
async fn answers_about_another_task_and_empty_streams() {
    let (up, p) = setup("").await;
    let follow = |id: i64| request(json!(id), "SendStreamingMessage", follow_up("t-1", "c"));
    exchange(
        &up,
        &p,
        follow(1),
        Reply::sse(&frames(
            1,
            &[
                task("t-1", "c", "TASK_STATE_WORKING"),
                status("t-1", "c", "TASK_STATE_INPUT_REQUIRED"),
            ],
        )),
    )
    .await;
    send_stream(&up, &p, 2, &[message("c")]).await;
    let blocking = |id: i64| request(json!(id), "SendMessage", follow_up("t-1", "c"));
    exchange(
        &up,
        &p,
        blocking(3),
        Reply::json(
            200,
            &rpc(json!(3), task("t-1", "c", "TASK_STATE_INPUT_REQUIRED")),
        ),
    )
    .await;
    // Violations.
    exchange(
        &up,
        &p,
        follow(4),
        Reply::sse(&frames(4, &[task("t-2", "c", "TASK_STATE_WORKING")])),
    )
    .await;
    exchange(
        &up,
        &p,
        blocking(5),
        Reply::json(
            200,
            &rpc(json!(5), task("t-3", "c", "TASK_STATE_COMPLETED")),
        ),
    )
    .await;
    let get = request(json!(6), "GetTask", json!({"id": "t-1"}));
    exchange(
        &up,
        &p,
        get,
        Reply::json(
            200,
            &rpc(
                json!(6),
                json!(
                    serde_json::from_str::<Value>(&rest_task("t-4", "c", "TASK_STATE_WORKING"))
                        .unwrap()
                ),
            ),
        ),
    )
    .await;
    exchange(
        &up,
        &p,
        request(json!(7), "SendStreamingMessage", new_message()),
        Reply::sse(&[]),
    )
    .await;
    settle_to(
        &up,
        &p,
        &[
            seen("task_id_mismatch", "error", Some("t-1"), Some(0), RPC10),
            seen(
                "task_id_mismatch",
                "error",
                Some("t-1"),
                None,
                ("jsonrpc", "1.0", "SendMessage"),
            ),
            seen(
                "task_id_mismatch",
                "error",
                Some("t-1"),
                None,
                ("jsonrpc", "1.0", "GetTask"),
            ),
            seen("stream_start", "error", None, None, RPC10),
        ],
    )
    .await;
}

const RPC03: &str = "/";

/// A 0.3 JSON-RPC request body (no `A2A-Version`: 0.3).
fn request03(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// An older draft's Task (`sessionId`, `{"type":"text"}` parts, no
/// `kind`) carrying a `message` member, as agents outside the two SDKs
/// answer.
fn draft_task(id: &str, state: &str) -> Value {
    json!({"id": id, "sessionId": "s-1", "status": {"state": state},
        "message": {"role": "agent", "parts": [{"type": "text", "text": "done"}]},
        "artifacts": [{"parts": [{"type": "text", "text": "x"}]}]})
}

/// Issue 35, class 1: a foreign object is read for what it is, not as a
/// 1.0 StreamResponse wrapper because one of its members is named like
/// one. Legal: a 0.3 `tasks/get` answered with an older draft's Task that
/// carries a `message` (no `version_mismatch`, no `malformed_event`), and
/// the same task's terminal state is registered from it. Twins in the same
/// shape: a `tasks/cancel` of that completed task answered with it
/// `canceled` (`terminal_task_accepted`, and the flip `terminal_exit`);
/// and an object whose wrapper key sits beside members no shape has,
/// whose `malformed_event` detail names what was seen.
#[tokio::test]
async fn foreign_objects_are_not_read_as_wrappers() {
    let (up, p) = setup("").await;
    let get = request03(json!(1), "tasks/get", json!({"id": "t-old"}));
    let done = rpc(json!(1), draft_task("t-old", "completed"));
    pass(&up, &p, RPC03, &[], &get, Reply::json(200, &done)).await;
    // Twins.
    let cancel = request03(json!(2), "tasks/cancel", json!({"id": "t-old"}));
    let canceled = rpc(json!(2), draft_task("t-old", "canceled"));
    pass(&up, &p, RPC03, &[], &cancel, Reply::json(200, &canceled)).await;
    let get = request(json!(3), "GetTask", json!({"id": "t-new"}));
    let odd =
        json!({"message": {"role": "ROLE_AGENT", "parts": [{"text": "hi"}]}, "sessionId": "s-1"});
    exchange(&up, &p, get, Reply::json(200, &rpc(json!(3), odd))).await;
    let cancel03 = ("jsonrpc", "0.3", "CancelTask");
    let recs = settle_to(
        &up,
        &p,
        &[
            seen(
                "terminal_task_accepted",
                "error",
                Some("t-old"),
                None,
                cancel03,
            ),
            seen("terminal_exit", "error", Some("t-old"), None, cancel03),
            seen(
                "malformed_event",
                "error",
                Some("t-new"),
                None,
                ("jsonrpc", "1.0", "GetTask"),
            ),
        ],
    )
    .await;
    let detail = recs[2]["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("`message`") && detail.contains("2 member(s)"),
        "{detail}"
    );
}

/// Issue 35, class 2: every frame of a JSON-RPC stream is a JSON-RPC
/// response. Legal: a 0.3 `tasks/resubscribe` stream of `kind` Tasks in
/// JSON-RPC envelopes; and bare StreamResponses on an HTTP+JSON subscribe
/// stream, where they belong. Twins: the same Tasks as bare frames on the
/// JSON-RPC stream, and 1.0 bare StreamResponses on a JSON-RPC
/// `SubscribeToTask`: `malformed_event` (once per stream, folded), the
/// detail saying a bare object came, and no event counted for them.
#[tokio::test]
async fn frames_on_a_jsonrpc_stream_are_responses() {
    let (up, p) = setup("").await;
    let task03 = |state: &str| json!({"kind": "task", "id": "t-1", "contextId": "c", "status": {"state": state}});
    let resub = |id: i64| request03(json!(id), "tasks/resubscribe", json!({"id": "t-1"}));
    let enveloped: Vec<String> = ["working", "completed"]
        .iter()
        .map(|s| rpc(json!(1), task03(s)))
        .collect();
    pass(&up, &p, RPC03, &[], &resub(1), Reply::sse(&enveloped)).await;
    let sub_rest = Reply::sse(&[
        task("t-2", "c", "TASK_STATE_WORKING").to_string(),
        status("t-2", "c", "TASK_STATE_COMPLETED").to_string(),
    ]);
    call(&up, &p, "GET", "/tasks/t-2:subscribe", V1, "", sub_rest).await;
    // Twins.
    let bare: Vec<String> = ["working", "completed"]
        .iter()
        .map(|s| task03(s).to_string())
        .collect();
    pass(&up, &p, RPC03, &[], &resub(2), Reply::sse(&bare)).await;
    let sub = request(json!(3), "SubscribeToTask", json!({"id": "t-3"}));
    let bare10 = Reply::sse(&[
        task("t-3", "c", "TASK_STATE_WORKING").to_string(),
        status("t-3", "c", "TASK_STATE_COMPLETED").to_string(),
    ]);
    exchange(&up, &p, sub, bare10).await;
    let recs = settle_to(
        &up,
        &p,
        &[
            seen(
                "malformed_event",
                "error",
                Some("t-1"),
                Some(0),
                ("jsonrpc", "0.3", "SubscribeToTask"),
            ),
            seen(
                "malformed_event",
                "error",
                Some("t-3"),
                Some(0),
                ("jsonrpc", "1.0", "SubscribeToTask"),
            ),
        ],
    )
    .await;
    for r in &recs {
        let detail = r["detail"].as_str().unwrap_or("");
        assert!(detail.contains("not a JSON-RPC response"), "{detail}");
        assert_eq!(r["occurrences"], 2, "{r}");
    }
    assert!(recs[0]["detail"]
        .as_str()
        .is_some_and(|d| d.contains("bare task object")));
    // The two enveloped Tasks are the JSON-RPC stream's only events.
    let labels = [("binding", "jsonrpc"), ("event", "task")];
    let scrape = p.metrics().await;
    let counted = crate::support::total(&scrape, "a2a_stream_events_total", &labels);
    assert_eq!(counted, Some(2.0), "bare frames are no events");
}

/// Issue 35, class 4: JSON-RPC ids compare exactly, at any length. Legal:
/// `9007199254740993` (beyond an f64's integers) and a 30-digit id
/// answered with themselves, and `9007199254740993.0` (the same value).
/// Twins: `9007199254740992` and the 30-digit id one less, which an f64
/// takes for the request's.
#[tokio::test]
async fn jsonrpc_ids_compare_exactly_at_any_length() {
    let (up, p) = setup("").await;
    let big = "9007199254740993";
    let long = "123456789012345678901234567890";
    let body = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#,
            rest_task("t-1", "c", "TASK_STATE_WORKING")
        )
    };
    let get = |id: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"GetTask","params":{{"id":"t-1"}}}}"#)
    };
    for (asked, answered) in [(big, big), (big, "9007199254740993.0"), (long, long)] {
        exchange(&up, &p, get(asked), Reply::json(200, &body(answered))).await;
    }
    for (asked, answered) in [
        (big, "9007199254740992"),
        (long, "123456789012345678901234567889"),
    ] {
        exchange(&up, &p, get(asked), Reply::json(200, &body(answered))).await;
    }
    let get10 = ("jsonrpc", "1.0", "GetTask");
    let recs = settle_to(
        &up,
        &p,
        &[
            seen("jsonrpc_id_mismatch", "error", Some("t-1"), None, get10),
            seen("jsonrpc_id_mismatch", "error", Some("t-1"), None, get10),
        ],
    )
    .await;
    let detail = recs[0]["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains(big) && detail.contains("9007199254740992"),
        "{detail}"
    );
}

/// Issue 35, class 5: cancel is idempotent in 1.0 (§3.3.1 "Cancel Task
/// operations are idempotent - multiple cancellation requests have the
/// same effect"). Legal: a CancelTask of a task seen CANCELED answered
/// with it still CANCELED. Twins in the same shape: a CancelTask of a task
/// seen COMPLETED answered with success (§3.1.5: TaskNotCancelable), and
/// the 0.3 re-cancel of a canceled task (0.3 states no idempotency and
/// lists `canceled` among the states TaskNotCancelableError answers, §8.2).
#[tokio::test]
async fn a_repeated_cancel_is_idempotent_in_1_0() {
    let (up, p) = setup("").await;
    let ask = |id: i64, method: &str, task: &str, state: &str| {
        let req = request(json!(id), method, json!({"id": task}));
        let answer = rpc(
            json!(id),
            serde_json::from_str::<Value>(&rest_task(task, "c", state)).unwrap_or_default(),
        );
        (req, Reply::json(200, &answer))
    };
    for (id, method, task, state) in [
        (1, "GetTask", "t-1", "TASK_STATE_CANCELED"),
        (2, "CancelTask", "t-1", "TASK_STATE_CANCELED"),
        (3, "GetTask", "t-2", "TASK_STATE_COMPLETED"),
    ] {
        let (req, reply) = ask(id, method, task, state);
        exchange(&up, &p, req, reply).await;
    }
    // Twins.
    let (req, reply) = ask(4, "CancelTask", "t-2", "TASK_STATE_COMPLETED");
    exchange(&up, &p, req, reply).await;
    let task03 = |id: i64, state: &str| {
        rpc(
            json!(id),
            json!({"kind": "task", "id": "t-3", "contextId": "c", "status": {"state": state}}),
        )
    };
    let get = request03(json!(5), "tasks/get", json!({"id": "t-3"}));
    pass(
        &up,
        &p,
        RPC03,
        &[],
        &get,
        Reply::json(200, &task03(5, "canceled")),
    )
    .await;
    let cancel = request03(json!(6), "tasks/cancel", json!({"id": "t-3"}));
    pass(
        &up,
        &p,
        RPC03,
        &[],
        &cancel,
        Reply::json(200, &task03(6, "canceled")),
    )
    .await;
    settle_to(
        &up,
        &p,
        &[
            seen(
                "terminal_task_accepted",
                "error",
                Some("t-2"),
                None,
                ("jsonrpc", "1.0", "CancelTask"),
            ),
            seen(
                "terminal_task_accepted",
                "error",
                Some("t-3"),
                None,
                ("jsonrpc", "0.3", "CancelTask"),
            ),
        ],
    )
    .await;
}
