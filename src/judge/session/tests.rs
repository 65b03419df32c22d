//! The session's messages, driven one by one as the analysis thread does.

use super::*;
use crate::a2a::model::{Binding, Operation, RpcId, Version};
use crate::findings::Kind;
use crate::lifecycle::Seq;

fn streaming(task: Option<&str>) -> Exchange {
    Exchange {
        binding: Binding::JsonRpc,
        version: Version::V1_0,
        operation: Operation::SendStreamingMessage,
        rpc_id: Some(RpcId::Number("1".into())),
        task_id: task.map(str::to_owned),
        context_id: None,
        blocking: false,
        guessed_path: None,
        message_id: None,
    }
}

const COMPLETED: &[u8] = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\n\n";

struct Quiet;
impl Sink for Quiet {
    fn finding(&mut self, _: Finding) {}
}

/// A stream left open after its last word is reported by the tick once
/// `close_wait` has passed, once, with the exchange's id; its end then
/// closes it in the session.
#[test]
fn a_tick_reports_a_stream_left_open_once_with_its_id() {
    let mut s = Session::new(&Settings::default()).live("");
    let mut out = Vec::new();
    s.open(7, streaming(None), Seq::after_messages(0));
    let head = Head::read(200, Some("text/event-stream"), None);
    assert_eq!(s.head(7, head, &mut out), None);
    assert_eq!(s.piece(7, COMPLETED, 1_000, &mut Quiet, &mut out), None);
    assert!(out.is_empty(), "{out:?}");
    s.tick(1_000 + 4_999, &mut out);
    assert!(out.is_empty(), "nothing before close_wait: {out:?}");
    s.tick(1_000 + 5_000, &mut out);
    let kinds: Vec<_> = out.iter().map(|f| (f.id, f.finding.kind)).collect();
    assert_eq!(kinds, [(Some(7), Kind::StreamNotClosed)]);
    s.tick(60_000, &mut out);
    assert_eq!(out.len(), 1, "reported once");
    let ended = s.end(7, End::Upstream, None, 61_000, &mut Quiet, &mut out);
    assert!(ended.is_some());
    assert!(s.open_ids().is_empty());
    assert!(s
        .end(7, End::Upstream, None, 61_000, &mut Quiet, &mut out)
        .is_none());
}

/// Messages for an id that is not open are ignored.
#[test]
fn messages_for_an_unknown_id_are_ignored() {
    let mut s = Session::new(&Settings::default());
    let mut out = Vec::new();
    let head = Head::read(200, Some("text/event-stream"), None);
    assert_eq!(s.head(1, head, &mut out), None);
    assert_eq!(s.piece(1, COMPLETED, 0, &mut Quiet, &mut out), None);
    assert!(s.forget(1).is_none());
    assert!(out.is_empty());
}

/// `capability_mismatch` is the live session's only: `check` and `probe`
/// (a plain session) keep reporting none of it.
#[test]
fn only_the_live_session_judges_the_card_capabilities() {
    let card = br#"{"name":"a","capabilities":{"streaming":false}}"#;
    for live in [false, true] {
        let mut s = Session::new(&Settings::default());
        if live {
            s = s.live("");
        }
        let fetch = Exchange {
            operation: Operation::GetAgentCard,
            ..streaming(None)
        };
        let answer = Answer {
            status: 200,
            content_type: Some("application/json"),
            body: card,
            end: End::Upstream,
            at: Some(0),
        };
        s.judge(fetch, answer, &mut Quiet);
        assert!(s.card().is_some(), "the card passed");
        let mut out = Vec::new();
        s.open(1, streaming(None), Seq::after_messages(1));
        let head = Head::read(200, Some("text/event-stream"), None);
        s.head(1, head, &mut out);
        let mismatch = out
            .iter()
            .any(|f| f.finding.kind == Kind::CapabilityMismatch);
        assert_eq!(mismatch, live, "live {live}: {out:?}");
    }
}
