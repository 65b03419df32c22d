//! What the unit tests of more than one module share.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// A body given in pieces, its length told or not, pausing (a `Pending`
/// that wakes at once) before each piece when `pause`.
#[derive(Clone)]
pub(crate) struct Pieces {
    /// What is left to send.
    pub(crate) pieces: VecDeque<Bytes>,
    told: bool,
    pause: bool,
    paused: bool,
}

impl Pieces {
    pub(crate) fn new(pieces: impl IntoIterator<Item = Bytes>, told: bool, pause: bool) -> Pieces {
        Pieces {
            pieces: pieces.into_iter().collect(),
            told,
            pause,
            paused: false,
        }
    }
}

impl Body for Pieces {
    type Data = Bytes;
    // `proxy::BoxError`, spelt out: this module imports from no other.
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.pause && !self.paused && !self.pieces.is_empty() {
            self.paused = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.paused = false;
        Poll::Ready(self.pieces.pop_front().map(|p| Ok(Frame::data(p))))
    }

    fn is_end_stream(&self) -> bool {
        self.told && self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        let total = self.pieces.iter().map(|p| p.len() as u64).sum();
        if self.told {
            SizeHint::with_exact(total)
        } else {
            let mut hint = SizeHint::new();
            hint.set_lower(total.min(1));
            hint
        }
    }
}
