//! The settings the pure core takes, read from a (validated) `Config`: the
//! live path (`analysis`), `check` and `probe` convert the same way, so
//! none of them imports another's setup.

use super::{Config, StallLimit};
use crate::engine::evidence::EvidencePolicy;
use crate::engine::EngineConfig;
use crate::lifecycle::{Millis, RegistryConfig, StallLimits};

/// The engine's limits and evidence policy (`[analysis]`, `[audit]`).
impl From<&Config> for EngineConfig {
    fn from(config: &Config) -> EngineConfig {
        EngineConfig {
            max_body_bytes: config.analysis.max_body_bytes,
            max_event_bytes: config.analysis.max_event_bytes,
            max_id_bytes: config.analysis.max_id_bytes,
            inflate: crate::engine::inflate::Budget::new(
                config.analysis.max_inflated_bytes as u64,
                config.analysis.max_inflate_ratio,
            ),
            close_wait: config.analysis.close_wait.0,
            evidence: EvidencePolicy {
                max_bytes: config.audit.evidence_bytes,
                redact_parts: config.audit.redact_parts,
            },
        }
    }
}

/// The registry's bounds and stall limits (`[registry]`, `[stall]`,
/// `[analysis] max_id_bytes`).
impl From<&Config> for RegistryConfig {
    fn from(config: &Config) -> RegistryConfig {
        let stall = |l: StallLimit| match l {
            StallLimit::Off => None,
            StallLimit::After(d) => Some(millis(d)),
        };
        RegistryConfig {
            max_tasks: config.registry.max_tasks,
            ttl: millis(config.registry.ttl.0),
            stall: StallLimits {
                submitted: stall(config.stall.submitted),
                working: stall(config.stall.working),
                input_required: stall(config.stall.input_required),
                auth_required: stall(config.stall.auth_required),
            },
            max_id_bytes: config.analysis.max_id_bytes,
        }
    }
}

fn millis(d: std::time::Duration) -> Millis {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// How `check` and `probe` judge (`[analysis]`, `[audit]`, `[registry]`,
/// `[stall]`, `[severity]`): the settings above and the severity policy,
/// once the config's settings are valid.
impl TryFrom<&Config> for crate::judge::Settings {
    type Error = super::ConfigError;

    fn try_from(config: &Config) -> Result<crate::judge::Settings, super::ConfigError> {
        config.validate_settings()?;
        Ok(crate::judge::Settings {
            engine: EngineConfig::from(config),
            registry: RegistryConfig::from(config),
            pipeline: crate::judge::Pipeline::new(config.policy()?, config.analysis.max_id_bytes),
        })
    }
}
