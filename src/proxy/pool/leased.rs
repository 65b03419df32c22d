//! A response body read from a leased connection: it drives the connection
//! while it is read and returns it to the pool at a clean end.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

use super::{Lease, Pool};

/// A response body read from a leased connection; drives the connection
/// while it is read and returns it to the pool at a clean end.
pub struct LeasedBody {
    incoming: Incoming,
    lease: Option<Lease>,
    pool: Arc<Pool>,
}

impl LeasedBody {
    /// The body of a response received on `lease`.
    pub fn new(incoming: Incoming, lease: Lease, pool: Arc<Pool>) -> Self {
        LeasedBody {
            incoming,
            lease: Some(lease),
            pool,
        }
    }
}

impl Body for LeasedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        if let Some(lease) = this.lease.as_mut() {
            lease.drive(cx);
        }
        let polled = Pin::new(&mut this.incoming).poll_frame(cx);
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
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.incoming.size_hint()
    }
}

impl Drop for LeasedBody {
    fn drop(&mut self) {
        // A body read to its declared end may be dropped without a last poll.
        if self.incoming.is_end_stream() {
            if let Some(lease) = self.lease.take() {
                self.pool.checkin(lease);
            }
        }
    }
}
