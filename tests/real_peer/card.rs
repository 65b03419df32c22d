//! Issue 34: the official Python SDK's client follows an agent card that
//! its agent gzip-compresses (Starlette's GZipMiddleware; httpx sends
//! `Accept-Encoding: gzip`) through a2a-tap with `rewrite_agent_card = true`.
//! The compressed card used to pass with the agent's own URL, so the client
//! went to the agent directly and the proxy saw only the card fetch.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use super::{port_named_in_advance, run_python, start_server, start_tap_logged, Scratch};
use crate::support::total;

/// One GET on a fresh connection: the head's text and the body's bytes.
fn get(port: u16, path: &str, accept_encoding: &str) -> (String, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept-Encoding: {accept_encoding}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut all = Vec::new();
    stream.read_to_end(&mut all).expect("read");
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a whole head");
    let head = String::from_utf8_lossy(&all[..end]).to_ascii_lowercase();
    (head, all[end + 4..].to_vec())
}

#[test]
#[ignore = "needs the Python venvs of scripts/setup-python.sh: run scripts/test.sh"]
fn python_sdk_client_follows_a_gzip_compressed_card_through_the_proxy() {
    let scratch = Scratch::new("gzip-card");
    let agent = "tests/peers/agent.py";
    let (_agent, port) = start_server(&scratch, "gzip-agent", agent, &["--port", "0", "--gzip"]);
    // The agent compresses its card, which names the agent's own address.
    let (head, _) = get(port, "/.well-known/agent-card.json", "gzip");
    assert!(head.contains("content-encoding: gzip"), "{head}");
    let only = ["--only", "JSONRPC/1.0"];
    let direct_url = format!("http://127.0.0.1:{port}");
    let direct = run_python(
        &scratch,
        "gzip-card-client-direct",
        "tests/peers/client.py",
        &[&direct_url, only[0], only[1]],
    );

    let listen = port_named_in_advance();
    let url = format!("http://127.0.0.1:{listen}");
    let file = scratch.path("tap.toml");
    fs::write(
        &file,
        format!(
            "listen = \"127.0.0.1:{listen}\"\nadmin = \"127.0.0.1:0\"\n\
             upstream = \"{direct_url}\"\nname = \"gzip-agent\"\naudit_log = \"{}\"\n\
             rewrite_agent_card = true\npublic_url = \"{url}\"\n",
            scratch.path("audit.jsonl").display()
        ),
    )
    .expect("write config");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_a2a-tap"));
    cmd.arg("--config").arg(&file);
    let (proxy, _, admin) = start_tap_logged("a2a-tap-gzip-card", &mut cmd, &scratch);
    let through = run_python(
        &scratch,
        "gzip-card-client-through-proxy",
        "tests/peers/client.py",
        &[&url, only[0], only[1]],
    );
    let (_, scrape) = get(admin.port(), "/metrics", "identity");
    let scrape = String::from_utf8_lossy(&scrape);
    // The client's calls reached the proxy, not the agent directly.
    for method in [
        "SendStreamingMessage",
        "SendMessage",
        "GetTask",
        "CancelTask",
    ] {
        assert!(
            total(&scrape, "a2a_requests_total", &[("method", method)]).unwrap_or(0.0) >= 1.0,
            "{method} went past the proxy:\n{scrape}"
        );
    }
    assert!(
        direct == through,
        "the client saw different outcomes through a2a-tap\n--- direct ---\n{direct:#}\n--- through ---\n{through:#}\n{}",
        proxy.stderr_tail()
    );
    // Through the proxy, the card comes back rewritten and readable.
    let (head, card) = get(listen, "/.well-known/agent-card.json", "gzip, deflate");
    assert!(!head.contains("content-encoding"), "{head}");
    let card = String::from_utf8(card).expect("an uncompressed card");
    assert!(card.contains(&url) && !card.contains(&direct_url), "{card}");

    assert_eq!(
        total(
            &scrape,
            "a2a_agent_card_bypass_total",
            &[("upstream", "gzip-agent")]
        )
        .unwrap_or(0.0),
        0.0,
        "{scrape}"
    );
}
