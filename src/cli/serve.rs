//! `a2a-tap serve`: logging set up, the runtime started, the app run
//! until SIGTERM/SIGINT and drained; SIGHUP reopens the audit log and
//! re-reads the routes and severities.

use std::process::ExitCode;
use std::sync::Arc;

use tokio::signal::unix::{signal, Signal, SignalKind};

use super::load::{environment_warnings, load_config};
use super::ServeArgs;
use crate::app::{App, Options};
use crate::config::{Config, LogFormat};
use crate::report::log_queue::{Admit, Drain, LogQueue};
use crate::report::Metrics;
use crate::server;

/// `a2a-tap serve` (and no subcommand): exit 0 after a drain, 2 on a bad
/// configuration, 3 when the runtime or the app cannot start (or what the
/// app's start error says).
pub fn serve(args: &ServeArgs) -> ExitCode {
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
    let code = runtime.block_on(run(&config, args, log_dropped));
    drop(runtime);
    // The last lines (the "stopped" one) are written before exit.
    drop(log_guard);
    code
}

/// Serves until SIGTERM/SIGINT, then drains (see `App::shutdown`).
async fn run(config: &Config, args: &ServeArgs, log_dropped: LogDrops) -> ExitCode {
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
    let reopen = tokio::spawn(reopen_on_sighup(hup, app.clone(), args.clone()));
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

/// On every SIGHUP, reopens the audit log (logrotate: rename, then
/// signal) and re-reads the config (file, environment, flags) for its
/// routes and severities; a bad config is logged and the routes in use
/// kept.
async fn reopen_on_sighup(hup: Option<Signal>, app: Arc<App>, args: ServeArgs) {
    let Some(mut hup) = hup else {
        tracing::warn!(
            "cannot listen for SIGHUP: the audit log will not be reopened, nor the config re-read"
        );
        return;
    };
    while hup.recv().await.is_some() {
        if app.reopen_audit() {
            tracing::info!("SIGHUP: reopening the audit log");
        } else {
            tracing::info!("SIGHUP: no audit log to reopen (validate = false)");
        }
        // Reading and checking the file blocks: off the runtime's threads.
        let read = {
            let args = args.clone();
            tokio::task::spawn_blocking(move || load_config(&args)).await
        };
        let done = match read {
            Ok(Ok(config)) => app.reload(&config).map(|()| config.route_specs().len()),
            Ok(Err(e)) => {
                app.metrics().config_reloads_total.with("error").inc();
                Err(crate::app::AppError::Config(e))
            }
            Err(e) => {
                app.metrics().config_reloads_total.with("error").inc();
                tracing::error!(error = %e, "SIGHUP: the config could not be read");
                continue;
            }
        };
        match done {
            Ok(routes) => tracing::info!(routes, "SIGHUP: config reloaded: the new routes serve"),
            Err(e) => tracing::error!(
                error = %e,
                "SIGHUP: the config was not reloaded: the routes in use are kept"
            ),
        }
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
