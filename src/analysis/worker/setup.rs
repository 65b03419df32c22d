//! Building the analysis thread's worker: its parts, and the settings
//! given after (`with_*`).

use std::sync::Arc;
use std::time::Instant;

use super::live::LiveSet;
use super::records::BypassCheck;
use super::tracer::Tracer;
use super::Worker;
use crate::analysis::clock::Clock;
use crate::analysis::series::AnalysisSeries;
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
        let series = AnalysisSeries::new(&metrics, &upstream);
        let bypass = BypassCheck::new(&metrics, &upstream);
        let pipeline = Pipeline::new(policy, engine_cfg.max_id_bytes);
        Worker {
            session: Session::with_registry(registry, engine_cfg, pipeline).live(""),
            upstream,
            metrics,
            audit,
            budget,
            epoch: Instant::now(),
            series,
            live: LiveSet::default(),
            handled: 0,
            held: 0,
            clock: Instant::now(),
            clock_ms: 0,
            returned: 0,
            time: Clock::System,
            access: None,
            fold_due: None,
            bypass,
            tracer: None,
            publisher: None,
            links: Default::default(),
        }
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
        self.bypass.on = on;
        self.bypass.public = public;
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
            self.session = self.session.with_push(s);
        }
        self
    }

    /// The upstream URL's path (`/a2a` for `http://agent/a2a`).
    pub(crate) fn with_base_path(mut self, base_path: &str) -> Worker {
        self.session = self.session.live(base_path);
        self
    }
}
