//! Real peers: the official Python A2A SDK's agent and client, straight and through a2a-tap.
//!
//! Needs `.venv/` from `scripts/setup-python.sh` (never skipped: without it the
//! tests fail and say so). Self-contained helpers: child processes are killed
//! when their guard drops, every wait is bounded, ports come from 127.0.0.1:0.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

const START_TIMEOUT: Duration = Duration::from_secs(60);
const CLIENT_TIMEOUT: Duration = Duration::from_secs(240);
const STOP_TIMEOUT: Duration = Duration::from_secs(15);
const INTERFACES: [(&str, &str); 4] = [
    ("jsonrpc", "1.0"),
    ("rest", "1.0"),
    ("jsonrpc", "0.3"),
    ("rest", "0.3"),
];

// === helpers: paths and scratch space ===

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's Python, or a failure that says how to get it (also on CI).
fn python() -> PathBuf {
    let python = repo().join(".venv/bin/python");
    if !python.exists() {
        let where_ = if std::env::var("CI").as_deref() == Ok("true") {
            "on CI"
        } else {
            "locally"
        };
        panic!(
            "{} is missing ({where_}): run scripts/setup-python.sh to install the \
             official a2a-sdk that these tests run against",
            python.display()
        );
    }
    python
}

/// A fresh scratch directory under the system temp dir, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "a2a-tap-real-peer-{}-{label}-{n}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A port that was free a moment ago (bind :0, read it, release it).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

// === impl Proc: a child process killed on drop ===

struct Proc {
    name: String,
    child: Child,
    stderr: PathBuf,
}

impl Proc {
    fn spawn(name: &str, cmd: &mut Command, scratch: &Scratch) -> Proc {
        let stderr = scratch.path(&format!("{name}.stderr"));
        let file = File::create(&stderr).expect("create stderr file");
        let child = cmd
            .stdin(Stdio::null())
            .stderr(Stdio::from(file))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Proc {
            name: name.to_string(),
            child,
            stderr,
        }
    }

    /// The last lines the process wrote to stderr, for failure messages.
    fn stderr_tail(&self) -> String {
        let text = fs::read_to_string(&self.stderr).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let from = lines.len().saturating_sub(40);
        format!("--- {} stderr ---\n{}", self.name, lines[from..].join("\n"))
    }

    fn take_stdout(&mut self) -> ChildStdout {
        self.child.stdout.take().expect("stdout was piped")
    }

    /// Fail with stderr if the process already exited.
    fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!(
                "{} exited early ({status})\n{}",
                self.name,
                self.stderr_tail()
            );
        }
    }

    /// SIGTERM (so the proxy flushes its audit log), then wait, bounded.
    fn terminate(&mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "{} did not stop within {STOP_TIMEOUT:?} of SIGTERM\n{}",
            self.name,
            self.stderr_tail()
        );
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads stdout on a thread so that the caller can wait with a deadline.
fn read_lines(stdout: ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

// === the peers ===

/// Starts tests/peers/agent.py on a free port; returns it and its port.
fn start_agent(scratch: &Scratch, name: &str, public_url: Option<&str>) -> (Proc, u16) {
    let mut args = vec!["--port", "0"];
    if let Some(url) = public_url {
        args.extend(["--public-url", url]);
    }
    start_server(scratch, name, "tests/peers/agent.py", &args)
}

/// Starts a Python server of tests/peers that prints `READY <port>`.
fn start_server(scratch: &Scratch, name: &str, script: &str, args: &[&str]) -> (Proc, u16) {
    let mut cmd = Command::new(python());
    cmd.arg(repo().join(script))
        .args(args)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdout(Stdio::piped());
    let mut agent = Proc::spawn(name, &mut cmd, scratch);
    let lines = read_lines(agent.take_stdout());
    let line = match lines.recv_timeout(START_TIMEOUT) {
        Ok(line) => line,
        Err(_) => panic!(
            "{name} printed no READY line within {START_TIMEOUT:?}\n{}",
            agent.stderr_tail()
        ),
    };
    let port = line
        .strip_prefix("READY ")
        .and_then(|p| p.trim().parse::<u16>().ok())
        .unwrap_or_else(|| {
            panic!(
                "{name}: unexpected first line {line:?}\n{}",
                agent.stderr_tail()
            )
        });
    (agent, port)
}

/// Runs tests/peers/client.py against `base_url`; returns its outcomes document.
fn run_client(scratch: &Scratch, name: &str, base_url: &str) -> Value {
    run_python(scratch, name, "tests/peers/client.py", &[base_url])
}

/// Runs a Python client of tests/peers; returns the JSON document it printed.
fn run_python(scratch: &Scratch, name: &str, script: &str, args: &[&str]) -> Value {
    let mut cmd = Command::new(python());
    cmd.arg(repo().join(script))
        .args(args)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdout(Stdio::piped());
    let mut client = Proc::spawn(name, &mut cmd, scratch);
    let mut stdout = client.take_stdout();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut text = String::new();
        let read = stdout.read_to_string(&mut text).map(|_| text);
        let _ = tx.send(read);
    });
    let text = match rx.recv_timeout(CLIENT_TIMEOUT) {
        Ok(Ok(text)) => text,
        Ok(Err(e)) => panic!("{name}: reading stdout: {e}\n{}", client.stderr_tail()),
        Err(_) => panic!(
            "{name} did not finish within {CLIENT_TIMEOUT:?}\n{}",
            client.stderr_tail()
        ),
    };
    let status = client.child.wait().expect("wait for client");
    assert!(
        status.success(),
        "{name} failed ({status})\n{}",
        client.stderr_tail()
    );
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{name} printed no JSON document ({e}):\n{text}\n{}",
            client.stderr_tail()
        )
    })
}

/// The outcomes must show the client really did its work, or equality means nothing.
fn assert_meaningful(outcomes: &Value) {
    for key in [
        "JSONRPC/1.0",
        "HTTP+JSON/1.0",
        "JSONRPC/0.3",
        "HTTP+JSON/0.3",
    ] {
        let iface = &outcomes[key];
        assert_eq!(
            iface["echo"]["artifacts"]["echo"], "hello tap world",
            "{key}: echo did not stream its artifact: {iface:#}"
        );
        assert_eq!(
            iface["fail"]["finalState"], "TASK_STATE_FAILED",
            "{key}: {iface:#}"
        );
        assert_eq!(
            iface["ask"]["followUp"]["finalState"], "TASK_STATE_COMPLETED",
            "{key}: {iface:#}"
        );
        assert_eq!(
            iface["long"]["getTask"]["state"], "TASK_STATE_CANCELED",
            "{key}: {iface:#}"
        );
        assert_eq!(
            iface["direct"]["events"][0]["type"], "message",
            "{key}: {iface:#}"
        );
    }
}

// === the proxy ===

/// Sends one GET and returns the status code, if anything answered.
fn http_get_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

struct Proxied {
    _agent: Proc,
    proxy: Proc,
    url: String,
    audit_log: PathBuf,
}

/// A second agent advertising the proxy's URL, and a2a-tap in front of it.
fn start_proxied(scratch: &Scratch) -> Proxied {
    let listen = free_port();
    let admin = free_port();
    let url = format!("http://127.0.0.1:{listen}");
    let (agent, agent_port) = start_agent(scratch, "agent-behind-proxy", Some(&url));
    let audit_log = scratch.path("audit.jsonl");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_a2a-tap"));
    cmd.arg("--listen")
        .arg(format!("127.0.0.1:{listen}"))
        .arg("--upstream")
        .arg(format!("http://127.0.0.1:{agent_port}"))
        .arg("--admin")
        .arg(format!("127.0.0.1:{admin}"))
        .arg("--audit-log")
        .arg(&audit_log)
        .arg("--name")
        .arg("sdk-agent")
        .stdout(Stdio::null());
    let mut proxy = Proc::spawn("a2a-tap", &mut cmd, scratch);
    // Ready when the agent card answers through the proxy.
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        proxy.assert_running();
        if http_get_status(listen, "/.well-known/agent-card.json") == Some(200) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a2a-tap did not serve the agent card within {START_TIMEOUT:?}\n{}",
            proxy.stderr_tail()
        );
        thread::sleep(Duration::from_millis(50));
    }
    Proxied {
        _agent: agent,
        proxy,
        url,
        audit_log,
    }
}

// === the tests ===

#[test]
fn real_peer_outcomes_identical_direct_and_through_proxy() {
    let scratch = Scratch::new("outcomes");

    let (_direct_agent, direct_port) = start_agent(&scratch, "agent-direct", None);
    let direct = run_client(
        &scratch,
        "client-direct",
        &format!("http://127.0.0.1:{direct_port}"),
    );
    assert_meaningful(&direct);

    let proxied = start_proxied(&scratch);
    let through = run_client(&scratch, "client-through-proxy", &proxied.url);

    assert!(
        direct == through,
        "the SDK client saw different outcomes through a2a-tap\n--- direct ---\n{direct:#}\n--- through a2a-tap ---\n{through:#}\n{}",
        proxied.proxy.stderr_tail()
    );
}

/// One audit record reduced to what the expectation names.
type FindingKey = (String, String, String, String, String, Option<u64>);

fn finding_key(record: &Value) -> FindingKey {
    let text = |field: &str| record[field].as_str().unwrap_or("<missing>").to_string();
    (
        text("kind"),
        text("severity"),
        text("binding"),
        text("version"),
        text("method"),
        record["event_index"].as_u64(),
    )
}

#[test]
fn real_peer_audit_log_holds_expected_findings() {
    let scratch = Scratch::new("audit");
    let mut proxied = start_proxied(&scratch);
    let outcomes = run_client(&scratch, "client-through-proxy", &proxied.url);
    assert_meaningful(&outcomes);
    // Stopping the proxy flushes the audit log (contract: at shutdown, then exit 0).
    let status = proxied.proxy.terminate();
    assert!(
        status.success(),
        "a2a-tap exited with {status} on SIGTERM\n{}",
        proxied.proxy.stderr_tail()
    );

    let text = fs::read_to_string(&proxied.audit_log).unwrap_or_else(|e| {
        panic!(
            "no audit log at {}: {e}\n{}",
            proxied.audit_log.display(),
            proxied.proxy.stderr_tail()
        )
    });
    let records: Vec<Value> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("audit line is not JSON ({e}): {line}"))
        })
        .collect();

    for record in &records {
        for field in a2a_tap::report::audit::FIELDS {
            assert!(
                record.get(field).is_some(),
                "audit record lacks `{field}`: {record}"
            );
        }
        assert_eq!(record["upstream"], "sdk-agent", "{record}");
        assert!(
            record["task_id"].is_string(),
            "finding without task id: {record}"
        );
    }

    // fail: Task, working, artifact (open), failed => abandoned at the failed status (index 3).
    // follow-up: first event is a statusUpdate => stream_start at index 0,
    // on 1.0 only (§3.1.2; 0.3 states no rule on a stream's first event).
    let mut expected: Vec<FindingKey> = Vec::new();
    for (binding, version) in INTERFACES {
        let start = (version == "1.0").then_some(("stream_start", "error", 0));
        for (kind, severity, index) in [("abandoned_artifact", "warning", 3)]
            .into_iter()
            .chain(start)
        {
            expected.push((
                kind.to_string(),
                severity.to_string(),
                binding.to_string(),
                version.to_string(),
                "SendStreamingMessage".to_string(),
                Some(index),
            ));
        }
    }
    expected.sort();
    let mut actual: Vec<FindingKey> = records.iter().map(finding_key).collect();
    actual.sort();

    let show = |keys: &[FindingKey]| {
        let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
        let mut lines = String::new();
        for (kind, severity, binding, version, method, index) in keys {
            *by_kind.entry(kind.as_str()).or_default() += 1;
            lines.push_str(&format!(
                "  {kind} {severity} {binding} {version} {method} event_index={index:?}\n"
            ));
        }
        format!("{by_kind:?}\n{lines}")
    };
    assert!(
        actual == expected,
        "audit log findings differ\nexpected: {}actual: {}full log:\n{text}",
        show(&expected),
        show(&actual),
    );
}

// === gRPC: grpcio's server and client, direct and through a2a-tap ===

/// a2a-tap in front of `upstream` with only `config` beyond the ports (the
/// default `proxy.upstream_http2 = false`: gRPC still goes over HTTP/2);
/// returns it and its listen port once its admin port answers.
fn start_tap(scratch: &Scratch, name: &str, upstream: u16, config: &str) -> (Proc, u16) {
    let (listen, admin) = (free_port(), free_port());
    let file = scratch.path(&format!("{name}.toml"));
    fs::write(
        &file,
        format!(
            "listen = \"127.0.0.1:{listen}\"\nadmin = \"127.0.0.1:{admin}\"\n\
             upstream = \"http://127.0.0.1:{upstream}\"\naudit_log = \"{}\"\n{config}\n",
            scratch.path(&format!("{name}.audit.jsonl")).display()
        ),
    )
    .expect("write config");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_a2a-tap"));
    cmd.arg("--config").arg(&file).stdout(Stdio::null());
    let mut proxy = Proc::spawn(name, &mut cmd, scratch);
    let deadline = Instant::now() + START_TIMEOUT;
    while http_get_status(admin, "/healthz") != Some(200) {
        proxy.assert_running();
        assert!(
            Instant::now() < deadline,
            "{name} did not start within {START_TIMEOUT:?}\n{}",
            proxy.stderr_tail()
        );
        thread::sleep(Duration::from_millis(50));
    }
    (proxy, listen)
}

/// Issue: a2a-tap stripped `te: trailers`, so grpcio reset every call (the
/// caller got UNAVAILABLE / 502), and hyper added a `date` header to the
/// answers. Through the proxy, validating or not, every call must come back
/// exactly as direct: status, message, initial and trailing metadata
/// (binary ones too), every message (one of 100 KB), a gzip-compressed
/// call, errors with `grpc-status-details-bin`, a trailers-only answer; and
/// the server must see the same request metadata.
#[test]
fn grpc_calls_identical_direct_and_through_proxy() {
    let scratch = Scratch::new("grpc");
    let (_server, port) = start_server(
        &scratch,
        "grpc-server",
        "tests/peers/grpc_echo.py",
        &["serve", "--port", "0"],
    );
    let call = |name: &str, port: u16| {
        let addr = format!("127.0.0.1:{port}");
        run_python(&scratch, name, "tests/peers/grpc_echo.py", &["call", &addr])
    };
    let direct = call("grpc-client-direct", port);
    assert_eq!(direct["unary"]["code"], "OK", "{direct:#}");
    assert_eq!(
        direct["stream"]["messages"][2]["len"], 102_400,
        "{direct:#}"
    );
    assert_eq!(direct["fail"]["code"], "INVALID_ARGUMENT", "{direct:#}");
    assert_eq!(direct["fail"]["trailing"][0][0], "grpc-status-details-bin");
    assert_eq!(direct["trailers_only"]["code"], "NOT_FOUND", "{direct:#}");

    for (name, config) in [
        ("tap-validating", "validate = true"),
        ("tap-plain", "validate = false"),
        ("tap-upstream-h2", "[proxy]\nupstream_http2 = true"),
    ] {
        let (proxy, listen) = start_tap(&scratch, name, port, config);
        let through = call(&format!("grpc-client-{name}"), listen);
        assert!(
            direct == through,
            "gRPC calls differ through {name}\n--- direct ---\n{direct:#}\n--- through ---\n{through:#}\n{}",
            proxy.stderr_tail()
        );
    }
}
