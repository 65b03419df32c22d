//! The push-notification relay (`[push] relay = true`, docs/push.md): the
//! third opt-in alteration. Push configs registered through the proxy get
//! a relay URL (`push.public_url` + `/` + an unguessable token) in place of
//! the caller's webhook (`register`); the agent's deliveries reach the
//! relay's own listener, go on to the caller's webhook unchanged and are
//! judged on the way (`server`); only URLs registered through the proxy
//! are relayed to, for `push.ttl`, at most `push.max_registrations` at
//! once (`table`).

mod register;
mod server;
pub mod table;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::analysis::PushNotes;
use crate::config::Config;
use crate::proxy::{ExchangeObserver, Inspector, ProxyBody, RequestTransform, ResponseTransform};
use crate::report::Metrics;
pub use server::RelayServer;
use table::{is_token, Table};

/// The first id of deliveries: their own range, so a delivery's id never
/// meets an exchange's on the analysis thread (exchanges count from 1).
const FIRST_DELIVERY_ID: u64 = 1 << 62;

/// What the relay's listener needs besides the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServerSettings {
    pub(crate) max_connections: usize,
    pub(crate) webhook_timeout: Duration,
    /// The caller connections' deadlines (`[proxy]`), for agents'.
    pub(crate) deadlines: crate::proxy::activity::Deadlines,
}

/// The relay: its registrations, how relay URLs read, where deliveries
/// are reported.
pub struct Relay {
    table: Table,
    /// The label of what no route owns (an unknown token): the one
    /// upstream's, or `""` with `[[route]]` tables (as unrouted requests).
    public: String,
    /// The same with every `/` written `\/` (a JSON escape some agents use).
    public_escaped: String,
    upstream: Arc<str>,
    notes: PushNotes,
    /// Largest request (or config answer) read for configs.
    max_request_bytes: usize,
    /// Largest delivery body judged.
    max_body_bytes: usize,
    metrics: Arc<Metrics>,
    settings: ServerSettings,
    client: Client<HttpsConnector<HttpConnector>, ProxyBody>,
    ids: AtomicU64,
    /// Deliveries whose webhook answered before their body ended, waiting
    /// for it to be judged whole (at most `LATE_BODIES`; past it, judged
    /// without the body).
    late_bodies: Arc<tokio::sync::Semaphore>,
}

/// Most deliveries waiting for their body after the webhook's answer.
const LATE_BODIES: usize = 256;

impl Relay {
    /// The relay of a config with `[push] relay = true`, reporting to
    /// `notes`; `None` when the relay is off.
    pub fn new(
        config: &Config,
        metrics: Arc<Metrics>,
        notes: PushNotes,
    ) -> Result<Option<Arc<Relay>>, crate::tls::TlsError> {
        let p = &config.push;
        let Some(public) = p.public_url.as_ref().filter(|_| p.relay) else {
            return Ok(None);
        };
        let public = public.to_string().trim_end_matches('/').to_owned();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(config.proxy.connect_timeout.0));
        let tls = crate::tls::tls_config(true, p.tls_ca_file.as_deref())?;
        let connector = HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let upstream: Arc<str> = if config.routes.is_empty() {
            config.upstream_name().into()
        } else {
            "".into()
        };
        metrics
            .push
            .deliveries_total
            .with(&upstream, "unknown_token");
        for route in config.route_specs() {
            metrics.push.touch(&route.name);
        }
        Ok(Some(Arc::new(Relay {
            table: Table::new(p.max_registrations, p.ttl.0),
            public_escaped: public.replace('/', "\\/"),
            public,
            upstream,
            notes,
            max_request_bytes: config.analysis.max_request_bytes,
            max_body_bytes: config.analysis.max_body_bytes,
            metrics,
            settings: ServerSettings {
                max_connections: p.max_connections,
                webhook_timeout: p.webhook_timeout.0,
                deadlines: crate::proxy::activity::Deadlines {
                    header_read: config.proxy.header_read_timeout.0,
                    idle: config.proxy.idle_timeout.0,
                    write: config.proxy.write_timeout.0,
                },
            },
            late_bodies: Arc::new(tokio::sync::Semaphore::new(LATE_BODIES)),
            client: Client::builder(TokioExecutor::new()).build(connector),
            ids: AtomicU64::new(FIRST_DELIVERY_ID),
        })))
    }

    /// The relay URL of `token`.
    fn url_of(&self, token: &str) -> String {
        format!("{}/{token}", self.public)
    }

    /// `route`'s push series, at zero (a route a reload added).
    pub fn touch_route(&self, route: &str) {
        self.metrics.push.touch(route);
    }

    /// A config of `route` passed to the agent unrelayed.
    fn unrelayed(&self, route: &str, reason: &str) {
        self.metrics.push.unrelayed_total.with(route, reason).inc();
    }

    /// A delivery of `route` (`None`: no route owns its token).
    fn outcome(&self, route: Option<&str>, outcome: &str) {
        let route = route.unwrap_or(&self.upstream);
        self.metrics
            .push
            .deliveries_total
            .with(route, outcome)
            .inc();
    }

    /// A delivery's answer, counted like an exchange's of `route`.
    fn counted(&self, route: &str, code: &str, took: Duration) {
        let m = &self.metrics;
        let (binding, method) = ("webhook", "PushDelivery");
        m.requests_total.with(route, binding, method, code).inc();
        m.request_duration_seconds
            .with(route, binding, method)
            .observe(took.as_secs_f64());
    }

    /// The registrations gauges, after a change (expired ones swept).
    fn registered_now(&self) {
        for (route, held) in self.table.sweep(Instant::now()) {
            self.metrics
                .push
                .registrations
                .with(&route)
                .set(i64::try_from(held).unwrap_or(i64::MAX));
        }
    }

    /// The caller's URL for `value` when it is exactly a relay URL the
    /// relay holds (a gRPC answer's string field).
    fn swap(&self, value: &[u8], now: Instant) -> Option<Vec<u8>> {
        let token = value
            .strip_prefix(self.public.as_bytes())?
            .strip_prefix(b"/")?;
        let token = std::str::from_utf8(token).ok().filter(|t| is_token(t))?;
        let entry = self.table.get(token, now)?;
        Some(entry.as_sent.as_bytes().to_vec())
    }

    /// `wire` (a config answer) with every relay URL it holds as the
    /// caller's own URL; `None` when it holds none.
    fn restore(&self, wire: &[u8], now: Instant) -> Option<Vec<u8>> {
        let once = self.restore_with(wire, self.public.as_bytes(), b"/", now);
        let input = once.as_deref().unwrap_or(wire);
        let twice = self.restore_with(input, self.public_escaped.as_bytes(), b"\\/", now);
        twice.or(once)
    }

    fn restore_with(
        &self,
        wire: &[u8],
        prefix: &[u8],
        sep: &[u8],
        now: Instant,
    ) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut copied = 0;
        for at in memchr::memmem::find_iter(wire, prefix) {
            if at < copied {
                continue;
            }
            let token_at = at + prefix.len() + sep.len();
            let token_end = token_at + 64;
            let (Some(s), Some(t), Some(b'"')) = (
                wire.get(at + prefix.len()..token_at),
                wire.get(token_at..token_end),
                wire.get(token_end),
            ) else {
                continue;
            };
            let Some(token) = std::str::from_utf8(t).ok().filter(|t| is_token(t)) else {
                continue;
            };
            let Some(entry) = (s == sep).then(|| self.table.get(token, now)).flatten() else {
                continue;
            };
            out.extend_from_slice(&wire[copied..at]);
            // A URL `http::Uri` took has no character JSON escapes.
            out.extend_from_slice(entry.as_sent.as_bytes());
            copied = token_end;
        }
        (copied > 0).then(|| {
            out.extend_from_slice(&wire[copied..]);
            out
        })
    }
}

/// A route's inspector with the relay's alterations of push configs.
pub struct WithRelay {
    pub inner: Arc<dyn Inspector>,
    pub relay: Arc<Relay>,
    /// The route's name: its registrations are judged in its session and
    /// counted under its label.
    pub route: Arc<str>,
}

impl Inspector for WithRelay {
    fn begin(
        &self,
        request_id: u64,
        head: &http::request::Parts,
        has_body: bool,
    ) -> Option<Arc<dyn ExchangeObserver>> {
        self.inner.begin(request_id, head, has_body)
    }

    fn transform_for(&self, head: &http::request::Parts) -> Option<Box<dyn ResponseTransform>> {
        self.inner.transform_for(head)
    }

    fn request_transform_for(
        &self,
        request_id: u64,
        head: &http::request::Parts,
    ) -> Option<Box<dyn RequestTransform>> {
        register::concerns(head).then(|| {
            Box::new(register::Register {
                relay: self.relay.clone(),
                id: request_id,
                route: self.route.clone(),
            }) as Box<dyn RequestTransform>
        })
    }
}

#[cfg(test)]
mod tests;
