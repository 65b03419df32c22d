//! The `a2a-tap` binary: parses the command line and runs the library's
//! app (serve) or check; signals and exit codes live here.
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use a2a_tap::app::{App, Options};
use a2a_tap::cli::{
    CheckArgs, CheckFormat, Cli, Command, ConfigCommand, ProbeArgs, ProbeFormat, ServeArgs,
};
use a2a_tap::config::{Config, ConfigError, Level, LogFormat};
use a2a_tap::report::log_queue::{Admit, Drain, LogQueue};
use a2a_tap::report::Metrics;
use a2a_tap::server;
use tokio::signal::unix::{signal, Signal, SignalKind};

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(err) => {
            // A bad value from A2A_TAP_<FLAG> is named as the variable.
            let vars: Vec<_> = std::env::vars_os().collect();
            if let Some(text) = a2a_tap::cli::value_error_source(&err, &argv, &vars) {
                eprint!("{text}");
                return ExitCode::from(2);
            }
            err.exit()
        }
    };
    match cli.command {
        Some(Command::Check(args)) => check(args),
        Some(Command::Probe(args)) => probe(args),
        Some(Command::Serve(args)) => serve(&args),
        Some(Command::Config(ConfigCommand::Check(args))) => config_check(&args),
        None => serve(&cli.serve),
    }
}

/// `a2a-tap config check`: every problem on stderr and exit 2, or the
/// effective configuration on stdout and exit 0. Nothing is bound.
fn config_check(args: &ServeArgs) -> ExitCode {
    let config = match load_config(args) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("a2a-tap config check: {e}");
            return ExitCode::from(2);
        }
    };
    let effective = match toml::to_string(&config) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("a2a-tap config check: cannot print the configuration: {e}");
            return ExitCode::from(3);
        }
    };
    for warning in config.warnings().into_iter().chain(environment_warnings()) {
        eprintln!("a2a-tap config check: warning: {warning}");
    }
    println!(
        "# a2a-tap {}: the effective configuration (defaults filled in)",
        env!("CARGO_PKG_VERSION")
    );
    print!("{effective}");
    ExitCode::SUCCESS
}

/// `a2a-tap check`: validate recorded traffic offline.
fn check(args: CheckArgs) -> ExitCode {
    let format = match args.format {
        CheckFormat::Text => a2a_tap::check::Format::Text,
        CheckFormat::Json => a2a_tap::check::Format::Json,
        CheckFormat::Junit => a2a_tap::check::Format::Junit,
        CheckFormat::Sarif => a2a_tap::check::Format::Sarif,
        CheckFormat::Html => a2a_tap::check::Format::Html,
    };
    let settings = match offline_settings(args.config.as_deref(), "check") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let code = a2a_tap::check::run(format, &args.files, &settings);
    ExitCode::from(code as u8)
}

/// The `[severity]`, `[analysis]`, `[audit]`, `[registry]` and `[stall]` settings `check` and
/// `probe` judge by, from `--config` (else the defaults); a bad file is
/// exit 2, named under `command`.
fn offline_settings(
    config: Option<&std::path::Path>,
    command: &str,
) -> Result<a2a_tap::check::Settings, ExitCode> {
    config
        .map(Config::from_file)
        .transpose()
        .and_then(|c| a2a_tap::check::Settings::from_config(&c.unwrap_or_default()))
        .map_err(|e| {
            eprintln!("a2a-tap {command}: {e}");
            ExitCode::from(2)
        })
}

/// `a2a-tap probe`: the conformance checks against a live agent.
fn probe(args: ProbeArgs) -> ExitCode {
    use a2a_tap::probe::Format;
    let format = match args.format {
        ProbeFormat::Text => Format::Text,
        ProbeFormat::Json => Format::Json,
        ProbeFormat::Junit => Format::Junit,
        ProbeFormat::Sarif => Format::Sarif,
        ProbeFormat::Html => Format::Html,
    };
    let settings = match offline_settings(args.config.as_deref(), "probe") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let options = a2a_tap::probe::Options {
        url: args.url,
        message: args.message,
        format,
        settings,
    };
    ExitCode::from(a2a_tap::probe::run(&options) as u8)
}

fn serve(args: &ServeArgs) -> ExitCode {
    let config = match load_config(args) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("a2a-tap: {e}");
            return ExitCode::from(2);
        }
    };
    let (log_guard, log_dropped) = init_tracing(&config);
    for warning in config.warnings().into_iter().chain(environment_warnings()) {
        tracing::warn!("{warning}");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("a2a-tap: cannot start the runtime: {e}");
            return ExitCode::from(3);
        }
    };
    let code = runtime.block_on(run(&config, log_dropped));
    drop(runtime);
    // The last lines (the "stopped" one) are written before exit.
    drop(log_guard);
    code
}

/// Serves until SIGTERM/SIGINT, then drains (see `App::shutdown`).
async fn run(config: &Config, log_dropped: LogDrops) -> ExitCode {
    let metrics = match Metrics::new()
        .and_then(|m| m.count_log_drops(move || log_dropped.total()).map(|()| m))
    {
        Ok(m) => Arc::new(m),
        Err(e) => {
            eprintln!("a2a-tap: cannot set up metrics: {e}");
            return ExitCode::from(3);
        }
    };
    // Registered before the listeners open, so no SIGHUP, SIGTERM or SIGINT
    // can find the default (fatal) action in place.
    let hup = signal(SignalKind::hangup()).ok();
    // A file size limit (RLIMIT_FSIZE) reached by the audit log must fail
    // that write (EFBIG, counted), not kill the proxy: SIGXFSZ is caught.
    let _xfsz = signal(SignalKind::from_raw(rustix::process::Signal::XFSZ.as_raw()))
        .map_err(|e| tracing::warn!(error = %e, "cannot catch SIGXFSZ"))
        .ok();
    let stop = server::shutdown_signal();
    let options = Options {
        metrics: Some(metrics),
        ..Options::default()
    };
    let app = match App::start_with(config, options).await {
        Ok(app) => Arc::new(app),
        Err(e) => {
            eprintln!("a2a-tap: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    // Always handled: SIGHUP's default action would kill the proxy (systemd's
    // ExecReload sends it even when there is no audit log to reopen).
    let reopen = tokio::spawn(reopen_on_sighup(hup, app.clone()));
    stop.await;
    tracing::info!("shutdown requested");
    // A second signal ends the drain at once.
    let stopper = app.stopper();
    let second = tokio::spawn(async move {
        server::shutdown_signal().await;
        tracing::warn!("second signal: stopping now");
        stopper.stop_now();
    });
    reopen.abort();
    let _ = reopen.await;
    match Arc::try_unwrap(app) {
        Ok(app) => app.shutdown().await,
        Err(_) => tracing::error!("the app is still shared at shutdown"),
    }
    second.abort();
    tracing::info!("stopped");
    ExitCode::SUCCESS
}

/// The `A2A_TAP_*` variables set that no flag reads (a typo is otherwise
/// ignored silently).
fn environment_warnings() -> Vec<String> {
    let vars: Vec<_> = std::env::vars_os().collect();
    a2a_tap::cli::unknown_variables(&vars)
}

/// Reopens the audit log on every SIGHUP (logrotate: rename, then signal).
async fn reopen_on_sighup(hup: Option<Signal>, app: Arc<App>) {
    let Some(mut hup) = hup else {
        tracing::warn!("cannot listen for SIGHUP: the audit log will not be reopened");
        return;
    };
    while hup.recv().await.is_some() {
        if app.reopen_audit() {
            tracing::info!("SIGHUP: reopening the audit log");
        } else {
            tracing::info!("SIGHUP: no audit log to reopen (validate = false)");
        }
    }
}

/// The config file, then the environment and flags over it, validated;
/// `RUST_LOG`, which overrides `[log] level`, is checked too.
fn load_config(args: &ServeArgs) -> Result<Config, ConfigError> {
    // Every type error of the file, and then what the keys that read give.
    let mut parsed = match &args.config {
        Some(path) => Config::from_file_all(path)?,
        None => a2a_tap::config::parse::Parsed {
            config: Some(Config::default()),
            problems: Vec::new(),
            set_aside: Vec::new(),
        },
    };
    let Some(mut config) = parsed.config.take() else {
        return Err(one_or_all(parsed.problems));
    };
    let mut problems = std::mem::take(&mut parsed.problems);
    args.apply(&mut config);
    let found = match config.validate() {
        Ok(()) => Vec::new(),
        Err(ConfigError::Problems(all)) => all,
        Err(e) => vec![e],
    };
    problems.extend(found.into_iter().filter(|p| !parsed.repeats(p)));
    if let Ok(filter) = std::env::var("RUST_LOG") {
        if let Err(why) = filter.parse::<Level>() {
            problems.push(ConfigError::Invalid {
                key: "RUST_LOG (environment)".to_string(),
                why: why.to_string(),
            });
        }
    }
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(one_or_all(problems))
    }
}

/// One problem as itself, several as a list.
fn one_or_all(mut problems: Vec<ConfigError>) -> ConfigError {
    if problems.len() == 1 {
        problems.remove(0)
    } else {
        ConfigError::Problems(problems)
    }
}

/// Log lines queued for stderr at most, and their bytes; past either,
/// lines are dropped and counted rather than making a serving thread wait
/// for a stuck reader.
const LOG_QUEUE_LINES: usize = 8192;
const LOG_QUEUE_BYTES: usize = 8 << 20;

/// Starts logging to stderr through a bounded non-blocking writer; the
/// guard flushes what is queued when dropped, the counter counts drops.
fn init_tracing(config: &Config) -> (tracing_appender::non_blocking::WorkerGuard, LogDrops) {
    use tracing_subscriber::EnvFilter;
    // Both were checked by `load_config`.
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.log.level.0))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    use std::io::IsTerminal;
    let queue = LogQueue::new(LOG_QUEUE_LINES, LOG_QUEUE_BYTES);
    // The appender's own bound is above the queue's: the queue decides.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(LOG_QUEUE_LINES * 2)
        .thread_name("a2a-tap-log")
        .finish(Drain {
            inner: std::io::stderr(),
            queue: queue.clone(),
        });
    let drops = LogDrops {
        queue: queue.clone(),
        appender: writer.error_counter(),
    };
    let writer = Admit {
        inner: writer,
        queue,
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(writer);
    match config.log.format {
        // Fields at the top level of each line, not under `fields`: log
        // shippers index them as they are.
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
    (guard, drops)
}

/// Log lines dropped: by the queue's bounds, and (never, while its bound
/// is above the queue's) by the appender.
struct LogDrops {
    queue: Arc<LogQueue>,
    appender: tracing_appender::non_blocking::ErrorCounter,
}

impl LogDrops {
    fn total(&self) -> u64 {
        self.queue.dropped() + self.appender.dropped_lines() as u64
    }
}
