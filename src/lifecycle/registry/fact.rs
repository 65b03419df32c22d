//! Facts: what one replica's registry learned of a task, shared with the
//! other replicas in front of the same agent (`[registry] backend =
//! "redis"`). A fact carries no time of the replica that saw it: a replica
//! that hears it places it in its own causal order when it arrives.

use super::{idx, timestamp, Observation, Registry, ShortStr};
use crate::a2a::model::TaskState;
use crate::lifecycle::{Millis, Seq};

/// One task's state (and context) as a replica's traffic showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    pub task_id: Box<str>,
    pub context_id: Option<Box<str>>,
    pub state: TaskState,
    /// `status.timestamp` as the agent sent it (orders facts about one
    /// task by the agent's own clock, never a replica's).
    pub timestamp: Option<Box<str>>,
}

impl Fact {
    /// The state by its metric label (`working`, `input_required` ...).
    pub fn state_from_label(label: &str) -> Option<TaskState> {
        TaskState::ALL.iter().copied().find(|s| s.as_str() == label)
    }
}

impl Registry {
    /// From now on every new state or context recorded is also kept as a
    /// [`Fact`] for the other replicas (`take_facts`).
    pub fn share(&mut self) {
        self.outbox.get_or_insert_with(Vec::new);
    }

    /// The facts recorded since the last call (none unless `share`d).
    pub fn take_facts(&mut self) -> Vec<Fact> {
        self.outbox.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Records what another replica saw of a task, as of now in this
    /// replica's causal order (a terminal state is known to exchanges
    /// opened from here on). Never a finding, never a fact of its own, and
    /// never out of a terminal state (an exit is the finding of the replica
    /// whose traffic showed it); a fact older than the known status (by the
    /// agent's `status.timestamp`) is ignored.
    pub fn learn(&mut self, f: &Fact, now: Millis) {
        let o = Observation {
            task_id: &f.task_id,
            context_id: f.context_id.as_deref(),
            state: f.state,
            timestamp: f.timestamp.as_deref(),
            seq: Seq(self.clock),
        };
        let stamp = o.timestamp.and_then(timestamp::parse);
        let e = match self.tasks.touch(o.task_id) {
            Ok(e) => e,
            Err(at) => {
                self.insert(&o, at, stamp, now, false);
                return;
            }
        };
        e.last_seen = e.last_seen.max(now);
        if let Some(ctx) = o.context_id {
            if !e.context_id.as_ref().is_some_and(|known| known.is(ctx)) {
                e.context_id = Some(ShortStr::bounded(ctx, self.cfg.max_id_bytes));
            }
        }
        let stale = matches!((stamp, e.status_at), (Some(new), Some(known)) if new < known);
        if e.state == o.state {
            e.status_at = e.status_at.or(stamp);
            return;
        }
        if stale || e.state.is_terminal() {
            return;
        }
        self.by_state[idx(e.state)] -= 1;
        self.by_state[idx(o.state)] += 1;
        e.state = o.state;
        e.entered = now;
        e.stall_reported = false;
        e.status_at = stamp;
        e.terminal_seq = o.state.is_terminal().then_some(Seq(self.clock + 1));
    }
}

/// Longest `status.timestamp` shared (an RFC 3339 stamp with nanoseconds
/// and an offset is 35 bytes): a longer one is no timestamp.
const MAX_TIMESTAMP_BYTES: usize = 64;

/// Keeps `o` as a fact for the other replicas, when shared. A task whose id
/// is over `max_id` is not shared (another replica could only hold it cut,
/// which is not the id); a context id over it is left out; a timestamp
/// longer than any real one too. So a fact is bounded however long the ids
/// an agent sends.
pub(super) fn note(outbox: &mut Option<Vec<Fact>>, o: &Observation<'_>, max_id: usize) {
    let Some(out) = outbox else {
        return;
    };
    if o.task_id.len() > max_id {
        return;
    }
    out.push(Fact {
        task_id: o.task_id.into(),
        context_id: o.context_id.filter(|c| c.len() <= max_id).map(Into::into),
        state: o.state,
        timestamp: o
            .timestamp
            .filter(|t| t.len() <= MAX_TIMESTAMP_BYTES)
            .map(Into::into),
    });
}
