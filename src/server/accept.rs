//! The proxy port's accept loop: a slot per caller connection (so no more
//! are accepted than `max_connections`), connections handed in turn to the
//! serving threads, failed accepts backed off; then the drain.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};

use super::admin::Readiness;

use super::serving::ServingThread;
use super::{raised, CLOSE_WAIT};

/// The proxy port's accept loop and drain, and the threads it hands
/// connections to.
pub(super) struct Lifecycle {
    pub(super) threads: Vec<ServingThread>,
    /// `a2a_accept_errors_total{listener="proxy"}`.
    pub(super) accept_errors: prometheus::IntCounter,
    /// Raised at shutdown: connections finish their exchanges and close.
    pub(super) drain: watch::Sender<bool>,
    /// Raised after the grace period: connections close at once.
    pub(super) kill: watch::Sender<bool>,
    pub(super) max_connections: usize,
    pub(super) grace: Duration,
}

impl Lifecycle {
    pub(super) async fn run(
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
pub(super) struct Accepted {
    pub(super) stream: std::net::TcpStream,
    pub(super) peer: SocketAddr,
    pub(super) permit: OwnedSemaphorePermit,
}

/// The accept loop's answer to failed accepts (out of descriptors, say):
/// wait longer each time, up to a second, and log at most one line every
/// ten seconds, with how many failed; every failure is counted.
#[derive(Default)]
pub(super) struct AcceptBackoff {
    pub(super) failures: u32,
    pub(super) unlogged: u64,
    pub(super) logged: Option<Instant>,
}

impl AcceptBackoff {
    pub(super) fn failed(
        &mut self,
        e: &std::io::Error,
        counter: &prometheus::IntCounter,
        what: &str,
    ) {
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

    pub(super) fn reset(&mut self) {
        self.failures = 0;
    }

    /// 10 ms, doubling, at most 1 s.
    pub(super) fn delay(&self) -> Duration {
        let exp = self.failures.saturating_sub(1).min(7);
        Duration::from_millis(10 << exp).min(Duration::from_secs(1))
    }
}
