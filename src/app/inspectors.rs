//! What sees each route's exchanges, built at start and on every reload.

use std::sync::Arc;

use super::AppError;
use crate::analysis::{route_card_settings, Tap};
use crate::config::{Config, ConfigError};
use crate::proxy::card_rewrite::CardRewriter;
use crate::proxy::route::InspectorFor;
use crate::proxy::{CardOnly, Inspector};
use crate::report::Metrics;

/// The names of the `[[route]]` tables, for the start-up line (empty
/// without: the one upstream is `upstream` and `name`).
pub(super) fn route_names(config: &Config) -> String {
    let names: Vec<&str> = config.routes.iter().map(|r| r.name.as_str()).collect();
    names.join(",")
}

/// What sees each route's exchanges: the caller's inspector (tests), else
/// the validation layer's tap for that route, else (validation off) a
/// card rewriter when the route rewrites cards. Every route's inspector
/// is made here, so a bad `[severity]` of a route is named before start.
pub(super) fn inspector_for(
    config: &Config,
    metrics: &Arc<Metrics>,
    given: Option<Arc<dyn Inspector>>,
    tap: Option<Tap>,
) -> Result<InspectorFor, ConfigError> {
    if let Some(given) = given {
        return Ok(Arc::new(move |_| Some(given.clone())));
    }
    let mut by_name = std::collections::HashMap::new();
    for route in config.route_specs() {
        let inspector: Option<Arc<dyn Inspector>> = match &tap {
            Some(tap) => Some(Arc::new(tap.for_route(config, &route, metrics)?)),
            // Card rewriting is independent of validation.
            None => route_card_settings(config, &route).map(|settings| {
                Arc::new(CardOnly {
                    card: CardRewriter::new(settings, &route.name, metrics),
                }) as Arc<dyn Inspector>
            }),
        };
        by_name.insert(route.name.clone(), inspector);
    }
    Ok(Arc::new(move |route| {
        by_name.get(&route.name).cloned().flatten()
    }))
}

/// Each route's inspector wrapped with the push relay, which puts its
/// URL in the push configs the exchanges register.
pub(super) fn with_relay(inner: InspectorFor, relay: Arc<crate::push::Relay>) -> InspectorFor {
    Arc::new(move |route| {
        relay.touch_route(&route.name);
        inner(route).map(|inner| {
            Arc::new(crate::push::WithRelay {
                inner,
                relay: relay.clone(),
                route: route.name.as_str().into(),
            }) as Arc<dyn Inspector>
        })
    })
}

/// The push relay's listener, when `[push] relay = true` with validation,
/// and each route's inspector wrapped with the relay (kept for reloads).
pub(super) async fn start_relay(
    config: &Config,
    metrics: &Arc<Metrics>,
    tap: Option<&Tap>,
    inspector_for: InspectorFor,
) -> Result<
    (
        InspectorFor,
        Option<crate::push::RelayServer>,
        Option<Arc<crate::push::Relay>>,
    ),
    AppError,
> {
    let (Some(tap), Some(listen), true) = (tap, config.push.listen, config.push.relay) else {
        return Ok((inspector_for, None, None));
    };
    let notes = tap.push_notes();
    let relay = crate::push::Relay::new(config, metrics.clone(), notes)
        .map_err(|e| AppError::Push(format!("push.tls_ca_file: {e}")))?;
    let Some(relay) = relay else {
        return Ok((inspector_for, None, None));
    };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| AppError::Push(format!("cannot bind push.listen {listen}: {e}")))?;
    let server = crate::push::RelayServer::start(listener, relay.clone())
        .map_err(|e| AppError::Push(e.to_string()))?;
    tracing::info!(listen = %server.local_addr(), "push relay serving");
    let wrapped = with_relay(inspector_for, relay.clone());
    Ok((wrapped, Some(server), Some(relay)))
}
