//! Facts: what one replica's registry learned of a task, shared with the
//! other replicas in front of the same agent (`[registry] backend =
//! "redis"`). A fact carries no time of the replica that saw it: a replica
//! that hears it places it in its own causal order when it arrives.

use std::collections::{HashMap, VecDeque};

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

    /// Records what replica `from` saw of a task, as of now in this
    /// replica's causal order (a terminal state is known to exchanges
    /// opened from here on). Never a finding, never a fact of its own, and
    /// never out of a terminal state (an exit is the finding of the replica
    /// whose traffic showed it); a fact older than the known status (by the
    /// agent's `status.timestamp`) is ignored.
    pub fn learn(&mut self, f: &Fact, from: &str, now: Millis) {
        let from = self.sources.of(from);
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
                self.insert(&o, at, stamp, now, from);
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
        e.status_from = from;
        e.terminal_seq = o.state.is_terminal().then_some(Seq(self.clock + 1));
    }
}

/// Where a task's recorded status came from: this replica's own traffic
/// (`HERE`), or the replica a fact was heard from, by a number the
/// registry's [`Sources`] names (two bytes in the task's entry, not a name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Source(u16);

impl Source {
    /// This replica's own traffic.
    pub const HERE: Source = Source(0);
    /// A replica heard after every number was given: named nowhere, but
    /// still not this one.
    const UNNAMED: Source = Source(u16::MAX);
}

/// Most replica names kept to name sources by (the newest; an older
/// source's findings say "another replica").
const KEPT_SOURCES: usize = 1024;

/// The names of the replicas facts were heard from, each given a number
/// once (never reused, so a task's entry never names the wrong one).
#[derive(Debug, Default)]
pub(super) struct Sources {
    by_name: HashMap<Box<str>, Source>,
    /// In the order numbers were given (so by number).
    names: VecDeque<(Source, Box<str>)>,
    /// The last number given.
    last: u16,
}

impl Sources {
    /// The number of replica `name`, given now if it has none.
    fn of(&mut self, name: &str) -> Source {
        if let Some(s) = self.by_name.get(name) {
            return *s;
        }
        if self.last + 1 == Source::UNNAMED.0 {
            return Source::UNNAMED;
        }
        self.last += 1;
        let s = Source(self.last);
        if self.names.len() == KEPT_SOURCES {
            if let Some((_, old)) = self.names.pop_front() {
                self.by_name.remove(&old);
            }
        }
        self.names.push_back((s, name.into()));
        self.by_name.insert(name.into(), s);
        s
    }

    /// What findings resting on `s` name: `None` for this replica.
    pub(super) fn name(&self, s: Source) -> Option<&str> {
        if s == Source::HERE {
            return None;
        }
        let kept = self
            .names
            .binary_search_by_key(&s.0, |(n, _)| n.0)
            .ok()
            .and_then(|i| self.names.get(i));
        Some(kept.map_or("another replica", |(_, name)| &**name))
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
