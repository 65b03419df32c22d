//! Two more independent A2A 1.0 servers, each with its own protocol layer:
//! the official Rust SDK (`a2a-lf` 0.4.2, `a2a-server-lf` 0.5.3; the agent of
//! tests/peers/rust/, JSON-RPC and HTTP+JSON) and fasta2a 2.1.1 (PyPI, its
//! own Starlette layer; tests/peers/fasta2a/agent.py, JSON-RPC). Both are
//! played by tests/peers/wire_client.py, plain httpx with no SDK in the way,
//! through every scenario: a streamed send with a chunked artifact, a
//! blocking send, input-required and its follow-up, failure with an open
//! artifact, cancel and re-cancel, GetTask, subscribe, a direct Message,
//! errors. Direct and through a2a-tap the outcomes are equal and the bytes
//! are the agent's; the audit log holds exactly the findings that are true,
//! each listed with the spec section (A2A 1.0, docs/specification.md) it
//! rests on.
//!
//! Needs `scripts/setup-python.sh` (the venv `real-peers/fasta2a-venv`, which
//! runs both the fasta2a agent and the wire client) and
//! `scripts/setup-rust-agent.sh` (`real-peers/rust-agent`), both under
//! `${CARGO_TARGET_DIR:-target}`; without them the tests fail and say so.

use std::panic;

use super::*;

/// `${CARGO_TARGET_DIR:-target}/real-peers`, as the setup scripts place it
/// (a relative target dir is the repo's).
fn real_peers_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    repo().join(target).join("real-peers")
}

/// `path`, or a failure that names the script that makes it (also on CI).
fn installed(path: PathBuf, script: &str) -> PathBuf {
    if !path.exists() {
        let where_ = if std::env::var("CI").as_deref() == Ok("true") {
            "on CI"
        } else {
            "locally"
        };
        panic!(
            "{} is missing ({where_}): run {script} (with the same CARGO_TARGET_DIR \
             as cargo test) to install the real peer these tests run against",
            path.display()
        );
    }
    path
}

/// The Python of the fasta2a venv: the fasta2a agent and the wire client.
fn wire_python() -> PathBuf {
    installed(
        real_peers_dir().join("fasta2a-venv/bin/python"),
        "scripts/setup-python.sh",
    )
}

fn rust_agent() -> PathBuf {
    installed(
        real_peers_dir().join("rust-agent/debug/rust-peer-agent"),
        "scripts/setup-rust-agent.sh",
    )
}

const JSONRPC: &str = "JSONRPC/1.0";
const REST: &str = "HTTP+JSON/1.0";

/// The outcomes show the scenarios really ran, or equality means nothing.
fn assert_played(peer: &str, interfaces: &[&str], outcomes: &Value) {
    for key in interfaces {
        let o = &outcomes[*key];
        let ctx = || format!("{peer}: {key}: {o:#}");
        assert_eq!(
            o["echo"]["artifacts"]["echo"],
            "hello tap world",
            "{}",
            ctx()
        );
        assert_eq!(o["fail"]["finalState"], "TASK_STATE_FAILED", "{}", ctx());
        assert_eq!(o["fail"]["artifacts"]["partial"], "half", "{}", ctx());
        assert_eq!(
            o["ask"]["first"]["finalState"],
            "TASK_STATE_INPUT_REQUIRED",
            "{}",
            ctx()
        );
        assert_eq!(
            o["ask"]["followUp"]["finalState"],
            "TASK_STATE_COMPLETED",
            "{}",
            ctx()
        );
        assert_eq!(
            o["long"]["stream"]["finalState"],
            "TASK_STATE_CANCELED",
            "{}",
            ctx()
        );
        assert_eq!(
            o["long"]["getTask"]["state"],
            "TASK_STATE_CANCELED",
            "{}",
            ctx()
        );
        assert_eq!(
            o["subscribe"]["subscription"]["finalState"],
            "TASK_STATE_CANCELED",
            "{}",
            ctx()
        );
        assert!(
            o["errors"]["getUnknownTask"]["error"].is_object(),
            "{}",
            ctx()
        );
    }
    let count = outcomes.as_object().map_or(0, |o| o.len());
    assert_eq!(count, interfaces.len(), "{peer}: {outcomes:#}");
}

const SM: &str = "SendMessage";
const CANCEL: &str = "CancelTask";

/// fasta2a 2.1.1, JSON-RPC 1.0 (the only interface its card names).
#[test]
#[ignore = "needs the fasta2a venv of scripts/setup-python.sh: run scripts/test.sh"]
fn fasta2a_direct_and_through_proxy() {
    let (python, dir) = (wire_python(), repo());
    let rt = (python.as_path(), dir.as_path());
    let (_scratch, audit) = direct_and_through(
        "fasta2a-2.1.1",
        (rt, &["tests/peers/fasta2a/agent.py"]),
        (rt, &["tests/peers/wire_client.py"]),
        &|outcomes| {
            assert_played("fasta2a", &[JSONRPC], outcomes);
            // fasta2a answers a blocking send at once, with the task it just
            // submitted, and a CancelTask before the worker has run it.
            let o = &outcomes[JSONRPC];
            assert_eq!(o["echo-unary"]["state"], "TASK_STATE_SUBMITTED", "{o:#}");
            assert_eq!(o["long"]["cancelAgain"]["state"], "TASK_STATE_CANCELED");
        },
    );
    let append = (
        "append_to_unknown_artifact",
        "warning",
        "jsonrpc",
        "1.0",
        SSM,
        Some(2),
    );
    // §5.6.1: timestamps "MUST be represented as ISO 8601 formatted
    // strings in UTC" with no offset but `Z`; fasta2a stamps every status
    // with `datetime.now().isoformat()`, local time with no zone
    // ("2026-12-02T05:24:17.999365"): once per answer that carries one
    // (a stream's first event, its Task): seven streamed sends, four
    // cancels, two GetTasks, the blocking send and the subscribe.
    let stamp = |method, index| {
        (
            "invalid_timestamp",
            "warning",
            "jsonrpc",
            "1.0",
            method,
            index,
        )
    };
    let mut stamps = vec![stamp(SSM, Some(0)); 7];
    stamps.extend([stamp(CANCEL, None); 4]);
    stamps.extend([stamp("GetTask", None); 2]);
    stamps.push(stamp(SM, None));
    stamps.push(stamp("SubscribeToTask", Some(0)));
    assert_findings_besides(
        "fasta2a-2.1.1",
        &audit,
        "sdk-agent",
        &[
            stamps.as_slice(),
            &[
                // §4.2.2 TaskArtifactUpdateEvent.append: "If true, the content of
                // this artifact should be appended to a previously sent artifact
                // with the same ID". fasta2a's worker sends every chunk with
                // append:true, the first one too (its own convention, documented
                // in Worker.publish_artifact and sent so by its pydantic-ai
                // bridge): on `echo`, `direct` (an echo here: fasta2a has no
                // direct Message), the `echo done` of `errors`, and `fail`.
                append,
                append,
                append,
                append,
                // §3.2.2 SendMessageConfiguration: blocking (returnImmediately
                // false or unset) "MUST wait until the task reaches a terminal
                // state ... or an interrupted state". fasta2a's message/send
                // returns the task it just submitted.
                (
                    "blocking_returned_active",
                    "error",
                    "jsonrpc",
                    "1.0",
                    SM,
                    None,
                ),
                // §3.4.2: a Message's taskId "MUST reference an existing task"
                // and §3.4.3: clients "MAY use taskId ... to continue or refine a
                // specific task". fasta2a makes every message a new task: the
                // follow-up naming the input-required task is answered with a
                // stream about another task (its first event, the Task).
                ("task_id_mismatch", "error", "jsonrpc", "1.0", SSM, Some(0)),
                // `fail`: the chunk is never closed (§4.2.2 lastChunk) when the
                // task fails, a warning as for every other peer.
                abandoned("jsonrpc", "1.0"),
                // `errors`: CancelTask of a completed task answered with the task
                // (§3.1.5: TaskNotCancelableError "already completed, failed, or
                // canceled"; §3.3.2's table).
                (
                    "terminal_task_accepted",
                    "error",
                    "jsonrpc",
                    "1.0",
                    CANCEL,
                    None,
                ),
            ],
        ]
        .concat(),
        // `long`'s re-cancel, CancelTask of a task this proxy saw CANCELED
        // answered with that canceled task, is legal (§3.3.1: "Cancel Task
        // operations are idempotent") and not reported.
        &[],
    );
}

/// What the Rust SDK's agent must have played, beyond `assert_played`.
fn rust_played(outcomes: &Value) {
    assert_played("rust-sdk", &[JSONRPC, REST], outcomes);
    for key in [JSONRPC, REST] {
        let o = &outcomes[key];
        assert_eq!(o["direct"]["events"][0]["type"], "message", "{o:#}");
        assert_eq!(o["echo-unary"]["state"], "TASK_STATE_COMPLETED", "{o:#}");
        // The SDK refuses to cancel a completed task (TaskNotCancelable)
        // and answers a re-cancel of a canceled one with the task
        // (idempotent, §3.3.1).
        assert!(
            o["errors"]["cancelCompletedTask"]["error"].is_object(),
            "{o:#}"
        );
        assert_eq!(o["long"]["cancelAgain"]["state"], "TASK_STATE_CANCELED");
    }
}

/// The Rust SDK (`a2a-server-lf` 0.5.3), JSON-RPC and HTTP+JSON 1.0.
#[test]
#[ignore = "needs the Rust SDK agent of scripts/setup-rust-agent.sh and the fasta2a venv: run scripts/test.sh"]
fn rust_sdk_direct_and_through_proxy() {
    let (agent, client) = (rust_agent(), wire_python());
    let dir = repo();
    let play = || {
        direct_and_through(
            "rust-sdk-0.5.3",
            ((agent.as_path(), dir.as_path()), &[]),
            (
                (client.as_path(), dir.as_path()),
                &["tests/peers/wire_client.py"],
            ),
            &rust_played,
        )
    };
    // The SDK's server (axum 0.8 on hyper 1) now and then drops a kept-alive
    // connection as a request arrives on it, direct too: in about one run in
    // ten the wire client gets "Server disconnected without sending a
    // response" (direct) or a2a-tap's 502 "upstream reset" (through it).
    // Such a run, and only such a run, is played again (at most twice
    // more: on a busy machine two in a row were seen); the findings are
    // judged on the run that went through.
    let mut tries = 0;
    let (_scratch, audit) = loop {
        tries += 1;
        let payload = match panic::catch_unwind(panic::AssertUnwindSafe(play)) {
            Ok(run) => break run,
            Err(payload) => payload,
        };
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        let bad_gateway = ["\"status\": 502", "\"http\": 502"];
        let dropped = text.contains("Server disconnected without sending a response")
            || (text.contains("different outcomes")
                && bad_gateway.iter().any(|b| text.contains(b)))
            || client_got_an_answer_the_agent_never_sent(text);
        if !dropped || tries == 3 {
            panic::resume_unwind(payload);
        }
        eprintln!("rust-sdk: the agent dropped a connection; playing once more");
    };
    let mut expected = Vec::new();
    for binding in ["jsonrpc", "rest"] {
        // §3.1.2: "If the agent returns a Task, the stream MUST begin with
        // the Task object". The SDK sends what the executor yields and opens
        // a new task's stream with nothing of its own; an executor written
        // as the SDK's helloworld example writes one begins with a `working`
        // status update: on `echo`, `ask` and its follow-up, `fail`, `long`,
        // the stream of `subscribe` and the `echo done` of `errors` (not on
        // `direct`, a Message). SubscribeToTask streams open with the Task.
        for _ in 0..7 {
            expected.push(("stream_start", "error", binding, "1.0", SSM, Some(0)));
        }
        // `fail`: working, a chunk never closed (§4.2.2 lastChunk), failed.
        expected.push((
            "abandoned_artifact",
            "warning",
            binding,
            "1.0",
            SSM,
            Some(2),
        ));
    }
    assert_findings_besides(
        "rust-sdk-0.5.3",
        &audit,
        "sdk-agent",
        &expected,
        // `long`'s re-cancel is legal (§3.3.1, idempotent) and not reported.
        &[],
    );
}

/// The wire check's failure when the client got more answers than the
/// agent sent ("(34 vs 35 exchanges)"): a request met a connection the
/// agent dropped and was answered by a2a-tap's 502, which the wire client
/// then sent again (one more answer for each such connection). The same
/// defect as the others above, seen by the byte check instead of the
/// outcome check.
fn client_got_an_answer_the_agent_never_sent(text: &str) -> bool {
    let Some(counts) = text
        .split("differ from the bytes the agent sent (")
        .nth(1)
        .and_then(|rest| rest.split(" exchanges)").next())
    else {
        return false;
    };
    let mut n = counts.split(" vs ").map(|c| c.trim().parse::<usize>());
    // One more answer for each connection the agent dropped (a2a-tap's
    // 502 for it): a busy machine has shown two in one run.
    matches!((n.next(), n.next()), (Some(Ok(sent)), Some(Ok(got))) if got > sent)
}
