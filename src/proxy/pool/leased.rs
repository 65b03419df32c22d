//! A response body read from a leased connection: it drives the connection
//! while it is read and returns it to the pool at a clean end.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use super::{h1, Lease, Pool};

/// A response body read from a leased connection; drives the connection
/// while it is read and returns it to the pool at a clean end.
pub struct LeasedBody {
    /// `None` once the body ended or failed.
    lease: Option<Lease>,
    pool: Arc<Pool>,
}

impl LeasedBody {
    /// The body of the response whose head `lease` read.
    pub fn new(lease: Lease, pool: Arc<Pool>) -> Self {
        LeasedBody {
            lease: Some(lease),
            pool,
        }
    }
}

impl Body for LeasedBody {
    type Data = Bytes;
    type Error = h1::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, h1::Error>>> {
        let this = self.get_mut();
        let Some(lease) = this.lease.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = lease.conn.poll_body(cx);
        match &polled {
            Poll::Ready(None) => {
                if let Some(lease) = this.lease.take() {
                    this.pool.checkin(lease);
                }
            }
            Poll::Ready(Some(Err(_))) => this.lease = None,
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.lease.as_ref().is_none_or(|l| l.conn.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        self.lease
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), |l| l.conn.size_hint())
    }
}

impl Drop for LeasedBody {
    fn drop(&mut self) {
        // A body read to its declared end may be dropped without a last poll.
        if let Some(lease) = self.lease.take() {
            if lease.conn.is_end_stream() {
                self.pool.checkin(lease);
            }
        }
    }
}
