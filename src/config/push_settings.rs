//! `[push]`: the push-notification relay (off by default). When on, every
//! push config registered through the proxy gets a relay URL of the
//! proxy's in place of the caller's webhook, and the agent's deliveries
//! reach the caller through the relay, judged on the way.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::{ConfigError, HumanDuration, UpstreamUrl};

/// `[push]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PushSection {
    /// Relay push deliveries (the third opt-in alteration: push configs'
    /// `url` replaced on the way to the agent, shown back on the way out).
    pub relay: bool,
    /// Where agents deliver: the relay's own listener.
    pub listen: Option<SocketAddr>,
    /// How agents reach the relay: relay URLs are this plus `/` and a token.
    pub public_url: Option<UpstreamUrl>,
    /// How long after a task is seen terminal its delivery may take before
    /// `push_not_delivered`.
    pub terminal_wait: HumanDuration,
    /// Most registrations held (token → the caller's webhook); past it, a
    /// config passes to the agent unchanged (not relayed), counted.
    pub max_registrations: usize,
    /// A registration is forgotten this long after it was made.
    pub ttl: HumanDuration,
    /// Most deliveries in flight through the relay at once; past it, a
    /// delivery is answered 503 (agents retry), counted.
    pub max_connections: usize,
    /// Longest wait for a webhook's connection and answer head.
    pub webhook_timeout: HumanDuration,
    /// A PEM file of CA certificates trusted for `https://` webhooks,
    /// besides the system's.
    pub tls_ca_file: Option<std::path::PathBuf>,
}

impl Default for PushSection {
    fn default() -> Self {
        PushSection {
            relay: false,
            listen: None,
            public_url: None,
            terminal_wait: HumanDuration::secs(30),
            max_registrations: 100_000,
            ttl: HumanDuration::secs(24 * 3600),
            max_connections: 1024,
            webhook_timeout: HumanDuration::secs(30),
            tls_ca_file: None,
        }
    }
}

impl PushSection {
    /// The problems of the section, each naming its key; `validate`: the
    /// relay judges through the validation layer, which must be on.
    pub(super) fn problems(&self, validate: bool) -> Vec<ConfigError> {
        let invalid = |key: &str, why: &str| ConfigError::Invalid {
            key: key.to_string(),
            why: why.to_string(),
        };
        let mut problems = Vec::new();
        let zero = |d: &HumanDuration| d.0.is_zero();
        let checks = [
            ("push.max_registrations", self.max_registrations == 0),
            ("push.max_connections", self.max_connections == 0),
            ("push.terminal_wait", zero(&self.terminal_wait)),
            ("push.ttl", zero(&self.ttl)),
            ("push.webhook_timeout", zero(&self.webhook_timeout)),
        ];
        for (key, bad) in checks {
            if bad {
                problems.push(invalid(key, "must be greater than zero"));
            }
        }
        if let Some(path) = &self.tls_ca_file {
            if !path.is_file() {
                problems.push(invalid(
                    "push.tls_ca_file",
                    &format!("cannot read {}: not a readable file", path.display()),
                ));
            }
        }
        if !self.relay {
            return problems;
        }
        if self.listen.is_none() {
            problems.push(invalid(
                "push.listen",
                "is required with push.relay = true: the address agents deliver to (e.g. 0.0.0.0:8090)",
            ));
        }
        if self.public_url.is_none() {
            problems.push(invalid(
                "push.public_url",
                "is required with push.relay = true: how agents reach push.listen (e.g. https://push.example.com)",
            ));
        }
        if !validate {
            problems.push(invalid(
                "push.relay",
                "needs validate = true: the relay learns registrations through the validation layer",
            ));
        }
        problems
    }
}
