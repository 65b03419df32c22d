//! The upstream's (and the public) URL: absolute `http://` or `https://`
//! with a host, its base path, and its credentials masked for logs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An absolute `http://` or `https://` URL with a host (upstream or public URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamUrl {
    uri: http::Uri,
}

/// Why a URL was refused.
#[derive(Debug, thiserror::Error)]
#[error("invalid URL `{text}`: {why}")]
pub struct UrlError {
    text: String,
    why: String,
}

impl UpstreamUrl {
    /// The parsed URI.
    pub fn uri(&self) -> &http::Uri {
        &self.uri
    }

    /// `true` for `https://`.
    pub fn is_https(&self) -> bool {
        self.uri.scheme_str() == Some("https")
    }

    /// The host without brackets.
    pub fn host(&self) -> &str {
        let host = self.uri.host().unwrap_or("");
        host.trim_start_matches('[').trim_end_matches(']')
    }

    /// The port, defaulted from the scheme.
    pub fn port(&self) -> u16 {
        self.uri
            .port_u16()
            .unwrap_or(if self.is_https() { 443 } else { 80 })
    }

    /// `host:port`, the default upstream label.
    pub fn host_port(&self) -> String {
        match self.uri.host() {
            Some(h) => format!("{h}:{}", self.port()),
            None => "unknown".to_string(),
        }
    }

    /// The base path without a trailing `/` (`""` for none).
    pub fn base_path(&self) -> &str {
        self.uri.path().trim_end_matches('/')
    }
}

impl FromStr for UpstreamUrl {
    type Err = UrlError;

    fn from_str(text: &str) -> Result<Self, UrlError> {
        let fail = |why: &str| UrlError {
            text: text.to_string(),
            why: why.to_string(),
        };
        let uri: http::Uri = text
            .parse()
            .map_err(|e: http::uri::InvalidUri| fail(&e.to_string()))?;
        match uri.scheme_str() {
            Some("http") | Some("https") => {}
            Some(_) => return Err(fail("scheme must be http or https")),
            None => return Err(fail("must be absolute, e.g. http://127.0.0.1:9999")),
        }
        if uri.host().is_none_or(str::is_empty) {
            return Err(fail("has no host"));
        }
        // `http` reads a port that does not fit 16 bits as no port at all
        // (and the default port would be used): its text is looked at here.
        let authority = uri.authority().map_or("", |a| a.as_str());
        let host_port = authority.rsplit('@').next().unwrap_or("");
        let after_host = host_port.rsplit(']').next().unwrap_or("");
        if let Some((_, port)) = after_host.rsplit_once(':') {
            if uri.port_u16().is_none() {
                return Err(fail(&format!("port {port} is not between 1 and 65535")));
            }
        }
        if uri.port_u16() == Some(0) {
            return Err(fail("port 0 is not between 1 and 65535"));
        }
        if uri.query().is_some() {
            return Err(fail("must not have a query"));
        }
        Ok(UpstreamUrl { uri })
    }
}

impl fmt::Display for UpstreamUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.uri.fmt(f)
    }
}

/// Printed with any credentials masked (`http://***@host/`).
impl Serialize for UpstreamUrl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.masked())
    }
}

impl UpstreamUrl {
    /// The URL with its user information, if any, replaced by `***`.
    pub fn masked(&self) -> String {
        let text = self.uri.to_string();
        match self.uri.authority().map(|a| a.as_str()) {
            Some(auth) if auth.contains('@') => {
                let host = auth.rsplit('@').next().unwrap_or("");
                text.replacen(auth, &format!("***@{host}"), 1)
            }
            _ => text,
        }
    }
}

impl<'de> Deserialize<'de> for UpstreamUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
