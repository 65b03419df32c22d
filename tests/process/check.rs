//! `a2a-tap check` end to end: the binary over recorded traffic (the
//! seeds' traces and the official Python SDK's), exit codes and formats.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn check(args: &[&str], files: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_a2a-tap"))
        .arg("check")
        .args(args)
        .args(files)
        .output()
        .expect("run a2a-tap check")
}

fn fixtures(dir: &str, ext: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ext.contains(&e))
        })
        .collect();
    files.sort();
    files
}

fn records(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON Lines record"))
        .collect()
}

fn kinds(recs: &[Value]) -> Vec<(String, String)> {
    let mut k: Vec<(String, String)> = recs
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_owned(),
                r["severity"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    k.sort();
    k
}

#[test]
fn booking_trace_is_clean() {
    let files = fixtures("seeds", &["sse"])
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("booking"))
        .collect::<Vec<_>>();
    assert_eq!(files.len(), 2);
    let out = check(&["--format", "json"], &files);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(records(&out).is_empty());
}

#[test]
fn codegen_trace_abandons_its_artifact() {
    let files: Vec<PathBuf> = fixtures("seeds", &["sse"])
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("codegen"))
        .collect();
    let out = check(&["--format", "json"], &files);
    // A 0.3 stream (lower-case states, `final`): no stream_start, which
    // only 1.0 states (§3.1.2); the one warning leaves the exit code 0.
    assert_eq!(out.status.code(), Some(0));
    let recs = records(&out);
    assert_eq!(
        kinds(&recs),
        vec![("abandoned_artifact".into(), "warning".into())]
    );
    let abandoned = recs
        .iter()
        .find(|r| r["kind"] == "abandoned_artifact")
        .unwrap();
    assert_eq!(abandoned["task_id"], "t-9f2");
    assert_eq!(abandoned["event_index"], 3);
    assert_eq!(abandoned["version"], "0.3");
    assert!(abandoned["evidence"]
        .as_str()
        .unwrap()
        .contains("\"failed\""));
}

#[test]
fn python_sdk_recordings_hold_only_the_documented_findings() {
    let files = fixtures("sdk", &["sse", "jsonl", "har"]);
    assert!(files.len() >= 25, "fixtures missing: {files:?}");
    let out = check(&["--format", "json"], &files);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recs = records(&out);
    let mut want = vec![("abandoned_artifact".to_string(), "warning".to_string()); 4];
    // The follow-up streams that begin with a status update: the 1.0 ones
    // (JSON-RPC, REST, the HAR's); 0.3 states no rule on a stream's start.
    want.extend(vec![("stream_start".to_string(), "error".to_string()); 3]);
    want.sort();
    assert_eq!(kinds(&recs), want, "{recs:#?}");
    for r in &recs {
        let source = r["request_id"].as_str().unwrap_or("");
        match r["kind"].as_str().unwrap() {
            "abandoned_artifact" => assert!(source.contains("-fail."), "{r}"),
            _ => assert!(
                source.contains("followup") || source.contains("session.har"),
                "{r}"
            ),
        }
    }
}

#[test]
fn text_report_and_exit_codes() {
    let files = fixtures("seeds", &["sse"]);
    let out = check(&[], &files);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "only a warning: {text}");
    assert!(
        text.contains("booking-stream1.jsonrpc.sse: clean"),
        "{text}"
    );
    assert!(text.contains("abandoned_artifact"), "{text}");
    assert!(
        text.contains("1 finding(s), 0 error(s), in 3 file(s)"),
        "{text}"
    );
    let followup = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sdk/jsonrpc-1.0-ask-followup.sse");
    let errors = check(&[], &[followup]);
    assert_eq!(errors.status.code(), Some(1), "stream_start is an error");

    let missing = check(&[], &[PathBuf::from("/nonexistent/trace.sse")]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/trace.sse"));

    let bad_format = check(&["--format", "yaml"], &files);
    assert_eq!(bad_format.status.code(), Some(2));
}

#[test]
fn garbage_input_is_judged_not_fatal() {
    let dir = std::env::temp_dir().join(format!("a2a-tap-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sse = dir.join("garbage.sse");
    std::fs::write(&sse, b"\xff\xfe data: {\"jsonrpc\"\n\ndata: \x00\x01\n\n").unwrap();
    let har = dir.join("broken.har");
    std::fs::write(&har, b"{\"log\": ").unwrap();
    let out = check(&["--format", "json"], std::slice::from_ref(&sse));
    assert_eq!(out.status.code(), Some(1));
    assert!(records(&out).iter().all(|r| r["kind"] == "malformed_event"));
    let out = check(&[], std::slice::from_ref(&har));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.har"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `check --config` applies the operator's `[severity]` and `[analysis]`
/// offline as live: a kind lowered or turned off, an event over the
/// analysis limit unread (a gap, so no finding rests on it); a bad config
/// is exit 2 naming the key.
#[test]
fn check_applies_the_config_of_the_live_proxy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sdk");
    let followup = sdk.join("jsonrpc-1.0-ask-followup.sse");
    let fail = sdk.join("jsonrpc-1.0-fail.sse");
    let plain = check(&["--format", "json"], &[followup.clone(), fail.clone()]);
    assert_eq!(
        plain.status.code(),
        Some(1),
        "stream_start is an error by default"
    );
    assert_eq!(
        kinds(&records(&plain)),
        vec![
            ("abandoned_artifact".to_string(), "warning".to_string()),
            ("stream_start".to_string(), "error".to_string())
        ]
    );

    let lowered = dir.path().join("severity.toml");
    std::fs::write(
        &lowered,
        "[severity]\nstream_start = \"warning\"\nabandoned_artifact = \"off\"\n",
    )
    .unwrap();
    let cfg = lowered.to_str().unwrap();
    let out = check(
        &["--config", cfg, "--format", "json"],
        &[followup.clone(), fail.clone()],
    );
    assert_eq!(out.status.code(), Some(0), "only a warning left");
    assert_eq!(
        kinds(&records(&out)),
        vec![("stream_start".to_string(), "warning".to_string())]
    );

    let small = dir.path().join("analysis.toml");
    std::fs::write(&small, "[analysis]\nmax_event_bytes = 64\n").unwrap();
    let out = check(
        &["--config", small.to_str().unwrap(), "--format", "json"],
        &[fail],
    );
    assert_eq!(out.status.code(), Some(2), "nothing was read");
    assert!(
        records(&out).is_empty(),
        "every event over 64 bytes is a gap: no finding"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("all over the [analysis] limits"), "{err}");

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[severity]\nno_such_kind = \"off\"\n").unwrap();
    let out = check(&["--config", bad.to_str().unwrap()], &[followup]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("severity.no_such_kind"));
}

/// An empty file, a file with no SSE event and a HAR without an A2A
/// exchange are not "clean": nothing was read, said so, exit 2.
#[test]
fn nothing_read_is_not_clean() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        ("empty.sse", ""),
        ("prose.sse", "hello, this is not an event stream\n"),
        ("empty.jsonl", "\n\n"),
        (
            "other.har",
            r#"{"log":{"entries":[{"request":{"method":"GET","url":"http://a/x.png","headers":[]},"response":{"status":200,"headers":[],"content":{"mimeType":"image/png","text":""}}}]}}"#,
        ),
    ];
    for (name, text) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        let out = check(&[], &[path]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(name) && err.contains("nothing was read"),
            "{name}: {err}"
        );
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("clean"),
            "{name}"
        );
    }
}

/// Offline records carry the time of the recorded traffic when the input
/// has one (HAR `startedDateTime`, any offset), not the time of the check.
#[test]
fn har_records_carry_the_recorded_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let body = r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t-1","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}"#;
    let har = serde_json::json!({"log": {"entries": [{
        "startedDateTime": "2026-03-04T10:20:30.456+01:00",
        "request": {"method": "POST", "url": "http://agent/a2a", "headers": [],
            "postData": {"text": r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#}},
        "response": {"status": 200, "headers": [{"name": "content-type", "value": "application/json"}],
            "content": {"mimeType": "application/json", "text": body}}
    }]}});
    let path = dir.path().join("blocking.har");
    std::fs::write(&path, har.to_string()).expect("write");
    let out = check(&["--format", "json"], &[path]);
    let recs = records(&out);
    assert_eq!(
        recs.len(),
        1,
        "{recs:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(recs[0]["kind"], "blocking_returned_active");
    assert_eq!(recs[0]["ts"], "2026-03-04T09:20:30.456Z");
}

/// Offline as live: repeats of a kind on one recorded exchange fold into
/// its first record (`occurrences`); another exchange's are its own.
#[test]
fn repeats_on_one_recorded_exchange_fold() {
    let dir = tempfile::tempdir().expect("temp dir");
    let frame = |ev: Value| {
        format!(
            "data: {}\n\n",
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": ev})
        )
    };
    let status = |ctx: &str, state: &str| {
        frame(
            serde_json::json!({"statusUpdate": {"taskId": "t-1", "contextId": ctx, "status": {"state": state}}}),
        )
    };
    let mut text = frame(
        serde_json::json!({"task": {"id": "t-1", "contextId": "c0", "status": {"state": "TASK_STATE_WORKING"}}}),
    );
    for i in 1..=5 {
        text.push_str(&status(&format!("c{}", i % 2), "TASK_STATE_WORKING"));
    }
    text.push_str(&status("c1", "TASK_STATE_COMPLETED"));
    let (a, b) = (dir.path().join("a.sse"), dir.path().join("b.sse"));
    std::fs::write(&a, &text).expect("write");
    std::fs::write(&b, &text).expect("write");
    let out = check(&["--format", "json"], &[a, b]);
    let recs = records(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(recs.len(), 2, "{recs:#?} {err}");
    for r in &recs {
        assert_eq!(r["kind"], "context_id_mismatch", "{r}");
        assert_eq!(r["occurrences"], 5, "{r}");
        assert_eq!(r["event_index"], 1, "{r}");
    }
}

/// One HAR entry: `request` (method, url, JSON-RPC body or none), and the
/// response's status, content type and `content` object as recorded.
fn har_entry(method: &str, url: &str, body: Option<&str>, ctype: &str, content: Value) -> Value {
    let mut request = serde_json::json!({"method": method, "url": url,
        "headers": [{"name": "A2A-Version", "value": "1.0"}]});
    if let Some(b) = body {
        request["postData"] = serde_json::json!({"mimeType": "application/json", "text": b});
    }
    serde_json::json!({"request": request, "response": {"status": 200,
        "headers": [{"name": "content-type", "value": ctype}], "content": content}})
}

/// Issue 35, class 3: a HAR entry whose body the recording did not keep
/// (no `content.text`, or an empty one beside a non-zero `size`, as
/// exporters leave streamed or large answers) is a gap: not judged, said
/// in the report, never a finding. Legal: such a card and such a stream
/// beside a recorded clean answer (exit 0, the gap named). Twins in the
/// same shape: the card and the stream recorded as empty (`size` 0, empty
/// `text`): `invalid_agent_card` and `stream_start`. A HAR whose every
/// answer went unrecorded read nothing: exit 2, never clean.
#[test]
fn unrecorded_bodies_are_gaps_not_findings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let card = |content: Value| {
        har_entry(
            "GET",
            "http://agent/.well-known/agent-card.json",
            None,
            "application/json",
            content,
        )
    };
    let stream_req = r#"{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
    let stream = |content: Value| {
        har_entry(
            "POST",
            "http://agent/a2a",
            Some(stream_req),
            "text/event-stream",
            content,
        )
    };
    let get_req = r#"{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"t-1"}}"#;
    let get_body = r#"{"jsonrpc":"2.0","id":2,"result":{"id":"t-1","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#;
    let get = har_entry(
        "POST",
        "http://agent/a2a",
        Some(get_req),
        "application/json",
        serde_json::json!({"size": get_body.len(), "mimeType": "application/json", "text": get_body}),
    );
    let write = |name: &str, entries: Vec<Value>| {
        let path = dir.path().join(name);
        let har = serde_json::json!({"log": {"version": "1.2", "entries": entries}});
        std::fs::write(&path, har.to_string()).expect("write");
        path
    };
    let unkept = write(
        "unkept.har",
        vec![
            card(serde_json::json!({"size": 812, "mimeType": "application/json"})),
            stream(serde_json::json!({"size": 2048, "mimeType": "text/event-stream", "text": ""})),
            get.clone(),
        ],
    );
    let out = check(&[], std::slice::from_ref(&unkept));
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    assert!(text.contains("unkept.har: clean"), "{text}");
    for said in [&text, &err] {
        assert!(
            said.contains("2 answer(s) not judged") && said.contains("#0, ") && said.contains("#1"),
            "{said}"
        );
    }
    let json = check(&["--format", "json"], &[unkept]);
    assert_eq!(records(&json), Vec::<Value>::new());

    let empty = write(
        "empty.har",
        vec![
            card(serde_json::json!({"size": 0, "mimeType": "application/json", "text": ""})),
            stream(serde_json::json!({"size": 0, "mimeType": "text/event-stream", "text": ""})),
            get,
        ],
    );
    let out = check(&["--format", "json"], &[empty]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        kinds(&records(&out)),
        [
            ("invalid_agent_card".to_owned(), "warning".to_owned()),
            ("stream_start".to_owned(), "error".to_owned()),
        ]
    );

    let none = write(
        "none.har",
        vec![
            card(serde_json::json!({"size": 812, "mimeType": "application/json"})),
            stream(serde_json::json!({"size": 2048, "mimeType": "text/event-stream"})),
        ],
    );
    let out = check(&[], &[none]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nothing was read") && err.contains("none of its 2 A2A answer(s)"),
        "{err}"
    );
}

/// The fenced block of `lang` that follows `after` in docs/check.md.
fn docs_check_block(after: &str, lang: &str) -> String {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/check.md");
    let text = std::fs::read_to_string(doc).expect("docs/check.md");
    let from = text.find(after).expect("the section");
    let open = format!("```{lang}\n");
    let start = text[from..].find(&open).expect("the block") + from + open.len();
    let len = text[start..].find("```").expect("the block's end");
    text[start..start + len].to_string()
}

/// The sidecar format docs/check.md gives is the one the binary reads: its
/// example beside its recording makes the stream a follow-up on task t-7
/// (so the detail names the SDK drift); the bare recording cannot say so.
#[test]
fn the_documented_sidecar_is_read_as_documented() {
    let dir = tempfile::tempdir().expect("dir");
    let sse = dir.path().join("followup.sse");
    let side = dir.path().join("followup.json");
    let recording = docs_check_block("saved as `followup.sse`", "text");
    std::fs::write(&sse, recording).expect("write");
    std::fs::write(&side, docs_check_block("## The sidecar file", "json")).expect("write");
    let judged = |out: &Output| {
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let recs = records(out);
        assert_eq!(recs.len(), 1, "{recs:#?}");
        assert_eq!(recs[0]["kind"], "stream_start");
        assert_eq!(recs[0]["task_id"], "t-7");
        recs[0]["detail"].as_str().unwrap_or("").to_string()
    };
    let with = judged(&check(&["--format", "json"], std::slice::from_ref(&sse)));
    assert!(with.contains("a follow-up on existing task t-7"), "{with}");
    std::fs::remove_file(&side).expect("remove");
    let without = judged(&check(&["--format", "json"], &[sse]));
    assert!(!without.contains("follow-up"), "{without}");
}
