//! The one way a finding becomes a record, live and offline: the
//! operator's severity policy (a kind lowered, raised or off), then the
//! audit record with the exchange it came from. The live proxy then logs
//! it, counts it and queues it for the audit log; `check` prints it.

use crate::findings::{Finding, Kind, Policy, Severity};

use super::audit::{Origin, Record};

/// Finding → policy → record.
#[derive(Debug, Clone, Default)]
pub struct Pipeline {
    policy: Policy,
}

impl Pipeline {
    /// A pipeline applying `policy`.
    pub fn new(policy: Policy) -> Pipeline {
        Pipeline { policy }
    }

    /// The record of `finding` about `origin`, stamped now; `None` when the
    /// policy turns its kind off.
    pub fn record(&self, finding: Finding, origin: &Origin) -> Option<Record> {
        Some(Record::new(self.keep(finding)?, origin))
    }

    /// `finding` at the severity the policy gives its kind; `None` when
    /// the policy turns the kind off.
    pub fn keep(&self, finding: Finding) -> Option<Finding> {
        self.policy.apply(finding)
    }
}

/// Records of one exchange held so that repeats of a kind (and, for an
/// artifact kind, of the artifact) fold into the first one's
/// `occurrences`: a broken agent that repeats a violation on every frame
/// writes one record, not one per frame.
#[derive(Debug, Default)]
pub struct Folds {
    held: Vec<Held>,
}

/// A record held, with the kind, severity and artifact it is about.
#[derive(Debug)]
pub struct Held {
    pub kind: Kind,
    pub severity: Severity,
    artifact: Option<String>,
    pub record: Record,
}

impl Folds {
    /// Folds `record` (of `finding`) into a held record of the same kind and
    /// artifact, or holds it; true when it is held as a new record.
    pub fn add(&mut self, finding: &Finding, record: Record) -> bool {
        let key = (finding.kind, finding.artifact_id.as_deref());
        match self
            .held
            .iter_mut()
            .find(|h| (h.kind, h.artifact.as_deref()) == key)
        {
            Some(first) => {
                first.record.occurrences += 1;
                false
            }
            None => {
                self.held.push(Held {
                    kind: finding.kind,
                    severity: finding.severity,
                    artifact: finding.artifact_id.clone(),
                    record,
                });
                true
            }
        }
    }

    /// Whether no record is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// The held records, in the order their first occurrence came; later
    /// repeats start new records.
    pub fn take(&mut self) -> impl Iterator<Item = Held> + '_ {
        self.held.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Kind, Severity};

    #[test]
    fn the_policy_decides_what_becomes_a_record() {
        let mut policy = Policy::default();
        policy.set(Kind::StreamStart, Some(Severity::Warning));
        policy.set(Kind::StalledTask, None);
        let p = Pipeline::new(policy);
        let origin = Origin::default();
        let r = p
            .record(Finding::new(Kind::StreamStart, "d"), &origin)
            .expect("kept");
        assert_eq!(r.severity, "warning");
        assert!(p
            .record(Finding::new(Kind::StalledTask, "d"), &origin)
            .is_none());
        let r = p
            .record(Finding::new(Kind::TerminalExit, "d"), &origin)
            .unwrap();
        assert_eq!(r.severity, "error");
    }
}
