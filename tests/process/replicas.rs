//! Two a2a-tap processes in front of one agent, sharing the task registry
//! through a real `redis-server` (installed by scripts/setup-redis.sh,
//! started here on a free port): what one replica saw counts on the other
//! from the moment it arrives there, never before; Redis going away costs
//! no traffic and no false finding.

use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::a2a::*;
use crate::support::process::Process;
use crate::support::{get, metric, Hold, Reply, Upstream};

/// A `redis-server` on a port of its own, without persistence; killed on drop.
struct RedisServer {
    port: u16,
    child: Child,
}

impl RedisServer {
    fn start() -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        RedisServer::on(port)
    }

    fn on(port: u16) -> RedisServer {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
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
        let client = redis::Client::open(self.url())?;
        let mut con = client.get_connection_with_timeout(Duration::from_secs(1))?;
        redis::cmd("PING").query(&mut con)
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
    let answer = rpc(
        json!(id),
        json!({"id": task, "contextId": "c", "status": {"state": state}}),
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
