//! Two a2a-tap processes in front of one agent, sharing the task registry
//! through a real `redis-server` (installed by scripts/setup-redis.sh,
//! started here on a free port): what one replica saw counts on the other
//! from the moment it arrives there, never before; Redis going away costs
//! no traffic and no false finding. And the stream as an attacker with
//! write access to it would use it (entries written here like
//! `redis-cli XADD`): forged, oversized, future-stamped, at the largest id.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::a2a::*;
use crate::support::process::Process;
use crate::support::{get, metric, Hold, Proxied, Reply, Upstream, NAME};

/// A `redis-server` on a port of its own, without persistence; killed on drop.
struct RedisServer {
    port: u16,
    child: Child,
}

impl RedisServer {
    fn start() -> RedisServer {
        RedisServer::on(crate::support::ports::port_named_in_advance())
    }

    fn on(port: u16) -> RedisServer {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            // DEBUG SLEEP, to make it slow.
            .args(["--enable-debug-command", "local"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is not installed: run ./scripts/setup-redis.sh");
        let server = RedisServer { port, child };
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.ping().is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn ping(&self) -> redis::RedisResult<String> {
        redis::cmd("PING").query(&mut self.connection()?)
    }

    /// A connection of its own (a command may take up to 30 s).
    fn connection(&self) -> redis::RedisResult<redis::Connection> {
        let client = redis::Client::open(self.url())?;
        let con = client.get_connection_with_timeout(Duration::from_secs(1))?;
        con.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(con)
    }

    /// `XADD test:facts <id> <fields...>`, as anyone with write access
    /// could; the id Redis gave.
    fn xadd(&self, id: &str, fields: &[(&str, &[u8])]) -> String {
        let mut cmd = redis::cmd("XADD");
        cmd.arg(STREAM).arg(id);
        for (name, value) in fields {
            cmd.arg(*name).arg(*value);
        }
        cmd.query(&mut self.connection().expect("redis"))
            .expect("XADD")
    }

    /// Kills the server (its data goes with it).
    fn kill(mut self) -> u16 {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.port
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn shared(url: &str) -> String {
    format!("[registry]\nbackend = \"redis\"\nredis_url = \"{url}\"\nkey_prefix = \"test\"\n")
}

/// The stream of `key_prefix = "test"`.
const STREAM: &str = "test:facts";

/// `shared`, the replicas signing with a key.
fn signed(url: &str) -> String {
    format!(
        "{}shared_key = \"0123456789abcdef-test-key\"\n",
        shared(url)
    )
}

/// The `f` field of an entry of one fact (the protobuf of docs/registry.md:
/// a repeated message of task id 1, context id 2, state 3, timestamp 4).
fn fact_field(task: &str, state: &str, timestamp: Option<&str>) -> Vec<u8> {
    facts_field(&[(task, state, timestamp)])
}

fn facts_field(facts: &[(&str, &str, Option<&str>)]) -> Vec<u8> {
    fn put(out: &mut Vec<u8>, tag: u8, s: &[u8]) {
        out.push(tag << 3 | 2);
        varint(out, s.len());
        out.extend_from_slice(s);
    }
    fn varint(out: &mut Vec<u8>, mut n: usize) {
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }
    let mut out = Vec::new();
    for (task, state, timestamp) in facts {
        let mut one = Vec::new();
        put(&mut one, 1, task.as_bytes());
        put(&mut one, 3, state.as_bytes());
        if let Some(t) = timestamp {
            put(&mut one, 4, t.as_bytes());
        }
        put(&mut out, 1, &one);
    }
    out
}

/// An entry as a replica named `replica` would write it, unsigned.
fn forged(redis: &RedisServer, replica: &str, f: &[u8]) -> String {
    redis.xadd("*", &[("v", b"2"), ("r", replica.as_bytes()), ("f", f)])
}

async fn errors(p: &Process, op: &str) -> f64 {
    sample(p.admin, "a2a_registry_errors_total", &[("op", op)]).await
}

async fn sample(admin: SocketAddr, name: &str, labels: &[(&str, &str)]) -> f64 {
    let (_, body) = get(admin, "/metrics").await;
    metric(&String::from_utf8_lossy(&body), name, labels).unwrap_or(0.0)
}

/// Waits (bounded) until `name{labels}` on `p` satisfies `ok`.
async fn until(p: &Process, name: &str, labels: &[(&str, &str)], ok: impl Fn(f64) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let v = sample(p.admin, name, labels).await;
        if ok(v) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name}{labels:?} stayed at {v}:\n{}",
            p.stderr()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn received(p: &Process) -> f64 {
    sample(
        p.admin,
        "a2a_registry_facts_total",
        &[("direction", "received")],
    )
    .await
}

/// Waits until `p` has heard more than `before` facts.
async fn heard_beyond(p: &Process, before: f64) {
    until(
        p,
        "a2a_registry_facts_total",
        &[("direction", "received")],
        |v| v > before,
    )
    .await;
}

async fn get_task(up: &Upstream, p: &Process, id: i64, task: &str, state: &str) {
    get_task_at(up, p, id, task, state, None).await;
}

/// `get_task`, the status stamped `at`.
async fn get_task_at(
    up: &Upstream,
    p: &Process,
    id: i64,
    task: &str,
    state: &str,
    at: Option<&str>,
) {
    let mut status = json!({"state": state});
    if let Some(at) = at {
        status["timestamp"] = json!(at);
    }
    let answer = rpc(
        json!(id),
        json!({"id": task, "contextId": "c", "status": status}),
    );
    exchange(
        up,
        p,
        request(json!(id), "GetTask", json!({"id": task})),
        Reply::json(200, &answer),
    )
    .await;
}

/// Through A: t-1 and t-2 completed. Through B: t-1 reported working, a
/// message to t-2 accepted, and a GetTask of t-3 that began before A's fact
/// about t-3 reached B answered working. B's records, and A's.
async fn across(
    up: &Upstream,
    a: &Process,
    b: &Process,
    shared: bool,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let before = received(b).await;
    get_task(up, a, 1, "t-1", "TASK_STATE_COMPLETED").await;
    get_task(up, a, 2, "t-2", "TASK_STATE_COMPLETED").await;
    if shared {
        until(
            b,
            "a2a_registry_facts_total",
            &[("direction", "received")],
            |v| v >= before + 2.0,
        )
        .await;
    }
    get_task(up, b, 3, "t-1", "TASK_STATE_WORKING").await;
    let accepted = rpc(json!(4), task("t-2", "c", "TASK_STATE_COMPLETED"));
    exchange(
        up,
        b,
        request(json!(4), "SendMessage", follow_up("t-2", "c")),
        Reply::json(200, &accepted),
    )
    .await;
    // The causality trap: B's request is upstream (its answer held) before
    // A sees t-3 completed; the answer comes after B has heard of it.
    let hold = Hold::after(0);
    let mut held = Reply::json(200, &rpc(json!(5), task("t-3", "c", "TASK_STATE_WORKING")));
    held.hold = Some(hold.clone());
    let want = held.bytes();
    up.push(held);
    let listen = b.listen;
    let req = request(json!(5), "GetTask", json!({"id": "t-3"}));
    let pending =
        tokio::spawn(
            async move { crate::support::request_to(listen, "POST", "/", V1, &req).await },
        );
    up.wait_taken().await;
    let before = received(b).await;
    get_task(up, a, 6, "t-3", "TASK_STATE_COMPLETED").await;
    if shared {
        heard_beyond(b, before).await;
    }
    hold.release.notify_one();
    let (_, _, got) = pending.await.expect("held request");
    assert_eq!(got, want, "forwarded bytes differ");
    (settle(up, b).await, settle(up, a).await)
}

#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn what_one_replica_saw_counts_on_the_other_from_its_arrival() {
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let a = Process::start(up.addr, &shared(&redis.url()));
    let b = Process::start(up.addr, &shared(&redis.url()));
    for p in [&a, &b] {
        until(p, "a2a_registry_up", &[], |v| v == 1.0).await;
    }
    let (on_b, on_a) = across(&up, &a, &b, true).await;
    assert_eq!(
        kinds(&on_b),
        ["terminal_exit", "terminal_task_accepted"],
        "{on_b:#?}"
    );
    assert_eq!(on_b[0]["task_id"], "t-1");
    assert_eq!(on_b[0]["method"], "GetTask");
    assert_eq!(on_b[1]["task_id"], "t-2");
    assert!(on_a.is_empty(), "{on_a:#?}");
    for r in &on_b {
        check_fields(r);
    }
    assert_eq!(
        sample(a.admin, "a2a_registry_errors_total", &[("op", "decode")]).await,
        0.0
    );
}

#[tokio::test]
async fn with_the_memory_backend_each_replica_knows_only_its_own() {
    let up = Upstream::start().await;
    let a = Process::start(up.addr, "");
    let b = Process::start(up.addr, "");
    let (on_b, on_a) = across(&up, &a, &b, false).await;
    assert!(on_b.is_empty(), "{on_b:#?}");
    assert!(on_a.is_empty(), "{on_a:#?}");
}

/// Redis killed mid-run: traffic passes, the failures are counted, nothing
/// false is reported; restarted, the replicas reconnect and what they see
/// is shared again (the fact published while it was down among it).
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn redis_down_costs_no_traffic_and_sharing_resumes() {
    let redis = RedisServer::start();
    let url = redis.url();
    let up = Upstream::start().await;
    let a = Process::start(up.addr, &shared(&url));
    let b = Process::start(up.addr, &shared(&url));
    for p in [&a, &b] {
        until(p, "a2a_registry_up", &[], |v| v == 1.0).await;
    }
    let port = redis.kill();
    // While it is down: every exchange answered as the agent answered
    // (`exchange` compares the bytes), and B knows nothing of A's t-5.
    get_task(&up, &a, 1, "t-5", "TASK_STATE_COMPLETED").await;
    get_task(&up, &b, 2, "t-5", "TASK_STATE_WORKING").await;
    for p in [&a, &b] {
        until(p, "a2a_registry_up", &[], |v| v == 0.0).await;
    }
    until(&b, "a2a_registry_errors_total", &[("op", "read")], |v| {
        v >= 1.0
    })
    .await;
    let down = settle(&up, &b).await;
    assert!(down.is_empty(), "{down:#?}");
    assert!(
        a.stderr().contains("shared task registry"),
        "{}",
        a.stderr()
    );
    let _redis = RedisServer::on(port);
    for p in [&a, &b] {
        until(p, "a2a_registry_up", &[], |v| v == 1.0).await;
    }
    // A's fact about t-5, kept while Redis was down, reaches B now.
    heard_beyond(&b, 0.0).await;
    get_task(&up, &b, 3, "t-5", "TASK_STATE_WORKING").await;
    let before = received(&b).await;
    get_task(&up, &a, 4, "t-6", "TASK_STATE_COMPLETED").await;
    heard_beyond(&b, before).await;
    get_task(&up, &b, 5, "t-6", "TASK_STATE_WORKING").await;
    let after = settle(&up, &b).await;
    assert_eq!(kinds(&after), ["terminal_exit"; 2], "{after:#?}");
    assert_eq!(after[0]["task_id"], "t-5");
    assert_eq!(after[1]["task_id"], "t-6");
}

/// A replica that starts after the fact reads the stream from its start:
/// a task completed through A before B existed is known to B's first
/// request.
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn a_late_replica_knows_the_recent_past() {
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let a = Process::start(up.addr, &shared(&redis.url()));
    until(&a, "a2a_registry_up", &[], |v| v == 1.0).await;
    get_task(&up, &a, 1, "t-7", "TASK_STATE_COMPLETED").await;
    until(
        &a,
        "a2a_registry_facts_total",
        &[("direction", "published")],
        |v| v >= 1.0,
    )
    .await;
    let b = Process::start(up.addr, &shared(&redis.url()));
    heard_beyond(&b, 0.0).await;
    get_task(&up, &b, 2, "t-7", "TASK_STATE_WORKING").await;
    let on_b = settle(&up, &b).await;
    assert_eq!(kinds(&on_b), ["terminal_exit"], "{on_b:#?}");
    assert_eq!(on_b[0]["task_id"], "t-7");
}

/// With `shared_key`, an entry that is not signed with it (none, or
/// another key's) is skipped and counted, so a forged "task completed"
/// accuses no one; the replicas' own signed facts still count, and the
/// finding that rests on one names the replica it was heard from.
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn with_a_shared_key_forged_entries_are_skipped() {
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let a = Process::start(up.addr, &signed(&redis.url()));
    let b = Process::start(up.addr, &signed(&redis.url()));
    for p in [&a, &b] {
        until(p, "a2a_registry_up", &[], |v| v == 1.0).await;
    }
    let f = fact_field("t-forged", "completed", None);
    forged(&redis, "forger", &f);
    let wrong = [7u8; 32];
    redis.xadd(
        "*",
        &[("v", b"2"), ("r", b"forger"), ("s", &wrong), ("f", &f)],
    );
    until(
        &b,
        "a2a_registry_errors_total",
        &[("op", "unsigned")],
        |v| v == 1.0,
    )
    .await;
    until(
        &b,
        "a2a_registry_errors_total",
        &[("op", "bad_signature")],
        |v| v == 1.0,
    )
    .await;
    // The agent truthfully says working: nothing to report.
    get_task(&up, &b, 1, "t-forged", "TASK_STATE_WORKING").await;
    // A's signed fact is heard, and what rests on it says so.
    let before = received(&b).await;
    get_task(&up, &a, 2, "t-real", "TASK_STATE_COMPLETED").await;
    heard_beyond(&b, before).await;
    get_task(&up, &b, 3, "t-real", "TASK_STATE_WORKING").await;
    let on_b = settle(&up, &b).await;
    assert_eq!(kinds(&on_b), ["terminal_exit"], "{on_b:#?}");
    assert_eq!(on_b[0]["task_id"], "t-real");
    let from = on_b[0]["heard_from"].as_str().expect("heard_from");
    assert!(!from.is_empty() && from != "forger", "{from}");
    let detail = on_b[0]["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains(&format!("heard from replica {from}")),
        "{detail}"
    );
    check_fields(&on_b[0]);
    assert_eq!(errors(&b, "decode").await, 0.0);
}

/// With no key, a forged entry is believed (the docs say write access to
/// the stream is the power to add findings), but the finding names the
/// replica it rests on (`heard_from`) in its record and its detail; a
/// finding that rests on what this replica saw has no `heard_from`.
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn without_a_key_a_finding_on_a_heard_fact_names_the_replica() {
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let b = Process::start(up.addr, &shared(&redis.url()));
    until(&b, "a2a_registry_up", &[], |v| v == 1.0).await;
    forged(&redis, "forger", &fact_field("t-heard", "completed", None));
    heard_beyond(&b, 0.0).await;
    get_task(&up, &b, 1, "t-heard", "TASK_STATE_WORKING").await;
    get_task(&up, &b, 2, "t-seen", "TASK_STATE_COMPLETED").await;
    get_task(&up, &b, 3, "t-seen", "TASK_STATE_WORKING").await;
    let on_b = settle(&up, &b).await;
    assert_eq!(kinds(&on_b), ["terminal_exit"; 2], "{on_b:#?}");
    assert_eq!(on_b[0]["task_id"], "t-heard");
    assert_eq!(on_b[0]["heard_from"], "forger");
    let detail = on_b[0]["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("the terminal state was heard from replica forger"),
        "{detail}"
    );
    assert_eq!(on_b[1]["task_id"], "t-seen");
    assert!(on_b[1].get("heard_from").is_none(), "{:#?}", on_b[1]);
}

/// Entries far over what a replica writes (400,000 facts; 16 MB ids) are
/// skipped and counted without being brought from Redis, and the entries
/// after them are read: the replica's memory does not grow with them.
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn oversized_entries_are_skipped_without_holding_them() {
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let b = Process::start(up.addr, &shared(&redis.url()));
    until(&b, "a2a_registry_up", &[], |v| v == 1.0).await;
    let rss_before = b.rss_kib();
    let names: Vec<String> = (0..400_000).map(|i| format!("t-{i}")).collect();
    let many: Vec<(&str, &str, Option<&str>)> = names
        .iter()
        .map(|n| (n.as_str(), "completed", None))
        .collect();
    let many = facts_field(&many);
    for _ in 0..4 {
        forged(&redis, "big", &many);
    }
    let long = "x".repeat(16 << 20);
    for _ in 0..2 {
        forged(&redis, "big", &fact_field(&long, "completed", None));
    }
    forged(&redis, "small", &fact_field("t-after", "completed", None));
    until(
        &b,
        "a2a_registry_errors_total",
        &[("op", "oversized")],
        |v| v == 6.0,
    )
    .await;
    heard_beyond(&b, 0.0).await;
    assert_eq!(received(&b).await, 1.0, "only the entry after them");
    let grown = b.rss_kib().saturating_sub(rss_before);
    assert!(grown < 16 * 1024, "RSS grew {grown} KiB");
    get_task(&up, &b, 1, "t-after", "TASK_STATE_WORKING").await;
    let on_b = settle(&up, &b).await;
    assert_eq!(kinds(&on_b), ["terminal_exit"], "{on_b:#?}");
}

/// A heard fact stamped far in the future (9999-12-31) is used without its
/// timestamp (counted): it cannot make the agent's real "completed" look
/// stale, so the exit that follows is reported.
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn a_future_timestamp_cannot_hide_an_exit() {
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let b = Process::start(up.addr, &shared(&redis.url()));
    until(&b, "a2a_registry_up", &[], |v| v == 1.0).await;
    let f = fact_field("t-9999", "working", Some("9999-12-31T23:59:59Z"));
    forged(&redis, "forger", &f);
    heard_beyond(&b, 0.0).await;
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    get_task_at(&up, &b, 1, "t-9999", "TASK_STATE_COMPLETED", Some(&now)).await;
    get_task_at(&up, &b, 2, "t-9999", "TASK_STATE_WORKING", Some(&now)).await;
    let on_b = settle(&up, &b).await;
    assert_eq!(kinds(&on_b), ["terminal_exit"], "{on_b:#?}");
    assert!(on_b[0].get("heard_from").is_none(), "seen here: {on_b:#?}");
    assert_eq!(errors(&b, "future_timestamp").await, 1.0);
}

/// One entry at the largest stream id makes Redis refuse every new entry:
/// the replica says so as an error, with the fix, and keeps its facts;
/// once the stream is deleted they are published and heard (the readers
/// never moved past the entry at the largest id).
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn an_entry_at_the_largest_id_is_reported_with_its_fix() {
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let a = Process::start(up.addr, &shared(&redis.url()));
    let b = Process::start(up.addr, &shared(&redis.url()));
    for p in [&a, &b] {
        until(p, "a2a_registry_up", &[], |v| v == 1.0).await;
    }
    let max = "18446744073709551615-18446744073709551615";
    let f = fact_field("t-x", "completed", None);
    assert_eq!(
        redis.xadd(max, &[("v", b"2"), ("r", b"forger"), ("f", &f)]),
        max
    );
    get_task(&up, &a, 1, "t-max", "TASK_STATE_COMPLETED").await;
    until(
        &a,
        "a2a_registry_errors_total",
        &[("op", "stream_id")],
        |v| v >= 1.0,
    )
    .await;
    let log = a.stderr();
    assert!(
        log.contains("ERROR")
            && log.contains("largest possible id")
            && log.contains("DEL test:facts"),
        "{log}"
    );
    assert_eq!(
        received(&b).await,
        0.0,
        "the entry at the largest id is not read"
    );
    let _: () = redis::cmd("DEL")
        .arg(STREAM)
        .query(&mut redis.connection().expect("redis"))
        .expect("DEL");
    heard_beyond(&b, 0.0).await;
    get_task(&up, &b, 2, "t-max", "TASK_STATE_WORKING").await;
    let on_b = settle(&up, &b).await;
    assert_eq!(kinds(&on_b), ["terminal_exit"], "{on_b:#?}");
    assert_eq!(errors(&a, "dropped").await, 0.0);
}

/// Redis made slow (`DEBUG SLEEP 5`, twice) under load: the facts the
/// analysis thread records while the publisher waits in a command go to
/// the backlog, none dropped while it has room, and every one is heard by
/// the other replica once Redis answers again.
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn a_slow_redis_loses_no_fact_while_the_backlog_has_room() {
    use http_body_util::BodyExt;
    let redis = RedisServer::start();
    // An agent that answers every GetTask: its task, working.
    let agent = crate::support::upstream(|req: http::Request<hyper::body::Incoming>| async move {
        let body = req.into_body().collect().await.map(|b| b.to_bytes());
        let v: serde_json::Value =
            serde_json::from_slice(&body.unwrap_or_default()).unwrap_or_default();
        let task = json!({"id": v["params"]["id"], "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING"}});
        http::Response::builder()
            .header("content-type", "application/json")
            .body(crate::support::full(rpc(v["id"].clone(), task)))
            .expect("response")
    })
    .await;
    let a = Process::start(agent, &shared(&redis.url()));
    let b = Process::start(agent, &shared(&redis.url()));
    for p in [&a, &b] {
        until(p, "a2a_registry_up", &[], |v| v == 1.0).await;
    }
    // Load through A: each GetTask a new task, so a new fact; at most
    // 40,000 (below the backlog's bound), until Redis is fast again.
    let slow = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut load = Vec::new();
    for w in 0..4 {
        let (slow, sent, listen) = (slow.clone(), sent.clone(), a.listen);
        load.push(tokio::spawn(async move {
            for i in 0..10_000 {
                if !slow.load(std::sync::atomic::Ordering::Acquire) {
                    break;
                }
                let req = request(json!(i), "GetTask", json!({"id": format!("t-{w}-{i}")}));
                let (status, _, _) =
                    crate::support::request_to(listen, "POST", "/", V1, &req).await;
                assert_eq!(status, 200);
                sent.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            }
        }));
    }
    let port = redis.port;
    let sleeps = tokio::task::spawn_blocking(move || {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).expect("client");
        let mut con = client.get_connection().expect("connection");
        for _ in 0..2 {
            let _: () = redis::cmd("DEBUG")
                .arg("SLEEP")
                .arg(5)
                .query(&mut con)
                .expect("DEBUG SLEEP");
        }
    });
    sleeps.await.expect("sleeps");
    slow.store(false, std::sync::atomic::Ordering::Release);
    for l in load {
        l.await.expect("load");
    }
    let n = sent.load(std::sync::atomic::Ordering::Acquire) as f64;
    assert!(n > 2_000.0, "the load made {n} facts");
    let published = |p: &Process| {
        sample(
            p.admin,
            "a2a_registry_facts_total",
            &[("direction", "published")],
        )
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (p, d) = (published(&a).await, errors(&a, "dropped").await);
        if p + d >= n {
            assert_eq!(d, 0.0, "{d} of {n} facts dropped, {p} published");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{p} published and {d} dropped of {n}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Every task A saw is known to B (a pipeline Redis ran after the
    // client gave up on it is written again: facts may be heard twice).
    until(
        &b,
        "a2a_tasks_tracked",
        &[("upstream", NAME), ("state", "working")],
        |v| v == n,
    )
    .await;
    assert!(received(&b).await >= n);
}

/// With `[[route]]` tables, each fact travels with its route's name: what
/// one replica saw of a task on route `one` counts on the other for route
/// `one` alone; the same task id on route `two` is another agent's task.
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn facts_count_for_their_own_route_only() {
    facts_for_their_own_route("").await;
}

/// The same with each route on its own analysis thread: what is heard
/// goes to the thread of its route (`one`, here on the second).
#[tokio::test]
#[ignore = "needs redis-server (scripts/setup-redis.sh): run scripts/test.sh"]
async fn facts_count_for_their_own_route_on_its_analysis_thread() {
    facts_for_their_own_route("[analysis]\nthreads = 2\n").await;
}

async fn facts_for_their_own_route(analysis: &str) {
    let redis = RedisServer::start();
    let (one, two) = (Upstream::start().await, Upstream::start().await);
    // Route two first: the first route is where entries without a route
    // go, so facts that lost their route would accuse two, not one.
    let config = format!(
        "{analysis}{}[[route]]\nname = \"two\"\nupstream = \"http://{}\"\npath_prefix = \"/two\"\n\
         [[route]]\nname = \"one\"\nupstream = \"http://{}\"\npath_prefix = \"/one\"\n",
        shared(&redis.url()),
        two.addr,
        one.addr
    );
    let launch = || {
        let launch = crate::support::process::Launch {
            config: Some(config.clone()),
            ..Default::default()
        };
        Process::launch("127.0.0.1:1".parse().expect("addr"), "", launch)
    };
    let (a, b) = (launch(), launch());
    for p in [&a, &b] {
        until(p, "a2a_registry_up", &[], |v| v == 1.0).await;
    }
    let get = |id: i64| request(json!(id), "GetTask", json!({"id": "t-1"}));
    let answer = |id: i64, state: &str| rpc(json!(id), task("t-1", "c", state));
    let before = received(&b).await;
    one.push(Reply::json(200, &answer(1, "TASK_STATE_COMPLETED")));
    assert_eq!(a.send("POST", "/one", V1, &get(1)).await.0, 200);
    heard_beyond(&b, before).await;
    // Route two's agent has a task of that id too: not the one A saw.
    two.push(Reply::json(200, &answer(2, "TASK_STATE_WORKING")));
    assert_eq!(b.send("POST", "/two", V1, &get(2)).await.0, 200);
    // Route one's agent reports the task A saw completed working again.
    one.push(Reply::json(200, &answer(3, "TASK_STATE_WORKING")));
    assert_eq!(b.send("POST", "/one", V1, &get(3)).await.0, 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    let records = loop {
        let records = b.records();
        if !records.is_empty() || Instant::now() > deadline {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(kinds(&records), ["terminal_exit"], "{records:#?}");
    assert_eq!(records[0]["upstream"], "one");
    assert_eq!(records[0]["request_id"], "2", "B's second request, on /one");
    assert!(records[0]["heard_from"].is_string(), "{:#?}", records[0]);
    assert!(a.records().is_empty(), "{:#?}", a.records());
}
