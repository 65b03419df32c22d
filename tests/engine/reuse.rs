//! Chunk frames that reuse the last frame's decoding are judged exactly like
//! frames decoded afresh: the same stream is judged twice, once with chunks
//! that differ only in their text (reused) and once with each chunk also
//! carrying its own number outside any string (decoded afresh), and the
//! findings, their event indexes and evidence, and the event counts agree.

use a2a_tap::a2a::model::{Binding, EventKind, Exchange, Operation, RpcId, Version};
use a2a_tap::engine::{EngineConfig, ExchangeEngine, Sink};
use a2a_tap::findings::{Finding, Kind};
use a2a_tap::lifecycle::{End, Registry, RegistryConfig};

#[derive(Default)]
struct Seen {
    findings: Vec<Finding>,
    events: Vec<EventKind>,
}

impl Sink for Seen {
    fn finding(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    fn event(&mut self, kind: EventKind) {
        self.events.push(kind);
    }
}

fn frame(result: &str) -> String {
    format!("data: {{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{result}}}\n\n")
}

/// A chunk of artifact `a-1`; `seq` puts a number outside every string.
fn chunk(i: usize, append: bool, last: bool, seq: bool) -> String {
    let seq = if seq {
        format!(",\"seq\":{i}")
    } else {
        String::new()
    };
    frame(&format!(
        "{{\"artifactUpdate\":{{\"taskId\":\"t-1\",\"contextId\":\"c-1\",\"append\":{append},\"lastChunk\":{last}{seq},\"artifact\":{{\"artifactId\":\"a-1\",\"parts\":[{{\"text\":\"words of chunk {i} and a few more\"}}]}}}}}}"
    ))
}

fn status(state: &str) -> String {
    frame(&format!(
        "{{\"statusUpdate\":{{\"taskId\":\"t-1\",\"contextId\":\"c-1\",\"status\":{{\"state\":\"{state}\"}}}}}}"
    ))
}

/// A stream with an abandoned artifact and chunks after the end.
fn stream(seq: bool) -> String {
    let mut s = frame(
        "{\"task\":{\"id\":\"t-1\",\"contextId\":\"c-1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}",
    );
    s += &chunk(0, false, false, seq);
    for i in 1..6 {
        s += &chunk(i, true, false, seq);
    }
    s += &status("TASK_STATE_FAILED");
    for i in 6..9 {
        s += &chunk(i, true, false, seq);
    }
    s
}

fn judge(body: &str) -> Seen {
    let mut reg = Registry::new(RegistryConfig::default());
    let exchange = Exchange {
        binding: Binding::JsonRpc,
        version: Version::V1_0,
        operation: Operation::SendStreamingMessage,
        rpc_id: Some(RpcId::Number("7".into())),
        task_id: None,
        context_id: None,
        blocking: false,
        guessed_path: None,
        message_id: None,
    };
    let mut e = ExchangeEngine::new(exchange, reg.open_exchange(), EngineConfig::default());
    e.response_head(200, Some("text/event-stream"), None);
    let mut seen = Seen::default();
    // Odd-sized pieces: frames split anywhere.
    for piece in body.as_bytes().chunks(97) {
        e.response_data(piece, &mut reg, 0, &mut seen);
    }
    e.response_end(End::Upstream, &mut reg, 0, &mut seen);
    seen
}

/// What a finding says, without the evidence's varying chunk text.
fn summary(f: &Finding) -> (Kind, Option<u64>, Option<String>, bool) {
    (
        f.kind,
        f.event_index,
        f.task_id.clone(),
        f.evidence.is_some(),
    )
}

#[test]
fn reused_chunks_are_judged_like_chunks_decoded_afresh() {
    let reused = judge(&stream(false));
    let fresh = judge(&stream(true));
    assert_eq!(reused.events, fresh.events);
    assert_eq!(reused.events.len(), 11);
    let kinds: Vec<_> = reused.findings.iter().map(summary).collect();
    assert_eq!(
        kinds,
        fresh.findings.iter().map(summary).collect::<Vec<_>>()
    );
    // Each chunk after the failure is reported, each with its own frame.
    let after: Vec<_> = reused
        .findings
        .iter()
        .filter(|f| f.kind == Kind::EventAfterTerminal)
        .collect();
    assert_eq!(
        after.iter().map(|f| f.event_index).collect::<Vec<_>>(),
        [Some(8), Some(9), Some(10)]
    );
    for (f, i) in after.iter().zip(6..) {
        let evidence = f.evidence.as_deref().unwrap_or_default();
        assert!(evidence.contains(&format!("chunk {i} ")), "{evidence}");
    }
    assert!(
        reused
            .findings
            .iter()
            .any(|f| f.kind == Kind::AbandonedArtifact),
        "{:?}",
        reused.findings
    );
}

#[test]
fn a_last_chunk_after_reused_ones_closes_the_artifact() {
    let mut body = frame(
        "{\"task\":{\"id\":\"t-1\",\"contextId\":\"c-1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}",
    );
    body += &chunk(0, false, false, false);
    for i in 1..5 {
        body += &chunk(i, true, false, false);
    }
    body += &chunk(5, true, true, false);
    body += &status("TASK_STATE_COMPLETED");
    let seen = judge(&body);
    assert!(seen.findings.is_empty(), "{:?}", seen.findings);
    assert_eq!(seen.events.len(), 8);
}
