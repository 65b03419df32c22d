//! Kinds judged across exchanges through the registry: causal terminal exits,
//! contextId changes, terminal tasks accepted, stalls, and the bounds.

use crate::world::*;
use a2a_tap::a2a::model::{A2aError, Operation, TaskState};
use a2a_tap::findings::{Kind, Severity};
use a2a_tap::lifecycle::{End, Registry, RegistryConfig};

use Operation::{
    CancelTask, GetTask, ListTasks, SendMessage, SendStreamingMessage as Stream, SubscribeToTask,
};
use Severity::{Error, Warning};

fn completed(w: &mut World, t: &str) {
    let (f, _) = w.stream(
        ex(Stream, None),
        &[task(t, "c", "working"), upd(t, "c", "completed")],
        End::Upstream,
    );
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn get_task_after_completion_reporting_working() {
    let mut w = World::new();
    completed(&mut w, "t1");
    let f = w.body(ex(GetTask, Some("t1")), 200, &task("t1", "c", "working"));
    let f0 = only(&f, Kind::TerminalExit);
    is(f0, Kind::TerminalExit, Error, Some("t1"), None);
    assert_eq!(
        f0.detail,
        "task t1 was completed before this GetTask was sent and is now reported working"
    );
}

#[test]
fn get_task_sent_before_the_completion_was_seen_may_lag() {
    let mut w = World::new();
    let mut get = w.open(ex(GetTask, Some("t1")));
    completed(&mut w, "t1");
    let f = w.answer(&mut get, 200, &task("t1", "c", "working"));
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(w.reg.state_of("t1"), Some(TaskState::Completed));
}

#[test]
fn a_status_stamped_before_the_terminal_one_is_stale() {
    let mut w = World::new();
    let frames = [
        task("t1", "c", "working"),
        upd_at("t1", "c", "completed", "2026-11-06T10:00:05Z"),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
    let f = w.body(
        ex(GetTask, Some("t1")),
        200,
        &task_at("t1", "c", "working", "2026-11-06T11:00:04+01:00"),
    );
    // Stale, so no terminal_exit; the offset itself breaks 1.0 §5.6.1.
    let kinds: Vec<Kind> = f.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [Kind::InvalidTimestamp], "{f:#?}");
    let f = w.body(
        ex(GetTask, Some("t1")),
        200,
        &task_at("t1", "c", "working", "2026-11-06T10:00:06Z"),
    );
    only(&f, Kind::TerminalExit);
}

#[test]
fn a_later_stream_contradicting_a_terminal_state() {
    let mut w = World::new();
    completed(&mut w, "t1");
    let (f, _) = w.stream(
        ex(SubscribeToTask, Some("t1")),
        &[task("t1", "c", "working")],
        End::ClientGone,
    );
    assert_eq!(
        kinds(&f),
        vec![Kind::TerminalTaskAccepted, Kind::TerminalExit]
    );
    is(
        &f[0],
        Kind::TerminalTaskAccepted,
        Error,
        Some("t1"),
        Some(0),
    );
    is(&f[1], Kind::TerminalExit, Error, Some("t1"), Some(0));
}

#[test]
fn list_tasks_entries_teach_the_registry() {
    let mut w = World::new();
    let f = w.body(
        ex(ListTasks, None),
        200,
        &list(vec![
            snapshot("a", "c", "failed", &[]),
            snapshot("b", "c", "working", &[]),
        ]),
    );
    assert!(f.is_empty(), "{f:#?}");
    let f = w.body(ex(GetTask, Some("a")), 200, &task("a", "c", "working"));
    is(
        only(&f, Kind::TerminalExit),
        Kind::TerminalExit,
        Error,
        Some("a"),
        None,
    );
    // A later ListTasks is a later response for the task too.
    let f = w.body(
        ex(ListTasks, None),
        200,
        &list(vec![
            snapshot("a", "c", "working", &[]),
            snapshot("z", "c", "completed", &[]),
        ]),
    );
    assert!(f.is_empty(), "the registry now says working: {f:#?}");
    let f = w.body(
        ex(ListTasks, None),
        200,
        &list(vec![snapshot("z", "c", "submitted", &[])]),
    );
    let f0 = only(&f, Kind::TerminalExit);
    is(f0, Kind::TerminalExit, Error, Some("z"), None);
    assert_eq!(
        f0.detail,
        "task z was completed before this ListTasks was sent and is now reported submitted"
    );
    // Entries are judged too, against the registry.
    let f = w.body(
        ex(ListTasks, None),
        200,
        &list(vec![snapshot("b", "c", "TASK_STATE_UNSPECIFIED", &[])]),
    );
    is(
        only(&f, Kind::UnspecifiedState),
        Kind::UnspecifiedState,
        Error,
        Some("b"),
        None,
    );
}

#[test]
fn context_id_changes_across_exchanges() {
    let mut w = World::new();
    let (f, _) = w.stream(
        ex(Stream, None),
        &[
            task("t1", "c1", "working"),
            upd("t1", "c1", "input_required"),
        ],
        End::Upstream,
    );
    assert!(f.is_empty(), "{f:#?}");
    let (f, _) = w.stream(
        ex(Stream, Some("t1")),
        &[
            task("t1", "c2", "working"),
            upd("t1", "c2", "input_required"),
        ],
        End::Upstream,
    );
    let f0 = only(&f, Kind::ContextIdMismatch);
    is(f0, Kind::ContextIdMismatch, Warning, Some("t1"), Some(0));
    assert_eq!(
        f0.detail,
        "expected task t1 to keep contextId c1 seen on an earlier exchange; got c2"
    );
    let f = w.body(
        ex(GetTask, Some("t1")),
        200,
        &task("t1", "c3", "input_required"),
    );
    is(
        only(&f, Kind::ContextIdMismatch),
        Kind::ContextIdMismatch,
        Warning,
        Some("t1"),
        None,
    );
    let f = w.body(
        ex(GetTask, Some("t1")),
        200,
        &task("t1", "c3", "input_required"),
    );
    assert!(f.is_empty(), "each change is reported once: {f:#?}");
}

#[test]
fn terminal_task_accepted() {
    let mut w = World::new();
    completed(&mut w, "t1");
    let f = w.body(ex(SendMessage, Some("t1")), 200, &msg(None));
    let f0 = only(&f, Kind::TerminalTaskAccepted);
    is(f0, Kind::TerminalTaskAccepted, Error, Some("t1"), None);
    assert_eq!(f0.detail, "expected SendMessage on task t1, already completed, to be refused; the upstream accepted it");
    let f = w.body(
        ex(CancelTask, Some("t1")),
        200,
        &task("t1", "c", "completed"),
    );
    is(
        only(&f, Kind::TerminalTaskAccepted),
        Kind::TerminalTaskAccepted,
        Error,
        Some("t1"),
        None,
    );
    let (f, _) = w.stream(
        ex(SubscribeToTask, Some("t1")),
        &[task("t1", "c", "completed")],
        End::Upstream,
    );
    is(
        only(&f, Kind::TerminalTaskAccepted),
        Kind::TerminalTaskAccepted,
        Error,
        Some("t1"),
        Some(0),
    );
    let (f, _) = w.stream(ex(Stream, Some("t1")), &[msg(Some("t1"))], End::Upstream);
    is(
        only(&f, Kind::TerminalTaskAccepted),
        Kind::TerminalTaskAccepted,
        Error,
        Some("t1"),
        Some(0),
    );
    // Look-alikes: the correct refusals.
    let refusals = [
        (
            SendMessage,
            400,
            err(A2aError::UnsupportedOperation, -32004),
        ),
        (Stream, 400, err(A2aError::UnsupportedOperation, -32004)),
        (
            SubscribeToTask,
            400,
            err(A2aError::UnsupportedOperation, -32004),
        ),
        (CancelTask, 400, err(A2aError::TaskNotCancelable, -32002)),
        (CancelTask, 200, err(A2aError::TaskNotCancelable, -32002)),
    ];
    for (op, status, body) in refusals {
        let f = w.body(ex(op, Some("t1")), status, &body);
        assert!(f.is_empty(), "{op}: {f:#?}");
    }
    // A new task in answer to a message naming the terminal one is no
    // acceptance of it: it is an answer about another task.
    let f = w.body(
        ex(SendMessage, Some("t1")),
        200,
        &task("t-new", "c", "completed"),
    );
    is(
        only(&f, Kind::TaskIdMismatch),
        Kind::TaskIdMismatch,
        Error,
        Some("t1"),
        None,
    );
}

#[test]
fn cancel_racing_completion_is_legal() {
    let mut w = World::new();
    let mut r = w.open(ex(Stream, None));
    let mut out = w.feed(&mut r, &[task("t9", "c", "working")]);
    let mut cancel = w.open(ex(CancelTask, Some("t9")));
    let mut cancel_ok = w.open(ex(CancelTask, Some("t9")));
    r.on_decoded(
        Some(1),
        &upd("t9", "c", "completed"),
        &mut w.reg,
        50,
        &mut out,
    );
    w.end(&mut r, End::Upstream, &mut out);
    assert!(out.is_empty(), "{out:#?}");
    let f = w.answer(&mut cancel, 400, &err(A2aError::TaskNotCancelable, -32002));
    assert!(f.is_empty(), "{f:#?}");
    // A cancel sent before completion was seen may also be answered with the
    // finished task.
    let f = w.answer(&mut cancel_ok, 200, &task("t9", "c", "completed"));
    assert!(f.is_empty(), "{f:#?}");
    let f = w.body(ex(GetTask, Some("t9")), 200, &task("t9", "c", "completed"));
    assert!(f.is_empty(), "{f:#?}");
}

/// What the proxy did not see is not evidence: a task whose stream closed
/// (here at input-required) and that a poll then shows working is never
/// reported stalled by the clock alone. A stream still open on the task,
/// silent past the limit, is evidence; so is a later answer with the very
/// status (same timestamp) the task had when first seen in that state.
#[test]
fn stalls_need_evidence() {
    let mut w = World::new();
    let (f, _) = w.stream(
        ex(Stream, None),
        &[task("t", "c", "working"), upd("t", "c", "input_required")],
        End::Upstream,
    );
    assert!(f.is_empty());
    let f = w.body(ex(GetTask, Some("t")), 200, &task("t", "c", "working"));
    assert!(f.is_empty());
    let mut out = Vec::new();
    w.reg.tick(w.now + 3_600_000, &mut out);
    assert!(out.is_empty(), "unwatched: {out:#?}");

    // An open stream on the task, silent in working.
    let mut r = w.open(ex(Stream, None));
    let f = w.feed(&mut r, &[task("open", "c", "working")]);
    assert!(f.is_empty());
    let since = w.now;
    w.reg.tick(since + 600_000, &mut out);
    assert!(out.is_empty(), "{out:#?}");
    w.reg.tick(since + 600_001, &mut out);
    let f0 = only(&out, Kind::StalledTask);
    is(f0, Kind::StalledTask, Warning, Some("open"), None);
    assert_eq!(
        f0.detail,
        "task open was expected to leave working within 600s; its open stream has been silent in that state for 600.0s"
    );
    assert_eq!(f0.context_id.as_deref(), Some("c"));
    // Once the stream has ended, a new entry into working is not watched.
    let mut end = Vec::new();
    w.end(&mut r, End::ClientGone, &mut end);
    w.body(
        ex(GetTask, Some("open")),
        200,
        &task("open", "c", "submitted"),
    );
    w.body(
        ex(GetTask, Some("open")),
        200,
        &task("open", "c", "working"),
    );
    out.clear();
    w.reg.tick(w.now + 7_200_000, &mut out);
    assert!(out.is_empty(), "{out:#?}");

    // A poll that shows the same stamped status past the limit.
    let ts = "2026-11-29T10:00:00Z";
    let f = w.body(
        ex(GetTask, Some("p")),
        200,
        &task_at("p", "c", "working", ts),
    );
    assert!(f.is_empty());
    w.now += 600_001;
    let f = w.body(
        ex(GetTask, Some("p")),
        200,
        &task_at("p", "c", "working", ts),
    );
    let f0 = only(&f, Kind::StalledTask);
    is(f0, Kind::StalledTask, Warning, Some("p"), None);
    let f = w.body(
        ex(GetTask, Some("p")),
        200,
        &task_at("p", "c", "working", ts),
    );
    assert!(f.is_empty(), "once per state entry: {f:#?}");
}

#[test]
fn lru_eviction_and_ttl_through_exchanges() {
    let mut w = World::new();
    w.reg = Registry::new(RegistryConfig {
        max_tasks: 2,
        ..RegistryConfig::default()
    });
    for t in ["a", "b", "c"] {
        w.body(ex(GetTask, Some(t)), 200, &task(t, "c", "working"));
    }
    assert_eq!(w.reg.len(), 2);
    assert_eq!(w.reg.evicted_total(), 1);
    assert_eq!(w.reg.state_of("a"), None);
    assert_eq!(w.reg.tracked_by_state(), [0, 2, 0, 0, 0, 0, 0, 0]);
    let mut out = Vec::new();
    w.reg.tick(w.now + 3_600_000, &mut out);
    assert!(w.reg.is_empty());
    assert!(out.is_empty(), "polled tasks expire unjudged: {out:#?}");
    let mut n = 0;
    w.reg.take_transitions(&mut |from, to, k| {
        assert_eq!((from, to), (None, TaskState::Working));
        n += k;
    });
    assert_eq!(n, 3);
}
