//! The audit file and signals of the running binary: rotation by rename
//! and SIGHUP, SIGHUP without an audit log, SIGTERM right after a finding.

use std::collections::HashSet;
use std::time::Duration;

use crate::support::a2a::*;
use crate::support::process::Process;
use crate::support::proxied::get_text;
use crate::support::{metric, total, within, Hold, Proxied, Reply, Upstream, NAME};
use serde_json::{json, Value};

async fn setup(extra: &str) -> (Upstream, Process) {
    let up = Upstream::start().await;
    let proxy = Process::start(up.addr, extra);
    (up, proxy)
}

fn violations(scrape: &str) -> f64 {
    total(scrape, "a2a_violations_total", &[("upstream", NAME)]).unwrap_or(0.0)
}

fn dropped(scrape: &str) -> f64 {
    metric(scrape, "a2a_audit_records_dropped_total", &[]).unwrap_or(f64::NAN)
}

/// Runs `n` exchanges each giving one finding (a blocking send returning working).
async fn findings(up: &Upstream, p: &Process, from: i64, n: i64) {
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
            "the audit log was not reopened after SIGHUP; the proxy's log:\n{}",
            p.stderr()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    findings(&up, &p, 11, 5).await;
    let fresh = settle(&up, &p).await;
    let old = Process::records_in(&rotated);
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
    let written = Process::records_in(&rotated).len() + p.records().len();
    assert_eq!(violations(&scrape), written as f64, "{scrape}");
    assert_eq!(dropped(&scrape), 0.0);
}

/// Rotation after rotation (rename, SIGHUP), each followed by a finding:
/// every finding lands in the log at the path, none in a removed file.
/// SIGHUP's config re-read checks the log can be written while the writer
/// reopens it; that check used to create the absent path and remove it,
/// and a writer that opened the path in between wrote on into the removed
/// file: 4 of 300 rotations lost their records that way in a loop on the
/// running binary, and this test's 60 rotations met it 3 runs in 4.
#[tokio::test]
async fn rotations_in_a_row_lose_no_record_to_a_removed_file() {
    let (up, p) = setup("").await;
    findings(&up, &p, 1, 1).await;
    assert_eq!(p.wait_records(1).await.len(), 1);
    for n in 1..=60 {
        std::fs::rename(&p.audit, p.dir().join(format!("audit.jsonl.{n}")))
            .expect("rename the audit log");
        p.signal("HUP");
        within("the audit log reopened", async {
            while !p.audit.exists() {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
        .await;
        findings(&up, &p, 1 + n, 1).await;
        let recs = p.wait_records(1).await;
        let t = format!("t-{}", 1 + n);
        assert!(
            recs.iter().any(|r| r["task_id"] == t.as_str()),
            "{t} not in the log at its path (rotation {n}): {recs:?}"
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
    // The proxy is gone: its log must end in a whole line.
    let recs = Process::records_in(&p.audit);
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
async fn sighup_never_kills_the_proxy_even_without_an_audit_log() {
    let (up, mut p) = setup("validate = false\n").await;
    p.signal("HUP");
    // The signal is handled, not fatal: traffic still flows, byte for byte.
    let reply = Reply::json(200, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let want = reply.bytes();
    up.push(reply);
    let (status, got) = p.send("POST", "/", &[], r#"{"x":1}"#).await;
    assert_eq!((status, got), (200, want));
    p.signal("TERM");
    let exit = p.wait_exit(std::time::Duration::from_secs(10)).await;
    assert_eq!(exit.code(), Some(0), "exited cleanly, not by SIGHUP");
}

/// Like Envoy's and linkerd's drain: at SIGTERM readiness goes false at
/// once while the listener keeps accepting for `proxy.drain_delay` (load
/// balancers are still sending), then it stops accepting; exit 0.
#[tokio::test]
async fn sigterm_keeps_accepting_for_the_drain_delay_with_readiness_false() {
    let (up, mut p) = setup("[proxy]\ndrain_delay = \"3s\"\n").await;
    let readyz = format!("http://{}/readyz", p.admin);
    assert_eq!(get_text(&readyz).await.map(|r| r.0), Some(200));
    let started = std::time::Instant::now();
    p.signal("TERM");
    let deadline = started + Duration::from_secs(2);
    loop {
        let answer = get_text(&readyz).await;
        if answer
            .as_ref()
            .is_some_and(|(status, body)| *status == 503 && body.contains("draining"))
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "readiness stayed true: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Still inside the delay: a new caller connection is served.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "too slow to test the delay"
    );
    let reply = Reply::json(200, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let want = reply.bytes();
    up.push(reply);
    assert_eq!(p.send("POST", "/", &[], "{}").await, (200, want));
    let status = p.wait_exit(Duration::from_secs(15)).await;
    assert_eq!(status.code(), Some(0));
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "exited before the drain delay: {:?}",
        started.elapsed()
    );
    let log = p.stderr();
    assert!(log.contains("accepting for the drain delay"), "{log}");
}

/// A second signal ends the drain at once: neither the drain delay nor the
/// grace period (both 60 s here) is waited for, and the open stream that
/// is cut is logged.
#[tokio::test]
async fn a_second_sigterm_stops_at_once() {
    let (up, mut p) = setup("[proxy]\ndrain_delay = \"60s\"\ngrace_period = \"60s\"\n").await;
    let hold = Hold::after(1);
    let mut reply = Reply::sse(&[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_string()]);
    reply.hold = Some(hold.clone());
    up.push(reply);
    let listen = p.listen;
    let stream = tokio::spawn(async move {
        crate::support::proxied::request_to(listen, "POST", "/", &[], "{}").await
    });
    up.wait_taken().await;
    let started = std::time::Instant::now();
    p.signal("TERM");
    // The first was taken (readiness says draining) before the second.
    let readyz = format!("http://{}/readyz", p.admin);
    within("draining after the first SIGTERM", async {
        while !get_text(&readyz)
            .await
            .is_some_and(|(status, body)| status == 503 && body.contains("draining"))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    p.signal("TERM");
    let status = p.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(0));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let log = p.stderr();
    assert!(log.contains("second signal"), "{log}");
    assert!(
        log.contains("connections=1"),
        "the cut stream is logged: {log}"
    );
    // Nothing after the second signal speaks of a grace period still to come.
    let after = log
        .split("second signal: stopping now")
        .nth(1)
        .unwrap_or("");
    assert!(
        !after.contains("grace=") && !after.contains("grace period over"),
        "{log}"
    );
    stream.abort();
}

/// JSON log lines carry flat fields of one type each: a finding's line and
/// an upstream failure's both name the upstream, and the request id is an
/// integer wherever it appears.
#[tokio::test]
async fn json_log_fields_are_flat_and_typed_alike() {
    let (up, mut p) = setup("[log]\nformat = \"json\"\n").await;
    findings(&up, &p, 1, 1).await;
    p.wait_records(1).await;
    // An upstream that hangs up before its answer: the failure is logged.
    let mut broken = Reply::sse(&["{}".to_string()]);
    broken.die = true;
    up.push(broken);
    let (status, _) = p.send("POST", "/", &[], "{}").await;
    assert_eq!(status, 502);
    // Two cards naming the agent's own address: one warning, with the fix.
    let card = format!(
        r#"{{"name":"a","supportedInterfaces":[{{"url":"http://{}/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}}]}}"#,
        up.addr
    );
    for _ in 0..2 {
        up.push(Reply::json(200, &card));
        let (status, _) = p.send("GET", "/.well-known/agent-card.json", &[], "").await;
        assert_eq!(status, 200);
    }
    p.wait_metrics("two bypassing cards", |s| {
        crate::support::metric(s, "a2a_agent_card_bypass_total", &[("upstream", NAME)]) == Some(2.0)
    })
    .await;
    p.signal("TERM");
    p.wait_exit(Duration::from_secs(15)).await;
    let log = p.stderr();
    let bypass: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("past the proxy"))
        .collect();
    assert_eq!(bypass.len(), 1, "logged once: {log}");
    assert!(
        bypass[0].contains("rewrite_agent_card = true") && bypass[0].contains(&up.addr.to_string()),
        "names the fix and the URL: {}",
        bypass[0]
    );
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let finding = lines
        .iter()
        .find(|l| l["kind"] == "blocking_returned_active")
        .unwrap_or_else(|| panic!("no finding line: {log}"));
    assert_eq!(finding["upstream"], NAME, "{finding}");
    assert!(finding["request_id"].is_u64(), "{finding}");
    assert!(finding.get("fields").is_none(), "flat: {finding}");
    let failed = lines
        .iter()
        .find(|l| l["message"] == "upstream failed")
        .unwrap_or_else(|| panic!("no upstream failure line: {log}"));
    assert_eq!(failed["upstream"], NAME, "{failed}");
    for l in &lines {
        if let Some(id) = l.get("request_id") {
            assert!(id.is_u64(), "request_id of one type: {l}");
        }
    }
}

/// A collector that accepts and never answers: the span export's flush at
/// shutdown then waits as long as it is given.
async fn hung_collector() -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let collector = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = collector.local_addr().expect("addr");
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((s, _)) = collector.accept().await {
            open.push(s); // accepted, never answered
        }
    });
    (addr, held)
}

/// A proxy with one stream held open by its agent, whose span will wait on
/// a collector that accepts and never answers; `proxy` and `tracing` are
/// added to those sections of the config. Returns the proxy, the caller's stream
/// and the collector (both to abort at the end).
async fn held_stream_behind_a_hung_collector(
    proxy: &str,
    tracing: &str,
) -> (
    Upstream,
    Process,
    tokio::task::JoinHandle<(u16, http::HeaderMap, Vec<u8>)>,
    tokio::task::JoinHandle<()>,
) {
    let (hung, held) = hung_collector().await;
    let extra = format!("[proxy]\n{proxy}[tracing]\nendpoint = \"http://{hung}\"\n{tracing}");
    let (up, p) = setup(&extra).await;
    let mut reply = Reply::sse(&frames(1, &[task("t-1", "c", "TASK_STATE_WORKING")]));
    reply.hold = Some(Hold::after(1));
    up.push(reply);
    let listen = p.listen;
    let body = request(json!(1), "SendStreamingMessage", new_message());
    let stream = tokio::spawn(async move {
        crate::support::proxied::request_to(listen, "POST", "/", V1, &body).await
    });
    up.wait_taken().await;
    (up, p, stream, held)
}

/// A second signal ends the span flush too: with a stream cut and its span
/// waiting on a collector that never answers, the process exits at once,
/// not after the 60 s grace period.
#[tokio::test]
async fn a_second_signal_does_not_wait_for_the_span_flush() {
    let (_up, mut p, stream, held) = held_stream_behind_a_hung_collector(
        "grace_period = \"60s\"\n",
        "export_timeout = \"60s\"\n",
    )
    .await;
    let started = std::time::Instant::now();
    p.signal("TERM");
    let deadline = started + Duration::from_secs(10);
    while !p.stderr().contains("draining: no longer accepting") {
        assert!(std::time::Instant::now() < deadline, "{}", p.stderr());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    p.signal("TERM");
    let status = p.wait_exit(Duration::from_secs(20)).await;
    assert_eq!(status.code(), Some(0));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    stream.abort();
    held.abort();
}

/// The stream still open when the grace period runs out is cut and counted
/// at once, and the admin port keeps answering until the process exits:
/// here the span of the cut exchange waits (up to the grace period) for a
/// collector that never answers, and a scrape in that time sees the count.
#[tokio::test]
async fn the_grace_cut_is_counted_and_scrapeable_before_exit() {
    let (_up, mut p, stream, held) = held_stream_behind_a_hung_collector(
        "grace_period = \"2s\"\n",
        "export_timeout = \"30s\"\nbatch_delay = \"100ms\"\n",
    )
    .await;
    let closed = |s: &str| metric(s, "a2a_connections_closed_total", &[("reason", "grace")]);
    assert_eq!(closed(&p.metrics().await), Some(0.0));
    p.signal("TERM");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !p.stderr().contains("grace period over") {
        assert!(std::time::Instant::now() < deadline, "{}", p.stderr());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let scrape = p.metrics().await;
    assert_eq!(closed(&scrape), Some(1.0), "after the cut: {scrape}");
    let status = p.wait_exit(Duration::from_secs(15)).await;
    assert_eq!(status.code(), Some(0));
    stream.abort();
    held.abort();
}
