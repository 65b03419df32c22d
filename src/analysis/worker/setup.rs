//! Building the analysis thread's worker: its parts, and the settings
//! given after (`with_*`).

use std::sync::Arc;
use std::time::Instant;

use super::live::LiveSet;
use super::routes::{Parked, RouteJudge};
use super::tracer::Tracer;
use super::Worker;
use crate::analysis::clock::Clock;
use crate::engine::EngineConfig;
use crate::findings::Policy;
use crate::judge::{Pipeline, Session};
use crate::lifecycle::Registry;
use crate::report::access::AccessLog;
use crate::report::audit::AuditLog;
use crate::report::metrics::Metrics;

impl Worker {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        registry: Registry,
        engine_cfg: EngineConfig,
        policy: Policy,
        upstream: String,
        metrics: Arc<Metrics>,
        audit: AuditLog,
        budget: usize,
    ) -> Worker {
        let pipeline = Pipeline::new(policy.clone(), engine_cfg.max_id_bytes);
        // The bounds of the routes' registries made later: the first's,
        // once `with_route_registry` gives them (the defaults in tests).
        let registry_config = crate::lifecycle::RegistryConfig::default();
        let session = Session::with_registry(registry, engine_cfg, pipeline).live("");
        // The first route's slot holds a stand-in while it is judged.
        let stand_in = Session::with_registry(
            crate::lifecycle::Registry::new(registry_config.clone()),
            engine_cfg,
            Pipeline::new(policy, engine_cfg.max_id_bytes),
        );
        Worker {
            judge: Box::new(RouteJudge::new(session, &upstream, &metrics, None)),
            parked: Parked {
                slots: vec![Box::new(RouteJudge::new(
                    stand_in, &upstream, &metrics, None,
                ))],
                ..Parked::default()
            },
            registry_config,
            engine_config: engine_cfg,
            metrics,
            audit,
            budget,
            epoch: Instant::now(),
            live: LiveSet::default(),
            handled: 0,
            held: 0,
            clock: Instant::now(),
            clock_ms: 0,
            returned: 0,
            time: Clock::System,
            access: None,
            fold_due: None,
            finding_lines: super::finding_lines(),
            first_route: true,
            tracer: None,
            publisher: None,
            links: Default::default(),
        }
    }

    /// Shares `lines`, the findings' log lines' allowance, with the
    /// other analysis threads.
    pub(crate) fn with_finding_lines(mut self, lines: super::FindingLines) -> Worker {
        self.finding_lines = lines;
        self
    }

    /// Whether this thread judges the first route; when not, its slot is
    /// a stand-in whose metrics are not this thread's to set.
    pub(crate) fn with_first_route(mut self, on: bool) -> Worker {
        self.first_route = on;
        self
    }

    /// Makes the registries of the routes after the first with `cfg`.
    pub(crate) fn with_route_registry(mut self, cfg: crate::lifecycle::RegistryConfig) -> Worker {
        self.registry_config = cfg;
        self
    }

    /// Offers the registry's facts to `publisher` after each drain.
    pub(crate) fn with_publisher(
        mut self,
        publisher: Option<super::super::shared_registry::Publisher>,
    ) -> Worker {
        self.publisher = publisher;
        self
    }

    /// Builds a span of every sampled exchange and hands it to `tracer`.
    pub(crate) fn with_tracer(mut self, tracer: Option<Tracer>) -> Worker {
        self.tracer = tracer;
        self
    }

    /// Looks for agent cards whose URLs lead past the proxy (when cards are
    /// not rewritten), the proxy's own being `public` and the caller's Host.
    pub(crate) fn with_bypass_check(mut self, on: bool, public: Option<String>) -> Worker {
        self.judge.bypass.on = on;
        self.judge.bypass.public = public;
        self
    }

    /// Completes and writes access-log lines to `access`.
    pub(crate) fn with_access(mut self, access: Option<AccessLog>) -> Worker {
        self.access = access;
        self
    }

    /// Judges on `clock` (a manual one in tests).
    pub(crate) fn with_clock(mut self, clock: Clock) -> Worker {
        self.epoch = clock.now();
        self.clock = self.epoch;
        self.time = clock;
        self
    }

    /// Judges push deliveries with `settings` (the relay is on).
    pub(crate) fn with_push(
        mut self,
        settings: Option<crate::judge::push::PushSettings>,
    ) -> Worker {
        if let Some(s) = settings {
            // The relay's registrations and deliveries are the first
            // route's (with push, `[[route]]` tables are refused).
            let session = std::mem::replace(
                &mut self.judge.session,
                crate::judge::Session::new(&Default::default()),
            );
            self.judge.session = session.with_push(s);
        }
        self
    }

    /// The upstream URL's path (`/a2a` for `http://agent/a2a`).
    pub(crate) fn with_base_path(mut self, base_path: &str) -> Worker {
        self.judge.session = self.judge.session.live(base_path);
        self
    }
}
