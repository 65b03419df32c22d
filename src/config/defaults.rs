//! The defaults of the sections (`config.toml.example` shows them).

use super::{
    AnalysisSection, AuditSection, HumanDuration, Level, LogFormat, LogSection, ProxySection,
    StallLimit, StallSection, TracingSection,
};

const MIB: usize = 1024 * 1024;

impl Default for ProxySection {
    fn default() -> Self {
        ProxySection {
            max_request_body: 64 * MIB as u64,
            upstream_header_timeout: HumanDuration::secs(30),
            stream_idle_timeout: HumanDuration::secs(300),
            max_connections: 10_000,
            max_upstream_connections: 10_000,
            max_concurrent_streams: 100,
            max_header_list_size: 64 * 1024,
            upstream_http2: false,
            forwarded_headers: false,
            grace_period: HumanDuration::secs(30),
            tls_ca_file: None,
            connect_timeout: HumanDuration::secs(5),
            pool_idle_timeout: HumanDuration::secs(90),
            header_read_timeout: HumanDuration::secs(30),
            idle_timeout: HumanDuration::secs(60),
            write_timeout: HumanDuration::secs(60),
            drain_delay: HumanDuration::secs(5),
            threads: 0,
            max_card_rewrite_bytes: 256 * 1024,
        }
    }
}

impl Default for LogSection {
    fn default() -> Self {
        LogSection {
            format: LogFormat::Text,
            level: Level("info".to_string()),
            access: false,
            access_log: "-".to_string(),
        }
    }
}

impl Default for AuditSection {
    fn default() -> Self {
        AuditSection {
            evidence_bytes: 2048,
            redact_parts: false,
            queue_capacity: 10_000,
        }
    }
}

impl Default for AnalysisSection {
    fn default() -> Self {
        AnalysisSection {
            max_body_bytes: 4 * MIB,
            max_request_bytes: MIB,
            max_event_bytes: MIB,
            queue_bytes: 64 * MIB,
            max_id_bytes: crate::lifecycle::DEFAULT_MAX_ID_BYTES,
            max_inflated_bytes: 64 * MIB,
            max_inflate_ratio: 100,
            close_wait: HumanDuration::secs(5),
            threads: 0,
        }
    }
}

impl Default for StallSection {
    fn default() -> Self {
        StallSection {
            submitted: StallLimit::After(std::time::Duration::from_secs(60)),
            working: StallLimit::After(std::time::Duration::from_secs(600)),
            input_required: StallLimit::After(std::time::Duration::from_secs(3600)),
            auth_required: StallLimit::After(std::time::Duration::from_secs(3600)),
        }
    }
}

impl Default for TracingSection {
    fn default() -> Self {
        TracingSection {
            endpoint: None,
            service_name: None,
            sample_ratio: None,
            queue_spans: 4096,
            queue_bytes: 16 * MIB,
            batch_spans: 512,
            batch_delay: HumanDuration::secs(1),
            export_timeout: HumanDuration::secs(10),
            propagate: false,
        }
    }
}
