//! The access log: one JSON line per exchange, with what the proxy saw
//! (ids the caller sent, status, bytes, duration) and, for an exchange the
//! validator judged, its task and findings.

use crate::support::a2a::*;
use crate::support::{tap::Proxy, Proxied, Reply, Upstream, NAME};
use serde_json::json;

const ON: &str = "[log]\naccess = true\n";
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

#[tokio::test]
async fn a_judged_exchange_names_its_task_and_findings() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, ON).await;
    let req = request(json!(7), "SendMessage", new_message());
    let reply = Reply::json(
        200,
        &rpc(json!(7), task("t-1", "c-1", "TASK_STATE_WORKING")),
    );
    let out_len = reply.bytes().len() as u64;
    up.push(reply);
    let traceparent = format!("00-{TRACE}-00f067aa0ba902b7-01");
    let headers = [
        ("traceparent", traceparent.as_str()),
        ("x-request-id", "req-42"),
        ("content-type", "application/json"),
    ];
    let (status, _) = p.send("POST", "/a2a", &headers, &req).await;
    assert_eq!(status, 200);
    let lines = p.wait_access(1).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    let l = &lines[0];
    assert_eq!(l["log"], "access");
    assert_eq!(l["upstream"], NAME);
    assert!(l["request_id"].is_u64(), "{l}");
    assert_eq!(l["trace_id"], TRACE);
    assert_eq!(l["x_request_id"], "req-42");
    assert_eq!(l["http_method"], "POST");
    assert_eq!(l["path"], "/a2a");
    assert_eq!(
        (l["binding"].as_str(), l["method"].as_str()),
        (Some("jsonrpc"), Some("SendMessage"))
    );
    assert_eq!(l["status"], 200);
    assert_eq!(l["bytes_in"], req.len() as u64);
    assert_eq!(l["bytes_out"], out_len);
    assert!(l["duration_ms"].as_f64().is_some_and(|d| d >= 0.0), "{l}");
    assert_eq!(l["task_id"], "t-1");
    assert_eq!(l["findings"], 1, "blocking_returned_active: {l}");
    // The audit record and the access line name the same request.
    let recs = p.wait_records(1).await;
    assert_eq!(recs[0]["request_id"], l["request_id"].to_string().as_str());
}

#[tokio::test]
async fn other_traffic_and_refusals_have_their_line_too() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, ON).await;
    up.push(Reply::json(200, "{}"));
    let (status, _) = p.send("GET", "/healthz", &[], "").await;
    assert_eq!(status, 200);
    let lines = p.wait_access(1).await;
    let l = &lines[0];
    assert_eq!(
        (l["binding"].as_str(), l["method"].as_str()),
        (Some("unknown"), Some("other"))
    );
    assert!(
        l["findings"].is_null() && l["task_id"].is_null(),
        "not judged: {l}"
    );
    assert!(
        l["trace_id"].is_null() && l["x_request_id"].is_null(),
        "none sent: {l}"
    );

    let (_refusing, closed) = crate::support::ports::refused();
    let p = Proxy::start(closed, ON).await;
    let (status, _) = p
        .send(
            "POST",
            "/",
            &[],
            &request(json!(1), "SendMessage", new_message()),
        )
        .await;
    assert_eq!(status, 502);
    let lines = p.wait_access(1).await;
    let l = &lines[0];
    assert_eq!(
        (l["method"].as_str(), l["status"].as_u64()),
        (Some("SendMessage"), Some(502)),
        "{l}"
    );
    assert_eq!(l["findings"], 0, "{l}");
}

#[tokio::test]
async fn the_access_log_is_off_by_default() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    up.push(Reply::json(200, "{}"));
    let _ = p.send("GET", "/", &[], "").await;
    let _ = p.send("GET", "/", &[], "").await;
    // A kept sleep: an absence has no signal to await.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(p.access_lines().is_empty());
}

/// Access lines and audit records sent to one file go through one writer:
/// every line whole, both kinds there.
#[tokio::test]
async fn access_lines_and_audit_records_share_a_file_without_interleaving() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("both.jsonl");
    let up = Upstream::start().await;
    let extra = format!(
        "audit_log = \"{}\"\n[log]\naccess = true\naccess_log = \"{}\"\n",
        path.display(),
        path.display()
    );
    let target = a2a_tap::report::audit::Target::File(path.clone());
    let p = Proxy::start_with_audit(up.addr, &extra, Some(target)).await;
    let n = 50;
    for id in 0..n {
        let t = format!("t-{id}");
        up.push(Reply::json(
            200,
            &rpc(json!(id), task(&t, "c", "TASK_STATE_WORKING")),
        ));
        let (status, _) = p
            .send(
                "POST",
                "/",
                &[],
                &request(json!(id), "SendMessage", new_message()),
            )
            .await;
        assert_eq!(status, 200);
    }
    p.stop().await;
    let text = std::fs::read_to_string(&path).expect("read");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("torn line ({e}): {l}")))
        .collect();
    let access = lines.iter().filter(|l| l["log"] == "access").count();
    let audit = lines
        .iter()
        .filter(|l| l["kind"] == "blocking_returned_active")
        .count();
    assert_eq!((access, audit), (n as usize, n as usize), "{text}");
}
