//! The app in-process, for validation tests through the running proxy: its
//! config from a TOML text, every port on 127.0.0.1:0, the audit log in
//! memory, and a manual clock that tests advance instead of sleeping.

use std::net::SocketAddr;
use std::sync::Arc;

use a2a_tap::analysis::{Clock, ManualClock};
use a2a_tap::app::{App, Options};
use a2a_tap::config::Config;
use a2a_tap::report::audit::{MemoryAudit, Target};
use serde_json::Value;

use super::proxied::{parse_lines, Proxied, NAME};

/// a2a-tap running in the test process.
pub struct Proxy {
    pub app: App,
    pub listen: SocketAddr,
    pub admin: SocketAddr,
    /// Moves the clock validation judges by (stall limits, ticks, TTL).
    pub clock: Arc<ManualClock>,
    audit: MemoryAudit,
    /// The access log's lines (with `[log] access = true`).
    access: MemoryAudit,
}

impl Proxy {
    /// Starts the app in front of `upstream`; `extra` is appended to its
    /// config (TOML sections such as `[stall]`).
    pub async fn start(upstream: SocketAddr, extra: &str) -> Proxy {
        Proxy::start_with_audit(upstream, extra, None).await
    }

    /// Like `start`, the audit log to `target` (`None`: in memory, where
    /// `records` reads it).
    pub async fn start_with_audit(
        upstream: SocketAddr,
        extra: &str,
        target: Option<Target>,
    ) -> Proxy {
        let text = format!("upstream = \"http://{upstream}\"\nname = \"{NAME}\"\n{extra}\n",);
        Proxy::start_config(&text, target).await
    }

    /// Starts the app with the config `text` (listening and admin on
    /// 127.0.0.1:0 added, with no drain delay): `[[route]]` tables, say.
    pub async fn start_config(text: &str, target: Option<Target>) -> Proxy {
        let text = format!(
            "listen = \"127.0.0.1:0\"\nadmin = \"127.0.0.1:0\"\n{}\n",
            super::process::without_drain_delay(text)
        );
        let mut config: Config = text
            .parse()
            .unwrap_or_else(|e| panic!("config {text:?}: {e}"));
        // One analysis thread unless the test asks for more: a test that
        // settles on one route's sentinel relies on one queue's order,
        // and on a host of more than four cores the default would give
        // the routes threads of their own.
        if config.analysis.threads == 0 {
            config.analysis.threads = 1;
        }
        let audit = MemoryAudit::default();
        let access = MemoryAudit::default();
        let (clock, hand) = Clock::manual();
        // With an audit file of the test's, the access log goes where the
        // config says (the same file, say); else to memory.
        let access_target = target.is_none().then(|| Target::Memory(access.clone()));
        let options = Options {
            audit: Some(target.unwrap_or_else(|| Target::Memory(audit.clone()))),
            access: access_target,
            clock,
            ..Options::default()
        };
        let app = super::within("the app to start", App::start_with(&config, options))
            .await
            .unwrap_or_else(|e| panic!("the app does not start: {e}"));
        Proxy {
            listen: app.listen_addr(),
            admin: app.admin_addr(),
            app,
            clock: hand,
            audit,
            access,
        }
    }

    /// The access-log lines written so far.
    pub fn access_lines(&self) -> Vec<Value> {
        parse_lines(self.access.lines().iter().map(String::as_str))
    }

    /// Waits (bounded) for `n` access-log lines.
    pub async fn wait_access(&self, n: usize) -> Vec<Value> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let lines = self.access_lines();
            if lines.len() >= n || std::time::Instant::now() > deadline {
                return lines;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Drains and stops the app, its audit log flushed.
    pub async fn stop(self) -> Vec<Value> {
        super::within("the app to stop", self.app.shutdown()).await;
        parse_lines(self.audit.lines().iter().map(String::as_str))
    }
}

impl Proxied for Proxy {
    fn listen(&self) -> SocketAddr {
        self.listen
    }
    fn admin(&self) -> SocketAddr {
        self.admin
    }
    fn records(&self) -> Vec<Value> {
        parse_lines(self.audit.lines().iter().map(String::as_str))
    }
}
