//! Deliveries judged through the session, as the analysis thread drives
//! it: each rule with its legal look-alike.

use super::*;
use crate::a2a::model::{Binding, Exchange, Operation, RpcId};
use crate::engine::{Head, Sink};
use crate::judge::{Found, Session, Settings};
use crate::lifecycle::End;

struct Quiet;
impl Sink for Quiet {
    fn finding(&mut self, _: Finding) {}
}

fn send(version: Version) -> Exchange {
    Exchange {
        binding: Binding::JsonRpc,
        version,
        operation: Operation::SendMessage,
        rpc_id: Some(RpcId::Number("1".into())),
        task_id: None,
        context_id: None,
        blocking: false,
        guessed_path: None,
        message_id: None,
    }
}

const WAIT: Millis = 10_000;

fn session() -> Session {
    Session::new(&Settings::default()).with_push(PushSettings {
        terminal_wait: WAIT,
        ttl: 3_600_000,
        max: 8,
    })
}

fn reg(token: &str, auth: Option<PushAuth>) -> Registration {
    Registration {
        token: token.into(),
        version: Version::V1_0,
        task_id: None,
        config_id: Some("cfg".into()),
        auth,
    }
}

fn task_body(state: &str, stamp: Option<&str>) -> String {
    let ts = stamp.map_or(String::new(), |t| format!(",\"timestamp\":\"{t}\""));
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"task":{{"id":"t","contextId":"c","status":{{"state":"{state}"{ts}}}}}}}}}"#
    )
}

/// Exchange 1, a send carrying `regs`, answered with task t in `state`.
fn registered(s: &mut Session, regs: Vec<Registration>, state: &str, stamp: Option<&str>) {
    let mut out = Vec::new();
    s.open(1, send(Version::V1_0), Seq::after_messages(0));
    s.push_registered(1, regs);
    s.head(1, Head::read(200, Some("application/json"), None), &mut out);
    let body = task_body(state, stamp);
    s.piece(1, body.as_bytes(), 100, &mut Quiet, &mut out);
    s.end(1, End::Upstream, None, 100, &mut Quiet, &mut out);
    assert!(out.is_empty(), "{out:?}");
}

fn delivery(token: &str, auth: Option<&str>, body: &str, seq: u64) -> Delivery {
    Delivery {
        token: token.into(),
        authorization: auth.map(str::to_owned),
        body: Some(body.as_bytes().to_vec()),
        answer: WebhookAnswer::Delivered,
        seq: Seq::after_messages(seq),
    }
}

fn status(state: &str, stamp: Option<&str>) -> String {
    let ts = stamp.map_or(String::new(), |t| format!(",\"timestamp\":\"{t}\""));
    format!(
        r#"{{"statusUpdate":{{"taskId":"t","contextId":"c","status":{{"state":"{state}"{ts}}}}}}}"#
    )
}

fn kinds(out: &[Found]) -> Vec<Kind> {
    out.iter().map(|f| f.finding.kind).collect()
}

fn deliver(s: &mut Session, d: &Delivery, now: Millis) -> Vec<Kind> {
    let mut out = Vec::new();
    s.deliver(99, d, now, &mut out).expect("a known token");
    kinds(&out)
}

fn bearer() -> Option<PushAuth> {
    Some(PushAuth {
        schemes: vec!["Bearer".into()],
        credentials: Some("s3cret".into()),
    })
}

#[test]
fn a_delivery_without_the_configs_authorization_is_push_auth_missing() {
    let mut s = session();
    registered(&mut s, vec![reg("k", bearer())], "TASK_STATE_WORKING", None);
    let body = status("TASK_STATE_WORKING", None);
    for (sent, want) in [
        (None, vec![Kind::PushAuthMissing]),
        (Some("Basic s3cret"), vec![Kind::PushAuthMissing]),
        (Some("Bearer other"), vec![Kind::PushAuthMissing]),
        (Some("Bearer s3cret"), vec![]),
        (Some("bearer s3cret"), vec![]),
    ] {
        assert_eq!(
            deliver(&mut s, &delivery("k", sent, &body, 5), 200),
            want,
            "{sent:?}"
        );
    }
    let mut out = Vec::new();
    s.deliver(99, &delivery("k", None, &body, 5), 200, &mut out);
    assert!(
        !out[0].finding.detail.contains("s3cret"),
        "no credentials written"
    );
    // A config without authentication owes none.
    let mut s = session();
    registered(&mut s, vec![reg("k", None)], "TASK_STATE_WORKING", None);
    assert_eq!(deliver(&mut s, &delivery("k", None, &body, 5), 200), []);
}

#[test]
fn repeats_and_stale_retries_are_not_findings_but_a_later_stamped_exit_is() {
    let mut s = session();
    let done = "2026-01-01T00:00:10Z";
    registered(
        &mut s,
        vec![reg("k", None)],
        "TASK_STATE_COMPLETED",
        Some(done),
    );
    // The terminal state again, twice: at-least-once.
    let again = status("TASK_STATE_COMPLETED", Some(done));
    assert_eq!(deliver(&mut s, &delivery("k", None, &again, 5), 200), []);
    assert_eq!(deliver(&mut s, &delivery("k", None, &again, 6), 300), []);
    // A retry of a working status stamped before: stale.
    let old = status("TASK_STATE_WORKING", Some("2026-01-01T00:00:05Z"));
    assert_eq!(deliver(&mut s, &delivery("k", None, &old, 7), 400), []);
    // Without a stamp the order is not certain: counted, not accused.
    let mut out = Vec::new();
    let unstamped = status("TASK_STATE_WORKING", None);
    let judged = s.deliver(99, &delivery("k", None, &unstamped, 8), 500, &mut out);
    assert!(judged.unwrap().unordered);
    assert!(out.is_empty(), "{out:?}");
    // Stamped after the terminal state: the agent says the task left it.
    let later = status("TASK_STATE_WORKING", Some("2026-01-01T00:00:20Z"));
    assert_eq!(
        deliver(&mut s, &delivery("k", None, &later, 9), 600),
        [Kind::TerminalExit]
    );
}

#[test]
fn a_delivery_before_the_tasks_first_answer_is_learned() {
    let mut s = session();
    let mut out = Vec::new();
    s.open(1, send(Version::V1_0), Seq::after_messages(0));
    s.push_registered(1, vec![reg("k", None)]);
    // The agent delivers before its answer reached the proxy.
    let first = status("TASK_STATE_COMPLETED", None);
    assert_eq!(deliver(&mut s, &delivery("k", None, &first, 2), 50), []);
    s.head(1, Head::read(200, Some("application/json"), None), &mut out);
    let body = task_body("TASK_STATE_SUBMITTED", None);
    s.piece(1, body.as_bytes(), 100, &mut Quiet, &mut out);
    s.end(1, End::Upstream, None, 100, &mut Quiet, &mut out);
    assert!(
        out.is_empty(),
        "the answer sent before is not accused: {out:?}"
    );
    s.tick(100 + 2 * WAIT, &mut out);
    assert!(out.is_empty(), "the terminal state was delivered: {out:?}");
}

#[test]
fn a_delivery_about_another_task_or_of_another_shape_is_judged() {
    let mut s = session();
    registered(&mut s, vec![reg("k", None)], "TASK_STATE_WORKING", None);
    let other = r#"{"statusUpdate":{"taskId":"other","status":{"state":"TASK_STATE_WORKING"}}}"#;
    assert_eq!(
        deliver(&mut s, &delivery("k", None, other, 5), 200),
        [Kind::TaskIdMismatch]
    );
    let bare = r#"{"id":"t","status":{"state":"TASK_STATE_WORKING"}}"#;
    assert_eq!(
        deliver(&mut s, &delivery("k", None, bare, 5), 200),
        [Kind::MalformedEvent]
    );
    assert_eq!(
        deliver(&mut s, &delivery("k", None, "not json", 5), 200),
        [Kind::MalformedEvent]
    );
    let artifact = r#"{"artifactUpdate":{"taskId":"t","artifact":{"artifactId":"a","parts":[]}}}"#;
    assert_eq!(deliver(&mut s, &delivery("k", None, artifact, 5), 200), []);
}

#[test]
fn a_0_3_config_takes_0_3_shapes() {
    let mut s = session();
    let mut out = Vec::new();
    s.open(1, send(Version::V0_3), Seq::after_messages(0));
    let mut r = reg("k", None);
    r.version = Version::V0_3;
    s.push_registered(1, vec![r]);
    s.head(1, Head::read(200, Some("application/json"), None), &mut out);
    let body = r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}}"#;
    s.piece(1, body.as_bytes(), 100, &mut Quiet, &mut out);
    s.end(1, End::Upstream, None, 100, &mut Quiet, &mut out);
    let task = r#"{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"}}"#;
    assert_eq!(deliver(&mut s, &delivery("k", None, task, 5), 200), []);
    let wrapped = status("TASK_STATE_COMPLETED", None);
    assert_eq!(
        deliver(&mut s, &delivery("k", None, &wrapped, 6), 300),
        [Kind::VersionMismatch]
    );
}

#[test]
fn a_terminal_state_never_delivered_is_push_not_delivered_once() {
    let mut s = session();
    registered(&mut s, vec![reg("k", None)], "TASK_STATE_WORKING", None);
    let mut out = Vec::new();
    // The task completes on another exchange.
    s.open(2, send(Version::V1_0), Seq::after_messages(4));
    s.head(2, Head::read(200, Some("application/json"), None), &mut out);
    let done = task_body("TASK_STATE_COMPLETED", None);
    s.piece(2, done.as_bytes(), 1_000, &mut Quiet, &mut out);
    s.end(2, End::Upstream, None, 1_000, &mut Quiet, &mut out);
    // Ticks come a second apart: the first after the terminal state may be
    // almost a second later. The wait counts from when it was seen.
    s.tick(1_900, &mut out);
    s.tick(1_000 + WAIT - 1, &mut out);
    assert!(out.is_empty(), "{out:?}");
    s.tick(1_000 + WAIT, &mut out);
    assert_eq!(kinds(&out), [Kind::PushNotDelivered]);
    assert_eq!(out[0].finding.task_id.as_deref(), Some("t"));
    s.tick(1_000 + 3 * WAIT, &mut out);
    assert_eq!(out.len(), 1, "once");
}

#[test]
fn no_promise_once_the_webhook_failed_or_the_state_was_delivered() {
    for failed in [true, false] {
        let mut s = session();
        registered(&mut s, vec![reg("k", None)], "TASK_STATE_WORKING", None);
        let mut d = delivery("k", None, &status("TASK_STATE_WORKING", None), 3);
        if failed {
            d.answer = WebhookAnswer::Error;
        } else {
            d.body = Some(status("TASK_STATE_COMPLETED", None).into_bytes());
        }
        assert_eq!(deliver(&mut s, &d, 200), []);
        let mut out = Vec::new();
        s.open(2, send(Version::V1_0), Seq::after_messages(4));
        s.head(2, Head::read(200, Some("application/json"), None), &mut out);
        let done = task_body("TASK_STATE_COMPLETED", None);
        s.piece(2, done.as_bytes(), 1_000, &mut Quiet, &mut out);
        s.end(2, End::Upstream, None, 1_000, &mut Quiet, &mut out);
        s.tick(1_000, &mut out);
        s.tick(1_000 + 2 * WAIT, &mut out);
        assert!(out.is_empty(), "failed={failed}: {out:?}");
    }
}

#[test]
fn a_delivery_after_the_deletion_was_answered_is_push_after_delete() {
    let mut s = session();
    registered(&mut s, vec![reg("k", None)], "TASK_STATE_WORKING", None);
    let mut out = Vec::new();
    let mut delete = send(Version::V1_0);
    delete.operation = Operation::DeleteTaskPushNotificationConfig;
    delete.task_id = Some("t".into());
    s.registry_mut().at_message(10);
    s.open(2, delete, Seq::after_messages(10));
    s.push_deleting(2, Some("t".into()), Some("cfg".into()));
    s.head(2, Head::read(200, Some("application/json"), None), &mut out);
    s.registry_mut().at_message(12);
    s.end(2, End::Upstream, None, 500, &mut Quiet, &mut out);
    let body = status("TASK_STATE_WORKING", None);
    // Sent before the answer (in flight): not accused.
    assert_eq!(deliver(&mut s, &delivery("k", None, &body, 11), 600), []);
    assert_eq!(
        deliver(&mut s, &delivery("k", None, &body, 13), 700),
        [Kind::PushAfterDelete]
    );
    // A delete of another config id, or a refused delete, changes nothing.
    let mut s = session();
    registered(&mut s, vec![reg("k", None)], "TASK_STATE_WORKING", None);
    let mut delete = send(Version::V1_0);
    delete.operation = Operation::DeleteTaskPushNotificationConfig;
    s.open(2, delete, Seq::after_messages(10));
    s.push_deleting(2, Some("t".into()), Some("other".into()));
    s.end(2, End::Upstream, None, 500, &mut Quiet, &mut out);
    assert_eq!(deliver(&mut s, &delivery("k", None, &body, 13), 700), []);
}

#[test]
fn a_task_done_within_its_registering_answer_owes_its_delivery() {
    let mut s = session();
    registered(&mut s, vec![reg("k", None)], "TASK_STATE_COMPLETED", None);
    let mut out = Vec::new();
    s.tick(200, &mut out);
    s.tick(200 + WAIT, &mut out);
    assert_eq!(kinds(&out), [Kind::PushNotDelivered]);
    // A config taken for a task already terminal before it owes nothing.
    let mut s = session();
    registered(&mut s, vec![], "TASK_STATE_COMPLETED", None);
    let mut create = send(Version::V1_0);
    create.operation = Operation::CreateTaskPushNotificationConfig;
    create.task_id = Some("t".into());
    let seq = s.next_seq();
    s.open(2, create, seq);
    s.push_registered(2, vec![reg("k2", None)]);
    s.head(2, Head::read(200, Some("application/json"), None), &mut out);
    s.end(2, End::Upstream, None, 300, &mut Quiet, &mut out);
    out.clear();
    s.tick(300, &mut out);
    s.tick(300 + 2 * WAIT, &mut out);
    assert!(out.is_empty(), "{out:?}");
}

/// A delivery not read whole (over the body limit, no room to judge it)
/// may have carried the terminal state: no `push_not_delivered` rests on
/// its registration.
#[test]
fn a_delivery_not_read_owes_no_promise() {
    let mut s = session();
    registered(&mut s, vec![reg("k", None)], "TASK_STATE_WORKING", None);
    let mut d = delivery("k", None, "", 3);
    d.body = None;
    assert_eq!(deliver(&mut s, &d, 200), []);
    let mut out = Vec::new();
    s.open(2, send(Version::V1_0), Seq::after_messages(4));
    s.head(2, Head::read(200, Some("application/json"), None), &mut out);
    let done = task_body("TASK_STATE_COMPLETED", None);
    s.piece(2, done.as_bytes(), 1_000, &mut Quiet, &mut out);
    s.end(2, End::Upstream, None, 1_000, &mut Quiet, &mut out);
    s.tick(1_000, &mut out);
    s.tick(1_000 + 2 * WAIT, &mut out);
    assert!(out.is_empty(), "{out:?}");
}
