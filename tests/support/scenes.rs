//! Scenes of the live tests: a proxy in front of a scripted upstream, and
//! the exchanges and payloads the catalogue-kind tests (tests/live/kinds.rs,
//! spec_kinds.rs, field_kinds.rs) build their cases from.

use serde_json::{json, Value};

use super::a2a::*;
use super::{tap::Proxy, Reply, Upstream};

pub async fn setup(extra: &str) -> (Upstream, Proxy) {
    let up = Upstream::start().await;
    let proxy = Proxy::start(up.addr, extra).await;
    (up, proxy)
}

/// A streamed send answered by `events` as SSE frames (checked byte for byte).
pub async fn send_stream(up: &Upstream, p: &Proxy, id: i64, events: &[Value]) {
    exchange(up, p, stream_req(id), Reply::sse(&frames(id, events))).await;
}

pub fn stream_req(id: i64) -> String {
    request(json!(id), "SendStreamingMessage", new_message())
}

pub fn bare_task(id: &str, ctx: &str, state: &str, ts: Option<&str>) -> Value {
    let mut t = json!({"id": id, "contextId": ctx, "status": {"state": state}});
    if let Some(ts) = ts {
        t["status"]["timestamp"] = json!(ts);
    }
    t
}

pub fn with_ts(mut ev: Value, ts: &str) -> Value {
    if let Some(s) = ev.get_mut("statusUpdate") {
        s["status"]["timestamp"] = json!(ts);
    }
    ev
}

pub async fn get_task(up: &Upstream, p: &Proxy, id: i64, task_id: &str, result: Value) {
    exchange(
        up,
        p,
        request(json!(id), "GetTask", json!({"id": task_id})),
        Reply::json(200, &rpc(json!(id), result)),
    )
    .await;
}
