//! The official Python SDK (a2a-sdk 1.3.0 with its grpc extra) over the gRPC
//! binding, 1.0 (`lf.a2a.v1.A2AService`) and 0.3 (`a2a.v1.A2AService`, the
//! SDK's compatibility layer): tests/peers/grpc_agent.py serving, the SDK
//! client of tests/peers/client.py (`--grpc`) playing every scenario
//! (streaming with a chunked artifact, input-required and its follow-up,
//! failure with an open artifact, cancel, GetTask, subscribe, errors),
//! direct and through a validating a2a-tap.

use super::*;

/// What a2a-tap finds in the SDK's gRPC traffic, and nothing else: the
/// abandoned artifact of `fail` on both versions, and the SDK's 1.0
/// follow-up stream drift (a statusUpdate first, §3.1.2), as over JSON.
const GRPC_EXPECTED: &[Expected] = &[
    abandoned("grpc", "1.0"),
    abandoned("grpc", "0.3"),
    ("stream_start", "error", "grpc", "1.0", SSM, Some(0)),
];

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_grpc_direct_and_through_proxy() {
    let scratch = Scratch::new("python-grpc");
    let python = venv(".venv");
    let peers = repo().join("tests/peers");
    let rt = (python.as_path(), peers.as_path());
    let (_direct_agent, direct_port) = start_server_in(
        &scratch,
        "grpc-agent-direct",
        rt,
        &["grpc_agent.py", "--port", "0"],
    );
    let direct = run_in(
        &scratch,
        "grpc-client-direct",
        rt,
        &["client.py", "--grpc", &format!("127.0.0.1:{direct_port}")],
    );
    let peer = Peer {
        name: "python-1.3.0-grpc",
        runtime: || (venv(".venv"), repo()),
        agent: "tests/peers/grpc_agent.py",
        client: "tests/peers/client.py",
        interfaces: &["GRPC/1.0", "GRPC/0.3"],
        expected: GRPC_EXPECTED,
    };
    assert_meaningful(&peer, &direct);

    let (_agent, agent_port) = start_server_in(
        &scratch,
        "grpc-agent-behind-proxy",
        rt,
        &["grpc_agent.py", "--port", "0"],
    );
    let (mut proxy, listen) = start_tap(&scratch, "grpc-tap", agent_port, "name = \"sdk-agent\"");
    let through = run_in(
        &scratch,
        "grpc-client-through-proxy",
        rt,
        &["client.py", "--grpc", &format!("127.0.0.1:{listen}")],
    );
    assert!(
        direct == through,
        "the SDK's gRPC client saw different outcomes through a2a-tap\n--- direct ---\n{direct:#}\n--- through a2a-tap ---\n{through:#}\n{}",
        proxy.stderr_tail()
    );
    let status = proxy.terminate();
    assert!(
        status.success(),
        "a2a-tap exited with {status}\n{}",
        proxy.stderr_tail()
    );
    let audit = scratch.path("grpc-tap.audit.jsonl");
    assert_findings(peer.name, &audit, "sdk-agent", GRPC_EXPECTED);
}
