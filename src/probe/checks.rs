//! The probe's checks: stable ids, what each asks and on what rule of the
//! specification, and the verdict type (pass, fail, not applicable, each
//! with its reason and the exchanges that show it).

use serde::Serialize;

/// A check's stable id (what reports, JUnit and SARIF name it by).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CheckId {
    AgentCardValid,
    BlockingSend,
    FollowUp,
    ReturnImmediately,
    CancelActive,
    TerminalRejectsMessage,
    CancelTerminal,
    CancelCompleted,
    SubscribeTerminal,
    GetUnknown,
    StreamStarts,
    StreamingCapability,
    PushCapability,
    UnsupportedVersion,
    ErrorCodes,
}

impl CheckId {
    /// The checks run on every interface, in report order.
    pub const PER_INTERFACE: [CheckId; 14] = [
        CheckId::BlockingSend,
        CheckId::FollowUp,
        CheckId::ReturnImmediately,
        CheckId::CancelActive,
        CheckId::TerminalRejectsMessage,
        CheckId::CancelTerminal,
        CheckId::CancelCompleted,
        CheckId::SubscribeTerminal,
        CheckId::GetUnknown,
        CheckId::StreamStarts,
        CheckId::StreamingCapability,
        CheckId::PushCapability,
        CheckId::UnsupportedVersion,
        CheckId::ErrorCodes,
    ];

    /// The stable id.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckId::AgentCardValid => "agent-card-valid",
            CheckId::BlockingSend => "blocking-send-terminal-or-interrupted",
            CheckId::FollowUp => "follow-up-keeps-task-and-context",
            CheckId::ReturnImmediately => "return-immediately",
            CheckId::CancelActive => "cancel-active-task",
            CheckId::TerminalRejectsMessage => "terminal-rejects-message",
            CheckId::CancelTerminal => "cancel-terminal-not-cancelable",
            CheckId::CancelCompleted => "cancel-completed-not-cancelable",
            CheckId::SubscribeTerminal => "subscribe-terminal-refused",
            CheckId::GetUnknown => "get-unknown-task-not-found",
            CheckId::StreamStarts => "stream-starts-with-task",
            CheckId::StreamingCapability => "streaming-capability-honoured",
            CheckId::PushCapability => "push-config-capability-honoured",
            CheckId::UnsupportedVersion => "unsupported-version-refused",
            CheckId::ErrorCodes => "error-codes-per-spec",
        }
    }

    /// What the check asks, with its rule (SARIF's rule description).
    pub fn describe(self) -> &'static str {
        match self {
            CheckId::AgentCardValid => "The agent card has what its version requires (1.0 §4.4.1, §4.4.6; 0.3 AgentCard).",
            CheckId::BlockingSend => "A SendMessage without returnImmediately (0.3: blocking) returns a terminal or interrupted task, or a Message.",
            CheckId::FollowUp => "A follow-up to an input-required task is answered about the same task and context (§3.4.3).",
            CheckId::ReturnImmediately => "A SendMessage with returnImmediately (0.3: blocking false) is answered at once.",
            CheckId::CancelActive => "CancelTask on a running task cancels it.",
            CheckId::TerminalRejectsMessage => "A message to a terminal task is refused with UnsupportedOperationError (1.0 §3.1.1; 0.3: an error).",
            CheckId::CancelTerminal => "CancelTask on a terminal task gives TaskNotCancelableError.",
            CheckId::CancelCompleted => "CancelTask on a completed task gives TaskNotCancelableError and GetTask still says completed.",
            CheckId::SubscribeTerminal => "SubscribeToTask on a terminal task is refused with UnsupportedOperationError (1.0 §3.1.6).",
            CheckId::GetUnknown => "GetTask of an unknown id gives TaskNotFoundError.",
            CheckId::StreamStarts => "A streamed send begins with the Task (or carries exactly one Message) and the engine accepts the whole stream (1.0 §3.1.2).",
            CheckId::StreamingCapability => "Streaming is answered as capabilities.streaming says: a stream when declared, UnsupportedOperationError when not (§3.3.4, §4.4.3).",
            CheckId::PushCapability => "A push notification config is refused with PushNotificationNotSupportedError when capabilities.pushNotifications is not declared (§3.3.4, §4.4.3).",
            CheckId::UnsupportedVersion => "A request with an A2A-Version the agent does not support gets VersionNotSupportedError (1.0).",
            CheckId::ErrorCodes => "Every A2A error has the JSON-RPC code and HTTP status the specification's mapping gives it (§5.4).",
        }
    }
}

/// A check's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    NotApplicable,
}

impl Verdict {
    /// As the text report prints it.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::NotApplicable => "n/a",
        }
    }
}

/// One check on one interface: verdict, reason, and the exchanges
/// (numbers in the run) it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    pub id: CheckId,
    pub verdict: Verdict,
    pub reason: String,
    pub exchanges: Vec<usize>,
}

impl CheckResult {
    pub(crate) fn pass(id: CheckId, reason: impl Into<String>, exchanges: &[usize]) -> Self {
        Self::new(id, Verdict::Pass, reason.into(), exchanges)
    }

    pub(crate) fn fail(id: CheckId, reason: impl Into<String>, exchanges: &[usize]) -> Self {
        Self::new(id, Verdict::Fail, reason.into(), exchanges)
    }

    /// Not applicable; the reason is prefixed "not applicable: ".
    pub(crate) fn na(id: CheckId, reason: impl std::fmt::Display, exchanges: &[usize]) -> Self {
        let reason = format!("not applicable: {reason}");
        Self::new(id, Verdict::NotApplicable, reason, exchanges)
    }

    fn new(id: CheckId, verdict: Verdict, reason: String, exchanges: &[usize]) -> Self {
        CheckResult {
            id,
            verdict,
            reason,
            exchanges: exchanges.to_vec(),
        }
    }

    /// Every check of `PER_INTERFACE` not applicable for one reason.
    pub(crate) fn all_na(reason: &str) -> Vec<CheckResult> {
        CheckId::PER_INTERFACE
            .iter()
            .map(|id| CheckResult::na(*id, reason, &[]))
            .collect()
    }
}
