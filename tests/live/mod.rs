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
        }
    }

    /// A JSON answer.
    pub fn json(status: u16, body: &str) -> Reply {
        Reply {
            status,
            content_type: "application/json".into(),
            chunks: vec![Bytes::from(body.to_owned())],
            die: false,
        }
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
                            let body = Scripted {
                                chunks: reply.chunks.into(),
                                die: reply.die,
                            };
                            let resp = hyper::Response::builder()
                                .status(reply.status)
                                .header("content-type", reply.content_type)
                                .body(body)
                                .unwrap();
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
    _dir: TempDir,
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
        let dir = TempDir::new("live");
        let listen: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let admin: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let audit = dir.0.join("audit.jsonl");
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
            _dir: dir,
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
        let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.listen));
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
        let bytes = tokio::time::timeout(Duration::from_secs(10), resp.into_body().collect())
            .await
            .expect("body in time")
            .map(|b| b.to_bytes().to_vec())
            .unwrap_or_default();
        (status, bytes)
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
