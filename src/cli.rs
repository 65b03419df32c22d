//! The command line: `serve` (the default), `check`, `probe` and
//! `config check`.
//! Every serve flag can also come from the environment (`A2A_TAP_<FLAG>`),
//! below the flag and above the config file.

pub mod commands;
mod environment;
mod load;
pub mod serve;

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::{Config, Level, LogFormat, UpstreamUrl};

pub use environment::{unknown_variables, value_error_source};

/// A transparent reverse proxy that validates A2A traffic.
#[derive(Debug, Parser)]
#[command(
    name = "a2a-tap",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Flags of `serve`, accepted without the word `serve`.
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the proxy (the default).
    Serve(ServeArgs),
    /// Validate recorded traffic offline.
    Check(CheckArgs),
    /// Run the conformance checks against a live agent.
    Probe(ProbeArgs),
    /// Configuration tools.
    #[command(subcommand)]
    Config(ConfigCommand),
}

/// `a2a-tap config ...`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate the configuration (file, environment and flags) and print
    /// the effective one; exit 2 naming every problem. Nothing is bound.
    Check(ServeArgs),
}

/// Flags of `serve`; each overrides the config file's key of the same name.
#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// TOML config file (see config.toml.example).
    #[arg(long, value_name = "FILE", env = "A2A_TAP_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address callers connect to, e.g. 127.0.0.1:8080.
    #[arg(long, value_name = "ADDR", env = "A2A_TAP_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// The agent behind the proxy, e.g. http://127.0.0.1:9999.
    #[arg(long, value_name = "URL", env = "A2A_TAP_UPSTREAM")]
    pub upstream: Option<UpstreamUrl>,
    /// Admin address for /metrics, /healthz, /readyz [default: 127.0.0.1:9464].
    #[arg(long, value_name = "ADDR", env = "A2A_TAP_ADMIN")]
    pub admin: Option<SocketAddr>,
    /// Audit log file (appended), or - for stdout [default: -].
    #[arg(long, value_name = "PATH|-", env = "A2A_TAP_AUDIT_LOG")]
    pub audit_log: Option<String>,
    /// Label of the upstream in metrics and audit records [default: upstream host:port].
    #[arg(long, value_name = "NAME", env = "A2A_TAP_NAME")]
    pub name: Option<String>,
    /// Format of the proxy's own log lines [default: text].
    #[arg(long, value_enum, value_name = "FORMAT", env = "A2A_TAP_LOG_FORMAT")]
    pub log_format: Option<LogFormatArg>,
    /// Log filter: a level (info, debug...) or target=level directives,
    /// comma-separated [default: info]; RUST_LOG, when set, wins.
    #[arg(long, value_name = "FILTER", env = "A2A_TAP_LOG_LEVEL")]
    pub log_level: Option<Level>,
    /// Serving threads [default: one per CPU the process may use].
    #[arg(long, value_name = "N", env = "A2A_TAP_THREADS",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Rewrite the agent card's interface URLs to --public-url, so clients
    /// that follow the card come back through the proxy (an opt-in
    /// alteration of traffic) [default: false]; `--rewrite-agent-card=false`
    /// turns off what the file turned on.
    #[arg(long, value_name = "BOOL", env = "A2A_TAP_REWRITE_AGENT_CARD",
          num_args = 0..=1, default_missing_value = "true", require_equals = true,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub rewrite_agent_card: Option<bool>,
    /// The proxy's own public base URL, which rewritten cards name, e.g.
    /// https://agents.example.com (required with --rewrite-agent-card).
    #[arg(long, value_name = "URL", env = "A2A_TAP_PUBLIC_URL")]
    pub public_url: Option<UpstreamUrl>,
}

/// `--log-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormatArg {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Output format of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// Human-readable lines.
    Text,
    /// JSON Lines, one record per finding.
    Json,
    /// JUnit XML: one test case per file, failed by error findings.
    Junit,
    /// SARIF 2.1.0: one result per finding.
    Sarif,
    /// One self-contained HTML page (no network, no external assets): a
    /// summary, then each exchange's timeline of events with its findings
    /// marked on the event they rest on; agent text escaped.
    Html,
}

/// Flags of `check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// TOML config file: its `[severity]`, `[analysis]`, `[audit]`,
    /// `[registry]` and `[stall]` apply offline as live.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,
    /// Recorded traffic files.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

/// Output format of `probe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProbeFormat {
    /// Human-readable report.
    Text,
    /// One JSON document: every check, its evidence, the findings.
    Json,
    /// JUnit XML: a test suite per interface, a test case per check.
    Junit,
    /// SARIF 2.1.0: a result per failed check and per finding.
    Sarif,
    /// One self-contained HTML page (no network, no external assets): the
    /// checks with their reasons, then each exchange's timeline of events
    /// with its findings marked on the event they rest on; agent text
    /// escaped.
    Html,
}

/// Flags of `probe`.
#[derive(Debug, Clone, Args)]
pub struct ProbeArgs {
    /// TOML config file: its `[severity]`, `[analysis]`, `[audit]`,
    /// `[registry]` and `[stall]` apply to the probe's own traffic as live.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ProbeFormat,
    /// The text of every message the probe sends.
    #[arg(long, value_name = "TEXT", default_value = crate::probe::DEFAULT_MESSAGE)]
    pub message: String,
    /// The agent's base URL (its card is then at
    /// /.well-known/agent-card.json under it) or its card URL (a path
    /// ending in .json); http or https.
    #[arg(value_name = "URL", value_parser = probe_url)]
    pub url: String,
}

fn probe_url(text: &str) -> Result<String, crate::probe::UrlError> {
    crate::probe::check_url(text).map(|()| text.to_owned())
}

// === impl ServeArgs ===

impl ServeArgs {
    /// Applies the flags given on top of `config` (flags win).
    pub fn apply(&self, config: &mut Config) {
        if let Some(listen) = self.listen {
            config.listen = Some(listen);
        }
        if let Some(upstream) = &self.upstream {
            config.upstream = Some(upstream.clone());
        }
        if let Some(admin) = self.admin {
            config.admin = admin;
        }
        if let Some(path) = &self.audit_log {
            config.audit_log = path.clone();
        }
        if let Some(name) = &self.name {
            config.name = Some(name.clone());
        }
        if let Some(format) = self.log_format {
            config.log.format = match format {
                LogFormatArg::Text => LogFormat::Text,
                LogFormatArg::Json => LogFormat::Json,
            };
        }
        if let Some(level) = &self.log_level {
            config.log.level = level.clone();
        }
        if let Some(threads) = self.threads {
            config.proxy.threads = usize::from(threads);
        }
        if let Some(rewrite) = self.rewrite_agent_card {
            config.rewrite_agent_card = rewrite;
        }
        if let Some(url) = &self.public_url {
            config.public_url = Some(url.clone());
        }
        // A secret: from the environment (over the file), never a flag.
        if let Some(key) = std::env::var(crate::config::SHARED_KEY_ENV)
            .ok()
            .filter(|k| !k.is_empty())
        {
            config.registry.shared_key = Some(key.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("a2a-tap").chain(args.iter().copied()))
    }

    #[test]
    fn serve_is_the_default() {
        let cli = parse(&[
            "--listen",
            "127.0.0.1:8080",
            "--upstream",
            "http://127.0.0.1:9999",
        ])
        .expect("parses");
        assert!(cli.command.is_none());
        let mut config = Config::default();
        cli.serve.apply(&mut config);
        config.validate().expect("flags alone are enough");
        assert_eq!(config.admin.to_string(), "127.0.0.1:9464");
    }

    #[test]
    fn explicit_serve_and_check() {
        let cli = parse(&["serve", "--upstream", "https://a.example", "--name", "a"]).expect("ok");
        assert!(
            matches!(cli.command, Some(Command::Serve(ref s)) if s.name.as_deref() == Some("a"))
        );
        let cli = parse(&["check", "--format", "json", "x.sse", "y.jsonl"]).expect("ok");
        match cli.command {
            Some(Command::Check(c)) => {
                assert_eq!(c.format, CheckFormat::Json);
                assert_eq!(c.files.len(), 2);
            }
            other => panic!("expected check, got {other:?}"),
        }
    }

    #[test]
    fn bad_values_name_the_flag() {
        let err = parse(&["--listen", "nowhere"]).expect_err("bad addr");
        assert!(err.to_string().contains("--listen"), "{err}");
        let err = parse(&["--upstream", "ftp://x"]).expect_err("bad url");
        assert!(err.to_string().contains("--upstream"), "{err}");
        assert!(parse(&["check"]).is_err());
        let err = parse(&["probe", "ftp://x"]).expect_err("bad url");
        assert!(err.to_string().contains("<URL>"), "{err}");
        let err = parse(&["probe", "--format", "xml", "http://x"]).expect_err("bad format");
        assert!(err.to_string().contains("--format"), "{err}");
    }

    #[test]
    fn flags_override_the_file() {
        let mut config: Config = "listen = \"127.0.0.1:1\"\nname = \"file\"\n"
            .parse()
            .expect("ok");
        let cli = parse(&["--listen", "127.0.0.1:2", "--name", "flag"]).expect("ok");
        cli.serve.apply(&mut config);
        assert_eq!(config.listen.map(|a| a.port()), Some(2));
        assert_eq!(config.name.as_deref(), Some("flag"));
    }
}
