//! The audit log through the running proxy: evidence redaction and size,
//! rotation by rename + SIGHUP, an unwritable path, shutdown flushing, and
//! `a2a_violations_total == written + dropped` throughout.

mod live;

use std::collections::HashSet;
use std::time::Duration;

use live::a2a::*;
use live::{sample, sum, Proxy, Reply, Upstream, NAME};
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
    sum(scrape, "a2a_violations_total", &[("upstream", NAME)])
}

fn dropped(scrape: &str) -> f64 {
    sample(scrape, "a2a_audit_records_dropped_total", &[]).unwrap_or(f64::NAN)
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
async fn rotation_by_rename_and_sighup_loses_and_repeats_nothing() {
    let (up, p) = setup("").await;
    findings(&up, &p, 1, 5).await;
    // These are on disk before the rename; the next ones race the signal.
    assert_eq!(p.wait_records(5).await.len(), 5);
    let rotated = p.dir().join("audit.jsonl.1");
    std::fs::rename(&p.audit, &rotated).expect("rename the audit log");
    // Records keep going to the renamed file until the proxy reopens.
    findings(&up, &p, 6, 5).await;
    p.signal("HUP");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !p.audit.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the audit log was not reopened after SIGHUP"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    findings(&up, &p, 11, 5).await;
    let fresh = settle(&up, &p).await;
    let old = Proxy::records_in(&rotated);
    assert!(
        old.len() >= 5,
        "records before the rotation stay in the old file"
    );
    // Those produced after the reopen are all in the new file.
    for id in 11..=15 {
        let t = format!("t-{id}");
        assert!(
            fresh.iter().any(|r| r["task_id"] == t.as_str()),
            "{t} not in the new file: {fresh:#?}"
        );
    }
    let mut all: Vec<Value> = old.into_iter().chain(fresh).collect();
    all.retain(|r| r["kind"] == "blocking_returned_active");
    let tasks: Vec<&str> = all.iter().map(|r| r["task_id"].as_str().unwrap()).collect();
    let unique: HashSet<&str> = tasks.iter().copied().collect();
    assert_eq!(tasks.len(), 15, "none lost, none repeated: {tasks:?}");
    assert_eq!(unique.len(), 15, "none repeated: {tasks:?}");
    for id in 1..=15 {
        assert!(
            unique.contains(format!("t-{id}").as_str()),
            "t-{id} lost: {tasks:?}"
        );
    }
    // Mode 0600 on the new file.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&p.audit).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let scrape = p.metrics().await;
    let written = Proxy::records_in(&rotated).len() + p.records().len();
    assert_eq!(violations(&scrape), written as f64, "{scrape}");
    assert_eq!(dropped(&scrape), 0.0);
}

#[tokio::test]
async fn unwritable_audit_paths_drop_and_count_but_never_touch_traffic() {
    let bad_paths: [fn(&std::path::Path) -> std::path::PathBuf; 2] = [
        |d| d.join("no-such-dir").join("audit.jsonl"),
        |d| d.to_path_buf(),
    ];
    for bad in bad_paths {
        let up = Upstream::start().await;
        let p = Proxy::start_in(up.addr, "", bad).await;
        // Traffic flows, bytes intact (checked by `exchange`).
        findings(&up, &p, 1, 3).await;
        let scrape = p
            .wait_metrics("three violations, all dropped", |s| {
                violations(s) == 3.0 && dropped(s) == 3.0
            })
            .await;
        assert_eq!(
            sample(
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
async fn sigterm_right_after_a_finding_exits_zero_with_the_record_written() {
    let (up, mut p) = setup("[proxy]\ngrace_period = \"5s\"\n").await;
    findings(&up, &p, 1, 1).await;
    p.signal("TERM");
    let status = p.wait_exit(Duration::from_secs(15)).await;
    assert_eq!(status.code(), Some(0), "clean shutdown exits 0");
    let recs = p.records();
    assert_eq!(
        recs.len(),
        1,
        "the finding was flushed at shutdown: {recs:#?}"
    );
    check_fields(&recs[0]);
    assert_eq!(recs[0]["kind"], "blocking_returned_active");
    assert_eq!(recs[0]["task_id"], "t-1");
}

#[tokio::test]
async fn a_full_audit_queue_drops_and_counts_every_record_it_cannot_take() {
    let (up, p) = setup("[audit]\nqueue_capacity = 1\n").await;
    // One stream, 60 contextId changes, found in one burst.
    let mut evs = vec![task("t-1", "c0", "TASK_STATE_WORKING")];
    evs.extend((1..=60).map(|i| status("t-1", &format!("c{}", i % 2), "TASK_STATE_WORKING")));
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
