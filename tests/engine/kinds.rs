//! Catalogue kinds about task states, identity and artifacts, judged on one
//! stream or body: a trace that provokes each, and a legal look-alike.

use crate::world::*;
use a2a_tap::a2a::model::{A2aError, Operation};
use a2a_tap::findings::{Kind, Severity};
use a2a_tap::lifecycle::{End, Outcome};

use Operation::{SendStreamingMessage as Stream, SubscribeToTask};
use Severity::{Error, Warning};

#[test]
fn terminal_exit_on_the_same_stream() {
    let mut w = World::new();
    let frames = [
        task("t1", "c", "submitted"),
        upd("t1", "c", "completed"),
        upd("t1", "c", "working"),
    ];
    let (f, o) = w.stream(ex(Stream, None), &frames, End::Upstream);
    let f = only(&f, Kind::TerminalExit);
    is(f, Kind::TerminalExit, Error, Some("t1"), Some(2));
    assert_eq!(f.detail, "task t1 was completed and then reported working");
    assert_eq!(f.context_id.as_deref(), Some("c"));
    assert_eq!(o, Outcome::Terminal);
    // Look-alike: the stream ends at the terminal state.
    let frames = [task("t2", "c", "submitted"), upd("t2", "c", "completed")];
    let (f, o) = w.stream(ex(Stream, None), &frames, End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(o, Outcome::Terminal);
}

#[test]
fn unspecified_and_unknown_states() {
    let mut w = World::new();
    let frames = [
        task("t1", "c", "submitted"),
        upd("t1", "c", "TASK_STATE_UNSPECIFIED"),
        upd("t1", "c", "unknown"),
        upd("t1", "c", "TASK_STATE_PAUSED"),
        upd("t1", "c", "completed"),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::Upstream);
    assert_eq!(
        kinds(&f),
        vec![
            Kind::UnspecifiedState,
            Kind::UnspecifiedState,
            Kind::UnknownState
        ]
    );
    is(&f[0], Kind::UnspecifiedState, Error, Some("t1"), Some(1));
    is(&f[1], Kind::UnspecifiedState, Error, Some("t1"), Some(2));
    is(&f[2], Kind::UnknownState, Error, Some("t1"), Some(3));
    assert!(f[2].detail.contains("TASK_STATE_PAUSED"));
    // In a plain body too.
    let f = w.body(
        ex(Operation::GetTask, Some("t2")),
        200,
        &task("t2", "c", "rebooting"),
    );
    is(
        only(&f, Kind::UnknownState),
        Kind::UnknownState,
        Error,
        Some("t2"),
        None,
    );
}

#[test]
fn task_id_mismatch() {
    let mut w = World::new();
    let frames = [
        task("t1", "c", "working"),
        upd("t2", "c", "completed"),
        upd("t1", "c", "completed"),
    ];
    let (f, o) = w.stream(ex(Stream, None), &frames, End::Upstream);
    let f0 = only(&f, Kind::TaskIdMismatch);
    is(f0, Kind::TaskIdMismatch, Error, Some("t1"), Some(1));
    assert!(f0.detail.contains("t2"));
    assert_eq!(
        o,
        Outcome::Terminal,
        "the foreign completion did not end t1's stream"
    );
    // A subscribe stream is about the task it names, from its first event.
    let (f, _) = w.stream(
        ex(SubscribeToTask, Some("t3")),
        &[task("t4", "c", "working")],
        End::ClientGone,
    );
    is(
        only(&f, Kind::TaskIdMismatch),
        Kind::TaskIdMismatch,
        Error,
        Some("t3"),
        Some(0),
    );
    // Look-alike: every event names the stream's task.
    let (f, _) = w.stream(
        ex(Stream, None),
        &[task("t5", "c", "working"), upd("t5", "c", "completed")],
        End::Upstream,
    );
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn context_id_mismatch_on_the_stream() {
    let mut w = World::new();
    let frames = [
        task("t1", "c1", "working"),
        upd("t1", "c2", "working"),
        upd("t1", "c2", "completed"),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::Upstream);
    let f0 = only(&f, Kind::ContextIdMismatch);
    is(f0, Kind::ContextIdMismatch, Warning, Some("t1"), Some(1));
    assert_eq!(f0.context_id.as_deref(), Some("c2"));
    // Look-alike: events without a contextId (0.3 dumps) say nothing.
    let frames = [
        task("t2", "c1", "working"),
        upd_final("t2", None, "completed", Some(true)),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn abandoned_artifact_severity_follows_the_end() {
    let mut w = World::new();
    let open = |end: &str| {
        [
            task(end, "c", "working"),
            art(end, "a-1", false, false),
            upd(end, "c", end),
        ]
    };
    for (end, sev) in [
        ("failed", Warning),
        ("canceled", Warning),
        ("rejected", Warning),
        ("completed", Error),
    ] {
        let (f, o) = w.stream(ex(Stream, None), &open(end), End::Upstream);
        let f0 = only(&f, Kind::AbandonedArtifact);
        is(f0, Kind::AbandonedArtifact, sev, Some(end), Some(2));
        assert!(
            f0.detail.contains("a-1") && f0.detail.contains(end),
            "{}",
            f0.detail
        );
        assert_eq!(o, Outcome::Terminal);
    }
    // Look-alike: every artifact got its lastChunk (after appends and a
    // replacement while it was open); snapshot artifacts are known, not open.
    let frames = [
        task_with("t", "c", "working", &["from-snapshot"]),
        art("t", "a-1", false, false),
        art("t", "a-1", true, true),
        art("t", "a-2", false, false),
        art("t", "a-2", false, false),
        art("t", "a-2", true, true),
        upd("t", "c", "completed"),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn one_finding_per_abandoned_artifact() {
    let mut w = World::new();
    let frames = [
        task("t", "c", "working"),
        art("t", "spec", false, true),
        art("t", "b", false, false),
        art("t", "a", false, false),
        upd("t", "c", "failed"),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::Upstream);
    assert_eq!(kinds(&f), vec![Kind::AbandonedArtifact; 2]);
    assert!(f[0].detail.contains("artifact a ") && f[1].detail.contains("artifact b "));
}

#[test]
fn subscribe_streams_reconcile_artifacts() {
    let mut w = World::new();
    // A replayed terminal without the artifact frames before it, and an
    // append to an artifact opened before we subscribed: silent.
    let frames = [
        task("t", "c", "working"),
        art("t", "a-1", true, false),
        upd("t", "c", "completed"),
        upd("t", "c", "completed"),
    ];
    let (f, o) = w.stream(ex(SubscribeToTask, Some("t")), &frames, End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(o, Outcome::Terminal);
}

#[test]
fn append_to_unknown_artifact() {
    let mut w = World::new();
    let frames = [
        task("t", "c", "working"),
        art("t", "a-9", true, false),
        art("t", "a-9", true, true),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::ClientGone);
    is(
        only(&f, Kind::AppendToUnknownArtifact),
        Kind::AppendToUnknownArtifact,
        Warning,
        Some("t"),
        Some(1),
    );
    // Look-alikes: the snapshot lists it; or it was opened on the stream.
    let frames = [
        task_with("t", "c", "working", &["a-9"]),
        art("t", "a-9", true, true),
        art("t", "b", false, false),
        art("t", "b", true, true),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::ClientGone);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn event_after_terminal() {
    let mut w = World::new();
    for (t, extra, what) in [
        ("t1", art("t1", "late", false, true), "artifact_update"),
        ("t2", msg(Some("t2")), "message"),
        ("t3", err(A2aError::Other, -32603), "error"),
        ("t4", upd("t4", "c", "completed"), "repeating completed"),
    ] {
        let frames = [task(t, "c", "working"), upd(t, "c", "completed"), extra];
        let (f, o) = w.stream(ex(Stream, None), &frames, End::Upstream);
        let f0 = only(&f, Kind::EventAfterTerminal);
        is(f0, Kind::EventAfterTerminal, Error, Some(t), Some(2));
        assert!(f0.detail.contains(what), "{}", f0.detail);
        assert_eq!(o, Outcome::Terminal);
    }
    // Look-alike: a subscribe stream to a finished task replays its state.
    let frames = [task("t", "c", "completed"), upd("t", "c", "completed")];
    let (f, _) = w.stream(ex(SubscribeToTask, Some("t")), &frames, End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
}
