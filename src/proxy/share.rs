//! Fair shares of the upstream connection budget: no caller connection may
//! hold more than an eighth of `max_upstream_connections` (an h2 caller
//! opens a stream per exchange, and each takes an upstream connection),
//! and the last eighth goes only to caller connections that hold none
//! (one each), so a new caller is served while others hold the rest.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{AcquireError, Notify, OwnedSemaphorePermit, Semaphore};

/// The HTTP/1.1 upstream connections in use, over every serving thread.
#[derive(Debug)]
pub struct Budget {
    /// Slots any exchange may take.
    shared: Arc<Semaphore>,
    /// The last `share` slots: at most one per caller connection.
    reserve: Arc<Semaphore>,
    /// Most slots one caller connection holds at once.
    share: usize,
}

/// One caller connection's claim on the budget.
#[derive(Debug)]
pub struct CallerShare {
    budget: Arc<Budget>,
    /// `share` permits: the connection's exchanges past them wait their turn.
    cap: Arc<Semaphore>,
    holding: Arc<Holding>,
}

/// The slots a caller connection holds.
#[derive(Debug, Default)]
struct Holding {
    count: AtomicUsize,
    /// Woken when the count falls to zero: a reserved slot may be taken.
    emptied: Notify,
}

/// A slot of the budget, held while an upstream connection is leased.
#[derive(Debug)]
pub struct Slot {
    _cap: OwnedSemaphorePermit,
    _budget: OwnedSemaphorePermit,
    holding: Arc<Holding>,
}

/// The budget is gone (the server is shutting down).
#[derive(Debug, thiserror::Error)]
#[error("upstream connection slots closed")]
pub struct Closed;

impl From<AcquireError> for Closed {
    fn from(_: AcquireError) -> Closed {
        Closed
    }
}

// === impl Budget ===

impl Budget {
    /// `total` slots, at least one.
    pub fn new(total: usize) -> Arc<Budget> {
        let total = total.clamp(1, Semaphore::MAX_PERMITS);
        let share = (total / 8).max(1);
        Arc::new(Budget {
            shared: Arc::new(Semaphore::new(total - share)),
            reserve: Arc::new(Semaphore::new(share)),
            share,
        })
    }

    /// Most upstream connections one caller connection holds at once.
    pub fn share(&self) -> usize {
        self.share
    }
}

// === impl CallerShare ===

impl CallerShare {
    /// A new caller connection's share of `budget`.
    pub fn new(budget: Arc<Budget>) -> Arc<CallerShare> {
        Arc::new(CallerShare {
            cap: Arc::new(Semaphore::new(budget.share)),
            holding: Arc::default(),
            budget,
        })
    }

    /// A slot once one is this connection's to take: within its share, a
    /// shared slot, or a reserved one while it holds no other.
    pub async fn slot(&self) -> Result<Slot, Closed> {
        let cap = self.cap.clone().acquire_owned().await?;
        let budget = tokio::select! {
            biased;
            slot = self.budget.shared.clone().acquire_owned() => {
                self.holding.count.fetch_add(1, Ordering::SeqCst);
                slot?
            }
            slot = self.reserved() => slot?,
        };
        Ok(Slot {
            _cap: cap,
            _budget: budget,
            holding: self.holding.clone(),
        })
    }

    /// A reserved slot, taken only while the connection holds none (checked
    /// again when it comes: a shared slot may have come first).
    async fn reserved(&self) -> Result<OwnedSemaphorePermit, Closed> {
        loop {
            let emptied = self.holding.emptied.notified();
            tokio::pin!(emptied);
            emptied.as_mut().enable();
            if self.holding.count.load(Ordering::SeqCst) == 0 {
                let slot = self.budget.reserve.clone().acquire_owned().await?;
                let first =
                    self.holding
                        .count
                        .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst);
                if first.is_ok() {
                    return Ok(slot);
                }
            }
            emptied.await;
        }
    }
}

// === impl Slot ===

impl Drop for Slot {
    fn drop(&mut self) {
        if self.holding.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.holding.emptied.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn none_within(share: &CallerShare) -> bool {
        tokio::time::timeout(Duration::from_millis(50), share.slot())
            .await
            .is_err()
    }

    #[tokio::test]
    async fn one_connection_holds_its_share_and_another_is_still_served() {
        let budget = Budget::new(16);
        assert_eq!(budget.share(), 2);
        let hog = CallerShare::new(budget.clone());
        let held = [hog.slot().await.unwrap(), hog.slot().await.unwrap()];
        assert!(
            none_within(&hog).await,
            "past its share, a connection waits"
        );
        let other = CallerShare::new(budget.clone());
        assert!(other.slot().await.is_ok());
        drop(held);
        assert!(hog.slot().await.is_ok(), "a slot given back is taken again");
    }

    #[tokio::test]
    async fn the_reserve_is_for_connections_that_hold_none() {
        // 14 shared slots, 2 reserved, a share of 2.
        let budget = Budget::new(16);
        let mut held = Vec::new();
        for _ in 0..6 {
            let hog = CallerShare::new(budget.clone());
            held.push(hog.slot().await.unwrap());
            held.push(hog.slot().await.unwrap());
        }
        let a = CallerShare::new(budget.clone());
        held.push(a.slot().await.unwrap());
        held.push(CallerShare::new(budget.clone()).slot().await.unwrap());
        // The shared slots are gone: `a` holds one, and the reserve is not
        // for it, though it is within its share.
        assert!(
            none_within(&a).await,
            "the reserve is for those that hold none"
        );
        // `b` holds none and takes a reserved slot, but not a second.
        let b = CallerShare::new(budget.clone());
        let reserved = b.slot().await.unwrap();
        assert!(none_within(&b).await, "one reserved slot, held alone");
        let c = CallerShare::new(budget.clone());
        held.push(c.slot().await.unwrap());
        assert!(none_within(&CallerShare::new(budget.clone())).await);
        drop(reserved);
        assert!(CallerShare::new(budget).slot().await.is_ok());
    }
}
