//! What a stream may carry after its task's terminal state (the readings
//! are in `stream.rs`'s header): `terminal_exit` for another known state,
//! `event_after_terminal` for anything else, a final Task snapshot and a
//! subscribe stream's replay excepted.

use super::Reducer;
use crate::a2a::model::{Event, Operation, StateValue, TaskState, Version};
use crate::findings::{Finding, Kind};
use crate::lifecycle::registry::{Observation, Registry};
use crate::lifecycle::Millis;

impl Reducer {
    /// Any event after the stream's terminal state.
    pub(super) fn after_terminal(
        &mut self,
        i: u64,
        term: TaskState,
        ev: &Event,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) {
        let (task, ctx, status) = match ev {
            Event::Task(t) => (&t.id, t.context_id.as_deref(), &t.status),
            Event::StatusUpdate(u) => (&u.task_id, u.context_id.as_deref(), &u.status),
            _ => {
                if self.after_terminal_judged() {
                    let detail = self.after_terminal_detail(term, &format!("a {}", ev.label()));
                    out.push(self.finding(Kind::EventAfterTerminal, Some(i), detail));
                }
                return;
            }
        };
        match &status.state {
            StateValue::Known(s) if *s != term => {
                let detail = format!("task {task} was {term} and then reported {s}");
                out.push(self.finding(Kind::TerminalExit, Some(i), detail));
                // The registry learns the state; its own verdict would repeat
                // this finding, so it is dropped.
                let obs = Observation {
                    task_id: task,
                    context_id: ctx,
                    state: *s,
                    timestamp: status.timestamp.as_deref(),
                    seq: self.seq,
                };
                let _ = reg.observe(&obs, now);
            }
            // The same terminal state again is not a state change. On a
            // subscribe stream it is a replay of the current state.
            StateValue::Known(_) if self.is_subscribe() => {}
            // Spec 1.0 §11.7: a server "MAY optionally resend a final Task
            // snapshot before closing". One is legal on every stream. After
            // a gap it may be the second (the unread event the first) or
            // the first (the unread event something else): not judged.
            StateValue::Known(_) if !self.after_terminal_judged() => {}
            StateValue::Known(_) if matches!(ev, Event::Task(_)) && self.terminal_gap => {}
            StateValue::Known(_) if matches!(ev, Event::Task(_)) && !self.final_snapshot => {
                self.final_snapshot = true;
            }
            StateValue::Known(_) => {
                let detail =
                    self.after_terminal_detail(term, &format!("a {} repeating {term}", ev.label()));
                out.push(self.finding(Kind::EventAfterTerminal, Some(i), detail));
            }
            _ => {
                let _ = self.task_status(task, ctx, status, Some(i), false, reg, now, out);
            }
        }
    }

    /// Whether events after the terminal state are judged: in 1.0 the
    /// stream "MUST close when the task reaches a terminal state" (§3.1.2);
    /// 0.3 only says a `final:true` event is "the final event in the
    /// stream", so there it holds after a terminal status with `final:true`.
    pub(super) fn after_terminal_judged(&self) -> bool {
        self.exchange.version == Version::V1_0 || self.terminal_final
    }

    pub(super) fn after_terminal_detail(&self, term: TaskState, what: &str) -> String {
        let task = self.task_id().unwrap_or("?");
        format!("expected the stream to end once task {task} was {term}; {what} followed")
    }

    pub(super) fn is_subscribe(&self) -> bool {
        self.exchange.operation == Operation::SubscribeToTask
    }
}
