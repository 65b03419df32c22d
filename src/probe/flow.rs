//! The checks on one interface, in the order they need each other: a
//! blocking send makes the task the follow-up and the terminal checks
//! use, a returnImmediately send the running task the cancel needs. The
//! agent decides how fast its tasks end; a check whose precondition did
//! not happen says so (not applicable), never silently.

use std::time::Duration;

use super::answer::{state_name, Answer, TaskInfo};
use super::checks::{CheckId as Id, CheckResult as R};
use super::client::{Client, Refused};
use super::dialect::{Call, Iface};
use crate::a2a::model::{A2aError, StateClass, TaskState, Version};

/// How soon a returnImmediately send must be answered.
pub(crate) const RETURN_IMMEDIATELY_LIMIT: Duration = Duration::from_secs(3);

/// What the card declares, as the checks read it (absent is off).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caps {
    pub streaming: bool,
    pub push: bool,
}

/// One interface's run.
pub(crate) struct Run<'c> {
    pub client: &'c mut Client,
    pub iface: Iface,
    pub caps: Caps,
    pub text: String,
    pub results: Vec<R>,
    /// Numbers of the exchanges made on this interface.
    pub exchanges: Vec<usize>,
    /// A task the agent made, for the checks that need any real task id.
    pub known_task: Option<String>,
    next_id: u64,
}

/// Runs every check on `iface`; results in `CheckId::PER_INTERFACE` order,
/// with the numbers of the exchanges made.
pub(crate) async fn probe(
    client: &mut Client,
    iface: Iface,
    caps: Caps,
    text: &str,
) -> (Vec<R>, Vec<usize>) {
    let mut run = Run {
        client,
        iface,
        caps,
        text: text.to_owned(),
        results: Vec::new(),
        exchanges: Vec::new(),
        known_task: None,
        next_id: 0,
    };
    let first = run.blocking_send().await;
    run.known_task = first.as_ref().map(|t| t.id.clone());
    let first = run.follow_up(first).await;
    let running = run.return_immediately().await;
    let running = run.cancel_active(running).await;
    run.terminal_checks(first, running).await;
    run.get_unknown().await;
    let streamed = run.stream_starts().await;
    run.streaming_capability(streamed).await;
    run.push_capability().await;
    run.unsupported_version().await;
    run.error_codes();
    run.results.sort_by_key(|r| r.id);
    (run.results, run.exchanges)
}

impl Run<'_> {
    /// Sends `call`; the exchange's number and what it answered, or why
    /// it was not sent (the budget).
    pub(crate) async fn call(
        &mut self,
        call: Call<'_>,
        version: Option<&str>,
    ) -> Result<(usize, Answer), Refused> {
        self.next_id += 1;
        let msg_id = format!(
            "a2a-tap-probe-{}-{}",
            std::process::id(),
            self.client.sent.len() + 1
        );
        let b = self.iface.request(&call, self.next_id, &msg_id, version);
        let i = self.client.send(b.method, b.uri, b.headers, b.body).await?;
        let sent = &self.client.sent[i];
        self.exchanges.push(sent.n);
        Ok((sent.n, sent.read.clone()))
    }

    pub(crate) fn v03(&self) -> bool {
        self.iface.version == Version::V0_3
    }

    /// Whether `a` refuses with `expected`: the error named; or, on 0.3
    /// HTTP+JSON, whose specification names no error body (errors are
    /// HTTP statuses there), any 4xx/5xx answer.
    pub(crate) fn refuses(&self, a: &Answer, expected: A2aError) -> bool {
        let rest03 = self.v03() && self.iface.binding == crate::a2a::model::Binding::Rest;
        a.error() == Some(expected) || (rest03 && matches!(a, Answer::HttpError { .. }))
    }

    fn elapsed_of(&self, n: usize) -> Duration {
        self.client
            .sent
            .get(n.wrapping_sub(1))
            .map_or(Duration::ZERO, |s| s.elapsed)
    }

    async fn blocking_send(&mut self) -> Option<TaskInfo> {
        let id = Id::BlockingSend;
        let text = self.text.clone();
        let call = Call::Send {
            text: &text,
            task: None,
            return_immediately: false,
        };
        let (n, answer) = match self.call(call, None).await {
            Ok(x) => x,
            Err(why) => {
                self.results.push(R::na(id, why, &[]));
                return None;
            }
        };
        let result = match &answer {
            Answer::Task(t) => match t.state.map(TaskState::class) {
                Some(StateClass::Active) => R::fail(
                    id,
                    format!(
                        "returned a Task in state {}: without returnImmediately the send MUST wait until the task is terminal or interrupted",
                        state_name(t.state)
                    ),
                    &[n],
                ),
                Some(_) => R::pass(id, format!("answered {}", answer.describe()), &[n]),
                None => R::fail(id, "answered a Task in no known state", &[n]),
            },
            Answer::Message { .. } => R::pass(id, "answered a Message (no task to wait for)", &[n]),
            Answer::Silent(why) if why.starts_with("no answer within") => R::na(
                id,
                format!("{why}: the task may still be running, and the probe waits no longer"),
                &[n],
            ),
            other => R::fail(id, format!("expected a Task or a Message; got {}", other.describe()), &[n]),
        };
        self.results.push(result);
        answer.task().cloned()
    }

    async fn follow_up(&mut self, first: Option<TaskInfo>) -> Option<TaskInfo> {
        let id = Id::FollowUp;
        let Some(task) = first else {
            self.results
                .push(R::na(id, "the first send made no task to follow up", &[]));
            return None;
        };
        if task.state != Some(TaskState::InputRequired) {
            self.results.push(R::na(
                id,
                format!(
                    "the task did not ask for input: the first send left it {} (the agent decides; a --message that makes it ask enables this check)",
                    state_name(task.state)
                ),
                &[],
            ));
            return Some(task);
        }
        let text = self.text.clone();
        let call = Call::Send {
            text: &text,
            task: Some((&task.id, task.context_id.as_deref())),
            return_immediately: false,
        };
        let (n, answer) = match self.call(call, None).await {
            Ok(x) => x,
            Err(why) => {
                self.results.push(R::na(id, why, &[]));
                return Some(task);
            }
        };
        let (got_task, got_ctx) = match &answer {
            Answer::Task(t) => (Some(t.id.clone()), t.context_id.clone()),
            Answer::Message {
                task_id,
                context_id,
            } => (task_id.clone(), context_id.clone()),
            other => {
                self.results.push(R::fail(
                    id,
                    format!(
                        "the follow-up was not answered with the task: got {}",
                        other.describe()
                    ),
                    &[n],
                ));
                return Some(task);
            }
        };
        let same_task = got_task.as_deref().is_none_or(|t| t == task.id);
        let same_ctx = match (&got_ctx, &task.context_id) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        self.results.push(if same_task && same_ctx {
            R::pass(
                id,
                format!("answered about task {} in the same context", task.id),
                &[n],
            )
        } else {
            R::fail(
                id,
                format!(
                    "the follow-up named task {} in context {}; the answer is about task {} in context {}",
                    task.id,
                    task.context_id.as_deref().unwrap_or("-"),
                    got_task.as_deref().unwrap_or("-"),
                    got_ctx.as_deref().unwrap_or("-")
                ),
                &[n],
            )
        });
        match answer {
            Answer::Task(t) if same_task => Some(t),
            _ => Some(task),
        }
    }

    async fn return_immediately(&mut self) -> Option<TaskInfo> {
        let id = Id::ReturnImmediately;
        let text = self.text.clone();
        let call = Call::Send {
            text: &text,
            task: None,
            return_immediately: true,
        };
        let (n, answer) = match self.call(call, None).await {
            Ok(x) => x,
            Err(why) => {
                self.results.push(R::na(id, why, &[]));
                return None;
            }
        };
        let took = self.elapsed_of(n);
        let result = match &answer {
            Answer::Task(_) | Answer::Message { .. } if took <= RETURN_IMMEDIATELY_LIMIT => R::pass(
                id,
                format!("answered in {} ms with {}", took.as_millis(), answer.describe()),
                &[n],
            ),
            Answer::Task(_) | Answer::Message { .. } => R::fail(
                id,
                format!(
                    "answered only after {} ms (limit {} ms), with {}: returnImmediately asks for an answer once the task exists",
                    took.as_millis(),
                    RETURN_IMMEDIATELY_LIMIT.as_millis(),
                    answer.describe()
                ),
                &[n],
            ),
            other => R::fail(id, format!("expected a Task or a Message; got {}", other.describe()), &[n]),
        };
        self.results.push(result);
        answer.task().cloned()
    }

    async fn cancel_active(&mut self, running: Option<TaskInfo>) -> Option<TaskInfo> {
        let id = Id::CancelActive;
        let Some(task) = running else {
            self.results.push(R::na(
                id,
                "the returnImmediately send made no task to cancel",
                &[],
            ));
            return None;
        };
        if task.state.map(TaskState::class) != Some(StateClass::Active) {
            self.results.push(R::na(
                id,
                format!(
                    "the task ended before the cancel: returnImmediately already answered it {}",
                    state_name(task.state)
                ),
                &[],
            ));
            return Some(task);
        }
        let (n, answer) = match self.call(Call::Cancel { id: &task.id }, None).await {
            Ok(x) => x,
            Err(why) => {
                self.results.push(R::na(id, why, &[]));
                return Some(task);
            }
        };
        let result = match &answer {
            Answer::Task(t) if t.state == Some(TaskState::Canceled) => {
                R::pass(id, "answered the Task canceled", &[n])
            }
            Answer::Task(t) if t.state.map(TaskState::class) == Some(StateClass::Active) => {
                R::pass(
                    id,
                    format!(
                        "accepted the cancel; the task is still {}",
                        state_name(t.state)
                    ),
                    &[n],
                )
            }
            Answer::Task(t) => R::na(
                id,
                format!("the task ended before the cancel ({})", state_name(t.state)),
                &[n],
            ),
            a if self.refuses(a, A2aError::TaskNotCancelable) => {
                let got = self.call(Call::Get { id: &task.id }, None).await;
                match got {
                    Ok((g, Answer::Task(t)))
                        if t.state.is_some_and(TaskState::is_terminal) =>
                    {
                        self.results.push(R::na(
                            id,
                            format!(
                                "the task ended before the cancel: TaskNotCancelableError, then GetTask shows it {}",
                                state_name(t.state)
                            ),
                            &[n, g],
                        ));
                        return Some(t);
                    }
                    Ok((g, other)) => R::fail(
                        id,
                        format!("refused to cancel a running task (TaskNotCancelableError); GetTask then answered {}", other.describe()),
                        &[n, g],
                    ),
                    Err(why) => R::na(id, why, &[n]),
                }
            }
            other => R::fail(
                id,
                format!("expected the canceled Task; got {}", other.describe()),
                &[n],
            ),
        };
        self.results.push(result);
        match answer {
            Answer::Task(t) => Some(t),
            _ => Some(task),
        }
    }
}
