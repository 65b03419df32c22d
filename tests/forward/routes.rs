//! Each route's own upstream client: its CA file, HTTP/2 or not, its
//! header timeout; readiness and `a2a_upstream_up` per route.

use http::{Response, StatusCode};

use crate::support::ports::refused;
use crate::support::*;
use crate::tls::{chain, tls_upstream};

/// Starts the proxy (validation off) with the `[[route]]` tables `routes`.
async fn routed(routes: &str) -> a2a_tap::app::App {
    let text = format!(
        "listen = \"127.0.0.1:0\"\nadmin = \"127.0.0.1:0\"\nvalidate = false\n\
         [proxy]\ndrain_delay = \"0s\"\n{routes}"
    );
    let config: a2a_tap::config::Config = text.parse().expect("config");
    proxy(config).await
}

/// A file holding `pem`, kept while the returned handle lives.
fn ca_file(dir: &tempfile::TempDir, name: &str, pem: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, pem).expect("write ca");
    path.display().to_string()
}

#[tokio::test]
async fn each_route_trusts_its_own_ca_file() {
    let (one, two) = (chain(&["127.0.0.1"]), chain(&["127.0.0.1"]));
    let up_one = tls_upstream(one.leaf, one.leaf_key).await;
    let up_two = tls_upstream(two.leaf, two.leaf_key).await;
    let dir = tempfile::tempdir().expect("dir");
    let (ca_one, ca_two) = (
        ca_file(&dir, "one.pem", &one.ca_pem),
        ca_file(&dir, "two.pem", &two.ca_pem),
    );
    let tap = routed(&format!(
        "[[route]]\nname = \"one\"\nupstream = \"https://{up_one}\"\npath_prefix = \"/one\"\n\
         tls_ca_file = \"{ca_one}\"\n\
         [[route]]\nname = \"two\"\nupstream = \"https://{up_two}\"\npath_prefix = \"/two\"\n\
         tls_ca_file = \"{ca_two}\"\n\
         [[route]]\nname = \"wrong\"\nupstream = \"https://{up_two}\"\npath_prefix = \"/wrong\"\n\
         tls_ca_file = \"{ca_one}\"\n"
    ))
    .await;
    for path in ["/one/x", "/two/x"] {
        let (head, body) = get(tap.listen_addr(), path).await;
        assert_eq!(
            (head.status, &body[..]),
            (StatusCode::OK, &b"ok"[..]),
            "{path}"
        );
    }
    let (head, body) = get(tap.listen_addr(), "/wrong/x").await;
    assert_eq!(head.status, StatusCode::BAD_GATEWAY);
    assert!(
        String::from_utf8_lossy(&body).contains("certificate"),
        "{body:?}"
    );
    let m = scrape(&tap).await;
    let tls = |route| {
        metric(
            &m,
            "a2a_upstream_errors_total",
            &[("upstream", route), ("reason", "tls")],
        )
    };
    assert_eq!(
        (tls("one"), tls("two"), tls("wrong")),
        (Some(0.0), Some(0.0), Some(1.0))
    );
    tap.shutdown().await;
}

#[tokio::test]
async fn each_route_speaks_its_own_http_version_and_keeps_its_timeout() {
    let up = upstream(|req| async move {
        if req.uri().path() == "/slow" {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        }
        Response::new(full(format!("{:?}", req.version())))
    })
    .await;
    let tap = routed(&format!(
        "[[route]]\nname = \"h2\"\nupstream = \"http://{up}\"\npath_prefix = \"/h2\"\n\
         upstream_http2 = true\nupstream_header_timeout = \"200ms\"\n\
         [[route]]\nname = \"h1\"\nupstream = \"http://{up}\"\npath_prefix = \"/h1\"\n"
    ))
    .await;
    let (_, body) = get(tap.listen_addr(), "/h2/x").await;
    assert_eq!(&body[..], b"HTTP/2.0");
    let (_, body) = get(tap.listen_addr(), "/h1/x").await;
    assert_eq!(&body[..], b"HTTP/1.1");
    // h2's header timeout is its own (the default is 30 s).
    let started = std::time::Instant::now();
    let (head, _) = get(tap.listen_addr(), "/h2/slow").await;
    assert_eq!(head.status, StatusCode::GATEWAY_TIMEOUT);
    assert!(started.elapsed() < std::time::Duration::from_secs(4));
    tap.shutdown().await;
}

#[tokio::test]
async fn readiness_wants_every_route_up_and_reports_each() {
    let up = upstream(|_req| async { Response::new(full("ok")) }).await;
    let (_refusing, down) = refused();
    let tap = routed(&format!(
        "[[route]]\nname = \"up\"\nupstream = \"http://{up}\"\npath_prefix = \"/up\"\n\
         [[route]]\nname = \"down\"\nupstream = \"http://{down}\"\npath_prefix = \"/down\"\n"
    ))
    .await;
    let (ready, body) = get(tap.admin_addr(), "/readyz").await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE, "{body:?}");
    let m = scrape(&tap).await;
    let up_gauge = |route| metric(&m, "a2a_upstream_up", &[("upstream", route)]);
    assert_eq!((up_gauge("up"), up_gauge("down")), (Some(1.0), Some(0.0)));
    // The route that is up serves all the same.
    let (head, _) = get(tap.listen_addr(), "/up/x").await;
    assert_eq!(head.status, StatusCode::OK);
    tap.shutdown().await;
}
