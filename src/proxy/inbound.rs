//! A caller's request body: from hyper's HTTP/2 server, or from a2a-tap's
//! own HTTP/1.1 server (read whole with its head, or streamed to the
//! exchange as the caller sends it).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::sync::{mpsc, Notify};

use super::BoxError;

/// One piece of a streamed request body.
pub type Piece = Result<Frame<Bytes>, BoxError>;

/// A caller's request body.
pub enum Inbound {
    /// From hyper's HTTP/2 server.
    H2(Incoming),
    /// Read whole with its head (`None` once handed on).
    Whole(Option<Bytes>),
    /// Read by the connection as the exchange asks for it.
    Streamed(Streamed),
}

/// A request body the connection reads on: `want` tells it the exchange
/// asked for the body (a caller waiting for `100 Continue` gets it then).
pub struct Streamed {
    pub(crate) rx: mpsc::Receiver<Piece>,
    pub(crate) want: Arc<Notify>,
    pub(crate) wanted: bool,
    /// What is left of the body's length, when its head told it.
    pub(crate) length: Option<u64>,
    pub(crate) done: bool,
}

impl Body for Inbound {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            Inbound::H2(b) => Pin::new(b).poll_frame(cx).map_err(Into::into),
            Inbound::Whole(b) => Poll::Ready(
                b.take()
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(Frame::data(b))),
            ),
            Inbound::Streamed(s) => {
                if s.done {
                    return Poll::Ready(None);
                }
                if !s.wanted {
                    s.wanted = true;
                    s.want.notify_one();
                }
                match s.rx.poll_recv(cx) {
                    Poll::Ready(None) => {
                        s.done = true;
                        Poll::Ready(None)
                    }
                    Poll::Ready(Some(Ok(frame))) => {
                        // The size hint is of what is left.
                        if let (Some(left), Some(data)) = (s.length.as_mut(), frame.data_ref()) {
                            *left = left.saturating_sub(data.len() as u64);
                        }
                        Poll::Ready(Some(Ok(frame)))
                    }
                    other => other,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Inbound::H2(b) => b.is_end_stream(),
            Inbound::Whole(b) => b.as_ref().is_none_or(Bytes::is_empty),
            Inbound::Streamed(s) => s.done,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Inbound::H2(b) => b.size_hint(),
            Inbound::Whole(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Inbound::Streamed(s) => s
                .length
                .map_or_else(SizeHint::default, SizeHint::with_exact),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A streamed body's size hint is what is left of its told length.
    #[test]
    fn a_streamed_bodys_hint_is_what_is_left() {
        let (tx, rx) = mpsc::channel(2);
        let mut body = Inbound::Streamed(Streamed {
            rx,
            want: Arc::new(Notify::new()),
            wanted: false,
            length: Some(10),
            done: false,
        });
        assert_eq!(body.size_hint().exact(), Some(10));
        tx.try_send(Ok(Frame::data(Bytes::from_static(b"abcd"))))
            .expect("room");
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let polled = Pin::new(&mut body).poll_frame(&mut cx);
        assert!(matches!(polled, Poll::Ready(Some(Ok(_)))));
        assert_eq!(body.size_hint().exact(), Some(6));
    }
}
