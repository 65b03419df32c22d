//! The agent card and the interfaces to probe: where the card is (the
//! URL given, or its `/.well-known/agent-card.json`), whether it is valid
//! (the engine's own card reading, `invalid_agent_card`'s problems), and
//! which of its interfaces the probe may contact (same origin only).

use http::Uri;

use super::answer::Answer;
use super::checks::{CheckId, CheckResult};
use super::dialect::Iface;
use super::error::UrlError;
use crate::a2a::card::{CardInfo, Interface};
use crate::a2a::model::{Binding, Version};

/// The URL given, read.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub given: Uri,
    pub card: Uri,
}

impl Target {
    /// `url` (http or https, with a host): a card URL when its path ends
    /// in `.json`, else the agent's base URL.
    pub(crate) fn parse(url: &str) -> Result<Target, UrlError> {
        let given: Uri = url.parse()?;
        match given.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https") => {}
            _ => return Err(UrlError::Scheme),
        }
        if given.host().is_none_or(str::is_empty) {
            return Err(UrlError::NoHost);
        }
        let path = given.path();
        let card = if path.ends_with(".json") {
            given.clone()
        } else {
            let base = path.trim_end_matches('/');
            super::dialect::with_path(&given, &format!("{base}/.well-known/agent-card.json"))
        };
        Ok(Target { given, card })
    }

    pub(crate) fn https(&self) -> bool {
        self.given
            .scheme_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("https"))
    }

    /// Whether `url` is on the origin given (scheme, host, port).
    pub(crate) fn same_origin(&self, url: &Uri) -> bool {
        origin(url).is_some_and(|o| Some(o) == origin(&self.given))
    }
}

/// Scheme, lower-cased host and port (the scheme's default if none).
fn origin(u: &Uri) -> Option<(String, String, u16)> {
    let scheme = u.scheme_str()?.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    Some((
        scheme,
        u.host()?.to_ascii_lowercase(),
        u.port_u16().unwrap_or(default),
    ))
}

/// agent-card-valid from the card's answer; the card when it is one.
pub(crate) fn judge_card(
    status: Option<u16>,
    body: &[u8],
    read: &Answer,
    n: usize,
) -> (CheckResult, Option<CardInfo>) {
    let id = CheckId::AgentCardValid;
    let status = match status {
        Some(s) if (200..300).contains(&s) => s,
        Some(s) => {
            let why = format!("the card URL answered HTTP {s}");
            return (CheckResult::fail(id, why, &[n]), None);
        }
        None => return (CheckResult::fail(id, read.describe(), &[n]), None),
    };
    match CardInfo::parse(body) {
        Err(why) => (
            CheckResult::fail(id, format!("HTTP {status}, but the card is {why}"), &[n]),
            None,
        ),
        Ok(card) if card.problems.is_empty() => (
            CheckResult::pass(
                id,
                format!(
                    "a {} card with {} interface(s)",
                    card.dialect.as_str(),
                    card.interfaces.len()
                ),
                &[n],
            ),
            Some(card),
        ),
        Ok(card) => (
            CheckResult::fail(
                id,
                format!(
                    "the card is not valid for its version: {}",
                    card.problems.join("; ")
                ),
                &[n],
            ),
            Some(card),
        ),
    }
}

/// What to do with one interface of the card.
pub(crate) enum Plan {
    Probe(Iface),
    /// Listed, not probed; every check is not applicable for this reason.
    Skip(String),
}

/// The plan for `i`, an interface of `card`.
pub(crate) fn plan(target: &Target, card: &CardInfo, i: &Interface) -> Plan {
    let binding = match i.binding.to_ascii_uppercase().as_str() {
        "JSONRPC" => Binding::JsonRpc,
        "HTTP+JSON" => Binding::Rest,
        "GRPC" => return Plan::Skip("gRPC probing not supported yet".into()),
        other => return Plan::Skip(format!("binding {other} is not one the probe speaks")),
    };
    let version = match i.version.as_deref() {
        Some(v) if v == "1" || v.starts_with("1.") => Version::V1_0,
        Some(v) if v == "0.3" || v.starts_with("0.3.") => Version::V0_3,
        Some(v) => return Plan::Skip(format!("protocol version {v} is not one the probe speaks")),
        None if card.dialect == Version::V0_3 => Version::V0_3,
        None => return Plan::Skip("the interface names no protocolVersion".into()),
    };
    let Ok(url) = i.url.parse::<Uri>() else {
        return Plan::Skip(format!("{} is not a URL", i.url));
    };
    if url.scheme().is_none() {
        return Plan::Skip(format!("{} is not an absolute URL", i.url));
    }
    if !target.same_origin(&url) {
        return Plan::Skip(format!(
            "not contacted: {} is on another origin than {} (the probe only talks to the URL given)",
            i.url, target.given
        ));
    }
    Plan::Probe(Iface {
        binding,
        version,
        url,
        tenant: i.tenant.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_urls_and_origins() {
        let t = Target::parse("http://127.0.0.1:9/agent/").expect("ok");
        assert_eq!(
            t.card.to_string(),
            "http://127.0.0.1:9/agent/.well-known/agent-card.json"
        );
        let t = Target::parse("https://a.example/x/card.json").expect("ok");
        assert_eq!(t.card.to_string(), "https://a.example/x/card.json");
        assert!(t.same_origin(&"https://A.example:443/rpc".parse().expect("uri")));
        assert!(!t.same_origin(&"http://a.example/rpc".parse().expect("uri")));
        assert!(Target::parse("ftp://x/").is_err());
        assert!(Target::parse("nowhere").is_err());
    }
}
