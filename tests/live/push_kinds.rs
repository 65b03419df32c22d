//! The kinds push deliveries are judged for, through the running proxy
//! with the relay on, each with its legal look-alike: `push_auth_missing`
//! (spec 1.0.1 §4.3.3), `push_not_delivered` (§4.3.3: at least once),
//! `push_after_delete` (§3.1.10), and the shape, task and order rules
//! deliveries share with answers (§4.3.3: a StreamResponse).

use serde_json::{json, Value};

use crate::push::{config_of, deliver, register, scene, status_event, Scene};
use crate::support::a2a::*;
use crate::support::metrics::{metric, total};
use crate::support::scenes::get_task;
use crate::support::Proxied;
use crate::support::Reply;

/// Every field a delivery's record carries.
fn delivery_record(r: &Value, kind: &str, severity: &str, spec: &str) {
    check_fields(r);
    assert_eq!(r["kind"], kind, "{r:#}");
    assert_eq!(r["severity"], severity);
    assert_eq!(r["binding"], "webhook");
    assert_eq!(r["method"], "PushDelivery");
    assert_eq!(r["version"], "1.0");
    assert_eq!(r["task_id"], "t-1");
    assert_eq!(r["upstream"], crate::support::NAME);
    assert_eq!(r["rule"]["spec"], spec);
}

/// The findings since the last settle, as (kind, method).
async fn found(s: &Scene) -> Vec<Value> {
    settle(&s.up, &s.p).await
}

/// A config registered with `authentication`: a delivery without
/// `Authorization: Bearer <credentials>` (none, another scheme, other
/// credentials, the credentials in the token header) is
/// `push_auth_missing` (§4.3.3 MUST); one with them, the scheme in any
/// case, is legal, and so is any delivery of a config without
/// `authentication`.
#[tokio::test]
async fn push_auth_missing() {
    let s = scene("").await;
    let url = register(&s, 1, config_of(&s.hook, Some(("Bearer", "s3cret")), None)).await;
    let body = status_event("TASK_STATE_WORKING");
    for headers in [
        vec![],
        vec![("authorization", "Basic s3cret")],
        vec![("authorization", "Bearer other")],
        vec![("x-a2a-notification-token", "s3cret")],
    ] {
        let (status, _, _) = deliver(&s, &url, &headers, &body).await;
        assert_eq!(status, 200, "the delivery passes whatever it lacks");
        let recs = found(&s).await;
        assert_eq!(recs.len(), 1, "{headers:?}: {recs:#?}");
        delivery_record(&recs[0], "push_auth_missing", "warning", "1.0.1 §4.3.3");
        assert_eq!(recs[0]["rule"]["tck"], json!(["PUSH-DELIVER-001"]));
        assert!(
            !recs[0].to_string().contains("s3cret"),
            "credentials never written: {}",
            recs[0]
        );
    }
    // Look-alikes.
    for auth in ["Bearer s3cret", "bearer s3cret"] {
        deliver(&s, &url, &[("authorization", auth)], &body).await;
        assert!(found(&s).await.is_empty(), "{auth}");
    }
    let plain = register(&s, 2, config_of(&s.hook, None, None)).await;
    deliver(&s, &plain, &[], &body).await;
    assert!(found(&s).await.is_empty(), "no authentication asked");
    let m = s.p.metrics().await;
    assert_eq!(
        total(
            &m,
            "a2a_violations_total",
            &[("kind", "push_auth_missing"), ("severity", "warning")]
        ),
        Some(4.0)
    );
    s.p.stop().await;
}

/// A task seen completed (here by a GetTask) while its config was active,
/// with no delivery of that state `push.terminal_wait` later, is
/// `push_not_delivered` (§4.3.3: at least once for each configured
/// webhook). Look-alikes: the terminal state delivered (before or after
/// the proxy saw it), and a webhook that failed (the agent MAY give up).
#[tokio::test]
async fn push_not_delivered() {
    let ten = std::time::Duration::from_secs(10);
    // Provoked.
    let s = scene("").await;
    register(&s, 1, config_of(&s.hook, None, Some("cfg-1"))).await;
    get_task(
        &s.up,
        &s.p,
        2,
        "t-1",
        task("t-1", "c-1", "TASK_STATE_COMPLETED"),
    )
    .await;
    assert!(found(&s).await.is_empty());
    s.p.clock.advance(std::time::Duration::from_millis(1_500));
    assert!(found(&s).await.is_empty(), "not before terminal_wait");
    s.p.clock.advance(ten);
    let recs = s.p.wait_kind("push_not_delivered", 1).await;
    check_fields(&recs[0]);
    assert_eq!(recs[0]["task_id"], "t-1");
    assert_eq!(recs[0]["rule"]["spec"], "1.0.1 §4.3.3");
    assert!(recs[0]["detail"].as_str().unwrap().contains("cfg-1"));
    s.p.clock.advance(ten);
    found(&s).await;
    let all: Vec<Value> = s.p.records();
    assert_eq!(
        all.iter()
            .filter(|r| r["kind"] == "push_not_delivered")
            .count(),
        1,
        "once: {all:#?}"
    );
    s.p.stop().await;

    // Look-alikes.
    for case in ["delivered", "failed"] {
        let s = scene("").await;
        let url = register(&s, 1, config_of(&s.hook, None, None)).await;
        let body = match case {
            "delivered" => status_event("TASK_STATE_COMPLETED"),
            _ => {
                s.hook.answer(500, &[], &[b"down"]);
                status_event("TASK_STATE_WORKING")
            }
        };
        deliver(&s, &url, &[], &body).await;
        get_task(
            &s.up,
            &s.p,
            2,
            "t-1",
            task("t-1", "c-1", "TASK_STATE_COMPLETED"),
        )
        .await;
        found(&s).await;
        s.p.clock.advance(std::time::Duration::from_millis(1_500));
        found(&s).await;
        s.p.clock.advance(ten);
        // Two ticks' worth of judging, then nothing may have come.
        found(&s).await;
        s.p.clock.advance(std::time::Duration::from_secs(2));
        let recs = found(&s).await;
        assert!(
            s.p.records()
                .iter()
                .all(|r| r["kind"] != "push_not_delivered"),
            "{case}: {recs:#?}"
        );
        s.p.stop().await;
    }
}

/// A delivery after the answer to its config's deletion passed the proxy
/// is `push_after_delete` (§3.1.10: no further notifications after
/// deletion). Look-alikes: a delivery before the delete; the delete of
/// another config; a refused delete.
#[tokio::test]
async fn push_after_delete() {
    let s = scene("").await;
    let url = register(&s, 1, config_of(&s.hook, None, Some("cfg-1"))).await;
    let body = status_event("TASK_STATE_WORKING");
    let delete = |id: i64, config: &str| {
        request(
            json!(id),
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": "t-1", "id": config}),
        )
    };
    deliver(&s, &url, &[], &body).await;
    // Another config's delete, and a refused one: this config lives on.
    exchange(
        &s.up,
        &s.p,
        delete(2, "cfg-other"),
        Reply::json(200, &rpc(json!(2), json!({}))),
    )
    .await;
    let refused = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"Task not found"}}"#;
    exchange(&s.up, &s.p, delete(3, "cfg-1"), Reply::json(200, refused)).await;
    deliver(&s, &url, &[], &body).await;
    let recs = found(&s).await;
    assert!(recs.is_empty(), "{recs:#?}");
    exchange(
        &s.up,
        &s.p,
        delete(4, "cfg-1"),
        Reply::json(200, &rpc(json!(4), json!({}))),
    )
    .await;
    let (status, _, _) = deliver(&s, &url, &[], &body).await;
    assert_eq!(status, 200, "still relayed: the proxy changes no traffic");
    let recs = found(&s).await;
    assert_eq!(recs.len(), 1, "{recs:#?}");
    delivery_record(&recs[0], "push_after_delete", "warning", "1.0.1 §3.1.10");
    s.p.stop().await;
}

/// Deliveries share the answers' rules: a body that is not a
/// StreamResponse is `malformed_event`, one about another task
/// `task_id_mismatch`; repeats, a stale retry (stamped before the terminal
/// state), and a delivery before the task's first answer are legal; a
/// non-terminal state after the terminal one without timestamps is not
/// certain (counted, not accused).
#[tokio::test]
async fn deliveries_are_judged_like_answers() {
    let s = scene("").await;
    let url = register(&s, 1, config_of(&s.hook, None, None)).await;
    let bare = task("t-1", "c-1", "TASK_STATE_WORKING")["task"].to_string();
    deliver(&s, &url, &[], &bare).await;
    let other = status("t-9", "c-1", "TASK_STATE_WORKING").to_string();
    deliver(&s, &url, &[], &other).await;
    let recs = found(&s).await;
    let kinds: Vec<&str> = recs.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["malformed_event", "task_id_mismatch"], "{recs:#?}");
    delivery_record(
        &recs[0],
        "malformed_event",
        "error",
        "1.0.1 §3.2.3, §9.4.2, §11.7",
    );
    assert!(recs[0]["evidence"]
        .as_str()
        .unwrap()
        .contains("TASK_STATE_WORKING"));

    // The terminal state, stamped; again (at least once); a stale retry.
    let stamped = |state: &str, ts: &str| {
        let mut e = status("t-1", "c-1", state);
        e["statusUpdate"]["status"]["timestamp"] = json!(ts);
        e.to_string()
    };
    let done = stamped("TASK_STATE_COMPLETED", "2026-01-01T00:00:10Z");
    deliver(&s, &url, &[], &done).await;
    deliver(&s, &url, &[], &done).await;
    deliver(
        &s,
        &url,
        &[],
        &stamped("TASK_STATE_WORKING", "2026-01-01T00:00:05Z"),
    )
    .await;
    deliver(&s, &url, &[], &status_event("TASK_STATE_WORKING")).await;
    assert!(found(&s).await.is_empty());
    let m = s.p.metrics().await;
    assert_eq!(
        metric(
            &m,
            "a2a_push_unordered_total",
            &[("upstream", crate::support::NAME)]
        ),
        Some(1.0)
    );
    // Stamped after the terminal state: the agent says the task left it.
    deliver(
        &s,
        &url,
        &[],
        &stamped("TASK_STATE_WORKING", "2026-01-01T00:00:20Z"),
    )
    .await;
    let recs = found(&s).await;
    assert_eq!(recs.len(), 1, "{recs:#?}");
    delivery_record(&recs[0], "terminal_exit", "error", "1.0.1 §4.1.3");
    s.p.stop().await;
}

/// Push before snapshot: the agent delivers before its answer reaches the
/// proxy (the answer held open): learned, never accused, and the answer
/// that follows is not accused either.
#[tokio::test]
async fn a_delivery_before_the_first_answer_is_learned() {
    let s = scene("").await;
    let mut params = new_message();
    params["configuration"] = json!({
        "taskPushNotificationConfig": config_of(&s.hook, None, None),
        "returnImmediately": true
    });
    let answer = rpc(json!(1), task("t-1", "c-1", "TASK_STATE_SUBMITTED"));
    let hold = crate::support::Hold::after(0);
    let mut reply = Reply::json(200, &answer);
    reply.hold = Some(hold.clone());
    s.up.push(reply);
    let req = request(json!(1), "SendMessage", params);
    let p_listen = s.p.listen;
    let sending =
        tokio::spawn(
            async move { crate::support::request_to(p_listen, "POST", "/", V1, &req).await },
        );
    s.up.wait_taken().await;
    let url = crate::push::relay_url_seen(&s.up);
    deliver(&s, &url, &[], &status_event("TASK_STATE_COMPLETED")).await;
    hold.release.notify_one();
    let (status, _, _) = sending.await.unwrap();
    assert_eq!(status, 200);
    assert!(found(&s).await.is_empty());
    s.p.clock.advance(std::time::Duration::from_secs(12));
    found(&s).await;
    s.p.clock.advance(std::time::Duration::from_secs(2));
    assert!(found(&s).await.is_empty(), "delivered: no promise broken");
    s.p.stop().await;
}

/// A config registered over 0.3 takes 0.3's shapes: a bare Task with its
/// `kind` is legal there, a 1.0 StreamResponse is the other version's
/// dialect (`version_mismatch`, as the Python SDK 1.3.0's 0.3 layer sends).
#[tokio::test]
async fn a_0_3_config_takes_0_3_bodies() {
    let s = scene("").await;
    let config = json!({"url": s.hook.url(), "token": "t"});
    let params = json!({
        "message": {"kind": "message", "messageId": "m-1", "role": "user",
                    "parts": [{"kind": "text", "text": "go"}]},
        "configuration": {"pushNotificationConfig": config, "blocking": false}
    });
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result":
        {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "working"}}});
    exchange(
        &s.up,
        &s.p,
        request(json!(1), "message/send", params),
        Reply::json(200, &answer.to_string()),
    )
    .await;
    let body = s.up.request_bodies().pop().unwrap();
    let sent: Value = serde_json::from_slice(&body).unwrap();
    let url = sent["params"]["configuration"]["pushNotificationConfig"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let task_0_3 = json!({"kind": "task", "id": "t-1", "contextId": "c-1",
        "status": {"state": "completed"}});
    deliver(&s, &url, &[], &task_0_3.to_string()).await;
    assert!(found(&s).await.is_empty());
    deliver(&s, &url, &[], &status_event("TASK_STATE_COMPLETED")).await;
    let recs = found(&s).await;
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert_eq!(recs[0]["kind"], "version_mismatch");
    assert_eq!(recs[0]["version"], "0.3");
    assert_eq!(recs[0]["binding"], "webhook");
    s.p.stop().await;
}
