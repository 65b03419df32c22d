//! Every metric of the contract, on one explicit registry (no globals), and
//! the Prometheus text encoding served at `/metrics`.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

/// Buckets for request and stream durations, in seconds.
const DURATION_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0,
    3600.0,
];
/// Microsecond-scale buckets for the time the proxy itself adds.
const OVERHEAD_BUCKETS: &[f64] = &[
    0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005,
    0.01, 0.05,
];
/// Buckets for the time until a stream's first event.
const FIRST_EVENT_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Why a metric could not be registered (only on a programming error).
#[derive(Debug, thiserror::Error)]
#[error("metrics: {0}")]
pub struct MetricsError(#[from] prometheus::Error);

/// All metrics of docs/metrics.md, registered on one registry.
pub struct Metrics {
    registry: Registry,
    /// `a2a_requests_total{upstream,binding,method,code}`; `code` is the status class or `error`.
    pub requests_total: Requests,
    /// `a2a_request_duration_seconds{upstream,binding,method}`.
    pub request_duration_seconds: RequestDurations,
    /// `a2a_proxy_overhead_seconds{upstream}`.
    pub proxy_overhead_seconds: PerUpstreamHistogram,
    /// `a2a_stream_events_total{upstream,binding,event}`.
    pub stream_events_total: StreamEvents,
    /// `a2a_streams_active{upstream}`.
    pub streams_active: PerUpstreamGauge,
    /// `a2a_stream_duration_seconds{upstream,outcome}`.
    pub stream_duration_seconds: StreamDurations,
    /// `a2a_time_to_first_event_seconds{upstream}`.
    pub time_to_first_event_seconds: PerUpstreamHistogram,
    /// `a2a_task_transitions_total{upstream,from,to}`.
    pub task_transitions_total: Transitions,
    /// `a2a_tasks_tracked{upstream,state}`.
    pub tasks_tracked: TasksTracked,
    /// `a2a_violations_total{upstream,kind,severity}`.
    pub violations_total: Violations,
    /// `a2a_upstream_errors_total{upstream,reason}`.
    pub upstream_errors_total: ByReason,
    /// `a2a_audit_records_dropped_total`.
    pub audit_records_dropped_total: IntCounter,
    /// `a2a_access_lines_dropped_total`: access-log lines lost to a full
    /// queue or a failed write.
    pub access_lines_dropped_total: IntCounter,
    /// `a2a_analysis_skipped_total{upstream,reason}`.
    pub analysis_skipped_total: ByReason,
    /// `a2a_ids_over_limit_total{upstream}`: task and context ids over
    /// `analysis.max_id_bytes` the registry kept as their digest.
    pub ids_over_limit_total: PerUpstreamCounter,
    /// `a2a_trace_spans_dropped_total`: spans lost to a full export queue
    /// or a failed export.
    pub trace_spans_dropped_total: IntCounter,
    /// `a2a_agent_card_bypass_total{upstream}`: agent cards seen whose
    /// interface URLs lead past the proxy, or (rewriting) passed
    /// unrewritten.
    pub agent_card_bypass_total: PerUpstreamCounter,
    /// `a2a_connections_closed_total{reason}`: caller connections the proxy
    /// closed for a deadline (`header_timeout`, `idle`, `write_timeout`).
    pub connections_closed_total: ConnectionsClosed,
    /// `a2a_accept_errors_total{listener}`: failed accepts (`proxy`,
    /// `admin`), out of descriptors above all.
    pub accept_errors_total: AcceptErrors,
    /// `a2a_upstream_up{upstream}`: 1 while the readiness probe reaches it.
    pub upstream_up: PerUpstreamGauge,
    /// `a2a_connections_active`: caller connections open.
    pub connections_active: IntGauge,
    /// `a2a_registry_facts_total{direction}`: task facts shared with the
    /// other replicas (`published`) and heard from them (`received`).
    pub registry_facts_total: RegistryFacts,
    /// `a2a_registry_errors_total{op}`: failures of the shared registry
    /// (`connect`, `publish`, `read`, `decode`, `dropped`: facts not
    /// published because the backlog was full; `unsigned`,
    /// `bad_signature`, `oversized`: entries skipped; `future_timestamp`:
    /// a status timestamp not trusted; `stream_id`: the stream cannot take
    /// entries where replicas read them).
    pub registry_errors_total: RegistryErrors,
    /// `a2a_registry_up`: 1 while the shared registry's server answers.
    pub registry_up: IntGauge,
    /// `a2a_config_reloads_total{result}`: SIGHUP reloads (`ok`, `error`).
    pub config_reloads_total: ConfigReloads,
    /// The push relay's families (`[push]`).
    pub push: PushMetrics,
}

// === impl Metrics ===

impl Metrics {
    /// Builds every metric on a fresh registry.
    pub fn new() -> Result<Metrics, MetricsError> {
        let registry = Registry::new();
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let c = IntCounterVec::new(Opts::new(name, help), labels)?;
            registry.register(Box::new(c.clone()))?;
            Ok::<_, prometheus::Error>(c)
        };
        let gauge = |name: &str, help: &str, labels: &[&str]| {
            let g = IntGaugeVec::new(Opts::new(name, help), labels)?;
            registry.register(Box::new(g.clone()))?;
            Ok::<_, prometheus::Error>(g)
        };
        let histogram = |name: &str, help: &str, labels: &[&str], buckets: &[f64]| {
            let opts = HistogramOpts::new(name, help).buckets(buckets.to_vec());
            let h = HistogramVec::new(opts, labels)?;
            registry.register(Box::new(h.clone()))?;
            Ok::<_, prometheus::Error>(h)
        };
        let audit_records_dropped_total = IntCounter::new(
            "a2a_audit_records_dropped_total",
            "Audit records dropped because the writer could not keep up or failed.",
        )?;
        registry.register(Box::new(audit_records_dropped_total.clone()))?;
        Ok(Metrics {
            requests_total: Requests(counter(
                "a2a_requests_total",
                "Exchanges forwarded, by A2A method and response status class (or error).",
                Requests::LABELS,
            )?),
            request_duration_seconds: RequestDurations(histogram(
                "a2a_request_duration_seconds",
                "Time from request arrival to the end of the response body.",
                RequestDurations::LABELS,
                DURATION_BUCKETS,
            )?),
            proxy_overhead_seconds: PerUpstreamHistogram(histogram(
                "a2a_proxy_overhead_seconds",
                "Time the proxy itself adds to an exchange, outside the upstream's own time.",
                PerUpstreamHistogram::LABELS,
                OVERHEAD_BUCKETS,
            )?),
            stream_events_total: StreamEvents(counter(
                "a2a_stream_events_total",
                "Events seen on task streams, by kind.",
                StreamEvents::LABELS,
            )?),
            streams_active: PerUpstreamGauge(gauge(
                "a2a_streams_active",
                "Task streams currently open.",
                PerUpstreamGauge::LABELS,
            )?),
            stream_duration_seconds: StreamDurations(histogram(
                "a2a_stream_duration_seconds",
                "Lifetime of task streams, by how they ended.",
                StreamDurations::LABELS,
                DURATION_BUCKETS,
            )?),
            time_to_first_event_seconds: PerUpstreamHistogram(histogram(
                "a2a_time_to_first_event_seconds",
                "Time from request arrival to a stream's first event.",
                PerUpstreamHistogram::LABELS,
                FIRST_EVENT_BUCKETS,
            )?),
            task_transitions_total: Transitions(counter(
                "a2a_task_transitions_total",
                "Task state transitions observed.",
                Transitions::LABELS,
            )?),
            tasks_tracked: TasksTracked(gauge(
                "a2a_tasks_tracked",
                "Tasks remembered by the registry, by last known state.",
                TasksTracked::LABELS,
            )?),
            violations_total: Violations(counter(
                "a2a_violations_total",
                "Protocol violations found, by catalogue kind and severity.",
                Violations::LABELS,
            )?),
            upstream_errors_total: ByReason(counter(
                "a2a_upstream_errors_total",
                "Failures of the upstream leg, by reason.",
                ByReason::LABELS,
            )?),
            audit_records_dropped_total,
            access_lines_dropped_total: {
                let c = IntCounter::new(
                    "a2a_access_lines_dropped_total",
                    "Access-log lines lost to a full queue or a failed write.",
                )?;
                registry.register(Box::new(c.clone()))?;
                c
            },
            analysis_skipped_total: ByReason(counter(
                "a2a_analysis_skipped_total",
                "Traffic forwarded but not analysed, by reason.",
                ByReason::LABELS,
            )?),
            ids_over_limit_total: PerUpstreamCounter(counter(
                "a2a_ids_over_limit_total",
                "Task and context ids over analysis.max_id_bytes, kept as their digest and repeated cut.",
                PerUpstreamCounter::LABELS,
            )?),
            trace_spans_dropped_total: {
                let c = IntCounter::new(
                    "a2a_trace_spans_dropped_total",
                    "Trace spans lost to a full export queue or a failed export.",
                )?;
                registry.register(Box::new(c.clone()))?;
                c
            },
            agent_card_bypass_total: PerUpstreamCounter(counter(
                "a2a_agent_card_bypass_total",
                "Agent cards passed whose interface URLs lead past the proxy (rewrite_agent_card off), or that could not be rewritten (on).",
                PerUpstreamCounter::LABELS,
            )?),
            connections_closed_total: ConnectionsClosed(counter(
                "a2a_connections_closed_total",
                "Caller connections the proxy closed for a deadline, by which one.",
                ConnectionsClosed::LABELS,
            )?),
            accept_errors_total: AcceptErrors(counter(
                "a2a_accept_errors_total",
                "Failed accepts (out of file descriptors, above all), by listener.",
                AcceptErrors::LABELS,
            )?),
            upstream_up: PerUpstreamGauge(gauge(
                "a2a_upstream_up",
                "1 while the readiness probe reaches the upstream, else 0.",
                PerUpstreamGauge::LABELS,
            )?),
            connections_active: {
                let g = IntGauge::new("a2a_connections_active", "Caller connections open.")?;
                registry.register(Box::new(g.clone()))?;
                g
            },
            config_reloads_total: ConfigReloads(counter(
                "a2a_config_reloads_total",
                "Configuration reloads on SIGHUP, by result (ok, or error: the old routes kept).",
                ConfigReloads::LABELS,
            )?),
            registry_facts_total: RegistryFacts(counter(
                "a2a_registry_facts_total",
                "Task facts shared with the other replicas (published) and heard from them (received).",
                RegistryFacts::LABELS,
            )?),
            registry_errors_total: RegistryErrors(counter(
                "a2a_registry_errors_total",
                "Failures of the shared task registry, by operation (connect, publish, read, decode, dropped, unsigned, bad_signature, oversized, future_timestamp, stream_id).",
                RegistryErrors::LABELS,
            )?),
            registry_up: {
                let g = IntGauge::new(
                    "a2a_registry_up",
                    "1 while the shared task registry's server answers (backend = \"redis\"), else 0.",
                )?;
                registry.register(Box::new(g.clone()))?;
                g
            },
            push: PushMetrics::register(&registry)?,
            registry,
        })
        .and_then(Metrics::with_process)
    }

    /// `a2a_build_info{version,commit}` at 1, and the standard `process_*`
    /// collector (CPU, memory, descriptors, start time).
    fn with_process(self) -> Result<Metrics, MetricsError> {
        let info = BuildInfo(IntGaugeVec::new(
            Opts::new(
                "a2a_build_info",
                "The running build: version and commit (value 1).",
            ),
            BuildInfo::LABELS,
        )?);
        info.with(env!("CARGO_PKG_VERSION"), env!("A2A_TAP_COMMIT"))
            .set(1);
        self.registry.register(Box::new(info.0))?;
        #[cfg(target_os = "linux")]
        self.registry.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        ))?;
        Ok(self)
    }

    /// The registry, for callers that add process-level collectors.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Serves `a2a_log_lines_dropped_total`: log lines the non-blocking
    /// writer dropped, as `dropped` tells at each scrape.
    pub fn count_log_drops(
        &self,
        dropped: impl Fn() -> u64 + Send + Sync + 'static,
    ) -> Result<(), MetricsError> {
        self.registry
            .register(Box::new(CountedOutside::new(
                "a2a_log_lines_dropped_total",
                "Log lines dropped because stderr could not take them in time.",
                dropped,
            )?))
            .map_err(MetricsError::from)
    }

    /// All metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        let families = self.registry.gather();
        if TextEncoder::new().encode(&families, &mut buf).is_err() {
            return String::new();
        }
        String::from_utf8(buf).unwrap_or_default()
    }
}

/// A counter whose value is kept elsewhere (read at each scrape).
struct CountedOutside<F> {
    desc: prometheus::core::Desc,
    counter: IntCounter,
    read: F,
}

impl<F: Fn() -> u64 + Send + Sync> CountedOutside<F> {
    fn new(name: &str, help: &str, read: F) -> Result<Self, prometheus::Error> {
        let counter = IntCounter::new(name, help)?;
        let desc = prometheus::core::Collector::desc(&counter)
            .first()
            .map(|d| (*d).clone())
            .ok_or_else(|| prometheus::Error::Msg(format!("{name}: no descriptor")))?;
        Ok(CountedOutside {
            desc,
            counter,
            read,
        })
    }
}

impl<F: Fn() -> u64 + Send + Sync> prometheus::core::Collector for CountedOutside<F> {
    fn desc(&self) -> Vec<&prometheus::core::Desc> {
        vec![&self.desc]
    }

    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        let now = (self.read)();
        let seen = self.counter.get();
        if now > seen {
            self.counter.inc_by(now - seen);
        }
        prometheus::core::Collector::collect(&self.counter)
    }
}

/// The `code` label for a status: its class (`"2xx"` ...).
pub fn status_class(status: http::StatusCode) -> &'static str {
    match status.as_u16() {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

mod families;
pub use families::*;
mod push;
pub use push::{PushMetrics, DELIVERY_OUTCOMES, UNRELAYED_REASONS};

#[cfg(test)]
mod tests;
