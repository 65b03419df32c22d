//! Catalogue kinds about a response's shape: how a stream starts, Messages,
//! JSON-RPC ids, malformed payloads, blocking sends, and how streams end.

use crate::world::*;
use a2a_tap::a2a::model::{A2aError, Malformed, Operation, RpcId};
use a2a_tap::findings::{Kind, Severity};
use a2a_tap::lifecycle::{End, Outcome};

use Operation::{ListTasks, SendMessage, SendStreamingMessage as Stream, SubscribeToTask};
use Severity::{Error, Warning};

#[test]
fn stream_start() {
    let mut w = World::new();
    // The Python SDK's follow-up stream begins with a status update.
    let frames = [upd("t", "c", "working"), upd("t", "c", "completed")];
    let (f, _) = w.stream(ex(Stream, Some("t")), &frames, End::Upstream);
    let f0 = only(&f, Kind::StreamStart);
    is(f0, Kind::StreamStart, Error, Some("t"), Some(0));
    assert!(f0.detail.contains("began with a status update"));
    // A subscribe stream may not begin with a Message.
    let (f, _) = w.stream(ex(SubscribeToTask, Some("t2")), &[msg(None)], End::Upstream);
    is(
        only(&f, Kind::StreamStart),
        Kind::StreamStart,
        Error,
        Some("t2"),
        Some(0),
    );
    // Look-alikes: one Message; a Task snapshot first; an error before the
    // first event as a plain JSON body; an unreadable first frame.
    let (f, o) = w.stream(ex(Stream, None), &[msg(None)], End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(o, Outcome::Terminal);
    let (f, _) = w.stream(
        ex(Stream, None),
        &[task("t3", "c", "submitted"), upd("t3", "c", "completed")],
        End::Upstream,
    );
    assert!(f.is_empty(), "{f:#?}");
    let f = w.body(
        ex(Stream, Some("t")),
        400,
        &err(A2aError::UnsupportedOperation, -32004),
    );
    assert!(f.is_empty(), "{f:#?}");
    let mut r = w.open(ex(Stream, None));
    let mut out = Vec::new();
    r.on_response_head(200, true);
    r.on_malformed(Some(0), &Malformed("not JSON".into()), &mut out);
    r.on_decoded(
        Some(1),
        &upd("t", "c", "completed"),
        &mut w.reg,
        1,
        &mut out,
    );
    is(
        only(&out, Kind::MalformedEvent),
        Kind::MalformedEvent,
        Error,
        None,
        Some(0),
    );
}

#[test]
fn message_not_alone() {
    let mut w = World::new();
    let frames = [
        msg(None),
        upd("t1", "c", "working"),
        upd("t1", "c", "completed"),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::Upstream);
    is(
        only(&f, Kind::MessageNotAlone),
        Kind::MessageNotAlone,
        Error,
        Some("t1"),
        Some(1),
    );
    assert_eq!(
        f[0].detail,
        "expected a stream that carried a Message to carry nothing else; it also carried another event (status_update)"
    );
    let (f, o) = w.stream(
        ex(Stream, None),
        &[msg(None), err(A2aError::Other, -32603)],
        End::Upstream,
    );
    is(
        only(&f, Kind::MessageNotAlone),
        Kind::MessageNotAlone,
        Error,
        None,
        Some(1),
    );
    assert_eq!(o, Outcome::Terminal);
    let frames = [
        task("t2", "c", "working"),
        msg(Some("t2")),
        upd("t2", "c", "completed"),
    ];
    let (f, _) = w.stream(ex(Stream, None), &frames, End::Upstream);
    is(
        only(&f, Kind::MessageNotAlone),
        Kind::MessageNotAlone,
        Error,
        Some("t2"),
        Some(1),
    );
    // Look-alike: the Message is alone.
    let (f, _) = w.stream(ex(Stream, None), &[msg(Some("t3"))], End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn jsonrpc_id_mismatch() {
    let mut w = World::new();
    let wrong = with_id(upd("t", "c", "completed"), Some(RpcId::Number("2".into())));
    let (f, _) = w.stream(
        ex(Stream, None),
        &[task("t", "c", "working"), wrong],
        End::Upstream,
    );
    let f0 = only(&f, Kind::JsonrpcIdMismatch);
    is(f0, Kind::JsonrpcIdMismatch, Error, Some("t"), Some(1));
    assert_eq!(f0.detail, "expected JSON-RPC id 1 on this SSE frame; got 2");
    let body = with_id(task("t", "c", "completed"), Some(RpcId::String("1".into())));
    let f = w.body(ex(Operation::GetTask, Some("t")), 200, &body);
    is(
        only(&f, Kind::JsonrpcIdMismatch),
        Kind::JsonrpcIdMismatch,
        Error,
        Some("t"),
        None,
    );
    // Look-alikes: REST has no ids; a parse error may carry a null id.
    let f = w.body(
        rest(Operation::GetTask, Some("t")),
        200,
        &with_id(task("t", "c", "completed"), None),
    );
    assert!(f.is_empty(), "{f:#?}");
    let parse = with_id(err(A2aError::Other, -32700), Some(RpcId::Null));
    let f = w.body(ex(SendMessage, None), 200, &parse);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn malformed_event() {
    let mut w = World::new();
    let mut r = w.open(ex(Stream, None));
    let mut out = w.feed(&mut r, &[task("t", "c", "working"), list(vec![])]);
    r.on_malformed(Some(2), &Malformed("invalid UTF-8".into()), &mut out);
    assert_eq!(kinds(&out), vec![Kind::MalformedEvent; 2]);
    is(&out[0], Kind::MalformedEvent, Error, Some("t"), Some(1));
    is(&out[1], Kind::MalformedEvent, Error, Some("t"), Some(2));
    assert!(out[1].detail.contains("invalid UTF-8"));
    // Wrong shape for the operation in a plain body.
    let f = w.body(ex(Operation::GetTask, Some("t")), 200, &msg(None));
    is(
        only(&f, Kind::MalformedEvent),
        Kind::MalformedEvent,
        Error,
        Some("t"),
        None,
    );
    let f = w.body(ex(ListTasks, None), 200, &task("t", "c", "working"));
    only(&f, Kind::MalformedEvent);
    let f = w.body(ex(SendMessage, None), 200, &upd("t", "c", "working"));
    only(&f, Kind::MalformedEvent);
    // Look-alikes: a ListTasks result; a body of an operation not modelled.
    let f = w.body(
        ex(ListTasks, None),
        200,
        &list(vec![snapshot("t", "c", "working", &[])]),
    );
    assert!(f.is_empty(), "{f:#?}");
    let mut r = w.open(ex(Operation::GetTaskPushNotificationConfig, Some("t")));
    let mut out = Vec::new();
    r.on_response_head(200, false);
    r.on_malformed(None, &Malformed("unknown shape".into()), &mut out);
    assert!(out.is_empty(), "{out:#?}");
}

#[test]
fn blocking_returned_active() {
    let mut w = World::new();
    let mut blocking = ex(SendMessage, None);
    blocking.blocking = true;
    for state in ["submitted", "working"] {
        let f = w.body(blocking.clone(), 200, &task("t", "c", state));
        let f0 = only(&f, Kind::BlockingReturnedActive);
        is(f0, Kind::BlockingReturnedActive, Error, Some("t"), None);
        assert!(f0.detail.ends_with(&format!("came back {state}")));
    }
    // Look-alikes: interrupted or terminal; or not blocking.
    for state in ["input_required", "auth_required", "completed"] {
        let f = w.body(
            blocking.clone(),
            200,
            &task(&format!("b-{state}"), "c", state),
        );
        assert!(f.is_empty(), "{f:#?}");
    }
    let f = w.body(ex(SendMessage, None), 200, &task("nb", "c", "working"));
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn stream_truncated_and_outcomes() {
    let mut w = World::new();
    let working = [task("t", "c", "submitted"), upd("t", "c", "working")];
    for end in [End::Upstream, End::UpstreamError] {
        let (f, o) = w.stream(ex(Stream, None), &working, end);
        is(
            only(&f, Kind::StreamTruncated),
            Kind::StreamTruncated,
            Warning,
            Some("t"),
            None,
        );
        assert_eq!(o, Outcome::Truncated);
    }
    // Look-alikes: the caller hung up; 0.3 final:true at working; the
    // stream closed at input-required or auth-required.
    let (f, o) = w.stream(ex(Stream, None), &working, End::ClientGone);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(o, Outcome::ClientGone);
    let frames = [
        task("t", "c", "submitted"),
        upd_final("t", Some("c"), "working", Some(true)),
    ];
    let (f, o) = w.stream(ex(Stream, None), &frames, End::Upstream);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(o, Outcome::Interrupted);
    for state in ["input_required", "auth_required"] {
        let (f, o) = w.stream(
            ex(Stream, None),
            &[task("t", "c", "working"), upd("t", "c", state)],
            End::Upstream,
        );
        assert!(f.is_empty(), "{f:#?}");
        assert_eq!(o, Outcome::Interrupted);
    }
    let labels: Vec<_> = Outcome::ALL.iter().map(|o| o.as_str()).collect();
    assert_eq!(
        labels,
        ["terminal", "interrupted", "truncated", "client_gone"]
    );
}

#[test]
fn on_end_is_idempotent_and_later_calls_are_ignored() {
    let mut w = World::new();
    let mut r = w.open(ex(Stream, None));
    let mut out = w.feed(&mut r, &[task("t", "c", "working")]);
    assert_eq!(w.end(&mut r, End::Upstream, &mut out), Outcome::Truncated);
    assert_eq!(w.end(&mut r, End::ClientGone, &mut out), Outcome::Truncated);
    r.on_decoded(
        Some(1),
        &art("t", "x", true, false),
        &mut w.reg,
        9,
        &mut out,
    );
    assert_eq!(kinds(&out), vec![Kind::StreamTruncated]);
}

#[test]
fn skipped_frames_withhold_history_findings() {
    let mut w = World::new();
    let mut r = w.open(ex(Stream, None));
    let mut out = Vec::new();
    r.on_response_head(200, true);
    r.on_skipped(Some(0));
    let frames = [
        upd("t", "c", "working"),
        art("t", "a", true, false),
        upd("t", "c", "failed"),
    ];
    for (i, f) in frames.iter().enumerate() {
        r.on_decoded(Some(i as u64 + 1), f, &mut w.reg, 5, &mut out);
    }
    assert!(out.is_empty(), "{out:#?}");
    // A stream whose later frame was skipped is not called truncated.
    let mut r = w.open(ex(Stream, None));
    let mut out = w.feed(&mut r, &[task("u", "c", "working")]);
    r.on_decoded(Some(5), &upd("u", "c", "working"), &mut w.reg, 6, &mut out);
    assert_eq!(w.end(&mut r, End::Upstream, &mut out), Outcome::Truncated);
    assert!(
        out.is_empty(),
        "an index gap makes the end uncertain: {out:#?}"
    );
    // Certain facts are still reported after a gap.
    r = w.open(ex(Stream, None));
    let mut out = w.feed(&mut r, &[task("v", "c", "completed")]);
    r.on_skipped(Some(1));
    r.on_decoded(Some(2), &upd("v", "c", "working"), &mut w.reg, 7, &mut out);
    is(
        only(&out, Kind::TerminalExit),
        Kind::TerminalExit,
        Error,
        Some("v"),
        Some(2),
    );
}

#[test]
fn without_a_head_the_index_decides() {
    let mut w = World::new();
    let mut r = w.open(ex(Stream, None));
    let mut out = Vec::new();
    r.on_decoded(Some(0), &upd("t", "c", "working"), &mut w.reg, 1, &mut out);
    is(
        only(&out, Kind::StreamStart),
        Kind::StreamStart,
        Error,
        Some("t"),
        Some(0),
    );
    assert_eq!(
        w.end(&mut r, End::UpstreamError, &mut out),
        Outcome::Truncated
    );
    assert_eq!(kinds(&out), vec![Kind::StreamStart, Kind::StreamTruncated]);
    let mut blocking = ex(SendMessage, None);
    blocking.blocking = true;
    let mut r = w.open(blocking);
    let mut out = Vec::new();
    r.on_decoded(None, &task("b", "c", "working"), &mut w.reg, 2, &mut out);
    is(
        only(&out, Kind::BlockingReturnedActive),
        Kind::BlockingReturnedActive,
        Error,
        Some("b"),
        None,
    );
    assert_eq!(w.end(&mut r, End::Upstream, &mut out), Outcome::Terminal);
    assert_eq!(r.task_id(), Some("b"));
    assert_eq!(r.context_id(), Some("c"));
}

#[test]
fn jsonrpc_id_mismatch_on_the_first_frame_names_the_task() {
    let mut w = World::new();
    let first = with_id(task("t", "c", "completed"), Some(RpcId::Number("7".into())));
    let (f, _) = w.stream(ex(Stream, None), &[first], End::Upstream);
    let f0 = only(&f, Kind::JsonrpcIdMismatch);
    is(f0, Kind::JsonrpcIdMismatch, Error, Some("t"), Some(0));
    assert_eq!(f0.context_id.as_deref(), Some("c"));
}
