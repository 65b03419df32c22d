//! What each probe check rests on: the sections of spec 1.0.1 and the
//! conformance kit's requirement ids for the same rule (a2a-tck `1.0-dev`
//! at 357c4a8), as the catalogue kinds name theirs (`findings/sources.rs`).

use super::checks::CheckId;
use crate::report::audit::Rule;

impl CheckId {
    /// The check's sources, as reports show them (`rule` in JSON, the
    /// SARIF rule's `helpUri` and properties, the JUnit case's text).
    pub fn rule(self) -> Rule {
        let (spec, tck): (&'static str, &'static [&'static str]) = match self {
            CheckId::AgentCardValid => (
                "1.0.1 §4.4.1, §4.4.6",
                &["CARD-PROTO-002", "CARD-STRUCT-001"],
            ),
            CheckId::BlockingSend => ("1.0.1 §3.2.2", &["CORE-EXECUTION-MODE-001"]),
            CheckId::FollowUp => ("1.0.1 §3.4.3", &["CORE-MULTI-006"]),
            CheckId::ReturnImmediately => ("1.0.1 §3.2.2", &["CORE-EXECUTION-MODE-002"]),
            CheckId::CancelActive => ("1.0.1 §3.1.5", &["CORE-CANCEL-001"]),
            CheckId::TerminalRejectsMessage => ("1.0.1 §3.1.1, §3.1.2", &["CORE-SEND-002"]),
            CheckId::CancelTerminal => ("1.0.1 §3.1.5", &["CORE-CANCEL-002"]),
            CheckId::CancelCompleted => ("1.0.1 §3.1.5, §3.1.3", &["CORE-CANCEL-002"]),
            CheckId::SubscribeTerminal => ("1.0.1 §3.1.6", &["STREAM-SUB-003"]),
            CheckId::GetUnknown => ("1.0.1 §3.1.3", &["CORE-GET-002"]),
            CheckId::StreamStarts => (
                "1.0.1 §3.1.2",
                &["CORE-STREAM-001", "CORE-STREAM-002", "CORE-STREAM-003"],
            ),
            CheckId::StreamingCapability => ("1.0.1 §3.3.4, §4.4.3", &["CORE-CAP-002"]),
            CheckId::PushCapability => ("1.0.1 §3.3.4, §4.4.3", &["CORE-CAP-001"]),
            CheckId::UnsupportedVersion => ("1.0.1 §3.6.2", &["VER-SERVER-002"]),
            CheckId::ErrorCodes => (
                "1.0.1 §5.4, §9.5, §11.6",
                &["HTTP_JSON-STATUS-001", "JSONRPC-SSE-002"],
            ),
        };
        Rule {
            spec: Some(spec),
            tck,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::conformance_rows;
    use crate::findings::spec_link;

    /// Every check: the card's, then those run on each interface.
    fn all() -> impl Iterator<Item = CheckId> {
        std::iter::once(CheckId::AgentCardValid).chain(CheckId::PER_INTERFACE)
    }

    #[test]
    fn the_conformance_table_and_the_checks_agree() {
        let rows = conformance_rows(5);
        for (id, checks) in &rows {
            for name in checks {
                let check = all()
                    .find(|c| c.as_str() == name)
                    .unwrap_or_else(|| panic!("{id}: `{name}` is no probe check"));
                assert!(check.rule().tck.contains(&id.as_str()), "{id} / {name}");
            }
        }
        for check in all() {
            for id in check.rule().tck {
                let named = rows
                    .iter()
                    .any(|(r, c)| r == id && c.iter().any(|n| n == check.as_str()));
                assert!(named, "{id}'s row does not name `{}`", check.as_str());
            }
            let spec = check.rule().spec.unwrap_or_default();
            for section in spec.split('§').skip(1) {
                let section = section.trim_end_matches([',', ' ']);
                assert!(spec_link::anchor(section).is_some(), "§{section}");
            }
        }
    }
}
