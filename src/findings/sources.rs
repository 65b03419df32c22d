//! What each kind rests on: the sections of spec 1.0.1 that state its rule
//! and the conformance kit's requirement ids for the same rule (a2a-tck,
//! branch `1.0-dev` at 357c4a8, `tck/requirements/`), in one table.
//! `docs/conformance.md` maps the kit's requirements back to the kinds; the
//! tests below keep the two in step.

use super::Kind;

/// A kind's sources: `spec` ("1.0.1 §3.1.2, §11.7"), `None` where no
/// section states the rule; `tck`, empty where the kit has no requirement
/// for it.
struct Source {
    spec: Option<&'static str>,
    tck: &'static [&'static str],
}

const fn src(spec: &'static str, tck: &'static [&'static str]) -> Source {
    Source {
        spec: Some(spec),
        tck,
    }
}

/// Neither a section nor a requirement states the rule (docs/findings.md
/// says why for each such kind).
const NONE: Source = Source {
    spec: None,
    tck: &[],
};

fn source(kind: Kind) -> Source {
    match kind {
        Kind::TerminalExit => src("1.0.1 §4.1.3", &[]),
        Kind::UnspecifiedState => src("1.0.1 §4.1.3", &["DM-STATUS-001", "DM-TASK-002"]),
        Kind::UnknownState => src("1.0.1 §4.1.3, §5.5", &["DM-SERIAL-002", "DM-TASK-002"]),
        Kind::TaskIdMismatch => NONE,
        Kind::ContextIdMismatch => src("1.0.1 §3.4.3", &["CORE-MULTI-006"]),
        Kind::AbandonedArtifact => src("1.0.1 §4.2.2", &[]),
        Kind::AppendToUnknownArtifact => src("1.0.1 §4.2.2", &[]),
        Kind::EventAfterTerminal => src(
            "1.0.1 §3.1.2, §11.7",
            &["CORE-STREAM-003", "STREAM-SUB-002"],
        ),
        Kind::StreamStart => src(
            "1.0.1 §3.1.2, §3.1.6",
            &["CORE-STREAM-003", "STREAM-SUB-001"],
        ),
        Kind::MessageNotAlone => src("1.0.1 §3.1.2", &["CORE-STREAM-002"]),
        Kind::JsonrpcIdMismatch => src("1.0.1 §9.1", &[]),
        Kind::MalformedEvent => src(
            "1.0.1 §3.2.3, §9.4.2, §11.7",
            &["HTTP_JSON-SSE-001", "JSONRPC-SSE-001", "PUSH-DELIVER-003"],
        ),
        Kind::BlockingReturnedActive => src("1.0.1 §3.2.2", &["CORE-EXECUTION-MODE-001"]),
        Kind::TerminalTaskAccepted => src(
            "1.0.1 §3.1.1, §3.1.5, §3.1.6",
            &["CORE-CANCEL-002", "CORE-SEND-002", "STREAM-SUB-003"],
        ),
        Kind::StreamTruncated => src("1.0.1 §3.1.2, §11.7", &["CORE-STREAM-003"]),
        Kind::StalledTask => NONE,
        Kind::SealedArtifactUpdated => src("1.0.1 §4.2.2", &[]),
        Kind::InvalidAgentCard => src(
            "1.0.1 §4.4.1, §4.4.6",
            &["CARD-PROTO-002", "CARD-STRUCT-001"],
        ),
        Kind::CapabilityMismatch => src(
            "1.0.1 §3.3.4",
            &["CORE-CAP-001", "CORE-CAP-002", "CORE-CAP-003"],
        ),
        Kind::VersionMismatch => src("1.0.1 §3.6.2", &["VER-SERVER-001"]),
        Kind::ErrorCodeMismatch => src(
            "1.0.1 §5.4, §9.5, §10.6, §11.6",
            &[
                "GRPC-ERR-002",
                "HTTP_JSON-ERR-002",
                "HTTP_JSON-STATUS-001",
                "JSONRPC-ERR-001",
                "JSONRPC-ERR-003",
                "JSONRPC-SSE-002",
            ],
        ),
        Kind::InvalidTimestamp => src("1.0.1 §5.6.1", &["DM-SERIAL-003"]),
        Kind::StreamNotClosed => src(
            "1.0.1 §3.1.2, §3.1.6",
            &["CORE-STREAM-002", "CORE-STREAM-003", "STREAM-SUB-002"],
        ),
        Kind::SubscriberNotNotified => src(
            "1.0.1 §3.1.6, §3.5.2",
            &["STREAM-ORDER-002", "STREAM-ORDER-003", "STREAM-SUB-002"],
        ),
        Kind::PushAuthMissing => src("1.0.1 §4.3.3", &["PUSH-DELIVER-001"]),
        Kind::PushNotDelivered => src("1.0.1 §4.3.3", &["PUSH-DELIVER-002"]),
        Kind::PushAfterDelete => src("1.0.1 §3.1.10", &["PUSH-DEL-001"]),
    }
}

impl Kind {
    /// The sections of spec 1.0.1 the kind rests on (the audit record's
    /// `rule.spec`); `None` where no section states the rule.
    pub fn spec(self) -> Option<&'static str> {
        source(self).spec
    }

    /// The conformance kit's requirement ids for the same rule (the audit
    /// record's `rule.tck`); empty where the kit has none.
    pub fn tck(self) -> &'static [&'static str] {
        source(self).tck
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) use tests::conformance_rows;
