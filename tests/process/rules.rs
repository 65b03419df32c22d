//! Issue 38 (every finding tied to its source), through the binary: what
//! `check` prints names the spec section and the conformance kit's
//! requirements a finding rests on, in every format; JUnit names where in
//! the file a finding is exactly as the text report does (issue 40, item 7).

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{json, Value};

fn check(format: &str, file: &PathBuf) -> Output {
    Command::new(env!("CARGO_BIN_EXE_a2a-tap"))
        .args(["check", "--format", format])
        .arg(file)
        .output()
        .expect("run a2a-tap check")
}

fn entry(method: &str, body: &str, ctype: &str, text: &str) -> Value {
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"hi"}}]}}}}}}"#
    );
    let _ = body;
    json!({
        "startedDateTime": "2026-12-01T10:00:00.000Z",
        "request": {"method": "POST", "url": "http://agent/a2a",
            "headers": [{"name": "A2A-Version", "value": "1.0"}],
            "postData": {"mimeType": "application/json", "text": request}},
        "response": {"status": 200, "headers": [{"name": "content-type", "value": ctype}],
            "content": {"mimeType": ctype, "text": text}}
    })
}

/// A HAR of two exchanges: a blocking send answered with a status stamped
/// `+02:00` (`invalid_timestamp`, a warning, no event) and a stream that
/// sends an artifact after its terminal status (`event_after_terminal` at
/// event 2, an error).
fn recording(dir: &std::path::Path) -> PathBuf {
    let task = |state: &str, ts: &str| {
        format!(
            r#"{{"id":"t-1","contextId":"c","status":{{"state":"{state}","timestamp":"{ts}"}}}}"#
        )
    };
    let unary = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"task":{}}}}}"#,
        task("TASK_STATE_COMPLETED", "2026-12-01T10:00:00+02:00")
    );
    let frame =
        |result: String| format!("data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{result}}}\n\n");
    let status = |state: &str| {
        frame(format!(
            r#"{{"statusUpdate":{{"taskId":"t-2","contextId":"c","status":{{"state":"{state}"}}}}}}"#
        ))
    };
    let stream = [
        frame(r#"{"task":{"id":"t-2","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#.into()),
        status("TASK_STATE_COMPLETED"),
        frame(
            r#"{"artifactUpdate":{"taskId":"t-2","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"late"}]},"lastChunk":true}}"#
                .into(),
        ),
    ]
    .concat();
    let har = json!({"log": {"entries": [
        entry("SendMessage", "", "application/json", &unary),
        entry("SendStreamingMessage", "", "text/event-stream", &stream),
    ]}});
    let path = dir.join("two.har");
    std::fs::write(&path, har.to_string()).expect("write");
    path
}

/// Where a record is, as the text report names it.
fn place(r: &Value) -> String {
    let id = r["request_id"].as_str().unwrap_or("-");
    match r["event_index"].as_u64() {
        Some(i) => format!("{id} event {i}"),
        None => id.to_owned(),
    }
}

#[test]
fn junit_names_the_har_entry_event_and_rule_as_the_text_report_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let har = recording(dir.path());
    let json = check("json", &har);
    let records: Vec<Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect();
    let by_kind = |k: &str| {
        records
            .iter()
            .find(|r| r["kind"] == k)
            .unwrap_or_else(|| panic!("no {k} in {records:?}"))
    };
    let after = by_kind("event_after_terminal");
    let stamp = by_kind("invalid_timestamp");
    assert_eq!(after["event_index"], 2, "{after}");
    assert!(
        after["request_id"]
            .as_str()
            .is_some_and(|id| id.contains('#')),
        "{after}"
    );
    // The record's rule: spec 1.0.1 sections and a2a-tck requirement ids.
    assert_eq!(
        after["rule"],
        json!({"spec": "1.0.1 §3.1.2, §11.7", "tck": ["CORE-STREAM-003", "STREAM-SUB-002"]})
    );

    let text = String::from_utf8_lossy(&check("text", &har).stdout).into_owned();
    let junit = String::from_utf8_lossy(&check("junit", &har).stdout).into_owned();
    for r in [after, stamp] {
        let at = place(r);
        assert!(text.contains(&at), "text lacks {at}:\n{text}");
        // JUnit: the same place, then the rule the finding rests on.
        let line = format!(
            "{} {} at {at}: ",
            r["severity"].as_str().unwrap(),
            r["kind"].as_str().unwrap()
        );
        assert!(junit.contains(&line), "junit lacks `{line}`:\n{junit}");
    }
    assert!(
        junit.contains("[1.0.1 §3.1.2, §11.7; TCK CORE-STREAM-003, STREAM-SUB-002]"),
        "{junit}"
    );
    assert!(
        junit.contains("[1.0.1 §5.6.1; TCK DM-SERIAL-003]"),
        "{junit}"
    );
}

#[test]
fn sarif_rules_link_the_spec_section_and_name_the_kit_requirements() {
    let dir = tempfile::tempdir().expect("temp dir");
    let har = recording(dir.path());
    let out = check("sarif", &har);
    let log: Value = serde_json::from_slice(&out.stdout).expect("SARIF JSON");
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .clone();
    let rule = |id: &str| {
        rules
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no rule {id}: {rules:?}"))
            .clone()
    };
    let after = rule("event_after_terminal");
    assert_eq!(
        after["helpUri"],
        "https://a2a-protocol.org/v1.0.1/specification/#312-send-streaming-message"
    );
    assert_eq!(after["properties"]["spec"], "1.0.1 §3.1.2, §11.7");
    assert_eq!(
        after["properties"]["tck"],
        json!(["CORE-STREAM-003", "STREAM-SUB-002"])
    );
    let stamp = rule("invalid_timestamp");
    assert_eq!(
        stamp["helpUri"],
        "https://a2a-protocol.org/v1.0.1/specification/#561-timestamps"
    );
    assert_eq!(stamp["properties"]["tck"], json!(["DM-SERIAL-003"]));
}
