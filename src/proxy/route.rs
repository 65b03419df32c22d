//! Routes: which agent a request goes to. A [`RouteTable`] holds every
//! route of the config, each with its own upstream client (an HTTP/1.1
//! pool and HTTP/2 connections), timeouts, metric series and inspector;
//! the serving threads share the table, swapped whole on reload, and an
//! exchange keeps the `Arc<Route>` it began on. Each serving thread has
//! its own instance of every route (its client, its series cache), so no
//! counter is shared between threads on the way of a request: cloning a
//! route or its series touches that thread's cache lines alone.
//!
//! Matching: the longest `path_prefix` that is the path or a whole-segment
//! start of it (`/a` matches `/a` and `/a/x`, not `/ab`), among the routes
//! whose `host` is the caller's (or that name none); at equal prefixes a
//! route naming the host wins. The raw path is matched (no
//! percent-decoding); the query string is not matched and passes on.

use std::sync::Arc;
use std::time::Duration;

use http::uri::{Authority, PathAndQuery, Scheme};
use http::{HeaderValue, Uri};

use super::exchange::Shared;
use super::inspect::Inspector;
use super::pool::IdleBudget;
use super::target::Target;
use super::upstream::{self, ClientError, Upstream};
use crate::config::{unsafe_path, RouteSpec, UpstreamUrl};
use crate::report::access::AccessLog;
use crate::report::Metrics;

/// Longest part of a caller's path repeated in a refusal.
const PATH_IN_REASON: usize = 200;

/// One agent behind the proxy.
pub struct Route {
    /// The route's label (`upstream` in metrics, records, spans).
    pub name: Arc<str>,
    prefix: String,
    host: Option<String>,
    strip: bool,
    pub(crate) target: Target,
    /// This thread's client.
    pub(crate) upstream: Upstream,
    pub(crate) shared: Arc<Shared>,
    pub(crate) inspector: Option<Arc<dyn Inspector>>,
    pub(crate) header_timeout: Duration,
    /// Where readiness probes it, and how long a connect may take.
    pub probe: (String, u16, Duration),
}

/// What the table found for a request.
pub enum Routed<'a> {
    /// The route, and the path and query to forward (stripped, when the
    /// route strips its prefix).
    To(&'a Arc<Route>, Option<PathAndQuery>),
    /// No route matches.
    None(String),
    /// The path could resolve past a prefix.
    Unsafe(String),
}

/// Every route, in matching order, and the series of unrouted requests:
/// one instance of each per serving thread.
pub struct RouteTable {
    /// By serving thread, every route in matching order.
    by_thread: Vec<Vec<Arc<Route>>>,
    /// Whether request paths are checked (`unsafe_path`): when any route
    /// matches by prefix.
    checked: bool,
    /// The requests no route took, by serving thread: counted under
    /// `upstream=""`.
    unrouted: Vec<Arc<Shared>>,
    /// The label a request refused before routing (unparsable) is counted
    /// under: the one route's when it takes every request, else `""`.
    refused_label: Arc<str>,
}

/// Gives each route its inspector (the validation layer's, with the
/// route's name and severity policy), or none.
pub type InspectorFor = Arc<dyn Fn(&RouteSpec) -> Option<Arc<dyn Inspector>> + Send + Sync>;

/// What every route is built with besides its spec.
#[derive(Clone)]
pub struct RouteContext {
    pub metrics: Arc<Metrics>,
    pub access: Option<AccessLog>,
    /// Serving threads (one instance of each route each).
    pub threads: usize,
    /// Idle HTTP/1.1 connections kept over every route and thread: each
    /// route's pool on each thread keeps its share (at least one).
    pub idle_total: usize,
    pub inspector_for: InspectorFor,
}

// === impl Route ===

impl Route {
    /// One serving thread's instance of the route of `spec`, seen by
    /// `inspector`; its pool keeps idle connections within `idle`, the
    /// thread's budget its other routes share.
    fn build(
        spec: &RouteSpec,
        cx: &RouteContext,
        inspector: Option<Arc<dyn Inspector>>,
        idle: Arc<IdleBudget>,
    ) -> Result<Route, ClientError> {
        let name: Arc<str> = spec.name.as_str().into();
        Ok(Route {
            shared: Arc::new(Shared::new(
                cx.metrics.clone(),
                spec.name.clone(),
                spec.proxy.stream_idle_timeout.0,
                cx.access.clone(),
            )),
            name,
            prefix: spec.prefix.clone(),
            host: spec.host.clone(),
            strip: spec.strip,
            target: target_of(&spec.upstream),
            upstream: upstream::build(&spec.proxy, &spec.upstream, idle)?,
            inspector,
            header_timeout: spec.proxy.upstream_header_timeout.0,
            probe: (
                spec.upstream.host().to_owned(),
                spec.upstream.port(),
                spec.proxy.connect_timeout.0,
            ),
        })
    }

    /// Closes the idle pooled connections past their timeout.
    pub(crate) fn reap_idle(&self) {
        if let Some(pool) = &self.upstream.http1 {
            pool.reap();
        }
    }

    fn takes_host(&self, host: Option<&str>) -> bool {
        let Some(want) = &self.host else {
            return true;
        };
        let Some(host) = host else {
            return false;
        };
        if want.contains(':') && !want.ends_with(']') {
            return host.eq_ignore_ascii_case(want);
        }
        host_only(host).eq_ignore_ascii_case(want)
    }

    fn takes_path(&self, path: &str) -> bool {
        let p = self.prefix.as_str();
        path.starts_with(p) && (path.len() == p.len() || path.as_bytes()[p.len()] == b'/')
    }
}

/// `host` without its port (`[::1]:80` → `[::1]`).
fn host_only(host: &str) -> &str {
    match host.rfind(':') {
        Some(i) if !host[i..].contains(']') => &host[..i],
        _ => host,
    }
}

/// Where requests to `upstream` go.
fn target_of(upstream: &UpstreamUrl) -> Target {
    let uri = upstream.uri();
    let scheme = uri.scheme().cloned().unwrap_or(Scheme::HTTP);
    let authority = uri
        .authority()
        .cloned()
        .unwrap_or_else(|| Authority::from_static("localhost"));
    let origin = Uri::builder()
        .scheme(scheme.clone())
        .authority(authority.clone())
        .path_and_query("/")
        .build()
        .unwrap_or_default();
    let host = HeaderValue::from_str(authority.as_str())
        .unwrap_or_else(|_| HeaderValue::from_static("localhost"));
    Target {
        scheme,
        authority,
        base_path: upstream.base_path().to_string(),
        origin,
        host,
    }
}

// === impl RouteTable ===

impl RouteTable {
    /// Builds every route of `specs`, an instance per serving thread
    /// (one inspector per route, shared by its instances).
    pub fn build(specs: &[RouteSpec], cx: &RouteContext) -> Result<RouteTable, ClientError> {
        let threads = cx.threads.max(1);
        let inspectors: Vec<_> = specs.iter().map(|s| (cx.inspector_for)(s)).collect();
        // The idle connections the descriptor plan allows, shared out
        // among the threads; a thread's routes share its part as traffic
        // needs (one busy route keeps as many as it would alone).
        let per_thread = (cx.idle_total / threads).max(1);
        let mut by_thread = Vec::with_capacity(threads);
        for _ in 0..threads {
            let idle = IdleBudget::new(per_thread);
            let mut routes = specs
                .iter()
                .zip(&inspectors)
                .map(|(spec, i)| Route::build(spec, cx, i.clone(), idle.clone()).map(Arc::new))
                .collect::<Result<Vec<_>, _>>()?;
            // Longest prefix first; at equal prefixes, the host-bound one
            // (a stable sort: else in the config's order).
            routes.sort_by_key(|r| std::cmp::Reverse((r.prefix.len(), r.host.is_some())));
            by_thread.push(routes);
        }
        let unrouted = (0..threads)
            .map(|_| {
                Arc::new(Shared::new(
                    cx.metrics.clone(),
                    String::new(),
                    Duration::from_secs(1),
                    cx.access.clone(),
                ))
            })
            .collect();
        let refused_label = match specs {
            [one] if one.prefix.is_empty() && one.host.is_none() => one.name.as_str().into(),
            _ => "".into(),
        };
        Ok(RouteTable {
            refused_label,
            checked: specs.iter().any(|r| !r.prefix.is_empty()),
            by_thread,
            unrouted,
        })
    }

    /// Serving thread `thread`'s routes, in matching order.
    pub fn routes(&self, thread: usize) -> &[Arc<Route>] {
        &self.by_thread[thread % self.by_thread.len()]
    }

    /// The `upstream` label of a request refused before it could be
    /// routed (hyper's own 400 to an unparsable request).
    pub fn refused_label(&self) -> Arc<str> {
        self.refused_label.clone()
    }

    /// Serving thread `thread`'s series of the requests no route took.
    pub(crate) fn unrouted(&self, thread: usize) -> &Arc<Shared> {
        &self.unrouted[thread % self.unrouted.len()]
    }

    /// Serving thread `thread`'s route of a request to `uri` with `host`
    /// (the `Host` header, or the URI's authority for HTTP/2).
    pub fn find(&self, thread: usize, uri: &Uri, host: Option<&str>) -> Routed<'_> {
        let path = uri.path();
        if self.checked && unsafe_path(path) {
            return Routed::Unsafe(cut(path));
        }
        let Some(route) = self
            .routes(thread)
            .iter()
            .find(|r| r.takes_path(path) && r.takes_host(host))
        else {
            return Routed::None(cut(path));
        };
        if !route.strip || route.prefix.is_empty() {
            return Routed::To(route, None);
        }
        let rest = &path[route.prefix.len()..];
        let rest = if rest.is_empty() { "/" } else { rest };
        let pq = match uri.query() {
            Some(q) => PathAndQuery::try_from(format!("{rest}?{q}")),
            None => PathAndQuery::try_from(rest),
        };
        match pq {
            Ok(pq) => Routed::To(route, Some(pq)),
            Err(_) => Routed::Unsafe(cut(path)),
        }
    }
}

/// A path cut for a refusal's text (paths are ASCII).
fn cut(path: &str) -> String {
    match path.get(..PATH_IN_REASON) {
        Some(head) if path.len() > PATH_IN_REASON => format!("{head}…"),
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests;
