//! Agent-card rewriting through the running proxy: an opt-in
//! alteration. On, the advertised URLs move onto `public_url` with paths
//! and tenants kept and every other byte as sent; off, the card passes
//! byte-identical.

use crate::support::{tap::Proxy, Proxied, Reply, Upstream};

const PUBLIC: &str = "http://proxy.example:8080";
const REWRITE: &str = "rewrite_agent_card = true\npublic_url = \"http://proxy.example:8080\"\n";

/// A 1.0 card advertising the upstream's own address, formatted by hand
/// (odd spacing, key order) so a re-serialisation would show.
fn card_v1(up: &str) -> String {
    format!(
        r#"{{"name": "Echo", "description":"talks back; docs at http://{up}/docs",
  "supportedInterfaces": [
    {{"url":"http://{up}/a2a/jsonrpc","protocolBinding":"JSONRPC","tenant":"acme","protocolVersion":"1.0"}},
    {{ "protocolBinding": "HTTP+JSON", "url": "http://{up}/rest/v1?x=1" }}
  ],
  "documentationUrl": "http://{up}/docs", "version": "1.2.3", "skills": [] }}"#
    )
}

fn card_v03(up: &str) -> String {
    format!(
        r#"{{ "protocolVersion": "0.3.0", "name": "Echo", "url": "http://{up}/",
  "preferredTransport": "JSONRPC",
  "additionalInterfaces": [ {{ "url": "http://{up}/", "transport": "JSONRPC" }}, {{ "url": "http://{up}/rest", "transport": "HTTP+JSON" }} ],
  "provider": {{ "organization": "x", "url": "https://example.org" }} }}"#
    )
}

async fn get_card(up: &Upstream, p: &Proxy, path: &str, card: &str) -> (Vec<u8>, http::HeaderMap) {
    up.push(Reply::json(200, card));
    let (status, head, got) = p.request("GET", path, &[], "").await;
    assert_eq!(status, 200);
    (got, head)
}

#[tokio::test]
async fn v1_card_urls_move_to_the_public_url_keeping_paths_and_tenants() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, REWRITE).await;
    let card = card_v1(&up.addr.to_string());
    let (got, head) = get_card(&up, &p, "/.well-known/agent-card.json", &card).await;
    let want = card
        .replace(
            &format!("\"http://{}/a2a/jsonrpc\"", up.addr),
            &format!("\"{PUBLIC}/a2a/jsonrpc\""),
        )
        .replace(
            &format!("\"http://{}/rest/v1?x=1\"", up.addr),
            &format!("\"{PUBLIC}/rest/v1?x=1\""),
        );
    assert_ne!(want, card);
    assert_eq!(
        String::from_utf8_lossy(&got),
        want,
        "only the interface URLs change"
    );
    // The documentation URL and the description still name the upstream.
    assert!(want.contains(&format!(
        "\"documentationUrl\": \"http://{}/docs\"",
        up.addr
    )));
    // The length changed: no stale Content-Length.
    if let Some(len) = head.get("content-length") {
        assert_eq!(len.to_str().unwrap(), got.len().to_string());
    }
    // Not a card path: never rewritten.
    up.push(Reply::json(200, &card));
    let (_, other) = p.send("GET", "/not-a-card.json", &[], "").await;
    assert_eq!(String::from_utf8_lossy(&other), card);
}

#[tokio::test]
async fn v03_card_url_and_additional_interfaces_move() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, REWRITE).await;
    let card = card_v03(&up.addr.to_string());
    let (got, _) = get_card(&up, &p, "/.well-known/agent-card.json", &card).await;
    let want = card
        .replace(
            &format!("\"http://{}/\"", up.addr),
            &format!("\"{PUBLIC}/\""),
        )
        .replace(
            &format!("\"http://{}/rest\"", up.addr),
            &format!("\"{PUBLIC}/rest\""),
        );
    assert_eq!(String::from_utf8_lossy(&got), want);
    assert!(
        want.contains("\"url\": \"https://example.org\""),
        "provider URL kept"
    );
    // The older well-known path too.
    let (got, _) = get_card(&up, &p, "/.well-known/agent.json", &card).await;
    assert_eq!(String::from_utf8_lossy(&got), want);
}

#[tokio::test]
async fn cards_pass_byte_identical_by_default() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    for card in [
        card_v1(&up.addr.to_string()),
        card_v03(&up.addr.to_string()),
    ] {
        let (got, head) = get_card(&up, &p, "/.well-known/agent-card.json", &card).await;
        assert_eq!(got, card.as_bytes());
        assert_eq!(head.get("content-type").unwrap(), "application/json");
    }
}

#[tokio::test]
async fn only_the_advertised_urls_move_whatever_else_names_the_same_address() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, REWRITE).await;
    let a = up.addr.to_string();
    // The provider and the docs share the interface's exact URL (a dev
    // agent's card); the 1.0 interface writes its slashes escaped, as
    // PHP's json_encode does.
    let card = format!(
        r#"{{"url": "http://{a}/", "provider": {{"organization": "dev", "url": "http://{a}/"}},
 "documentationUrl": "http://{a}/",
 "supportedInterfaces": [{{"url": "http:\/\/{a}\/a2a", "protocolBinding": "JSONRPC"}}]}}"#
    );
    let (got, _) = get_card(&up, &p, "/.well-known/agent-card.json", &card).await;
    let want = format!(
        r#"{{"url": "{PUBLIC}/", "provider": {{"organization": "dev", "url": "http://{a}/"}},
 "documentationUrl": "http://{a}/",
 "supportedInterfaces": [{{"url": "{PUBLIC}/a2a", "protocolBinding": "JSONRPC"}}]}}"#
    );
    assert_eq!(String::from_utf8_lossy(&got), want);
}

#[tokio::test]
async fn cards_are_rewritten_with_validation_off_too() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, &format!("validate = false\n{REWRITE}")).await;
    let card = card_v03(&up.addr.to_string());
    let (got, _) = get_card(&up, &p, "/.well-known/agent-card.json", &card).await;
    let got = String::from_utf8_lossy(&got);
    assert!(got.contains(&format!("\"url\": \"{PUBLIC}/\"")), "{got}");
    assert!(!got.contains(&format!("http://{}/rest", up.addr)), "{got}");
    assert!(got.contains("https://example.org"), "{got}");
}

/// With rewriting off, a card whose interface URLs lead past the proxy
/// (the agent's own address) is counted in `a2a_agent_card_bypass_total`:
/// clients that follow it would talk to the agent unseen. Look-alikes: a
/// card naming the address the caller fetched it at (the proxy), and a
/// card rewritten (rewriting on), are not counted.
#[tokio::test]
async fn cards_that_send_clients_past_the_proxy_are_counted() {
    use crate::support::{metric, NAME};
    let bypass = |s: &str| metric(s, "a2a_agent_card_bypass_total", &[("upstream", NAME)]);
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    assert_eq!(
        bypass(&p.metrics().await),
        Some(0.0),
        "the series exists at zero"
    );
    let ours = card_v1(&p.listen.to_string());
    get_card(&up, &p, "/.well-known/agent-card.json", &ours).await;
    for card in [
        card_v1(&up.addr.to_string()),
        card_v03(&up.addr.to_string()),
    ] {
        get_card(&up, &p, "/.well-known/agent-card.json", &card).await;
    }
    p.wait_metrics("two bypassing cards counted", |s| bypass(s) == Some(2.0))
        .await;
    crate::support::a2a::settle(&up, &p).await;
    assert_eq!(
        bypass(&p.metrics().await),
        Some(2.0),
        "the look-alike is not counted"
    );

    let rewriting = Proxy::start(up.addr, REWRITE).await;
    get_card(
        &up,
        &rewriting,
        "/.well-known/agent-card.json",
        &card_v1(&up.addr.to_string()),
    )
    .await;
    get_card(&up, &rewriting, "/.well-known/agent-card.json", &ours).await;
    crate::support::a2a::settle(&up, &rewriting).await;
    assert_eq!(bypass(&rewriting.metrics().await), Some(0.0));
}

/// `body` under `coding` (gzip, deflate, br), in small chunks.
fn coded(body: &[u8], coding: &str) -> Reply {
    use super::paths::{brotli_stored, gzip, zlib};
    let packed = match coding {
        "gzip" => gzip(body),
        "deflate" => zlib(body),
        "br" => brotli_stored(body),
        _ => body.to_vec(),
    };
    let mut reply = Reply::json(200, "").header("content-encoding", coding);
    reply.chunks = packed
        .chunks(17)
        .map(bytes::Bytes::copy_from_slice)
        .collect();
    reply
}

fn bypass(scrape: &str) -> Option<f64> {
    crate::support::metric(
        scrape,
        "a2a_agent_card_bypass_total",
        &[("upstream", crate::support::NAME)],
    )
}

/// Issue 34: a compressed card (any framework's gzip middleware, to any
/// httpx client, which sends `Accept-Encoding: gzip`) passed with the
/// agent's own URLs. Now it is undone, rewritten and sent uncompressed:
/// the text is the agent's with only the URLs moved, `Content-Encoding`
/// gone, `Content-Length` right, `Vary` kept; nothing counted as bypassing.
#[tokio::test]
async fn compressed_cards_come_back_rewritten_and_decodable() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, REWRITE).await;
    let card = card_v1(&up.addr.to_string());
    let want = card
        .replace(
            &format!("\"http://{}/a2a", up.addr),
            &format!("\"{PUBLIC}/a2a"),
        )
        .replace(
            &format!("\"http://{}/rest", up.addr),
            &format!("\"{PUBLIC}/rest"),
        );
    for coding in ["gzip", "br", "deflate", "x-gzip"] {
        let packed = if coding == "x-gzip" { "gzip" } else { coding };
        let mut reply = coded(card.as_bytes(), packed).header("vary", "Accept-Encoding");
        reply.headers[0].1 = coding.to_owned();
        up.push(reply);
        let (status, head, got) = p
            .request(
                "GET",
                "/.well-known/agent-card.json",
                &[("accept-encoding", "gzip, deflate, br")],
                "",
            )
            .await;
        assert_eq!(status, 200, "{coding}");
        assert_eq!(String::from_utf8_lossy(&got), want, "{coding}");
        assert!(head.get("content-encoding").is_none(), "{coding}: {head:?}");
        assert_eq!(
            head.get("content-length")
                .map(|v| v.to_str().unwrap().to_owned()),
            Some(got.len().to_string()),
            "{coding}"
        );
        assert_eq!(head.get("vary").unwrap(), "Accept-Encoding", "{coding}");
        assert_eq!(head.get("content-type").unwrap(), "application/json");
    }
    // A compressed card that names the proxy already passes as it came.
    let ours = card_v1("proxy.example:8080");
    let packed = super::paths::gzip(ours.as_bytes());
    up.push(coded(ours.as_bytes(), "gzip"));
    let (_, head, got) = p
        .request(
            "GET",
            "/.well-known/agent-card.json",
            &[("accept-encoding", "gzip")],
            "",
        )
        .await;
    assert_eq!(got, packed);
    assert_eq!(head.get("content-encoding").unwrap(), "gzip");
    assert_eq!(bypass(&p.metrics().await), Some(0.0));
}

/// Issue 34: with rewriting on, the bypass check was off, so a card that
/// left unrewritten went unseen. Every card the proxy passes as the agent
/// sent it, its URLs unmoved, is now counted in
/// `a2a_agent_card_bypass_total` (and logged): a coding the proxy does not
/// undo, broken compressed bytes, a card over `max_card_rewrite_bytes` on
/// the wire (declared or not) or once undone, and a compressed card to a
/// caller refusing an uncompressed answer. Each passes byte-identical.
/// Look-alikes not counted: an HTML page at the card's path, a 404, a
/// card within the bound. With validation off, the same.
#[tokio::test]
async fn cards_passed_unrewritten_are_counted_as_bypassing() {
    let up = Upstream::start().await;
    let p = Proxy::start(
        up.addr,
        &format!("{REWRITE}[proxy]\nmax_card_rewrite_bytes = \"4KiB\"\n"),
    )
    .await;
    let card = card_v1(&up.addr.to_string());
    let large = card.replace(
        "\"skills\": []",
        &format!("\"skills\": [], \"pad\": \"{}\"", "x".repeat(8 << 10)),
    );
    let wire = |reply: &Reply| reply.bytes();
    let mut broken = super::paths::gzip(card.as_bytes());
    broken.truncate(broken.len() / 2);
    let mut corrupt = coded(b"", "gzip");
    corrupt.chunks = vec![bytes::Bytes::from(broken)];
    let declared = {
        let r = Reply::json(200, &large);
        let n = r.bytes().len().to_string();
        r.header("content-length", &n)
    };
    let passing: Vec<(&str, Reply, &str)> = vec![
        ("zstd", coded(card.as_bytes(), "zstd"), "gzip, zstd"),
        ("broken gzip", corrupt, "gzip"),
        ("over the bound, chunked", Reply::json(200, &large), "gzip"),
        ("over the bound, declared", declared, "gzip"),
        (
            "over the bound undone",
            coded(large.as_bytes(), "gzip"),
            "gzip",
        ),
        (
            "refuses identity",
            coded(card.as_bytes(), "br"),
            "br, identity;q=0",
        ),
    ];
    for (n, (what, reply, accept)) in passing.into_iter().enumerate() {
        let sent = wire(&reply);
        up.push(reply);
        let (status, _, got) = p
            .request(
                "GET",
                "/.well-known/agent-card.json",
                &[("accept-encoding", accept)],
                "",
            )
            .await;
        assert_eq!(status, 200, "{what}");
        assert!(got == sent, "{what}: passed as the agent sent it");
        assert_eq!(bypass(&p.metrics().await), Some((n + 1) as f64), "{what}");
    }
    let html = "<!doctype html><title>app</title>";
    let mut page = Reply::json(200, html);
    page.content_type = "text/html".into();
    for reply in [page, Reply::json(404, "{}"), Reply::json(200, &card)] {
        up.push(reply);
        p.request("GET", "/.well-known/agent-card.json", &[], "")
            .await;
    }
    assert_eq!(bypass(&p.metrics().await), Some(6.0), "look-alikes");

    // Rewriting without validation counts them too.
    let plain = Proxy::start(up.addr, &format!("validate = false\n{REWRITE}")).await;
    up.push(coded(card.as_bytes(), "zstd"));
    plain
        .request("GET", "/.well-known/agent-card.json", &[], "")
        .await;
    assert_eq!(bypass(&plain.metrics().await), Some(1.0), "validation off");
}

/// Issue 34: the rewrite read a map that keeps the last of a repeated key,
/// so a card repeating `url`, `supportedInterfaces` or
/// `additionalInterfaces` left the agent's address in the bytes sent (and
/// parsers that keep the first duplicate followed it). Every occurrence
/// moves now, escaped keys too.
#[tokio::test]
async fn a_card_repeating_keys_keeps_no_internal_url() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, REWRITE).await;
    let a = up.addr.to_string();
    let card = format!(
        r#"{{"name": "Echo", "url": "http://{a}/first", "url": "http://{a}/second",
 "supportedInterfaces": [{{"url": "http://{a}/a", "protocolBinding": "JSONRPC", "url": "http://{a}/b"}}],
 "supportedInterfaces": [{{"url": "http://{a}/c", "protocolBinding": "JSONRPC"}}],
 "additionalInterfaces": [{{"url": "http://{a}/d", "transport": "JSONRPC"}}],
 "additionalInterfaces": [{{"u\u0072l": "http://{a}/e", "transport": "JSONRPC"}}]}}"#
    );
    let (got, _) = get_card(&up, &p, "/.well-known/agent-card.json", &card).await;
    let got = String::from_utf8(got).unwrap();
    assert!(!got.contains(&a), "no internal URL left: {got}");
    for tail in ["first", "second", "a", "b", "c", "d", "e"] {
        assert!(
            got.contains(&format!("\"{PUBLIC}/{tail}\"")),
            "{tail}: {got}"
        );
    }
    assert_eq!(bypass(&p.metrics().await), Some(0.0));
}

/// Spec 1.0.2: a gRPC interface's url is `host:port`. A card whose gRPC
/// interface names the agent's own `host:port` sends clients past the
/// proxy and is counted; it is a valid card (no `invalid_agent_card`).
/// Look-alike: the same card naming the proxy's `host:port`.
#[tokio::test]
async fn a_grpc_interface_at_host_port_is_read_as_its_authority() {
    use crate::support::{metric, NAME};
    let bypass = |s: &str| metric(s, "a2a_agent_card_bypass_total", &[("upstream", NAME)]);
    let grpc_card = |at: &str| {
        format!(
            r#"{{"name":"Echo","version":"1","capabilities":{{"streaming":true}},"supportedInterfaces":[{{"url":"{at}","protocolBinding":"GRPC","protocolVersion":"1.0"}}]}}"#
        )
    };
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    let path = "/.well-known/agent-card.json";
    get_card(&up, &p, path, &grpc_card(&p.listen.to_string())).await;
    get_card(&up, &p, path, &grpc_card(&up.addr.to_string())).await;
    p.wait_metrics("the bypassing card counted", |s| bypass(s) == Some(1.0))
        .await;
    let recs = crate::support::a2a::settle(&up, &p).await;
    assert!(recs.is_empty(), "no finding on either card: {recs:#?}");
    assert_eq!(
        bypass(&p.metrics().await),
        Some(1.0),
        "the look-alike is not counted"
    );
}

/// Behind routes, a route's cards move to `public_url` + its prefix (paths
/// and tenants kept), the proxy strips the prefix on the way back in; a
/// route that does not rewrite passes its card as sent, and its bypassing
/// card is counted under its own name.
#[tokio::test]
async fn a_route_card_moves_to_the_public_url_and_its_prefix() {
    let (a, b) = (Upstream::start().await, Upstream::start().await);
    let text = format!(
        "public_url = \"{PUBLIC}\"\n\
         [[route]]\nname = \"alpha\"\nupstream = \"http://{}\"\npath_prefix = \"/agents/alpha\"\n\
         rewrite_agent_card = true\n\
         [[route]]\nname = \"beta\"\nupstream = \"http://{}\"\npath_prefix = \"/agents/beta\"\n",
        a.addr, b.addr
    );
    let p = Proxy::start_config(&text, None).await;
    let card = card_v1(&a.addr.to_string());
    let (got, _) = get_card(&a, &p, "/agents/alpha/.well-known/agent-card.json", &card).await;
    let want = card
        .replace(
            &format!("\"http://{}/a2a/jsonrpc\"", a.addr),
            &format!("\"{PUBLIC}/agents/alpha/a2a/jsonrpc\""),
        )
        .replace(
            &format!("\"http://{}/rest/v1?x=1\"", a.addr),
            &format!("\"{PUBLIC}/agents/alpha/rest/v1?x=1\""),
        );
    assert_ne!(want, card);
    assert_eq!(String::from_utf8_lossy(&got), want);
    assert!(want.contains(r#""tenant":"acme""#));
    assert_eq!(a.request_targets(), ["/.well-known/agent-card.json"]);

    let other = card_v1(&b.addr.to_string());
    let (got, _) = get_card(&b, &p, "/agents/beta/.well-known/agent-card.json", &other).await;
    assert_eq!(
        String::from_utf8_lossy(&got),
        other,
        "beta does not rewrite"
    );
    let bypass = |text: &str, route| {
        crate::support::metric(text, "a2a_agent_card_bypass_total", &[("upstream", route)])
    };
    let counted = crate::support::within("beta's bypassing card counted", async {
        loop {
            let text = crate::support::scrape(&p.app).await;
            if bypass(&text, "beta") == Some(1.0) {
                return text;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(bypass(&counted, "alpha"), Some(0.0));
    p.stop().await;
}

/// A route matched by host, with its own `public_url`: its cards send
/// clients back to that name (no prefix to add).
#[tokio::test]
async fn a_host_route_card_moves_to_its_own_public_url() {
    let (a, b) = (Upstream::start().await, Upstream::start().await);
    let text = format!(
        "public_url = \"{PUBLIC}\"\nrewrite_agent_card = true\n\
         [[route]]\nname = \"hosted\"\nupstream = \"http://{}\"\nhost = \"agent.example\"\n\
         public_url = \"https://agent.example\"\n\
         [[route]]\nname = \"rest\"\nupstream = \"http://{}\"\npath_prefix = \"/\"\n",
        a.addr, b.addr
    );
    let p = Proxy::start_config(&text, None).await;
    let card = card_v1(&a.addr.to_string());
    a.push(Reply::json(200, &card));
    let (status, _, got) = p
        .request(
            "GET",
            "/.well-known/agent-card.json",
            &[("host", "agent.example:8080")],
            "",
        )
        .await;
    assert_eq!(status, 200);
    let want = card
        .replace(
            &format!("\"http://{}/a2a/jsonrpc\"", a.addr),
            "\"https://agent.example/a2a/jsonrpc\"",
        )
        .replace(
            &format!("\"http://{}/rest/v1?x=1\"", a.addr),
            "\"https://agent.example/rest/v1?x=1\"",
        );
    assert_ne!(want, card);
    assert_eq!(String::from_utf8_lossy(&got), want);
    // Any other host: the catch-all, its cards to the top-level public_url.
    let other = card_v1(&b.addr.to_string());
    let (got, _) = get_card(&b, &p, "/.well-known/agent-card.json", &other).await;
    assert!(String::from_utf8_lossy(&got).contains(&format!("\"{PUBLIC}/a2a/jsonrpc\"")));
    p.stop().await;
}
