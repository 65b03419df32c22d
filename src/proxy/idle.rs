//! A body wrapper that fails a body silent for longer than the idle timeout
//! (idle, not total: an SSE stream may live for hours if it keeps talking),
//! and that holds back an upstream error for one poll so the frames already
//! read are flushed to the caller before the exchange is aborted.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

use super::error::ProxyError;
use super::BoxError;

pin_project! {
    /// Fails with [`ProxyError::StreamIdle`] after `timeout` without a frame.
    pub struct IdleTimeout<B> {
        #[pin]
        inner: B,
        #[pin]
        sleep: Sleep,
        timeout: Duration,
        last_frame: Instant,
        deferred: Option<BoxError>,
    }
}

// === impl IdleTimeout ===

impl<B> IdleTimeout<B> {
    /// Wraps `inner`; the clock starts now.
    pub fn new(inner: B, timeout: Duration) -> Self {
        let now = Instant::now();
        IdleTimeout {
            inner,
            sleep: tokio::time::sleep_until(now + timeout),
            timeout,
            last_frame: now,
            deferred: None,
        }
    }
}

impl<B> Body for IdleTimeout<B>
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
        let mut this = self.project();
        if let Some(err) = this.deferred.take() {
            return Poll::Ready(Some(Err(err)));
        }
        match this.inner.poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                // Only note the time; the timer is re-armed lazily when it fires.
                *this.last_frame = Instant::now();
                return Poll::Ready(Some(Ok(frame)));
            }
            Poll::Ready(Some(Err(e))) => {
                // Pending first: the server flushes what it holds, then aborts.
                *this.deferred = Some(e.into());
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        loop {
            if this.sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let deadline = *this.last_frame + *this.timeout;
            if Instant::now() >= deadline {
                let err = ProxyError::StreamIdle(*this.timeout);
                return Poll::Ready(Some(Err(Box::new(err))));
            }
            this.sleep.as_mut().reset(deadline);
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
