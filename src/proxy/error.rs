//! Errors of one exchange, tagged by origin, and the one mapping to HTTP statuses.

use std::error::Error as StdError;
use std::io;
use std::time::Duration;

use http::StatusCode;

/// Why the upstream leg failed: the closed label set of `a2a_upstream_errors_total{reason}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpstreamReason {
    /// No TCP connection could be made (refused, unreachable, DNS, connect timeout).
    Connect,
    /// No response headers within `upstream_header_timeout`, or a stream went idle.
    Timeout,
    /// The connection broke after it was made (reset, closed mid-message).
    Reset,
    /// TLS handshake or certificate verification failed.
    Tls,
    /// The proxy's HTTP/2 layer refused the upstream's answer: a header
    /// list over `proxy.max_header_list_size`, or a malformed head.
    Protocol,
    /// Anything else.
    Other,
}

impl UpstreamReason {
    /// Every reason, for pre-registering label values.
    pub const ALL: [UpstreamReason; 6] = [
        UpstreamReason::Connect,
        UpstreamReason::Timeout,
        UpstreamReason::Reset,
        UpstreamReason::Tls,
        UpstreamReason::Protocol,
        UpstreamReason::Other,
    ];

    /// The metric label value.
    pub fn as_str(self) -> &'static str {
        match self {
            UpstreamReason::Connect => "connect",
            UpstreamReason::Timeout => "timeout",
            UpstreamReason::Reset => "reset",
            UpstreamReason::Tls => "tls",
            UpstreamReason::Protocol => "protocol",
            UpstreamReason::Other => "other",
        }
    }
}

/// What went wrong with one exchange; `Upstream*` errors come from the upstream
/// leg, `Request*` ones from the caller.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The upstream leg failed before response headers arrived.
    #[error("upstream {}: {detail}", reason.as_str())]
    Upstream {
        reason: UpstreamReason,
        detail: String,
    },
    /// The upstream sent no response headers in time.
    #[error("upstream sent no response headers within {0:?}")]
    HeaderTimeout(Duration),
    /// A response body was silent for longer than the idle timeout.
    #[error("upstream stream idle for longer than {0:?}")]
    StreamIdle(Duration),
    /// The caller's request body exceeded `max_request_body`.
    #[error("request body larger than {0} bytes")]
    RequestTooLarge(u64),
    /// The caller's request body broke off (the caller went away mid-upload).
    #[error("request body ended early")]
    RequestBroken,
    /// The caller did not finish a request body the proxy reads before it
    /// sends the request (the push relay's) within the header timeout.
    #[error("request body not received within {0:?}")]
    RequestTimeout(Duration),
    /// A method a reverse proxy does not forward (`CONNECT`: a tunnel, not
    /// an exchange with the upstream).
    #[error("method {0} is not forwarded")]
    MethodNotAllowed(http::Method),
    /// No route matches the request (its path, cut).
    #[error("no route for path {0}")]
    NoRoute(String),
    /// A path that could resolve past its route's prefix (an empty, `.` or
    /// `..` segment, a `\` or an encoded `/` or `\`), refused while
    /// routes match by prefix.
    #[error(
        "path {0} has an empty, `.` or `..` segment, a backslash or an encoded slash: not \
         routed"
    )]
    BadPath(String),
}

impl ProxyError {
    /// Classifies an upstream client error by walking its source chain.
    pub fn from_client(err: &(dyn StdError + 'static), connecting: bool) -> ProxyError {
        let reason = classify(err, connecting);
        let detail = match find_tls(err) {
            Some(tls) => tls_in_words(tls),
            None => chain_text(err),
        };
        ProxyError::Upstream { reason, detail }
    }

    /// For an `http://` upstream that hung up without a word or answered
    /// what is not HTTP: the hint that its port may speak TLS (a TLS server
    /// drops a plain-HTTP request, or answers it with a TLS alert).
    pub fn hint_plain_http(self) -> ProxyError {
        match self {
            ProxyError::Upstream { reason, detail }
                if detail.contains("connection closed before message completed")
                    || detail.contains("invalid HTTP") =>
            {
                ProxyError::Upstream {
                    reason,
                    detail: format!(
                        "{detail} (no HTTP answer came; if that port speaks TLS, \
                         the upstream URL needs https://)"
                    ),
                }
            }
            other => other,
        }
    }

    /// The gRPC status a gRPC caller gets for it (as gRPC maps the HTTP
    /// statuses of `status`: 502/503 UNAVAILABLE, 504 DEADLINE_EXCEEDED).
    pub fn grpc_status(&self) -> u32 {
        const CANCELLED: u32 = 1;
        const DEADLINE_EXCEEDED: u32 = 4;
        const INTERNAL: u32 = 13;
        const INVALID_ARGUMENT: u32 = 3;
        const RESOURCE_EXHAUSTED: u32 = 8;
        const UNIMPLEMENTED: u32 = 12;
        const UNAVAILABLE: u32 = 14;
        match self {
            ProxyError::HeaderTimeout(_) | ProxyError::StreamIdle(_) => DEADLINE_EXCEEDED,
            ProxyError::Upstream {
                reason: UpstreamReason::Timeout,
                ..
            } => DEADLINE_EXCEEDED,
            // Sent again, the same answer would be refused again.
            ProxyError::Upstream {
                reason: UpstreamReason::Protocol,
                ..
            } => INTERNAL,
            ProxyError::Upstream { .. } => UNAVAILABLE,
            ProxyError::RequestTooLarge(_) => RESOURCE_EXHAUSTED,
            ProxyError::RequestBroken => CANCELLED,
            ProxyError::RequestTimeout(_) => DEADLINE_EXCEEDED,
            ProxyError::MethodNotAllowed(_) | ProxyError::NoRoute(_) => UNIMPLEMENTED,
            ProxyError::BadPath(_) => INVALID_ARGUMENT,
        }
    }

    /// The status the caller gets for this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ProxyError::Upstream { .. } | ProxyError::StreamIdle(_) => StatusCode::BAD_GATEWAY,
            ProxyError::HeaderTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ProxyError::RequestTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ProxyError::RequestBroken => StatusCode::BAD_REQUEST,
            ProxyError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ProxyError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ProxyError::NoRoute(_) => StatusCode::NOT_FOUND,
            ProxyError::BadPath(_) => StatusCode::BAD_REQUEST,
        }
    }

    /// The upstream-error label, when the upstream is to blame.
    pub fn upstream_reason(&self) -> Option<UpstreamReason> {
        match self {
            ProxyError::Upstream { reason, .. } => Some(*reason),
            ProxyError::HeaderTimeout(_) | ProxyError::StreamIdle(_) => {
                Some(UpstreamReason::Timeout)
            }
            ProxyError::RequestTooLarge(_)
            | ProxyError::RequestBroken
            | ProxyError::RequestTimeout(_)
            | ProxyError::MethodNotAllowed(_)
            | ProxyError::NoRoute(_)
            | ProxyError::BadPath(_) => None,
        }
    }
}

fn classify(err: &(dyn StdError + 'static), connecting: bool) -> UpstreamReason {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    let mut found = None;
    while let Some(e) = cur {
        if e.downcast_ref::<rustls::Error>().is_some() {
            return UpstreamReason::Tls;
        }
        if let Some(io_err) = e.downcast_ref::<io::Error>() {
            if wraps_tls(io_err) {
                return UpstreamReason::Tls;
            }
            found = found.or(match io_err.kind() {
                io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::BrokenPipe
                | io::ErrorKind::UnexpectedEof => Some(UpstreamReason::Reset),
                _ => None,
            });
        }
        if let Some(h2) = e.downcast_ref::<h2::Error>() {
            if refused_by_us(h2) {
                return UpstreamReason::Protocol;
            }
        }
        if let Some(h) = e.downcast_ref::<super::pool::h1::Error>() {
            if h.is_refused_head() {
                return UpstreamReason::Protocol;
            }
            if h.is_incomplete() {
                found = found.or(Some(UpstreamReason::Reset));
            }
        }
        if let Some(h) = e.downcast_ref::<hyper::Error>() {
            if h.is_incomplete_message() || h.is_canceled() || h.is_closed() {
                found = found.or(Some(UpstreamReason::Reset));
            }
        }
        cur = e.source();
    }
    if connecting {
        return UpstreamReason::Connect;
    }
    found.unwrap_or(UpstreamReason::Other)
}

/// Whether h2 itself (not the upstream) ended the stream or the connection
/// over what the upstream sent: a header list over the limit (the stream
/// reset with `PROTOCOL_ERROR`, or, far over it, the connection closed with
/// `COMPRESSION_ERROR`), or a malformed head.
fn refused_by_us(err: &h2::Error) -> bool {
    use h2::Reason;
    err.is_library()
        && matches!(
            err.reason(),
            Some(Reason::PROTOCOL_ERROR | Reason::COMPRESSION_ERROR | Reason::FRAME_SIZE_ERROR)
        )
}

/// The rustls error in `err`'s chain, looking inside `io::Error`s too.
fn find_tls<'a>(err: &'a (dyn StdError + 'static)) -> Option<&'a rustls::Error> {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        if let Some(io_err) = e.downcast_ref::<io::Error>() {
            if let Some(inner) = io_err.get_ref() {
                if let Some(tls) = find_tls(inner) {
                    return Some(tls);
                }
            }
        }
        cur = e.source();
    }
    None
}

/// A TLS failure as an operator reads it: what is wrong, and the key that
/// fixes it (rustls's own text is its debug form).
fn tls_in_words(err: &rustls::Error) -> String {
    use rustls::{CertificateError as Cert, Error as Tls};
    let what = match err {
        Tls::InvalidCertificate(Cert::UnknownIssuer) => {
            "the upstream's certificate is signed by a CA this proxy does not trust; \
             put that CA (PEM) in proxy.tls_ca_file"
                .to_string()
        }
        Tls::InvalidCertificate(Cert::NotValidForName | Cert::NotValidForNameContext { .. }) => {
            "the upstream's certificate is not issued for the host name in `upstream`; \
             use the name it was issued for"
                .to_string()
        }
        Tls::InvalidCertificate(Cert::Expired | Cert::ExpiredContext { .. }) => {
            "the upstream's certificate has expired".to_string()
        }
        Tls::InvalidCertificate(Cert::NotValidYet | Cert::NotValidYetContext { .. }) => {
            "the upstream's certificate is not valid yet (is this host's clock right?)".to_string()
        }
        Tls::InvalidCertificate(Cert::Revoked) => {
            "the upstream's certificate has been revoked".to_string()
        }
        Tls::InvalidCertificate(Cert::Other(other))
            if format!("{other:?}").contains("CaUsedAsEndEntity") =>
        {
            "the upstream presents a CA certificate as its own; it must serve a server \
             certificate signed by that CA (and the CA goes in proxy.tls_ca_file)"
                .to_string()
        }
        Tls::InvalidCertificate(other) => {
            format!("the upstream's certificate was refused ({other:?})")
        }
        Tls::InvalidMessage(_) | Tls::InappropriateMessage { .. } => {
            "the upstream did not answer in TLS; if it serves plain HTTP, use an http:// upstream"
                .to_string()
        }
        Tls::AlertReceived(alert) => {
            format!("the upstream refused the TLS handshake (alert: {alert:?})")
        }
        Tls::NoApplicationProtocol => "the upstream does not offer HTTP/2 over TLS (ALPN h2); set \
             proxy.upstream_http2 = false"
            .to_string(),
        Tls::PeerIncompatible(why) => {
            format!("the upstream's TLS is not compatible with this proxy's ({why:?})")
        }
        other => format!("the TLS handshake with the upstream failed: {other}"),
    };
    format!("TLS: {what}")
}

/// `io::Error`'s `source()` skips the error it wraps; look inside it,
/// through any further `io::Error` layers, for a rustls error.
fn wraps_tls(err: &io::Error) -> bool {
    let mut inner: Option<&(dyn StdError + 'static)> = err.get_ref().map(|e| e as _);
    while let Some(e) = inner {
        if e.downcast_ref::<rustls::Error>().is_some() {
            return true;
        }
        inner = match e.downcast_ref::<io::Error>() {
            Some(io_err) => io_err.get_ref().map(|e| e as _),
            None => e.source(),
        };
    }
    false
}

/// The error and its sources on one line.
pub fn chain_text(err: &(dyn StdError + 'static)) -> String {
    let mut text = err.to_string();
    let mut cur = err.source();
    while let Some(e) = cur {
        let part = e.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cur = e.source();
    }
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_reasons() {
        let e = ProxyError::Upstream {
            reason: UpstreamReason::Connect,
            detail: "refused".into(),
        };
        assert_eq!(e.status(), StatusCode::BAD_GATEWAY);
        assert_eq!(e.upstream_reason(), Some(UpstreamReason::Connect));
        let t = ProxyError::HeaderTimeout(Duration::from_secs(1));
        assert_eq!(t.status(), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(t.upstream_reason(), Some(UpstreamReason::Timeout));
        assert_eq!(ProxyError::RequestTooLarge(1).upstream_reason(), None);
    }

    #[test]
    fn classifies_io_errors() {
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "reset");
        assert_eq!(classify(&reset, false), UpstreamReason::Reset);
        let refused = io::Error::new(io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(classify(&refused, true), UpstreamReason::Connect);
        let tls = io::Error::new(io::ErrorKind::InvalidData, rustls::Error::DecryptError);
        assert_eq!(classify(&tls, true), UpstreamReason::Tls);
        let other = io::Error::other("weird");
        assert_eq!(classify(&other, false), UpstreamReason::Other);
    }

    /// An HTTP/1.1 answer head the proxy does not read is the upstream's
    /// protocol fault, as the same head over HTTP/2 is; a body cut short
    /// after it is a reset.
    #[test]
    fn refused_http1_heads_are_protocol_faults() {
        use crate::proxy::pool::h1::Error as H1;
        for refused in [
            H1::Head(httparse::Error::Status),
            H1::HeadTooLarge(400 * 1024),
            H1::Parse("Transfer-Encoding not chunked"),
        ] {
            let wrapped = ProxyError::Upstream {
                reason: classify(&refused, false),
                detail: refused.to_string(),
            };
            assert_eq!(wrapped.upstream_reason(), Some(UpstreamReason::Protocol));
        }
        assert_eq!(classify(&H1::Incomplete, false), UpstreamReason::Reset);
        let cut = H1::Read(io::ErrorKind::UnexpectedEof.into());
        assert_eq!(classify(&cut, false), UpstreamReason::Reset);
        let write = H1::Write(io::ErrorKind::Other.into());
        assert_eq!(classify(&write, false), UpstreamReason::Other);
    }
}
