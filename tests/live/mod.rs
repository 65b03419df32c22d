//! Harness for validation tests through the running proxy: a scripted
//! upstream in the test process, the real `a2a-tap` binary in front of it
//! (audit log to a temp file), and a client that keeps every byte it got.
#![allow(dead_code)]

pub mod a2a;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use tokio::net::TcpListener;

/// One scripted upstream answer.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub chunks: Vec<Bytes>,
    /// End the body with an error after the chunks (connection dies).
    pub die: bool,
    /// Extra response headers (e.g. `content-encoding`).
    pub headers: Vec<(String, String)>,
    /// Hold the body open after some chunks until released.
    pub hold: Option<Hold>,
}

/// Holds a scripted body open: the first `after` chunks go at once, the
/// rest (and the end) only once `release` is notified. `dropped` is
/// notified when the proxy lets go of the upstream response.
#[derive(Clone, Debug)]
pub struct Hold {
    pub after: usize,
    pub release: Arc<tokio::sync::Notify>,
    pub dropped: Arc<tokio::sync::Notify>,
}

impl Hold {
    pub fn after(n: usize) -> Hold {
        Hold {
            after: n,
            release: Arc::default(),
            dropped: Arc::default(),
        }
    }
}

impl Reply {
    /// An SSE answer, one chunk per frame.
    pub fn sse(frames: &[String]) -> Reply {
        Reply {
            status: 200,
            content_type: "text/event-stream".into(),
            chunks: frames
                .iter()
                .map(|f| Bytes::from(format!("data: {f}\n\n")))
                .collect(),
            die: false,
            headers: Vec::new(),
            hold: None,
        }
    }

    /// A JSON answer.
    pub fn json(status: u16, body: &str) -> Reply {
        Reply {
            status,
            content_type: "application/json".into(),
            chunks: vec![Bytes::from(body.to_owned())],
            die: false,
            headers: Vec::new(),
            hold: None,
        }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.chunks.iter().flat_map(|c| c.iter().copied()).collect()
    }
}

/// A body that yields its chunks one per poll, then maybe an error.
struct Scripted {
    chunks: VecDeque<Bytes>,
    die: bool,
}

impl Body for Scripted {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(c) = self.chunks.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(c))));
        }
        if self.die {
            self.die = false;
            return Poll::Ready(Some(Err(std::io::Error::other("upstream died"))));
        }
        Poll::Ready(None)
    }
}

/// A held body: chunks come through a channel fed by a task that waits
/// for the release; the feeder learns of the body's drop when sends fail.
struct Held {
    rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
}

impl Body for Held {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }
}

fn held_body(reply: Reply, hold: Hold) -> Held {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        let mut chunks = reply.chunks.into_iter();
        for c in chunks.by_ref().take(hold.after) {
            if tx.send(Ok(c)).await.is_err() {
                hold.dropped.notify_one();
                return;
            }
        }
        tokio::select! {
            _ = hold.release.notified() => {}
            _ = tx.closed() => {
                hold.dropped.notify_one();
                return;
            }
        }
        for c in chunks {
            if tx.send(Ok(c)).await.is_err() {
                hold.dropped.notify_one();
                return;
            }
        }
        if reply.die {
            let _ = tx.send(Err(std::io::Error::other("upstream died"))).await;
        }
    });
    Held { rx }
}

/// The scripted upstream: answers requests in order from its script.
pub struct Upstream {
    pub addr: SocketAddr,
    script: Arc<Mutex<VecDeque<Reply>>>,
}

impl Upstream {
    pub async fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let script: Arc<Mutex<VecDeque<Reply>>> = Arc::default();
        let s = script.clone();
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { return };
                let s = s.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                        let s = s.clone();
                        async move {
                            // Read the whole request first, as agents do.
                            let _ = req.into_body().collect().await;
                            let reply = s.lock().unwrap().pop_front().unwrap_or_else(|| {
                                Reply::json(500, r#"{"error":"script exhausted"}"#)
                            });
                            let mut resp = hyper::Response::builder()
                                .status(reply.status)
                                .header("content-type", reply.content_type.clone());
                            for (k, v) in &reply.headers {
                                resp = resp.header(k, v);
                            }
                            let body = match reply.hold.clone() {
                                Some(hold) => held_body(reply, hold).boxed_unsync(),
                                None => Scripted {
                                    chunks: reply.chunks.into(),
                                    die: reply.die,
                                }
                                .boxed_unsync(),
                            };
                            let resp = resp.body(body).unwrap();
                            Ok::<_, Infallible>(resp)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), svc)
                        .await;
                });
            }
        });
        Upstream { addr, script }
    }

    pub fn push(&self, reply: Reply) {
        self.script.lock().unwrap().push_back(reply);
    }
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The proxy binary, killed on drop.
pub struct Proxy {
    child: Child,
    pub listen: SocketAddr,
    pub admin: SocketAddr,
    pub audit: PathBuf,
    dir: TempDir,
}

/// A temp dir removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "a2a-tap-{tag}-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub const NAME: &str = "agent-under-test";

impl Proxy {
    /// Starts the proxy in front of `upstream`; `extra` is appended to its
    /// config file (TOML sections such as `[stall]`).
    pub async fn start(upstream: SocketAddr, extra: &str) -> Proxy {
        Proxy::start_in(upstream, extra, |dir| dir.join("audit.jsonl")).await
    }

    /// Like `start`, with the audit log path chosen from the temp dir.
    pub async fn start_in(
        upstream: SocketAddr,
        extra: &str,
        audit_at: impl FnOnce(&std::path::Path) -> PathBuf,
    ) -> Proxy {
        let dir = TempDir::new("live");
        let listen: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let admin: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let audit = audit_at(&dir.0);
        let config = dir.0.join("config.toml");
        std::fs::write(
            &config,
            format!(
                "listen = \"{listen}\"\nupstream = \"http://{upstream}\"\nadmin = \"{admin}\"\n\
                 name = \"{NAME}\"\naudit_log = \"{}\"\n{extra}\n",
                audit.display()
            ),
        )
        .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_a2a-tap"))
            .arg("--config")
            .arg(&config)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a2a-tap");
        let proxy = Proxy {
            child,
            listen,
            admin,
            audit,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        while get(&format!("http://{admin}/healthz")).await.map(|r| r.0) != Some(200) {
            assert!(Instant::now() < deadline, "a2a-tap did not come up");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        proxy
    }

    /// Sends a request through the proxy; returns status and body bytes.
    pub async fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, Vec<u8>) {
        let (status, _, bytes) = self.request(method, path, headers, body).await;
        (status, bytes)
    }

    /// Sends a request through the proxy; returns status, headers and body bytes.
    pub async fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, http::HeaderMap, Vec<u8>) {
        request_to(self.listen, method, path, headers, body).await
    }

    /// POSTs `body` on a raw connection and reads until the response holds
    /// `until`; returns the connection (drop it to hang up) and the bytes.
    pub async fn post_until(&self, path: &str, headers: &[(&str, &str)], body: &str, until: &str) -> (tokio::net::TcpStream, Vec<u8>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(self.listen).await.expect("connect");
        let mut head = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            self.listen,
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        tcp.write_all(head.as_bytes()).await.expect("write head");
        tcp.write_all(body.as_bytes()).await.expect("write body");
        let mut got = Vec::new();
        let mut buf = vec![0u8; 8192];
        let deadline = Instant::now() + Duration::from_secs(10);
        while !String::from_utf8_lossy(&got).contains(until) {
            let left = deadline.saturating_duration_since(Instant::now());
            let n = tokio::time::timeout(left, tcp.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("never saw {until:?}: {}", String::from_utf8_lossy(&got)))
                .expect("read");
            assert!(n > 0, "EOF before {until:?}: {}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
        (tcp, got)
    }

    /// The proxy process's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The temp dir holding the config and the audit log.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir.0
    }

    /// Sends a signal (`"HUP"`, `"TERM"`) to the proxy process.
    pub fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.pid().to_string())
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill -{name} failed");
    }

    /// Waits (bounded) for the process to exit; its exit status.
    pub async fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "a2a-tap did not exit in {within:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Audit records of one file (a rotated one, say).
    pub fn records_in(path: &std::path::Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
            .collect()
    }

    /// Polls the scrape until `pred` holds (bounded); the last scrape.
    pub async fn wait_metrics(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let scrape = self.metrics().await;
            if pred(&scrape) {
                return scrape;
            }
            assert!(Instant::now() < deadline, "metrics never showed {what}:\n{scrape}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Audit records written so far.
    pub fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
            .collect()
    }

    /// Waits until at least `n` records are written (bounded).
    pub async fn wait_records(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let recs = self.records();
            if recs.len() >= n || Instant::now() > deadline {
                return recs;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The Prometheus scrape.
    pub async fn metrics(&self) -> String {
        get(&format!("http://{}/metrics", self.admin))
            .await
            .map(|r| r.1)
            .unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
        .uri(format!("http://{}{path}", listen));
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

async fn get(url: &str) -> Option<(u16, String)> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let req = hyper::Request::get(url).body(Full::new(Bytes::new())).ok()?;
    let resp = tokio::time::timeout(Duration::from_secs(2), client.request(req))
        .await
        .ok()?
        .ok()?;
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.ok()?.to_bytes();
    Some((status, String::from_utf8_lossy(&body).into_owned()))
}

/// The sum of every sample of `name` whose labels include `labels`.
pub fn sum(scrape: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    scrape
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(name)?;
            let (labelset, value) = match rest.strip_prefix('{') {
                Some(r) => r.split_once('}')?,
                None if rest.starts_with(' ') => ("", rest),
                None => return None,
            };
            labels
                .iter()
                .all(|(k, v)| labelset.contains(&format!("{k}=\"{v}\"")))
                .then(|| value.trim().parse::<f64>().ok())
                .flatten()
        })
        .sum()
}

/// The value of one sample in a scrape, e.g.
/// `sample(&text, "a2a_violations_total", &[("kind", "terminal_exit")])`.
pub fn sample(scrape: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    scrape.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        let (labelset, value) = match rest.strip_prefix('{') {
            Some(r) => {
                let (ls, v) = r.split_once('}')?;
                (ls, v)
            }
            None if rest.starts_with(' ') => ("", rest),
            None => return None,
        };
        labels
            .iter()
            .all(|(k, v)| labelset.contains(&format!("{k}=\"{v}\"")))
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}
