//! The whole engine (SSE framing + decoding + lifecycle reduction) on a
//! realistic stream of ~300-byte artifact frames (chunks of eight artifacts
//! taking turns, or of one), against a plain `serde_json::from_slice::<Value>`
//! of the same frames' data; and on the load script's task stream (20
//! events, a new task each time) and its JSON answer (a new task each
//! time, against a full task registry), as the proxy's analysis thread
//! judges them (and the same task as a gRPC stream of protobuf messages);
//! and the classification of the load script's request, which the
//! forwarding thread does for every exchange.

mod load;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

use a2a_tap::a2a::classify::classify;
use a2a_tap::a2a::model::{Binding, Exchange, Operation, RpcId, Version};
use a2a_tap::engine::{EngineConfig, ExchangeEngine};
use a2a_tap::findings::Finding;
use a2a_tap::lifecycle::{End, Registry, RegistryConfig};

const FRAMES: usize = 1000;

fn artifact_frame(i: usize, artifacts: usize) -> String {
    format!(
        "data: {{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{{\"artifactUpdate\":{{\"taskId\":\"3f6c1c52-8a7e-4c1e-9d2b-5a1f0e7c9b11\",\"contextId\":\"8d2e4b7a-1c3f-4e5d-a6b7-c8d9e0f1a2b3\",\"artifact\":{{\"artifactId\":\"report-{:04}\",\"parts\":[{{\"text\":\"The quarterly figures show a steady rise in throughput across all regions; chunk {:04} continues.\"}}]}},\"append\":{}}}}}}}\n\n",
        i % artifacts,
        i,
        // Each artifact opens with a replacing chunk, then appends.
        i >= artifacts
    )
}

/// A task's stream: its snapshot, then chunks of `artifacts` artifacts
/// taking turns (one: an agent streaming its answer).
fn stream(artifacts: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut body = String::new();
    body.push_str("data: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"task\":{\"id\":\"3f6c1c52-8a7e-4c1e-9d2b-5a1f0e7c9b11\",\"contextId\":\"8d2e4b7a-1c3f-4e5d-a6b7-c8d9e0f1a2b3\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n");
    for i in 0..FRAMES {
        body.push_str(&artifact_frame(i, artifacts));
    }
    let data = body
        .split("\n\n")
        .filter_map(|f| f.strip_prefix("data: "))
        .map(|d| d.as_bytes().to_vec())
        .collect();
    (body.into_bytes(), data)
}

/// The load script's stream for task `n`, with the exchange's JSON-RPC id.
fn load_stream(n: usize) -> Vec<u8> {
    load::stream(&format!("tsk_{n:016x}"), 42)
}

/// The load script's gRPC stream for task `n`: the same 20 events as
/// protobuf `StreamResponse`s with their 5-byte prefixes, in one piece
/// (fields written with prost's wire helpers, numbers from a2a.proto).
fn load_grpc_stream(n: usize) -> Vec<u8> {
    use prost::encoding::{bool as pbool, bytes, int32, string};
    let task = format!("tsk_{n:016x}");
    let mut out = Vec::new();
    let mut push = |field: u32, event: Vec<u8>| {
        let mut msg = Vec::new();
        bytes::encode(field, &event, &mut msg);
        out.push(0);
        out.extend_from_slice(&(msg.len() as u32).to_be_bytes());
        out.extend_from_slice(&msg);
    };
    let event = |state: i32| {
        let (mut e, mut status) = (Vec::new(), Vec::new());
        string::encode(1, &task, &mut e);
        string::encode(2, &"ctx_3".to_string(), &mut e);
        int32::encode(1, &state, &mut status);
        bytes::encode(3, &status, &mut e);
        e
    };
    push(1, event(1));
    push(3, event(2));
    for i in 0..17 {
        let (mut part, mut artifact, mut update) = (Vec::new(), Vec::new(), Vec::new());
        let text = format!("chunk {i:02} of the generated itinerary, with enough words to look like model output ...");
        string::encode(1, &text, &mut part);
        string::encode(1, &"art_1".to_string(), &mut artifact);
        bytes::encode(4, &part, &mut artifact);
        string::encode(1, &task, &mut update);
        string::encode(2, &"ctx_3".to_string(), &mut update);
        bytes::encode(3, &artifact, &mut update);
        pbool::encode(4, &(i > 0), &mut update);
        pbool::encode(5, &(i == 16), &mut update);
        push(4, update);
    }
    push(3, event(3));
    out
}

/// The load script's JSON answer about task `n`, with the exchange's
/// JSON-RPC id.
fn load_answer(n: usize) -> Vec<u8> {
    load::answer(&format!("tsk_{n:016x}"), 42)
}

fn exchange() -> Exchange {
    exchange_of(Operation::SendStreamingMessage)
}

fn exchange_of(operation: Operation) -> Exchange {
    Exchange {
        binding: Binding::JsonRpc,
        version: Version::V1_0,
        operation,
        rpc_id: Some(RpcId::Number("42".into())),
        task_id: None,
        context_id: None,
        blocking: false,
        guessed_path: None,
        message_id: None,
    }
}

/// Judges one exchange's stream, given in `pieces`, which must be clean.
fn judge_clean<'a>(pieces: impl Iterator<Item = &'a [u8]>, reg: &mut Registry) {
    judge(
        exchange(),
        "text/event-stream",
        pieces,
        End::ClientGone,
        reg,
    )
}

/// Judges one exchange's response of type `media`, given in `pieces` and
/// ended by `end`, which must be clean.
fn judge<'a>(
    exchange: Exchange,
    media: &str,
    pieces: impl Iterator<Item = &'a [u8]>,
    end: End,
    reg: &mut Registry,
) {
    let mut findings: Vec<Finding> = Vec::new();
    let seq = reg.open_exchange();
    let mut e = ExchangeEngine::new(exchange, seq, EngineConfig::default());
    e.response_head(200, Some(media), None);
    for piece in pieces {
        e.response_data(piece, reg, 0, &mut findings);
    }
    e.response_end(end, reg, 0, &mut findings);
    assert!(findings.is_empty(), "{findings:?}");
}

fn bench(c: &mut Criterion) {
    let (body, data) = stream(8);
    let (one, _) = stream(1);
    let per_frame = body.len() / (FRAMES + 1);
    eprintln!(
        "stream: {} bytes, {} frames, ~{per_frame} bytes/frame",
        body.len(),
        FRAMES + 1
    );
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Bytes(body.len() as u64));
    // The proxy sees whatever pieces TCP gives; 16 KiB reads are typical.
    g.bench_function("frame+decode+reduce, 16KiB pieces", |b| {
        let mut reg = Registry::new(RegistryConfig::default());
        b.iter(|| judge_clean(body.chunks(16 * 1024), &mut reg))
    });
    g.bench_function("frame+decode+reduce, 16KiB pieces, one artifact", |b| {
        let mut reg = Registry::new(RegistryConfig::default());
        b.iter(|| judge_clean(one.chunks(16 * 1024), &mut reg))
    });
    g.bench_function("frame+decode+reduce, one piece per line", |b| {
        let pieces: Vec<&[u8]> = body.split_inclusive(|b| *b == b'\n').collect();
        let mut reg = Registry::new(RegistryConfig::default());
        b.iter(|| judge_clean(pieces.iter().copied(), &mut reg))
    });
    g.bench_function("serde_json::Value of each frame's data (baseline)", |b| {
        b.iter(|| {
            for d in &data {
                let v: serde_json::Value = serde_json::from_slice(d).expect("json");
                black_box(v);
            }
        })
    });
    g.finish();

    // A new task per stream, as the load script sends; a task id comes
    // round again only in a new registry (in the old one it completed).
    let streams: Vec<Vec<u8>> = (0..4096).map(load_stream).collect();
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(1));
    g.bench_function("the load script's 20-event stream, a new task each", |b| {
        let mut reg = Registry::new(RegistryConfig::default());
        let mut i = 0;
        b.iter(|| {
            if i == streams.len() {
                (reg, i) = (Registry::new(RegistryConfig::default()), 0);
            }
            judge_clean(std::iter::once(streams[i].as_slice()), &mut reg);
            i += 1;
        })
    });

    // The same task as gRPC messages: the engine's cost per gRPC message is
    // this over 20.
    let grpc_streams: Vec<Vec<u8>> = (0..4096).map(load_grpc_stream).collect();
    g.bench_function(
        "the load script's 20-message gRPC stream, a new task each",
        |b| {
            let mut reg = Registry::new(RegistryConfig::default());
            let mut i = 0;
            b.iter(|| {
                if i == grpc_streams.len() {
                    (reg, i) = (Registry::new(RegistryConfig::default()), 0);
                }
                let grpc = Exchange {
                    binding: Binding::Grpc,
                    rpc_id: None,
                    ..exchange()
                };
                let one = std::iter::once(grpc_streams[i].as_slice());
                judge(grpc, "application/grpc", one, End::Upstream, &mut reg);
                i += 1;
            })
        },
    );

    // A JSON answer about a new task each time, against a registry already
    // holding its default most (100,000): every answer evicts the oldest
    // task, as in a long run. The ids come round only after 4 × 100,000,
    // long after their eviction, so each is new again.
    let held = RegistryConfig::default().max_tasks;
    let answers: Vec<Vec<u8>> = (0..4 * held).map(load_answer).collect();
    let answer = |a: &[u8], reg: &mut Registry| {
        let send = exchange_of(Operation::SendMessage);
        judge(
            send,
            "application/json",
            std::iter::once(a),
            End::Upstream,
            reg,
        )
    };
    g.bench_function(
        "the load script's JSON answer, a new task each, registry full",
        |b| {
            let mut reg = Registry::new(RegistryConfig::default());
            answers[..held].iter().for_each(|a| answer(a, &mut reg));
            assert_eq!(reg.len(), held);
            let mut i = held;
            b.iter(|| {
                answer(&answers[i % answers.len()], &mut reg);
                i += 1;
            });
            assert_eq!(reg.len(), held);
            assert!(reg.evicted_total() > 0);
        },
    );
    g.finish();

    let mut g = c.benchmark_group("classify");
    g.throughput(Throughput::Elements(1));
    let uri: http::Uri = "/".parse().expect("uri");
    let headers = http::HeaderMap::new();
    g.bench_function("the load script's JSON-RPC request", |b| {
        b.iter(|| {
            black_box(classify(
                &http::Method::POST,
                &uri,
                &headers,
                black_box(LOAD_REQUEST),
            ))
        })
    });
    g.finish();
}

/// The body the load script posts (scripts/bench-lib.sh).
const LOAD_REQUEST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"m-1","parts":[{"text":"book a flight"}]}}}"#;

criterion_group!(benches, bench);
criterion_main!(benches);
