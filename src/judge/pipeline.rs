//! The one way a finding is kept, live and offline: the operator's
//! severity policy (a kind lowered, raised or off), then ids and detail
//! cut to size. The outputs make the audit record of what is kept (with
//! the exchange it came from): the live proxy logs it, counts it, puts it
//! on the span and queues it for the audit log; `check` and `probe` print
//! it.

use crate::findings::{Finding, Policy};
use crate::lifecycle::cut_owned;

/// Longest `detail` repeated: a sentence, with the ids it names (each cut
/// to `analysis.max_id_bytes`).
pub const DETAIL_BYTES: usize = 1024;

/// Finding → policy → kept finding.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Kind, Severity};

    #[test]
    fn the_policy_decides_what_is_kept() {
        let mut policy = Policy::default();
        policy.set(Kind::StreamStart, Some(Severity::Warning));
        policy.set(Kind::StalledTask, None);
        let p = Pipeline::new(policy, 256);
        let f = p.keep(Finding::new(Kind::StreamStart, "d")).expect("kept");
        assert_eq!(f.severity, Severity::Warning);
        assert!(p.keep(Finding::new(Kind::StalledTask, "d")).is_none());
        let f = p.keep(Finding::new(Kind::TerminalExit, "d")).unwrap();
        assert_eq!(f.severity, Severity::Error);
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
