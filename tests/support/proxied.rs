//! What every proxy under test offers (the app in-process, or the binary):
//! its addresses and its audit records; requests, scrapes and bounded
//! waits follow from them.

use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// The upstream label the harness gives every proxy.
pub const NAME: &str = "agent-under-test";

/// A proxy under test.
pub trait Proxied {
    /// The proxy's bound address.
    fn listen(&self) -> SocketAddr;
    /// The admin listener's bound address.
    fn admin(&self) -> SocketAddr;
    /// Audit records written so far.
    fn records(&self) -> Vec<Value>;

    /// Sends a request through the proxy; returns status and body bytes.
    fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> impl Future<Output = (u16, Vec<u8>)> {
        let listen = self.listen();
        async move {
            let (status, _, bytes) = request_to(listen, method, path, headers, body).await;
            (status, bytes)
        }
    }

    /// Sends a request through the proxy; returns status, headers and body bytes.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> impl Future<Output = (u16, http::HeaderMap, Vec<u8>)> {
        request_to(self.listen(), method, path, headers, body)
    }

    /// POSTs `body` on a raw connection and reads until the response holds
    /// `until`; returns the connection (drop it to hang up) and the bytes.
    fn post_until(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
        until: &str,
    ) -> impl Future<Output = (tokio::net::TcpStream, Vec<u8>)> {
        let listen = self.listen();
        async move {
            use tokio::io::AsyncWriteExt;
            let mut tcp = tokio::net::TcpStream::connect(listen)
                .await
                .expect("connect");
            let mut head = format!(
                "POST {path} HTTP/1.1\r\nhost: {listen}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            tcp.write_all(head.as_bytes()).await.expect("write head");
            tcp.write_all(body.as_bytes()).await.expect("write body");
            let mut got = Vec::new();
            read_until(&mut tcp, &mut got, until).await;
            (tcp, got)
        }
    }

    /// The Prometheus scrape.
    fn metrics(&self) -> impl Future<Output = String> {
        let admin = self.admin();
        async move {
            get_text(&format!("http://{admin}/metrics"))
                .await
                .map(|r| r.1)
                .unwrap_or_default()
        }
    }

    /// Polls the scrape until `pred` holds (bounded); the last scrape.
    fn wait_metrics(
        &self,
        what: &str,
        pred: impl Fn(&str) -> bool,
    ) -> impl Future<Output = String> {
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let scrape = self.metrics().await;
                if pred(&scrape) {
                    return scrape;
                }
                assert!(
                    Instant::now() < deadline,
                    "metrics never showed {what}:\n{scrape}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    /// Waits until at least `n` records match `pred`, failing the test
    /// after 10 s with `what` and the records; the matching ones.
    fn wait_matching(
        &self,
        what: &str,
        n: usize,
        pred: impl Fn(&Value) -> bool,
    ) -> impl Future<Output = Vec<Value>> {
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let recs = self.records();
                let matching: Vec<Value> = recs.iter().filter(|r| pred(r)).cloned().collect();
                if matching.len() >= n {
                    return matching;
                }
                assert!(
                    Instant::now() < deadline,
                    "{n} records of {what} never came: {recs:#?}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    /// Waits until at least `n` records of `kind` are written (bounded, as
    /// `wait_matching`); those records.
    fn wait_kind(&self, kind: &str, n: usize) -> impl Future<Output = Vec<Value>> {
        self.wait_matching(kind, n, move |r| r["kind"] == kind)
    }

    /// Waits until at least `n` records are written (bounded).
    fn wait_records(&self, n: usize) -> impl Future<Output = Vec<Value>> {
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let recs = self.records();
                if recs.len() >= n || Instant::now() > deadline {
                    return recs;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// Parses JSON Lines, failing on a line that is not JSON.
pub fn parse_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<Value> {
    lines
        .into_iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line is not JSON ({e}): {l}"))
        })
        .collect()
}

/// Sends a request to `listen`; returns status, headers and body bytes.
pub async fn request_to(
    listen: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, http::HeaderMap, Vec<u8>) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut req = hyper::Request::builder()
        .method(method)
        .uri(format!("http://{listen}{path}"));
    if !body.is_empty() {
        req = req.header("content-type", "application/json");
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(10), client.request(req))
        .await
        .expect("response in time")
        .expect("response");
    let status = resp.status().as_u16();
    let head = resp.headers().clone();
    let bytes = tokio::time::timeout(Duration::from_secs(10), resp.into_body().collect())
        .await
        .expect("body in time")
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    (status, head, bytes)
}

/// GETs `url`; status and body text, if anything answered within 2 s.
pub async fn get_text(url: &str) -> Option<(u16, String)> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let req = hyper::Request::get(url)
        .body(Full::new(Bytes::new()))
        .ok()?;
    let resp = tokio::time::timeout(Duration::from_secs(2), client.request(req))
        .await
        .ok()?
        .ok()?;
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.ok()?.to_bytes();
    Some((status, String::from_utf8_lossy(&body).into_owned()))
}

/// Reads from a raw connection onto `got` until it holds `until`; panics
/// on EOF or after 10 s (bounded).
pub async fn read_until(tcp: &mut tokio::net::TcpStream, got: &mut Vec<u8>, until: &str) {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 8192];
    let deadline = Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(got).contains(until) {
        let left = deadline.saturating_duration_since(Instant::now());
        let n = tokio::time::timeout(left, tcp.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("never saw {until:?}: {}", String::from_utf8_lossy(got)))
            .expect("read");
        assert!(
            n > 0,
            "EOF before {until:?}: {}",
            String::from_utf8_lossy(got)
        );
        got.extend_from_slice(&buf[..n]);
    }
}
