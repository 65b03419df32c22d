//! `a2a-tap probe` end to end: the binary against a scripted agent that is
//! correct, or breaks exactly one rule (one agent per check: that check
//! fails with its evidence, no other check fails); exit codes; the JUnit
//! and SARIF output checked by independent tools (junitparser, and
//! jsonschema with the OASIS SARIF 2.1.0 schema) from the .venv of
//! scripts/setup-python.sh.

mod agent;
mod formats;
mod html;

use std::process::{Command, Output};

use agent::Defect;
use serde_json::Value;

/// Runs the binary (off the runtime's threads: the agent answers there).
pub(super) async fn run(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_a2a-tap"))
            .args(&args)
            .output()
            .expect("run a2a-tap")
    })
    .await
    .expect("join")
}

/// `a2a-tap probe --format json ARGS http://ADDR` against an agent with
/// `defect`: the exit code and the report.
async fn probe(defect: Defect, extra: &[&str]) -> (Option<i32>, Value) {
    let addr = agent::start(defect).await;
    let mut args = vec!["probe".to_owned(), "--format".into(), "json".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(format!("http://{addr}"));
    let out = run(args).await;
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{defect:?}: no JSON report ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

/// (interface, check id, verdict) of every check of the probed interfaces.
fn verdicts(report: &Value) -> Vec<(String, String, String)> {
    let mut out = vec![(
        "card".to_owned(),
        report["card"]["id"].as_str().unwrap_or("").to_owned(),
        report["card"]["verdict"].as_str().unwrap_or("").to_owned(),
    )];
    for i in report["interfaces"].as_array().into_iter().flatten() {
        if i["contacted"] != true {
            continue;
        }
        for c in i["checks"].as_array().into_iter().flatten() {
            out.push((
                i["name"].as_str().unwrap_or("").to_owned(),
                c["id"].as_str().unwrap_or("").to_owned(),
                c["verdict"].as_str().unwrap_or("").to_owned(),
            ));
        }
    }
    out
}

fn check<'a>(report: &'a Value, iface: &str, id: &str) -> &'a Value {
    report["interfaces"]
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|i| i["name"] == iface && i["contacted"] == true)
        })
        .and_then(|i| i["checks"].as_array())
        .and_then(|cs| cs.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no check {id} on {iface}: {report:#}"))
}

const BOTH: &[&str] = &["JSONRPC 1.0", "HTTP+JSON 1.0"];

#[tokio::test(flavor = "multi_thread")]
async fn a_correct_agent_passes_every_applicable_check() {
    let (code, report) = probe(Defect::None, &[]).await;
    assert_eq!(code, Some(0), "{report:#}");
    for (iface, id, verdict) in verdicts(&report) {
        // The default message does not make the agent ask for input.
        let want = if id == "follow-up-keeps-task-and-context" {
            "not_applicable"
        } else {
            "pass"
        };
        assert_eq!(verdict, want, "{iface} {id}: {report:#}");
    }
    // Every check, once, on each probed interface.
    let known: Vec<&str> = a2a_tap::probe::CheckId::PER_INTERFACE
        .iter()
        .map(|c| c.as_str())
        .collect();
    for iface in BOTH {
        let ids: Vec<String> = verdicts(&report)
            .into_iter()
            .filter(|v| v.0 == *iface)
            .map(|v| v.1)
            .collect();
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!((ids.len(), unique.len()), (14, 14), "{iface}: {ids:?}");
        assert!(ids.iter().all(|id| known.contains(&id.as_str())), "{ids:?}");
    }
    let na = &check(&report, "JSONRPC 1.0", "follow-up-keeps-task-and-context")["reason"];
    assert!(
        na.as_str().unwrap_or("").contains("did not ask for input"),
        "{na}"
    );
    // The interface on another origin is listed, not contacted; gRPC is
    // listed with its reason; neither silently.
    let listed: Vec<&Value> = report["interfaces"]
        .as_array()
        .expect("list")
        .iter()
        .collect();
    let elsewhere = listed
        .iter()
        .find(|i| i["url"] == "http://elsewhere.invalid/rpc")
        .expect("the other origin's interface is listed");
    assert_eq!(elsewhere["contacted"], false);
    assert!(elsewhere["checks"][0]["reason"]
        .as_str()
        .unwrap_or("")
        .contains("another origin"));
    let grpc = listed
        .iter()
        .find(|i| i["name"] == "GRPC 1.0")
        .expect("grpc listed");
    assert_eq!(grpc["checks"].as_array().map(Vec::len), Some(14));
    assert!(grpc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .all(|c| c["verdict"] == "not_applicable"
            && c["reason"] == "not applicable: gRPC probing not supported yet"));
    let requests = report["bounds"]["requests"].as_u64().unwrap_or(0);
    assert!(requests > 20 && requests <= 200, "{:#}", report["bounds"]);
    assert_eq!(report["bounds"]["max_requests"], 200);

    // A message that makes the agent ask: the follow-up check applies.
    let (code, report) = probe(Defect::None, &["--message", "ask me"]).await;
    assert_eq!(code, Some(0), "{report:#}");
    for iface in BOTH {
        let c = check(&report, iface, "follow-up-keeps-task-and-context");
        assert_eq!(c["verdict"], "pass", "{c:#}");
    }
}

/// Each defect, the check it breaks, the message that reaches it, and the
/// interfaces it shows on.
const DEFECTS: &[(Defect, &str, &str, &[&str])] = &[
    (Defect::CardInvalid, "agent-card-valid", "", &["card"]),
    (
        Defect::BlockingReturnsWorking,
        "blocking-send-terminal-or-interrupted",
        "",
        BOTH,
    ),
    (
        Defect::FollowUpNewTask,
        "follow-up-keeps-task-and-context",
        "ask me",
        BOTH,
    ),
    (
        Defect::ReturnImmediatelyBlocks,
        "return-immediately",
        "",
        BOTH,
    ),
    (Defect::CancelActiveRefused, "cancel-active-task", "", BOTH),
    (
        Defect::TerminalAcceptsMessage,
        "terminal-rejects-message",
        "",
        BOTH,
    ),
    (
        Defect::CancelTerminalAccepted,
        "cancel-terminal-not-cancelable",
        "",
        BOTH,
    ),
    (
        Defect::CancelCompletedFlips,
        "cancel-completed-not-cancelable",
        "",
        BOTH,
    ),
    (
        Defect::SubscribeTerminalStreams,
        "subscribe-terminal-refused",
        "",
        BOTH,
    ),
    (
        Defect::GetUnknownWrongError,
        "get-unknown-task-not-found",
        "",
        BOTH,
    ),
    (
        Defect::StreamStartsWithStatus,
        "stream-starts-with-task",
        "",
        BOTH,
    ),
    (Defect::StreamStaysOpen, "stream-starts-with-task", "", BOTH),
    (
        Defect::StreamingUndeclared,
        "streaming-capability-honoured",
        "",
        BOTH,
    ),
    (
        Defect::PushAccepted,
        "push-config-capability-honoured",
        "",
        BOTH,
    ),
    (
        Defect::VersionIgnored,
        "unsupported-version-refused",
        "",
        BOTH,
    ),
    (
        Defect::RestWrongStatus,
        "error-codes-per-spec",
        "",
        &["HTTP+JSON 1.0"],
    ),
];

#[tokio::test(flavor = "multi_thread")]
async fn each_defect_fails_its_own_check_and_no_other() {
    // Every check of the catalogue has its defect here.
    let ids: Vec<&str> = DEFECTS.iter().map(|d| d.1).collect();
    for id in a2a_tap::probe::CheckId::PER_INTERFACE {
        assert!(
            ids.contains(&id.as_str()),
            "no scripted defect for {}",
            id.as_str()
        );
    }
    for (defect, id, message, on) in DEFECTS {
        let extra: Vec<&str> = if message.is_empty() {
            vec![]
        } else {
            vec!["--message", message]
        };
        let (code, report) = probe(*defect, &extra).await;
        assert_eq!(
            code,
            Some(1),
            "{defect:?}: a failed check exits 1: {report:#}"
        );
        for (iface, check_id, verdict) in verdicts(&report) {
            let broken = check_id == *id && on.contains(&iface.as_str());
            let want_fail = if broken { "fail" } else { "not fail" };
            assert_eq!(
                verdict == "fail",
                broken,
                "{defect:?}: {iface} {check_id} should {want_fail}: {report:#}"
            );
        }
        // The failure carries its evidence: the request and the answer.
        let failed = if on == &["card"] {
            report["card"].clone()
        } else {
            check(&report, on[0], id).clone()
        };
        let evidence = &failed["evidence"][0];
        assert!(
            !failed["reason"].as_str().unwrap_or("").is_empty()
                && evidence["request"]
                    .as_str()
                    .is_some_and(|r| r.contains("http://"))
                && evidence["answer"].as_str().is_some_and(|a| !a.is_empty()),
            "{defect:?}: {failed:#}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_engine_judges_the_probes_own_traffic_under_the_config() {
    // A stream that begins with a status update: the check fails, and the
    // engine's stream_start finding (error) comes with it...
    let (_, report) = probe(Defect::StreamStartsWithStatus, &[]).await;
    let kinds: Vec<&str> = report["interfaces"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"stream_start"), "{report:#}");
    let answer = &check(&report, "JSONRPC 1.0", "stream-starts-with-task")["evidence"][0]["answer"];
    assert!(answer.to_string().contains("brief"), "{answer}");
    // ...unless [severity] turns that kind off, as for check and live;
    // and [audit] shapes the evidence.
    let dir = tempfile::tempdir().expect("tmp");
    let config = dir.path().join("a2a-tap.toml");
    let toml = "[severity]\nstream_start = \"off\"\n[audit]\nredact_parts = true\n";
    std::fs::write(&config, toml).expect("write config");
    let path = config.display().to_string();
    let (code, report) = probe(Defect::StreamStartsWithStatus, &["--config", &path]).await;
    assert_eq!(code, Some(1), "the check still fails");
    assert!(
        report["interfaces"][0]["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .all(|f| f["kind"] != "stream_start"),
        "{report:#}"
    );
    // [audit] redact_parts holds for the checks' evidence too.
    let answer = &check(&report, "JSONRPC 1.0", "stream-starts-with-task")["evidence"][0]["answer"];
    assert!(!answer.to_string().contains("brief"), "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_usage_exits_2_and_an_unreachable_agent_3() {
    let out = run(vec!["probe".into(), "ftp://agent.example/".into()]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<URL>") && err.contains("http"), "{err}");
    let out = run(vec![
        "probe".into(),
        "--format".into(),
        "xml".into(),
        "http://a.example".into(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format"));
    let (_refusing, addr) = crate::support::ports::refused();
    let port = addr.port();
    let out = run(vec!["probe".into(), format!("http://127.0.0.1:{port}")]).await;
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach the agent card"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_answers_are_bounded_and_escaped() {
    use crate::support::{full, upstream};
    // A card, then answers naming a task whose id holds a terminal escape,
    // and GetTask answers larger than the engine's body limit.
    let port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let p = port.clone();
    let addr = upstream(move |req: http::Request<hyper::body::Incoming>| {
        let p = p.clone();
        async move {
            use http_body_util::BodyExt;
            let path = req.uri().path().to_owned();
            let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let text = if path.ends_with("agent-card.json") {
                serde_json::json!({
                    "name": "hostile", "version": "1", "capabilities": {},
                    "supportedInterfaces": [{"url": format!("http://127.0.0.1:{}/", p.get().copied().unwrap_or(0)),
                                             "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
                })
                .to_string()
            } else if String::from_utf8_lossy(&body).contains("GetTask") {
                "x".repeat(6 << 20)
            } else {
                r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"\u001b[2Jevil","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}"#.to_owned()
            };
            http::Response::builder()
                .header("content-type", "application/json")
                .body(full(text))
                .expect("response")
        }
    })
    .await;
    let _ = port.set(addr.port());
    let started = std::time::Instant::now();
    let out = run(vec!["probe".into(), format!("http://{addr}")]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "a raw escape reached the report: {text}"
    );
    assert!(text.contains("\\u{1b}[2Jevil"), "{text}");
    assert!(
        text.contains("blocking-send-terminal-or-interrupted"),
        "{text}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// An agent that serves only `card` (its interfaces' `{base}` replaced by
/// its own URL); anything else is 404.
async fn card_only(card: &'static str) -> std::net::SocketAddr {
    use crate::support::{full, upstream};
    let port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let p = port.clone();
    let addr = upstream(move |req: http::Request<hyper::body::Incoming>| {
        let base = format!("http://127.0.0.1:{}", p.get().copied().unwrap_or(0));
        let (status, text) = if req.uri().path().ends_with("agent-card.json") {
            (200, card.replace("{base}", &base))
        } else {
            (404, "no".to_owned())
        };
        async move {
            http::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(full(text))
                .expect("response")
        }
    })
    .await;
    let _ = port.set(addr.port());
    addr
}

#[tokio::test(flavor = "multi_thread")]
async fn a_probe_in_which_no_check_could_run_never_passes() {
    const HEAD: &str = r#""name": "n", "version": "1", "capabilities": {}"#;
    // (card, what the sentence says, exit code: 2, or 1 where the card
    // itself fails agent-card-valid)
    let cases: [(String, &str, i32); 3] = [
        (
            format!(
                r#"{{{HEAD}, "supportedInterfaces": [
                {{"url": "http://elsewhere.example:8443/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
                {{"url": "http://elsewhere.example:8443/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}}]}}"#
            ),
            "a2a-tap probe http://elsewhere.example:8443",
            2,
        ),
        (
            format!(
                r#"{{{HEAD}, "supportedInterfaces": [
                {{"url": "{{base}}/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"}}]}}"#
            ),
            "the probe speaks JSON-RPC and HTTP+JSON",
            2,
        ),
        (
            format!(r#"{{{HEAD}, "supportedInterfaces": []}}"#),
            "the card lists no interface",
            1,
        ),
    ];
    for (card, says, code) in cases {
        let addr = card_only(Box::leak(card.into_boxed_str())).await;
        let url = format!("http://{addr}");
        let out = run(vec!["probe".into(), url.clone()]).await;
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{says}: {text}\n{err}");
        assert!(
            err.contains("no check could run") && err.contains(says),
            "{err}"
        );
        assert!(text.contains("no check could run"), "{text}");

        let out = run(vec![
            "probe".into(),
            "--format".into(),
            "json".into(),
            url.clone(),
        ])
        .await;
        assert_eq!(out.status.code(), Some(code));
        let report: Value = serde_json::from_slice(&out.stdout).expect("json report");
        let why = report["nothing_ran"].as_str().unwrap_or_default();
        assert!(why.contains(says), "{report:#}");

        let out = run(vec![
            "probe".into(),
            "--format".into(),
            "junit".into(),
            url.clone(),
        ])
        .await;
        assert_eq!(out.status.code(), Some(code));
        let xml = String::from_utf8_lossy(&out.stdout);
        assert!(
            xml.contains("<testsuites") && xml.contains(r#"errors="1""#),
            "{xml}"
        );
        assert!(xml.contains(r#"<testcase name="no-check-ran""#), "{xml}");
        assert!(xml.contains("<error message=\"no check could run"), "{xml}");

        let out = run(vec!["probe".into(), "--format".into(), "sarif".into(), url]).await;
        assert_eq!(out.status.code(), Some(code));
        let sarif: Value = serde_json::from_slice(&out.stdout).expect("sarif");
        let results = sarif["runs"][0]["results"].as_array().expect("results");
        assert!(
            results
                .iter()
                .any(|r| r["ruleId"] == "no-check-ran" && r["level"] == "error"),
            "{sarif:#}"
        );
    }
}
