//! Listeners and lifecycle: the proxy port (HTTP/1.1 and h2c on one port),
//! whose connections are served by one thread per core, the admin port, the
//! upstream probe, and graceful shutdown (readiness false, stop accepting,
//! drain up to the grace period, then close).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use crate::admin::{self, Readiness};
use crate::config::Config;
use crate::limits::{self, Plan};
use crate::proxy::activity::{Activity, Closed, Deadlines, Verdict};
use crate::proxy::client::ClientError;
use crate::proxy::inspect::{OTHER_METHOD, UNKNOWN_BINDING};
use crate::proxy::{Forwarder, Inspector};
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
    done: JoinHandle<()>,
}

// === impl ServerHandle ===

impl ServerHandle {
    /// The proxy's bound address.
    pub fn listen_addr(&self) -> SocketAddr {
        self.listen
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

    /// Waits until the server has stopped (after [`ServerHandle::shutdown`]).
    pub async fn wait(self) {
        if let Err(e) = self.done.await {
            tracing::error!(error = %e, "server task failed");
        }
    }
}

/// Binds both listeners and starts serving. `inspector` sees every exchange;
/// pass `None` for a plain pass-through (`validate = false`). Dropping the
/// handle without calling [`ServerHandle::shutdown`] also shuts down.
pub async fn start(
    config: &Config,
    inspector: Option<Arc<dyn Inspector>>,
) -> Result<ServerHandle, StartError> {
    start_with(config, Arc::new(Metrics::new()?), inspector).await
}

/// Like [`start`], reporting into `metrics` (shared with the validation
/// layer, so one registry holds every metric).
pub async fn start_with(
    config: &Config,
    metrics: Arc<Metrics>,
    inspector: Option<Arc<dyn Inspector>>,
) -> Result<ServerHandle, StartError> {
    let listen_addr = config.listen.ok_or(StartError::Missing("listen"))?;
    let upstream = config
        .upstream
        .clone()
        .ok_or(StartError::Missing("upstream"))?;
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

    metrics.init_upstream(&config.upstream_name());
    let plan = Plan::new(
        config.proxy.max_connections,
        config.proxy.max_upstream_connections,
        limits::raise_nofile(),
    );
    if plan.lowered {
        tracing::warn!(
            nofile = plan.nofile,
            callers = plan.callers,
            upstream_connections = plan.upstream_leases,
            "RLIMIT_NOFILE is too low for proxy.max_connections and proxy.max_upstream_connections: \
             serving fewer, to keep descriptors for the admin port and the audit log \
             (raise LimitNOFILE / ulimit -n)"
        );
    }
    let slots = plan.upstream_slots();
    // One forwarder (and upstream pool) per serving thread: a connection,
    // its exchanges and their upstream connections stay on one thread.
    let (drain, drain_rx) = watch::channel(false);
    let (kill, kill_rx) = watch::channel(false);
    let count = serving_threads();
    let mut threads = Vec::with_capacity(count);
    for i in 0..count {
        let budget = (slots.clone(), (plan.upstream_idle / count).max(1));
        let forwarder = Forwarder::new(
            config,
            &upstream,
            metrics.clone(),
            inspector.clone(),
            budget,
        )?
        .with_ids(i as u64 + 1, count as u64);
        let conn = Conn {
            builder: caller_builder(
                config.proxy.header_read_timeout.0,
                config.proxy.max_concurrent_streams,
            ),
            forwarder: Arc::new(forwarder),
            metrics: metrics.clone(),
            upstream: config.upstream_name().into(),
            drain: drain_rx.clone(),
            kill: kill_rx.clone(),
            deadlines: Deadlines {
                header_read: config.proxy.header_read_timeout.0,
                idle: config.proxy.idle_timeout.0,
                write: config.proxy.write_timeout.0,
            },
        };
        let thread =
            ServingThread::start(i, conn).map_err(|source| StartError::Thread { source })?;
        threads.push(thread);
    }
    let readiness = Arc::new(Readiness::default());
    let timeout = config.proxy.connect_timeout.0;
    let (host, port) = (upstream.host().to_string(), upstream.port());
    readiness.set_upstream_ok(admin::probe(&host, port, timeout).await);

    let (shutdown, shutdown_rx) = watch::channel(false);
    let (stop_probe, stop_probe_rx) = watch::channel(false);
    tokio::spawn(admin::probe_loop(
        readiness.clone(),
        host,
        port,
        timeout,
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
        accept_errors: metrics.accept_errors_total.with_label_values(&["proxy"]),
        drain,
        kill,
        max_connections: plan.callers.clamp(1, u32::MAX as usize / 2),
        grace: config.proxy.grace_period.0,
    };
    let done = tokio::spawn({
        let readiness = readiness.clone();
        async move {
            lifecycle.run(listener, readiness, shutdown_rx).await;
            stop_probe.send_replace(true);
            stop_admin.send_replace(true);
            let _ = admin_task.await;
        }
    });
    tracing::info!(%listen, %admin, upstream = %upstream, "a2a-tap serving");
    Ok(ServerHandle {
        listen,
        admin,
        metrics,
        readiness,
        shutdown,
        done,
    })
}

/// Threads that serve caller connections: one per core.
fn serving_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The proxy port's accept loop and drain, and the threads it hands
/// connections to.
struct Lifecycle {
    threads: Vec<ServingThread>,
    /// `a2a_accept_errors_total{listener="proxy"}`.
    accept_errors: prometheus::IntCounter,
    /// Raised at shutdown: connections finish their exchanges and close.
    drain: watch::Sender<bool>,
    /// Raised after the grace period: connections close at once.
    kill: watch::Sender<bool>,
    max_connections: usize,
    grace: Duration,
}

impl Lifecycle {
    async fn run(
        self,
        listener: TcpListener,
        readiness: Arc<Readiness>,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let Lifecycle {
            mut threads,
            accept_errors,
            drain,
            kill,
            max_connections,
            grace,
        } = self;
        let slots = Arc::new(Semaphore::new(max_connections));
        let mut next = 0usize;
        let mut backoff = AcceptBackoff::default();

        loop {
            if threads.is_empty() {
                tracing::error!("no serving thread left: stopping");
                break;
            }
            let permit = tokio::select! {
                _ = raised(&mut shutdown) => break,
                p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            };
            let (stream, peer) = tokio::select! {
                _ = raised(&mut shutdown) => break,
                accepted = listener.accept() => match accepted {
                    Ok(a) => {
                        backoff.reset();
                        a
                    }
                    Err(e) => {
                        // Out of descriptors and the like: back off, keep serving.
                        backoff.failed(&e, &accept_errors, "accept failed");
                        tokio::select! {
                            _ = raised(&mut shutdown) => break,
                            _ = tokio::time::sleep(backoff.delay()) => continue,
                        }
                    }
                },
            };
            let stream = match stream.into_std() {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot hand over an accepted connection");
                    continue;
                }
            };
            let mut accepted = Accepted {
                stream,
                peer,
                permit,
            };
            // Round robin; a thread that has stopped (it never should) is
            // dropped and the next one takes the connection.
            while !threads.is_empty() {
                next = (next + 1) % threads.len();
                match threads[next].tx.send(accepted) {
                    Ok(()) => break,
                    Err(mpsc::error::SendError(back)) => {
                        tracing::error!("a serving thread has stopped");
                        threads.remove(next);
                        accepted = back;
                    }
                }
            }
        }

        readiness.set_draining();
        drop(listener);
        tracing::info!(?grace, "draining: no longer accepting");
        drain.send_replace(true);
        let all = max_connections as u32;
        let drained = tokio::time::timeout(grace, slots.acquire_many(all)).await;
        if drained.is_err() {
            tracing::warn!("grace period over: closing the remaining connections");
            kill.send_replace(true);
            let _ = tokio::time::timeout(CLOSE_WAIT, slots.acquire_many(all)).await;
        }
        for t in threads {
            t.stop().await;
        }
        tracing::info!("stopped");
    }
}

/// An accepted caller connection on its way to a serving thread.
struct Accepted {
    stream: std::net::TcpStream,
    peer: SocketAddr,
    permit: OwnedSemaphorePermit,
}

/// A thread with its own single-threaded runtime that serves the
/// connections handed to it: each connection, its exchanges and their
/// upstream connections run on one thread, so no wake-up crosses threads.
struct ServingThread {
    tx: mpsc::UnboundedSender<Accepted>,
    done: oneshot::Receiver<()>,
}

impl ServingThread {
    fn start(index: usize, conn: Conn) -> std::io::Result<ServingThread> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (tx, mut rx) = mpsc::unbounded_channel::<Accepted>();
        let (done_tx, done) = oneshot::channel();
        let conn = Arc::new(conn);
        std::thread::Builder::new()
            .name(format!("a2a-tap-serve-{index}"))
            .spawn(move || {
                runtime.block_on(async move {
                    // Idle pooled connections close on time, traffic or not.
                    let reaper = tokio::spawn({
                        let forwarder = conn.forwarder.clone();
                        async move {
                            let mut every = tokio::time::interval(REAP_EVERY);
                            loop {
                                every.tick().await;
                                forwarder.reap_idle();
                            }
                        }
                    });
                    while let Some(a) = rx.recv().await {
                        let stream = match TcpStream::from_std(a.stream) {
                            Ok(s) => s,
                            Err(e) => {
                                tracing::warn!(error = %e, "cannot serve an accepted connection");
                                continue;
                            }
                        };
                        let conn = conn.clone();
                        tokio::spawn(async move {
                            conn.serve(stream, a.peer).await;
                            drop(a.permit);
                        });
                    }
                    reaper.abort();
                });
                drop(runtime);
                let _ = done_tx.send(());
            })?;
        Ok(ServingThread { tx, done })
    }

    /// Lets the thread end once its connections have (call after the
    /// drain), and waits for it.
    async fn stop(self) {
        drop(self.tx);
        let _ = self.done.await;
    }
}

/// The HTTP/1.1 and h2c server settings for caller connections. hyper
/// adds no `Date` header: answers go out with the upstream's headers as
/// they came (a gRPC trailers-only answer too). A connection's read buffer
/// stays at most 64 KiB (hyper's default lets it grow to ~400 KiB, kept
/// for the connection's life). h2 callers are pinged while they have
/// streams open, and dropped when a ping goes unanswered.
fn caller_builder(header_read_timeout: Duration, max_streams: u32) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .max_buf_size(64 * 1024)
        .auto_date_header(false);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(max_streams)
        .keep_alive_interval(H2_PING_INTERVAL)
        .keep_alive_timeout(H2_PING_TIMEOUT)
        .auto_date_header(false);
    builder
}

/// One serving thread's context for caller connections.
struct Conn {
    builder: auto::Builder<TokioExecutor>,
    forwarder: Arc<Forwarder>,
    metrics: Arc<Metrics>,
    upstream: Arc<str>,
    /// Raised at shutdown: finish the exchange in progress, then close.
    drain: watch::Receiver<bool>,
    /// Raised after the grace period: close at once.
    kill: watch::Receiver<bool>,
    /// The deadlines of every connection state.
    deadlines: Deadlines,
}

impl Conn {
    async fn serve(&self, stream: TcpStream, peer: SocketAddr) {
        let (mut drain, mut kill) = (self.drain.clone(), self.kill.clone());
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "set_nodelay failed");
        }
        let activity = Arc::new(Activity::new(Instant::now()));
        let forwarder = self.forwarder.clone();
        let on_conn = activity.clone();
        let service = service_fn(move |req| {
            let forwarder = forwarder.clone();
            let activity = Some(on_conn.clone());
            async move { Ok::<_, Infallible>(forwarder.handle(req, peer, activity).await) }
        });
        let conn = self.builder.serve_connection(TokioIo::new(stream), service);
        tokio::pin!(conn);
        let mut wait = Duration::ZERO;
        let result = loop {
            tokio::select! {
                r = conn.as_mut() => break r,
                _ = raised(&mut drain) => {
                    conn.as_mut().graceful_shutdown();
                    break tokio::select! {
                        r = conn.as_mut() => r,
                        _ = raised(&mut kill) => Ok(()),
                    };
                }
                _ = tokio::time::sleep(wait) => {
                    match activity.verdict(Instant::now(), &self.deadlines) {
                        Verdict::Wait(next) => wait = next,
                        Verdict::Close(why) => {
                            tracing::debug!(%peer, reason = why.as_str(), "closing a caller connection");
                            self.metrics
                                .connections_closed_total
                                .with_label_values(&[why.as_str()])
                                .inc();
                            if why == Closed::WriteTimeout {
                                // The caller does not read: no goodbye reaches it.
                                break Ok(());
                            }
                            conn.as_mut().graceful_shutdown();
                            break tokio::time::timeout(CLOSE_WAIT, conn.as_mut())
                                .await
                                .unwrap_or(Ok(()));
                        }
                    }
                }
            }
        };
        if let Err(e) = result {
            self.connection_error(&*e, peer);
        }
    }

    fn connection_error(
        &self,
        err: &(dyn std::error::Error + Send + Sync + 'static),
        peer: SocketAddr,
    ) {
        let hyper_err = err.downcast_ref::<hyper::Error>();
        let parse = hyper_err
            .is_some_and(|h| h.is_parse() || h.is_parse_too_large() || h.is_parse_status());
        if hyper_err.is_some_and(hyper::Error::is_timeout) {
            // hyper's own header deadline, on a later request's headers.
            tracing::debug!(%peer, "caller sent no complete request headers in time");
            self.metrics
                .connections_closed_total
                .with_label_values(&[Closed::HeaderTimeout.as_str()])
                .inc();
        } else if parse {
            // hyper answered 400 (or 431/414) itself; count it as a refused exchange.
            tracing::info!(%peer, error = %err, "malformed request from caller");
            self.metrics
                .requests_total
                .with_label_values(&[&*self.upstream, UNKNOWN_BINDING, OTHER_METHOD, "4xx"])
                .inc();
        } else {
            tracing::debug!(%peer, error = %err, "caller connection ended with an error");
        }
    }
}

/// Deadlines of admin connections: a probe or a scrape is quick.
const ADMIN_DEADLINES: Deadlines = Deadlines {
    header_read: Duration::from_secs(5),
    idle: Duration::from_secs(15),
    write: Duration::from_secs(15),
};

/// Serves the admin listener until `stop` turns true: at most
/// `limits::ADMIN_CONNECTIONS` connections at once (their descriptors are
/// kept in reserve), each with deadlines, so that silent connections to it
/// cannot stop `/healthz` answering.
async fn serve_admin(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
    mut stop: watch::Receiver<bool>,
) {
    let builder = Arc::new(auto::Builder::new(TokioExecutor::new()));
    let slots = Arc::new(Semaphore::new(limits::ADMIN_CONNECTIONS));
    let accept_errors = metrics.accept_errors_total.with_label_values(&["admin"]);
    let mut backoff = AcceptBackoff::default();
    loop {
        let permit = tokio::select! {
            _ = raised(&mut stop) => return,
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => return },
        };
        let (stream, _) = tokio::select! {
            _ = raised(&mut stop) => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => {
                    backoff.reset();
                    a
                }
                Err(e) => {
                    backoff.failed(&e, &accept_errors, "admin accept failed");
                    tokio::select! {
                        _ = raised(&mut stop) => return,
                        _ = tokio::time::sleep(backoff.delay()) => continue,
                    }
                }
            },
        };
        let (metrics, readiness, builder) = (metrics.clone(), readiness.clone(), builder.clone());
        let mut stop = stop.clone();
        tokio::spawn(async move {
            let activity = Arc::new(Activity::new(Instant::now()));
            let on_conn = activity.clone();
            let service = service_fn(move |req| {
                on_conn.begin();
                let resp = admin::answer(&req, &metrics, &readiness);
                on_conn.end();
                std::future::ready(Ok::<_, Infallible>(resp))
            });
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            let mut wait = Duration::ZERO;
            loop {
                tokio::select! {
                    _ = conn.as_mut() => break,
                    _ = raised(&mut stop) => break,
                    _ = tokio::time::sleep(wait) => match activity.verdict(Instant::now(), &ADMIN_DEADLINES) {
                        Verdict::Wait(next) => wait = next,
                        Verdict::Close(_) => break,
                    },
                }
            }
            drop(permit);
        });
    }
}

/// The accept loop's answer to failed accepts (out of descriptors, say):
/// wait longer each time, up to a second, and log at most one line every
/// ten seconds, with how many failed; every failure is counted.
#[derive(Default)]
struct AcceptBackoff {
    failures: u32,
    unlogged: u64,
    logged: Option<Instant>,
}

impl AcceptBackoff {
    fn failed(&mut self, e: &std::io::Error, counter: &prometheus::IntCounter, what: &str) {
        counter.inc();
        self.failures = self.failures.saturating_add(1);
        self.unlogged += 1;
        let now = Instant::now();
        if self
            .logged
            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(10))
        {
            tracing::warn!(error = %e, failures = self.unlogged, "{what}; backing off");
            self.logged = Some(now);
            self.unlogged = 0;
        }
    }

    fn reset(&mut self) {
        self.failures = 0;
    }

    /// 10 ms, doubling, at most 1 s.
    fn delay(&self) -> Duration {
        let exp = self.failures.saturating_sub(1).min(7);
        Duration::from_millis(10 << exp).min(Duration::from_secs(1))
    }
}

/// Resolves once the flag is (or already was) raised, or its sender is gone.
pub(crate) async fn raised(flag: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is not Send: drop it here.
    let _ = flag.wait_for(|v| *v).await.is_ok();
}

/// Watches SIGINT and SIGTERM from the moment it is called (so a signal
/// that comes while the proxy is still starting is not met by the default
/// action, which would kill it undrained); the future resolves when one
/// arrives.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let watch = |kind: SignalKind, name: &str| {
            signal(kind)
                .map_err(|e| tracing::warn!(error = %e, "cannot watch {name}"))
                .ok()
        };
        let mut term = watch(SignalKind::terminate(), "SIGTERM");
        let mut int = watch(SignalKind::interrupt(), "SIGINT");
        async move {
            tokio::select! {
                _ = arrives(term.as_mut()) => {}
                _ = arrives(int.as_mut()) => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// The next `signal`; never, for one that is not watched (its default
/// action applies).
#[cfg(unix)]
async fn arrives(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}
