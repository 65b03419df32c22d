//! The upstream's response body, whichever way the upstream was reached.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

use super::pool::LeasedBody;

/// A response body from an HTTP/1.1 lease or the HTTP/2 client.
pub enum UpstreamResponseBody {
    /// Read from (and driving) a leased HTTP/1.1 connection.
    Leased(LeasedBody),
    /// From the HTTP/2 client, whose connections run in their own tasks.
    Plain(Incoming),
}

impl Body for UpstreamResponseBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.get_mut() {
            UpstreamResponseBody::Leased(b) => Pin::new(b).poll_frame(cx),
            UpstreamResponseBody::Plain(b) => Pin::new(b).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            UpstreamResponseBody::Leased(b) => b.is_end_stream(),
            UpstreamResponseBody::Plain(b) => b.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            UpstreamResponseBody::Leased(b) => b.size_hint(),
            UpstreamResponseBody::Plain(b) => b.size_hint(),
        }
    }
}
