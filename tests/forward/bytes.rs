//! Bodies, statuses and headers pass byte for byte, whatever the chunking.

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use proptest::prelude::*;

use crate::support::*;

const JSON: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"id":"tsk_7","status":{"state":"TASK_STATE_COMPLETED"}}}"#;

fn sse() -> Bytes {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/stream.sse"
    ))
    .expect("fixture");
    Bytes::from(text)
}

fn binary() -> Bytes {
    (0..70_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

#[tokio::test]
async fn json_sse_and_binary_bodies_are_byte_identical() {
    let up = upstream(|req| async move {
        let (status, ctype, body) = match req.uri().path() {
            "/json" => (200, "application/json", Bytes::from_static(JSON.as_bytes())),
            "/sse" => (200, "text/event-stream", sse()),
            "/bin" => (200, "application/octet-stream", binary()),
            _ => (418, "text/plain", Bytes::from_static(b"teapot")),
        };
        Response::builder()
            .status(status)
            .header("content-type", ctype)
            .header("x-custom", "kept")
            .header("connection", "x-hop")
            .header("x-hop", "dropped")
            .header("keep-alive", "timeout=5")
            .body(full(body))
            .expect("response")
    })
    .await;
    let tap = proxy(config(up)).await;
    let addr = tap.listen_addr();
    for (path, want) in [
        ("/json", Bytes::from_static(JSON.as_bytes())),
        ("/sse", sse()),
        ("/bin", binary()),
    ] {
        let (head, body) = get(addr, path).await;
        assert_eq!(head.status, StatusCode::OK, "{path}");
        assert_eq!(body, want, "{path}");
        assert_eq!(head.headers["x-custom"], "kept");
        assert!(head.headers.get("x-hop").is_none());
        assert!(head.headers.get("keep-alive").is_none());
    }
    let (head, body) = get(addr, "/other?q=1").await;
    assert_eq!(head.status, StatusCode::IM_A_TEAPOT);
    assert_eq!(&body[..], b"teapot");
    let text = scrape(&tap).await;
    let ok = [("upstream", "test"), ("code", "2xx"), ("method", "other")];
    assert_eq!(total(&text, "a2a_requests_total", &ok), Some(3.0));
    assert_eq!(
        total(&text, "a2a_requests_total", &[("code", "4xx")]),
        Some(1.0)
    );
}

#[tokio::test]
async fn request_method_path_query_headers_and_body_reach_the_upstream() {
    let up = upstream(|req| async move {
        let (head, body) = req.into_parts();
        let body = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        let echo = format!(
            "{} {} te={:?} conn={:?} custom={:?} host={:?} xff={:?} len={}",
            head.method,
            head.uri,
            head.headers.get("te"),
            head.headers.get("x-conn-named"),
            head.headers.get("x-custom").and_then(|v| v.to_str().ok()),
            head.headers.get("host").and_then(|v| v.to_str().ok()),
            head.headers.get("x-forwarded-for"),
            body.len()
        );
        let mut out = echo.into_bytes();
        out.push(b'\n');
        out.extend_from_slice(&body);
        Response::new(full(out))
    })
    .await;
    let tap = proxy(config(up)).await;
    let payload = binary();
    let req = Request::post(format!("http://{}/a2a/v1?x=1&y=%20", tap.listen_addr()))
        // Of TE only `trailers` passes (gRPC needs it); the rest is hop-by-hop.
        .header("te", "deflate, trailers")
        .header("connection", "x-conn-named")
        .header("x-conn-named", "1")
        .header("x-custom", "yes")
        .body(full(payload.clone()))
        .expect("request");
    let (head, body) = send(&client(), req).await;
    assert_eq!(head.status, StatusCode::OK);
    let split = body.iter().position(|b| *b == b'\n').expect("echo line");
    let line = String::from_utf8_lossy(&body[..split]).to_string();
    assert_eq!(
        line,
        format!(
            "POST /a2a/v1?x=1&y=%20 te=Some(\"trailers\") conn=None custom=Some(\"yes\") host=Some(\"{up}\") xff=None len={}",
            payload.len()
        )
    );
    assert_eq!(&body[split + 1..], &payload[..]);
}

/// A raw upstream that answers every request with `body` (its length
/// declared), written in the given pieces with a pause after each.
async fn chunking_upstream(body: Vec<u8>, cuts: Vec<usize>) -> std::net::SocketAddr {
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    let head = answer.len();
    answer.extend_from_slice(&body);
    // The head goes alone first, as before: a cut at 0 of the body.
    let cuts = std::iter::once(head)
        .chain(cuts.into_iter().map(|c| c + head))
        .collect();
    raw_upstream(answer, cuts).await
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The law: the caller receives exactly the upstream's bytes, whatever its chunking.
    #[test]
    fn caller_gets_the_upstream_bytes_whatever_the_chunking(
        body in proptest::collection::vec(any::<u8>(), 0..6000),
        mut cuts in proptest::collection::vec(0usize..6000, 0..12),
    ) {
        cuts.sort_unstable();
        let rt = case_runtime();
        let got = rt.block_on(async {
            let up = chunking_upstream(body.clone(), cuts).await;
            let tap = proxy(config(up)).await;
            let (head, got) = get(tap.listen_addr(), "/stream").await;
            assert_eq!(head.status, StatusCode::OK);
            got
        });
        prop_assert_eq!(&got[..], &body[..]);
    }
}
