//! What one hostile answer may cost the analysis thread, which judges
//! every exchange in order: a compression bomb (an SSE stream, gzip gRPC
//! messages of a million repeated fields) is judged within its inflate
//! budget, then forwarded unjudged and counted, so the next caller's
//! exchange is judged within a second instead of minutes later.

use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message as _;
use serde_json::{json, Value};

use crate::support::a2a::*;
use crate::support::grpc::{call, framed, GrpcReply, GrpcUpstream};
use crate::support::{bomb, tap::Proxy, total, Proxied, Reply, Upstream};
use a2a_tap::a2a::grpc::proto;

/// How late the violation's record may come after its answer passed, in
/// this unoptimised test build: the bomb's budget (the first MiB, then
/// 100:1) is judged at a few MB/s here, ~100 MB/s in a release build,
/// where the same bomb delays the next exchange by well under a second
/// (BENCHMARKS.md). Without the budget it is minutes, here or there.
const WITHIN: Duration = Duration::from_secs(5);

/// Waits (up to 20 s) for a record of `kind`; how long it took.
async fn time_to_record(p: &Proxy, kind: &str, since: Instant) -> Duration {
    let deadline = since + Duration::from_secs(20);
    loop {
        if p.records().iter().any(|r| r["kind"] == kind) {
            return since.elapsed();
        }
        assert!(
            Instant::now() < deadline,
            "no {kind} record 20 s after its answer: judging is stuck behind the bomb"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// 2,000 MB of SSE events in 18 MB of gzip (before: 27.7 s of analysis on
/// a release build, the next exchange judged 57 s late; here it is judged
/// promptly and the bomb is counted as `inflated_too_large`). The ratio is
/// set to 10:1 so that this unoptimised build judges little of the bomb
/// (the default, 100:1, lets this bomb inflate ~8 MiB: a few seconds here,
/// well under one in a release build).
#[tokio::test]
async fn a_gzip_bomb_stream_does_not_delay_the_next_exchanges_judging() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, "[analysis]\nmax_inflate_ratio = 10\n").await;
    let event = rpc(json!(1), task("t-bomb", "c", "TASK_STATE_WORKING"));
    let text = format!("data: {event}\n\n");
    let gz = bomb::gzip(text.as_bytes(), 2000 << 20);
    let reply = Reply {
        status: 200,
        content_type: "text/event-stream".into(),
        chunks: gz.chunks(16 * 1024).map(Bytes::copy_from_slice).collect(),
        die: false,
        headers: vec![("content-encoding".into(), "gzip".into())],
        hold: None,
    };
    let want = reply.bytes();
    up.push(reply);
    let req = request(json!(1), "SendStreamingMessage", new_message());
    let (status, got) = p.send("POST", "/", V1, &req).await;
    assert_eq!(status, 200);
    assert!(got == want, "forwarded bytes differ from the upstream's");
    // The next caller's exchange: a task in the unspecified state.
    let bad = rpc(json!(2), task("t-next", "c", "TASK_STATE_UNSPECIFIED"));
    exchange(
        &up,
        &p,
        request(json!(2), "GetTask", json!({"id": "t-next"})),
        Reply::json(200, &bad),
    )
    .await;
    let late = time_to_record(&p, "unspecified_state", Instant::now()).await;
    eprintln!("the exchange after the SSE bomb was judged {late:?} after its answer");
    assert!(late < WITHIN, "judged {late:?} after its answer");
    let m = p
        .wait_metrics("the bomb counted", |m| {
            total(
                m,
                "a2a_analysis_skipped_total",
                &[("reason", "inflated_too_large")],
            ) == Some(1.0)
        })
        .await;
    let kinds: Vec<Value> = p.records().iter().map(|r| r["kind"].clone()).collect();
    assert_eq!(kinds, ["unspecified_state"], "{m}");
}

/// A Task message of 500,000 empty artifacts is 1 MB of protobuf and
/// ~1 KB of gzip: 200 of them in one call (before: 91.5 s of analysis for
/// 1,000 on a release build) are not decoded past the call's budget, and
/// a message repeating a field past what judging reads is a gap.
#[tokio::test]
async fn grpc_messages_of_a_million_fields_do_not_delay_the_next_call() {
    let up = GrpcUpstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    // StreamResponse { task = 1: Task { id = 1: "t-b", artifacts = 4: {}... } }
    let mut task = proto::Task {
        id: "t-b".into(),
        context_id: "c".into(),
        status: Some(proto::TaskStatus {
            state: 3,
            timestamp: None,
        }),
        artifacts: Vec::new(),
    }
    .encode_to_vec();
    for _ in 0..500_000 {
        task.extend_from_slice(&[0x22, 0x00]);
    }
    let mut msg = vec![0x0a];
    prost::encoding::encode_varint(task.len() as u64, &mut msg);
    msg.extend_from_slice(&task);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut gz, &msg).unwrap();
    let one = Bytes::from(framed(&gz.finish().unwrap(), true));
    let mut reply = GrpcReply::messages(&[]);
    reply.head.push(("grpc-encoding".into(), "gzip".into()));
    reply.chunks = vec![one; 200];
    let want = reply.bytes();
    up.push(reply);
    let send = proto::SendRequest {
        message: Some(proto::Message {
            message_id: "m-1".into(),
            context_id: String::new(),
            task_id: String::new(),
        }),
        configuration: None,
    }
    .encode_to_vec();
    let answer = call(
        p.listen,
        "/lf.a2a.v1.A2AService/SendStreamingMessage",
        &send,
    )
    .await;
    assert!(
        answer.body == want,
        "forwarded bytes differ from the upstream's"
    );
    // The next call: a task in the unspecified state.
    let bad = proto::Task {
        id: "t-next".into(),
        context_id: "c".into(),
        status: Some(proto::TaskStatus {
            state: 0,
            timestamp: None,
        }),
        artifacts: Vec::new(),
    };
    up.push(GrpcReply::messages(&[bad.encode_to_vec()]));
    let get = proto::IdRequest {
        id: "t-next".into(),
    }
    .encode_to_vec();
    call(p.listen, "/lf.a2a.v1.A2AService/GetTask", &get).await;
    let late = time_to_record(&p, "unspecified_state", Instant::now()).await;
    eprintln!("the call after the gRPC bomb was judged {late:?} after its answer");
    assert!(late < WITHIN, "judged {late:?} after its answer");
    p.wait_metrics("the budget counted", |m| {
        total(
            m,
            "a2a_analysis_skipped_total",
            &[("reason", "inflated_too_large")],
        )
        .is_some_and(|n| n >= 1.0)
    })
    .await;
}
