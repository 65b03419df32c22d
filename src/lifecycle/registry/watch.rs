//! The stall watch: which tasks an open stream follows, what it heard of
//! them, and the periodic tick that reports `stalled_task` and forgets
//! tasks past the TTL.

use super::Registry;
use crate::findings::{Finding, Kind};
use crate::lifecycle::Millis;

impl Registry {
    /// An open stream now follows `task_id` (a no-op for a task not
    /// tracked): while one does, its silence counts (`tick`).
    pub fn watch(&mut self, task_id: &str) {
        if let Some(e) = self.tasks.get_mut(task_id) {
            e.watchers = e.watchers.saturating_add(1);
        }
    }

    /// A stream that followed `task_id` ended.
    pub fn unwatch(&mut self, task_id: &str) {
        if let Some(e) = self.tasks.get_mut(task_id) {
            e.watchers = e.watchers.saturating_sub(1);
        }
    }

    /// A stream carried news of `task_id` (an artifact chunk, say) that
    /// changed no state: the task is not silent.
    pub fn heard(&mut self, task_id: &str, now: Millis) {
        if let Ok(e) = self.tasks.touch(task_id) {
            e.last_seen = e.last_seen.max(now);
        }
    }

    /// Periodic: reports `stalled_task` (once per state entry) for tasks an
    /// open stream follows that have been silent in one state past its
    /// limit, then forgets tasks not observed within the TTL. A task no
    /// stream follows is not judged here: what the proxy did not see is no
    /// evidence (a later answer may still show the stall, see `Verdict`).
    /// Scans every task: O(tracked), meant for a tick every second or so.
    pub fn tick(&mut self, now: Millis, out: &mut Vec<Finding>) {
        for (id, e) in self.tasks.iter_mut() {
            if e.stall_reported || e.watchers == 0 {
                continue;
            }
            let Some(limit) = self.cfg.stall.limit(e.state) else {
                continue;
            };
            let silent = now.saturating_sub(e.last_seen);
            if silent > limit {
                e.stall_reported = true;
                let mut f = Finding::new(
                    Kind::StalledTask,
                    format!(
                        "task {} was expected to leave {} within {}; its open stream has been silent in that state for {}",
                        id.as_str(),
                        e.state,
                        secs(limit),
                        secs(silent)
                    ),
                );
                f.task_id = Some(id.as_str().to_owned());
                f.context_id = e.context_id.as_ref().map(|c| c.as_str().to_owned());
                f.heard_from = self.sources.name(e.status_from).map(str::to_owned);
                out.push(f);
            }
        }
        if self.cfg.ttl == 0 {
            return;
        }
        // Touch order is observation order, so the oldest entries come first.
        while let Some((_, e)) = self.tasks.oldest() {
            if now.saturating_sub(e.last_seen) < self.cfg.ttl {
                break;
            }
            self.pop_oldest();
        }
    }
}

/// Milliseconds as a short human duration (`"90s"`, `"1.5s"`).
pub(crate) fn secs(ms: Millis) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}
