//! The serving threads: each has its own single-threaded runtime and
//! serves the caller connections handed to it from start to end, with its
//! own pool of upstream connections, so no task is stolen across threads
//! and no wake-up crosses them (pingora's no-steal runtime, one per core).
//! Each connection is watched by its deadlines (`proxy::activity`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::pin::pin;

use bytes::BytesMut;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch, OwnedSemaphorePermit};

use crate::proxy::activity::{Activity, Closed, Deadlines, Verdict};
use crate::proxy::inbound::Inbound;
use crate::proxy::inspect::{OTHER_METHOD, UNKNOWN_BINDING};
use crate::proxy::share::{Budget, CallerShare};
use crate::proxy::Forwarder;
use crate::report::Metrics;

use super::h1;
use super::woken::Woken;
use super::{raised, CLOSE_WAIT, H2_PING_INTERVAL, H2_PING_TIMEOUT, REAP_EVERY};

/// A thread with its own single-threaded runtime that serves the
/// connections handed to it: each connection, its exchanges and their
/// upstream connections run on one thread, so no wake-up crosses threads.
pub(super) struct ServingThread {
    pub(super) tx: mpsc::UnboundedSender<Accepted>,
    done: oneshot::Receiver<()>,
}

impl ServingThread {
    pub(super) fn start(index: usize, conn: Conn) -> std::io::Result<ServingThread> {
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
    pub(super) async fn stop(self) {
        drop(self.tx);
        let _ = self.done.await;
    }
}

/// The HTTP/1.1 and h2c server settings for caller connections. hyper
/// adds no `Date` header: answers go out with the upstream's headers as
/// they came (a gRPC trailers-only answer too). A connection's read buffer
/// stays at most 64 KiB, or `max_header_list` when that is larger, so a
/// head the h2 side takes fits (hyper's default lets it grow to ~400 KiB,
/// kept for the connection's life). An h2 caller may send header lists of
/// `max_header_list` bytes (hyper's default, 16 KiB, refuses gRPC metadata
/// that real clients send). h2 callers are pinged while they have streams
/// open, and dropped when a ping goes unanswered.
pub(super) fn caller_builder(
    header_read_timeout: Duration,
    max_streams: u32,
    max_header_list: usize,
) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .max_buf_size(max_header_list.max(64 * 1024))
        .auto_date_header(false);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(max_streams)
        .max_header_list_size(u32::try_from(max_header_list).unwrap_or(u32::MAX))
        .keep_alive_interval(H2_PING_INTERVAL)
        .keep_alive_timeout(H2_PING_TIMEOUT)
        .auto_date_header(false);
    builder
}

/// One serving thread's context for caller connections.
pub(super) struct Conn {
    pub(super) builder: auto::Builder<TokioExecutor>,
    /// The limits of a2a-tap's own HTTP/1.1 server.
    pub(super) h1_limits: h1::conn::Limits,
    pub(super) forwarder: Arc<Forwarder>,
    pub(super) metrics: Arc<Metrics>,
    /// Raised at shutdown: finish the exchange in progress, then close.
    pub(super) drain: watch::Receiver<bool>,
    /// Raised after the grace period: close at once.
    pub(super) kill: watch::Receiver<bool>,
    /// The deadlines of every connection state.
    pub(super) deadlines: Deadlines,
    /// The upstream connections every serving thread shares; each caller
    /// connection holds at most its share.
    pub(super) budget: Arc<Budget>,
}

impl Conn {
    async fn serve(&self, stream: TcpStream, peer: SocketAddr) {
        self.metrics.connections_active.inc();
        let _open = Open(&self.metrics.connections_active);
        let (mut drain, mut kill) = (self.drain.clone(), self.kill.clone());
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "set_nodelay failed");
        }
        let activity = Arc::new(Activity::new(Instant::now()));
        let mut stream = stream;
        let mut first = BytesMut::new();
        // HTTP/1.1 callers are served by a2a-tap's own server; an h2c
        // caller (its preface) by hyper's. The watchdog bounds the wait.
        let h2 = {
            let sniffing = pin!(h1::conn::sniff(&mut stream, &mut first));
            match self.watched(sniffing, &activity, peer).await {
                Some(Ok(h2)) => h2,
                Some(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "caller connection ended before a request");
                    return;
                }
                None => return,
            }
        };
        if !h2 {
            self.serve_h1(stream, first, peer, &activity).await;
            return;
        }
        let forwarder = self.forwarder.clone();
        let on_conn = activity.clone();
        let share = CallerShare::new(self.budget.clone());
        let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
            let forwarder = forwarder.clone();
            let activity = Some(on_conn.clone());
            let share = share.clone();
            async move {
                let req = req.map(Inbound::H2);
                let answer = forwarder.handle(req, peer, activity, &share).await;
                Ok::<_, Infallible>(answer)
            }
        });
        let io = h1::conn::Rewind::new(first.freeze(), stream);
        let conn = self.builder.serve_connection(TokioIo::new(io), service);
        tokio::pin!(conn);
        let mut wait = Duration::ZERO;
        let result = loop {
            // The watchers are polled only when one of them woke the task,
            // not at each of the connection's wakes (`Woken`).
            let drain = &mut drain;
            let watch = Woken::new(async move {
                tokio::select! {
                    _ = raised(drain) => Watch::Drain,
                    _ = tokio::time::sleep(wait) => Watch::Look,
                }
            });
            tokio::select! {
                biased;
                r = conn.as_mut() => break r,
                w = watch => match w {
                    Watch::Drain => {
                        conn.as_mut().graceful_shutdown();
                        break tokio::select! {
                            r = conn.as_mut() => r,
                            _ = raised(&mut kill) => {
                                self.metrics
                                    .connections_closed_total
                                    .with(Closed::Grace.as_str())
                                    .inc();
                                Ok(())
                            }
                        };
                    }
                    Watch::Look => {
                        match activity.verdict(Instant::now(), &self.deadlines) {
                            Verdict::Wait(next) => wait = next,
                            Verdict::Close(why) => {
                                self.closing(why, peer);
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
                },
            }
        };
        if let Err(e) = result {
            self.connection_error(&*e, peer, &activity);
        }
    }

    /// Serves an HTTP/1.1 caller with a2a-tap's own server, under the
    /// connection's watchers.
    async fn serve_h1(
        &self,
        mut stream: TcpStream,
        first: BytesMut,
        peer: SocketAddr,
        activity: &Arc<Activity>,
    ) {
        let share = CallerShare::new(self.budget.clone());
        let forwarder = &self.forwarder;
        let served = pin!(h1::conn::serve(
            &mut stream,
            first,
            &self.h1_limits,
            self.drain.clone(),
            activity,
            |req| forwarder.handle(req, peer, Some(activity.clone()), &share),
        ));
        let Some(ended) = self.watched(served, activity, peer).await else {
            return;
        };
        match ended {
            h1::conn::Ended::Closed => {}
            h1::conn::Ended::HeaderTimeout => self.header_timeout(activity, peer),
            h1::conn::Ended::Refused(status) => {
                tracing::info!(%peer, %status, "malformed request from caller");
                self.count_refused();
            }
            h1::conn::Ended::Broken(e) => {
                tracing::debug!(%peer, error = %e, "caller connection ended with an error");
            }
        }
    }

    /// Runs `work` while the connection's deadlines and the grace period
    /// are watched: `None` when one of them closed the connection first
    /// (counted).
    async fn watched<F: std::future::Future>(
        &self,
        mut work: std::pin::Pin<&mut F>,
        activity: &Activity,
        peer: SocketAddr,
    ) -> Option<F::Output> {
        let mut kill = self.kill.clone();
        let mut wait = Duration::ZERO;
        loop {
            let kill = &mut kill;
            let watch = Woken::new(async move {
                tokio::select! {
                    _ = raised(kill) => None,
                    _ = tokio::time::sleep(wait) => Some(()),
                }
            });
            tokio::select! {
                biased;
                done = work.as_mut() => return Some(done),
                w = watch => match w {
                    None => {
                        self.metrics.connections_closed_total.with(Closed::Grace.as_str()).inc();
                        return None;
                    }
                    Some(()) => match activity.verdict(Instant::now(), &self.deadlines) {
                        Verdict::Wait(next) => wait = next,
                        Verdict::Close(why) => {
                            self.closing(why, peer);
                            return None;
                        }
                    },
                },
            }
        }
    }

    /// The header deadline passed, on a later request's head; on a
    /// keep-alive connection quiet past `idle_timeout` it races the
    /// watchdog, and the connection was idle.
    fn header_timeout(&self, activity: &Activity, peer: SocketAddr) {
        let why = match activity.verdict(Instant::now(), &self.deadlines) {
            Verdict::Close(Closed::Idle) => Closed::Idle,
            _ => Closed::HeaderTimeout,
        };
        self.closing(why, peer);
    }

    /// A caller connection closed by its watchdog (`why`): logged and
    /// counted.
    fn closing(&self, why: Closed, peer: SocketAddr) {
        tracing::debug!(%peer, reason = why.as_str(), "closing a caller connection");
        self.metrics
            .connections_closed_total
            .with(why.as_str())
            .inc();
    }

    fn count_refused(&self) {
        self.metrics
            .requests_total
            .with(
                &self.forwarder.refused_label(),
                UNKNOWN_BINDING,
                OTHER_METHOD,
                "4xx",
            )
            .inc();
    }

    fn connection_error(
        &self,
        err: &(dyn std::error::Error + Send + Sync + 'static),
        peer: SocketAddr,
        activity: &Activity,
    ) {
        let hyper_err = err.downcast_ref::<hyper::Error>();
        let parse = hyper_err
            .is_some_and(|h| h.is_parse() || h.is_parse_too_large() || h.is_parse_status());
        if hyper_err.is_some_and(hyper::Error::is_timeout) {
            self.header_timeout(activity, peer);
        } else if parse {
            // hyper answered 400 (or 431/414) itself; count it as a refused exchange.
            tracing::info!(%peer, error = %err, "malformed request from caller");
            self.count_refused();
        } else {
            tracing::debug!(%peer, error = %err, "caller connection ended with an error");
        }
    }
}

/// What a connection's watchers saw.
enum Watch {
    /// The drain began.
    Drain,
    /// The deadline to look at the connection's activity came.
    Look,
}

/// An accepted caller connection on its way to a serving thread.
pub(super) struct Accepted {
    pub(super) stream: std::net::TcpStream,
    pub(super) peer: SocketAddr,
    pub(super) permit: OwnedSemaphorePermit,
}

/// Counts a caller connection out of `a2a_connections_active` however its
/// serving ends.
struct Open<'a>(&'a prometheus::IntGauge);

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}
