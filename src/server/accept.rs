//! The proxy port's accept loop: a slot per caller connection (so no more
//! are accepted than `max_connections`), connections handed in turn to the
//! serving threads, failed accepts backed off; then the drain.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch, Semaphore};

use super::admin::Readiness;
use super::backoff::AcceptBackoff;
use super::serving::{Accepted, ServingThread};
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
    /// After the shutdown request, how long to keep accepting (readiness
    /// false) so that load balancers stop sending first.
    pub(super) drain_delay: Duration,
    pub(super) grace: Duration,
}

impl Lifecycle {
    pub(super) async fn run(
        self,
        listener: TcpListener,
        readiness: Arc<Readiness>,
        mut shutdown: watch::Receiver<bool>,
        now: watch::Receiver<bool>,
    ) {
        let Lifecycle {
            mut threads,
            accept_errors,
            drain,
            kill,
            max_connections,
            drain_delay,
            grace,
        } = self;
        let slots = Arc::new(Semaphore::new(max_connections));
        let mut next = 0usize;
        let mut backoff = AcceptBackoff::default();
        // Accepting stops once the shutdown was requested and the drain
        // delay passed (readiness false all along), or at a second signal.
        let stop = {
            let readiness = readiness.clone();
            let mut now = now.clone();
            async move {
                raised(&mut shutdown).await;
                readiness.set_draining();
                tracing::info!(
                    ?drain_delay,
                    "shutdown requested: readiness false, accepting for the drain delay"
                );
                tokio::select! {
                    _ = tokio::time::sleep(drain_delay) => {}
                    _ = raised(&mut now) => {}
                }
            }
        };
        tokio::pin!(stop);
        let mut shutdown = stop;

        loop {
            if threads.is_empty() {
                tracing::error!("no serving thread left: stopping");
                break;
            }
            let permit = tokio::select! {
                _ = &mut shutdown => break,
                p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            };
            let (stream, peer) = tokio::select! {
                _ = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok(a) => {
                        backoff.reset();
                        a
                    }
                    Err(e) => {
                        // Out of descriptors and the like: back off, keep serving.
                        backoff.failed(&e, &accept_errors, "accept failed");
                        tokio::select! {
                            _ = &mut shutdown => break,
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
        // After a second signal there is no grace period to announce.
        let stopping_now = *now.borrow();
        if !stopping_now {
            tracing::info!(?grace, "draining: no longer accepting");
        }
        drain.send_replace(true);
        let all = max_connections as u32;
        let mut now = now;
        let drained = tokio::select! {
            d = tokio::time::timeout(grace, slots.acquire_many(all)) => d.is_ok(),
            _ = raised(&mut now) => false,
        };
        if !drained {
            let open = max_connections.saturating_sub(slots.available_permits());
            let why = if *now.borrow() {
                "second signal: no longer accepting, closing the connections still open, \
                 streams among them cut"
            } else {
                "grace period over: closing the connections still open, streams among them cut"
            };
            tracing::warn!(connections = open, "{why}");
            kill.send_replace(true);
            let _ = tokio::time::timeout(CLOSE_WAIT, slots.acquire_many(all)).await;
        }
        for t in threads {
            t.stop().await;
        }
        tracing::info!("stopped");
    }
}
