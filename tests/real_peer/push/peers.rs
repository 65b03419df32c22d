//! The SDKs whose push senders the tests run, and what each puts on the wire.

use std::path::PathBuf;

use super::super::{node, repo, venv, Expected};

const PD: &str = "PushDelivery";

/// One SDK's agent, the caller that registers its configs, and what its
/// sender puts on the wire.
pub(super) struct PushPeer {
    pub(super) name: &'static str,
    /// The program and folder of the agent, and of the caller.
    pub(super) agent: (fn() -> (PathBuf, PathBuf), &'static str),
    pub(super) client: (fn() -> (PathBuf, PathBuf), &'static str),
    /// The client document's interfaces and their webhook path segment.
    pub(super) interfaces: &'static [(&'static str, &'static str)],
    pub(super) content_type: &'static str,
    /// Bodies are 0.3 Tasks (`kind: "task"`), not 1.0 StreamResponses.
    pub(super) bodies_0_3: bool,
    /// The sender serialises the live task when it posts, not when the
    /// event happened (@a2a-js/sdk 0.3.14, deliveries queued per task): a
    /// delivery may show a later state than its event, so only the count
    /// and the terminal last one are the sender's to keep, and bodies do
    /// not compare between runs.
    pub(super) live_snapshots: bool,
    /// Whether a config with `authentication` gets `Authorization`.
    pub(super) authorization: bool,
    /// Whether a config with both a token and `authentication` gets the
    /// token header too (Python) or `Authorization` alone (JavaScript).
    pub(super) token_beside_authorization: bool,
    /// The deliveries of `send`, `send-auth` and `configs` (created on an
    /// input-required task, then the follow-up that completes it), as
    /// `kind:state` or `kind`.
    pub(super) deliveries: [&'static [&'static str]; 3],
    /// Interfaces whose client has no List/Delete of configs.
    pub(super) no_list_delete: &'static [&'static str],
    /// The findings the proxied run's audit log must hold, exactly.
    pub(super) expected: &'static [Expected],
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
/// posts 1.0 StreamResponse bodies to it: a known A2A shape, in the other
/// version's dialect than the config was registered in, so
/// `version_mismatch` (a warning; `malformed_event` is for what no version
/// defines: docs/push.md). One per delivery, each its own exchange: 13 on
/// each 0.3 interface (5 + 5 + 3).
const fn dialect_0_3() -> Expected {
    ("version_mismatch", "warning", "webhook", "0.3", PD, None)
}

const PYTHON_EXPECTED: [Expected; 28] = {
    // The SDK's drift the other real-peer test names too: a 1.0 follow-up
    // stream (`configs`) begins with a statusUpdate (§3.1.2: "the stream
    // MUST begin with the Task object").
    let mut all = [dialect_0_3(); 28];
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

pub(super) const PEERS: [PushPeer; 4] = [
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
    pub(super) fn expected_count(&self) -> usize {
        let per_interface: usize = self.deliveries.iter().map(|d| d.len()).sum();
        self.interfaces.len() * per_interface
    }
}
