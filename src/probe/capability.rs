//! The checks of what the card declares and of the error answers: a
//! streamed send and how it starts, streaming and push configs answered
//! as the capabilities say, an unsupported `A2A-Version` refused, and
//! every error answer's code and status.

use super::answer::{event_name, Answer, StreamEvent};
use super::checks::{CheckId as Id, CheckResult as R};
use super::dialect::Call;
use super::flow::Run;
use super::terminal::unknown_id;
use crate::a2a::model::{A2aError, Binding, Version};

/// The `A2A-Version` the unsupported-version check sends.
pub(crate) const UNSUPPORTED_VERSION: &str = "99.0";

impl Run<'_> {
    /// stream-starts-with-task; the streamed send's number and answer.
    pub(crate) async fn stream_starts(&mut self) -> Option<(usize, Answer)> {
        let id = Id::StreamStarts;
        if !self.caps.streaming {
            self.results.push(R::na(
                id,
                "the card does not declare capabilities.streaming",
                &[],
            ));
            return None;
        }
        let text = self.text.clone();
        let (n, answer) = match self.call(Call::Stream { text: &text }, None).await {
            Ok(x) => x,
            Err(why) => {
                self.results.push(R::na(id, why, &[]));
                return None;
            }
        };
        let engine: Vec<String> = self
            .client
            .sent
            .get(n.wrapping_sub(1))
            .into_iter()
            .flat_map(|s| &s.records)
            .filter(|r| r.severity == "error")
            .map(|r| format!("{} ({})", r.kind, r.detail))
            .collect();
        let cut = self
            .client
            .sent
            .get(n.wrapping_sub(1))
            .is_some_and(|s| s.cut.is_some());
        let result = match &answer {
            // 1.0 §3.1.2: the stream MUST close at a terminal state, and a
            // Message stream right after its Message (an interrupted state
            // may keep it open: server policy).
            Answer::Stream(events) if cut && !self.v03() && closes_here(events) => R::fail(
                id,
                "the stream stayed open after its terminal state (or its Message); it MUST close there",
                &[n],
            ),
            Answer::Stream(events) => match events.first() {
                None => R::fail(id, "the stream ended with no event", &[n]),
                Some(StreamEvent::Message) if events.len() > 1 => R::fail(
                    id,
                    format!(
                        "the stream carried a Message and {} more event(s); a Message stream carries exactly one",
                        events.len() - 1
                    ),
                    &[n],
                ),
                Some(StreamEvent::Task(_) | StreamEvent::Message) if engine.is_empty() => R::pass(
                    id,
                    format!("{} event(s), the first {}", events.len(), event_name(&events[0])),
                    &[n],
                ),
                Some(StreamEvent::Task(_) | StreamEvent::Message) => R::fail(
                    id,
                    format!("the stream began right, but the engine found: {}", engine.join("; ")),
                    &[n],
                ),
                Some(first) => R::fail(
                    id,
                    format!("the stream began with {}; it MUST begin with the Task (or one Message)", event_name(first)),
                    &[n],
                ),
            },
            other => R::fail(
                id,
                format!("expected an event stream; got {}", other.describe()),
                &[n],
            ),
        };
        self.results.push(result);
        Some((n, answer))
    }

    pub(crate) async fn streaming_capability(&mut self, streamed: Option<(usize, Answer)>) {
        let id = Id::StreamingCapability;
        if self.caps.streaming {
            self.results.push(match streamed {
                None => R::na(id, "the streamed send was not made (request budget)", &[]),
                Some((n, Answer::Stream(_))) => R::pass(
                    id,
                    "declared, and a streamed send was answered with an event stream",
                    &[n],
                ),
                Some((n, a)) => R::fail(
                    id,
                    format!(
                        "capabilities.streaming is true, but a streamed send got {}",
                        a.describe()
                    ),
                    &[n],
                ),
            });
            return;
        }
        let text = self.text.clone();
        let result = match self.call(Call::Stream { text: &text }, None).await {
            Err(why) => R::na(id, why, &[]),
            Ok((n, a)) if self.refuses(&a, A2aError::UnsupportedOperation) => R::pass(
                id,
                format!("not declared, and a streamed send got {}", a.describe()),
                &[n],
            ),
            Ok((n, a)) => R::fail(
                id,
                format!(
                    "capabilities.streaming is not declared, but a streamed send got {}; expected UnsupportedOperationError",
                    a.describe()
                ),
                &[n],
            ),
        };
        self.results.push(result);
    }

    pub(crate) async fn push_capability(&mut self) {
        let id = Id::PushCapability;
        if self.caps.push {
            self.results.push(R::na(
                id,
                "the card declares pushNotifications: accepting a config is right, and the probe runs no webhook to see deliveries",
                &[],
            ));
            return;
        }
        let made = self.known_task.clone();
        let task = made.clone().unwrap_or_else(unknown_id);
        let result = match self.call(Call::PushConfig { id: &task }, None).await {
            Err(why) => R::na(id, why, &[]),
            Ok((n, a)) if made.is_none() && a.error() == Some(A2aError::TaskNotFound) => R::na(
                id,
                "the agent made no task, and a push config for an unknown one got TaskNotFoundError",
                &[n],
            ),
            Ok((n, a)) if self.refuses(&a, A2aError::PushNotificationNotSupported) => R::pass(
                id,
                format!("not declared, and a push config got {}", a.describe()),
                &[n],
            ),
            Ok((n, a)) => R::fail(
                id,
                format!(
                    "capabilities.pushNotifications is not declared, but a push config got {}; expected PushNotificationNotSupportedError",
                    a.describe()
                ),
                &[n],
            ),
        };
        self.results.push(result);
    }

    pub(crate) async fn unsupported_version(&mut self) {
        let id = Id::UnsupportedVersion;
        if self.v03() {
            self.results.push(R::na(
                id,
                "A2A-Version is a 1.0 service parameter; a 0.3 agent has none to refuse",
                &[],
            ));
            return;
        }
        let task = self.known_task.clone().unwrap_or_else(unknown_id);
        let call = Call::Get { id: &task };
        let result = match self.call(call, Some(UNSUPPORTED_VERSION)).await {
            Err(why) => R::na(id, why, &[]),
            Ok((n, a)) if a.error() == Some(A2aError::VersionNotSupported) => R::pass(
                id,
                format!("A2A-Version {UNSUPPORTED_VERSION} got VersionNotSupportedError"),
                &[n],
            ),
            Ok((n, a)) => R::fail(
                id,
                format!(
                    "a GetTask with A2A-Version {UNSUPPORTED_VERSION} got {}; expected VersionNotSupportedError",
                    a.describe()
                ),
                &[n],
            ),
        };
        self.results.push(result);
    }

    /// error-codes-per-spec, over every error answer on the interface.
    pub(crate) fn error_codes(&mut self) {
        let id = Id::ErrorCodes;
        let mut seen = Vec::new();
        let mut problems = Vec::new();
        let mut at = Vec::new();
        for &n in &self.exchanges {
            let Some(sent) = self.client.sent.get(n.wrapping_sub(1)) else {
                continue;
            };
            let (error, code, status) = match &sent.read {
                Answer::Error {
                    error,
                    code,
                    status,
                } => (*error, *code, *status),
                Answer::Stream(events) => match events.first() {
                    Some(StreamEvent::Error(e, c)) => (*e, *c, sent.status.unwrap_or(0)),
                    _ => continue,
                },
                _ => continue,
            };
            at.push(n);
            seen.push(format!("#{n} code {code} HTTP {status}"));
            match self.iface.binding {
                Binding::JsonRpc if !known_code(code, self.iface.version) => problems.push(
                    format!("#{n}: JSON-RPC code {code} is not in the specification's table"),
                ),
                Binding::Rest if !(400..600).contains(&status) => {
                    problems.push(format!("#{n}: an error body at HTTP {status}"))
                }
                _ => {}
            }
            if error == A2aError::Other && self.iface.binding == Binding::Rest {
                // Only what names an A2A error is judged by its status.
                continue;
            }
            for r in sent
                .records
                .iter()
                .filter(|r| r.kind == "error_code_mismatch")
            {
                problems.push(format!("#{n}: {}", r.detail));
            }
        }
        self.results.push(if seen.is_empty() {
            R::na(id, "no error answer was received on this interface", &[])
        } else if problems.is_empty() {
            R::pass(
                id,
                format!("{} error answer(s): {}", seen.len(), seen.join(", ")),
                &at,
            )
        } else {
            R::fail(id, problems.join("; "), &at)
        });
    }
}

/// Whether a stream's last state is terminal, or it carried a Message.
fn closes_here(events: &[StreamEvent]) -> bool {
    let last_state = events.iter().rev().find_map(|e| match e {
        StreamEvent::Task(t) | StreamEvent::Status(t) => t.state,
        _ => None,
    });
    last_state.is_some_and(crate::a2a::model::TaskState::is_terminal)
        || events.iter().any(|e| matches!(e, StreamEvent::Message))
}

/// Whether `code` is a JSON-RPC code the version's specification lists:
/// the JSON-RPC 2.0 ones and the A2A ones (1.0: -32001..-32009; 0.3:
/// -32001..-32007).
fn known_code(code: i64, version: Version) -> bool {
    let last = match version {
        Version::V1_0 => -32009,
        Version::V0_3 => -32007,
    };
    matches!(code, -32700 | -32600 | -32601 | -32602 | -32603) || (last..=-32001).contains(&code)
}
