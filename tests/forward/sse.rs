//! SSE frames reach the caller as the upstream sends them, one at a time;
//! a silent stream is cut after the idle timeout, a talking one is not.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt;
use tokio::sync::mpsc;

use crate::support::*;

/// An upstream whose SSE responses are fed by the test through the senders it hands out.
async fn scripted_stream() -> (
    std::net::SocketAddr,
    mpsc::Receiver<http_body_util::channel::Sender<Bytes, BoxError>>,
) {
    let (tx, rx) = mpsc::channel(1);
    let addr = upstream(move |_req| {
        let tx = tx.clone();
        async move {
            let (sender, body) = channel();
            let _ = tx.send(sender).await;
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .expect("response")
        }
    })
    .await;
    (addr, rx)
}

fn frame(n: usize) -> Bytes {
    Bytes::from(format!(
        "data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"statusUpdate\":{{\"taskId\":\"t\",\"n\":{n}}}}}}}\n\n"
    ))
}

#[tokio::test]
async fn frame_n_reaches_the_caller_before_the_upstream_writes_frame_n_plus_1() {
    let (up, mut senders) = scripted_stream().await;
    let tap = proxy(config(up)).await;
    let req = Request::post(format!("http://{}/", tap.listen_addr()))
        .body(full(Bytes::from_static(b"{}")))
        .expect("request");
    let resp = within("head", client().request(req))
        .await
        .expect("response");
    let mut body = resp.into_body();
    let mut sender = within("upstream request", senders.recv())
        .await
        .expect("sender");
    for n in 0..20 {
        // The upstream writes frame n only now; the caller must see it before n+1 exists.
        within("send", sender.send_data(frame(n)))
            .await
            .expect("upstream write");
        let mut got = Vec::new();
        while got.len() < frame(n).len() {
            let f = within("frame at the caller", body.frame()).await;
            let data = f
                .expect("a frame")
                .expect("no error")
                .into_data()
                .expect("data");
            got.extend_from_slice(&data);
        }
        assert_eq!(got, frame(n), "frame {n}");
    }
    drop(sender);
    let rest = within("end", body.collect())
        .await
        .expect("clean end")
        .to_bytes();
    assert!(rest.is_empty());
}

#[tokio::test]
async fn silent_stream_is_cut_after_the_idle_timeout_but_a_talking_one_lives_on() {
    let (up, mut senders) = scripted_stream().await;
    let mut c = config(up);
    c.proxy.stream_idle_timeout = a2a_tap::config::HumanDuration(Duration::from_millis(300));
    let tap = proxy(c).await;
    let resp = get_head(&client(), &format!("http://{}/", tap.listen_addr())).await;
    let mut body = resp.into_body();
    let mut sender = within("upstream request", senders.recv())
        .await
        .expect("sender");
    // Talk for 3x the idle timeout, a frame every 100 ms: never cut.
    for n in 0..9 {
        within("send", sender.send_data(frame(n)))
            .await
            .expect("write");
        let f = within("frame", body.frame())
            .await
            .expect("frame")
            .expect("no error");
        assert!(f.is_data());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Then go silent: the proxy ends the response with an error.
    let end = within("idle cut", async {
        loop {
            match body.frame().await {
                Some(Ok(_)) => continue,
                Some(Err(_)) => return true,
                None => return false,
            }
        }
    })
    .await;
    assert!(end, "an idle stream must end in an error, not a clean end");
    eventually_metric(&tap, "timeout counted", |t| {
        total(t, "a2a_upstream_errors_total", &[("reason", "timeout")]) == Some(1.0)
    })
    .await;
    drop(sender);
}
