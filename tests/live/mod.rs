//! Harness for validation tests through the running proxy: a scripted
//! upstream in the test process, the real `a2a-tap` binary in front of it
//! (audit log to a temp file), and a client that keeps every byte it got.
#![allow(dead_code)]

pub mod a2a;
mod upstream;

#[allow(unused_imports)] // not every test file holds streams open
pub use upstream::{Hold, Reply, Upstream};

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

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
    /// The pipe end of a stderr nobody reads (kept open, never read).
    _unread_stderr: Option<std::process::ChildStderr>,
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
        Proxy::launch(upstream, extra, audit_at, &[], false).await
    }

    /// Like `start`, run under `prlimit --nofile=N:N` (util-linux).
    pub async fn start_with_nofile(upstream: SocketAddr, extra: &str, nofile: u64) -> Proxy {
        let limit = format!("--nofile={nofile}:{nofile}");
        let audit = |d: &std::path::Path| d.join("audit.jsonl");
        Proxy::launch(upstream, extra, audit, &["prlimit", &limit, "--"], false).await
    }

    /// Like `start`, its stderr a pipe that nobody reads (a stuck log
    /// collector): once the pipe is full, every write to it would block.
    pub async fn start_with_unread_stderr(upstream: SocketAddr, extra: &str) -> Proxy {
        let audit = |d: &std::path::Path| d.join("audit.jsonl");
        Proxy::launch(upstream, extra, audit, &[], true).await
    }

    /// Starts the binary, behind the `wrapper` command line if any.
    async fn launch(
        upstream: SocketAddr,
        extra: &str,
        audit_at: impl FnOnce(&std::path::Path) -> PathBuf,
        wrapper: &[&str],
        unread: bool,
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
        let stderr = std::fs::File::create(dir.0.join("stderr.log")).expect("stderr file");
        let bin = env!("CARGO_BIN_EXE_a2a-tap");
        let mut cmd = match wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        let mut child = cmd
            .arg("--config")
            .arg(&config)
            .env("RUST_LOG", if unread { "debug" } else { "warn" })
            .stdout(Stdio::null())
            .stderr(if unread {
                Stdio::piped()
            } else {
                Stdio::from(stderr)
            })
            .spawn()
            .expect("start a2a-tap");
        let unread_stderr = child.stderr.take();
        let proxy = Proxy {
            child,
            listen,
            admin,
            audit,
            dir,
            _unread_stderr: unread_stderr,
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        while get(&format!("http://{admin}/healthz")).await.map(|r| r.0) != Some(200) {
            assert!(
                Instant::now() < deadline,
                "a2a-tap did not come up:\n{}",
                proxy.stderr()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        proxy
    }

    /// Sends a request through the proxy; returns status and body bytes.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Vec<u8>) {
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
    pub async fn post_until(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
        until: &str,
    ) -> (tokio::net::TcpStream, Vec<u8>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(self.listen)
            .await
            .expect("connect");
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
                .unwrap_or_else(|_| {
                    panic!("never saw {until:?}: {}", String::from_utf8_lossy(&got))
                })
                .expect("read");
            assert!(
                n > 0,
                "EOF before {until:?}: {}",
                String::from_utf8_lossy(&got)
            );
            got.extend_from_slice(&buf[..n]);
        }
        (tcp, got)
    }

    /// What the proxy wrote to stderr so far (its log).
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.0.join("stderr.log")).unwrap_or_default()
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
            assert!(
                Instant::now() < deadline,
                "a2a-tap did not exit in {within:?}"
            );
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
            assert!(
                Instant::now() < deadline,
                "metrics never showed {what}:\n{scrape}"
            );
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
