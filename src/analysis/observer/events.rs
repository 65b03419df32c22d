//! What the tee tells an exchange's observer (request bytes, the response
//! head, runs, trailers, the end), turned into messages to the analysis
//! thread.

use std::sync::atomic::Ordering;
use std::sync::PoisonError;

use bytes::Bytes;

use super::request_head::TRACEPARENT;
use super::Observer;
use crate::a2a::classify::{grpc_gzip, GRPC_ENCODING};
use crate::a2a::grpc::GrpcStatus;
use crate::engine::{Head, Media, SkipReason};
use crate::lifecycle::End;
use crate::proxy::{BodyEnd, ExchangeLabels, ExchangeObserver, ProxyError};
use crate::report::access::AccessLine;

impl ExchangeObserver for Observer {
    fn outgoing_headers(&self, headers: &mut http::HeaderMap) {
        if let Some(own) = &self.own {
            if let Ok(v) = http::HeaderValue::from_str(&own.traceparent()) {
                headers.insert(TRACEPARENT, v);
            }
        }
    }

    fn request_data(&self, data: &Bytes) {
        let Ok(mut req) = self.request.lock() else {
            return;
        };
        if req.head.is_none() || req.over.is_some() {
            return;
        }
        let over = if req.body.len() + data.len() > self.shared.max_request_bytes {
            Some(SkipReason::RequestTooLarge)
        } else if !self.shared.tx.reserve(data.len()) {
            Some(SkipReason::Overload)
        } else {
            None
        };
        if over.is_some() {
            req.over = over;
            self.shared.tx.unreserve(req.body.len());
            req.body = Vec::new();
        } else {
            req.body.extend_from_slice(data);
        }
    }

    fn request_end(&self, end: BodyEnd) {
        if matches!(end, BodyEnd::Complete) {
            self.open();
        } else if let Ok(mut req) = self.request.lock() {
            // A request that never finished is not judged.
            req.head = None;
            self.shared.tx.unreserve(req.body.len());
            req.body = Vec::new();
        }
    }

    fn response_head(&self, head: &http::response::Parts) {
        let text = |name| head.headers.get(name).and_then(|v| v.to_str().ok());
        let parts = head;
        let mut head = Head::read(
            parts.status.as_u16(),
            text(http::header::CONTENT_TYPE),
            text(http::header::CONTENT_ENCODING),
        );
        if let Media::Grpc { gzip } = &mut head.media {
            *gzip = grpc_gzip(parts.headers.get(GRPC_ENCODING));
            // A trailers-only answer: its status is in the head.
            if let Some(status) = GrpcStatus::from_headers(&parts.headers) {
                self.set_grpc_status(status);
            }
        }
        if head.media == Media::EventStream {
            self.stream.store(true, Ordering::Release);
            self.shared.streams_active.inc();
        }
        self.held().head = Some(head);
    }

    fn response_data(&self, data: &[u8]) {
        self.hand_over(data, None);
    }

    fn response_trailers(&self, trailers: &http::HeaderMap) {
        if let Some(status) = GrpcStatus::from_headers(trailers) {
            self.set_grpc_status(status);
        }
    }

    fn response_end(&self, data: &[u8], end: BodyEnd) {
        let end = match end {
            BodyEnd::Complete => End::Upstream,
            BodyEnd::Error => End::UpstreamError,
            BodyEnd::Dropped => End::ClientGone,
        };
        self.finish(data, end);
    }

    fn upstream_failed(&self, _error: &ProxyError) {
        self.finish(&[], End::UpstreamError);
    }

    fn labels(&self) -> ExchangeLabels {
        self.labels.get().copied().unwrap_or_default()
    }

    /// An A2A exchange's line goes with its end to the analysis thread,
    /// which adds the task and the findings; any other comes back.
    fn access(&self, line: AccessLine) -> Option<AccessLine> {
        if self.labels.get().is_none() || self.ended.load(Ordering::Acquire) {
            return Some(line);
        }
        *self.access.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(line));
        None
    }
}
