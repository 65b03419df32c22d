//! Repeats of a finding on one exchange folded into its first occurrence.

use crate::findings::{Finding, Kind, Severity};

/// What one exchange found, held so that repeats of a kind (and, for an
/// artifact kind, of the artifact) fold into the first one's
/// `occurrences`: a broken agent that repeats a violation on every frame
/// writes one record, not one per frame. `R` is what the output keeps of
/// the first occurrence (the finding offline, its record live, stamped
/// when it came).
#[derive(Debug)]
pub struct Folds<R> {
    held: Vec<Held<R>>,
}

impl<R> Default for Folds<R> {
    fn default() -> Self {
        Folds { held: Vec::new() }
    }
}

/// The first occurrence held, with the kind, severity and artifact it is
/// about, and how many times it occurred.
#[derive(Debug)]
pub struct Held<R> {
    pub kind: Kind,
    pub severity: Severity,
    artifact: Option<String>,
    pub first: R,
    pub occurrences: u64,
}

impl<R> Folds<R> {
    /// Folds `finding` into a held one of the same kind and artifact, or
    /// holds what `first` makes of it; true when it is held as a new one.
    /// A repeat makes nothing.
    pub fn add(&mut self, finding: Finding, first: impl FnOnce(Finding) -> R) -> bool {
        let key = (finding.kind, finding.artifact_id.as_deref());
        match self
            .held
            .iter_mut()
            .find(|h| (h.kind, h.artifact.as_deref()) == key)
        {
            Some(held) => {
                held.occurrences += 1;
                false
            }
            None => {
                // Most exchanges hold one finding at most: room for one.
                // The four a first push makes room for can miss the
                // allocator's per-thread cache when `R` is large (the live
                // proxy's held record is 392 bytes; four of them, 1.5 KB).
                if self.held.capacity() == 0 {
                    self.held.reserve_exact(1);
                }
                self.held.push(Held {
                    kind: finding.kind,
                    severity: finding.severity,
                    artifact: finding.artifact_id.clone(),
                    first: first(finding),
                    occurrences: 1,
                });
                true
            }
        }
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// What is held, in the order the first occurrences came; later
    /// repeats start anew.
    pub fn take(&mut self) -> impl Iterator<Item = Held<R>> + '_ {
        self.held.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_fold_by_kind_and_artifact() {
        let mut folds = Folds::default();
        let mut a = Finding::new(Kind::StreamStart, "a");
        assert!(folds.add(a.clone(), |_| 1));
        assert!(!folds.add(a.clone(), |_| 2));
        a.artifact_id = Some("x".into());
        assert!(folds.add(a, |_| 3));
        let held: Vec<(R, u64)> = folds.take().map(|h| (h.first, h.occurrences)).collect();
        assert_eq!(held, [(1, 2), (3, 1)]);
        assert!(folds.is_empty());
    }

    type R = i32;
}
