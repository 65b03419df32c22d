//! HTTP/2: h2c callers on the same port as HTTP/1.1, and an h2c upstream.

mod support;

use bytes::Bytes;
use http::{Request, Response, StatusCode, Version};

use support::*;

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
    let req = Request::get(&url)
        .body(full(Bytes::new()))
        .expect("request");
    let resp = within("h2 head", h2_client().request(req))
        .await
        .expect("h2 response");
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
