//! Routes in the real binary: SIGHUP re-reads them (a route added serves,
//! a broken config leaves the old table serving, both counted), and
//! reloads under traffic fail no request.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http::Response;

use crate::support::process::{Launch, Process};
use crate::support::{full, metric, request_to, upstream, Proxied, Reply, Upstream};

fn route(name: &str, up: std::net::SocketAddr, prefix: &str) -> String {
    format!(
        "[[route]]\nname = \"{name}\"\nupstream = \"http://{up}\"\npath_prefix = \"{prefix}\"\n"
    )
}

fn start(config: String) -> Process {
    Process::launch(
        "127.0.0.1:1".parse().expect("addr"),
        "",
        Launch {
            config: Some(config),
            ..Launch::default()
        },
    )
}

/// Waits (bounded) for `a2a_config_reloads_total{result}` to reach `n`.
async fn reloads(p: &Process, result: &str, n: f64) -> String {
    p.wait_metrics(&format!("{n} reloads {result}"), |m| {
        metric(m, "a2a_config_reloads_total", &[("result", result)]) == Some(n)
    })
    .await
}

#[tokio::test]
async fn sighup_adds_a_route_and_a_broken_config_keeps_the_old_table() {
    let (a, b) = (Upstream::start().await, Upstream::start().await);
    let p = start(route("a", a.addr, "/a"));
    let ok = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    let (status, body) = p.send("POST", "/b/x", &[], "{}").await;
    assert_eq!(status, 404, "{}", String::from_utf8_lossy(&body));

    p.rewrite_config(&format!(
        "{}{}",
        route("a", a.addr, "/a"),
        route("b", b.addr, "/b")
    ));
    p.signal("HUP");
    reloads(&p, "ok", 1.0).await;
    b.push(Reply::json(200, ok));
    let (status, _) = p.send("POST", "/b/x", &[], "{}").await;
    assert_eq!(status, 200, "the route added by the reload serves");
    assert_eq!(b.request_targets(), ["/x"]);
    p.wait_metrics("route b probed", |m| {
        metric(m, "a2a_upstream_up", &[("upstream", "b")]) == Some(1.0)
    })
    .await;

    // Two routes with one match: refused, the table in use kept.
    p.rewrite_config(&format!(
        "{}{}",
        route("a", a.addr, "/a"),
        route("c", b.addr, "/a")
    ));
    p.signal("HUP");
    reloads(&p, "error", 1.0).await;
    for (up, path) in [(&a, "/a/y"), (&b, "/b/y")] {
        up.push(Reply::json(200, ok));
        let (status, _) = p.send("POST", path, &[], "{}").await;
        assert_eq!(status, 200, "{path} still served");
    }
    // Not TOML at all: the same.
    p.rewrite_config("[[route]\n");
    p.signal("HUP");
    reloads(&p, "error", 2.0).await;
    b.push(Reply::json(200, ok));
    assert_eq!(p.send("POST", "/b/z", &[], "{}").await.0, 200);
    let log = p.stderr();
    assert!(log.contains("same match as route `a`"), "{log}");
    assert!(log.contains("the routes in use are kept"), "{log}");
}

/// Twenty reloads (routes added and removed, severities changed) while
/// callers keep sending: every request answered by its agent.
#[tokio::test]
async fn twenty_reloads_under_traffic_fail_no_request() {
    let agent = upstream(|_req| async { Response::new(full("ok")) }).await;
    let p = start(route("a", agent, "/a"));
    let (stop, sent, failed) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let (stop, sent, failed, listen) =
                (stop.clone(), sent.clone(), failed.clone(), p.listen);
            tokio::spawn(async move {
                // Bounded: at most 20 000 requests per caller.
                for _ in 0..20_000 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let (status, _, body) = request_to(listen, "POST", "/a/x", &[], "{}").await;
                    sent.fetch_add(1, Ordering::Relaxed);
                    if status != 200 || body != b"ok" {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for i in 1..=20u32 {
        let text = if i % 2 == 0 {
            route("a", agent, "/a")
        } else {
            format!(
                "{}[route.severity]\nmalformed_event = \"warning\"\n{}",
                route("a", agent, "/a"),
                route(&format!("b{i}"), agent, "/b")
            )
        };
        p.rewrite_config(&text);
        p.signal("HUP");
        reloads(&p, "ok", f64::from(i)).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for c in callers {
        c.await.expect("caller");
    }
    let (sent, failed) = (sent.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    assert!(sent > 20, "traffic ran through the reloads: {sent}");
    eprintln!("{sent} requests through 20 reloads, {failed} failed");
    assert_eq!(failed, 0, "{failed} of {sent} requests failed");
    let m = p.metrics().await;
    assert_eq!(
        metric(&m, "a2a_config_reloads_total", &[("result", "error")]),
        Some(0.0)
    );
}
