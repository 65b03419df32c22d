//! HTTP/2: h2c callers on the same port as HTTP/1.1, an h2c upstream, and
//! gRPC's needs: HTTP/2 upstream whatever the config, `te: trailers`,
//! trailers both ways, a trailers-only answer kept one HEADERS frame.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, Version};
use http_body::Body as _;
use http_body_util::BodyExt;

use crate::support::*;

async fn echo_upstream() -> std::net::SocketAddr {
    upstream(|req| async move {
        let v = format!("{:?} {}", req.version(), req.uri().path());
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(full(format!("data: {v}\n\n")))
            .expect("response")
    })
    .await
}

#[tokio::test]
async fn h2c_and_http1_callers_share_the_port() {
    let tap = proxy(config(echo_upstream().await)).await;
    let url = format!("http://{}/h2", tap.listen_addr());
    let resp = get_head(&h2_client(), &url).await;
    assert_eq!(resp.version(), Version::HTTP_2);
    assert_eq!(resp.status(), StatusCode::OK);
    let req = Request::get(&url)
        .body(full(Bytes::new()))
        .expect("request");
    let (head, body) = send(&h2_client(), req).await;
    assert_eq!(head.version, Version::HTTP_2);
    // The upstream leg is HTTP/1.1 by default.
    assert_eq!(&body[..], b"data: HTTP/1.1 /h2\n\n");
    let (head, body) = get(tap.listen_addr(), "/h1").await;
    assert_eq!(head.version, Version::HTTP_11);
    assert_eq!(&body[..], b"data: HTTP/1.1 /h1\n\n");
}

#[tokio::test]
async fn h2c_upstream_when_configured() {
    let mut c = config(echo_upstream().await);
    c.proxy.upstream_http2 = true;
    let tap = proxy(c).await;
    let (head, body) = get(tap.listen_addr(), "/up").await;
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(&body[..], b"data: HTTP/2.0 /up\n\n");
}

/// A body of `data` then `trailers`.
fn with_trailers(data: &'static [u8], trailers: HeaderMap) -> Body {
    let (mut tx, body) = channel();
    tokio::spawn(async move {
        let _ = tx.send_data(Bytes::from_static(data)).await;
        let _ = tx.send_trailers(trailers).await;
    });
    body
}

fn grpc_request(addr: std::net::SocketAddr, path: &str, body: Body) -> Request<Body> {
    Request::post(format!("http://{addr}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("x-first", "1")
        .header("grpc-timeout", "5S")
        .body(body)
        .expect("request")
}

/// A gRPC call goes upstream over HTTP/2 (the default upstream leg is
/// HTTP/1.1) with `te: trailers`; trailers pass both ways; the caller's
/// header order and the upstream's reach the other side unchanged, and no
/// `date` is added.
#[tokio::test]
async fn grpc_goes_over_h2_with_te_trailers_and_trailers_both_ways() {
    let up = upstream(|req| async move {
        let seen = format!(
            "{:?} te={:?} order={:?}",
            req.version(),
            req.headers().get("te"),
            req.headers().keys().map(|k| k.as_str()).collect::<Vec<_>>(),
        );
        let collected = req.into_body().collect().await.expect("request body");
        let got_trailers = collected.trailers().cloned().unwrap_or_default();
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from_static("0"));
        trailers.insert("x-seen-trailer", got_trailers["x-req-trailer"].clone());
        let body = Box::leak(format!("{seen} body={:?}", collected.to_bytes()).into_boxed_str());
        Response::builder()
            .header("content-type", "application/grpc")
            .header("x-z", "z")
            .header("x-a", "a")
            .body(with_trailers(body.as_bytes(), trailers))
            .expect("response")
    })
    .await;
    let tap = proxy(config(up)).await;
    let mut req_trailers = HeaderMap::new();
    req_trailers.insert("x-req-trailer", HeaderValue::from_static("t1"));
    let req = grpc_request(
        tap.listen_addr(),
        "/svc/Call",
        with_trailers(b"\0\0\0\0\x01z", req_trailers),
    );
    let resp = within("grpc head", h2_client().request(req))
        .await
        .expect("response");
    let (head, body) = resp.into_parts();
    let names: Vec<&str> = head.headers.keys().map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        ["content-type", "x-z", "x-a"],
        "no date added, order kept"
    );
    let collected = within("grpc body", body.collect()).await.expect("body");
    let trailers = collected
        .trailers()
        .cloned()
        .expect("trailers reach the caller");
    assert_eq!(trailers["grpc-status"], "0");
    assert_eq!(
        trailers["x-seen-trailer"], "t1",
        "request trailers reach the upstream"
    );
    let text = String::from_utf8(collected.to_bytes().to_vec()).expect("utf-8");
    assert_eq!(
        text,
        "HTTP/2.0 te=Some(\"trailers\") order=[\"content-type\", \"te\", \"x-first\", \"grpc-timeout\"] body=b\"\\0\\0\\0\\0\\x01z\""
    );
}

/// A trailers-only answer (status in the one HEADERS frame, END_STREAM on
/// it) reaches the caller the same way: no DATA frame, no `date`.
#[tokio::test]
async fn grpc_trailers_only_answer_stays_one_headers_frame() {
    let up = upstream(|_req| async move {
        Response::builder()
            .header("content-type", "application/grpc")
            .header("grpc-status", "5")
            .header("grpc-message", "not found")
            .body(full(Bytes::new()))
            .expect("response")
    })
    .await;
    let tap = proxy(config(up)).await;
    let req = grpc_request(
        tap.listen_addr(),
        "/svc/Get",
        full(Bytes::from_static(b"\0\0\0\0\0")),
    );
    let resp = within("grpc head", h2_client().request(req))
        .await
        .expect("response");
    assert!(
        resp.body().is_end_stream(),
        "END_STREAM came on the HEADERS frame"
    );
    let names: Vec<&str> = resp.headers().keys().map(|k| k.as_str()).collect();
    assert_eq!(names, ["content-type", "grpc-status", "grpc-message"]);
}

/// HTTP/1.1 answers too go out with the upstream's headers only: no `date`
/// added where it sent none, its own kept where it sent one.
#[tokio::test]
async fn answers_get_no_date_of_the_proxys() {
    let up = upstream(|req| async move {
        let mut resp = Response::builder().header("x-b", "b").header("x-a", "a");
        if req.uri().path() == "/dated" {
            resp = resp.header("date", "Tue, 01 Dec 2026 00:00:00 GMT");
        }
        resp.body(full("ok")).expect("response")
    })
    .await;
    let tap = proxy(config(up)).await;
    for path in ["/plain", "/dated"] {
        for client in [client(), h2_client()] {
            let req = Request::get(format!("http://{}{path}", tap.listen_addr()))
                .body(full(Bytes::new()))
                .expect("request");
            let (head, _) = send(&client, req).await;
            let date = head
                .headers
                .get("date")
                .map(|v| v.to_str().unwrap().to_owned());
            let want = (path == "/dated").then(|| "Tue, 01 Dec 2026 00:00:00 GMT".to_owned());
            assert_eq!(date, want, "{path} {:?}", head.version);
            assert_eq!(head.headers["x-b"], "b");
        }
    }
}
