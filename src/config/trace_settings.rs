//! `[tracing]` resolved against the standard OpenTelemetry variables: the
//! settings the span exporter starts with, or none (tracing off).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Config, ConfigError, HumanDuration};
use crate::trace::export::ExportConfig;

/// `[tracing]`: OTLP/HTTP export of one span per A2A exchange. Each key
/// left out falls back to the standard `OTEL_*` variable, then the default.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct TracingSection {
    /// The collector's OTLP/HTTP base URL (`http://collector:4318`): spans
    /// go to its `/v1/traces`. Else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
    /// (used as is) or `OTEL_EXPORTER_OTLP_ENDPOINT`; none: tracing off.
    pub endpoint: Option<String>,
    /// `service.name` of the spans; else `OTEL_SERVICE_NAME`, else "a2a-tap".
    pub service_name: Option<String>,
    /// Share of root traces (callers without `traceparent`) traced, 0 to 1;
    /// a caller's sampled flag is always followed. Else
    /// `OTEL_TRACES_SAMPLER_ARG`, else 1.
    pub sample_ratio: Option<f64>,
    /// Spans waiting for export, at most; more are dropped and counted.
    pub queue_spans: usize,
    /// Bytes of encoded spans waiting for export, at most; more are dropped and counted.
    #[serde(deserialize_with = "super::values::size_usize")]
    pub queue_bytes: usize,
    /// Spans per export request, at most.
    pub batch_spans: usize,
    /// Waiting spans are exported at least this often.
    pub batch_delay: HumanDuration,
    /// An export request without an answer this long fails (its spans dropped).
    pub export_timeout: HumanDuration,
    /// Opt-in: send the proxy's span upstream as the request's parent
    /// (`traceparent` replaced), so the agent's span is its child. Off, the
    /// forwarded request's headers are the caller's.
    pub propagate: bool,
}

/// What tracing runs with.
#[derive(Debug, Clone)]
pub struct TraceSettings {
    pub export: ExportConfig,
    pub sample_ratio: f64,
    pub propagate: bool,
}

impl Config {
    /// The tracing settings, from `[tracing]` and then `env` (the standard
    /// `OTEL_*` variables); `None` when no endpoint is set anywhere.
    pub fn trace_settings(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<TraceSettings>, ConfigError> {
        let t = &self.tracing;
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let (url, key) = match (&t.endpoint, var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
            (Some(base), _) => (traces_url(base), "tracing.endpoint"),
            (None, Some(full)) => (full, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            (None, None) => match var("OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(base) => (traces_url(&base), "OTEL_EXPORTER_OTLP_ENDPOINT"),
                None => return Ok(None),
            },
        };
        let invalid = |key: &str, why: String| ConfigError::Invalid {
            key: key.to_string(),
            why,
        };
        let uri: http::Uri = url
            .parse()
            .map_err(|e| invalid(key, format!("`{url}` is not a URL: {e}")))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(invalid(
                key,
                format!("`{url}` must be an http:// or https:// URL with a host (OTLP/HTTP)"),
            ));
        }
        let (ratio, ratio_key) = match (t.sample_ratio, var("OTEL_TRACES_SAMPLER_ARG")) {
            (Some(r), _) => (r, "tracing.sample_ratio"),
            (None, Some(text)) => (
                text.trim().parse::<f64>().map_err(|_| {
                    invalid(
                        "OTEL_TRACES_SAMPLER_ARG",
                        format!("`{text}` is not a number from 0 to 1"),
                    )
                })?,
                "OTEL_TRACES_SAMPLER_ARG",
            ),
            (None, None) => (1.0, "tracing.sample_ratio"),
        };
        if !(0.0..=1.0).contains(&ratio) {
            return Err(invalid(ratio_key, format!("{ratio} is not from 0 to 1")));
        }
        let service_name = t
            .service_name
            .clone()
            .or_else(|| var("OTEL_SERVICE_NAME"))
            .unwrap_or_else(|| "a2a-tap".to_string());
        for (key, n) in [
            ("tracing.queue_spans", t.queue_spans),
            ("tracing.queue_bytes", t.queue_bytes),
            ("tracing.batch_spans", t.batch_spans),
        ] {
            if n == 0 {
                return Err(invalid(key, "must be greater than zero".into()));
            }
        }
        for (key, d) in [
            ("tracing.batch_delay", t.batch_delay.0),
            ("tracing.export_timeout", t.export_timeout.0),
        ] {
            if d == Duration::ZERO {
                return Err(invalid(key, "must be greater than zero".into()));
            }
        }
        Ok(Some(TraceSettings {
            export: ExportConfig {
                url: uri,
                service_name,
                queue_spans: t.queue_spans,
                queue_bytes: t.queue_bytes,
                batch_spans: t.batch_spans,
                batch_delay: t.batch_delay.0,
                timeout: t.export_timeout.0,
            },
            sample_ratio: ratio,
            propagate: t.propagate,
        }))
    }
}

impl Config {
    /// The `[tracing]` keys' own rules (ranges, non-zero bounds), whether
    /// an export endpoint is set or not.
    pub(crate) fn tracing_key_problems(&self) -> Vec<ConfigError> {
        let t = &self.tracing;
        let mut problems = Vec::new();
        let mut invalid = |key: &str, why: String| {
            problems.push(ConfigError::Invalid {
                key: key.to_string(),
                why,
            })
        };
        if let Some(r) = t.sample_ratio.filter(|r| !(0.0..=1.0).contains(r)) {
            invalid("tracing.sample_ratio", format!("{r} is not from 0 to 1"));
        }
        for (key, n) in [
            ("tracing.queue_spans", t.queue_spans),
            ("tracing.queue_bytes", t.queue_bytes),
            ("tracing.batch_spans", t.batch_spans),
        ] {
            if n == 0 {
                invalid(key, "must be greater than zero".into());
            }
        }
        for (key, d) in [
            ("tracing.batch_delay", t.batch_delay.0),
            ("tracing.export_timeout", t.export_timeout.0),
        ] {
            if d == Duration::ZERO {
                invalid(key, "must be greater than zero".into());
            }
        }
        problems
    }
}

/// An OTLP/HTTP base URL's traces URL: its path with `/v1/traces` after it.
fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn off_without_an_endpoint_and_the_key_wins_over_the_variables() {
        let c = Config::default();
        assert!(c.trace_settings(env(&[])).unwrap().is_none());
        let base = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel:4318/"),
            ("OTEL_SERVICE_NAME", "tap-a"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
        ];
        let s = c.trace_settings(env(&base)).unwrap().unwrap();
        assert_eq!(s.export.url, "http://otel:4318/v1/traces");
        assert_eq!(s.export.service_name, "tap-a");
        assert_eq!(s.sample_ratio, 0.25);
        let full = [
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://otel:4318/custom",
            ),
            base[0],
        ];
        let s = c.trace_settings(env(&full)).unwrap().unwrap();
        assert_eq!(s.export.url, "http://otel:4318/custom", "used as is");
        let mut keyed = Config::default();
        keyed.tracing.endpoint = Some("https://collector.example/otlp".into());
        keyed.tracing.sample_ratio = Some(0.5);
        let s = keyed.trace_settings(env(&full)).unwrap().unwrap();
        assert_eq!(s.export.url, "https://collector.example/otlp/v1/traces");
        assert_eq!(s.sample_ratio, 0.5);
        assert_eq!(s.export.service_name, "a2a-tap");
    }

    #[test]
    fn bad_values_name_the_key_or_variable() {
        let c = Config::default();
        let err = |vars: &[(&str, &str)]| c.trace_settings(env(vars)).unwrap_err().to_string();
        let e = err(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")]);
        assert!(e.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{e}");
        let e = err(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_TRACES_SAMPLER_ARG", "half"),
        ]);
        assert!(
            e.contains("OTEL_TRACES_SAMPLER_ARG") && e.contains("half"),
            "{e}"
        );
        let mut keyed = Config::default();
        keyed.tracing.endpoint = Some("http://c:4318".into());
        keyed.tracing.sample_ratio = Some(1.5);
        let e = keyed.trace_settings(env(&[])).unwrap_err().to_string();
        assert!(e.contains("tracing.sample_ratio"), "{e}");
        keyed.tracing.sample_ratio = None;
        keyed.tracing.batch_spans = 0;
        let e = keyed.trace_settings(env(&[])).unwrap_err().to_string();
        assert!(e.contains("tracing.batch_spans"), "{e}");
    }
}
