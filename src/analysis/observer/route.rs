//! A route's tap: the validation layer as one route's exchanges see it.

use std::sync::Arc;

use super::{Shared, Tap};
use crate::analysis::msg::Msg;
use crate::analysis::RouteJudging;
use crate::proxy::card_rewrite::CardRewriter;
use crate::report::metrics::Metrics;

impl Tap {
    /// The tap of `route`: its exchanges judged by its own session
    /// (registry, severity policy, card), counted and recorded under its
    /// name, its cards rewritten to `public_url` + its prefix when it
    /// asks. Its series are made here, at zero.
    pub fn for_route(
        &self,
        config: &crate::config::Config,
        route: &crate::config::RouteSpec,
        metrics: &Arc<Metrics>,
    ) -> Result<Tap, crate::config::ConfigError> {
        let card = crate::analysis::route_card_settings(config, route);
        let judging = RouteJudging {
            name: route.name.as_str().into(),
            policy: route.policy()?,
            base_path: route.upstream.base_path().to_owned(),
            bypass_check: card.is_none(),
            server_address: route.upstream.host().to_owned(),
        };
        drop(crate::analysis::series::AnalysisSeries::new(
            metrics,
            &route.name,
        ));
        let judging = Arc::new(judging);
        let base = &self.shared;
        // The route's analysis thread (given one now if it has none)
        // makes its session now, so that the other replicas' facts about
        // its tasks are kept before its first exchange. (Should the table
        // then fail to build, the route's next exchange brings the
        // settings of the table in use again.)
        let tx = base.shards.assign(&judging.name);
        tx.send(Msg::Route(judging.clone()));
        Ok(Tap {
            shared: Arc::new(Shared {
                tx: tx.clone(),
                shards: base.shards.clone(),
                clock: base.clock.clone(),
                max_request_bytes: base.max_request_bytes,
                streams_active: metrics.streams_active.with(&route.name),
                card: card.map(|c| CardRewriter::new(c, &route.name, metrics)),
                traced: base.traced,
                propagate: base.propagate,
                route: Some(judging),
            }),
        })
    }
}
