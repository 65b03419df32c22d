//! The violation catalogue: finding kinds, severities, and the policy that
//! lets operators change a kind's severity or turn it off.

use std::fmt;

mod sources;
pub mod spec_link;

#[cfg(test)]
pub(crate) use sources::conformance_rows;

/// Severity of a finding, as written to the audit log and metric labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    /// Both, in the order label tables index them (`as usize`).
    pub const ALL: [Severity; 2] = [Severity::Warning, Severity::Error];

    /// The contract spelling (`"error"` | `"warning"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! kinds {
    ($($variant:ident => $name:literal, $sev:ident;)*) => {
        /// A catalogue kind (docs/findings.md).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kind {
            $($variant,)*
        }

        impl Kind {
            /// Every kind, in catalogue order (`as usize` indexes it).
            pub const ALL: &'static [Kind] = &[$(Kind::$variant,)*];

            /// How many kinds there are.
            pub const COUNT: usize = Kind::ALL.len();

            /// The stable snake_case name used in config, audit and metrics.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Kind::$variant => $name,)*
                }
            }

            /// The catalogue's default severity. `abandoned_artifact` depends on
            /// how the task ended; the reducer sets that one per finding.
            pub fn default_severity(self) -> Severity {
                match self {
                    $(Kind::$variant => Severity::$sev,)*
                }
            }

            /// Parses a catalogue name.
            pub fn from_name(name: &str) -> Option<Kind> {
                match name {
                    $($name => Some(Kind::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

kinds! {
    TerminalExit => "terminal_exit", Error;
    UnspecifiedState => "unspecified_state", Error;
    UnknownState => "unknown_state", Error;
    TaskIdMismatch => "task_id_mismatch", Error;
    ContextIdMismatch => "context_id_mismatch", Warning;
    AbandonedArtifact => "abandoned_artifact", Warning;
    AppendToUnknownArtifact => "append_to_unknown_artifact", Warning;
    EventAfterTerminal => "event_after_terminal", Error;
    StreamStart => "stream_start", Error;
    MessageNotAlone => "message_not_alone", Error;
    JsonrpcIdMismatch => "jsonrpc_id_mismatch", Error;
    MalformedEvent => "malformed_event", Error;
    BlockingReturnedActive => "blocking_returned_active", Error;
    TerminalTaskAccepted => "terminal_task_accepted", Error;
    StreamTruncated => "stream_truncated", Warning;
    StalledTask => "stalled_task", Warning;
    SealedArtifactUpdated => "sealed_artifact_updated", Warning;
    InvalidAgentCard => "invalid_agent_card", Warning;
    CapabilityMismatch => "capability_mismatch", Warning;
    VersionMismatch => "version_mismatch", Warning;
    ErrorCodeMismatch => "error_code_mismatch", Warning;
    InvalidTimestamp => "invalid_timestamp", Warning;
    StreamNotClosed => "stream_not_closed", Warning;
    SubscriberNotNotified => "subscriber_not_notified", Warning;
    PushAuthMissing => "push_auth_missing", Warning;
    PushNotDelivered => "push_not_delivered", Warning;
    PushAfterDelete => "push_after_delete", Warning;
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One violation found by the engine. The engine fills what it knows; the
/// driver (proxy or `check`) adds time, upstream and request id when it
/// writes the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: Kind,
    pub severity: Severity,
    pub task_id: Option<String>,
    pub context_id: Option<String>,
    /// 0-based index of the offending event on the stream; `None` when the
    /// finding is about a whole response or the stream's end.
    pub event_index: Option<u64>,
    /// One human sentence: what was expected, what came.
    pub detail: String,
    /// The offending frame's data (uncut; the writer cuts it to size).
    pub evidence: Option<String>,
    /// The artifact an artifact kind is about: repeats fold per artifact.
    pub artifact_id: Option<String>,
    /// The replica whose fact (`[registry] backend = "redis"`) the finding
    /// rests on, when it rests on one.
    pub heard_from: Option<String>,
    /// The known SDK drift this finding is, when it is one: `[severity]
    /// sdk_drift` then sets its severity (its kind's own line still wins).
    pub drift: Option<Drift>,
}

/// A departure from the spec that a released SDK is known to make, so the
/// operator can lower it without lowering its kind (docs/findings.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drift {
    /// The official Python SDK (a2a-sdk 1.3.0) begins a follow-up stream (a
    /// streamed send naming an existing task) with a status update, not the
    /// Task (1.0 §3.1.2): a `stream_start`.
    PythonFollowUpStream,
}

impl Drift {
    /// How a finding's detail names the drift.
    pub fn describe(self) -> &'static str {
        match self {
            Drift::PythonFollowUpStream => {
                "the known drift of the official Python SDK (a2a-sdk 1.3.0), \
                 which begins a follow-up stream with a status update; \
                 [severity] sdk_drift = \"warning\" lowers this drift alone"
            }
        }
    }
}

impl Finding {
    /// A finding at the kind's default severity with no ids or evidence.
    pub fn new(kind: Kind, detail: impl Into<String>) -> Finding {
        Finding {
            kind,
            severity: kind.default_severity(),
            task_id: None,
            context_id: None,
            event_index: None,
            detail: detail.into(),
            evidence: None,
            artifact_id: None,
            heard_from: None,
            drift: None,
        }
    }
}

/// Per-kind severity overrides from the config: `None` keeps the finding's
/// own severity, `Some(None)` turns the kind off, `Some(Some(s))` forces `s`.
/// `drift` is the same for findings that are a known SDK drift, below a
/// line for their kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    overrides: Vec<(Kind, Option<Severity>)>,
    drift: Option<Option<Severity>>,
}

impl Policy {
    /// Sets the severity for `kind`; `None` turns it off.
    pub fn set(&mut self, kind: Kind, severity: Option<Severity>) {
        self.overrides.retain(|(k, _)| *k != kind);
        self.overrides.push((kind, severity));
    }

    /// Sets the severity of every known SDK drift (`[severity] sdk_drift`);
    /// `None` turns them off.
    pub fn set_drift(&mut self, severity: Option<Severity>) {
        self.drift = Some(severity);
    }

    /// Applies the overrides: returns `None` when the kind is off.
    pub fn apply(&self, mut finding: Finding) -> Option<Finding> {
        let kind_line = self.overrides.iter().find(|(k, _)| *k == finding.kind);
        let choice = match (kind_line, finding.drift.and(self.drift)) {
            (Some(&(_, choice)), _) | (None, Some(choice)) => choice,
            (None, None) => return Some(finding),
        };
        finding.severity = choice?;
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(Kind::ALL.len(), 27);
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.as_str()), Some(*k));
        }
        assert_eq!(Kind::from_name("nope"), None);
    }

    #[test]
    fn policy_overrides_and_turns_off() {
        let mut p = Policy::default();
        p.set(Kind::StreamStart, Some(Severity::Warning));
        p.set(Kind::StalledTask, None);
        let f = p.apply(Finding::new(Kind::StreamStart, "x")).unwrap();
        assert_eq!(f.severity, Severity::Warning);
        assert!(p.apply(Finding::new(Kind::StalledTask, "x")).is_none());
        let f = p.apply(Finding::new(Kind::TerminalExit, "x")).unwrap();
        assert_eq!(f.severity, Severity::Error);
    }

    #[test]
    fn sdk_drift_lowers_the_drift_alone_and_a_kind_line_wins() {
        let mut p = Policy::default();
        p.set_drift(Some(Severity::Warning));
        let mut drift = Finding::new(Kind::StreamStart, "x");
        drift.drift = Some(Drift::PythonFollowUpStream);
        let lowered = p.apply(drift.clone()).unwrap();
        assert_eq!(lowered.severity, Severity::Warning);
        let plain = p.apply(Finding::new(Kind::StreamStart, "x")).unwrap();
        assert_eq!(plain.severity, Severity::Error);
        p.set(Kind::StreamStart, None);
        assert!(p.apply(drift).is_none());
    }
}
