//! The metrics an SRE expects beside the catalogue's: the build, whether
//! the upstream is up, open connections, the standard process collector,
//! and refused exchanges counted under their A2A method.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::a2a::*;
use crate::support::{metric, tap::Proxy, total, Proxied, Upstream, NAME};
use serde_json::json;

#[tokio::test]
async fn build_info_upstream_up_and_the_process_collector() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    let m = p
        .wait_metrics("the upstream up", |m| {
            metric(m, "a2a_upstream_up", &[("upstream", NAME)]) == Some(1.0)
        })
        .await;
    let info: Vec<_> = crate::support::metrics::series(&m)
        .into_iter()
        .filter(|s| s.name == "a2a_build_info")
        .collect();
    let [info] = &info[..] else {
        panic!("one build info series: {m}")
    };
    assert_eq!(info.value, 1.0, "{m}");
    assert_eq!(
        info.labels.get("version").map(String::as_str),
        Some(env!("CARGO_PKG_VERSION"))
    );
    assert!(
        info.labels.get("commit").is_some_and(|c| !c.is_empty()),
        "a commit is named: {info:?}"
    );
    for name in [
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
    ] {
        assert!(
            metric(&m, name, &[]).is_some_and(|v| v > 0.0),
            "{name}: {m}"
        );
    }
    // Whole seconds: 0 this early.
    assert!(
        metric(&m, "process_cpu_seconds_total", &[]).is_some(),
        "{m}"
    );
}

#[tokio::test]
async fn an_unreachable_upstream_is_down_and_its_refusals_keep_their_method() {
    let (_refusing, closed) = crate::support::ports::refused();
    let p = Proxy::start(closed, "").await;
    let m = p.metrics().await;
    assert_eq!(
        metric(&m, "a2a_upstream_up", &[("upstream", NAME)]),
        Some(0.0),
        "{m}"
    );
    let (status, _) = p
        .send(
            "POST",
            "/",
            &[],
            &request(json!(1), "SendMessage", new_message()),
        )
        .await;
    assert_eq!(status, 502);
    let m = p
        .wait_metrics("the refusal counted", |m| {
            total(
                m,
                "a2a_requests_total",
                &[("method", "SendMessage"), ("code", "error")],
            ) == Some(1.0)
        })
        .await;
    assert_eq!(
        total(&m, "a2a_requests_total", &[("method", "other")]),
        None,
        "not counted as other: {m}"
    );
}

#[tokio::test]
async fn connections_active_counts_open_caller_connections() {
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    let active = |m: &str| metric(m, "a2a_connections_active", &[]);
    assert_eq!(active(&p.metrics().await), Some(0.0));
    let mut conns = Vec::new();
    for _ in 0..3 {
        let mut c = tokio::net::TcpStream::connect(p.listen())
            .await
            .expect("connect");
        // A request's head makes the connection served (not only queued).
        c.write_all(b"GET /x HTTP/1.1\r\nhost: a\r\n\r\n")
            .await
            .expect("write");
        conns.push(c);
    }
    p.wait_metrics("3 connections", |m| active(m) == Some(3.0))
        .await;
    for mut c in conns {
        let mut buf = [0u8; 256];
        let _ = tokio::time::timeout(Duration::from_secs(2), c.read(&mut buf)).await;
    }
    p.wait_metrics("0 connections", |m| active(m) == Some(0.0))
        .await;
}
