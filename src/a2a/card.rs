//! What an agent card served through the proxy says about the agent: the
//! interfaces it offers (binding, URL path, version) and its capabilities,
//! in 1.0 (`supportedInterfaces`, `capabilities.extendedAgentCard`) and 0.3
//! (`url` + `preferredTransport`, `additionalInterfaces`,
//! `supportsAuthenticatedExtendedCard`) alike. A card is fetched rarely:
//! it is read with serde_json, not the frame decoder.

use serde_json::{Map, Value};

use super::model::Version;

/// An interface a card offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// `JSONRPC`, `HTTP+JSON`, `GRPC`, or another (open) binding name.
    pub binding: String,
    /// Its URL, as the card gives it.
    pub url: String,
    /// The path of its URL, without a trailing slash (`""` for the root).
    pub path: String,
    /// Its `protocolVersion` (1.0 per interface; 0.3 the card's), if given.
    pub version: Option<String>,
    /// 1.0 `tenant`, when given and not empty: requests to the interface
    /// name it (HTTP+JSON under `/{tenant}`, JSON-RPC in `params`).
    pub tenant: Option<String>,
}

/// What the proxy keeps of the last agent card it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardInfo {
    /// The card's dialect: 1.0 when it lists `supportedInterfaces`, else 0.3.
    pub dialect: Version,
    pub interfaces: Vec<Interface>,
    /// `capabilities.streaming` (absent: `None`, which the spec reads as off).
    pub streaming: Option<bool>,
    /// `capabilities.pushNotifications`.
    pub push_notifications: Option<bool>,
    /// 1.0 `capabilities.extendedAgentCard`, 0.3
    /// `supportsAuthenticatedExtendedCard`.
    pub extended_card: Option<bool>,
    /// Whether it has a `capabilities` object at all (without one, what the
    /// agent supports is unknown rather than off).
    pub has_capabilities: bool,
    /// What makes the card invalid for its version (`invalid_agent_card`):
    /// required members missing or of the wrong type.
    pub problems: Vec<String>,
}

/// Why a card body is no card at all.
#[derive(Debug, thiserror::Error)]
pub enum CardError {
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a JSON object")]
    NotAnObject,
}

/// The binding name of the HTTP+JSON interfaces.
pub const HTTP_JSON: &str = "HTTP+JSON";

impl CardInfo {
    /// Reads a card body; `Err` says why it is not a JSON object.
    pub fn parse(body: &[u8]) -> Result<CardInfo, CardError> {
        let value: Value = serde_json::from_slice(body)?;
        let Value::Object(card) = value else {
            return Err(CardError::NotAnObject);
        };
        Ok(CardInfo::of(&card))
    }

    fn of(card: &Map<String, Value>) -> CardInfo {
        let caps = card.get("capabilities").and_then(Value::as_object);
        let flag = |name: &str| caps.and_then(|c| c.get(name)).and_then(Value::as_bool);
        fn str_of<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
            o.get(k).and_then(Value::as_str)
        }
        let mut interfaces = Vec::new();
        let dialect = if let Some(list) = card.get("supportedInterfaces").and_then(Value::as_array)
        {
            for i in list.iter().filter_map(Value::as_object) {
                if let (Some(url), Some(binding)) = (str_of(i, "url"), str_of(i, "protocolBinding"))
                {
                    interfaces.push(Interface {
                        binding: binding.to_owned(),
                        url: url.to_owned(),
                        path: url_path(url),
                        version: str_of(i, "protocolVersion").map(str::to_owned),
                        tenant: str_of(i, "tenant")
                            .filter(|t| !t.is_empty())
                            .map(str::to_owned),
                    });
                }
            }
            Version::V1_0
        } else {
            let version = str_of(card, "protocolVersion").map(str::to_owned);
            if let Some(url) = str_of(card, "url") {
                // 0.3: "If not specified, defaults to 'JSONRPC'".
                let binding = str_of(card, "preferredTransport").unwrap_or("JSONRPC");
                interfaces.push(Interface {
                    binding: binding.to_owned(),
                    url: url.to_owned(),
                    path: url_path(url),
                    version: version.clone(),
                    tenant: None,
                });
            }
            let more = card.get("additionalInterfaces").and_then(Value::as_array);
            for i in more.into_iter().flatten().filter_map(Value::as_object) {
                if let (Some(url), Some(binding)) = (str_of(i, "url"), str_of(i, "transport")) {
                    interfaces.push(Interface {
                        binding: binding.to_owned(),
                        url: url.to_owned(),
                        path: url_path(url),
                        version: version.clone(),
                        tenant: None,
                    });
                }
            }
            Version::V0_3
        };
        let extended = match dialect {
            Version::V1_0 => flag("extendedAgentCard"),
            Version::V0_3 => card
                .get("supportsAuthenticatedExtendedCard")
                .and_then(Value::as_bool),
        };
        CardInfo {
            dialect,
            interfaces,
            streaming: flag("streaming"),
            push_notifications: flag("pushNotifications"),
            extended_card: extended,
            has_capabilities: caps.is_some(),
            problems: problems(card, dialect),
        }
    }

    /// Whether a request to `path` is to one of the card's HTTP+JSON
    /// interfaces: the path lies under an interface's URL path, segment by
    /// segment (tenants and the 0.3 `/v1` sit below it).
    pub fn offers_rest_at(&self, path: &str) -> bool {
        self.interfaces
            .iter()
            .filter(|i| i.binding.eq_ignore_ascii_case(HTTP_JSON))
            .any(|i| under(path, &i.path))
    }

    /// The interface URLs that lead past the proxy: to neither `host` (the
    /// authority the card was fetched at, the caller's `Host`) nor
    /// `public` (the proxy's `public_url` authority). A client that follows
    /// the card talks to those directly. A gRPC interface's url may be
    /// `host:port` (spec 1.0.2: "hostname:port, not an absolute URL"), read
    /// as that authority. Other URLs that are not absolute are not judged.
    pub fn bypassing(&self, host: Option<&str>, public: Option<&str>) -> Vec<&str> {
        let ours: Vec<HostPort> = [host, public]
            .into_iter()
            .flatten()
            .filter_map(HostPort::of_authority)
            .collect();
        if ours.is_empty() {
            return Vec::new();
        }
        self.interfaces
            .iter()
            .filter(|i| {
                HostPort::of_interface(i).is_some_and(|at| !ours.iter().any(|o| o.reaches(&at)))
            })
            .map(|i| i.url.as_str())
            .collect()
    }
}

/// A host and the port named with it, to compare where URLs lead.
#[derive(Debug, PartialEq, Eq)]
struct HostPort {
    /// Lower-cased.
    host: String,
    /// The port given, or (for a URL) its scheme's default.
    port: Option<u16>,
    /// A URL's port is its scheme's default.
    default_port: bool,
}

impl HostPort {
    /// A `Host` header or URL authority (`tap:8080`, `[::1]:8080`, `tap`).
    fn of_authority(text: &str) -> Option<HostPort> {
        let a: http::uri::Authority = text.parse().ok()?;
        Some(HostPort {
            host: a.host().to_ascii_lowercase(),
            port: a.port_u16(),
            default_port: false,
        })
    }

    /// Where an interface leads: its absolute URL, or a gRPC interface's
    /// `host:port` (the port being given, the caller's scheme is moot).
    fn of_interface(i: &Interface) -> Option<HostPort> {
        HostPort::of_url(&i.url).or_else(|| {
            let grpc = i.binding.eq_ignore_ascii_case("GRPC");
            let at = HostPort::of_authority(&i.url).filter(|_| grpc && !i.url.contains('/'))?;
            let default_port = at.port.is_none();
            Some(HostPort { default_port, ..at })
        })
    }

    /// An absolute URL's host and port (the scheme's default when none).
    fn of_url(url: &str) -> Option<HostPort> {
        let uri: http::Uri = url.parse().ok()?;
        let authority = uri.authority()?;
        let default = match uri.scheme_str()? {
            s if s.eq_ignore_ascii_case("https") => 443,
            s if s.eq_ignore_ascii_case("http") => 80,
            _ => return None,
        };
        Some(HostPort {
            host: authority.host().to_ascii_lowercase(),
            port: Some(authority.port_u16().unwrap_or(default)),
            default_port: authority.port_u16().is_none_or(|p| p == default),
        })
    }

    /// Whether a URL at `url` reaches this authority: the same host, and
    /// the same port (an authority without one: a URL on its scheme's
    /// default port, as the caller's scheme is not known).
    fn reaches(&self, url: &HostPort) -> bool {
        self.host == url.host
            && match self.port {
                Some(p) => url.port == Some(p),
                None => url.default_port,
            }
    }
}

/// What a card lacks of what its version requires: 1.0 (§4.4.1
/// AgentCard, §4.4.6 AgentInterface) `name`, `version`, `capabilities` and
/// `supportedInterfaces`, each interface with `url`, `protocolBinding` and
/// `protocolVersion`; 0.3 `name`, `version`, `url`, `capabilities`, and
/// `url` and `transport` on each additional interface. A binding name the
/// spec does not list is not a problem: it calls `protocolBinding` an open
/// string.
fn problems(card: &Map<String, Value>, dialect: Version) -> Vec<String> {
    fn string(out: &mut Vec<String>, o: &Map<String, Value>, key: &str, at: &str) {
        match o.get(key) {
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(Value::String(_)) | None => out.push(format!("{at}{key} is missing")),
            Some(_) => out.push(format!("{at}{key} is not a string")),
        }
    }
    let mut out = Vec::new();
    string(&mut out, card, "name", "");
    string(&mut out, card, "version", "");
    let (list, required, keys): (&str, bool, &[&str]) = match dialect {
        Version::V1_0 => (
            "supportedInterfaces",
            true,
            &["url", "protocolBinding", "protocolVersion"],
        ),
        Version::V0_3 => {
            string(&mut out, card, "url", "");
            ("additionalInterfaces", false, &["url", "transport"])
        }
    };
    match card.get(list) {
        Some(Value::Array(items)) if items.is_empty() && required => {
            out.push(format!("{list} is empty"));
        }
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item.as_object() {
                    Some(o) => {
                        for key in keys {
                            string(&mut out, o, key, &format!("{list}[{i}]."));
                        }
                    }
                    None => out.push(format!("{list}[{i}] is not an object")),
                }
            }
        }
        None if required => out.push(format!("{list} is missing")),
        None => {}
        Some(_) => out.push(format!("{list} is not an array")),
    }
    match card.get("capabilities") {
        Some(Value::Object(_)) => {}
        None => out.push("capabilities is missing".to_owned()),
        Some(_) => out.push("capabilities is not an object".to_owned()),
    }
    out
}

/// Clears `exchange`'s guessed path when `card` names an HTTP+JSON
/// interface it lies under: the caller's path as it is, or with the
/// upstream URL's `base_path` before it (the card names the agent's own
/// URLs; a rewritten card, the proxy's).
pub fn confirm(exchange: &mut super::model::Exchange, card: Option<&CardInfo>, base_path: &str) {
    let (Some(card), Some(path)) = (card, &exchange.guessed_path) else {
        return;
    };
    if card.offers_rest_at(path) || card.offers_rest_at(&format!("{base_path}{path}")) {
        exchange.guessed_path = None;
    }
}

/// The path of a URL without a trailing slash; `""` for none or the root.
fn url_path(url: &str) -> String {
    let path = url
        .parse::<http::Uri>()
        .ok()
        .map(|u| u.path().to_owned())
        .unwrap_or_default();
    path.trim_end_matches('/').to_owned()
}

/// Whether `path` is `base` or lies below it (`/rest` covers `/rest` and
/// `/rest/tasks/1`, not `/restx`).
fn under(path: &str, base: &str) -> bool {
    match path.strip_prefix(base) {
        Some(rest) => rest.is_empty() || rest.starts_with('/') || base.is_empty(),
        None => false,
    }
}

#[cfg(test)]
mod tests;
