//! The one way a finding becomes a record, live and offline: the
//! operator's severity policy (a kind lowered, raised or off), ids and
//! detail cut to size, then the audit record with the exchange it came
//! from. The live proxy then logs it, counts it, puts it on the span and
//! queues it for the audit log; `check` prints it.

use crate::findings::{Finding, Kind, Policy, Severity};
use crate::lifecycle::cut_owned;

use super::audit::{Origin, Record};

/// Longest `detail` repeated: a sentence, with the ids it names (each cut
/// to `analysis.max_id_bytes`).
pub const DETAIL_BYTES: usize = 1024;

/// Finding → policy → record.
#[derive(Debug, Clone)]
pub struct Pipeline {
    policy: Policy,
    /// Ids longer than this are repeated cut (`analysis.max_id_bytes`).
    max_id: usize,
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline::new(Policy::default(), crate::lifecycle::DEFAULT_MAX_ID_BYTES)
    }
}

impl Pipeline {
    /// A pipeline applying `policy`, cutting ids over `max_id` bytes.
    pub fn new(policy: Policy, max_id: usize) -> Pipeline {
        Pipeline { policy, max_id }
    }

    /// The record of `finding` about `origin`, stamped now; `None` when the
    /// policy turns its kind off.
    pub fn record(&self, finding: Finding, origin: &Origin) -> Option<Record> {
        Some(Record::new(self.keep(finding)?, origin))
    }

    /// `finding` at the severity the policy gives its kind, its ids and
    /// detail cut to size (whatever an agent sent, a record is bounded);
    /// `None` when the policy turns the kind off.
    pub fn keep(&self, finding: Finding) -> Option<Finding> {
        let mut f = self.policy.apply(finding)?;
        let max = self.max_id;
        f.task_id = f.task_id.map(|s| cut_owned(s, max));
        f.context_id = f.context_id.map(|s| cut_owned(s, max));
        f.artifact_id = f.artifact_id.map(|s| cut_owned(s, max));
        f.detail = cut_owned(f.detail, DETAIL_BYTES);
        Some(f)
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
        let p = Pipeline::new(policy, 256);
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

    #[test]
    fn ids_and_details_are_cut_whatever_their_length() {
        let p = Pipeline::new(Policy::default(), 8);
        let mut f = Finding::new(Kind::TerminalExit, "d".repeat(1 << 20));
        f.task_id = Some("t".repeat(1 << 20));
        f.context_id = Some("short".into());
        f.artifact_id = Some("a".repeat(9));
        let f = p.keep(f).unwrap();
        assert_eq!(f.task_id.as_deref(), Some("tttttttt…(+1048568 bytes)"));
        assert_eq!(f.context_id.as_deref(), Some("short"));
        assert_eq!(f.artifact_id.as_deref(), Some("aaaaaaaa…(+1 bytes)"));
        assert!(f.detail.len() < DETAIL_BYTES + 32, "{}", f.detail.len());
    }
}
