//! The checks on a task that ended: a message to it, a cancel of it, a
//! subscribe to it are refused; a completed one stays completed; and
//! GetTask of a task that never existed.

use super::answer::{state_name, Answer, TaskInfo};
use super::checks::{CheckId as Id, CheckResult as R};
use super::dialect::Call;
use super::flow::Run;
use crate::a2a::model::{A2aError, StateClass, TaskState};

impl Run<'_> {
    /// The terminal checks, on the tasks the first sends left: a
    /// terminal one (the canceled running task first: the completed one
    /// has a check of its own), and a completed one.
    pub(crate) async fn terminal_checks(
        &mut self,
        first: Option<TaskInfo>,
        running: Option<TaskInfo>,
    ) {
        let is = |t: &Option<TaskInfo>, f: fn(TaskState) -> bool| {
            t.as_ref().filter(|t| t.state.is_some_and(f)).cloned()
        };
        let completed = is(&first, |s| s == TaskState::Completed)
            .or_else(|| is(&running, |s| s == TaskState::Completed));
        let mut terminal = is(&running, TaskState::is_terminal)
            .filter(|t| t.state != Some(TaskState::Completed))
            .or_else(|| is(&first, TaskState::is_terminal))
            .or_else(|| completed.clone());
        let of = |t: &Option<TaskInfo>| t.as_ref().map_or("no task", |t| state_name(t.state));
        let mut why_none = format!(
            "no task reached a terminal state (first send: {}; returnImmediately send: {})",
            of(&first),
            of(&running),
        );
        // An interrupted task is made terminal by canceling it.
        if terminal.is_none() {
            if let Some(t) = first
                .as_ref()
                .filter(|t| t.state.map(TaskState::class) == Some(StateClass::Interrupted))
            {
                match self.call(Call::Cancel { id: &t.id }, None).await {
                    Ok((_, Answer::Task(c))) if c.state.is_some_and(TaskState::is_terminal) => {
                        terminal = Some(c);
                    }
                    Ok((_, other)) => {
                        why_none = format!(
                            "no task reached a terminal state (canceling the {} task answered {})",
                            state_name(t.state),
                            other.describe()
                        );
                    }
                    Err(why) => why_none = why.to_string(),
                }
            }
        }
        let cancel = self
            .terminal_rejects_and_cancel(terminal.as_ref(), &why_none)
            .await;
        self.cancel_completed(completed.as_ref(), terminal.as_ref(), cancel)
            .await;
        self.subscribe_terminal(terminal.as_ref(), &why_none).await;
    }

    /// terminal-rejects-message and cancel-terminal-not-cancelable; the
    /// cancel's number and answer.
    async fn terminal_rejects_and_cancel(
        &mut self,
        terminal: Option<&TaskInfo>,
        why_none: &str,
    ) -> Option<(usize, Answer)> {
        let Some(t) = terminal else {
            self.results
                .push(R::na(Id::TerminalRejectsMessage, why_none, &[]));
            self.results.push(R::na(Id::CancelTerminal, why_none, &[]));
            return None;
        };
        let state = state_name(t.state);
        let text = self.text.clone();
        let send = Call::Send {
            text: &text,
            task: Some((&t.id, t.context_id.as_deref())),
            return_immediately: false,
        };
        let v03 = self.v03();
        let result = match self.call(send, None).await {
            Err(why) => R::na(Id::TerminalRejectsMessage, why, &[]),
            Ok((n, a)) => match a.error() {
                _ if self.refuses(&a, A2aError::UnsupportedOperation) => R::pass(
                    Id::TerminalRejectsMessage,
                    format!("a message to the {state} task got {}", a.describe()),
                    &[n],
                ),
                // 0.3 says a terminal task takes no message, not which error.
                Some(_) if v03 => R::pass(
                    Id::TerminalRejectsMessage,
                    format!("a message to the {state} task got {}", a.describe()),
                    &[n],
                ),
                _ => R::fail(
                    Id::TerminalRejectsMessage,
                    format!(
                        "a message to task {} ({state}) got {}; expected UnsupportedOperationError",
                        t.id,
                        a.describe()
                    ),
                    &[n],
                ),
            },
        };
        self.results.push(result);
        let cancel = self.call(Call::Cancel { id: &t.id }, None).await;
        self.results.push(match &cancel {
            Err(why) => R::na(Id::CancelTerminal, why, &[]),
            Ok((n, a)) if self.refuses(a, A2aError::TaskNotCancelable) => R::pass(
                Id::CancelTerminal,
                format!("CancelTask on the {state} task got {}", a.describe()),
                &[*n],
            ),
            Ok((n, a)) => R::fail(
                Id::CancelTerminal,
                format!(
                    "CancelTask on task {} ({state}) got {}; expected TaskNotCancelableError",
                    t.id,
                    a.describe()
                ),
                &[*n],
            ),
        });
        cancel.ok()
    }

    async fn cancel_completed(
        &mut self,
        completed: Option<&TaskInfo>,
        terminal: Option<&TaskInfo>,
        cancel: Option<(usize, Answer)>,
    ) {
        let id = Id::CancelCompleted;
        let Some(c) = completed else {
            self.results.push(R::na(
                id,
                "no task completed (the agent decides how its tasks end; a --message it completes enables this check)",
                &[],
            ));
            return;
        };
        let reused = cancel.filter(|_| terminal.is_some_and(|t| t.id == c.id));
        let (n, answer) = match reused {
            Some(x) => x,
            None => match self.call(Call::Cancel { id: &c.id }, None).await {
                Ok(x) => x,
                Err(why) => {
                    self.results.push(R::na(id, why, &[]));
                    return;
                }
            },
        };
        let (g, got) = match self.call(Call::Get { id: &c.id }, None).await {
            Ok(x) => x,
            Err(why) => {
                self.results.push(R::na(id, why, &[n]));
                return;
            }
        };
        let refused = self.refuses(&answer, A2aError::TaskNotCancelable);
        let still = got
            .task()
            .is_some_and(|t| t.state == Some(TaskState::Completed));
        self.results.push(if refused && still {
            R::pass(
                id,
                format!("{}, and GetTask still says completed", answer.describe()),
                &[n, g],
            )
        } else {
            R::fail(
                id,
                format!(
                    "CancelTask on completed task {} got {}; GetTask then answered {} (expected TaskNotCancelableError and completed)",
                    c.id,
                    answer.describe(),
                    got.describe()
                ),
                &[n, g],
            )
        });
    }

    async fn subscribe_terminal(&mut self, terminal: Option<&TaskInfo>, why_none: &str) {
        let id = Id::SubscribeTerminal;
        if self.v03() {
            self.results.push(R::na(
                id,
                "0.3 states no rule for tasks/resubscribe on a finished task (its SDKs replay the final state)",
                &[],
            ));
            return;
        }
        if !self.caps.streaming {
            self.results.push(R::na(
                id,
                "the card does not declare capabilities.streaming",
                &[],
            ));
            return;
        }
        let Some(t) = terminal else {
            self.results.push(R::na(id, why_none, &[]));
            return;
        };
        let state = state_name(t.state);
        let result = match self.call(Call::Subscribe { id: &t.id }, None).await {
            Err(why) => R::na(id, why, &[]),
            Ok((n, a)) if a.error() == Some(A2aError::UnsupportedOperation) => R::pass(
                id,
                format!("SubscribeToTask on the {state} task got UnsupportedOperationError"),
                &[n],
            ),
            Ok((n, a)) => R::fail(
                id,
                format!(
                    "SubscribeToTask on task {} ({state}) got {}; expected UnsupportedOperationError",
                    t.id,
                    a.describe()
                ),
                &[n],
            ),
        };
        self.results.push(result);
    }

    pub(crate) async fn get_unknown(&mut self) {
        let id = Id::GetUnknown;
        let unknown = unknown_id();
        let result = match self.call(Call::Get { id: &unknown }, None).await {
            Err(why) => R::na(id, why, &[]),
            Ok((n, a)) if self.refuses(&a, A2aError::TaskNotFound) => {
                R::pass(id, format!("got {}", a.describe()), &[n])
            }
            Ok((n, a)) => R::fail(
                id,
                format!(
                    "GetTask of {unknown} got {}; expected TaskNotFoundError",
                    a.describe()
                ),
                &[n],
            ),
        };
        self.results.push(result);
    }
}

/// A task id no agent has made.
pub(crate) fn unknown_id() -> String {
    format!("a2a-tap-probe-unknown-{:016x}", fastrand::u64(..))
}
