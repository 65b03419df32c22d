//! Task states: the eight of the protocol, their classes, and what a
//! frame may say instead (unspecified, or a name no version defines).

use std::fmt;

/// A task state in the one internal vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskState {
    Submitted,
    Working,
    InputRequired,
    AuthRequired,
    Completed,
    Failed,
    Canceled,
    Rejected,
}

/// The three classes that decide what may happen next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateClass {
    Active,
    Interrupted,
    Terminal,
}

impl TaskState {
    /// Every state.
    pub const ALL: &'static [TaskState] = &[
        TaskState::Submitted,
        TaskState::Working,
        TaskState::InputRequired,
        TaskState::AuthRequired,
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Canceled,
        TaskState::Rejected,
    ];

    /// The state's class.
    pub fn class(self) -> StateClass {
        match self {
            TaskState::Submitted | TaskState::Working => StateClass::Active,
            TaskState::InputRequired | TaskState::AuthRequired => StateClass::Interrupted,
            TaskState::Completed
            | TaskState::Failed
            | TaskState::Canceled
            | TaskState::Rejected => StateClass::Terminal,
        }
    }

    /// True for completed, failed, canceled and rejected.
    pub fn is_terminal(self) -> bool {
        self.class() == StateClass::Terminal
    }

    /// Short label used in metrics (`from`/`to`/`state`) and config keys.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::InputRequired => "input_required",
            TaskState::AuthRequired => "auth_required",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Canceled => "canceled",
            TaskState::Rejected => "rejected",
        }
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A decoded `status.state`: a known state, the unspecified value, or a
/// string no version defines. The latter two keep the raw text as evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateValue {
    Known(TaskState),
    /// `TASK_STATE_UNSPECIFIED` or 0.3 `unknown` (any accepted spelling).
    Unspecified(String),
    /// A state string that no version defines.
    Undefined(String),
}

impl StateValue {
    /// The known state, if any.
    pub fn known(&self) -> Option<TaskState> {
        match self {
            StateValue::Known(s) => Some(*s),
            _ => None,
        }
    }
}
