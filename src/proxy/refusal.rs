//! The proxy's own answers, for what it could not forward: a gRPC
//! trailers-only status to a gRPC caller, a one-line plain-text HTTP error
//! to any other.

use bytes::Bytes;
use http::{header, HeaderValue, Response};
use http_body_util::{BodyExt, Full};

use super::error::ProxyError;
use super::{BoxError, ProxyBody};

/// A gRPC trailers-only answer for an error the proxy gives itself: HTTP
/// 200, `grpc-status` (UNAVAILABLE, DEADLINE_EXCEEDED, ...) and the error
/// in `grpc-message` (percent-encoded, as gRPC wants), no body.
pub fn grpc_error_response(err: &ProxyError) -> Response<ProxyBody> {
    let body = Full::new(Bytes::new())
        .map_err(|never| -> BoxError { match never {} })
        .boxed_unsync();
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    h.insert("grpc-status", HeaderValue::from(err.grpc_status()));
    let text = format!("a2a-tap: {err}");
    let mut encoded = String::with_capacity(text.len());
    for b in text.bytes() {
        if (0x20..0x7f).contains(&b) && b != b'%' {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    if let Ok(v) = HeaderValue::from_str(&encoded) {
        h.insert("grpc-message", v);
    }
    resp
}

/// A one-line plain-text answer for an error the proxy gives itself.
pub fn error_response(err: &ProxyError) -> Response<ProxyBody> {
    let text = format!("a2a-tap: {err}\n");
    let body = Full::new(Bytes::from(text))
        .map_err(|never| -> BoxError { match never {} })
        .boxed_unsync();
    let mut resp = Response::new(body);
    *resp.status_mut() = err.status();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if let ProxyError::MethodNotAllowed(_) = err {
        // RFC 9110 §15.5.6: a 405 lists what is allowed.
        resp.headers_mut().insert(
            header::ALLOW,
            HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
    }
    resp
}
