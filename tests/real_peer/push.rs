//! Issue 36, the real peers of push notifications: the official SDKs'
//! agents with their own push config stores and senders (Python `a2a-sdk`
//! 1.3.0 and 0.3.26, JavaScript `@a2a-js/sdk` 1.3.0 and 0.3.14) POST
//! deliveries to a real webhook receiver (tests/peers/webhook.py),
//! registered by the SDKs' own clients (tests/peers/push_client.py,
//! js/v1/push_client.mjs): send-time configs with a token, with a token and
//! `authentication`, and a config created on a task, then read, listed and
//! deleted. The peers and what each sends are in push/peers.rs.
//!
//! `*_push_deliveries_on_the_wire` hold what each SDK sends (header names,
//! content type, body shapes, how many deliveries for which events), the
//! facts tests/peers/README.md ("Push notifications") states;
//! `*_push_not_retried_when_the_webhook_fails`, that a webhook answering 500
//! gets the same deliveries. push/relay.rs runs the same caller straight to
//! the agent and through a2a-tap with `[push] relay = true` (caller →
//! a2a-tap → agent; agent → relay → receiver): the receiver gets the same
//! deliveries, the caller sees the same outcomes (its own webhook URL in
//! every config answer), and the audit log holds exactly the true findings.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{run_in, start_server, start_server_in, Scratch};

#[path = "push/peers.rs"]
mod peers;
use peers::{PushPeer, PEERS};

/// How long the receiver may take to record every expected delivery (the
/// JavaScript sender posts after the caller's answer, fire-and-forget).
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(20);
/// After the expected count arrived: long enough for a surplus to show up.
const QUIET: Duration = Duration::from_millis(500);

/// One request the receiver recorded.
#[derive(Debug)]
struct Delivery {
    method: String,
    path: String,
    /// Names lower-cased (HTTP names are case-insensitive; HTTP/1 proxies
    /// commonly lower-case them), in the order received.
    headers: Vec<(String, String)>,
    body: String,
}

impl Delivery {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What one run of the caller produced: its document, the receiver's
/// record, and how many deliveries the agent logged as not taken.
struct Run {
    outcomes: Value,
    deliveries: Vec<Delivery>,
    send_errors: usize,
}

/// The receiver's record: its whole lines (one being written is left for
/// the next read).
fn read_deliveries(path: &Path) -> Vec<Delivery> {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n') && !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("receiver record is not JSON ({e}): {line}"));
            let text = |f: &str| v[f].as_str().unwrap_or_default().to_string();
            let headers = v["headers"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|pair| {
                    let part = |i: usize| pair[i].as_str().unwrap_or_default().to_string();
                    (part(0).to_ascii_lowercase(), part(1))
                })
                .collect();
            Delivery {
                method: text("method"),
                path: text("path"),
                headers,
                body: text("body"),
            }
        })
        .collect()
}

/// The receiver's record once it holds `count` deliveries and nothing more
/// came for `QUIET`; a failure if they do not all arrive in time.
fn settled(path: &Path, count: usize, what: &str) -> Vec<Delivery> {
    let deadline = Instant::now() + DELIVERY_TIMEOUT;
    while read_deliveries(path).len() < count {
        assert!(
            Instant::now() < deadline,
            "{what}: {} of {count} deliveries within {DELIVERY_TIMEOUT:?}: {:#?}",
            read_deliveries(path).len(),
            read_deliveries(path)
        );
        // Polling the receiver's record, bounded above.
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(QUIET);
    let all = read_deliveries(path);
    assert_eq!(
        all.len(),
        count,
        "{what}: more deliveries than expected: {all:#?}"
    );
    all
}

/// The lines an agent logs per delivery its webhook did not take (a
/// non-2xx answer or none): a2a-sdk "Error sending push-notification",
/// @a2a-js/sdk "Error sending push notification", both versions.
const SEND_ERROR: [&str; 2] = [
    "Error sending push-notification",
    "Error sending push notification",
];

/// How many deliveries the agent logged as not taken, once that is `want`
/// (it logs after the answer, so shortly after the receiver's record).
fn send_errors(stderr: &Path, want: usize) -> usize {
    let count = || {
        let text = fs::read_to_string(stderr).unwrap_or_default();
        text.lines()
            .filter(|l| SEND_ERROR.iter().any(|e| l.contains(e)))
            .count()
    };
    let deadline = Instant::now() + QUIET * 10;
    while count() != want && Instant::now() < deadline {
        // Polling the agent's log, bounded above.
        thread::sleep(Duration::from_millis(50));
    }
    count()
}

/// Starts the receiver (answering `status`), then the agent (`--push`,
/// plus `agent_more`), runs the caller against `base(agent_port)` (which
/// may start a proxy in front of the agent) and waits for every delivery.
fn play(
    peer: &PushPeer,
    scratch: &Scratch,
    (label, status): (&str, u16),
    agent_more: &[&str],
    base: &mut dyn FnMut(u16) -> String,
) -> Run {
    let record = scratch.path(&format!("{label}.webhook.jsonl"));
    let record_arg = record.display().to_string();
    let status_arg = status.to_string();
    let (_receiver, hook) = start_server(
        scratch,
        &format!("{}-webhook-{label}", peer.name),
        "tests/peers/webhook.py",
        &["--record", &record_arg, "--status", &status_arg],
    );
    let (program, dir) = (peer.agent.0)();
    let mut agent_args = vec![peer.agent.1, "--push", "--port", "0"];
    agent_args.extend_from_slice(agent_more);
    let (_agent, agent_port) = start_server_in(
        scratch,
        &format!("{}-agent-{label}", peer.name),
        (&program, &dir),
        &agent_args,
    );
    let (program, dir) = (peer.client.0)();
    let webhook = format!("http://127.0.0.1:{hook}/hook");
    let url = base(agent_port);
    let outcomes = run_in(
        scratch,
        &format!("{}-client-{label}", peer.name),
        (&program, &dir),
        &[
            peer.client.1,
            &url,
            "--webhook",
            &webhook,
            "--webhook-record",
            &record_arg,
        ],
    );
    let deliveries = settled(
        &record,
        peer.expected_count(),
        &format!("{} {label}", peer.name),
    );
    let stderr = scratch.path(&format!("{}-agent-{label}.stderr", peer.name));
    let failed = if (200..300).contains(&status) {
        0
    } else {
        deliveries.len()
    };
    let send_errors = send_errors(&stderr, failed);
    Run {
        outcomes,
        deliveries,
        send_errors,
    }
}

/// `kind[:state]` of a delivery body, and the task it is about: a 1.0
/// StreamResponse (exactly one member, §4.3.3) or a 0.3 Task.
fn summary(body: &Value, bodies_0_3: bool) -> (String, String) {
    if bodies_0_3 {
        assert_eq!(body["kind"], "task", "not a 0.3 Task: {body}");
        let state = body["status"]["state"].as_str().unwrap_or_default();
        let task = body["id"].as_str().unwrap_or_default();
        return (format!("task:{state}"), task.to_string());
    }
    let object = body.as_object().expect("a JSON object");
    assert_eq!(object.len(), 1, "not exactly one member (§4.3.3): {body}");
    let (kind, inner) = object.iter().next().expect("one member");
    let state = inner["status"]["state"].as_str();
    let task = match kind.as_str() {
        "task" => inner["id"].as_str(),
        _ => inner["taskId"].as_str(),
    };
    let label = state.map_or(kind.clone(), |s| format!("{kind}:{s}"));
    (label, task.unwrap_or_default().to_string())
}

/// The wire facts of tests/peers/README.md ("Push") hold for `run`.
fn assert_wire_facts(peer: &PushPeer, run: &Run) {
    let name = peer.name;
    assert_eq!(run.outcomes["pushNotifications"], true, "{name}: card");
    let mut by_path: BTreeMap<&str, Vec<&Delivery>> = BTreeMap::new();
    for d in &run.deliveries {
        by_path.entry(d.path.as_str()).or_default().push(d);
    }
    for (key, segment) in peer.interfaces {
        let doc = &run.outcomes[*key];
        for (scenario, want) in ["send", "send-auth", "configs"]
            .into_iter()
            .zip(peer.deliveries)
        {
            let path = format!("/hook/{segment}/{scenario}");
            let got = by_path.get(path.as_str()).cloned().unwrap_or_default();
            let bodies: Vec<Value> = got
                .iter()
                .map(|d| serde_json::from_str(&d.body).expect("a JSON body"))
                .collect();
            let (labels, tasks): (Vec<String>, Vec<String>) =
                bodies.iter().map(|b| summary(b, peer.bodies_0_3)).unzip();
            if peer.live_snapshots {
                assert_eq!(labels.len(), want.len(), "{name}: {path}: {bodies:#?}");
                assert_eq!(
                    labels.last().map(String::as_str),
                    want.last().copied(),
                    "{name}: {path}"
                );
            } else {
                assert_eq!(labels, want, "{name}: {path}: deliveries {bodies:#?}");
            }
            assert!(
                tasks.windows(2).all(|w| w[0] == w[1]),
                "{name}: {path}: one task"
            );
            let (token, configured) = match scenario {
                "send" => ("tok-send", None),
                "send-auth" => ("tok-auth", Some("Bearer secret-send")),
                _ => ("tok-created", Some("Bearer secret-created")),
            };
            let credentials = configured.filter(|_| peer.authorization);
            for d in got {
                assert_eq!(d.method, "POST", "{name}: {path}");
                assert_eq!(
                    d.header("content-type"),
                    Some(peer.content_type),
                    "{name}: {d:?}"
                );
                assert_eq!(d.header("authorization"), credentials, "{name}: {d:?}");
                let token_sent = credentials.is_none() || peer.token_beside_authorization;
                let want_token = token_sent.then_some(token);
                assert_eq!(
                    d.header("x-a2a-notification-token"),
                    want_token,
                    "{name}: {d:?}"
                );
            }
        }
        for scenario in ["send", "send-auth"] {
            let state = &doc[scenario]["finalState"];
            assert_eq!(state, "TASK_STATE_COMPLETED", "{name}: {key}: {doc:#}");
        }
        let configs = &doc["configs"];
        let created = serde_json::json!({
            "authentication": {"credentials": "secret-created", "scheme": "Bearer"},
            "id": "cfg-created",
            "taskId": "<task id>",
            "token": "tok-created",
            "url": format!("<webhook>/{segment}/configs"),
        });
        assert_eq!(configs["create"], created, "{name}: {key}: {configs:#}");
        assert_eq!(configs["get"], created, "{name}: {key}: {configs:#}");
        assert_eq!(
            configs["completedDelivered"], true,
            "{name}: {key}: {configs:#}"
        );
        if !peer.no_list_delete.contains(key) {
            assert_eq!(
                configs["list"],
                serde_json::json!([created]),
                "{name}: {key}"
            );
            assert_eq!(configs["delete"], "answered", "{name}: {key}: {configs:#}");
            assert_eq!(
                configs["listAfterDelete"],
                serde_json::json!([]),
                "{name}: {key}"
            );
        }
    }
}

/// The peer straight to a receiver answering `status`: the wire facts hold,
/// and the agent logged exactly the deliveries not answered 2xx as failed.
/// A failing webhook gets the same deliveries: no SDK retries.
fn wire_facts(peer: &PushPeer, status: u16) {
    let scratch = Scratch::new(&format!("push-wire-{}-{status}", peer.name));
    let run = play(peer, &scratch, ("direct", status), &[], &mut direct_url);
    assert_wire_facts(peer, &run);
    let failed = if status == 200 {
        0
    } else {
        run.deliveries.len()
    };
    assert_eq!(
        run.send_errors, failed,
        "{}: deliveries the agent logged as failed",
        peer.name
    );
}

fn direct_url(agent_port: u16) -> String {
    format!("http://127.0.0.1:{agent_port}")
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_1_3_0_push_deliveries_on_the_wire() {
    wire_facts(&PEERS[0], 200);
}

#[test]
#[ignore = "needs Node and the tests/peers/js packages of scripts/setup-node.sh: run scripts/test.sh"]
fn js_sdk_1_3_0_push_deliveries_on_the_wire() {
    wire_facts(&PEERS[1], 200);
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_0_3_26_push_deliveries_on_the_wire() {
    wire_facts(&PEERS[2], 200);
}

#[test]
#[ignore = "needs Node and the tests/peers/js packages of scripts/setup-node.sh, and the Python venv: run scripts/test.sh"]
fn js_sdk_0_3_14_push_deliveries_on_the_wire() {
    wire_facts(&PEERS[3], 200);
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_1_3_0_push_not_retried_when_the_webhook_fails() {
    wire_facts(&PEERS[0], 500);
}

#[test]
#[ignore = "needs Node and the tests/peers/js packages of scripts/setup-node.sh: run scripts/test.sh"]
fn js_sdk_1_3_0_push_not_retried_when_the_webhook_fails() {
    wire_facts(&PEERS[1], 500);
}

#[path = "push/relay.rs"]
mod relay;
