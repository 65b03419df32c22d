//! Typed config values parsed from strings: durations, URLs, log settings, severities.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::value_errors::{LevelError, LevelWhy, SizeError};
use crate::findings::Severity;

pub use super::upstream_url::UpstreamUrl;

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
        let text = d.deserialize_any(Text("a duration like \"30s\" or \"5m\""))?;
        humantime::parse_duration(&text)
            .map(HumanDuration)
            .map_err(|e| {
                serde::de::Error::custom(format!(
                    "invalid duration `{text}` (a duration like \"30s\" or \"5m\"): {e}"
                ))
            })
    }
}

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        humantime::format_duration(self.0).fmt(f)
    }
}

impl Serialize for HumanDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Serialize for StallLimit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            StallLimit::Off => s.serialize_str("off"),
            StallLimit::After(d) => s.collect_str(&HumanDuration(*d)),
        }
    }
}

/// Reads a string, naming what was expected when another type came (a
/// duration given as a bare number, say).
struct Text(&'static str);

impl serde::de::Visitor<'_> for Text {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
        Err(E::custom(format!(
            "expected {}, not the bare number {v} (write it as a string with its unit)",
            self.0
        )))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<String, E> {
        Err(E::custom(format!(
            "expected {}, not the bare number {v}",
            self.0
        )))
    }
}

/// A size in bytes: an integer, or a string with a unit (`"64MiB"`,
/// `"512 KB"`, `"2048"`): B, KB/MB/GB (powers of 1000), KiB/MiB/GiB
/// (powers of 1024), case ignored.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let unit = unit.trim();
    let n: u64 = digits.parse().map_err(|_| SizeError::NotANumber {
        text: text.to_owned(),
    })?;
    let scale: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => {
            return Err(SizeError::Unit {
                text: text.to_owned(),
                unit: unit.to_owned(),
            })
        }
    };
    n.checked_mul(scale).ok_or_else(|| SizeError::TooLarge {
        text: text.to_owned(),
    })
}

/// Reads a size (`parse_size`) given as an integer or a string.
struct Size;

impl serde::de::Visitor<'_> for Size {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a size: a number of bytes, or a string like \"64MiB\"")
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
        u64::try_from(v).map_err(|_| E::custom(format!("a size cannot be negative ({v})")))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<u64, E> {
        parse_size(v).map_err(E::custom)
    }
}

/// `deserialize_with` for a `u64` size key.
pub fn size_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    d.deserialize_any(Size)
}

/// `deserialize_with` for a `usize` size key.
pub fn size_usize<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = d.deserialize_any(Size)?;
    usize::try_from(n).map_err(|_| serde::de::Error::custom(format!("size {n} is too large")))
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
        let text = d.deserialize_any(Text("a duration like \"60s\", or \"off\""))?;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
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
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Level {
    type Err = LevelError;

    /// A filter of comma-separated directives, each a level (`info`) or
    /// `target=level` (`a2a_tap=debug`). Stricter than `EnvFilter`, which
    /// reads a misspelt level (`debgu`) as a target and so logs nothing at
    /// all: here that is an error naming the directive.
    fn from_str(text: &str) -> Result<Level, LevelError> {
        let bad = |why| LevelError {
            text: text.to_owned(),
            why,
        };
        if text.trim().is_empty() {
            return Err(bad(LevelWhy::Empty));
        }
        for directive in text.split(',').map(str::trim) {
            if directive.contains('[') {
                continue; // span filters: left to EnvFilter below
            }
            let level = match directive.split_once('=') {
                Some((target, level)) => {
                    let target_ok = !target.is_empty()
                        && target
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_:-.".contains(c));
                    if !target_ok {
                        return Err(bad(LevelWhy::NoTarget {
                            directive: directive.to_owned(),
                        }));
                    }
                    level
                }
                None => directive,
            };
            if !LEVELS.contains(&level.to_ascii_lowercase().as_str()) {
                return Err(bad(LevelWhy::NotALevel {
                    level: level.to_owned(),
                }));
            }
        }
        tracing_subscriber::EnvFilter::try_new(text)
            .map(|_| Level(text.to_owned()))
            .map_err(|e| bad(LevelWhy::Filter(e)))
    }
}

impl Serialize for Level {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The levels a log filter may name.
const LEVELS: [&str; 6] = ["error", "warn", "info", "debug", "trace", "off"];
