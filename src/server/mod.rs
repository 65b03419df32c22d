//! Listeners and lifecycle: the proxy port (HTTP/1.1 and h2c on one port),
//! whose connections are served by one thread per core, the admin port, the
//! upstream probe, and graceful shutdown (readiness false, stop accepting,
//! drain up to the grace period, then close).
//!
//! The files: `accept` (the accept loop and the drain), `serving` (the
//! serving threads and each caller connection's deadlines, watched through
//! `woken`), `admin`
//! (`/metrics`, `/healthz`, `/readyz`, the upstream probe), `signals`.

mod accept;
pub mod admin;
mod backoff;
pub mod h1;
mod routing;
mod serving;
mod signals;
mod woken;

pub use signals::shutdown_signal;

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use self::accept::Lifecycle;
use self::admin::{serve_admin, Readiness};
use self::serving::{caller_builder, Conn, ServingThread};
use crate::config::Config;
use crate::fd_limit::{self, Plan};
use crate::proxy::activity::Deadlines;
use crate::proxy::forward::SharedRoutes;
use crate::proxy::route::{InspectorFor, RouteContext};
use crate::proxy::share::Budget;
use crate::proxy::upstream::ClientError;
use crate::proxy::{Forwarder, Inspector};
use crate::report::access::AccessLog;
use crate::report::metrics::MetricsError;
use crate::report::Metrics;

/// How long connections get to close after the grace period's forced close.
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// How often each serving thread closes its pool's expired idle
/// connections.
const REAP_EVERY: Duration = Duration::from_secs(1);
/// How often an h2 caller with open streams is pinged...
const H2_PING_INTERVAL: Duration = Duration::from_secs(30);
/// ...and how long its answer may take before the connection is dropped.
const H2_PING_TIMEOUT: Duration = Duration::from_secs(20);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The config is incomplete (call `validate()` first).
    #[error("config: `{0}` is required")]
    Missing(&'static str),
    /// A listener could not bind.
    #[error("cannot bind {what} address {addr}: {source}")]
    Bind {
        what: &'static str,
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// The upstream client could not be built.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Metrics could not be registered.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// A serving thread could not be started.
    #[error("cannot start a serving thread: {source}")]
    Thread { source: std::io::Error },
}

impl StartError {
    /// The process exit code of the contract: 2 for config, 3 for start.
    pub fn exit_code(&self) -> i32 {
        match self {
            StartError::Missing(_) | StartError::Client(_) => 2,
            StartError::Bind { .. } | StartError::Metrics(_) | StartError::Thread { .. } => 3,
        }
    }
}

/// A running proxy: its addresses, metrics, and the shutdown trigger.
pub struct ServerHandle {
    listen: SocketAddr,
    admin: SocketAddr,
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
    shutdown: watch::Sender<bool>,
    now: Stopper,
    done: JoinHandle<()>,
    admin_task: AdminTask,
    threads: usize,
    /// The route table the serving threads share, and how a new one is built.
    routes: SharedRoutes,
    route_cx: RouteContext,
}

/// Ends a shutdown at once (a second signal): no more drain delay or grace
/// period. Cheap to clone.
#[derive(Clone)]
pub struct Stopper(Arc<watch::Sender<bool>>);

impl Stopper {
    /// Skips what is left of the drain delay and the grace period.
    pub fn stop_now(&self) {
        self.0.send_replace(true);
    }

    /// Whether the shutdown was told to end at once.
    pub fn stopped_now(&self) -> bool {
        *self.0.borrow()
    }
}

// === impl ServerHandle ===

impl ServerHandle {
    /// The proxy's bound address.
    pub fn listen_addr(&self) -> SocketAddr {
        self.listen
    }

    /// How many serving threads serve caller connections.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The admin listener's bound address.
    pub fn admin_addr(&self) -> SocketAddr {
        self.admin
    }

    /// The metrics of this server.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The readiness state served at `/readyz`.
    pub fn readiness(&self) -> &Arc<Readiness> {
        &self.readiness
    }

    /// Begins graceful shutdown; returns at once.
    pub fn shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    /// What ends a shutdown at once.
    pub fn stopper(&self) -> Stopper {
        self.now.clone()
    }

    /// Waits until the server has stopped (after [`ServerHandle::shutdown`]);
    /// the admin listener still serves until the returned task is stopped.
    pub async fn wait(self) -> AdminTask {
        if let Err(e) = self.done.await {
            tracing::error!(error = %e, "server task failed");
        }
        self.admin_task
    }
}

/// The admin listener, kept serving after the proxy's listener has stopped
/// so that what the end of a shutdown counts (connections cut at the end
/// of the grace period, records dropped at the flush) can still be scraped
/// until the process exits. Dropped, it stops too.
pub struct AdminTask {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl AdminTask {
    /// Stops the admin listener and waits for it.
    pub async fn stop(self) {
        self.stop.send_replace(true);
        let _ = self.task.await;
    }
}

/// Binds both listeners and starts serving. `inspector` sees every exchange;
/// pass `None` for a plain pass-through (`validate = false`). Dropping the
/// handle without calling [`ServerHandle::shutdown`] also shuts down.
pub async fn start(
    config: &Config,
    inspector: Option<Arc<dyn Inspector>>,
) -> Result<ServerHandle, StartError> {
    let inspector_for: InspectorFor = Arc::new(move |_| inspector.clone());
    start_with(config, Arc::new(Metrics::new()?), inspector_for, None).await
}

/// Like [`start`], reporting into `metrics` (shared with the validation
/// layer, so one registry holds every metric).
pub async fn start_with(
    config: &Config,
    metrics: Arc<Metrics>,
    inspector_for: InspectorFor,
    access: Option<AccessLog>,
) -> Result<ServerHandle, StartError> {
    let listen_addr = config.listen.ok_or(StartError::Missing("listen"))?;
    let specs = config.route_specs();
    if specs.is_empty() {
        return Err(StartError::Missing("upstream"));
    }
    let bind = |what: &'static str, addr: SocketAddr| async move {
        TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Bind { what, addr, source })
    };
    let listener = bind("listen", listen_addr).await?;
    let admin_listener = bind("admin", config.admin).await?;
    let local = |l: &TcpListener, what, addr| {
        l.local_addr()
            .map_err(|source| StartError::Bind { what, addr, source })
    };
    let listen = local(&listener, "listen", listen_addr)?;
    let admin = local(&admin_listener, "admin", config.admin)?;

    for spec in &specs {
        routing::init_series(&metrics, &spec.name);
    }
    let plan = Plan::new(
        config.proxy.max_connections,
        config.proxy.max_upstream_connections,
        fd_limit::raise_nofile(),
    );
    match plan.nofile_line() {
        Some((true, line)) => tracing::warn!("{line}"),
        Some((false, line)) => tracing::info!("{line}"),
        None => {}
    }
    let budget = Budget::new(plan.upstream_leases);
    // One forwarder (and upstream pool) per serving thread: a connection,
    // its exchanges and their upstream connections stay on one thread.
    let (drain, drain_rx) = watch::channel(false);
    let (kill, kill_rx) = watch::channel(false);
    let count = serving_threads(config.proxy.threads);
    let route_cx = RouteContext {
        metrics: metrics.clone(),
        access: access.clone(),
        threads: count,
        idle_total: plan.upstream_idle,
        inspector_for,
    };
    let routes = routing::first_table(&specs, &route_cx)?;
    let mut threads = Vec::with_capacity(count);
    // Request ids come from one counter, in the order requests arrive.
    let ids = Arc::new(AtomicU64::new(1));
    for i in 0..count {
        let forwarder = Forwarder::new(config, routes.clone(), i).with_ids(ids.clone());
        let conn = Conn {
            builder: caller_builder(
                config.proxy.header_read_timeout.0,
                config.proxy.max_concurrent_streams,
                config.proxy.max_header_list_size,
            ),
            h1_limits: h1::conn::Limits {
                max_buf: config.proxy.max_header_list_size.max(64 * 1024),
                header_read_timeout: config.proxy.header_read_timeout.0,
            },
            forwarder: Arc::new(forwarder),
            metrics: metrics.clone(),
            drain: drain_rx.clone(),
            kill: kill_rx.clone(),
            deadlines: Deadlines {
                header_read: config.proxy.header_read_timeout.0,
                idle: config.proxy.idle_timeout.0,
                write: config.proxy.write_timeout.0,
            },
            budget: budget.clone(),
        };
        let thread =
            ServingThread::start(i, conn).map_err(|source| StartError::Thread { source })?;
        threads.push(thread);
    }
    let readiness = Arc::new(Readiness::default());
    admin::probe_routes(&readiness, &routes, &metrics, true).await;
    let (shutdown, shutdown_rx) = watch::channel(false);
    let (now, now_rx) = watch::channel(false);
    let (stop_probe, stop_probe_rx) = watch::channel(false);
    tokio::spawn(admin::probe_loop(
        readiness.clone(),
        routes.clone(),
        metrics.clone(),
        stop_probe_rx,
    ));
    let (stop_admin, stop_admin_rx) = watch::channel(false);
    let admin_task = tokio::spawn(serve_admin(
        admin_listener,
        metrics.clone(),
        readiness.clone(),
        stop_admin_rx,
    ));
    let lifecycle = Lifecycle {
        threads,
        accept_errors: metrics.accept_errors_total.with("proxy"),
        drain,
        kill,
        max_connections: plan.callers.clamp(1, u32::MAX as usize / 2),
        drain_delay: config.proxy.drain_delay.0,
        grace: config.proxy.grace_period.0,
    };
    let done = tokio::spawn({
        let readiness = readiness.clone();
        async move {
            lifecycle
                .run(listener, readiness, shutdown_rx, now_rx)
                .await;
            stop_probe.send_replace(true);
        }
    });
    Ok(ServerHandle {
        listen,
        admin,
        metrics,
        readiness,
        shutdown,
        now: Stopper(Arc::new(now)),
        done,
        admin_task: AdminTask {
            stop: stop_admin,
            task: admin_task,
        },
        threads: count,
        routes,
        route_cx,
    })
}

/// Threads that serve caller connections: one per core.
/// `threads`, or (0) one per CPU the process may use: `available_parallelism`
/// reads the cgroup's CPU quota, so a sidecar limited to one CPU serves on
/// one thread, not on every core of the node.
pub(crate) fn serving_threads(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    }
}

/// Resolves once the flag is (or already was) raised, or its sender is gone.
pub(crate) async fn raised(flag: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is not Send: drop it here.
    let _ = flag.wait_for(|v| *v).await.is_ok();
}
