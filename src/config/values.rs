//! Typed config values parsed from strings: durations, URLs, log settings, severities.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use crate::findings::Severity;

/// A duration written as a humantime string (`"30s"`, `"5m"`, `"1h 30m"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

impl HumanDuration {
    /// Whole seconds.
    pub const fn secs(s: u64) -> HumanDuration {
        HumanDuration(Duration::from_secs(s))
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_duration(&text)
            .map(HumanDuration)
            .map_err(|e| serde::de::Error::custom(format!("invalid duration `{text}`: {e}")))
    }
}

/// A stall limit: a duration or `"off"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallLimit {
    /// Never report a stall in this state.
    Off,
    /// Report once the task sat this long.
    After(Duration),
}

impl<'de> Deserialize<'de> for StallLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "off" {
            return Ok(StallLimit::Off);
        }
        humantime::parse_duration(&text)
            .map(StallLimit::After)
            .map_err(|e| {
                serde::de::Error::custom(format!(
                    "invalid stall limit `{text}` (a duration or \"off\"): {e}"
                ))
            })
    }
}

/// A per-kind severity choice in `[severity]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeverityChoice {
    /// Report at error severity.
    Error,
    /// Report at warning severity.
    Warning,
    /// Do not report this kind.
    Off,
}

impl SeverityChoice {
    /// The severity, or `None` for `off`.
    pub fn severity(self) -> Option<Severity> {
        match self {
            SeverityChoice::Error => Some(Severity::Error),
            SeverityChoice::Warning => Some(Severity::Warning),
            SeverityChoice::Off => None,
        }
    }
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// A tracing filter directive, checked when parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level(pub String);

impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        tracing_subscriber::EnvFilter::try_new(&text)
            .map(|_| Level(text.clone()))
            .map_err(|e| serde::de::Error::custom(format!("invalid log level `{text}`: {e}")))
    }
}

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

impl<'de> Deserialize<'de> for UpstreamUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
