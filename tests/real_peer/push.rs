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
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{
    assert_findings, node, port_named_in_advance, repo, run_in, start_server, start_server_in,
    start_tap_logged, venv, Expected, Scratch,
};
use crate::support::total;

/// How long the receiver may take to record every expected delivery (the
/// JavaScript sender posts after the caller's answer, fire-and-forget).
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(20);
/// After the expected count arrived: long enough for a surplus to show up.
const QUIET: Duration = Duration::from_millis(500);
/// The relay's `push.terminal_wait` in the proxied run; the proxy is stopped
/// only past it, so a missing terminal delivery would be judged.
const TERMINAL_WAIT: &str = "2s";
const PAST_TERMINAL_WAIT: Duration = Duration::from_millis(2500);

const PD: &str = "PushDelivery";

/// One SDK's agent and caller, and what its sender puts on the wire.
struct PushPeer {
    name: &'static str,
    runtime: fn() -> (PathBuf, PathBuf),
    agent: &'static str,
    client: &'static str,
    /// The client document's interfaces and their webhook path segment.
    interfaces: &'static [(&'static str, &'static str)],
    content_type: &'static str,
    /// Whether a config with both a token and `authentication` gets the
    /// token header too (Python) or `Authorization` alone (JavaScript).
    token_beside_authorization: bool,
    /// The deliveries of `configs` (created on an input-required task, then
    /// the follow-up that completes it), as `kind[:state]`.
    configs_deliveries: &'static [&'static str],
    /// Interfaces whose client has no List/Delete of configs.
    no_list_delete: &'static [&'static str],
    /// The findings the proxied run's audit log must hold, exactly.
    expected: &'static [Expected],
}

/// An echo task's deliveries: the Task, working, two artifact chunks, completed.
const ECHO_DELIVERIES: [&str; 5] = [
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

const PEERS: [PushPeer; 2] = [
    PushPeer {
        name: "python-1.3.0",
        runtime: || (venv(".venv"), repo()),
        agent: "tests/peers/agent.py",
        client: "tests/peers/push_client.py",
        interfaces: &[
            ("JSONRPC/1.0", "jsonrpc-1.0"),
            ("HTTP+JSON/1.0", "rest-1.0"),
            ("JSONRPC/0.3", "jsonrpc-0.3"),
            ("HTTP+JSON/0.3", "rest-0.3"),
        ],
        content_type: "application/json",
        token_beside_authorization: true,
        configs_deliveries: &[
            "statusUpdate:TASK_STATE_WORKING",
            "artifactUpdate",
            "statusUpdate:TASK_STATE_COMPLETED",
        ],
        // a2a-sdk's 0.3 REST client: "not supported in v0.3 REST".
        no_list_delete: &["HTTP+JSON/0.3"],
        expected: &PYTHON_EXPECTED,
    },
    PushPeer {
        name: "js-1.3.0",
        runtime: || node("v1"),
        agent: "agent.mjs",
        client: "push_client.mjs",
        interfaces: &[
            ("JSONRPC/1.0", "jsonrpc-1.0"),
            ("HTTP+JSON/1.0", "rest-1.0"),
        ],
        content_type: "application/a2a+json",
        token_beside_authorization: false,
        // The executor opens the follow-up with the stored Task.
        configs_deliveries: &[
            "task:TASK_STATE_INPUT_REQUIRED",
            "statusUpdate:TASK_STATE_WORKING",
            "artifactUpdate",
            "statusUpdate:TASK_STATE_COMPLETED",
        ],
        no_list_delete: &[],
        // Authorization sent as configured, every terminal state delivered,
        // 1.0 shapes for 1.0 configs: nothing to report.
        expected: &[],
    },
];

impl PushPeer {
    fn expected_count(&self) -> usize {
        self.interfaces.len() * (2 * ECHO_DELIVERIES.len() + self.configs_deliveries.len())
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
    let (program, dir) = (peer.runtime)();
    let rt = (program.as_path(), dir.as_path());
    let mut agent_args = vec![peer.agent, "--push", "--port", "0"];
    agent_args.extend_from_slice(agent_more);
    let (_agent, agent_port) = start_server_in(
        scratch,
        &format!("{}-agent-{label}", peer.name),
        rt,
        &agent_args,
    );
    let webhook = format!("http://127.0.0.1:{hook}/hook");
    let url = base(agent_port);
    let outcomes = run_in(
        scratch,
        &format!("{}-client-{label}", peer.name),
        rt,
        &[
            peer.client,
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

/// `kind[:state]` of a delivery body, and the task it is about.
fn summary(body: &Value) -> (String, String) {
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
        for (scenario, want) in [
            ("send", &ECHO_DELIVERIES[..]),
            ("send-auth", &ECHO_DELIVERIES[..]),
            ("configs", peer.configs_deliveries),
        ] {
            let path = format!("/hook/{segment}/{scenario}");
            let got = by_path.get(path.as_str()).cloned().unwrap_or_default();
            let bodies: Vec<Value> = got
                .iter()
                .map(|d| serde_json::from_str(&d.body).expect("a JSON body"))
                .collect();
            let (labels, tasks): (Vec<String>, Vec<String>) = bodies.iter().map(summary).unzip();
            assert_eq!(labels, want, "{name}: {path}: deliveries {bodies:#?}");
            assert!(
                tasks.windows(2).all(|w| w[0] == w[1]),
                "{name}: {path}: one task"
            );
            let (token, credentials) = match scenario {
                "send" => ("tok-send", None),
                "send-auth" => ("tok-auth", Some("Bearer secret-send")),
                _ => ("tok-created", Some("Bearer secret-created")),
            };
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

// === through the relay ===

/// A body's text with the run's own ids (UUIDs: both SDKs make every id one)
/// and timestamps named, not spelled; every other byte kept, so that two
/// runs' bodies compare byte for byte but for those.
fn normalised(body: &str) -> String {
    const STAMP: &str = "\"timestamp\":\"";
    let is_uuid = |s: &[u8]| {
        s.len() >= 36
            && s[..36].iter().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => *b == b'-',
                _ => b.is_ascii_hexdigit(),
            })
    };
    let bytes = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    while at < bytes.len() {
        if is_uuid(&bytes[at..]) {
            out.push_str("<id>");
            at += 36;
        } else if body[at..].starts_with(STAMP) {
            out.push_str(STAMP);
            at += STAMP.len();
            let close = body[at..].find('"').map_or(body.len(), |end| at + end);
            out.push_str("<timestamp>");
            at = close;
        } else {
            let c = body[at..].chars().next().expect("within the body");
            out.push(c);
            at += c.len_utf8();
        }
    }
    out
}

/// Method, path, headers and normalised body.
type Comparable = (String, String, Vec<(String, String)>, String);

/// Those of `a` that `b` lacks, for a failure message.
fn only(a: &[Comparable], b: &[Comparable]) -> Vec<String> {
    a.iter()
        .filter(|x| !b.contains(x))
        .map(|x| format!("{x:?}"))
        .collect()
}

/// Header fields a relay must not forward (RFC 9110 §7.6.1: an
/// intermediary removes `Connection` and the fields it names; these are
/// the hop-by-hop ones), so a relayed delivery may lack or change them.
const HOP_BY_HOP: [&str; 7] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// A delivery as two runs compare it. Left out of the headers, as the wire
/// forces: `host` (it names the authority the request goes to: the relay in
/// the agent's request, then the receiver, whose port differs between the
/// runs), `content-length` (it counts the run's own ids and timestamps;
/// each is held to its own body instead, and a relay may send the same
/// bytes chunked) and the hop-by-hop fields (`connection: keep-alive` from
/// both SDKs). Every other header, names and values, must arrive as the
/// agent sent it (the contract: "the relay adds no header"), in the agent's
/// order for any one name; names compare lower-cased (case-insensitive,
/// and HTTP/1 proxies lower-case them).
fn comparable(d: &Delivery) -> Comparable {
    if let Some(length) = d.header("content-length") {
        assert_eq!(length, d.body.len().to_string(), "content-length of {d:?}");
    }
    let mut headers: Vec<(String, String)> = d
        .headers
        .iter()
        .filter(|(n, _)| n != "host" && n != "content-length" && !HOP_BY_HOP.contains(&n.as_str()))
        .cloned()
        .collect();
    headers.sort_by(|a, b| a.0.cmp(&b.0));
    let body = normalised(&d.body);
    (d.method.clone(), d.path.clone(), headers, body)
}

/// The admin endpoint's `/metrics` text.
fn scrape(admin: u16) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", admin)).expect("connect to admin");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let request =
        format!("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{admin}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    let mut all = String::new();
    stream.read_to_string(&mut all).expect("read /metrics");
    all.split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

/// The caller straight to the agent, then through a2a-tap with the relay on
/// in front of a second agent advertising the proxy (a second receiver): the
/// same deliveries, the same outcomes, every delivery counted as delivered,
/// and exactly `peer.expected` in the audit log.
fn through_relay(peer: &PushPeer) {
    let scratch = Scratch::new(&format!("push-relay-{}", peer.name));
    let direct = play(peer, &scratch, "direct", &[], &mut direct_url);
    assert_wire_facts(peer, &direct);

    let listen = port_named_in_advance();
    let relay = port_named_in_advance();
    let tap_url = format!("http://127.0.0.1:{listen}");
    let audit_log = scratch.path("audit.jsonl");
    let mut tap = None;
    let mut start_tap = |agent_port: u16| {
        let file = scratch.path("tap.toml");
        fs::write(
            &file,
            format!(
                "listen = \"127.0.0.1:{listen}\"\nadmin = \"127.0.0.1:0\"\n\
                 upstream = \"http://127.0.0.1:{agent_port}\"\nname = \"sdk-agent\"\n\
                 audit_log = \"{}\"\n\n[push]\nrelay = true\n\
                 listen = \"127.0.0.1:{relay}\"\npublic_url = \"http://127.0.0.1:{relay}\"\n\
                 terminal_wait = \"{TERMINAL_WAIT}\"\nmax_registrations = 10000\nttl = \"1h\"\n",
                audit_log.display()
            ),
        )
        .expect("write config");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_a2a-tap"));
        cmd.arg("--config").arg(&file);
        let (proxy, _, admin) =
            start_tap_logged(&format!("a2a-tap-{}", peer.name), &mut cmd, &scratch);
        tap = Some((proxy, admin.port()));
        tap_url.clone()
    };
    let through = play(
        peer,
        &scratch,
        "relayed",
        &["--public-url", &tap_url],
        &mut start_tap,
    );
    let (mut proxy, admin) = tap.expect("the proxy was started");
    let name = peer.name;
    assert!(
        direct.outcomes == through.outcomes,
        "{name}: the caller saw different outcomes through a2a-tap\n--- direct ---\n{:#}\n--- through a2a-tap ---\n{:#}\n{}",
        direct.outcomes,
        through.outcomes,
        proxy.stderr_tail()
    );
    let sorted = |run: &Run| {
        let mut all: Vec<_> = run.deliveries.iter().map(comparable).collect();
        all.sort();
        all
    };
    let (sent, got) = (sorted(&direct), sorted(&through));
    assert!(
        sent == got,
        "{name}: deliveries through the relay differ from the direct run\nonly direct: {:#?}\nonly relayed: {:#?}",
        only(&sent, &got),
        only(&got, &sent)
    );

    // Past terminal_wait, so that a terminal state not delivered is judged.
    thread::sleep(PAST_TERMINAL_WAIT);
    let metrics = scrape(admin);
    let count = |outcome: &str| {
        let labels = [("upstream", "sdk-agent"), ("outcome", outcome)];
        total(&metrics, "a2a_push_deliveries_total", &labels).unwrap_or(0.0)
    };
    assert_eq!(
        count("delivered"),
        peer.expected_count() as f64,
        "{name}:\n{metrics}"
    );
    for outcome in ["webhook_error", "webhook_unreachable", "unknown_token"] {
        assert_eq!(count(outcome), 0.0, "{name}: {outcome}:\n{metrics}");
    }
    // Stopping the proxy flushes the audit log.
    let status = proxy.terminate();
    assert!(
        status.success(),
        "a2a-tap exited with {status}\n{}",
        proxy.stderr_tail()
    );
    assert_findings(name, &audit_log, "sdk-agent", peer.expected);
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_1_3_0_push_through_the_relay() {
    through_relay(&PEERS[0]);
}

#[test]
#[ignore = "needs Node and the tests/peers/js packages of scripts/setup-node.sh: run scripts/test.sh"]
fn js_sdk_1_3_0_push_through_the_relay() {
    through_relay(&PEERS[1]);
}
