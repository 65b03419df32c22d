//! The bindings and versions through the running proxy: REST 1.0 streams
//! and 0.3 JSON-RPC sends with their audit fields, and the request and
//! stream metrics one stream leaves. The caller's bytes always equal the
//! upstream's.

use crate::support::a2a::*;
use crate::support::{metric, tap::Proxy, total, Hold, Proxied, Reply, Upstream, NAME};
use serde_json::{json, Value};

async fn setup(extra: &str) -> (Upstream, Proxy) {
    let up = Upstream::start().await;
    let proxy = Proxy::start(up.addr, extra).await;
    (up, proxy)
}

fn stream_req(id: i64) -> String {
    request(json!(id), "SendStreamingMessage", new_message())
}

fn rest_event(ev: Value) -> String {
    ev.to_string()
}

#[tokio::test]
async fn rest_stream_abandoned_artifact_with_rest_fields() {
    let (up, p) = setup("").await;
    let body =
        json!({"message": {"role": "ROLE_USER", "messageId": "m-1", "parts": [{"text": "hi"}]}})
            .to_string();
    let ok: Vec<String> = [
        task("t-ok", "c", "TASK_STATE_WORKING"),
        artifact("t-ok", "c", "a1", false, true),
        status("t-ok", "c", "TASK_STATE_COMPLETED"),
    ]
    .into_iter()
    .map(rest_event)
    .collect();
    pass(&up, &p, "/rest/message:stream", V1, &body, Reply::sse(&ok)).await;
    let bad: Vec<String> = [
        task("t-1", "c", "TASK_STATE_WORKING"),
        artifact("t-1", "c", "a1", false, false),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ]
    .into_iter()
    .map(rest_event)
    .collect();
    pass(&up, &p, "/rest/message:stream", V1, &body, Reply::sse(&bad)).await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["abandoned_artifact"], "{recs:#?}");
    let r = &recs[0];
    check_fields(r);
    assert_eq!(
        (
            r["binding"].as_str(),
            r["version"].as_str(),
            r["method"].as_str()
        ),
        (Some("rest"), Some("1.0"), Some("SendStreamingMessage"))
    );
    assert_eq!(
        (
            r["severity"].as_str(),
            r["task_id"].as_str(),
            r["event_index"].as_u64()
        ),
        (Some("error"), Some("t-1"), Some(2))
    );
    let scrape = p.metrics().await;
    let n = total(
        &scrape,
        "a2a_requests_total",
        &[
            ("binding", "rest"),
            ("method", "SendStreamingMessage"),
            ("code", "2xx"),
        ],
    );
    assert_eq!(n, Some(2.0), "{scrape}");
}

fn send03(id: i64, blocking: Option<bool>) -> String {
    let mut params = json!({"message": {"kind": "message", "role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "hi"}]}});
    if let Some(b) = blocking {
        params["configuration"] = json!({"blocking": b});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "message/send", "params": params}).to_string()
}

fn task03(id: i64, task_id: &str, state: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"kind": "task", "id": task_id, "contextId": "c", "status": {"state": state}}}).to_string()
}

#[tokio::test]
async fn v03_blocking_send_returning_working_with_03_fields() {
    let (up, p) = setup("").await;
    // Look-alikes: not blocking; blocking and completed.
    pass(
        &up,
        &p,
        "/",
        &[],
        &send03(1, None),
        Reply::json(200, &task03(1, "t-ok1", "working")),
    )
    .await;
    pass(
        &up,
        &p,
        "/",
        &[],
        &send03(2, Some(false)),
        Reply::json(200, &task03(2, "t-ok2", "submitted")),
    )
    .await;
    pass(
        &up,
        &p,
        "/",
        &[],
        &send03(3, Some(true)),
        Reply::json(200, &task03(3, "t-ok3", "completed")),
    )
    .await;
    pass(
        &up,
        &p,
        "/",
        &[],
        &send03(4, Some(true)),
        Reply::json(200, &task03(4, "t-1", "working")),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["blocking_returned_active"], "{recs:#?}");
    let r = &recs[0];
    check_fields(r);
    assert_eq!(
        (
            r["binding"].as_str(),
            r["version"].as_str(),
            r["method"].as_str()
        ),
        (Some("jsonrpc"), Some("0.3"), Some("SendMessage"))
    );
    assert_eq!(
        (
            r["severity"].as_str(),
            r["task_id"].as_str(),
            r["context_id"].as_str()
        ),
        (Some("error"), Some("t-1"), Some("c"))
    );
    assert!(r["event_index"].is_null());
}

#[tokio::test]
async fn stream_metrics_follow_the_frames() {
    let (up, p) = setup("").await;
    let evs = [
        task("t-1", "c", "TASK_STATE_SUBMITTED"),
        status("t-1", "c", "TASK_STATE_WORKING"),
        artifact("t-1", "c", "a1", false, false),
        artifact("t-1", "c", "a1", true, true),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ];
    let hold = Hold::after(2);
    let mut r = Reply::sse(&frames(1, &evs));
    r.hold = Some(hold.clone());
    let want = r.bytes();
    up.push(r);
    let req = stream_req(1);
    let caller = tokio::spawn({
        let listen = p.listen;
        async move { crate::support::request_to(listen, "POST", "/", V1, &req).await }
    });
    // While the stream is held open it is active.
    p.wait_metrics("one active stream", |s| {
        metric(s, "a2a_streams_active", &[("upstream", NAME)]) == Some(1.0)
    })
    .await;
    hold.release.notify_one();
    let (status, _, got) = tokio::time::timeout(std::time::Duration::from_secs(10), caller)
        .await
        .expect("caller done")
        .expect("join");
    assert_eq!(status, 200);
    assert_eq!(got, want);
    let recs = settle(&up, &p).await;
    assert!(recs.is_empty(), "{recs:#?}");
    // Registry gauges and transitions are published once a second.
    let s = p
        .wait_metrics("the transitions", |s| {
            metric(
                s,
                "a2a_task_transitions_total",
                &[("upstream", NAME), ("from", "working"), ("to", "completed")],
            )
            .is_some()
        })
        .await;
    let rq = |m: &str, c: &str| {
        metric(
            &s,
            "a2a_requests_total",
            &[
                ("upstream", NAME),
                ("binding", "jsonrpc"),
                ("method", m),
                ("code", c),
            ],
        )
    };
    // Ours and the sentinel's.
    assert_eq!(rq("SendStreamingMessage", "2xx"), Some(2.0), "{s}");
    let ev = |e: &str| {
        metric(
            &s,
            "a2a_stream_events_total",
            &[("upstream", NAME), ("binding", "jsonrpc"), ("event", e)],
        )
    };
    assert_eq!(ev("task"), Some(1.0), "{s}");
    assert_eq!(ev("status_update"), Some(2.0), "{s}");
    assert_eq!(ev("artifact_update"), Some(2.0), "{s}");
    assert_eq!(ev("message"), Some(0.0), "{s}");
    let tr = |f: &str, t: &str| {
        metric(
            &s,
            "a2a_task_transitions_total",
            &[("upstream", NAME), ("from", f), ("to", t)],
        )
    };
    assert_eq!(tr("submitted", "working"), Some(1.0), "{s}");
    assert_eq!(tr("working", "completed"), Some(1.0), "{s}");
    // Ours; the sentinel's stream has no decodable event.
    assert_eq!(
        metric(
            &s,
            "a2a_time_to_first_event_seconds_count",
            &[("upstream", NAME)]
        ),
        Some(1.0),
        "{s}"
    );
    assert_eq!(
        metric(&s, "a2a_streams_active", &[("upstream", NAME)]),
        Some(0.0),
        "{s}"
    );
    assert_eq!(
        metric(
            &s,
            "a2a_stream_duration_seconds_count",
            &[("upstream", NAME), ("outcome", "terminal")]
        ),
        Some(1.0),
        "{s}"
    );
}
