//! The registry's bounds and stall limits.

use crate::a2a::model::TaskState;
use crate::lifecycle::Millis;

/// How long a task may sit in each non-terminal state before `stalled_task`.
/// `None` means no limit for that state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StallLimits {
    pub submitted: Option<Millis>,
    pub working: Option<Millis>,
    pub input_required: Option<Millis>,
    pub auth_required: Option<Millis>,
}

impl Default for StallLimits {
    /// 60 s submitted, 10 min working, 1 h input-required and auth-required.
    fn default() -> Self {
        StallLimits {
            submitted: Some(60_000),
            working: Some(600_000),
            input_required: Some(3_600_000),
            auth_required: Some(3_600_000),
        }
    }
}

impl StallLimits {
    /// The limit for `state` (`None` for terminal states and unlimited ones).
    pub fn limit(&self, state: TaskState) -> Option<Millis> {
        match state {
            TaskState::Submitted => self.submitted,
            TaskState::Working => self.working,
            TaskState::InputRequired => self.input_required,
            TaskState::AuthRequired => self.auth_required,
            _ => None,
        }
    }
}

/// Bounds of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryConfig {
    /// Most tasks tracked at once; past it the least recently observed task
    /// is evicted (and counted). 0 tracks nothing.
    pub max_tasks: usize,
    /// A task not observed for this long is forgotten by `tick`. 0 disables.
    pub ttl: Millis,
    pub stall: StallLimits,
    /// Ids longer than this are kept as their digest, shown cut, and not
    /// shared with other replicas (`analysis.max_id_bytes`).
    pub max_id_bytes: usize,
}

impl Default for RegistryConfig {
    /// 100 000 tasks, 1 h TTL, default stall limits, 256-byte ids.
    fn default() -> Self {
        RegistryConfig {
            max_tasks: 100_000,
            ttl: 3_600_000,
            stall: StallLimits::default(),
            max_id_bytes: crate::lifecycle::short::DEFAULT_MAX_ID_BYTES,
        }
    }
}
