//! `[registry]`: the task registry across exchanges, per process or shared
//! by the replicas in front of one agent through Redis.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::value_errors::RedisUrlError;
use super::values::size_usize;
use super::{ConfigError, HumanDuration};

/// `[registry]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegistrySection {
    /// Most tasks remembered; the least recently seen are forgotten first.
    pub max_tasks: usize,
    /// A task not seen for this long is forgotten.
    pub ttl: HumanDuration,
    /// Where the registry lives.
    pub backend: Backend,
    /// The Redis (or Valkey) server of `backend = "redis"`.
    pub redis_url: Option<RedisUrl>,
    /// Put before every Redis key, so deployments can share one server.
    pub key_prefix: String,
    /// The key the replicas sign their entries with (HMAC-SHA256); with it,
    /// entries unsigned or signed with another key are skipped, counted.
    /// `A2A_TAP_REGISTRY_SHARED_KEY` in the environment wins over the file.
    pub shared_key: Option<SharedKey>,
    /// Most bytes of stream entries one read brings from Redis.
    #[serde(deserialize_with = "size_usize")]
    pub max_read_bytes: usize,
}

impl Default for RegistrySection {
    fn default() -> Self {
        RegistrySection {
            max_tasks: 100_000,
            ttl: HumanDuration::secs(3600),
            backend: Backend::Memory,
            redis_url: None,
            key_prefix: "a2a-tap".to_string(),
            shared_key: None,
            max_read_bytes: 4 << 20,
        }
    }
}

/// `[registry] backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// What this process saw.
    Memory,
    /// What every replica publishing to the same Redis stream saw.
    Redis,
}

impl RegistrySection {
    /// The problems of the section, each naming its key.
    pub(super) fn problems(&self) -> Vec<ConfigError> {
        let invalid = |key: &str, why: &str| ConfigError::Invalid {
            key: key.to_string(),
            why: why.to_string(),
        };
        let mut problems = Vec::new();
        if self.backend == Backend::Redis && self.redis_url.is_none() {
            problems.push(invalid(
                "registry.redis_url",
                "required with backend = \"redis\" (e.g. redis://127.0.0.1:6379)",
            ));
        }
        let bad_char = |c: char| c.is_whitespace() || c.is_control();
        if self.key_prefix.is_empty() || self.key_prefix.chars().any(bad_char) {
            problems.push(invalid(
                "registry.key_prefix",
                "must be a non-empty name without spaces",
            ));
        }
        if self
            .shared_key
            .as_ref()
            .is_some_and(|k| k.0.len() < SharedKey::MIN_LEN)
        {
            problems.push(invalid(
                "registry.shared_key",
                "must be at least 16 bytes, from the file or A2A_TAP_REGISTRY_SHARED_KEY (e.g. the output of `openssl rand -hex 32`)",
            ));
        }
        if self.max_read_bytes < MIN_READ_BYTES {
            problems.push(invalid(
                "registry.max_read_bytes",
                "must be at least 256KiB (the largest entry a replica writes fits in one read)",
            ));
        }
        problems
    }

    /// What is legal but probably not meant.
    pub(super) fn warnings(&self) -> Vec<String> {
        match (&self.redis_url, self.backend) {
            (Some(_), Backend::Memory) => vec![
                "`registry.redis_url` is set but `registry.backend` is \"memory\": Redis is not used \
                 (set backend = \"redis\", or remove the key)"
                    .to_string(),
            ],
            _ => Vec::new(),
        }
    }

    /// The Redis stream the replicas share facts on.
    pub fn stream_key(&self) -> String {
        format!("{}:facts", self.key_prefix)
    }
}

/// The least `max_read_bytes`: room for the largest entry a replica writes
/// (64 facts with ids at their limit), so no entry of a replica is too big
/// to read.
pub const MIN_READ_BYTES: usize = 256 << 10;

/// The environment variable that gives `registry.shared_key` (over the file).
pub const SHARED_KEY_ENV: &str = "A2A_TAP_REGISTRY_SHARED_KEY";

/// `registry.shared_key`: a secret, printed as `***`.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct SharedKey(String);

impl SharedKey {
    /// Shortest key accepted, in bytes.
    pub const MIN_LEN: usize = 16;

    /// The key's bytes, to sign with.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl From<String> for SharedKey {
    fn from(key: String) -> SharedKey {
        SharedKey(key)
    }
}

impl fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl Serialize for SharedKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("***")
    }
}

/// A `redis://` or `rediss://` URL (user, password and database number as
/// redis-rs reads them), printed with its credentials masked.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl(String);

impl RedisUrl {
    /// The URL as configured (credentials included).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The URL with its user information, if any, replaced by `***`.
    pub fn masked(&self) -> String {
        let Some((scheme, rest)) = self.0.split_once("://") else {
            return self.0.clone();
        };
        let end = rest.find('/').unwrap_or(rest.len());
        match rest[..end].rsplit_once('@') {
            Some((_, host)) => format!("{scheme}://***@{host}{}", &rest[end..]),
            None => self.0.clone(),
        }
    }
}

impl std::str::FromStr for RedisUrl {
    type Err = RedisUrlError;

    fn from_str(text: &str) -> Result<Self, RedisUrlError> {
        let masked = RedisUrl(text.to_string()).masked();
        if !(text.starts_with("redis://") || text.starts_with("rediss://")) {
            return Err(RedisUrlError::Scheme { masked });
        }
        redis::Client::open(text).map_err(|source| RedisUrlError::Invalid { masked, source })?;
        Ok(RedisUrl(text.to_string()))
    }
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked())
    }
}

impl Serialize for RedisUrl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.masked())
    }
}

impl<'de> Deserialize<'de> for RedisUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
