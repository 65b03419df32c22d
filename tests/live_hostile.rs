//! Hostile agents and callers against the running binary: agent data that
//! tries to forge log lines, redaction that must hold whatever the shape of
//! the parts.

mod live;

use live::a2a::*;
use live::{Proxy, Reply, Upstream};
use serde_json::{json, Value};

async fn setup(extra: &str) -> (Upstream, Proxy) {
    let up = Upstream::start().await;
    let proxy = Proxy::start(up.addr, extra).await;
    (up, proxy)
}

async fn send_stream(up: &Upstream, p: &Proxy, id: i64, events: &[Value]) {
    let req = request(json!(id), "SendStreamingMessage", new_message());
    exchange(up, p, req, Reply::sse(&frames(id, events))).await;
}

/// An agent-chosen id with a newline, CR, BEL and an escape sequence lands
/// in a finding's detail, which the text log prints: it must stay one line,
/// its control characters escaped (before, the newline forged a whole log
/// line of the agent's choosing).
#[tokio::test]
async fn agent_data_cannot_forge_log_lines() {
    let (up, p) = setup("[log]\nformat = \"text\"\n").await;
    let forged = "a\n2026-12-01T00:00:00.000000Z  INFO a2a_tap: forged line\r\x07\x1b[2J";
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            artifact("t-1", "c", forged, true, true),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["append_to_unknown_artifact"], "{recs:#?}");
    // The audit record keeps the id as sent (JSON escapes it).
    assert!(recs[0]["detail"].as_str().unwrap().contains(forged));
    let log = p.stderr();
    let line = log
        .lines()
        .find(|l| l.contains("append_to_unknown_artifact"))
        .unwrap_or_else(|| panic!("no log line for the finding:\n{log}"));
    assert!(
        line.contains(r"a\n2026-12-01T00:00:00.000000Z  INFO a2a_tap: forged line\r\u{7}\u{1b}[2J"),
        "{line}"
    );
    assert!(
        !log.lines().any(|l| l.starts_with("2026-12-01T00:00:00")),
        "{log}"
    );
    assert!(
        !log.contains('\r') && !log.contains('\x07') && !log.contains('\x1b'),
        "{log:?}"
    );
}

/// `redact_parts = true` redacts by allow-list, whatever the shape: parts
/// sent as an object or a string, part metadata and filenames, names,
/// status messages and history reach the audit evidence only as lengths;
/// ids, states and roles stay (before, `parts` as an object or a string,
/// and part `metadata`/`filename`, were written verbatim).
#[tokio::test]
async fn redaction_holds_whatever_the_shape_of_the_parts() {
    let (up, p) = setup("[audit]\nredact_parts = true\n").await;
    // Each frame below carries secrets and is a finding's evidence: a
    // snapshot of another task, an append to an artifact never opened
    // (left open), and the completion that abandons it.
    let foreign = json!({"task": {"id": "t-other", "contextId": "c",
        "status": {"state": "TASK_STATE_WORKING",
            "message": {"messageId": "m-1", "role": "ROLE_AGENT", "parts": {"text": "SECRET-1"}}},
        "history": [{"messageId": "m-2", "role": "ROLE_USER", "parts": "SECRET-2",
            "metadata": {"SECRET-3": "SECRET-4"}}],
        "artifacts": [{"artifactId": "a-9", "parts": [{"data": {"SECRET-9": 1}}]}]}});
    let chunk = json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c", "append": true,
        "artifact": {"artifactId": "a-1", "name": "SECRET-5",
            "parts": [{"text": "SECRET-6", "filename": "SECRET-7.pdf", "metadata": {"k": "SECRET-8"}}]}}});
    let done = json!({"statusUpdate": {"taskId": "t-1", "contextId": "c",
        "status": {"state": "TASK_STATE_COMPLETED",
            "message": {"messageId": "m-3", "role": "ROLE_AGENT", "parts": [{"url": "https://x/?token=SECRET-10"}]}}}});
    let first = task("t-1", "c", "TASK_STATE_WORKING");
    send_stream(&up, &p, 1, &[first, foreign, chunk, done]).await;
    let recs = settle(&up, &p).await;
    assert_eq!(
        kinds(&recs),
        [
            "task_id_mismatch",
            "append_to_unknown_artifact",
            "abandoned_artifact"
        ],
        "{recs:#?}"
    );
    for r in &recs {
        let evidence = r["evidence"].as_str().expect("evidence");
        assert!(!evidence.contains("SECRET"), "{evidence}");
        assert!(evidence.contains("[redacted:"), "{evidence}");
    }
    let evidence = |i: usize| recs[i]["evidence"].as_str().unwrap().to_owned();
    assert!(evidence(0).contains("t-other") && evidence(0).contains("m-2"));
    assert!(evidence(1).contains("a-1"));
    assert!(evidence(2).contains("TASK_STATE_COMPLETED") && evidence(2).contains("m-3"));
}

/// A full disk (here a file size limit: the kernel fails the writes past
/// it, EFBIG) never leaves a partial record: each line in the file is a
/// whole record, the records that did not fit are counted as dropped, no
/// more and no less, and once there is room again records go on, each on
/// its own line (before, the cut record and the next one shared a line).
#[tokio::test]
async fn a_full_disk_leaves_whole_lines_and_counts_what_it_dropped() {
    let (up, p) = setup("").await;
    let limit = |spec: &str| {
        let ok = std::process::Command::new("prlimit")
            .args(["--pid", &p.pid().to_string(), &format!("--fsize={spec}")])
            .status()
            .expect("run prlimit (util-linux)")
            .success();
        assert!(ok, "prlimit --fsize={spec}");
    };
    let bad = |t: &str| {
        let pad = "p".repeat(600);
        vec![
            json!({"task": {"id": t, "contextId": "c", "status": {"state": "TASK_STATE_UNSPECIFIED"},
            "metadata": {"pad": pad}}}),
        ]
    };
    // Room for a few records, then the disk is "full".
    limit("2500:unlimited");
    for i in 0..6 {
        send_stream(&up, &p, i, &bad(&format!("t-full-{i}"))).await;
    }
    // Every one of the six is either in the file or counted.
    let audit = p.audit.clone();
    let in_file = move || {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        text.lines().filter(|l| l.contains("t-full-")).count()
    };
    let m = p
        .wait_metrics("six records written or dropped", |m| {
            let dropped = live::sample(m, "a2a_audit_records_dropped_total", &[]).unwrap_or(0.0);
            dropped > 0.0 && dropped as usize + in_file() == 6
        })
        .await;
    let dropped = live::sample(&m, "a2a_audit_records_dropped_total", &[]).unwrap();
    limit("unlimited:unlimited");
    for i in 6..9 {
        send_stream(&up, &p, i, &bad(&format!("t-room-{i}"))).await;
    }
    let _ = settle(&up, &p).await;
    let text = std::fs::read_to_string(&p.audit).expect("audit log");
    let lines: Vec<&str> = text.lines().collect();
    for line in &lines {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("torn line ({e}): {line}"));
        assert!(v["kind"].is_string());
    }
    assert!(text.ends_with('\n'));
    let full = lines.iter().filter(|l| l.contains("t-full-")).count();
    assert!((1..6).contains(&full), "some fit, some did not: {full}");
    assert_eq!(
        dropped,
        (6 - full) as f64,
        "exactly the records not written are counted"
    );
    for i in 6..9 {
        assert!(
            text.contains(&format!("t-room-{i}")),
            "record {i} after room came back"
        );
    }
    let m = p.metrics().await;
    assert_eq!(
        live::sample(&m, "a2a_audit_records_dropped_total", &[]),
        Some(dropped)
    );
}
