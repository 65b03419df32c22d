//! The whole proxy as one value, in start-up and shutdown order: metrics,
//! then the validation layer (audit writer, analysis thread), then the
//! listeners; at shutdown the listeners drain first (in-flight exchanges
//! get the grace period), then the analysis thread judges every byte it
//! was given, then the audit log is flushed. `main` builds one and waits
//! for a signal; the integration tests build the same one in-process.

mod inspectors;
mod reload;

use std::net::SocketAddr;
use std::sync::Arc;

use crate::analysis::{AnalysisHandle, Clock, Tap, TapConfig};
use crate::config::{Config, ConfigError};
use crate::proxy::Inspector;
use crate::report::audit::{AuditLog, AuditWriter, LineLog, Target};
use crate::report::metrics::MetricsError;
use crate::report::Metrics;
use crate::server::{self, ServerHandle, StartError};

/// Why the app could not start.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The configuration is not usable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A listener, the upstream client or a thread could not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The metrics registry refused a metric.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// The audit writer or analysis thread could not start.
    #[error("cannot start the {what}: {source}")]
    Thread {
        what: &'static str,
        source: std::io::Error,
    },
    /// The push relay could not start (its listener, its TLS roots).
    #[error("cannot start the push relay: {0}")]
    Push(String),
}

impl AppError {
    /// The exit code of the contract: 2 for a bad config, 3 for a start
    /// that failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            AppError::Config(_) => 2,
            AppError::Start(e) => e.exit_code() as u8,
            AppError::Metrics(_) | AppError::Thread { .. } | AppError::Push(_) => 3,
        }
    }
}

/// How the app is built beyond its config (tests choose these).
#[derive(Clone, Default)]
pub struct Options {
    /// Where audit records go; `None`: the config's `audit_log`.
    pub audit: Option<Target>,
    /// The clock validation judges by.
    pub clock: Clock,
    /// Metrics to report into (with collectors the caller registered);
    /// `None`: a fresh registry.
    pub metrics: Option<Arc<Metrics>>,
    /// An inspector of the caller's instead of the validation layer's
    /// (tests of the proxy's seams).
    pub inspector: Option<Arc<dyn Inspector>>,
    /// Where access-log lines go (when `[log] access`); `None`: the
    /// config's `log.access_log`.
    pub access: Option<Target>,
}

/// A running a2a-tap.
pub struct App {
    server: ServerHandle,
    validation: Option<Validation>,
    /// The access log's own writer, when it does not share the audit
    /// log's, and its handle (for reopening).
    access_writer: Option<(AuditLog, AuditWriter)>,
    /// The shutdown's grace period (spans still queued get as long).
    grace: std::time::Duration,
    /// The inspector the caller gave (tests), kept for reloads.
    given: Option<Arc<dyn Inspector>>,
    /// The push relay's listener, when `[push] relay = true`.
    relay: Option<crate::push::RelayServer>,
    /// The relay each route's inspector is wrapped with (reloads too).
    relay_wrap: Option<Arc<crate::push::Relay>>,
}

/// The validation layer's parts, kept for an orderly shutdown.
struct Validation {
    tap: Tap,
    analysis: AnalysisHandle,
    /// The span exporter, when tracing is on, and where it exports to.
    exporter: Option<crate::trace::export::Exporter>,
    trace_url: Option<http::Uri>,
    audit: AuditLog,
    writer: AuditWriter,
    /// The access log the proxy and the analysis thread write to.
    access: Option<LineLog>,
}

// === impl App ===

impl App {
    /// Validates `config` and starts everything it asks for.
    pub async fn start(config: &Config) -> Result<App, AppError> {
        App::start_with(config, Options::default()).await
    }

    /// `start`, with `options`.
    pub async fn start_with(config: &Config, options: Options) -> Result<App, AppError> {
        config.validate()?;
        let metrics = match options.metrics {
            Some(m) => m,
            None => Arc::new(Metrics::new()?),
        };
        let options_audit = options.audit.clone();
        let audit_target = options
            .audit
            .clone()
            .unwrap_or_else(|| Target::parse(&config.audit_log));
        let access_target = options
            .access
            .clone()
            .unwrap_or_else(|| Target::parse(&config.log.access_log));
        // One writer per target: access lines to the audit log's own
        // target go through its thread, so that lines never interleave.
        let share_audit = config.log.access && config.validate && access_target == audit_target;
        let (access_writer, own_access) = if config.log.access && !share_audit {
            let (log, writer) = AuditLog::start(
                access_target,
                config.audit.queue_capacity,
                metrics.access_lines_dropped_total.clone(),
            )
            .map_err(|source| AppError::Thread {
                what: "access-log writer",
                source,
            })?;
            let lines = log.lines(metrics.access_lines_dropped_total.clone());
            (Some((log, writer)), Some(lines))
        } else {
            (None, None)
        };
        let validation = if config.validate {
            Some(start_validation(
                config,
                &metrics,
                audit_target,
                options.clock,
                (share_audit, own_access.clone()),
            )?)
        } else {
            None
        };
        let access = match &validation {
            Some(v) => v.access.clone(),
            None => own_access,
        };
        for result in ["ok", "error"] {
            metrics.config_reloads_total.with(result);
        }
        let given = options.inspector;
        let inspector_for = inspectors::inspector_for(
            config,
            &metrics,
            given.clone(),
            validation.as_ref().map(|v| v.tap.clone()),
        )?;
        let tap = validation.as_ref().map(|v| &v.tap);
        let (inspector_for, relay, relay_wrap) =
            inspectors::start_relay(config, &metrics, tap, inspector_for).await?;
        let audit = match (&validation, &options_audit) {
            (None, _) => "off (validate = false)".to_string(),
            (Some(_), Some(target)) => target.describe(),
            (Some(_), None) => Target::parse(&config.audit_log).describe(),
        };
        let server = server::start_with(config, metrics, inspector_for, access).await?;
        tracing::info!(
            version = env!("CARGO_PKG_VERSION"),
            listen = %server.listen_addr(),
            admin = %server.admin_addr(),
            upstream = %config.upstream.as_ref().map(|u| u.masked()).unwrap_or_default(),
            name = %config.upstream_name(),
            routes = %inspectors::route_names(config),
            validate = config.validate,
            audit = %audit,
            tracing = %validation
                .as_ref()
                .and_then(|v| v.trace_url.as_ref())
                .map_or_else(|| "off".to_string(), ToString::to_string),
            registry = %match (&validation, &config.registry.redis_url) {
                (Some(_), Some(url)) if config.registry.backend == crate::config::Backend::Redis => {
                    format!("redis {} (stream {})", url.masked(), config.registry.stream_key())
                }
                _ => "memory".to_string(),
            },
            threads = server.threads(),
            "a2a-tap serving"
        );
        Ok(App {
            server,
            validation,
            access_writer,
            grace: config.proxy.grace_period.0,
            given,
            relay,
            relay_wrap,
        })
    }

    /// The push relay's bound address, when it is on.
    pub fn push_addr(&self) -> Option<SocketAddr> {
        self.relay
            .as_ref()
            .map(crate::push::RelayServer::local_addr)
    }

    /// The proxy's bound address.
    pub fn listen_addr(&self) -> SocketAddr {
        self.server.listen_addr()
    }

    /// The admin listener's bound address.
    pub fn admin_addr(&self) -> SocketAddr {
        self.server.admin_addr()
    }

    /// The metrics the app reports into.
    pub fn metrics(&self) -> &Arc<Metrics> {
        self.server.metrics()
    }

    /// The readiness served at `/readyz`.
    pub fn readiness(&self) -> &Arc<crate::server::admin::Readiness> {
        self.server.readiness()
    }

    /// Whether validation runs (`validate = true`).
    pub fn validating(&self) -> bool {
        self.validation.is_some()
    }

    /// Asks the audit writer to reopen its file (after logrotate renamed
    /// it); false when there is no audit log (`validate = false`).
    pub fn reopen_audit(&self) -> bool {
        if let Some((log, _)) = &self.access_writer {
            log.reopen();
        }
        match &self.validation {
            Some(v) => {
                v.audit.reopen();
                true
            }
            None => self.access_writer.is_some(),
        }
    }

    /// Begins the drain (readiness false at once, accepting for the drain
    /// delay) and returns at once; `shutdown` finishes it.
    pub fn begin_shutdown(&self) {
        self.server.shutdown();
    }

    /// What ends a shutdown at once (a second signal).
    pub fn stopper(&self) -> crate::server::Stopper {
        self.server.stopper()
    }

    /// Drains and stops: the proxy's listener (in-flight exchanges get the
    /// grace period), then the analysis thread (every byte seen is judged),
    /// then the audit log (every record flushed), then the admin listener.
    pub async fn shutdown(self) {
        self.server.shutdown();
        let stopper = self.server.stopper();
        let admin = self.server.wait().await;
        // Deliveries in flight get the grace period too, and are judged.
        if let Some(relay) = self.relay {
            relay.stop(self.grace).await;
        }
        if let Some(v) = self.validation {
            let Validation {
                tap,
                analysis,
                exporter,
                trace_url: _,
                audit,
                writer,
                access,
            } = v;
            drop((tap, access));
            // After a second signal the spans get no grace either.
            let grace = if stopper.stopped_now() {
                std::time::Duration::ZERO
            } else {
                self.grace
            };
            // Blocking joins, off the runtime's worker threads.
            let joined = tokio::task::spawn_blocking(move || {
                analysis.join();
                // The analysis thread has ended every span: export them.
                if let Some(exporter) = exporter {
                    exporter.finish(grace);
                }
                drop(audit);
                writer.close();
            })
            .await;
            if let Err(e) = joined {
                tracing::error!(error = %e, "validation did not stop cleanly");
            }
        }
        if let Some((log, writer)) = self.access_writer {
            drop(log);
            let joined = tokio::task::spawn_blocking(move || writer.close()).await;
            if let Err(e) = joined {
                tracing::error!(error = %e, "the access log did not stop cleanly");
            }
        }
        // Last: what the shutdown counted stays scrapeable until now.
        admin.stop().await;
    }
}

/// The audit writer and the analysis thread; the access log goes through
/// the audit writer (`share_audit`) or is `own_access`.
fn start_validation(
    config: &Config,
    metrics: &Arc<Metrics>,
    target: Target,
    clock: Clock,
    (share_audit, own_access): (bool, Option<LineLog>),
) -> Result<Validation, AppError> {
    let mut tap_config = TapConfig::try_from(config)?;
    tap_config.clock = clock;
    let tracing = config.trace_settings(|name| std::env::var(name).ok())?;
    let trace_url = tracing.as_ref().map(|t| t.export.url.clone());
    let exporter = match tracing {
        Some(t) => {
            let (spans, exporter) = crate::trace::export::Exporter::start(
                t.export,
                metrics.trace_spans_dropped_total.clone(),
            )
            .map_err(|source| AppError::Thread {
                what: "span exporter",
                source,
            })?;
            tap_config.trace = Some(crate::analysis::TraceSetup {
                spans,
                sample_ratio: t.sample_ratio,
                propagate: t.propagate,
                server_address: config
                    .upstream
                    .as_ref()
                    .map_or_else(String::new, |u| u.host().to_owned()),
            });
            Some(exporter)
        }
        None => None,
    };
    let (audit, writer) = AuditLog::start(
        target,
        config.audit.queue_capacity,
        metrics.audit_records_dropped_total.clone(),
    )
    .map_err(|source| AppError::Thread {
        what: "audit writer",
        source,
    })?;
    let access = if share_audit {
        Some(audit.lines(metrics.access_lines_dropped_total.clone()))
    } else {
        own_access
    };
    tap_config.access = access.clone();
    let (tap, analysis) =
        Tap::start(tap_config, metrics.clone(), audit.clone()).map_err(|source| {
            AppError::Thread {
                what: "analysis thread",
                source,
            }
        })?;
    Ok(Validation {
        tap,
        analysis,
        exporter,
        trace_url,
        audit,
        writer,
        access,
    })
}
