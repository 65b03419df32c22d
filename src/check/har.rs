//! HAR (HTTP Archive 1.2) input: every A2A exchange in `log.entries`, in
//! order, classified from its request and judged on its response.

use serde::Deserialize;

use super::{Recorded, RecordingError};
use crate::a2a::classify::classify;

#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    #[serde(default)]
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(default)]
    started_date_time: Option<String>,
    request: Request,
    response: Response,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<Header>,
    #[serde(default)]
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct PostData {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct Response {
    status: u16,
    #[serde(default)]
    headers: Vec<Header>,
    #[serde(default)]
    content: Option<Content>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Content {
    #[serde(default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    encoding: Option<String>,
    /// The body's length in bytes (HAR 1.2: required; some exporters
    /// write it without the text they did not keep).
    #[serde(default)]
    size: Option<f64>,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

/// The A2A exchanges of a HAR file; other entries are passed over.
pub(crate) fn exchanges(bytes: &[u8], label: &str) -> Result<Vec<Recorded>, RecordingError> {
    let har: Har = serde_json::from_slice(bytes).map_err(RecordingError::NotHar)?;
    let mut first: Option<std::time::SystemTime> = None;
    let mut out = Vec::new();
    for (i, entry) in har.log.entries.into_iter().enumerate() {
        let Some(mut rec) = recorded(entry.request, entry.response, label, i)? else {
            continue;
        };
        if let Some(t) = entry.started_date_time.as_deref().and_then(system_time) {
            rec.started = Some(t);
            let base = *first.get_or_insert(t);
            rec.at = t
                .duration_since(base)
                .ok()
                .map(|d| d.as_millis().min(u64::MAX as u128) as u64);
        }
        out.push(rec);
    }
    Ok(out)
}

/// An RFC 3339 time with any offset (browsers write their local one).
fn system_time(text: &str) -> Option<std::time::SystemTime> {
    let stamp = crate::lifecycle::timestamp::parse(text)?;
    let secs = u64::try_from(stamp.secs).ok()?;
    std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(secs, stamp.nanos))
}

fn recorded(
    req: Request,
    resp: Response,
    label: &str,
    index: usize,
) -> Result<Option<Recorded>, RecordingError> {
    let entry = |why| RecordingError::Entry {
        index,
        why: Box::new(why),
    };
    let method = http::Method::from_bytes(req.method.as_bytes())
        .map_err(|_| entry(RecordingError::Method(req.method.clone())))?;
    let uri: http::Uri = req
        .url
        .parse()
        .map_err(|_| entry(RecordingError::Url(req.url.clone())))?;
    let headers = header_map(&req.headers);
    let body = req.post_data.and_then(|p| p.text).unwrap_or_default();
    let Some(exchange) = classify(&method, &uri, &headers, body.as_bytes()) else {
        return Ok(None);
    };
    let content = resp.content.unwrap_or(Content {
        mime_type: None,
        text: None,
        encoding: None,
        size: None,
    });
    let unrecorded = !kept(&content);
    let text = content.text.unwrap_or_default();
    let body = if content.encoding.as_deref() == Some("base64") {
        crate::a2a::base64::decode(text.as_bytes())
            .ok_or_else(|| entry(RecordingError::NotBase64))?
    } else {
        text.into_bytes()
    };
    let content_type = resp
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .map(|h| h.value.clone())
        .or(content.mime_type);
    let upstream = uri.authority().map(|a| a.to_string()).unwrap_or_default();
    Ok(Some(Recorded {
        exchange,
        status: resp.status,
        content_type,
        body,
        at: None,
        started: None,
        assumed: false,
        unrecorded,
        end: crate::lifecycle::End::Upstream,
        label: format!("{label}#{index}"),
        upstream,
    }))
}

/// Whether the entry kept the response body. HAR 1.2 leaves `text` out
/// when the body was not captured (exporters do for streamed or large
/// answers); some write it empty beside the `size` they saw. Only a text
/// that is there, or empty with `size` 0, is what the agent answered.
fn kept(content: &Content) -> bool {
    match (&content.text, content.size) {
        (Some(text), _) if !text.is_empty() => true,
        (Some(_), Some(size)) => size == 0.0,
        _ => false,
    }
}

fn header_map(headers: &[Header]) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for h in headers {
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(h.name.as_bytes()),
            http::HeaderValue::from_str(&h.value),
        ) {
            map.append(n, v);
        }
    }
    map
}
