//! Hostile agents and callers against the running binary: agent data that
//! tries to forge log lines, redaction that must hold whatever the shape of
//! the parts.

use crate::support::a2a::*;
use crate::support::{tap::Proxy, Reply, Upstream};
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
