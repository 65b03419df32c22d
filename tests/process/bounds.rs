//! What long ids cost the running binary: a caller's 900 KiB `contextId`
//! echoed by the agent, an agent's megabyte task ids in ListTasks answers,
//! findings about them logged to a stderr nobody reads, and their spans
//! queued for a collector that never answers. Each id is kept as a digest
//! and repeated cut (`analysis.max_id_bytes`), and the log and span
//! queues are bounded by bytes, so memory stays flat however long the
//! ids (before: 700 such calls held 650 MB for the registry's TTL).

use serde_json::json;

use crate::support::a2a::*;
use crate::support::process::{Launch, Process};
use crate::support::{Proxied, Reply, Upstream};

/// RSS growth allowed for the whole attack (the bound: 16 MB for
/// 1,000 calls).
const GROWTH_KIB: u64 = 16 * 1024;

fn long(tag: &str, i: usize, len: usize) -> String {
    let mut s = format!("{tag}-{i}-");
    s.extend(std::iter::repeat_n('x', len - s.len()));
    s
}

/// Sends and answers `n` SendMessage calls with a 900 KiB `contextId` the
/// agent keeps, and `n` ListTasks answers naming three 1.3 MB task ids.
async fn id_attack(up: &Upstream, p: &Process, n: usize) {
    for i in 0..n {
        let ctx = long("ctx", i, 900 * 1024);
        let msg = json!({"message": {"messageId": format!("m-{i}"), "role": "ROLE_USER",
            "contextId": ctx, "parts": [{"text": "hi"}]}});
        let answer = rpc(
            json!(i),
            task(&format!("t-{i}"), &ctx, "TASK_STATE_COMPLETED"),
        );
        exchange(
            up,
            p,
            request(json!(i), "SendMessage", msg),
            Reply::json(200, &answer),
        )
        .await;
        let tasks: Vec<_> = (0..3)
            .map(|k| {
                json!({"id": long("task", i * 3 + k, 1300 * 1024), "contextId": "c",
                    "status": {"state": "TASK_STATE_WORKING"}})
            })
            .collect();
        let answer = rpc(json!(i), json!({ "tasks": tasks }));
        exchange(
            up,
            p,
            request(json!(i), "ListTasks", json!({})),
            Reply::json(200, &answer),
        )
        .await;
    }
}

#[tokio::test]
async fn long_ids_are_kept_as_digests_not_whole() {
    let up = Upstream::start().await;
    let p = Process::start(up.addr, "");
    // Warm: the buffers a call needs are there before measuring, on
    // every serving thread (connections are handed to them in turn) and
    // the analysis thread, each allocating from its own arena.
    id_attack(&up, &p, 8).await;
    settle(&up, &p).await;
    let before = p.rss_kib();
    // The figure is for 1,000 calls: `BOUNDS_CALLS=1000 cargo test
    // --release --test process bounds` measures it.
    let calls: usize = std::env::var("BOUNDS_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30);
    id_attack(&up, &p, calls).await;
    let recs = settle(&up, &p).await;
    assert!(recs.is_empty(), "{recs:#?}");
    let grown = p.rss_kib().saturating_sub(before);
    eprintln!("{calls} calls of each attack grew RSS by {grown} KiB");
    assert!(grown < GROWTH_KIB, "grew {grown} KiB (ids kept whole?)");
    // The contexts and three task ids a call over the limit (the warm-up's
    // are the attack's first), each counted once.
    let want = (calls.max(8) * 4) as f64;
    p.wait_metrics("long ids counted", |m| {
        crate::support::total(m, "a2a_ids_over_limit_total", &[]) == Some(want)
    })
    .await;
}

/// The same task still judged across exchanges by its digest: a megabyte
/// task id seen completed, then working, is `terminal_exit`, its id and
/// detail cut in the record.
#[tokio::test]
async fn a_long_task_id_is_still_judged_across_exchanges() {
    let up = Upstream::start().await;
    let p = Process::start(up.addr, "");
    // Under `analysis.max_request_bytes` (1 MiB) with its request.
    let id = long("task", 0, 900 * 1024);
    for (n, state) in [(1, "TASK_STATE_COMPLETED"), (2, "TASK_STATE_WORKING")] {
        let answer = rpc(json!(n), task(&id, "c", state));
        exchange(
            &up,
            &p,
            request(json!(n), "GetTask", json!({ "id": id })),
            Reply::json(200, &answer),
        )
        .await;
    }
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["terminal_exit"], "{recs:#?}");
    let shown = recs[0]["task_id"].as_str().unwrap();
    assert!(shown.starts_with("task-0-xxx"), "{shown}");
    assert!(shown.ends_with("…(+921344 bytes)"), "{shown}");
    let line = serde_json::to_string(&recs[0]).unwrap();
    assert!(line.len() < 8 * 1024, "record of {} bytes", line.len());
}

/// Findings about megabyte task ids (from 900 KiB `messageId`s), logged at debug to a stderr pipe that
/// nobody reads, with tracing on towards a collector that accepts and
/// never answers: the log and span queues hold lines and spans cut to
/// size, bounded by bytes (before: the log queue reached 1.8 GB, the
/// span queue 2 GB in 16 s).
#[tokio::test]
async fn log_and_span_queues_stay_bounded_with_long_ids() {
    let up = Upstream::start().await;
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let collector = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let p = Process::launch(
        up.addr,
        &format!("[tracing]\nendpoint = \"http://{collector}\"\nbatch_spans = 1\n"),
        Launch {
            unread_stderr: true,
            ..Launch::default()
        },
    );
    let send = |i: usize| {
        let id = long("task", i, 1 << 20);
        let msg = json!({"message": {"messageId": long("m", i, 900 * 1024), "role": "ROLE_USER",
            "parts": [{"text": "hi"}]}});
        (id, msg)
    };
    let (id, msg) = send(0);
    let answer = rpc(json!(0), task(&id, "c", "TASK_STATE_UNSPECIFIED"));
    exchange(
        &up,
        &p,
        request(json!(0), "SendMessage", msg),
        Reply::json(200, &answer),
    )
    .await;
    settle(&up, &p).await;
    let before = p.rss_kib();
    for i in 1..=80 {
        let (id, msg) = send(i);
        let answer = rpc(json!(i), task(&id, "c", "TASK_STATE_UNSPECIFIED"));
        exchange(
            &up,
            &p,
            request(json!(i), "SendMessage", msg),
            Reply::json(200, &answer),
        )
        .await;
    }
    let recs = settle(&up, &p).await;
    assert_eq!(recs.len(), 80, "every finding written");
    let grown = p.rss_kib().saturating_sub(before);
    eprintln!("80 findings with 1 MiB ids grew RSS by {grown} KiB");
    assert!(grown < GROWTH_KIB, "grew {grown} KiB");
}
