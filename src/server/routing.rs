//! The route table the serving threads share: built at start, rebuilt and
//! swapped whole on reload; the series of each route made at zero.

use std::sync::Arc;

use super::{ServerHandle, StartError};
use crate::config::{Config, RouteSpec};
use crate::proxy::activity::Closed;
use crate::proxy::forward::SharedRoutes;
use crate::proxy::inspect::{OTHER_METHOD, UNKNOWN_BINDING};
use crate::proxy::route::{InspectorFor, RouteContext, RouteTable};
use crate::proxy::UpstreamReason;
use crate::report::Metrics;

/// The table of `specs` to start with.
pub(super) fn first_table(
    specs: &[RouteSpec],
    cx: &RouteContext,
) -> Result<SharedRoutes, StartError> {
    let table = RouteTable::build(specs, cx)?;
    init_unrouted(specs, &cx.metrics);
    Ok(Arc::new(arc_swap::ArcSwap::from_pointee(table)))
}

/// Whether `route` takes every request (no prefix, no host).
fn takes_all(route: &RouteSpec) -> bool {
    route.prefix.is_empty() && route.host.is_none()
}

/// Unless one route takes every request, the series of the requests no
/// route takes, from zero.
fn init_unrouted(specs: &[RouteSpec], metrics: &Metrics) {
    if !matches!(specs, [one] if takes_all(one)) {
        metrics
            .requests_total
            .with("", UNKNOWN_BINDING, OTHER_METHOD, "4xx");
    }
}

impl ServerHandle {
    /// Builds the routes of `config` (each seen by what `inspector_for`
    /// gives it) and swaps them in whole: exchanges already in flight
    /// keep the route they began on, with its connections; the new
    /// routes' series are made at zero. On error the table in use stays.
    pub fn reload_routes(
        &self,
        config: &Config,
        inspector_for: InspectorFor,
    ) -> Result<(), StartError> {
        let specs = config.route_specs();
        if specs.is_empty() {
            return Err(StartError::Missing("upstream"));
        }
        let cx = RouteContext {
            inspector_for,
            ..self.route_cx.clone()
        };
        let table = RouteTable::build(&specs, &cx)?;
        for spec in &specs {
            init_series(&self.metrics, &spec.name);
        }
        init_unrouted(&specs, &self.metrics);
        let old = self.routes.swap(Arc::new(table));
        // A route gone says nothing of its upstream any more: its
        // readiness gauge goes (its counters stay, as counters do).
        for route in old.routes(0) {
            if !specs.iter().any(|s| *s.name == *route.name) {
                self.metrics.upstream_up.remove(&route.name);
            }
        }
        // The new routes' upstreams are probed now, not in up to 2 s.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (readiness, routes, metrics) = (
                self.readiness.clone(),
                self.routes.clone(),
                self.metrics.clone(),
            );
            runtime.spawn(async move {
                super::admin::probe_routes(&readiness, &routes, &metrics, false).await;
            });
        }
        Ok(())
    }
}

/// Creates the forwarding series whose label values are known up front,
/// so dashboards see zeros rather than gaps.
pub(super) fn init_series(metrics: &Metrics, upstream: &str) {
    for reason in UpstreamReason::ALL {
        metrics
            .upstream_errors_total
            .with(upstream, reason.as_str());
    }
    metrics.streams_active.with(upstream);
    for listener in ["proxy", "admin"] {
        metrics.accept_errors_total.with(listener);
    }
    for reason in Closed::ALL {
        metrics.connections_closed_total.with(reason.as_str());
    }
}
