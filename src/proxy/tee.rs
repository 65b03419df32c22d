//! The tee point: a body wrapper that passes every frame through unchanged and
//! at once, shows each data chunk to an observer, tells it when the body has
//! nothing more for now, and reports the body's end exactly once (complete,
//! failed, or dropped before the end).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

/// How a body ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyEnd {
    /// Every frame was delivered and the body reported its end.
    Complete,
    /// The body yielded an error (e.g. the upstream went away mid-stream).
    Error,
    /// The body was dropped before its end (the reader went away).
    Dropped,
}

/// Sees a body's data chunks and its end.
pub trait BodyObserver: Send + 'static {
    /// Called each time the body is asked for a frame (its reader took
    /// what came before). Default: nothing.
    fn polled(&mut self) {}
    /// Called with each data chunk, in order, before it is passed on.
    fn data(&mut self, chunk: &Bytes);
    /// Called with the body's trailers, if it has any, before they are
    /// passed on. Default: nothing.
    fn trailers(&mut self, _trailers: &http::HeaderMap) {}
    /// Called when the body has no frame ready (its reader is about to
    /// wait): the chunks seen since the last pause are what one read of the
    /// source brought. Default: nothing.
    fn pause(&mut self) {}
    /// Called exactly once, when the body ends in any way.
    fn end(&mut self, end: BodyEnd);
}

pin_project! {
    /// Wraps a body, passing frames through and reporting to `O`.
    pub struct TeeBody<B: Body, O: BodyObserver> {
        #[pin]
        inner: B,
        observer: Option<O>,
    }

    impl<B: Body, O: BodyObserver> PinnedDrop for TeeBody<B, O> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let Some(mut observer) = this.observer.take() {
                // A body nobody polled to its end may still be finished
                // (e.g. empty): that is not a drop by the reader.
                let end = if this.inner.is_end_stream() { BodyEnd::Complete } else { BodyEnd::Dropped };
                observer.end(end);
            }
        }
    }
}

// === impl TeeBody ===

impl<B: Body, O: BodyObserver> TeeBody<B, O> {
    /// Wraps `inner`; `observer` sees its chunks and its end.
    pub fn new(inner: B, observer: O) -> Self {
        TeeBody {
            inner,
            observer: Some(observer),
        }
    }
}

impl<B, O> Body for TeeBody<B, O>
where
    B: Body<Data = Bytes>,
    O: BodyObserver,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let mut this = self.project();
        if let Some(observer) = this.observer.as_mut() {
            observer.polled();
        }
        let polled = this.inner.as_mut().poll_frame(cx);
        match &polled {
            Poll::Pending => {
                if let Some(observer) = this.observer.as_mut() {
                    observer.pause();
                }
            }
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(observer) = this.observer.as_mut() {
                    if let Some(data) = frame.data_ref() {
                        observer.data(data);
                    } else if let Some(trailers) = frame.trailers_ref() {
                        observer.trailers(trailers);
                    }
                }
                if this.inner.is_end_stream() {
                    finish(this.observer, BodyEnd::Complete);
                }
            }
            Poll::Ready(Some(Err(_))) => finish(this.observer, BodyEnd::Error),
            Poll::Ready(None) => finish(this.observer, BodyEnd::Complete),
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

fn finish<O: BodyObserver>(observer: &mut Option<O>, end: BodyEnd) {
    if let Some(mut observer) = observer.take() {
        observer.end(end);
    }
}

#[cfg(test)]
mod tests;
