//! Chunk frames that reuse the last frame's decoding are judged exactly like
//! frames decoded afresh: the same stream is judged twice, once with chunks
//! that differ only in their text (reused) and once with each chunk also
//! carrying its own number outside any string (decoded afresh), and the
//! findings, their event indexes and evidence, and the event counts agree.
//! A property test does the same for any mix of chunks, statuses, messages
//! and snapshots, chunks naming another task, context, artifact or JSON-RPC
//! id among them, judged as 1.0 or 0.3, sent or subscribed: what reusing
//! decodings finds is exactly what decoding every frame finds.

use a2a_tap::a2a::model::{Binding, EventKind, Exchange, Operation, RpcId, Version};
use a2a_tap::engine::{EngineConfig, ExchangeEngine, Sink};
use a2a_tap::findings::{Finding, Kind};
use a2a_tap::lifecycle::{End, Registry, RegistryConfig};
use proptest::prelude::*;

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
    frame_with_id(7, result)
}

/// An SSE frame answering JSON-RPC id `id` with `result`.
fn frame_with_id(id: u32, result: &str) -> String {
    format!("data: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}\n\n")
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
    judge_as(body, Operation::SendStreamingMessage, Version::V1_0)
}

fn judge_as(body: &str, operation: Operation, version: Version) -> Seen {
    let mut reg = Registry::new(RegistryConfig::default());
    let exchange = Exchange {
        binding: Binding::JsonRpc,
        version,
        operation,
        rpc_id: Some(RpcId::Number("7".into())),
        task_id: (operation == Operation::SubscribeToTask).then(|| "t-1".into()),
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

/// All a finding says but its evidence's text (which holds the frame).
fn whole(f: &Finding) -> String {
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {} {}",
        f.kind,
        f.severity,
        f.event_index,
        f.task_id,
        f.context_id,
        f.artifact_id,
        f.detail,
        f.evidence.is_some()
    )
}

#[test]
fn reused_chunks_are_judged_like_chunks_decoded_afresh() {
    let reused = judge(&stream(false));
    let fresh = judge(&stream(true));
    assert_eq!(reused.events, fresh.events);
    assert_eq!(reused.events.len(), 11);
    let found: Vec<_> = reused.findings.iter().map(whole).collect();
    assert_eq!(found, fresh.findings.iter().map(whole).collect::<Vec<_>>());
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

/// One frame of a generated stream.
#[derive(Debug, Clone)]
enum Item {
    /// A chunk: which artifact, task, context and JSON-RPC id (0 is the
    /// stream's own), and its flags.
    Chunk {
        artifact: u8,
        task: u8,
        context: u8,
        rpc: u8,
        append: bool,
        last: bool,
    },
    Status(&'static str),
    Message,
    Task,
}

fn item() -> impl Strategy<Value = Item> {
    // Mostly the stream's own ids, so that runs of alike chunks are common.
    let id = prop_oneof![6 => Just(0u8), 1 => Just(1u8)];
    let chunk = (
        0..2u8,
        id.clone(),
        id.clone(),
        id,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(artifact, task, context, rpc, append, last)| Item::Chunk {
            artifact,
            task,
            context,
            rpc,
            append,
            last,
        });
    let state = prop_oneof![
        Just("TASK_STATE_WORKING"),
        Just("TASK_STATE_INPUT_REQUIRED"),
        Just("TASK_STATE_COMPLETED"),
        Just("TASK_STATE_FAILED"),
    ];
    prop_oneof![
        12 => chunk,
        2 => state.prop_map(Item::Status),
        1 => Just(Item::Message),
        1 => Just(Item::Task),
    ]
}

/// The stream of `items`; `seq` puts each frame's number outside every
/// string, so that no frame reuses another's decoding.
fn generated(items: &[Item], seq: bool) -> String {
    let mut s = String::new();
    for (i, item) in items.iter().enumerate() {
        let n = if seq {
            format!(",\"seq\":{i}")
        } else {
            String::new()
        };
        let rpc = |r: u8| 7 + u32::from(r);
        let (rpc_id, result) = match item {
            Item::Chunk {
                artifact,
                task,
                context,
                rpc: r,
                append,
                last,
            } => (
                rpc(*r),
                format!(
                    "{{\"artifactUpdate\":{{\"taskId\":\"t-{}\",\"contextId\":\"c-{}\",\"append\":{append},\"lastChunk\":{last}{n},\"artifact\":{{\"artifactId\":\"a-{artifact}\",\"parts\":[{{\"text\":\"words of chunk {i}\"}}]}}}}}}",
                    1 + task,
                    1 + context
                ),
            ),
            Item::Status(state) => (
                7,
                format!("{{\"statusUpdate\":{{\"taskId\":\"t-1\",\"contextId\":\"c-1\"{n},\"status\":{{\"state\":\"{state}\"}}}}}}"),
            ),
            Item::Message => (
                7,
                format!("{{\"message\":{{\"messageId\":\"m-{i}\",\"role\":\"ROLE_AGENT\"{n},\"parts\":[{{\"text\":\"said {i}\"}}]}}}}"),
            ),
            Item::Task => (
                7,
                format!("{{\"task\":{{\"id\":\"t-1\",\"contextId\":\"c-1\"{n},\"status\":{{\"state\":\"TASK_STATE_WORKING\"}},\"artifacts\":[{{\"artifactId\":\"a-1\",\"parts\":[]}}]}}}}"),
            ),
        };
        s += &frame_with_id(rpc_id, &result);
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn chunks_judged_again_find_what_a_full_judging_finds(
        items in prop::collection::vec(item(), 1..40),
        subscribe in any::<bool>(),
        old in any::<bool>(),
    ) {
        let op = if subscribe { Operation::SubscribeToTask } else { Operation::SendStreamingMessage };
        // Judged as 0.3 (its dialect reported once), events after the
        // terminal state are not judged: chunks there find nothing.
        let version = if old { Version::V0_3 } else { Version::V1_0 };
        let reused = judge_as(&generated(&items, false), op, version);
        let fresh = judge_as(&generated(&items, true), op, version);
        prop_assert_eq!(&reused.events, &fresh.events);
        let found: Vec<_> = reused.findings.iter().map(whole).collect();
        prop_assert_eq!(found, fresh.findings.iter().map(whole).collect::<Vec<_>>());
    }
}
