//! A2A payload builders and finding assertions for the live tests.

use serde_json::{json, Value};

use super::{Proxied, Reply, Upstream, NAME};

pub fn task(id: &str, ctx: &str, state: &str) -> Value {
    json!({"task": {"id": id, "contextId": ctx, "status": {"state": state}}})
}

pub fn status(id: &str, ctx: &str, state: &str) -> Value {
    json!({"statusUpdate": {"taskId": id, "contextId": ctx, "status": {"state": state}}})
}

pub fn artifact(id: &str, ctx: &str, aid: &str, append: bool, last: bool) -> Value {
    let mut ev = json!({"taskId": id, "contextId": ctx,
        "artifact": {"artifactId": aid, "parts": [{"text": "chunk"}]}});
    if append {
        ev["append"] = json!(true);
    }
    if last {
        ev["lastChunk"] = json!(true);
    }
    json!({ "artifactUpdate": ev })
}

pub fn message(ctx: &str) -> Value {
    json!({"message": {"messageId": "m-9", "role": "ROLE_AGENT", "contextId": ctx,
        "parts": [{"text": "hello"}]}})
}

/// A JSON-RPC response text with `id` and `result`.
pub fn rpc(id: Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// SSE frames, each a JSON-RPC response with `id`.
pub fn frames(id: i64, events: &[Value]) -> Vec<String> {
    events.iter().map(|e| rpc(json!(id), e.clone())).collect()
}

/// A 1.0 JSON-RPC request body.
pub fn request(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Params of a send naming no task.
pub fn new_message() -> Value {
    json!({"message": {"role": "ROLE_USER", "messageId": "m-1", "parts": [{"text": "hi"}]}})
}

/// Params of a send continuing `task_id`.
pub fn follow_up(task_id: &str, ctx: &str) -> Value {
    json!({"message": {"role": "ROLE_USER", "messageId": "m-2", "taskId": task_id,
        "contextId": ctx, "parts": [{"text": "more"}]}})
}

pub const V1: &[(&str, &str)] = &[("A2A-Version", "1.0")];

/// Runs one JSON-RPC 1.0 exchange through the proxy and checks that the
/// caller got exactly the upstream's bytes.
pub async fn exchange(up: &Upstream, proxy: &impl Proxied, req: String, reply: Reply) -> Vec<u8> {
    let want = reply.bytes();
    up.push(reply);
    let (status, got) = proxy.send("POST", "/", V1, &req).await;
    assert!(status < 600);
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want),
        "forwarded bytes differ from upstream bytes"
    );
    got
}

/// A finding the test expects.
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    pub kind: &'static str,
    pub severity: &'static str,
    pub task_id: Option<&'static str>,
    pub event_index: Option<u64>,
}

pub fn expect(
    kind: &'static str,
    severity: &'static str,
    task_id: Option<&'static str>,
    event_index: Option<u64>,
) -> Expect {
    Expect {
        kind,
        severity,
        task_id,
        event_index,
    }
}

const SENTINEL: &str = "sentinel-frame-not-json";

/// Sends a stream with one unreadable frame, and waits for its record: as
/// the analysis thread judges in order, what was handed to it before is
/// then judged. Not a barrier for the last bytes of a stream the upstream
/// holds open: the proxy hands those over when it polls the upstream
/// again, which may be after the caller has them (wait for them by a
/// metric, as the stall test does). Returns every record since the
/// previous settle's sentinel (all of them, the first time) up to this
/// one's.
pub async fn settle(up: &Upstream, proxy: &impl Proxied) -> Vec<Value> {
    // With `redact_parts`, the unreadable frame shows as its length.
    let redacted = format!("[redacted: {} bytes, not JSON]", SENTINEL.len());
    let is_sentinel = |r: &Value| r["evidence"] == SENTINEL || r["evidence"] == redacted.as_str();
    let sentinels = |recs: &[Value]| -> Vec<usize> {
        (0..recs.len()).filter(|&i| is_sentinel(&recs[i])).collect()
    };
    let earlier = sentinels(&proxy.records()).len();
    up.push(Reply::sse(&[SENTINEL.to_string()]));
    let (_, _) = proxy
        .send(
            "POST",
            "/",
            V1,
            &request(json!("sentinel"), "SendStreamingMessage", new_message()),
        )
        .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let recs = proxy.records();
        let at = sentinels(&recs);
        if let Some(&pos) = at.get(earlier) {
            let from = earlier.checked_sub(1).map_or(0, |i| at[i] + 1);
            return recs[from..pos].to_vec();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "sentinel record never came: {recs:#?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Settles, asserts that the records are exactly `want` (see
/// `assert_findings`), and returns them for checks of their own.
pub async fn settle_expecting(
    up: &Upstream,
    proxy: &impl Proxied,
    want: &[Expect],
    method: &str,
) -> Vec<Value> {
    let records = settle(up, proxy).await;
    assert_findings(proxy, &records, want, method).await;
    records
}

/// Asserts the records are exactly the expected findings (in order), with
/// every contract field present and sane, and the metric counted.
pub async fn assert_findings(
    proxy: &impl Proxied,
    records: &[Value],
    want: &[Expect],
    method: &str,
) {
    let got: Vec<(String, String)> = records
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap_or("?").to_owned(),
                r["severity"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = want
        .iter()
        .map(|e| (e.kind.to_owned(), e.severity.to_owned()))
        .collect();
    assert_eq!(got, expected, "records: {records:#?}");
    for (r, e) in records.iter().zip(want) {
        check_fields(r);
        assert_eq!(r["task_id"].as_str(), e.task_id, "task_id of {r}");
        assert_eq!(
            r["event_index"].as_u64(),
            e.event_index,
            "event_index of {r}"
        );
        if e.kind != "stalled_task" {
            assert_eq!(r["method"], method, "method of {r}");
            assert_eq!(r["binding"], "jsonrpc", "binding of {r}");
            assert_eq!(r["version"], "1.0", "version of {r}");
        }
    }
    let scrape = proxy.metrics().await;
    for e in want {
        let mut n = want
            .iter()
            .filter(|w| w.kind == e.kind && w.severity == e.severity)
            .count() as f64;
        if e.kind == "malformed_event" && e.severity == "error" {
            n += 1.0; // the sentinel's
        }
        let got = super::metric(
            &scrape,
            "a2a_violations_total",
            &[
                ("upstream", NAME),
                ("kind", e.kind),
                ("severity", e.severity),
            ],
        );
        assert_eq!(
            got,
            Some(n),
            "a2a_violations_total for {} {}",
            e.kind,
            e.severity
        );
    }
}

/// Every field of the contract's audit record is there, typed right.
pub fn check_fields(r: &Value) {
    for f in a2a_tap::report::audit::FIELDS {
        assert!(r.get(f).is_some(), "field {f} missing in {r}");
    }
    let ts = r["ts"].as_str().expect("ts");
    assert!(
        ts.ends_with('Z') && ts.contains('T'),
        "ts is RFC 3339 UTC: {ts}"
    );
    assert_eq!(r["upstream"], NAME);
    assert!(
        r["occurrences"].as_u64().is_some_and(|n| n >= 1),
        "occurrences: {r}"
    );
    assert!(
        !r["detail"].as_str().unwrap_or("").is_empty(),
        "detail: {r}"
    );
    // About a task alone (the registry's tick), not an exchange.
    if r["kind"] != "stalled_task" && r["kind"] != "push_not_delivered" {
        assert!(
            !r["request_id"].as_str().unwrap_or("").is_empty(),
            "request_id: {r}"
        );
    }
}

/// One exchange on any path; asserts the caller got the upstream's bytes.
pub async fn pass(
    up: &Upstream,
    p: &impl Proxied,
    path: &str,
    hdrs: &[(&str, &str)],
    body: &str,
    reply: Reply,
) {
    let want = reply.bytes();
    up.push(reply);
    let (_, got) = p.send("POST", path, hdrs, body).await;
    assert_eq!(got, want, "forwarded bytes differ from upstream bytes");
}

/// The kinds of `recs`, in order.
pub fn kinds(recs: &[Value]) -> Vec<&str> {
    recs.iter()
        .map(|r| r["kind"].as_str().unwrap_or("?"))
        .collect()
}
