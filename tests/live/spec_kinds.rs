//! The kinds that rest on the specification's MUST and SHOULD rules a
//! passive observer can check (sealed artifacts, the agent card and its
//! promises, dialect, error codes), each provoked through the running
//! proxy with its legal look-alike.

use crate::support::a2a::*;
use crate::support::scenes::*;
use crate::support::{Proxied, Reply};
use serde_json::json;

/// An update after an artifact's `lastChunk:true` (spec §4.2.2: the final
/// chunk) reopened it silently before; now it is a finding, naming replace
/// or append. Look-alike: replacing an artifact still open, and a second
/// artifact after the first completed.
#[tokio::test]
async fn sealed_artifact_updated() {
    let (up, p) = setup("").await;
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-ok", "c", "TASK_STATE_WORKING"),
            artifact("t-ok", "c", "a1", false, false),
            artifact("t-ok", "c", "a1", false, false),
            artifact("t-ok", "c", "a1", true, true),
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
            artifact("t-1", "c", "a1", false, true),
            artifact("t-1", "c", "a1", true, false),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    send_stream(
        &up,
        &p,
        3,
        &[
            task("t-2", "c", "TASK_STATE_WORKING"),
            artifact("t-2", "c", "a1", false, true),
            artifact("t-2", "c", "a1", false, true),
            status("t-2", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    let recs = settle_expecting(
        &up,
        &p,
        &[
            expect("sealed_artifact_updated", "warning", Some("t-1"), Some(2)),
            expect("sealed_artifact_updated", "warning", Some("t-2"), Some(2)),
        ],
        "SendStreamingMessage",
    )
    .await;
    assert!(
        recs[0]["detail"].as_str().unwrap().contains("an append"),
        "{}",
        recs[0]
    );
    assert!(
        recs[1]["detail"].as_str().unwrap().contains("a replace"),
        "{}",
        recs[1]
    );
}

/// A card that lacks what its version requires (spec §4.4.1, §4.4.6), or
/// is not JSON, is a finding with the card as evidence; it is still used
/// for what it does say. Look-alikes: a complete 1.0 card with a binding
/// name the spec does not list (it calls them open), a complete 0.3 card,
/// and a card path answered 404.
#[tokio::test]
async fn invalid_agent_card() {
    let (up, p) = setup("").await;
    let cards = [
        (
            200,
            r#"{"name":"a","version":"1","capabilities":{"streaming":true},"supportedInterfaces":[{"url":"http://a/","protocolBinding":"X-NEW","protocolVersion":"1.0"}]}"#,
        ),
        (
            200,
            r#"{"name":"a","version":"1","capabilities":{},"url":"http://a/","protocolVersion":"0.3.0"}"#,
        ),
        (404, r#"{"error":"no card here"}"#),
        (
            200,
            r#"{"name":"a","supportedInterfaces":[{"url":"http://a/","protocolBinding":"JSONRPC"}]}"#,
        ),
        (200, "{not json"),
    ];
    for (status, body) in cards {
        up.push(Reply::json(status, body));
        let (got, _) = p.send("GET", "/.well-known/agent-card.json", &[], "").await;
        assert_eq!(got, status);
    }
    let recs = settle(&up, &p).await;
    assert_eq!(
        kinds(&recs),
        ["invalid_agent_card", "invalid_agent_card"],
        "{recs:#?}"
    );
    for r in &recs {
        check_fields(r);
        assert_eq!(r["severity"], "warning");
        assert_eq!(r["method"], "GetAgentCard");
        assert_eq!(r["binding"], "rest");
    }
    let detail = recs[0]["detail"].as_str().unwrap();
    for missing in [
        "version is missing",
        "supportedInterfaces[0].protocolVersion is missing",
        "capabilities is missing",
    ] {
        assert!(detail.contains(missing), "{detail}");
    }
    assert!(recs[0]["evidence"]
        .as_str()
        .unwrap()
        .starts_with(r#"{"name":"a""#));
    assert!(
        recs[1]["detail"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{}",
        recs[1]
    );
    let s = p.metrics().await;
    let n = crate::support::metric(
        &s,
        "a2a_violations_total",
        &[
            ("upstream", crate::support::NAME),
            ("kind", "invalid_agent_card"),
            ("severity", "warning"),
        ],
    );
    assert_eq!(n, Some(2.0));
}

/// What the agent did against the card last seen through the proxy (spec
/// §3.3.4): a stream while `capabilities.streaming` is false, a push
/// config accepted while `pushNotifications` is absent, the extended card
/// served while not declared. Look-alikes: the same before any card, a
/// push config refused with an A2A error, and all of it after a card that
/// declares each capability.
#[tokio::test]
async fn capability_mismatch() {
    let (up, p) = setup("").await;
    let clean = |t: &str| {
        [
            task(t, "c", "TASK_STATE_WORKING"),
            status(t, "c", "TASK_STATE_COMPLETED"),
        ]
    };
    let card = |caps: &str| {
        format!(
            r#"{{"name":"a","version":"1","capabilities":{caps},"supportedInterfaces":[{{"url":"http://a/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}}]}}"#
        )
    };
    let push = |id: i64| {
        request(
            json!(id),
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "t-1", "url": "https://hook.example/x"}),
        )
    };
    let push_ok = |id: i64| {
        rpc(
            json!(id),
            json!({"taskId": "t-1", "id": "cfg-1", "url": "https://hook.example/x"}),
        )
    };
    let extended = |id: i64| request(json!(id), "GetExtendedAgentCard", json!({}));
    let get_card = |body: String| {
        up.push(Reply::json(200, &body));
        p.send("GET", "/.well-known/agent-card.json", &[], "")
    };
    // No card yet: nothing to contradict.
    send_stream(&up, &p, 1, &clean("t-0")).await;
    exchange(&up, &p, push(2), Reply::json(200, &push_ok(2))).await;
    get_card(card(r#"{"streaming":false}"#)).await;
    send_stream(&up, &p, 3, &clean("t-1")).await;
    exchange(&up, &p, push(4), Reply::json(200, &push_ok(4))).await;
    let refused = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32003,"message":"Push Notification is not supported"}}"#;
    exchange(&up, &p, push(5), Reply::json(200, refused)).await;
    exchange(
        &up,
        &p,
        extended(6),
        Reply::json(200, &rpc(json!(6), json!({"name": "a"}))),
    )
    .await;
    get_card(card(
        r#"{"streaming":true,"pushNotifications":true,"extendedAgentCard":true}"#,
    ))
    .await;
    send_stream(&up, &p, 7, &clean("t-2")).await;
    exchange(&up, &p, push(8), Reply::json(200, &push_ok(8))).await;
    exchange(
        &up,
        &p,
        extended(9),
        Reply::json(200, &rpc(json!(9), json!({"name": "a"}))),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["capability_mismatch"; 3], "{recs:#?}");
    let details: Vec<&str> = recs.iter().map(|r| r["detail"].as_str().unwrap()).collect();
    assert!(
        details[0].contains("capabilities.streaming false"),
        "{}",
        details[0]
    );
    assert!(
        details[1].contains("capabilities.pushNotifications absent"),
        "{}",
        details[1]
    );
    assert!(
        details[2].contains("capabilities.extendedAgentCard absent"),
        "{}",
        details[2]
    );
    assert_eq!(
        recs.iter()
            .map(|r| r["method"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "SendStreamingMessage",
            "CreateTaskPushNotificationConfig",
            "GetExtendedAgentCard"
        ]
    );
    for r in &recs {
        check_fields(r);
        assert_eq!(r["severity"], "warning");
    }
}

/// A follow-up that names task T in context C answered about T in another
/// context, on a stream and in a body, with no earlier exchange about T
/// (the request itself is the evidence). Look-alike: answered in C.
#[tokio::test]
async fn context_id_mismatch_on_a_follow_up() {
    let (up, p) = setup("").await;
    let follow = |id: i64, method: &str, t: &str| request(json!(id), method, follow_up(t, "c1"));
    let evs = |t: &str, ctx: &str| {
        [
            task(t, ctx, "TASK_STATE_WORKING"),
            status(t, ctx, "TASK_STATE_COMPLETED"),
        ]
    };
    exchange(
        &up,
        &p,
        follow(1, "SendStreamingMessage", "t-ok"),
        Reply::sse(&frames(1, &evs("t-ok", "c1"))),
    )
    .await;
    exchange(
        &up,
        &p,
        follow(2, "SendStreamingMessage", "t-1"),
        Reply::sse(&frames(2, &evs("t-1", "c2"))),
    )
    .await;
    let answer = |id: i64, t: &str, ctx: &str| {
        rpc(json!(id), bare_task(t, ctx, "TASK_STATE_COMPLETED", None))
    };
    exchange(
        &up,
        &p,
        follow(3, "SendMessage", "t-ok2"),
        Reply::json(200, &answer(3, "t-ok2", "c1")),
    )
    .await;
    exchange(
        &up,
        &p,
        follow(4, "SendMessage", "t-2"),
        Reply::json(200, &answer(4, "t-2", "c9")),
    )
    .await;
    let recs = settle(&up, &p).await;
    let got: Vec<(&str, &str)> = recs
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap(),
                r["task_id"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("context_id_mismatch", "t-1"),
            ("context_id_mismatch", "t-2")
        ],
        "{recs:#?}"
    );
    assert!(
        recs[0]["detail"]
            .as_str()
            .unwrap()
            .contains("sent in contextId c1"),
        "{}",
        recs[0]
    );
    assert_eq!(recs[0]["event_index"], 0);
    assert_eq!(recs[1]["event_index"], serde_json::Value::Null);
}

/// A JSON-RPC answer in the other version's dialect than its method's:
/// 0.3 `kind` frames answering a 1.0 `SendStreamingMessage`, 0.3's `final`
/// on a 1.0 stream, 1.0 wrappers answering a 0.3 `message/stream`; once
/// per exchange. Look-alikes: each version answered in its own dialect,
/// and an HTTP+JSON 0.3 stream (proto-JSON wrappers) not judged.
#[tokio::test]
async fn version_mismatch() {
    let (up, p) = setup("").await;
    let v03_req = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "message/stream", "params": {"message": {"kind": "message", "role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "hi"}]}}}).to_string()
    };
    let v03_frames = |id: i64, t: &str| {
        vec![
            json!({"jsonrpc": "2.0", "id": id, "result": {"kind": "task", "id": t, "contextId": "c", "status": {"state": "working"}}}).to_string(),
            json!({"jsonrpc": "2.0", "id": id, "result": {"kind": "status-update", "taskId": t, "contextId": "c", "status": {"state": "completed"}, "final": true}}).to_string(),
        ]
    };
    let clean = |t: &str| {
        [
            task(t, "c", "TASK_STATE_WORKING"),
            status(t, "c", "TASK_STATE_COMPLETED"),
        ]
    };
    // Look-alikes: each in its own dialect.
    exchange(
        &up,
        &p,
        stream_req(1),
        Reply::sse(&frames(1, &clean("t-ok"))),
    )
    .await;
    up.push(Reply::sse(&v03_frames(2, "t-ok2")));
    p.send("POST", "/", &[], &v03_req(2)).await;
    let rest03 = [
        json!({"task": {"id": "t-ok3", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}).to_string(),
        json!({"statusUpdate": {"taskId": "t-ok3", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}, "final": true}}).to_string(),
    ];
    up.push(Reply::sse(&rest03));
    let rest_body =
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
            .to_string();
    p.send(
        "POST",
        "/v1/message:stream",
        &[("A2A-Version", "0.3")],
        &rest_body,
    )
    .await;
    // Provoked.
    up.push(Reply::sse(&v03_frames(3, "t-1")));
    p.send("POST", "/", V1, &stream_req(3)).await;
    let mut fin = status("t-2", "c", "TASK_STATE_COMPLETED");
    fin["statusUpdate"]["final"] = json!(true);
    exchange(
        &up,
        &p,
        stream_req(4),
        Reply::sse(&frames(4, &[task("t-2", "c", "TASK_STATE_WORKING"), fin])),
    )
    .await;
    up.push(Reply::sse(&frames(5, &clean("t-3"))));
    p.send("POST", "/", &[], &v03_req(5)).await;
    let recs = settle(&up, &p).await;
    let got: Vec<(&str, &str, &str)> = recs
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap(),
                r["task_id"].as_str().unwrap_or("?"),
                r["version"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("version_mismatch", "t-1", "1.0"),
            ("version_mismatch", "t-2", "1.0"),
            ("version_mismatch", "t-3", "0.3"),
        ],
        "{recs:#?}"
    );
    let detail = |i: usize| recs[i]["detail"].as_str().unwrap().to_owned();
    assert!(detail(0).contains("0.3 `kind`"), "{}", detail(0));
    assert!(detail(1).contains("`final`"), "{}", detail(1));
    assert!(
        detail(2).contains("1.0 StreamResponse wrapper"),
        "{}",
        detail(2)
    );
    assert_eq!(recs[0]["occurrences"], 1, "once per exchange");
    assert_eq!(recs[1]["event_index"], 1);
}

/// An HTTP+JSON 1.0 error whose HTTP status is not the one the spec maps
/// it to (§5.4), either table accepted (1.0.1 moved TaskNotCancelable to
/// 400). Look-alikes: the mapped statuses, both tables; a problem body
/// (RFC 9457) at its status; a JSON-RPC error (not judged: its code names
/// the error); an error body no A2A reason names.
#[tokio::test]
async fn error_code_mismatch() {
    let (up, p) = setup("").await;
    let status_body = |code: u16, reason: &str| {
        json!({"error": {"code": code, "status": "X", "message": "m", "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"}]}})
        .to_string()
    };
    let v1 = [("A2A-Version", "1.0")];
    let rest = |method: &'static str, path: &'static str, code: u16, body: String| {
        up.push(Reply::json(code, &body));
        p.send(method, path, &v1, "")
    };
    // Look-alikes.
    rest("GET", "/tasks/t-a", 404, status_body(404, "TASK_NOT_FOUND")).await;
    rest(
        "POST",
        "/tasks/t-b:cancel",
        409,
        status_body(409, "TASK_NOT_CANCELABLE"),
    )
    .await;
    rest(
        "POST",
        "/tasks/t-c:cancel",
        400,
        status_body(400, "TASK_NOT_CANCELABLE"),
    )
    .await;
    let problem = json!({"type": "https://a2a-protocol.org/errors/task-not-found", "title": "Task not found", "status": 404}).to_string();
    rest("GET", "/tasks/t-d", 404, problem).await;
    rest("GET", "/tasks/t-e", 400, status_body(400, "SOMETHING_ELSE")).await;
    let rpc_err = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}"#;
    exchange(
        &up,
        &p,
        request(json!(1), "GetTask", json!({"id": "t-f"})),
        Reply::json(200, rpc_err),
    )
    .await;
    // Provoked.
    rest("GET", "/tasks/t-1", 400, status_body(400, "TASK_NOT_FOUND")).await;
    rest(
        "POST",
        "/tasks/t-2:cancel",
        500,
        status_body(500, "TASK_NOT_CANCELABLE"),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["error_code_mismatch"; 2], "{recs:#?}");
    assert!(
        recs[0]["detail"]
            .as_str()
            .unwrap()
            .contains("TaskNotFound over HTTP+JSON with HTTP status 404"),
        "{}",
        recs[0]
    );
    assert!(
        recs[1]["detail"].as_str().unwrap().contains("409 or 400"),
        "{}",
        recs[1]
    );
    for r in &recs {
        check_fields(r);
        assert_eq!(r["binding"], "rest");
        assert_eq!(r["severity"], "warning");
    }
}

/// An A2A 1.0 error whose typed details break their shape: a JSON-RPC
/// `data[]` entry without `@type` (a google.protobuf.Any), a REST ErrorInfo
/// without the domain `a2a-protocol.org` (§11.6), an untyped entry in an
/// error frame of a stream. Look-alikes: the shapes the official SDKs send
/// (ErrorInfo, then a typed BadRequest), a non-A2A error with untyped data,
/// `data` as an object, a 0.3 error's free-form data, an ErrorInfo of
/// another domain naming no A2A error.
#[tokio::test]
async fn error_code_mismatch_in_error_details() {
    let (up, p) = setup("").await;
    let info = |reason: &str, domain: Option<&str>| {
        let mut i = json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason});
        if let Some(d) = domain {
            i["domain"] = json!(d);
        }
        i
    };
    let a2a = Some("a2a-protocol.org");
    let rpc_error = |id: i64, code: i64, data: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "m", "data": data}})
            .to_string()
    };
    let get = |id: i64| request(json!(id), "GetTask", json!({"id": format!("t-{id}")}));
    let bad_request =
        json!({"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []});
    // Look-alikes.
    let sdk = json!([info("TASK_NOT_FOUND", a2a), bad_request]);
    exchange(
        &up,
        &p,
        get(1),
        Reply::json(200, &rpc_error(1, -32001, sdk)),
    )
    .await;
    let untyped = json!([{"detail": "x"}]);
    exchange(
        &up,
        &p,
        get(2),
        Reply::json(200, &rpc_error(2, -32603, untyped)),
    )
    .await;
    let object = json!({"taskId": "t-3"});
    exchange(
        &up,
        &p,
        get(3),
        Reply::json(200, &rpc_error(3, -32001, object)),
    )
    .await;
    let old = request(json!(4), "tasks/get", json!({"id": "t-4"}));
    up.push(Reply::json(
        200,
        &rpc_error(4, -32001, json!([{"taskId": "t-4"}])),
    ));
    p.send("POST", "/", &[], &old).await;
    let foreign = json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "m",
        "details": [info("TASK_NOT_FOUND", a2a), info("QUOTA", Some("example.com"))]}});
    up.push(Reply::json(404, &foreign.to_string()));
    p.send("GET", "/tasks/t-5", V1, "").await;
    // Provoked.
    let no_type = json!([{"reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}]);
    exchange(
        &up,
        &p,
        get(6),
        Reply::json(200, &rpc_error(6, -32001, no_type)),
    )
    .await;
    let no_domain = json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "m",
        "details": [info("TASK_NOT_FOUND", None)]}});
    up.push(Reply::json(404, &no_domain.to_string()));
    p.send("GET", "/tasks/t-7", V1, "").await;
    let frame = json!({"jsonrpc": "2.0", "id": 8, "error": {"code": -32004, "message": "m", "data": ["no type"]}});
    exchange(&up, &p, stream_req(8), Reply::sse(&[frame.to_string()])).await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["error_code_mismatch"; 3], "{recs:#?}");
    let detail = |i: usize| recs[i]["detail"].as_str().unwrap().to_owned();
    assert!(
        detail(0).contains("TaskNotFound error's data to name its type with @type"),
        "{}",
        recs[0]
    );
    assert!(detail(0).contains("entry 0 has none"), "{}", recs[0]);
    assert_eq!(recs[0]["binding"], "jsonrpc");
    assert!(
        detail(1).contains("ErrorInfo naming TaskNotFound (details entry 0)"),
        "{}",
        recs[1]
    );
    assert!(detail(1).ends_with("it has none"), "{}", recs[1]);
    assert_eq!(recs[1]["binding"], "rest");
    assert!(
        detail(2).contains("UnsupportedOperation error's data"),
        "{}",
        recs[2]
    );
    assert_eq!(recs[2]["event_index"], 0, "{}", recs[2]);
    for r in &recs {
        check_fields(r);
        assert_eq!(r["severity"], "warning");
    }
}
