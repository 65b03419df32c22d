//! The real binary, for what only a process shows: signals, exit codes,
//! process limits (prlimit), a stderr nobody reads, memory and descriptors.
//! Every port is 127.0.0.1:0, learned from the proxy's own startup line;
//! its stderr is kept for failure messages.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::proxied::{parse_lines, Proxied, NAME};

/// The built binary.
pub const BIN: &str = env!("CARGO_BIN_EXE_a2a-tap");

/// How to start the binary beyond its config.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// A command line to run it under (e.g. `prlimit --nofile=256:256 --`).
    pub wrapper: Vec<String>,
    /// Its stderr a pipe nobody reads, instead of a file (and its log at
    /// debug, to fill the pipe).
    pub unread_stderr: bool,
    /// Where the audit log goes, in the temp dir (default `audit.jsonl`).
    pub audit_file: Option<String>,
    /// Environment variables set for it.
    pub env: Vec<(String, String)>,
    /// Its config (after `listen`, `admin` and `audit_log`) in place of
    /// `upstream`, `name` and `extra`: `[[route]]` tables, say.
    pub config: Option<String>,
}

/// a2a-tap as a child process, killed on drop.
pub struct Process {
    child: Child,
    pub listen: SocketAddr,
    pub admin: SocketAddr,
    pub audit: PathBuf,
    dir: tempfile::TempDir,
    /// The pipe end of a stderr nobody reads (kept open, never read).
    _unread: Option<BufReader<std::process::ChildStderr>>,
}

impl Process {
    /// Starts the binary in front of `upstream`; `extra` is appended to its
    /// config file.
    pub fn start(upstream: SocketAddr, extra: &str) -> Process {
        Process::launch(upstream, extra, Launch::default())
    }

    /// Like `start`, with `RLIMIT_NOFILE` at `nofile` (util-linux prlimit).
    pub fn start_with_nofile(upstream: SocketAddr, extra: &str, nofile: u64) -> Process {
        let wrapper = ["prlimit", &format!("--nofile={nofile}:{nofile}"), "--"];
        let launch = Launch {
            wrapper: wrapper.iter().map(|s| s.to_string()).collect(),
            ..Launch::default()
        };
        Process::launch(upstream, extra, launch)
    }

    /// Like `start`, its stderr a pipe that nobody reads (a stuck log
    /// collector): once the pipe is full, every write to it would block.
    pub fn start_with_unread_stderr(upstream: SocketAddr, extra: &str) -> Process {
        let launch = Launch {
            unread_stderr: true,
            ..Launch::default()
        };
        Process::launch(upstream, extra, launch)
    }

    /// Starts the binary as `launch` says.
    pub fn launch(upstream: SocketAddr, extra: &str, launch: Launch) -> Process {
        let dir = tempfile::tempdir().expect("temp dir");
        let audit = dir
            .path()
            .join(launch.audit_file.as_deref().unwrap_or("audit.jsonl"));
        let config = dir.path().join("config.toml");
        let text = match &launch.config {
            Some(text) => config_text(&audit, text),
            None => format!(
                "listen = \"127.0.0.1:0\"\nupstream = \"http://{upstream}\"\nadmin = \"127.0.0.1:0\"\n\
                 name = \"{NAME}\"\naudit_log = \"{}\"\n{}\n",
                audit.display(),
                without_drain_delay(extra)
            ),
        };
        std::fs::write(&config, text).expect("write config");
        let log = dir.path().join("stderr.log");
        let mut cmd = match launch.wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
        cmd.arg("--config")
            .arg(&config)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        if launch.unread_stderr {
            // The first lines are read here for the ports, the rest left
            // unread.
            cmd.env("RUST_LOG", "debug")
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
        } else {
            cmd.env(
                "RUST_LOG",
                "warn,a2a_tap::server=info,a2a_tap::app=info,a2a_tap::cli=info",
            )
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("stderr file"));
        }
        let mut child = cmd.spawn().expect("start a2a-tap");
        let (listen, admin, unread) = if launch.unread_stderr {
            let mut lines = BufReader::new(child.stderr.take().expect("stderr"));
            let deadline = Instant::now() + Duration::from_secs(15);
            let mut line = String::new();
            loop {
                line.clear();
                let n = lines.read_line(&mut line).unwrap_or(0);
                assert!(n > 0 && Instant::now() < deadline, "a2a-tap did not start");
                if let Some(addrs) = serving(&line) {
                    break (addrs.0, addrs.1, Some(lines));
                }
            }
        } else {
            let deadline = Instant::now() + Duration::from_secs(15);
            loop {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if let Some(addrs) = text.lines().find_map(serving) {
                    break (addrs.0, addrs.1, None);
                }
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("a2a-tap exited ({status}) before serving:\n{text}");
                }
                assert!(Instant::now() < deadline, "a2a-tap did not start:\n{text}");
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        Process {
            child,
            listen,
            admin,
            audit,
            dir,
            _unread: unread,
        }
    }

    /// Rewrites its config file with `text` (as `Launch::config` takes
    /// it), for a reload.
    pub fn rewrite_config(&self, text: &str) {
        let path = self.dir.path().join("config.toml");
        let old = std::fs::read_to_string(&path).expect("read config");
        // The ports it listens on stay (a reload does not rebind).
        let text = config_text(&self.audit, text);
        assert!(old.starts_with("listen"), "{old}");
        std::fs::write(&path, text).expect("write config");
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The temp dir holding the config and the audit log.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// What the proxy wrote to stderr so far (its log).
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default()
    }

    /// Sends a signal (`"HUP"`, `"TERM"`) to the process.
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
    pub async fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "a2a-tap did not exit in {within:?}:\n{}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Audit records of a file nobody writes any more (a rotated one, say):
    /// every line must be whole, the last one ended too.
    pub fn records_in(path: &Path) -> Vec<Value> {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "{} ends in a cut line",
            path.display()
        );
        parse_lines(text.lines())
    }

    /// Audit records of the file the running proxy writes. A write may be
    /// seen half done (the kernel copies a write into the file a page at
    /// a time, and a reader can come in between), so the text after the
    /// last newline is a line still arriving and is not read, as a log
    /// shipper tailing the file does not read it.
    fn records_so_far(path: &Path) -> Vec<Value> {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
        parse_lines(whole.lines())
    }

    /// The resident memory, in KiB (from /proc).
    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.pid())
    }
}

/// `a2a-tap serving listen=.. admin=..`, text or JSON: the two addresses,
/// if `line` is that startup line.
pub fn serving(line: &str) -> Option<(SocketAddr, SocketAddr)> {
    if !line.contains("a2a-tap serving") {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<Value>(line) {
        let addr = |k: &str| v[k].as_str()?.parse().ok();
        return Some((addr("listen")?, addr("admin")?));
    }
    let field = |k: &str| {
        line.split(&format!("{k}="))
            .nth(1)?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    Some((field("listen")?, field("admin")?))
}

/// The resident memory of `pid`, in KiB (0 when unknown).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl Proxied for Process {
    fn listen(&self) -> SocketAddr {
        self.listen
    }
    fn admin(&self) -> SocketAddr {
        self.admin
    }
    fn records(&self) -> Vec<Value> {
        Process::records_so_far(&self.audit)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the binary with `args` to completion (bounded); (exit code, stderr).
pub fn run(args: &[&str]) -> (Option<i32>, String) {
    let (code, _, err) = run_with(args, &[]);
    (code, err)
}

/// Runs the binary with `args` and the environment variables `env` (and
/// no `A2A_TAP_*` or `RUST_LOG` of the test's own) to completion, bounded;
/// (exit code, stdout, stderr).
pub fn run_with(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars() {
        if key.starts_with("A2A_TAP_") || key == "RUST_LOG" {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a2a-tap");
    let pid = out.id().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(out.wait_with_output());
    });
    match rx.recv_timeout(super::WAIT) {
        Ok(Ok(out)) => (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ),
        _ => {
            let _ = Command::new("kill").args(["-9", &pid]).status();
            panic!("a2a-tap {args:?} did not exit");
        }
    }
}

/// `extra` with `proxy.drain_delay = "0s"` unless it sets one: a test's
/// SIGTERM then stops accepting at once (the drain delay has its own test).
/// A whole config file: on 127.0.0.1:0, its audit log at `audit`, then `text`.
fn config_text(audit: &Path, text: &str) -> String {
    format!(
        "listen = \"127.0.0.1:0\"\nadmin = \"127.0.0.1:0\"\naudit_log = \"{}\"\n{}\n",
        audit.display(),
        without_drain_delay(text)
    )
}

pub fn without_drain_delay(extra: &str) -> String {
    if extra.contains("drain_delay") {
        extra.to_string()
    } else if extra.contains("[proxy]\n") {
        extra.replacen("[proxy]\n", "[proxy]\ndrain_delay = \"0s\"\n", 1)
    } else {
        format!("{extra}\n[proxy]\ndrain_delay = \"0s\"\n")
    }
}
