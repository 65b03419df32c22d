//! Sidecar `STEM.json` files: how a recorded body was asked for, so it is
//! classified like live traffic instead of guessed at.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{Recorded, RecordingError};
use crate::a2a::classify::classify;

#[derive(Deserialize)]
pub(crate) struct Sidecar {
    exchanges: Vec<SideExchange>,
}

#[derive(Deserialize)]
struct SideExchange {
    request: SideRequest,
    response: SideResponse,
}

#[derive(Deserialize)]
struct SideRequest {
    method: String,
    path: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: Option<String>,
}

#[derive(Deserialize)]
struct SideResponse {
    status: u16,
    #[serde(default)]
    content_type: Option<String>,
}

/// Reads `STEM.json` beside `path`, if there is one.
pub(crate) fn load(path: &Path) -> Result<Option<Sidecar>, RecordingError> {
    let side = path.with_extension("json");
    let Ok(bytes) = std::fs::read(&side) else {
        return Ok(None);
    };
    parse(&bytes)
        .map(Some)
        .map_err(|source| RecordingError::SidecarFile { path: side, source })
}

/// Parses a sidecar's bytes.
pub(crate) fn parse(bytes: &[u8]) -> Result<Sidecar, serde_json::Error> {
    serde_json::from_slice(bytes)
}

impl Sidecar {
    /// The `.sse` body as the answer to the sidecar's first exchange.
    pub(crate) fn stream(
        &self,
        body: Vec<u8>,
        label: &str,
    ) -> Result<Vec<Recorded>, RecordingError> {
        let ex = self.exchanges.first().ok_or(RecordingError::NoExchange)?;
        Ok(ex.recorded(body, label.to_owned())?.into_iter().collect())
    }

    /// Each `.jsonl` line as the answer to the sidecar exchange of its rank.
    pub(crate) fn lines(&self, bytes: &[u8], label: &str) -> Result<Vec<Recorded>, RecordingError> {
        let lines: Vec<&[u8]> = bytes
            .split(|b| *b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .collect();
        if lines.len() != self.exchanges.len() {
            return Err(RecordingError::LineCount {
                lines: lines.len(),
                exchanges: self.exchanges.len(),
            });
        }
        let mut out = Vec::new();
        for (i, (line, ex)) in lines.into_iter().zip(&self.exchanges).enumerate() {
            out.extend(ex.recorded(line.to_vec(), format!("{label}#{i}"))?);
        }
        Ok(out)
    }
}

impl SideExchange {
    fn recorded(&self, body: Vec<u8>, label: String) -> Result<Option<Recorded>, RecordingError> {
        let r = &self.request;
        let method = http::Method::from_bytes(r.method.as_bytes())
            .map_err(|_| RecordingError::Method(r.method.clone()))?;
        let uri: http::Uri = r
            .path
            .parse()
            .map_err(|_| RecordingError::Path(r.path.clone()))?;
        let mut headers = http::HeaderMap::new();
        for (k, v) in &r.headers {
            if let (Ok(n), Ok(v)) = (
                http::HeaderName::from_bytes(k.as_bytes()),
                http::HeaderValue::from_str(v),
            ) {
                headers.append(n, v);
            }
        }
        let Some(exchange) = classify(
            &method,
            &uri,
            &headers,
            r.body.as_deref().unwrap_or("").as_bytes(),
        ) else {
            return Ok(None);
        };
        Ok(Some(Recorded {
            exchange,
            status: self.response.status,
            content_type: self.response.content_type.clone(),
            body,
            at: None,
            started: None,
            assumed: false,
            unrecorded: false,
            end: crate::lifecycle::End::Upstream,
            upstream: label.clone(),
            label,
        }))
    }
}
