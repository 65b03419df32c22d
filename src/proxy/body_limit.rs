//! A request-body wrapper that stops a body at `max_request_body` bytes and
//! remembers that it did, so the exchange can answer 413 rather than 502.
//!
//! Not `http_body_util::Limited`: its error reaches the forwarder only
//! through the upstream client's error chain, which the HTTP/2 client
//! drops (the stream is reset; the caller got 502 where the test
//! `oversized_request_bodies_get_413` wants 413). The flag here is set
//! whichever leg carries the body.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::error::ProxyError;
use super::BoxError;

pin_project! {
    /// Fails with [`ProxyError::RequestTooLarge`] once more than `max` bytes passed.
    pub struct LimitBody<B> {
        #[pin]
        inner: B,
        remaining: u64,
        max: u64,
        tripped: Arc<AtomicBool>,
    }
}

// === impl LimitBody ===

impl<B> LimitBody<B> {
    /// Wraps `inner`; `tripped` is set when the limit is exceeded.
    pub fn new(inner: B, max: u64, tripped: Arc<AtomicBool>) -> Self {
        LimitBody {
            inner,
            remaining: max,
            max,
            tripped,
        }
    }
}

impl<B> Body for LimitBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.project();
        match this.inner.poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let len = data.len() as u64;
                    if len > *this.remaining {
                        this.tripped.store(true, Ordering::Relaxed);
                        let err = ProxyError::RequestTooLarge(*this.max);
                        return Poll::Ready(Some(Err(Box::new(err))));
                    }
                    *this.remaining -= len;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            other => other.map(|o| o.map(|r| r.map_err(Into::into))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
