//! The push peers through a2a-tap's relay: caller → a2a-tap → agent, agent
//! → relay → receiver, against the same caller straight to the agent.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::thread;
use std::time::Duration;

use super::super::{assert_findings, port_named_in_advance, start_tap_logged, Scratch};
use super::{assert_wire_facts, direct_url, play, Delivery, PushPeer, Run, PEERS};
use crate::support::total;

/// The relay's `push.terminal_wait` in the proxied run; the proxy is stopped
/// only past it, so a missing terminal delivery would be judged.
const TERMINAL_WAIT: &str = "2s";
const PAST_TERMINAL_WAIT: Duration = Duration::from_millis(2500);

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
fn comparable(d: &Delivery, peer: &PushPeer) -> Comparable {
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
    let body = if peer.live_snapshots && d.body.contains("\"kind\":\"task\"") {
        "<a live snapshot of the task>".to_string()
    } else {
        normalised(&d.body)
    };
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
/// in front of a second agent advertising the proxy (a second receiver),
/// both receivers answering `status`: the same deliveries, the same
/// outcomes, the agent seeing the same answers (it logs the same failed
/// deliveries), every delivery counted by what the webhook answered, and
/// exactly `peer.expected` in the audit log (a failing webhook changes no
/// finding of these runs: every terminal state is delivered anyway).
fn through_relay(peer: &PushPeer, status: u16) {
    let scratch = Scratch::new(&format!("push-relay-{}-{status}", peer.name));
    let direct = play(peer, &scratch, ("direct", status), &[], &mut direct_url);
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
        ("relayed", status),
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
        let mut all: Vec<_> = run.deliveries.iter().map(|d| comparable(d, peer)).collect();
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
    assert_eq!(
        direct.send_errors, through.send_errors,
        "{name}: the agent saw other answers from the webhook through the relay"
    );

    // Past terminal_wait, so that a terminal state not delivered is judged.
    thread::sleep(PAST_TERMINAL_WAIT);
    let metrics = scrape(admin);
    let count = |outcome: &str| {
        let labels = [("upstream", "sdk-agent"), ("outcome", outcome)];
        total(&metrics, "a2a_push_deliveries_total", &labels).unwrap_or(0.0)
    };
    let answered = if status == 200 {
        "delivered"
    } else {
        "webhook_error"
    };
    for outcome in [
        "delivered",
        "webhook_error",
        "webhook_unreachable",
        "unknown_token",
    ] {
        let want = if outcome == answered {
            peer.expected_count()
        } else {
            0
        };
        assert_eq!(count(outcome), want as f64, "{name}: {outcome}:\n{metrics}");
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
    through_relay(&PEERS[0], 200);
}

#[test]
#[ignore = "needs Node and the tests/peers/js packages of scripts/setup-node.sh: run scripts/test.sh"]
fn js_sdk_1_3_0_push_through_the_relay() {
    through_relay(&PEERS[1], 200);
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_0_3_26_push_through_the_relay() {
    through_relay(&PEERS[2], 200);
}

#[test]
#[ignore = "needs Node and the tests/peers/js packages of scripts/setup-node.sh, and the Python venv: run scripts/test.sh"]
fn js_sdk_0_3_14_push_through_the_relay() {
    through_relay(&PEERS[3], 200);
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_1_3_0_push_through_the_relay_to_a_failing_webhook() {
    through_relay(&PEERS[0], 500);
}

#[test]
#[ignore = "needs Node and the tests/peers/js packages of scripts/setup-node.sh: run scripts/test.sh"]
fn js_sdk_1_3_0_push_through_the_relay_to_a_failing_webhook() {
    through_relay(&PEERS[1], 500);
}
