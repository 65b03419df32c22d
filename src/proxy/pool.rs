//! A keep-alive pool of HTTP/1.1 upstream connections that are driven in
//! the caller's own task: the connection's I/O is polled by the exchange
//! that leases it (`h1`), so a response flows to the caller without a hop
//! between tasks, and the data a read brought is passed on together.

use std::future::poll_fn;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use std::time::{Duration, Instant};

use http::{Request, Response, Uri};
use hyper_rustls::{HttpsConnector, MaybeHttpsStream};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower_service::Service;

use self::h1::Conn;
use super::share::{CallerShare, Slot};
use super::BoxError;
use super::UpstreamBody;

/// Most idle connections one serving thread's pools keep in all.
const MAX_IDLE: usize = 1024;
/// hyper's default HTTP/1.1 read buffer limit: the least head length read.
const HYPER_MAX_BUF: usize = 8192 + 4096 * 100;

/// The connection's I/O: TCP, or TLS above it.
type Io = TokioIo<MaybeHttpsStream<TokioIo<TcpStream>>>;

/// Why sending on a leased connection failed.
pub enum SendFailure {
    /// The request was not written; it may be sent on another connection.
    Unsent(Box<Request<UpstreamBody>>, h1::Error),
    /// The exchange failed on the wire.
    Failed(h1::Error),
}

impl SendFailure {
    /// The underlying error.
    pub fn into_error(self) -> h1::Error {
        match self {
            SendFailure::Unsent(_, e) | SendFailure::Failed(e) => e,
        }
    }
}

/// The idle connections the pools of one serving thread keep in all: each
/// route's pool keeps what its traffic leaves idle while the thread's
/// total is under the bound, so one busy route among fifty idle ones keeps
/// as many as it would alone.
pub struct IdleBudget {
    held: AtomicUsize,
    max: usize,
}

impl IdleBudget {
    /// A budget of `max` idle connections (at most `MAX_IDLE`).
    pub fn new(max: usize) -> Arc<IdleBudget> {
        Arc::new(IdleBudget {
            held: AtomicUsize::new(0),
            max: max.clamp(1, MAX_IDLE),
        })
    }

    /// Takes one idle connection's room, if there is any.
    fn take(&self) -> bool {
        self.held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok()
    }

    /// Gives back `n` idle connections' room.
    fn give(&self, n: usize) {
        if n > 0 {
            self.held.fetch_sub(n, Ordering::Relaxed);
        }
    }
}

/// Idle HTTP/1.1 connections to one upstream, and the connector for new ones.
pub struct Pool {
    connector: HttpsConnector<HttpConnector>,
    idle: Mutex<Vec<(Lease, Instant)>>,
    idle_timeout: Duration,
    /// The room for idle connections this pool shares with the other
    /// routes' pools of its serving thread.
    budget: Arc<IdleBudget>,
    /// A connection's read buffer, at most (a response head must fit).
    max_buf: usize,
}

/// One connection, leased to one exchange at a time.
pub struct Lease {
    /// Boxed: it holds the TLS state, and a lease is moved as it is used.
    conn: Box<Conn<Io>>,
    /// Whether it came from the pool (a stale one may be retried).
    pub reused: bool,
    /// The slot of a lease in use (its caller connection's share of the
    /// budget, `proxy::share`); an idle connection holds none.
    slot: Option<Slot>,
}

// === impl Pool ===

impl Pool {
    /// A pool connecting through `connector`, keeping idle connections
    /// within `budget`, reading response heads of up to `max_head` bytes
    /// (hyper's ~400 KiB read buffer, or more). Its leases in use are
    /// bounded by the budget every pool shares, through each caller
    /// connection's share of it (`checkout`).
    pub fn new(
        connector: HttpsConnector<HttpConnector>,
        idle_timeout: Duration,
        budget: Arc<IdleBudget>,
        max_head: usize,
    ) -> Pool {
        Pool {
            connector,
            idle: Mutex::new(Vec::new()),
            idle_timeout,
            budget,
            max_buf: max_head.max(HYPER_MAX_BUF),
        }
    }

    /// An idle connection still usable, else a new one, once `share` (the
    /// caller connection's) gives a slot: upstream connections (and their
    /// file descriptors) are bounded in total, and one caller's streams
    /// cannot take them all.
    pub async fn checkout(&self, uri: &Uri, share: &CallerShare) -> Result<Lease, BoxError> {
        let slot = share.slot().await?;
        while let Some(mut lease) = self.take_idle() {
            if lease.usable().await {
                lease.slot = Some(slot);
                return Ok(lease);
            }
        }
        // Boxed: a new connection is the rare case, and its future (the
        // connector's, the handshake's) would make every exchange's future,
        // which is moved as it is built, that much larger.
        Box::pin(self.open(uri, slot)).await
    }

    /// A new connection to `uri`'s authority, on `stale`'s slot (a pooled
    /// connection that turned out closed).
    pub async fn replace(&self, uri: &Uri, stale: Lease) -> Result<Lease, BoxError> {
        let slot = stale.slot.ok_or("a lease in use holds a slot")?;
        Box::pin(self.open(uri, slot)).await
    }

    async fn open(&self, uri: &Uri, slot: Slot) -> Result<Lease, BoxError> {
        let io = self.connector.clone().call(uri.clone()).await?;
        Ok(Lease {
            conn: Box::new(Conn::new(TokioIo::new(io), self.max_buf)),
            reused: false,
            slot: Some(slot),
        })
    }

    /// Returns a connection whose exchange ended cleanly (its slot goes
    /// back at once).
    pub fn checkin(&self, mut lease: Lease) {
        lease.slot = None;
        if !lease.conn.reusable() {
            return;
        }
        lease.conn.idle();
        lease.reused = true;
        let now = Instant::now();
        let Ok(mut idle) = self.idle.lock() else {
            return;
        };
        self.expire(&mut idle, now);
        if self.budget.take() {
            idle.push((lease, now));
        }
    }

    /// Closes the idle connections older than the idle timeout (called on
    /// a timer: an idle pool sees no traffic to reap them).
    pub fn reap(&self) {
        if let Ok(mut idle) = self.idle.lock() {
            self.expire(&mut idle, Instant::now());
        }
    }

    /// Idle connections kept now.
    pub fn idle_count(&self) -> usize {
        self.idle.lock().map_or(0, |i| i.len())
    }

    /// Entries are kept oldest first: the expired ones are a prefix.
    fn expire(&self, idle: &mut Vec<(Lease, Instant)>, now: Instant) {
        let expired = idle
            .iter()
            .take_while(|(_, since)| now.duration_since(*since) >= self.idle_timeout)
            .count();
        idle.drain(..expired);
        self.budget.give(expired);
    }

    fn take_idle(&self) -> Option<Lease> {
        let now = Instant::now();
        let mut idle = self.idle.lock().ok()?;
        // The most recently used first: the least likely to be stale.
        while let Some((lease, since)) = idle.pop() {
            self.budget.give(1);
            if now.duration_since(since) < self.idle_timeout {
                return Some(lease);
            }
        }
        None
    }
}

impl Drop for Pool {
    /// A pool a reload dropped gives its room back.
    fn drop(&mut self) {
        let held = self.idle.get_mut().map_or(0, |i| i.len());
        self.budget.give(held);
    }
}

// === impl Lease ===

impl Lease {
    /// Whether an idle connection is still open and ready for a request.
    async fn usable(&mut self) -> bool {
        poll_fn(|cx| self.conn.poll_usable(cx)).await
    }

    /// Sends `req` and waits for the response head; the body is read
    /// through [`LeasedBody`].
    pub async fn send(&mut self, req: Request<UpstreamBody>) -> Result<Response<()>, SendFailure> {
        self.conn.start(req);
        poll_fn(|cx| self.conn.poll_send(cx))
            .await
            .map_err(|(e, unsent)| match unsent {
                Some(req) => SendFailure::Unsent(Box::new(req), e),
                None => SendFailure::Failed(e),
            })
    }
}

pub mod h1;
mod leased;
pub use leased::LeasedBody;
