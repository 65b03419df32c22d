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
    /// Fails with [`ProxyError::StreamIdle`] after `timeout` without a
    /// frame, calling `on_idle` first.
    pub struct IdleTimeout<B, F> {
        #[pin]
        inner: B,
        #[pin]
        sleep: Sleep,
        timeout: Duration,
        // When the current silence began (the first `Pending` after frames).
        silent_since: Instant,
        // Frames came since `silent_since` was taken.
        active: bool,
        on_idle: F,
        deferred: Option<BoxError>,
    }
}

// === impl IdleTimeout ===

impl<B, F: FnMut()> IdleTimeout<B, F> {
    /// Wraps `inner`; the clock starts now. `on_idle` runs when it fires.
    pub fn new(inner: B, timeout: Duration, on_idle: F) -> Self {
        let now = Instant::now();
        IdleTimeout {
            inner,
            sleep: tokio::time::sleep_until(now + timeout),
            timeout,
            silent_since: now,
            active: false,
            on_idle,
            deferred: None,
        }
    }
}

impl<B, F> Body for IdleTimeout<B, F>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
    F: FnMut(),
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
                // No clock read per frame: silence is timed from the next Pending,
                // and the timer is re-armed lazily when it fires.
                *this.active = true;
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
        if std::mem::take(this.active) {
            *this.silent_since = Instant::now();
        }
        loop {
            if this.sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let deadline = *this.silent_since + *this.timeout;
            if Instant::now() >= deadline {
                (this.on_idle)();
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
