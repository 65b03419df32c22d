//! The engine's limits and evidence rules (from `[analysis]` and
//! `[audit]`: `config/core_settings.rs`).

use super::evidence::EvidencePolicy;
use super::inflate;

/// Limits and evidence rules of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// Largest non-streamed body judged (decoded size); larger is skipped.
    pub max_body_bytes: usize,
    /// Largest SSE event; larger becomes one `malformed_event`.
    pub max_event_bytes: usize,
    /// Ids longer than this are kept as their digest and shown cut.
    pub max_id_bytes: usize,
    /// What one exchange may inflate (`Content-Encoding`, gRPC gzip).
    pub inflate: inflate::Budget,
    pub evidence: EvidencePolicy,
    /// How long a stream may stay open after its end (`stream_not_closed`,
    /// judged live on the analysis thread's tick).
    pub close_wait: std::time::Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_body_bytes: 4 << 20,
            max_event_bytes: 1 << 20,
            max_id_bytes: crate::lifecycle::DEFAULT_MAX_ID_BYTES,
            inflate: inflate::Budget::default(),
            evidence: EvidencePolicy::default(),
            close_wait: std::time::Duration::from_secs(5),
        }
    }
}
