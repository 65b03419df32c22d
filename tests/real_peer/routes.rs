//! Issue 37: one a2a-tap in front of several real agents, each under its
//! own path prefix: the official Python SDK agent (`/py`), the JavaScript
//! SDK agent (the catch-all `/`: its client fetches the card at the
//! origin's well-known path, whatever the base URL's path), the scripted misbehaving agent (`/bad`, its
//! `terminal_exit` lowered to a warning for that route alone) and a second
//! misbehaving agent behind TLS with its own CA (`/secure`). The SDK
//! clients follow the cards the proxy rewrote to its public URL + the
//! route's prefix, and see what they see direct; each finding carries its
//! route's name; the two misbehaving agents' task ids collide (each counts
//! its streams from 0) and no route is accused for the other's task.

use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{
    node, port_named_in_advance, read_lines, repo, run_in, start_server_in, start_tap_logged, venv,
    Expected, Proc, Scratch, PEERS, START_TIMEOUT,
};

/// The misbehaving agent (built with `--features example-agent`) on
/// 127.0.0.1:0, streams unpaced; its address.
fn misbehaving(scratch: &Scratch, name: &str) -> (Proc, SocketAddr) {
    let Some(bin) = option_env!("CARGO_BIN_EXE_misbehaving_agent") else {
        panic!("the misbehaving agent is built with --features example-agent: run scripts/test.sh");
    };
    let mut cmd = Command::new(bin);
    cmd.args(["127.0.0.1:0", "--pace-ms", "0"])
        .stdout(Stdio::piped());
    let mut agent = Proc::spawn(name, &mut cmd, scratch);
    let lines = read_lines(agent.take_stdout());
    let line = lines
        .recv_timeout(START_TIMEOUT)
        .unwrap_or_else(|_| panic!("{name} did not start\n{}", agent.stderr_tail()));
    let addr = line
        .strip_prefix("misbehaving_agent listening on ")
        .and_then(|a| a.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name}: unexpected first line {line:?}"));
    (agent, addr)
}

/// A TLS front for `backend` with a certificate for 127.0.0.1 signed by a
/// fresh CA: its port and the CA's PEM. Serves until the process ends.
fn tls_front(backend: SocketAddr) -> (u16, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().expect("key");
    let ca = params.self_signed(&ca_key).expect("ca");
    let key = KeyPair::generate().expect("key");
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .expect("params")
        .signed_by(&key, &ca, &ca_key)
        .expect("leaf");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        )
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            while let Ok((stream, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
    });
    (port, ca.pem())
}

/// One POST of a 1.0 JSON-RPC `SendStreamingMessage` with `text` to
/// `path`, read to its end: the status line and the body.
fn stream(port: u16, path: &str, text: &str) -> (String, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": {"role": "ROLE_USER", "messageId": format!("m-{text}"),
            "parts": [{"text": text}]}}})
    .to_string();
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         A2A-Version: 1.0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).expect("send");
    let mut all = String::new();
    tcp.read_to_string(&mut all).expect("read");
    let (head, body) = all.split_once("\r\n\r\n").expect("a head");
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// The records of `path` whose `upstream` is `route`, written to a file of
/// their own (for `assert_findings`).
fn records_of(scratch: &Scratch, audit: &Path, route: &str) -> std::path::PathBuf {
    let text = fs::read_to_string(audit).unwrap_or_default();
    let mine: Vec<&str> = text
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|r| r["upstream"] == route))
        .collect();
    let file = scratch.path(&format!("{route}.jsonl"));
    fs::write(&file, mine.join("\n")).expect("write records");
    file
}

/// `terminal_exit` on a misbehaving agent's route, at `severity`.
const fn terminal_exit(severity: &'static str) -> Expected {
    (
        "terminal_exit",
        severity,
        "jsonrpc",
        "1.0",
        "SendStreamingMessage",
        Some(3),
    )
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh and Node (scripts/setup-node.sh): run scripts/test.sh"]
fn sdk_and_scripted_agents_behind_one_proxy_each_under_its_route() {
    let scratch = Scratch::new("routes");
    let (py, js) = (&PEERS[0], &PEERS[2]);
    let py_rt = (venv(".venv"), repo());
    let js_rt = node("v1");
    let py_rt = (py_rt.0.as_path(), py_rt.1.as_path());
    let js_rt = (js_rt.0.as_path(), js_rt.1.as_path());
    let (_py_agent, py_port) =
        start_server_in(&scratch, "py-agent", py_rt, &[py.agent, "--port", "0"]);
    let (_js_agent, js_port) =
        start_server_in(&scratch, "js-agent", js_rt, &[js.agent, "--port", "0"]);
    let (_bad, bad) = misbehaving(&scratch, "bad-agent");
    let (_secure_agent, secure_backend) = misbehaving(&scratch, "secure-agent");
    let (secure_port, ca_pem) = tls_front(secure_backend);
    let ca = scratch.path("secure-ca.pem");
    fs::write(&ca, ca_pem).expect("write ca");

    // Each SDK client direct first.
    let direct_py = run_in(
        &scratch,
        "py-client-direct",
        py_rt,
        &[py.client, &format!("http://127.0.0.1:{py_port}")],
    );
    let direct_js = run_in(
        &scratch,
        "js-client-direct",
        js_rt,
        &[js.client, &format!("http://127.0.0.1:{js_port}")],
    );

    let listen = port_named_in_advance();
    let public = format!("http://127.0.0.1:{listen}");
    let audit = scratch.path("audit.jsonl");
    let config = scratch.path("tap.toml");
    let route = |name: &str, upstream: &str, prefix: &str, more: &str| {
        format!(
            "[[route]]\nname = \"{name}\"\nupstream = \"{upstream}\"\npath_prefix = \"{prefix}\"\n\
             rewrite_agent_card = true\n{more}"
        )
    };
    fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:{listen}\"\nadmin = \"127.0.0.1:0\"\naudit_log = \"{}\"\n\
             public_url = \"{public}\"\n{}{}{}{}",
            audit.display(),
            route("py", &format!("http://127.0.0.1:{py_port}"), "/py", ""),
            route("js", &format!("http://127.0.0.1:{js_port}"), "/", ""),
            route(
                "bad",
                &format!("http://{bad}"),
                "/bad",
                "[route.severity]\nterminal_exit = \"warning\"\n"
            ),
            route(
                "secure",
                &format!("https://127.0.0.1:{secure_port}"),
                "/secure",
                &format!("tls_ca_file = \"{}\"\n", ca.display())
            ),
        ),
    )
    .expect("write config");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_a2a-tap"));
    cmd.arg("--config").arg(&config);
    let (mut proxy, _, _) = start_tap_logged("a2a-tap-routes", &mut cmd, &scratch);

    // The SDK clients, given the proxy's URL + the route's prefix, follow
    // the rewritten cards and see what they saw direct.
    let through_py = run_in(
        &scratch,
        "py-client-through",
        py_rt,
        &[py.client, &format!("{public}/py")],
    );
    let through_js = run_in(&scratch, "js-client-through", js_rt, &[js.client, &public]);
    assert!(
        direct_py == through_py,
        "python: {direct_py:#}\n--- through ---\n{through_py:#}"
    );
    assert!(
        direct_js == through_js,
        "js: {direct_js:#}\n--- through ---\n{through_js:#}"
    );

    // The misbehaving agents: a clean stream on each (both name their task
    // task-clean-0: completed on /bad, then submitted anew on /secure),
    // then terminal_exit on each (both task-terminal_exit-1).
    for (path, text) in [
        ("/bad", "clean"),
        ("/secure", "clean"),
        ("/bad", "terminal_exit"),
        ("/secure", "terminal_exit"),
    ] {
        let (status, body) = stream(listen, path, text);
        assert!(status.contains(" 200 "), "{path} {text}: {status}\n{body}");
        assert!(
            body.contains("TASK_STATE_COMPLETED"),
            "{path} {text}: {body}"
        );
    }

    let status = proxy.terminate();
    assert!(
        status.success(),
        "a2a-tap exited with {status}\n{}",
        proxy.stderr_tail()
    );
    let text = fs::read_to_string(&audit).unwrap_or_default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).expect("audit line");
        let route = record["upstream"].as_str().unwrap_or("");
        assert!(["py", "js", "bad", "secure"].contains(&route), "{record}");
    }
    let check = |route: &str, expected: &[Expected]| {
        super::assert_findings(route, &records_of(&scratch, &audit, route), route, expected);
    };
    check("py", py.expected);
    check("js", js.expected);
    // The override lowered /bad's terminal_exit alone; the shared task ids
    // drew no finding across the routes.
    check("bad", &[terminal_exit("warning")]);
    check("secure", &[terminal_exit("error")]);
    assert!(
        !text.contains("task-clean-0"),
        "a task of one route judged against the other's: {text}"
    );
}
