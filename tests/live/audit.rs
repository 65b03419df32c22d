//! The audit log through the running proxy: evidence redaction and size,
//! an unwritable path, a full queue, and `a2a_violations_total == written
//! + dropped` throughout (rotation and signals: the process tests).

use crate::support::a2a::*;
use crate::support::{metric, tap::Proxy, total, Proxied, Reply, Upstream, NAME};
use serde_json::{json, Value};

async fn setup(extra: &str) -> (Upstream, Proxy) {
    let up = Upstream::start().await;
    let proxy = Proxy::start(up.addr, extra).await;
    (up, proxy)
}

fn stream_req(id: i64) -> String {
    request(json!(id), "SendStreamingMessage", new_message())
}

const SECRET: &str = "top-secret-customer-payload";

/// A stream whose offending frame (index 1) carries a part with SECRET.
fn leaky(id: i64, t: &str) -> Reply {
    let mut a = artifact(t, "c", "a9", true, true);
    a["artifactUpdate"]["artifact"]["parts"] =
        json!([{"text": SECRET}, {"data": {"card": "4111"}}]);
    Reply::sse(&frames(
        id,
        &[
            task(t, "c", "TASK_STATE_WORKING"),
            a,
            status(t, "c", "TASK_STATE_COMPLETED"),
        ],
    ))
}

fn violations(scrape: &str) -> f64 {
    total(scrape, "a2a_violations_total", &[("upstream", NAME)]).unwrap_or(0.0)
}

fn dropped(scrape: &str) -> f64 {
    metric(scrape, "a2a_audit_records_dropped_total", &[]).unwrap_or(f64::NAN)
}

#[tokio::test]
async fn evidence_keeps_part_text_by_default() {
    let (up, p) = setup("").await;
    exchange(&up, &p, stream_req(1), leaky(1, "t-1")).await;
    let recs = settle(&up, &p).await;
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert_eq!(recs[0]["kind"], "append_to_unknown_artifact");
    assert!(
        recs[0]["evidence"].as_str().unwrap().contains(SECRET),
        "{}",
        recs[0]
    );
    // Every record, the sentinel's too, is counted once; none dropped.
    let scrape = p.metrics().await;
    assert_eq!(violations(&scrape), p.records().len() as f64, "{scrape}");
    assert_eq!(dropped(&scrape), 0.0);
}

#[tokio::test]
async fn redact_parts_replaces_part_contents_with_their_length() {
    let (up, p) = setup("[audit]\nredact_parts = true\n").await;
    exchange(&up, &p, stream_req(1), leaky(1, "t-1")).await;
    let recs = settle(&up, &p).await;
    assert_eq!(recs.len(), 1, "{recs:#?}");
    let ev = recs[0]["evidence"].as_str().unwrap();
    assert!(!ev.contains(SECRET) && !ev.contains("4111"), "{ev}");
    assert!(
        ev.contains(&format!("[redacted: {} bytes]", SECRET.len())),
        "{ev}"
    );
    // The rest of the frame stays readable.
    let v: Value = serde_json::from_str(ev).expect("redacted evidence is JSON");
    assert_eq!(
        v["result"]["artifactUpdate"]["artifact"]["artifactId"],
        "a9"
    );
    assert_eq!(v["result"]["artifactUpdate"]["taskId"], "t-1");
}

#[tokio::test]
async fn evidence_is_cut_to_the_configured_size() {
    let (up, p) = setup("[audit]\nevidence_bytes = 64\n").await;
    let reply = leaky(1, "t-1");
    let frame = rpc(json!(1), {
        let mut a = artifact("t-1", "c", "a9", true, true);
        a["artifactUpdate"]["artifact"]["parts"] =
            json!([{"text": SECRET}, {"data": {"card": "4111"}}]);
        a
    });
    assert!(reply
        .bytes()
        .windows(frame.len())
        .any(|w| w == frame.as_bytes()));
    exchange(&up, &p, stream_req(1), reply).await;
    let recs = settle(&up, &p).await;
    assert_eq!(recs.len(), 1, "{recs:#?}");
    let ev = recs[0]["evidence"].as_str().unwrap();
    let kept = ev.strip_suffix('…').expect("a cut is marked");
    assert_eq!(kept.len(), 64, "{ev}");
    assert!(
        frame.starts_with(kept),
        "evidence is the frame's start: {ev}"
    );
}

/// Runs `n` exchanges each giving one finding (a blocking send returning working).
async fn findings(up: &Upstream, p: &Proxy, from: i64, n: i64) {
    for id in from..from + n {
        let t = format!("t-{id}");
        let reply = Reply::json(200, &rpc(json!(id), task(&t, "c", "TASK_STATE_WORKING")));
        exchange(
            up,
            p,
            request(json!(id), "SendMessage", new_message()),
            reply,
        )
        .await;
    }
}

#[tokio::test]
async fn unwritable_audit_paths_drop_and_count_but_never_touch_traffic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad_paths = [
        dir.path().join("no-such-dir").join("audit.jsonl"),
        dir.path().to_path_buf(),
    ];
    for bad in bad_paths {
        let up = Upstream::start().await;
        let target = a2a_tap::report::audit::Target::File(bad);
        let p = Proxy::start_with_audit(up.addr, "", Some(target)).await;
        // Traffic flows, bytes intact (checked by `exchange`).
        findings(&up, &p, 1, 3).await;
        let scrape = p
            .wait_metrics("three violations, all dropped", |s| {
                violations(s) == 3.0 && dropped(s) == 3.0
            })
            .await;
        assert_eq!(
            total(
                &scrape,
                "a2a_violations_total",
                &[("kind", "blocking_returned_active"), ("severity", "error")]
            ),
            Some(3.0)
        );
        assert_eq!(
            violations(&scrape),
            dropped(&scrape) + p.records().len() as f64
        );
        assert!(p.records().is_empty());
        let (status, _) = p.send("GET", "/healthz-not-a2a", &[], "").await;
        assert_eq!(
            status, 500,
            "the scripted upstream answered (script exhausted)"
        );
    }
}

#[tokio::test]
async fn a_full_audit_queue_drops_and_counts_every_record_it_cannot_take() {
    let (up, p) = setup("[audit]\nqueue_capacity = 1\n").await;
    // One stream, 60 artifacts abandoned at once: 60 findings (distinct
    // artifacts do not fold), found in one burst.
    let mut evs = vec![task("t-1", "c0", "TASK_STATE_WORKING")];
    evs.extend((1..=60).map(|i| artifact("t-1", "c0", &format!("a{i}"), false, false)));
    evs.push(status("t-1", "c0", "TASK_STATE_COMPLETED"));
    exchange(&up, &p, stream_req(1), Reply::sse(&frames(1, &evs))).await;
    let scrape = p
        .wait_metrics("every finding written or dropped", |s| {
            violations(s) == 60.0 && dropped(s) + p.records().len() as f64 == 60.0
        })
        .await;
    let written = p.records().len();
    assert_eq!(dropped(&scrape) + written as f64, violations(&scrape));
    assert!(written >= 1, "the queue took at least one record");
}

/// A broken agent repeating a violation on every frame writes one record,
/// not one per frame: 23 contextId changes on one stream are one record
/// with `occurrences: 23`, counted once, and it is written while the
/// stream is still open (held for at most half a second), not at its end.
/// Look-alike: the same kind on another exchange is a record of its own.
#[tokio::test]
async fn repeats_on_one_exchange_fold_into_the_first_record() {
    use crate::support::Hold;
    let (up, p) = setup("").await;
    let mut evs = vec![task("t-1", "c0", "TASK_STATE_WORKING")];
    evs.extend((1..=23).map(|i| status("t-1", &format!("c{}", i % 2), "TASK_STATE_WORKING")));
    evs.push(status("t-1", "c1", "TASK_STATE_COMPLETED"));
    let hold = Hold::after(24);
    let mut r = Reply::sse(&frames(1, &evs));
    r.hold = Some(hold.clone());
    let want = r.bytes();
    up.push(r);
    let req = stream_req(1);
    let started = std::time::Instant::now();
    let caller = tokio::spawn({
        let listen = p.listen;
        async move { crate::support::request_to(listen, "POST", "/", V1, &req).await }
    });
    let deadline = started + std::time::Duration::from_secs(10);
    while p.records().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no record while the stream is open"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The window is 500 ms; a loaded two-core CI machine gets slack.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    hold.release.notify_one();
    let (code, _, got) = tokio::time::timeout(std::time::Duration::from_secs(10), caller)
        .await
        .expect("caller done")
        .expect("join");
    assert_eq!((code, got), (200, want));
    // The same kind on a second exchange: a record of its own.
    exchange(
        &up,
        &p,
        stream_req(2),
        Reply::sse(&frames(
            2,
            &[
                task("t-2", "c0", "TASK_STATE_WORKING"),
                status("t-2", "c1", "TASK_STATE_COMPLETED"),
            ],
        )),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(
        kinds(&recs),
        ["context_id_mismatch", "context_id_mismatch"],
        "{recs:#?}"
    );
    assert_eq!(recs[0]["occurrences"], 23, "{}", recs[0]);
    assert_eq!(recs[0]["event_index"], 1, "the first occurrence's frame");
    assert_eq!(recs[1]["occurrences"], 1, "{}", recs[1]);
    let s = p.metrics().await;
    let n = metric(
        &s,
        "a2a_violations_total",
        &[
            ("upstream", NAME),
            ("kind", "context_id_mismatch"),
            ("severity", "warning"),
        ],
    );
    assert_eq!(n, Some(2.0), "one increment per record: {s}");
}
