//! The rewrite itself, on a whole (uncompressed) card: where the advertised
//! URLs sit in the text, and what they become on the public base URL.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Rewrites the card's advertised URLs onto `public_base` (scheme, host,
/// port and optional path prefix, no trailing slash). Returns `None` when
/// the body is not a JSON object or holds no URL to rewrite: then the
/// original bytes go out untouched.
///
/// Only the bytes of those URL values change: each is located in the text
/// itself (not searched for by content), so another field holding the same
/// URL (a provider's or docs URL) stays, and a URL written with escapes
/// (`http:\/\/agent`) is found all the same. A key written twice (`url`,
/// `supportedInterfaces`, `additionalInterfaces`, an interface's `url`,
/// with or without escapes) is rewritten at every occurrence: parsers
/// differ on which duplicate wins, so none may keep the agent's address.
pub fn rewrite(card: &[u8], public_base: &str) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(card).ok()?;
    let top: Entries = serde_json::from_str(text).ok()?;
    let mut values: Vec<&RawValue> = top.all("url").collect();
    for list in ["supportedInterfaces", "additionalInterfaces"] {
        for items in top.all(list) {
            let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(items.get()) else {
                continue;
            };
            for item in items {
                if let Ok(fields) = serde_json::from_str::<Entries>(item.get()) {
                    values.extend(fields.all("url"));
                }
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
        // Each value is edited once.
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

/// A JSON object's members in order, duplicates kept (a map would keep
/// only one of them), keys unescaped, values as their text.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Entries<'a> {
    /// Every value given under `key`.
    fn all<'s>(&'s self, key: &'s str) -> impl Iterator<Item = &'a RawValue> + 's {
        self.0
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| *v)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = Entries<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Entries<'a>, M::Error> {
                let mut out = Vec::new();
                while let Some(member) = map.next_entry::<String, &'a RawValue>()? {
                    out.push(member);
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(Members(PhantomData))
    }
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
    use crate::proxy::card_rewrite::is_card_path;

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

    /// Python's and JavaScript's parsers keep the last of a repeated key,
    /// others the first: every occurrence moves (escaped keys too).
    #[test]
    fn every_occurrence_of_a_repeated_key_moves() {
        let card = br#"{"url":"http://a:1/x","url":"http://a:1/y","u\u0072l":"http://a:1/z",
"supportedInterfaces":[{"url":"http://a:1/1","url":"http://a:1/2"}],
"supportedInterfaces":[{"url":"http://a:1/3"}],
"additionalInterfaces":[{"url":"http://a:1/4"}],"additionalInterfaces":[{"url":"http://a:1/5"}]}"#;
        let out = String::from_utf8(rewrite(card, "https://p").unwrap()).unwrap();
        assert!(!out.contains("a:1"), "{out}");
        for tail in ["x", "y", "z", "1", "2", "3", "4", "5"] {
            assert!(out.contains(&format!("\"https://p/{tail}\"")), "{out}");
        }
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
