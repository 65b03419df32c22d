//! Issue 36, the real peers of push notifications: the official Python SDK
//! (1.3.0: its InMemoryPushNotificationConfigStore and
//! BasePushNotificationSender) and JavaScript SDK (1.3.0: its
//! DefaultPushNotificationSender) agents POST deliveries to a real webhook
//! receiver (tests/peers/webhook.py), registered by the SDKs' own clients
//! (tests/peers/push_client.py, js/v1/push_client.mjs): send-time configs with
//! a token, with a token and `authentication`, and a config created on a
//! task, then read, listed and deleted.
//!
//! `*_push_deliveries_on_the_wire` hold what each SDK sends (header names,
//! content type, body shapes, how many deliveries for which events), the
//! facts tests/peers/README.md ("Push") states. `*_push_through_the_relay`
//! run the same caller straight to the agent and through a2a-tap with
//! `[push] relay = true` (caller → a2a-tap → agent; agent → relay →
//! receiver): the receiver gets the same deliveries, the caller sees the same
//! outcomes (its own webhook URL in every config answer), and the audit log
//! holds exactly the true findings.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{node, repo, run_in, start_server, start_server_in, venv, Expected, Scratch};

/// How long the receiver may take to record every expected delivery (the
/// JavaScript sender posts after the caller's answer, fire-and-forget).
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(20);
/// After the expected count arrived: long enough for a surplus to show up.
const QUIET: Duration = Duration::from_millis(500);

const PD: &str = "PushDelivery";

/// One SDK's agent, the caller that registers its configs, and what its
/// sender puts on the wire.
struct PushPeer {
    name: &'static str,
    /// The program and folder of the agent, and of the caller.
    agent: (fn() -> (PathBuf, PathBuf), &'static str),
    client: (fn() -> (PathBuf, PathBuf), &'static str),
    /// The client document's interfaces and their webhook path segment.
    interfaces: &'static [(&'static str, &'static str)],
    content_type: &'static str,
    /// Bodies are 0.3 Tasks (`kind: "task"`), not 1.0 StreamResponses.
    bodies_0_3: bool,
    /// The sender serialises the live task when it posts, not when the
    /// event happened (@a2a-js/sdk 0.3.14, deliveries queued per task): a
    /// delivery may show a later state than its event, so only the count
    /// and the terminal last one are the sender's to keep, and bodies do
    /// not compare between runs.
    live_snapshots: bool,
    /// Whether a config with `authentication` gets `Authorization`.
    authorization: bool,
    /// Whether a config with both a token and `authentication` gets the
    /// token header too (Python) or `Authorization` alone (JavaScript).
    token_beside_authorization: bool,
    /// The deliveries of `send`, `send-auth` and `configs` (created on an
    /// input-required task, then the follow-up that completes it), as
    /// `kind:state` or `kind`.
    deliveries: [&'static [&'static str]; 3],
    /// Interfaces whose client has no List/Delete of configs.
    no_list_delete: &'static [&'static str],
    /// The findings the proxied run's audit log must hold, exactly.
    expected: &'static [Expected],
}

/// An echo task's deliveries (1.0): the Task, working, two artifact chunks,
/// completed.
const ECHO_DELIVERIES: &[&str] = &[
    "task:TASK_STATE_SUBMITTED",
    "statusUpdate:TASK_STATE_WORKING",
    "artifactUpdate",
    "artifactUpdate",
    "statusUpdate:TASK_STATE_COMPLETED",
];

/// Python 1.3.0's 0.3 compatibility layer takes a 0.3 config but its sender
/// posts 1.0 StreamResponse bodies to it: the 0.3 receiver gets a shape its
/// version does not define (issue 36: "a config registered over 0.3 gets the
/// 0.3 shapes; anything else malformed_event"). One per delivery: 13 on each
/// 0.3 interface (5 + 5 + 3).
const fn malformed_0_3() -> Expected {
    ("malformed_event", "error", "webhook", "0.3", PD, None)
}

const PYTHON_EXPECTED: [Expected; 28] = {
    // The SDK's drift the other real-peer test names too: a 1.0 follow-up
    // stream (`configs`) begins with a statusUpdate (§3.1.2: "the stream
    // MUST begin with the Task object").
    let mut all = [malformed_0_3(); 28];
    all[26] = (
        "stream_start",
        "error",
        "jsonrpc",
        "1.0",
        "SendStreamingMessage",
        Some(0),
    );
    all[27] = (
        "stream_start",
        "error",
        "rest",
        "1.0",
        "SendStreamingMessage",
        Some(0),
    );
    all
};

/// a2a-sdk 0.3.26 ignores `authentication`: every delivery for a config
/// that has it lacks `Authorization: {scheme} {credentials}` (1.0 §4.3.3
/// MUST; 0.3's `PushNotificationAuthenticationInfo` is the same promise).
/// `send-auth` (1) and `configs` (3) on each of the two interfaces.
const PY03_EXPECTED: [Expected; 8] =
    [("push_auth_missing", "warning", "webhook", "0.3", PD, None); 8];

fn python_1_3_0() -> (PathBuf, PathBuf) {
    (venv(".venv"), repo())
}

/// @a2a-js/sdk 0.3.14 ignores `authentication` too: `send-auth` (5) and
/// `configs` (3) on each of the two interfaces.
const JS03_EXPECTED: [Expected; 16] =
    [("push_auth_missing", "warning", "webhook", "0.3", PD, None); 16];

/// A streamed 0.3 echo task's deliveries: the whole task after each event.
const ECHO_0_3: &[&str] = &[
    "task:submitted",
    "task:working",
    "task:working",
    "task:working",
    "task:completed",
];

const PEERS: [PushPeer; 4] = [
    PushPeer {
        name: "python-1.3.0",
        agent: (python_1_3_0, "tests/peers/agent.py"),
        client: (python_1_3_0, "tests/peers/push_client.py"),
        interfaces: &[
            ("JSONRPC/1.0", "jsonrpc-1.0"),
            ("HTTP+JSON/1.0", "rest-1.0"),
            ("JSONRPC/0.3", "jsonrpc-0.3"),
            ("HTTP+JSON/0.3", "rest-0.3"),
        ],
        content_type: "application/json",
        bodies_0_3: false,
        live_snapshots: false,
        authorization: true,
        token_beside_authorization: true,
        deliveries: [
            ECHO_DELIVERIES,
            ECHO_DELIVERIES,
            &[
                "statusUpdate:TASK_STATE_WORKING",
                "artifactUpdate",
                "statusUpdate:TASK_STATE_COMPLETED",
            ],
        ],
        // a2a-sdk's 0.3 REST client: "not supported in v0.3 REST".
        no_list_delete: &["HTTP+JSON/0.3"],
        expected: &PYTHON_EXPECTED,
    },
    PushPeer {
        name: "js-1.3.0",
        agent: (|| node("v1"), "agent.mjs"),
        client: (|| node("v1"), "push_client.mjs"),
        interfaces: &[
            ("JSONRPC/1.0", "jsonrpc-1.0"),
            ("HTTP+JSON/1.0", "rest-1.0"),
        ],
        content_type: "application/a2a+json",
        bodies_0_3: false,
        live_snapshots: false,
        authorization: true,
        token_beside_authorization: false,
        deliveries: [
            ECHO_DELIVERIES,
            ECHO_DELIVERIES,
            // The executor opens the follow-up with the stored Task.
            &[
                "task:TASK_STATE_INPUT_REQUIRED",
                "statusUpdate:TASK_STATE_WORKING",
                "artifactUpdate",
                "statusUpdate:TASK_STATE_COMPLETED",
            ],
        ],
        no_list_delete: &[],
        // Authorization sent as configured, every terminal state delivered,
        // 1.0 shapes for 1.0 configs: nothing to report.
        expected: &[],
    },
    PushPeer {
        name: "python-0.3.26",
        agent: (|| (venv(".venv-03"), repo()), "tests/peers/py03/agent.py"),
        // The 1.3.0 client speaks 0.3 to it (its compat transports).
        client: (python_1_3_0, "tests/peers/push_client.py"),
        interfaces: &[
            ("JSONRPC/0.3", "jsonrpc-0.3"),
            ("HTTP+JSON/0.3", "rest-0.3"),
        ],
        content_type: "application/json",
        bodies_0_3: true,
        live_snapshots: false,
        authorization: false,
        token_beside_authorization: true,
        // The whole task after each event of a stream; after a blocking
        // send, once, the terminal task.
        deliveries: [
            ECHO_0_3,
            &["task:completed"],
            &["task:working", "task:working", "task:completed"],
        ],
        no_list_delete: &["HTTP+JSON/0.3"],
        expected: &PY03_EXPECTED,
    },
    PushPeer {
        name: "js-0.3.14",
        agent: (|| node("v03"), "agent.mjs"),
        client: (python_1_3_0, "tests/peers/push_client.py"),
        interfaces: &[
            ("JSONRPC/0.3", "jsonrpc-0.3"),
            ("HTTP+JSON/0.3", "rest-0.3"),
        ],
        content_type: "application/json",
        bodies_0_3: true,
        live_snapshots: true,
        authorization: false,
        token_beside_authorization: true,
        // One per event, blocking sends too.
        deliveries: [
            ECHO_0_3,
            ECHO_0_3,
            &["task:working", "task:working", "task:completed"],
        ],
        no_list_delete: &["HTTP+JSON/0.3"],
        expected: &JS03_EXPECTED,
    },
];

impl PushPeer {
    fn expected_count(&self) -> usize {
        let per_interface: usize = self.deliveries.iter().map(|d| d.len()).sum();
        self.interfaces.len() * per_interface
    }
}

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

/// What one run of the caller produced: its document and the receiver's record.
struct Run {
    outcomes: Value,
    deliveries: Vec<Delivery>,
}

fn read_deliveries(path: &Path) -> Vec<Delivery> {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
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

/// Starts the receiver, then the agent (`--push`, plus `agent_more`), runs
/// the caller against `base(agent_port)` (which may start a proxy in front
/// of the agent) and waits for every delivery.
fn play(
    peer: &PushPeer,
    scratch: &Scratch,
    label: &str,
    agent_more: &[&str],
    base: &mut dyn FnMut(u16) -> String,
) -> Run {
    let record = scratch.path(&format!("{label}.webhook.jsonl"));
    let record_arg = record.display().to_string();
    let (_receiver, hook) = start_server(
        scratch,
        &format!("{}-webhook-{label}", peer.name),
        "tests/peers/webhook.py",
        &["--record", &record_arg],
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
    Run {
        outcomes,
        deliveries,
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

fn wire_facts(peer: &PushPeer) {
    let scratch = Scratch::new(&format!("push-wire-{}", peer.name));
    let run = play(peer, &scratch, "direct", &[], &mut direct_url);
    assert_wire_facts(peer, &run);
}

fn direct_url(agent_port: u16) -> String {
    format!("http://127.0.0.1:{agent_port}")
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_1_3_0_push_deliveries_on_the_wire() {
    wire_facts(&PEERS[0]);
}

#[test]
#[ignore = "needs Node and the tests/peers/js packages of scripts/setup-node.sh: run scripts/test.sh"]
fn js_sdk_1_3_0_push_deliveries_on_the_wire() {
    wire_facts(&PEERS[1]);
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_0_3_26_push_deliveries_on_the_wire() {
    wire_facts(&PEERS[2]);
}

#[test]
#[ignore = "needs Node and the tests/peers/js packages of scripts/setup-node.sh, and the Python venv: run scripts/test.sh"]
fn js_sdk_0_3_14_push_deliveries_on_the_wire() {
    wire_facts(&PEERS[3]);
}

#[path = "push/relay.rs"]
mod relay;
