//! The one way a finding becomes a record, live and offline: the
//! operator's severity policy (a kind lowered, raised or off), then the
//! audit record with the exchange it came from. The live proxy then logs
//! it, counts it and queues it for the audit log; `check` prints it.

use crate::findings::{Finding, Policy};

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
