//! Validation in the live path: observers tee each exchange's bytes to one
//! analysis thread that owns the engine state and the task registry; its
//! findings go to the audit log, the tracing log and the metrics.
//!
//! Ordering is the causal clock: every message goes through one FIFO
//! queue, sent at the moment the proxy forwards the bytes, so the
//! analysis thread sees a request completed after a terminal frame passed
//! only if it really was.

pub mod clock;
mod handle;
mod msg;
mod observer;
mod push_notes;
mod queue;
mod series;
mod shards;
pub mod shared_registry;
mod worker;

pub use clock::{Clock, ManualClock};
pub use handle::AnalysisHandle;
pub use observer::Tap;
#[cfg(test)]
pub(crate) use push_notes::for_tests as queue_for_tests;
pub use push_notes::PushNotes;

use crate::config::{Config, ConfigError, RouteSpec};
use crate::engine::EngineConfig;
use crate::findings::Policy;
use crate::lifecycle::RegistryConfig;
use crate::proxy::card_rewrite::CardSettings;
use crate::report::access::AccessLog;

/// The engine's limits and evidence rules of a config (`[analysis]`,
/// `[audit]`): the same live and offline.
#[derive(Debug)]
pub struct TapConfig {
    /// Label of the upstream in metrics and audit records.
    pub upstream: String,
    /// Largest request body read for classification.
    pub max_request_bytes: usize,
    /// Bytes allowed in flight to the analysis thread.
    pub queue_bytes: usize,
    pub engine: EngineConfig,
    pub registry: RegistryConfig,
    pub policy: Policy,
    /// Rewrite agent cards so (`None`: never).
    pub card: Option<CardSettings>,
    /// The authority of the proxy's `public_url`, when set: card URLs
    /// there lead through the proxy.
    pub public_authority: Option<String>,
    /// Spans of the exchanges, when tracing is on.
    pub trace: Option<TraceSetup>,
    /// The upstream URL's path, put before every caller's path.
    pub upstream_base_path: String,
    /// The clock of judging (the system's, but in tests).
    pub clock: Clock,
    /// The access log, when on: the analysis thread completes the lines
    /// of the exchanges it judges.
    pub access: Option<AccessLog>,
    /// The replicas' shared registry (`backend = "redis"`), when on.
    pub share: Option<shared_registry::ShareSettings>,
    /// How push deliveries are judged, when the relay is on.
    pub push: Option<crate::judge::push::PushSettings>,
    /// Analysis threads, each judging whole routes (at least one).
    pub threads: usize,
}

/// How the analysis thread judges one route: sent with each exchange's
/// opening, so a route added or changed by a reload is judged by its own
/// settings from its first exchange on.
#[derive(Debug)]
pub struct RouteJudging {
    /// The route's label.
    pub name: std::sync::Arc<str>,
    /// Its severity policy (the top-level `[severity]` with its own over it).
    pub policy: Policy,
    /// Its upstream URL's path.
    pub base_path: String,
    /// Whether its cards are looked at for URLs past the proxy (its cards
    /// are not rewritten).
    pub bypass_check: bool,
    /// Its upstream's host (`server.address` on its spans).
    pub server_address: String,
}

/// What the analysis thread builds spans with.
pub struct TraceSetup {
    pub spans: crate::trace::export::Spans,
    pub sample_ratio: f64,
    /// `server.address`: the upstream's host.
    pub server_address: String,
    /// Send the proxy's span upstream as the request's parent.
    pub propagate: bool,
}

impl std::fmt::Debug for TraceSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceSetup")
            .field("sample_ratio", &self.sample_ratio)
            .field("server_address", &self.server_address)
            .finish_non_exhaustive()
    }
}

impl TryFrom<&Config> for TapConfig {
    type Error = ConfigError;

    /// The validation settings of a (validated) config.
    fn try_from(config: &Config) -> Result<TapConfig, ConfigError> {
        // The first route's label and path; the others come with their
        // exchanges (`RouteJudging`).
        let first = config.route_specs().into_iter().next();
        Ok(TapConfig {
            upstream: first
                .as_ref()
                .map_or_else(|| config.upstream_name(), |r| r.name.clone()),
            max_request_bytes: config.analysis.max_request_bytes,
            queue_bytes: config.analysis.queue_bytes,
            engine: EngineConfig::from(config),
            registry: RegistryConfig::from(config),
            policy: config.policy()?,
            card: card_settings(config),
            public_authority: config
                .public_url
                .as_ref()
                .and_then(|u| u.uri().authority())
                .map(|a| a.as_str().to_owned()),
            trace: None,
            upstream_base_path: first
                .as_ref()
                .map_or("", |r| r.upstream.base_path())
                .to_owned(),
            clock: Clock::System,
            access: None,
            share: share_settings(config),
            push: push_settings(config),
            threads: analysis_threads(config),
        })
    }
}

/// The analysis threads of `config`: `analysis.threads`, or (0) one per
/// four serving threads (one judges about four serving threads' SSE
/// traffic: BENCHMARKS.md), no more than the routes at start, since a
/// thread judges whole routes.
pub fn analysis_threads(config: &Config) -> usize {
    match config.analysis.threads {
        0 => crate::server::serving_threads(config.proxy.threads)
            .div_ceil(4)
            .min(config.route_specs().len())
            .max(1),
        n => n,
    }
}

/// How the replicas share the registry, with `backend = "redis"`.
pub fn share_settings(config: &Config) -> Option<shared_registry::ShareSettings> {
    let r = &config.registry;
    match (r.backend, &r.redis_url) {
        (crate::config::Backend::Redis, Some(url)) => Some(shared_registry::ShareSettings {
            url: url.as_str().to_owned(),
            masked_url: url.masked(),
            stream: r.stream_key(),
            // Entries of up to 64 facts, a task making a few (its states):
            // room for several registries' worth, trimmed by the TTL besides.
            max_len: (r.max_tasks / 8).max(1_000),
            ttl: r.ttl.0,
            key: r
                .shared_key
                .as_ref()
                .map(|k| ring::hmac::Key::new(ring::hmac::HMAC_SHA256, k.as_bytes())),
            max_read_bytes: r.max_read_bytes,
            name_routes: !config.routes.is_empty(),
        }),
        _ => None,
    }
}

/// How push deliveries are judged, with `[push] relay = true`.
pub fn push_settings(config: &Config) -> Option<crate::judge::push::PushSettings> {
    let p = &config.push;
    let ms = |d: &crate::config::HumanDuration| u64::try_from(d.0.as_millis()).unwrap_or(u64::MAX);
    p.relay.then(|| crate::judge::push::PushSettings {
        terminal_wait: ms(&p.terminal_wait),
        ttl: ms(&p.ttl),
        max: p.max_registrations,
    })
}

/// How agent cards are rewritten, when `rewrite_agent_card` is on (with
/// or without validation).
pub fn card_settings(config: &Config) -> Option<CardSettings> {
    let public = config
        .public_url
        .as_ref()
        .filter(|_| config.rewrite_agent_card)?;
    Some(CardSettings {
        public_base: public.to_string(),
        max_bytes: config.proxy.max_card_rewrite_bytes,
    })
}

/// How `route`'s agent cards are rewritten, when its `rewrite_agent_card`
/// is on: to its `public_url` (its own, else the top-level one) + its prefix.
pub fn route_card_settings(config: &Config, route: &RouteSpec) -> Option<CardSettings> {
    let public = route
        .public_url
        .as_ref()
        .filter(|_| route.rewrite_agent_card)?;
    Some(CardSettings {
        public_base: format!(
            "{}{}",
            public.to_string().trim_end_matches('/'),
            route.prefix
        ),
        max_bytes: config.proxy.max_card_rewrite_bytes,
    })
}
