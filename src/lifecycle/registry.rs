//! The bounded task registry across exchanges: last known state of every task,
//! the causal stamp of terminal states, the stall watch, LRU and TTL bounds,
//! and transition counts for metrics.

use super::lru::{self, Lru, Vacant};
use super::short::ShortStr;
use super::timestamp::{self, Stamp};
use super::{Millis, Seq};
use crate::a2a::model::TaskState;

mod fact;
mod limits;
mod watch;
use fact::{note, Sources};
pub use fact::{Fact, Source};
pub use limits::{RegistryConfig, StallLimits};
pub(crate) use watch::secs;

/// One state observation of a task, as a response or stream event reported it.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    pub task_id: &'a str,
    pub context_id: Option<&'a str>,
    pub state: TaskState,
    /// `status.timestamp` as sent.
    pub timestamp: Option<&'a str>,
    /// The stamp of the exchange that carried the observation.
    pub seq: Seq,
}

/// What the registry made of an observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A new task, the same state again, or a legal move: recorded.
    Recorded,
    /// A causally later observation left the terminal state `was`
    /// (`terminal_exit`), seen here or heard `from` another replica. The
    /// new state is recorded.
    TerminalExit { was: TaskState, from: Source },
    /// The same status again, with the very `status.timestamp` the task had
    /// when this proxy first saw it in that state, more than the state's
    /// limit ago (`stalled_task`, once per state entry): the agent has not
    /// touched the status since.
    Stalled {
        state: TaskState,
        sat: Millis,
        limit: Millis,
    },
    /// Not recorded: stamped before the known status, or (for a terminal
    /// task) carried by an exchange sent before the terminal state was seen.
    Ignored,
}

/// What the registry keeps per task, besides the id. `size_of::<Entry>()` is
/// 112 bytes on 64-bit targets (the context id in place); in its LRU slot
/// (+ the task id in place 48, hash 8, list links 8), with the hash index
/// entry (+4, +1 control byte), a task costs 181 bytes, up to ~360 right
/// after the slab and index have doubled, and no allocation of its own
/// while its ids are at most 46 bytes (test `entry_is_small`). Each id
/// longer than that adds one allocation of at most `max_id_bytes` + 64
/// bytes (an id over `max_id_bytes` is kept as its cut text and digest), so
/// a task costs at most ~360 + 2 × (`max_id_bytes` + 80) bytes.
#[derive(Debug)]
struct Entry {
    /// Set while `state` is terminal: the registry clock when it was seen.
    terminal_seq: Option<Seq>,
    /// The status timestamp of the recorded state, when it carried one.
    status_at: Option<Stamp>,
    context_id: Option<ShortStr>,
    /// When the task entered `state`.
    entered: Millis,
    /// When the task was last observed or heard of on a stream (TTL, and
    /// the silence a watched task's stall is measured by).
    last_seen: Millis,
    state: TaskState,
    /// `stalled_task` was reported for the current state entry.
    stall_reported: bool,
    /// Open streams on the task (`watch` / `unwatch`): only while one is,
    /// silence about the task is evidence.
    watchers: u16,
    /// Where the recorded status came from: this replica's traffic, or a
    /// fact another replica published (in the padding: no byte more).
    status_from: Source,
}

/// The tasks this proxy has seen, bounded by count (LRU) and age (TTL).
#[derive(Debug)]
pub struct Registry {
    cfg: RegistryConfig,
    /// Task id → entry, least recently observed first.
    tasks: Lru<Entry>,
    /// Logical clock behind `Seq`: even at an exchange's opening (its
    /// stamp), a terminal state seen takes the odd stamp after it.
    clock: u64,
    by_state: [usize; 8],
    evicted: u64,
    /// `[from + 1][to]`, from index 0 meaning "first seen".
    transitions: [[u64; 8]; 9],
    /// While shared with other replicas: the facts recorded since they
    /// were last taken (`take_facts`).
    outbox: Option<Vec<Fact>>,
    /// Ids over `max_id_bytes` kept as their digest (task and context ids).
    long_ids: u64,
    /// The replicas facts were heard from, by the `Source` entries keep.
    sources: Sources,
}

fn idx(s: TaskState) -> usize {
    s as usize
}

// === impl Registry ===

impl Registry {
    /// An empty registry.
    pub fn new(cfg: RegistryConfig) -> Registry {
        Registry {
            tasks: Lru::with_max_key(cfg.max_id_bytes),
            cfg,
            clock: 0,
            by_state: [0; 8],
            evicted: 0,
            transitions: [[0; 8]; 9],
            outbox: None,
            long_ids: 0,
            sources: Sources::default(),
        }
    }

    /// Called when an exchange's request is sent upstream; the returned stamp
    /// orders it after every observation made so far.
    pub fn open_exchange(&mut self) -> Seq {
        self.clock += 2;
        Seq(self.clock)
    }

    /// For a driver that stamps exchanges itself, by messages in one causal
    /// order (`Seq::after_messages`): what is observed from here on came
    /// with message `index` (counted from 0).
    pub fn at_message(&mut self, index: u64) {
        self.clock = index.saturating_mul(2);
    }

    /// Number of tracked tasks.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// True when no task is tracked.
    pub fn is_empty(&self) -> bool {
        self.tasks.len() == 0
    }

    /// Tracked tasks per state, indexed like `TaskState::ALL`.
    pub fn tracked_by_state(&self) -> [usize; 8] {
        self.by_state
    }

    /// Drains the count of ids over `max_id_bytes` the registry kept as
    /// their digest (a task's id when first tracked, a context id when
    /// recorded) since the last call.
    pub fn take_long_ids(&mut self) -> u64 {
        std::mem::take(&mut self.long_ids)
    }

    /// Tasks evicted because `max_tasks` was reached.
    pub fn evicted_total(&self) -> u64 {
        self.evicted
    }

    /// Drains accumulated transition counts: `(from: None = first seen, to)
    /// -> count`, only non-zero ones.
    pub fn take_transitions(&mut self, f: &mut dyn FnMut(Option<TaskState>, TaskState, u64)) {
        for (from, row) in self.transitions.iter_mut().enumerate() {
            for (to, n) in row.iter_mut().enumerate() {
                if *n > 0 {
                    let from = from.checked_sub(1).map(|i| TaskState::ALL[i]);
                    f(from, TaskState::ALL[to], *n);
                    *n = 0;
                }
            }
        }
    }

    /// The last recorded state of `task_id`.
    pub fn state_of(&self, task_id: &str) -> Option<TaskState> {
        self.tasks.get(task_id).map(|e| e.state)
    }

    /// Whether the recorded status of `task_id` carried a readable
    /// `status.timestamp` (a push delivery is ordered against it only then).
    pub fn status_stamped(&self, task_id: &str) -> bool {
        self.tasks
            .get(task_id)
            .is_some_and(|e| e.status_at.is_some())
    }

    /// The causal stamp of what is observed now (after `at_message`).
    pub fn now_seq(&self) -> Seq {
        Seq(self.clock)
    }

    /// The replica whose fact the recorded status of `task_id` rests on,
    /// when it was heard rather than seen here.
    pub fn status_heard_from(&self, task_id: &str) -> Option<&str> {
        self.heard_from(self.tasks.get(task_id)?.status_from)
    }

    /// The replica `from` names; `None` for this replica's own traffic.
    pub fn heard_from(&self, from: Source) -> Option<&str> {
        self.sources.name(from)
    }

    /// The last recorded `contextId` of `task_id`.
    pub fn context_of(&self, task_id: &str) -> Option<&str> {
        self.tasks
            .get(task_id)?
            .context_id
            .as_ref()
            .map(ShortStr::as_str)
    }

    /// The last recorded `contextId` of `task_id`, when there is one and
    /// it is not `ctx`.
    pub(crate) fn context_other_than(&self, task_id: &str, ctx: &str) -> Option<&str> {
        let known = self.tasks.get(task_id)?.context_id.as_ref()?;
        (!known.is(ctx)).then(|| known.as_str())
    }

    /// The terminal state of `task_id` if it was seen before the exchange
    /// stamped `seq` was sent.
    pub fn terminal_before(&self, task_id: &str, seq: Seq) -> Option<TaskState> {
        let e = self.tasks.get(task_id)?;
        match e.terminal_seq {
            Some(t) if t < seq => Some(e.state),
            _ => None,
        }
    }

    /// The terminal state `task_id` was seen in after an exchange stamped
    /// `seq` began (so that exchange was open before it), and when it was
    /// first seen there (`subscriber_not_notified`).
    pub fn terminal_after(&self, task_id: &str, seq: Seq) -> Option<(TaskState, Millis)> {
        let e = self.tasks.get(task_id)?;
        match e.terminal_seq {
            Some(t) if t > seq => Some((e.state, e.entered)),
            _ => None,
        }
    }

    /// The terminal state `task_id` is in, and when it was first seen
    /// there (`push_not_delivered`).
    pub fn terminal_of(&self, task_id: &str) -> Option<(TaskState, Millis)> {
        let e = self.tasks.get(task_id)?;
        e.state.is_terminal().then_some((e.state, e.entered))
    }

    /// Records one observation; see `Verdict`. Also records a changed
    /// `contextId` (the caller judges `context_id_mismatch` beforehand with
    /// `context_other_than`, or with `observe_noting_context`).
    pub fn observe(&mut self, o: &Observation<'_>, now: Millis) -> Verdict {
        self.observe_noting_context(o, now, &mut None)
    }

    /// `observe`, in the same lookup putting in `ctx_was` the `contextId`
    /// the task had when the observation changed it (what
    /// `context_other_than` would have answered just before).
    pub(crate) fn observe_noting_context(
        &mut self,
        o: &Observation<'_>,
        now: Millis,
        ctx_was: &mut Option<ShortStr>,
    ) -> Verdict {
        let stamp = o.timestamp.and_then(timestamp::parse);
        self.observe_stamped(o, stamp, now, ctx_was)
    }

    /// `observe_noting_context` of an observation whose `timestamp` the
    /// caller parsed already (`stamp`: `timestamp::parse` of it).
    pub(crate) fn observe_stamped(
        &mut self,
        o: &Observation<'_>,
        stamp: Option<Stamp>,
        now: Millis,
        ctx_was: &mut Option<ShortStr>,
    ) -> Verdict {
        let Registry {
            cfg,
            tasks,
            clock,
            by_state,
            transitions,
            outbox,
            long_ids,
            ..
        } = self;
        let max_id = cfg.max_id_bytes;
        let e = match tasks.touch(o.task_id) {
            Ok(e) => e,
            Err(at) => {
                if self.insert(o, at, stamp, now, Source::HERE) {
                    note(&mut self.outbox, o, self.cfg.max_id_bytes);
                }
                return Verdict::Recorded;
            }
        };
        e.last_seen = now;
        let mut moved_context = false;
        if let Some(ctx) = o.context_id {
            if !e.context_id.as_ref().is_some_and(|known| known.is(ctx)) {
                let kept = ShortStr::bounded(ctx, max_id);
                *long_ids += u64::from(kept.is_long());
                *ctx_was = e.context_id.replace(kept);
                moved_context = true;
            }
        }
        if e.state == o.state {
            if moved_context {
                note(outbox, o, max_id);
            }
            let untouched = stamp.is_some() && stamp == e.status_at;
            let sat = now.saturating_sub(e.entered);
            match self.cfg.stall.limit(e.state) {
                Some(limit) if untouched && !e.stall_reported && sat > limit => {
                    e.stall_reported = true;
                    return Verdict::Stalled {
                        state: e.state,
                        sat,
                        limit,
                    };
                }
                _ => {}
            }
            e.status_at = e.status_at.or(stamp);
            return Verdict::Recorded;
        }
        let stale = matches!((stamp, e.status_at), (Some(new), Some(known)) if new < known);
        let was = e.state;
        let verdict = if was.is_terminal() {
            let causal = e.terminal_seq.is_none_or(|t| o.seq > t);
            if stale || !causal {
                return Verdict::Ignored;
            }
            Verdict::TerminalExit {
                was,
                from: e.status_from,
            }
        } else if stale {
            return Verdict::Ignored;
        } else {
            Verdict::Recorded
        };
        by_state[idx(was)] -= 1;
        by_state[idx(o.state)] += 1;
        transitions[idx(was) + 1][idx(o.state)] += 1;
        e.state = o.state;
        e.entered = now;
        e.stall_reported = false;
        e.status_at = stamp;
        e.status_from = Source::HERE;
        e.terminal_seq = o.state.is_terminal().then_some(Seq(*clock + 1));
        note(outbox, o, max_id);
        verdict
    }

    /// Tracks a task first seen in `o` (here, or heard `from` a replica);
    /// a first sighting here counts as a transition (a learned fact is not
    /// this proxy's).
    /// False when nothing is tracked (`max_tasks` 0).
    fn insert(
        &mut self,
        o: &Observation<'_>,
        at: Vacant,
        stamp: Option<Stamp>,
        now: Millis,
        from: Source,
    ) -> bool {
        let max = self.cfg.max_tasks.min(lru::MAX_LEN);
        if max == 0 {
            return false;
        }
        while self.tasks.len() >= max && self.pop_oldest() {
            self.evicted += 1;
        }
        let terminal_seq = o.state.is_terminal().then_some(Seq(self.clock + 1));
        let max_id = self.cfg.max_id_bytes;
        let context_id = o.context_id.map(|c| ShortStr::bounded(c, max_id));
        self.long_ids += u64::from(context_id.as_ref().is_some_and(ShortStr::is_long));
        self.long_ids += u64::from(o.task_id.len() > max_id);
        let entry = Entry {
            terminal_seq,
            status_at: stamp,
            context_id,
            entered: now,
            last_seen: now,
            state: o.state,
            stall_reported: false,
            watchers: 0,
            status_from: from,
        };
        if !self.tasks.insert(o.task_id, at, entry) {
            return false;
        }
        self.by_state[idx(o.state)] += 1;
        if from == Source::HERE {
            self.transitions[0][idx(o.state)] += 1;
        }
        true
    }

    /// Forgets the least recently observed task; false when there is none.
    fn pop_oldest(&mut self) -> bool {
        match self.tasks.pop_oldest() {
            Some((_, e)) => {
                self.by_state[idx(e.state)] -= 1;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests;
