//! What an answer the probe received says, read with the engine's own
//! decoder (one vocabulary for 1.0 and 0.3, JSON-RPC and HTTP+JSON): a
//! task, a message, an A2A error, an event stream, or nothing A2A.

use crate::a2a::decode::decode;
use crate::a2a::model::{A2aError, Event, Payload, TaskState};
use crate::sse::{Frame, Framer};

/// A task as an answer showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskInfo {
    pub id: String,
    pub context_id: Option<String>,
    /// `None`: a state no version defines, or unspecified.
    pub state: Option<TaskState>,
}

/// One event of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamEvent {
    Task(TaskInfo),
    Message,
    Status(TaskInfo),
    Artifact,
    Error(A2aError, i64),
    /// A frame that is no A2A shape.
    Malformed,
}

/// What one answer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    Task(TaskInfo),
    Message {
        task_id: Option<String>,
        context_id: Option<String>,
    },
    /// An A2A (or JSON-RPC) error; `status` is the HTTP status it came with.
    Error {
        error: A2aError,
        code: i64,
        status: u16,
    },
    /// A 2xx event stream, its events in order.
    Stream(Vec<StreamEvent>),
    /// A 4xx/5xx answer whose body names no A2A error.
    HttpError {
        status: u16,
    },
    /// A 2xx answer of another A2A shape (e.g. a push config).
    Other {
        status: u16,
    },
    /// Not A2A at all (an HTML 404, a body that is no JSON): why.
    NotA2a(String),
    /// No answer (silence): a connection failure or the probe's time limit.
    Silent(String),
}

impl Answer {
    /// Reads an answer's status, content type and body.
    pub(crate) fn read(status: u16, content_type: Option<&str>, body: &[u8]) -> Answer {
        let ct = content_type.unwrap_or("").to_ascii_lowercase();
        let success = (200..300).contains(&status);
        if success && ct.starts_with("text/event-stream") {
            return Answer::Stream(events(body));
        }
        match decode(body) {
            Ok(d) => match d.payload {
                Payload::Error(e) => Answer::Error {
                    error: e.error,
                    code: e.code,
                    status,
                },
                Payload::Event(_) | Payload::TaskList(_) if !success => {
                    Answer::NotA2a(format!("HTTP {status} with a result body"))
                }
                Payload::Event(Event::Task(t)) => Answer::Task(task(&t)),
                Payload::Event(Event::Message(m)) => Answer::Message {
                    task_id: m.task_id.map(|s| s.into_owned()),
                    context_id: m.context_id.map(|s| s.into_owned()),
                },
                Payload::Event(_) | Payload::TaskList(_) => Answer::Other { status },
            },
            Err(_) if success && !body.is_empty() && is_json(body) => Answer::Other { status },
            Err(_) if (400..600).contains(&status) => Answer::HttpError { status },
            Err(m) => Answer::NotA2a(format!(
                "HTTP {status} {}: {}",
                if ct.is_empty() {
                    "(no content type)"
                } else {
                    &ct
                },
                m.0
            )),
        }
    }

    /// The error it names, if it is one.
    pub(crate) fn error(&self) -> Option<A2aError> {
        match self {
            Answer::Error { error, .. } => Some(*error),
            Answer::Stream(events) => match events.first() {
                Some(StreamEvent::Error(e, _)) => Some(*e),
                _ => None,
            },
            _ => None,
        }
    }

    /// The task it shows (a Task answer, or a stream's first Task).
    pub(crate) fn task(&self) -> Option<&TaskInfo> {
        match self {
            Answer::Task(t) => Some(t),
            Answer::Stream(events) => events.iter().find_map(|e| match e {
                StreamEvent::Task(t) => Some(t),
                _ => None,
            }),
            _ => None,
        }
    }

    /// A short description, for reasons.
    pub(crate) fn describe(&self) -> String {
        match self {
            Answer::Task(t) => format!("a Task in state {}", state_name(t.state)),
            Answer::Message { .. } => "a Message".into(),
            Answer::Error {
                error,
                code,
                status,
            } => {
                format!("{} (code {code}, HTTP {status})", error_name(*error))
            }
            Answer::Stream(events) => match events.first() {
                None => "an event stream with no event".into(),
                Some(StreamEvent::Error(e, c)) => {
                    format!("an event stream carrying {} (code {c})", error_name(*e))
                }
                Some(first) => format!(
                    "an event stream of {} event(s), the first {}",
                    events.len(),
                    event_name(first)
                ),
            },
            Answer::Other { status } => format!("an HTTP {status} answer that is no task"),
            Answer::HttpError { status } => {
                format!("HTTP {status} with no A2A error in its body")
            }
            Answer::NotA2a(why) => format!("no A2A answer ({why})"),
            Answer::Silent(why) => format!("no answer ({why})"),
        }
    }
}

fn task(t: &crate::a2a::model::TaskSnapshot<'_>) -> TaskInfo {
    TaskInfo {
        id: t.id.to_string(),
        context_id: t.context_id.as_ref().map(|c| c.to_string()),
        state: t.status.state.known(),
    }
}

fn is_json(body: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok()
}

/// The events of an SSE body (what was read of it).
pub(crate) fn events(body: &[u8]) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    let mut framer = Framer::new(1 << 20);
    framer.push(body, &mut |frame| match frame {
        Frame::Event(ev) => out.extend(event(ev.data)),
        Frame::Oversized { .. } => out.push(StreamEvent::Malformed),
    });
    out
}

/// One SSE event's data read (`None`: a blank keep-alive).
pub(crate) fn event(data: &[u8]) -> Option<StreamEvent> {
    if data.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(match decode(data) {
        Ok(d) => match d.payload {
            Payload::Error(e) => StreamEvent::Error(e.error, e.code),
            Payload::Event(Event::Task(t)) => StreamEvent::Task(task(&t)),
            Payload::Event(Event::Message(_)) => StreamEvent::Message,
            Payload::Event(Event::StatusUpdate(s)) => StreamEvent::Status(TaskInfo {
                id: s.task_id.to_string(),
                context_id: s.context_id.as_ref().map(|c| c.to_string()),
                state: s.status.state.known(),
            }),
            Payload::Event(Event::ArtifactUpdate(_)) => StreamEvent::Artifact,
            Payload::TaskList(_) => StreamEvent::Malformed,
        },
        Err(_) => StreamEvent::Malformed,
    })
}

/// Whether an event ends a correct stream: a terminal or interrupted
/// state, a Message or an error.
pub(crate) fn settles(e: &StreamEvent) -> bool {
    match e {
        StreamEvent::Task(t) | StreamEvent::Status(t) => t
            .state
            .is_some_and(|s| s.class() != crate::a2a::model::StateClass::Active),
        StreamEvent::Message | StreamEvent::Error(..) => true,
        StreamEvent::Artifact | StreamEvent::Malformed => false,
    }
}

/// An event's name, for reasons.
pub(crate) fn event_name(e: &StreamEvent) -> &'static str {
    match e {
        StreamEvent::Task(_) => "a Task",
        StreamEvent::Message => "a Message",
        StreamEvent::Status(_) => "a status update",
        StreamEvent::Artifact => "an artifact update",
        StreamEvent::Error(..) => "an error",
        StreamEvent::Malformed => "a frame of no A2A shape",
    }
}

/// A state's name, for reasons.
pub(crate) fn state_name(s: Option<TaskState>) -> &'static str {
    s.map_or("(none known)", TaskState::as_str)
}

/// The spec's name of an error.
pub(crate) fn error_name(e: A2aError) -> &'static str {
    match e {
        A2aError::TaskNotFound => "TaskNotFoundError",
        A2aError::TaskNotCancelable => "TaskNotCancelableError",
        A2aError::PushNotificationNotSupported => "PushNotificationNotSupportedError",
        A2aError::UnsupportedOperation => "UnsupportedOperationError",
        A2aError::ContentTypeNotSupported => "ContentTypeNotSupportedError",
        A2aError::InvalidAgentResponse => "InvalidAgentResponseError",
        A2aError::ExtendedAgentCardNotConfigured => "ExtendedAgentCardNotConfiguredError",
        A2aError::ExtensionSupportRequired => "ExtensionSupportRequiredError",
        A2aError::VersionNotSupported => "VersionNotSupportedError",
        A2aError::Other => "an error naming no A2A error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tasks_errors_and_streams() {
        let a = Answer::read(
            200,
            Some("application/json"),
            br#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}}"#,
        );
        assert_eq!(a.task().and_then(|t| t.state), Some(TaskState::Completed));
        let e = Answer::read(
            200,
            Some("application/json"),
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x"}}"#,
        );
        assert_eq!(e.error(), Some(A2aError::TaskNotFound));
        let s = Answer::read(
            200,
            Some("text/event-stream"),
            b"data: {\"statusUpdate\":{\"taskId\":\"t\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n",
        );
        assert!(matches!(&s, Answer::Stream(ev) if matches!(ev[0], StreamEvent::Status(_))));
        assert!(matches!(
            Answer::read(404, Some("text/html"), b"<html>"),
            Answer::HttpError { status: 404 }
        ));
        assert!(matches!(
            Answer::read(200, Some("text/html"), b"<html>"),
            Answer::NotA2a(_)
        ));
    }
}
