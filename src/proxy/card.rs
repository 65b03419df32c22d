//! The one opt-in alteration: rewriting the URLs an agent card advertises
//! (1.0 `supportedInterfaces[].url`, 0.3 `url` and
//! `additionalInterfaces[].url`) to the proxy's public base URL, so clients
//! that follow the card keep talking through the proxy. Paths, queries and
//! tenants stay exactly; every other byte of the card stays as sent.

use std::collections::BTreeMap;
use std::ops::Range;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use serde_json::value::RawValue;

use crate::proxy::{BoxError, ProxyBody, ResponseTransform};

/// Cards above this size pass unchanged (no card is this large).
const MAX_CARD: usize = 1 << 20;

/// Card rewriting without validation (`validate = false`,
/// `rewrite_agent_card = true`): observes nothing, alters only cards.
pub struct CardOnly {
    pub public_base: String,
}

impl crate::proxy::Inspector for CardOnly {
    fn begin(
        &self,
        _request_id: u64,
        _head: &http::request::Parts,
        _has_body: bool,
    ) -> Option<std::sync::Arc<dyn crate::proxy::ExchangeObserver>> {
        None
    }

    fn transform_for(&self, head: &http::request::Parts) -> Option<Box<dyn ResponseTransform>> {
        card_transform(head, &self.public_base)
    }
}

/// The rewrite for `head`, when it asks for an agent card.
pub fn card_transform(
    head: &http::request::Parts,
    public_base: &str,
) -> Option<Box<dyn ResponseTransform>> {
    (head.method == http::Method::GET && is_card_path(head.uri.path())).then(|| {
        Box::new(CardRewrite {
            public_base: public_base.to_owned(),
        }) as Box<dyn ResponseTransform>
    })
}

/// Rewrites one agent-card response onto the public base URL.
pub struct CardRewrite {
    pub public_base: String,
}

impl ResponseTransform for CardRewrite {
    fn apply(self: Box<Self>, head: &mut http::response::Parts, body: ProxyBody) -> ProxyBody {
        let encoded = head
            .headers
            .get(http::header::CONTENT_ENCODING)
            .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"));
        if !head.status.is_success() || encoded {
            return body;
        }
        // The length changes with the URLs.
        head.headers.remove(http::header::CONTENT_LENGTH);
        CardBody {
            inner: Some(body),
            buf: BytesMut::new(),
            public_base: self.public_base,
            passing: false,
        }
        .boxed_unsync()
    }
}

/// Gathers the card (bounded), then yields it rewritten in one frame. A
/// body over the bound is passed on as it is.
struct CardBody {
    inner: Option<ProxyBody>,
    buf: BytesMut,
    public_base: String,
    /// Over the bound: frames pass unchanged.
    passing: bool,
}

impl Body for CardBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        loop {
            let Some(inner) = this.inner.as_mut() else {
                return Poll::Ready(None);
            };
            if this.buf.len() > MAX_CARD {
                // Too large to be a card: hand back what we hold, then pass.
                let held = std::mem::take(&mut this.buf).freeze();
                this.passing = true;
                return Poll::Ready(Some(Ok(Frame::data(held))));
            }
            match std::task::ready!(Pin::new(inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) if this.passing => return Poll::Ready(Some(Ok(Frame::data(data)))),
                    Ok(data) => this.buf.extend_from_slice(&data),
                    Err(other) => return Poll::Ready(Some(Ok(other))),
                },
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => {
                    this.inner = None;
                    if this.passing {
                        return Poll::Ready(None);
                    }
                    let card = std::mem::take(&mut this.buf).freeze();
                    let out = match rewrite(&card, &this.public_base) {
                        Some(new) => Bytes::from(new),
                        None => card,
                    };
                    return Poll::Ready(Some(Ok(Frame::data(out))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_none() && self.buf.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// Whether a request path asks for an agent card (public or extended).
pub fn is_card_path(path: &str) -> bool {
    path.ends_with("/.well-known/agent-card.json")
        || path.ends_with("/.well-known/agent.json")
        || path.ends_with("/extendedAgentCard")
        || path.ends_with("/v1/card")
}

/// Rewrites the card's advertised URLs onto `public_base` (scheme, host,
/// port and optional path prefix, no trailing slash). Returns `None` when
/// the body is not a JSON object or holds no URL to rewrite: then the
/// original bytes go out untouched.
///
/// Only the bytes of those URL values change: each is located in the text
/// itself (not searched for by content), so another field holding the same
/// URL (a provider's or docs URL) stays, and a URL written with escapes
/// (`http:\/\/agent`) is found all the same.
pub fn rewrite(card: &[u8], public_base: &str) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(card).ok()?;
    let top: BTreeMap<String, &RawValue> = serde_json::from_str(text).ok()?;
    let mut values: Vec<&RawValue> = Vec::new();
    values.extend(top.get("url").copied());
    for list in ["supportedInterfaces", "additionalInterfaces"] {
        let Some(items) = top.get(list) else { continue };
        let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(items.get()) else {
            continue;
        };
        for item in items {
            if let Ok(fields) = serde_json::from_str::<BTreeMap<String, &RawValue>>(item.get()) {
                values.extend(fields.get("url").copied());
            }
        }
    }
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for raw in values {
        let Ok(old) = serde_json::from_str::<String>(raw.get()) else {
            continue;
        };
        let Some(new) = rebase(&old, public_base).filter(|new| *new != old) else {
            continue;
        };
        if let (Some(at), Ok(token)) = (span(text, raw.get()), serde_json::to_string(&new)) {
            edits.push((at, token));
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|(at, _)| at.start);
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (at, token) in edits {
        // Each value is edited once, even when listed twice (duplicate keys).
        if at.start < from {
            continue;
        }
        out.push_str(&text[from..at.start]);
        out.push_str(&token);
        from = at.end;
    }
    out.push_str(&text[from..]);
    Some(out.into_bytes())
}

/// Where `part`, a slice borrowed from `text`, sits in it.
fn span(text: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= text.len() && text.is_char_boundary(start) && text.is_char_boundary(end))
        .then_some(start..end)
}

/// `http://agent:9999/a2a/v1?x=1` on `https://gw.example` →
/// `https://gw.example/a2a/v1?x=1`. `None` for a URL that does not parse.
fn rebase(url: &str, public_base: &str) -> Option<String> {
    let uri: http::Uri = url.parse().ok()?;
    uri.authority()?;
    let tail = uri.path_and_query().map_or("", |p| p.as_str());
    let tail = if tail == "/" && !url.ends_with('/') {
        ""
    } else {
        tail
    };
    Some(format!("{}{}", public_base.trim_end_matches('/'), tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_v1_interfaces_keeping_paths_and_tenants() {
        let card = br#"{"name":"x","supportedInterfaces":[{"url":"http://10.0.0.5:9999/a2a/jsonrpc","protocolBinding":"JSONRPC","tenant":"acme"},{"url":"http://10.0.0.5:9999/rest","protocolBinding":"HTTP+JSON"}],"description":"d"}"#;
        let out = rewrite(card, "https://gw.example:8443/").unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            out,
            r#"{"name":"x","supportedInterfaces":[{"url":"https://gw.example:8443/a2a/jsonrpc","protocolBinding":"JSONRPC","tenant":"acme"},{"url":"https://gw.example:8443/rest","protocolBinding":"HTTP+JSON"}],"description":"d"}"#
        );
    }

    #[test]
    fn rewrites_v03_url_and_additional_interfaces() {
        let card = br#"{ "url": "http://agent:9999/", "additionalInterfaces": [ { "url": "http://agent:9999/v1", "transport": "HTTP+JSON" } ] }"#;
        let out = String::from_utf8(rewrite(card, "http://127.0.0.1:8080").unwrap()).unwrap();
        assert!(out.contains(r#""url": "http://127.0.0.1:8080/""#), "{out}");
        assert!(
            out.contains(r#""url": "http://127.0.0.1:8080/v1""#),
            "{out}"
        );
        assert!(out.starts_with("{ \"url\""), "formatting kept: {out}");
    }

    #[test]
    fn moves_only_the_advertised_values_even_when_escaped() {
        let card = br#"{"provider":{"url":"http://a:1/"},"url":"http://a:1/","docs":"http://a:1/","additionalInterfaces":[7,{"url":"http:\/\/a:1\/r"}]}"#;
        let out = String::from_utf8(rewrite(card, "https://p").unwrap()).unwrap();
        assert_eq!(
            out,
            r#"{"provider":{"url":"http://a:1/"},"url":"https://p/","docs":"http://a:1/","additionalInterfaces":[7,{"url":"https://p/r"}]}"#
        );
    }

    #[test]
    fn leaves_other_bodies_alone() {
        assert!(rewrite(b"not json", "http://p").is_none());
        assert!(rewrite(b"[1,2]", "http://p").is_none());
        assert!(rewrite(br#"{"name":"no urls"}"#, "http://p").is_none());
        assert!(rewrite(br#"{"url":"http://p/x"}"#, "http://p").is_none());
        assert!(is_card_path("/.well-known/agent-card.json"));
        assert!(is_card_path("/t/.well-known/agent.json"));
        assert!(!is_card_path("/tasks/1"));
    }
}
