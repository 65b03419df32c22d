//! The status of a gRPC call: `grpc-status`, and the A2A error its
//! `grpc-status-details-bin` (a `google.rpc.Status`, base64) names in an
//! `ErrorInfo` (spec §10.6).

use prost::Message as _;

use super::proto;
use crate::a2a::errors::error_from_reason;
use crate::a2a::model::{A2aError, DetailFault, ErrorInfo};

/// `OK`.
pub const OK: u32 = 0;

/// A call's status, as its trailers (or a trailers-only answer's head) say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcStatus {
    /// The `grpc-status` code (0 `OK`, 5 `NOT_FOUND`, 9 `FAILED_PRECONDITION`...).
    pub code: u32,
    /// The A2A error its ErrorInfo's `reason` names (`Other` without one).
    pub error: A2aError,
    /// An ErrorInfo naming an A2A error outside `a2a-protocol.org`.
    pub fault: Option<DetailFault>,
}

impl GrpcStatus {
    /// The status in `headers` (trailers, or the head of a trailers-only
    /// answer); `None` without a readable `grpc-status`. A details value
    /// that does not decode names no error (the code stands alone).
    pub fn from_headers(headers: &http::HeaderMap) -> Option<GrpcStatus> {
        // Names made once: a name given as text is parsed at each lookup.
        const STATUS: http::HeaderName = http::HeaderName::from_static("grpc-status");
        const DETAILS: http::HeaderName = http::HeaderName::from_static("grpc-status-details-bin");
        let code = headers
            .get(STATUS)?
            .to_str()
            .ok()?
            .trim()
            .parse::<u32>()
            .ok()?;
        let mut status = GrpcStatus {
            code,
            error: A2aError::Other,
            fault: None,
        };
        let details = headers
            .get(DETAILS)
            .and_then(|v| crate::a2a::base64::decode(v.as_bytes()))
            .and_then(|b| proto::RpcStatus::decode(&b[..]).ok());
        for (entry, any) in details.iter().flat_map(|d| d.details.iter()).enumerate() {
            if !any.type_url.ends_with("google.rpc.ErrorInfo") {
                continue;
            }
            let Ok(info) = proto::ErrorInfo::decode(&any.value[..]) else {
                continue;
            };
            let Some(reason) = error_from_reason(&info.reason) else {
                continue;
            };
            status.error = reason;
            if info.domain != "a2a-protocol.org" {
                status.fault = Some(DetailFault::Domain {
                    entry: u32::try_from(entry).unwrap_or(u32::MAX),
                    reason,
                    has_domain: !info.domain.is_empty(),
                });
            }
            break;
        }
        Some(status)
    }

    /// The status as the error answer the reducer judges (its `code` the
    /// gRPC code).
    pub fn error_info(&self) -> ErrorInfo {
        ErrorInfo {
            code: i64::from(self.code),
            error: self.error,
            fault: self.fault,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn details(reason: &str, domain: &str) -> String {
        let info = proto::ErrorInfo {
            reason: reason.into(),
            domain: domain.into(),
        };
        let status = proto::RpcStatus {
            code: 5,
            details: vec![proto::Any {
                type_url: "type.googleapis.com/google.rpc.ErrorInfo".into(),
                value: info.encode_to_vec(),
            }],
        };
        let bytes = status.encode_to_vec();
        let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for chunk in bytes.chunks(3) {
            let n =
                chunk.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
            for i in 0..=chunk.len() {
                s.push(table[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        s
    }

    #[test]
    fn the_status_and_the_error_its_details_name() {
        let h = |pairs: &[(&'static str, String)]| {
            let mut m = http::HeaderMap::new();
            for (k, v) in pairs {
                m.insert(*k, v.parse().unwrap());
            }
            m
        };
        assert_eq!(GrpcStatus::from_headers(&h(&[])), None);
        assert_eq!(
            GrpcStatus::from_headers(&h(&[("grpc-status", "x".into())])),
            None
        );
        let ok = GrpcStatus::from_headers(&h(&[("grpc-status", "0".into())])).unwrap();
        assert_eq!((ok.code, ok.error), (OK, A2aError::Other));
        let nf = h(&[
            ("grpc-status", "5".into()),
            (
                "grpc-status-details-bin",
                details("TASK_NOT_FOUND", "a2a-protocol.org"),
            ),
        ]);
        let s = GrpcStatus::from_headers(&nf).unwrap();
        assert_eq!(
            (s.code, s.error, s.fault),
            (5, A2aError::TaskNotFound, None)
        );
        let foreign = h(&[
            ("grpc-status", "5".into()),
            ("grpc-status-details-bin", details("TASK_NOT_FOUND", "")),
        ]);
        let s = GrpcStatus::from_headers(&foreign).unwrap();
        assert!(matches!(
            s.fault,
            Some(DetailFault::Domain {
                has_domain: false,
                ..
            })
        ));
        let junk = h(&[
            ("grpc-status", "9".into()),
            ("grpc-status-details-bin", "!!".into()),
        ]);
        assert_eq!(
            GrpcStatus::from_headers(&junk).unwrap().error,
            A2aError::Other
        );
    }
}
