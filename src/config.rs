//! The TOML configuration: every key, its default, `from_str` then `validate()`.
//!
//! `config.toml.example` at the repo root shows each key with its default; keep
//! the two in step. Durations are humantime strings (`"30s"`); sizes are
//! bytes, as an integer or with a unit (`"64MiB"`).

mod core_settings;
mod defaults;
pub mod parse;
mod push_settings;
mod registry_settings;
mod routes;
mod trace_settings;
mod upstream_url;
mod validate;
mod value_errors;
mod values;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::findings::{Kind, Policy};

pub use push_settings::PushSection;
pub use registry_settings::{Backend, RedisUrl, RegistrySection, SharedKey, SHARED_KEY_ENV};
pub use routes::{normalize_prefix, unsafe_path, RouteSection, RouteSpec};
pub use trace_settings::{TraceSettings, TracingSection};
pub use value_errors::{LevelError, LevelWhy, RedisUrlError, SizeError};
pub use values::{
    parse_size, HumanDuration, Level, LogFormat, SeverityChoice, StallLimit, UpstreamUrl,
};
use values::{size_u64, size_usize};

/// Why a configuration was refused. Every message names the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file is not TOML, has an unknown key, or a value of the wrong shape.
    #[error("config: {0}")]
    Parse(String),
    /// A key that must be set (in the file or by its flag) is missing.
    #[error("config: `{key}` is required ({why})")]
    Missing {
        key: &'static str,
        why: &'static str,
    },
    /// A key has a value outside what it accepts.
    #[error("config: `{key}`: {why}")]
    Invalid { key: String, why: String },
    /// The config file could not be read.
    #[error("config: cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// More than one problem, each on its own line.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Problems(Vec<ConfigError>),
}

/// The whole configuration (top-level keys).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address callers connect to (`--listen`). Required.
    pub listen: Option<SocketAddr>,
    /// The agent behind the proxy, `http://` or `https://` (`--upstream`). Required.
    pub upstream: Option<UpstreamUrl>,
    /// Admin listener for /metrics, /healthz, /readyz (`--admin`).
    pub admin: SocketAddr,
    /// Label for the upstream in metrics and audit records (`--name`);
    /// default: the upstream's host:port.
    pub name: Option<String>,
    /// Where audit records go: a file path (appended) or `-` for stdout.
    pub audit_log: String,
    /// Validate traffic; `false` makes the proxy a plain pass-through.
    pub validate: bool,
    /// Rewrite agent-card URLs to `public_url` (the single opt-in alteration).
    pub rewrite_agent_card: bool,
    /// The proxy's own public base URL; required when `rewrite_agent_card`.
    pub public_url: Option<UpstreamUrl>,
    /// Forwarding limits and upstream client settings.
    pub proxy: ProxySection,
    /// Logging.
    pub log: LogSection,
    /// Audit record shaping.
    pub audit: AuditSection,
    /// Bounds on what the validator copies and judges.
    pub analysis: AnalysisSection,
    /// The cross-exchange task registry.
    pub registry: RegistrySection,
    /// How long a task may sit in one non-terminal state.
    pub stall: StallSection,
    /// Per-kind severity overrides: `kind = "error" | "warning" | "off"`;
    /// `sdk_drift` sets the findings that are a known SDK drift.
    pub severity: BTreeMap<String, SeverityChoice>,
    /// OpenTelemetry traces of the exchanges (off without an endpoint).
    pub tracing: TracingSection,
    /// `[[route]]`: several agents behind one proxy (instead of `upstream`).
    #[serde(rename = "route", skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteSection>,
    /// The push-notification relay (off by default).
    pub push: PushSection,
}

/// `[proxy]`: forwarding limits and the upstream client.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProxySection {
    /// Largest request body accepted, in bytes; larger gets 413.
    #[serde(deserialize_with = "size_u64")]
    pub max_request_body: u64,
    /// How long to wait for the upstream's response headers; then 504.
    pub upstream_header_timeout: HumanDuration,
    /// Longest silence allowed on a response body (idle, not total: SSE lives long).
    pub stream_idle_timeout: HumanDuration,
    /// Most caller connections open at once; more wait in the accept queue.
    pub max_connections: usize,
    /// Most HTTP/1.1 upstream connections in use at once, over every
    /// serving thread; an exchange past it waits for one (within
    /// `upstream_header_timeout`). One caller connection holds at most an
    /// eighth of them, and the last eighth goes only to caller connections
    /// that hold none (`proxy::share`).
    pub max_upstream_connections: usize,
    /// Most concurrent streams an h2 caller connection may open.
    pub max_concurrent_streams: u32,
    /// Largest header list (and trailer list) taken from a caller or an
    /// upstream, in bytes: HTTP/2's `SETTINGS_MAX_HEADER_LIST_SIZE` on
    /// both sides, and the HTTP/1.1 read buffers that must hold a head.
    #[serde(deserialize_with = "size_usize")]
    pub max_header_list_size: usize,
    /// Talk HTTP/2 to the upstream (h2c for `http://`, ALPN h2 for `https://`).
    pub upstream_http2: bool,
    /// Add `Via`, `X-Forwarded-For` and `X-Forwarded-Proto` to forwarded requests.
    pub forwarded_headers: bool,
    /// On SIGTERM/SIGINT, how long in-flight exchanges (streams too) may go on.
    pub grace_period: HumanDuration,
    /// Extra PEM root certificates trusted for `https://` upstreams, besides the system roots.
    pub tls_ca_file: Option<PathBuf>,
    /// Timeout for opening a TCP connection to the upstream.
    pub connect_timeout: HumanDuration,
    /// How long an idle pooled upstream connection is kept.
    pub pool_idle_timeout: HumanDuration,
    /// A caller connection must finish its first request's headers within
    /// this long of connecting (a later request's, within this long of
    /// starting it); then it is closed.
    pub header_read_timeout: HumanDuration,
    /// A caller connection with no exchange in flight is closed after this
    /// long (HTTP/1.1 keep-alive and h2 alike).
    pub idle_timeout: HumanDuration,
    /// A response whose caller takes none of its bytes for this long (a
    /// caller that stopped reading) is cut and its connection closed.
    pub write_timeout: HumanDuration,
    /// After SIGTERM/SIGINT, how long the listener keeps accepting (with
    /// readiness false) so that load balancers stop sending first.
    pub drain_delay: HumanDuration,
    /// Serving threads (`--threads`); 0: one per CPU the process may use
    /// (its cgroup quota counts).
    pub threads: usize,
    /// Largest agent card rewritten (`rewrite_agent_card`), on the wire and
    /// uncompressed; a larger card passes as sent, counted and logged.
    #[serde(deserialize_with = "size_usize")]
    pub max_card_rewrite_bytes: usize,
}

/// `[log]`: the process's own logs (not the audit log).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSection {
    /// `text` or `json`.
    pub format: LogFormat,
    /// A tracing filter (`info`, `debug`, `a2a_tap=debug,info`); `RUST_LOG` overrides it.
    pub level: Level,
    /// Write one access-log line (JSON) per exchange.
    pub access: bool,
    /// Where access-log lines go: a file path (appended) or `-` for stdout.
    pub access_log: String,
}

/// `[audit]`: audit record shaping and buffering.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditSection {
    /// Evidence (the offending frame) is cut to this many bytes.
    #[serde(deserialize_with = "size_usize")]
    pub evidence_bytes: usize,
    /// Replace message/artifact parts in evidence with a placeholder.
    pub redact_parts: bool,
    /// Records waiting to be written; beyond it records are dropped and counted.
    pub queue_capacity: usize,
}

/// `[analysis]`: what the validator is given, bounded so it never slows traffic.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalysisSection {
    /// JSON responses larger than this are forwarded but not judged.
    #[serde(deserialize_with = "size_usize")]
    pub max_body_bytes: usize,
    /// Request bodies larger than this are forwarded but not classified.
    #[serde(deserialize_with = "size_usize")]
    pub max_request_bytes: usize,
    /// SSE events larger than this are forwarded, reported once as `malformed_event`, and skipped.
    #[serde(deserialize_with = "size_usize")]
    pub max_event_bytes: usize,
    /// Bytes queued for, or held by, analysis across all exchanges; beyond it the exchange that crosses it is left unjudged and counted.
    #[serde(deserialize_with = "size_usize")]
    pub queue_bytes: usize,
    /// Ids (task, context, message, artifact) longer than this are kept as their SHA-256 and repeated cut.
    #[serde(deserialize_with = "size_usize")]
    pub max_id_bytes: usize,
    /// Plain bytes one compressed answer may inflate to for analysis; past it the exchange is left unjudged.
    #[serde(deserialize_with = "size_usize")]
    pub max_inflated_bytes: usize,
    /// Plain bytes per compressed byte an answer may inflate to (past its first MiB).
    pub max_inflate_ratio: u64,
    /// How long a stream may stay open after its end (its task's terminal
    /// state, its one Message, 0.3 `final:true`) before `stream_not_closed`.
    pub close_wait: HumanDuration,
    /// Analysis threads, each judging its own routes (0: one per four
    /// serving threads, no more than the routes at start).
    pub threads: usize,
}

/// `[stall]`: per-state limits for `stalled_task`; each may be `"off"`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct StallSection {
    /// Limit for `submitted`.
    pub submitted: StallLimit,
    /// Limit for `working`.
    pub working: StallLimit,
    /// Limit for `input-required`.
    pub input_required: StallLimit,
    /// Limit for `auth-required`.
    pub auth_required: StallLimit,
}

// === impl Config ===

/// Default admin address from the contract.
pub const DEFAULT_ADMIN: &str = "127.0.0.1:9464";

/// The `[severity]` key for the findings that are a known SDK drift.
pub const SDK_DRIFT: &str = "sdk_drift";

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: None,
            upstream: None,
            admin: SocketAddr::from(([127, 0, 0, 1], 9464)),
            name: None,
            audit_log: "-".to_string(),
            validate: true,
            rewrite_agent_card: false,
            public_url: None,
            proxy: ProxySection::default(),
            log: LogSection::default(),
            audit: AuditSection::default(),
            analysis: AnalysisSection::default(),
            registry: RegistrySection::default(),
            stall: StallSection::default(),
            severity: BTreeMap::new(),
            tracing: TracingSection::default(),
            routes: Vec::new(),
            push: PushSection::default(),
        }
    }
}

impl std::str::FromStr for Config {
    type Err = ConfigError;

    /// Parses TOML; call [`Config::validate`] afterwards.
    fn from_str(text: &str) -> Result<Config, ConfigError> {
        let mut parsed = parse::parse_all(text);
        match (parsed.config, parsed.problems.len()) {
            (Some(config), 0) => Ok(config),
            (_, 1) => Err(parsed.problems.remove(0)),
            _ => Err(ConfigError::Problems(parsed.problems)),
        }
    }
}

impl Config {
    /// Reads and parses a file (not yet validated).
    pub fn from_file(path: &std::path::Path) -> Result<Config, ConfigError> {
        Config::read(path)?.parse()
    }

    /// Reads and parses a file, naming every type error at once; the
    /// config of the keys that read, when the rest is TOML.
    pub fn from_file_all(path: &std::path::Path) -> Result<parse::Parsed, ConfigError> {
        Config::read(path).map(|text| parse::parse_all(&text))
    }

    fn read(path: &std::path::Path) -> Result<String, ConfigError> {
        std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })
    }

    /// What is legal but probably not meant: each a line for the startup
    /// log and `config check`.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        let http_upstream = self.upstream.as_ref().is_some_and(|u| !u.is_https());
        if self.proxy.tls_ca_file.is_some() && http_upstream {
            warnings.push(
                "`proxy.tls_ca_file` is set but the upstream is http://: no TLS is used, the file \
                 is ignored (use an https:// upstream, or remove the key)"
                    .to_string(),
            );
        }
        for (i, r) in self.routes.iter().enumerate() {
            let http = r.upstream.as_ref().is_some_and(|u| !u.is_https());
            if r.tls_ca_file.is_some() && http {
                warnings.push(format!(
                    "`route[{i}].tls_ca_file` is set but route `{}`'s upstream is http://: no \
                     TLS is used, the file is ignored",
                    r.name
                ));
            }
        }
        warnings.extend(self.registry.warnings());
        warnings
    }

    /// The per-kind severity overrides, and `sdk_drift` for the findings
    /// that are a known SDK drift, as a [`Policy`]; an unknown kind is an
    /// error naming it.
    pub fn policy(&self) -> Result<Policy, ConfigError> {
        policy_of(&self.severity, "severity")
    }

    /// The upstream's label: `name`, else the upstream's host:port.
    pub fn upstream_name(&self) -> String {
        match (&self.name, &self.upstream) {
            (Some(name), _) => name.clone(),
            (None, Some(up)) => up.host_port(),
            (None, None) => "unknown".to_string(),
        }
    }
}

/// `severity` (written under `key`: `severity`, `route[0].severity`) as
/// a [`Policy`]; an unknown kind is an error naming it.
fn policy_of(
    severity: &BTreeMap<String, SeverityChoice>,
    key: &str,
) -> Result<Policy, ConfigError> {
    let mut policy = Policy::default();
    for (name, choice) in severity {
        if name == SDK_DRIFT {
            policy.set_drift(choice.severity());
            continue;
        }
        let Some(kind) = Kind::from_name(name) else {
            let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
            return Err(ConfigError::Invalid {
                key: format!("{key}.{name}"),
                why: format!(
                    "unknown kind; the kinds are: {} (and {SDK_DRIFT}, for known SDK drifts)",
                    kinds.join(", ")
                ),
            });
        };
        policy.set(kind, choice.severity());
    }
    Ok(policy)
}

#[cfg(test)]
mod tests;
