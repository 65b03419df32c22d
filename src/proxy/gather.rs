//! A body read whole up to a bound before it is passed on (the opt-in
//! alterations: a card rewritten, a push config's URL replaced): what was
//! read is held, then given back as it was, with the rest of the body or
//! its error, when it is not altered.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;

use super::{BoxError, ProxyBody};

/// A body read up to a bound.
pub enum Gathered {
    /// All of it (`wire` at most the bound), and its trailers.
    Whole {
        wire: Bytes,
        trailers: Option<http::HeaderMap>,
    },
    /// Past the bound: what was read, then the rest as it comes.
    Over(Held),
    /// The body failed: what was read, then the error.
    Broken(Held),
}

/// Reads `body` until its end, or past `max` bytes, or its error.
pub async fn gather(mut body: ProxyBody, max: usize) -> Gathered {
    let mut wire = BytesMut::new();
    let mut trailers = None;
    loop {
        match body.frame().await {
            None => {
                return Gathered::Whole {
                    wire: wire.freeze(),
                    trailers,
                }
            }
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => {
                    wire.extend_from_slice(&data);
                    if wire.len() > max {
                        return Gathered::Over(Held::before(wire.freeze(), Some(body)));
                    }
                }
                Err(frame) => trailers = frame.into_trailers().ok(),
            },
            Some(Err(e)) => {
                let mut held = Held::whole(wire.freeze(), None);
                held.error = Some(e);
                return Gathered::Broken(held);
            }
        }
    }
}

/// Frames already read, then the rest of the body (or its error).
pub struct Held {
    frames: VecDeque<Frame<Bytes>>,
    rest: Option<ProxyBody>,
    error: Option<BoxError>,
}

impl Held {
    /// The first data frame held (empty when there is none).
    pub fn first(&self) -> &[u8] {
        self.frames
            .iter()
            .find_map(Frame::data_ref)
            .map_or(&[][..], |d| &d[..])
    }

    /// `data`, then `rest` as it comes: a body with what was read from it
    /// put back in front.
    pub fn before(data: Bytes, rest: Option<ProxyBody>) -> Held {
        let mut held = Held::whole(data, None);
        held.rest = rest;
        held
    }

    /// `data` and `trailers`, the whole body.
    pub fn whole(data: Bytes, trailers: Option<http::HeaderMap>) -> Held {
        let mut frames = VecDeque::with_capacity(2);
        if !data.is_empty() {
            frames.push_back(Frame::data(data));
        }
        frames.extend(trailers.map(Frame::trailers));
        Held {
            frames,
            rest: None,
            error: None,
        }
    }
}

impl Body for Held {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if let Some(frame) = this.frames.pop_front() {
            return Poll::Ready(Some(Ok(frame)));
        }
        if let Some(e) = this.error.take() {
            return Poll::Ready(Some(Err(e)));
        }
        match this.rest.as_mut() {
            Some(rest) => Pin::new(rest).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty()
            && self.error.is_none()
            && self.rest.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        let held: u64 = self
            .frames
            .iter()
            .filter_map(Frame::data_ref)
            .map(|d| d.len() as u64)
            .sum();
        match &self.rest {
            _ if self.error.is_some() => SizeHint::default(),
            None => SizeHint::with_exact(held),
            Some(rest) => {
                let mut hint = rest.size_hint();
                // The upper first: a lower bound may not pass it.
                if let Some(upper) = hint.upper() {
                    hint.set_upper(upper.saturating_add(held));
                }
                hint.set_lower(hint.lower().saturating_add(held));
                hint
            }
        }
    }
}
