//! Many streams at once: 1,000 concurrent SSE streams open through the proxy.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use tokio::sync::{mpsc, watch};

use crate::support::*;

const STREAMS: usize = 1000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_streams() {
    let (release, release_rx) = watch::channel(false);
    let up = upstream(move |_req| {
        let mut release = release_rx.clone();
        async move {
            let (mut sender, body) = channel();
            tokio::spawn(async move {
                if sender
                    .send_data(Bytes::from_static(b"data: open\n\n"))
                    .await
                    .is_err()
                {
                    return;
                }
                let _ = release.wait_for(|r| *r).await.is_ok();
                let _ = sender
                    .send_data(Bytes::from_static(b"data: done\n\n"))
                    .await;
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .expect("response")
        }
    })
    .await;
    let mut c = config(up);
    c.proxy.max_connections = 2 * STREAMS;
    let tap = proxy(c).await;
    let url = format!("http://{}/stream", tap.listen_addr());
    let client = client();
    let (opened_tx, mut opened) = mpsc::channel(STREAMS);
    let mut tasks = Vec::with_capacity(STREAMS);
    for _ in 0..STREAMS {
        let (client, url, opened_tx) = (client.clone(), url.clone(), opened_tx.clone());
        tasks.push(tokio::spawn(async move {
            let req = Request::get(url).body(full(Bytes::new())).expect("request");
            let resp = client.request(req).await.expect("response");
            assert_eq!(resp.status(), StatusCode::OK);
            let mut body = resp.into_body();
            let first = body
                .frame()
                .await
                .expect("frame")
                .expect("ok")
                .into_data()
                .expect("data");
            assert_eq!(&first[..], b"data: open\n\n");
            let _ = opened_tx.send(()).await;
            let rest = body.collect().await.expect("clean end").to_bytes();
            assert_eq!(&rest[..], b"data: done\n\n");
        }));
    }
    // All streams are open at once before any is allowed to finish.
    let all_open = tokio::time::timeout(Duration::from_secs(60), async {
        for _ in 0..STREAMS {
            opened.recv().await.expect("stream opened");
        }
    })
    .await;
    assert!(all_open.is_ok(), "not all {STREAMS} streams opened in time");
    let text = scrape(&tap).await;
    assert_eq!(
        total(&text, "a2a_requests_total", &[]),
        None,
        "none finished yet"
    );
    release.send_replace(true);
    let finished = tokio::time::timeout(Duration::from_secs(60), async {
        for t in tasks {
            t.await.expect("stream task");
        }
    })
    .await;
    assert!(finished.is_ok(), "streams did not finish in time");
    eventually_metric(&tap, "all counted", |t| {
        total(t, "a2a_requests_total", &[("code", "2xx")]) == Some(STREAMS as f64)
    })
    .await;
}
