//! What an exchange's answer showed, event by event, as the engine read
//! it: the timeline `--format html` draws. Collected through the engine's
//! `Sink::decoded` hook while `check` and `probe` judge; bounded per
//! exchange (`MAX_EVENTS`), every string cut (`MAX_TEXT`).

use crate::a2a::model::{Decoded, Event, Malformed, Payload, StateValue};

/// Events kept of one exchange; past it they are counted, not kept (the
/// findings on them are still listed with the exchange).
pub const MAX_EVENTS: usize = 1000;

/// Bytes kept of one id, state or reason in the timeline.
pub const MAX_TEXT: usize = 256;

/// One exchange as judged: its request, its answer's head and events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lane {
    /// The records' `request_id` of the exchange (`file#entry`, `#n`).
    pub label: String,
    /// Binding, version and operation, e.g. `jsonrpc 1.0 SendStreamingMessage`.
    pub request: String,
    pub status: u16,
    pub content_type: Option<String>,
    pub timeline: Timeline,
}

/// The events of one answer, in the order read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeline {
    pub events: Vec<Seen>,
    /// Events read past `MAX_EVENTS`, not kept.
    pub dropped: usize,
    /// Events not read (over an `[analysis]` limit).
    pub gaps: usize,
}

/// One event read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Its `event_index` (`None`: a whole, non-streamed body).
    pub index: Option<u64>,
    pub what: What,
}

/// What an event said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// A Task snapshot, or a status update: the task's state then.
    State {
        /// `task` or `status_update`.
        event: &'static str,
        task: String,
        state: String,
        terminal: bool,
        /// 0.3 `final`, when sent.
        final_flag: Option<bool>,
    },
    /// An artifact chunk.
    Artifact {
        task: String,
        artifact: String,
        append: bool,
        last_chunk: bool,
    },
    /// A Message (a direct reply).
    Message { task: Option<String> },
    /// A ListTasks result.
    TaskList { tasks: usize },
    /// An error answer: its code.
    Error { code: i64 },
    /// Not a known A2A shape: why.
    Malformed { why: String },
}

impl What {
    /// Whether the event ends its task (a terminal state, or an error).
    pub fn ends(&self) -> bool {
        matches!(
            self,
            What::State { terminal: true, .. } | What::Error { .. }
        )
    }
}

impl Timeline {
    /// Keeps what one frame or body decoded to (within `MAX_EVENTS`).
    pub fn push(&mut self, index: Option<u64>, decoded: Result<&Decoded<'_>, &Malformed>) {
        if self.events.len() >= MAX_EVENTS {
            self.dropped += 1;
            return;
        }
        let what = match decoded {
            Ok(d) => what(&d.payload),
            Err(m) => What::Malformed { why: cut(&m.0) },
        };
        self.events.push(Seen { index, what });
    }
}

fn what(payload: &Payload<'_>) -> What {
    let state = |event, task: &str, s: &StateValue, final_flag| {
        let (state, terminal) = match s {
            StateValue::Known(k) => (k.as_str().to_owned(), k.is_terminal()),
            StateValue::Unspecified(raw) | StateValue::Undefined(raw) => (cut(raw), false),
        };
        What::State {
            event,
            task: cut(task),
            state,
            terminal,
            final_flag,
        }
    };
    match payload {
        Payload::Event(Event::Task(t)) => state("task", &t.id, &t.status.state, None),
        Payload::Event(Event::StatusUpdate(s)) => {
            state("status_update", &s.task_id, &s.status.state, s.final_flag)
        }
        Payload::Event(Event::ArtifactUpdate(a)) => What::Artifact {
            task: cut(&a.task_id),
            artifact: cut(&a.artifact_id),
            append: a.append,
            last_chunk: a.last_chunk,
        },
        Payload::Event(Event::Message(m)) => What::Message {
            task: m.task_id.as_deref().map(cut),
        },
        Payload::TaskList(tasks) => What::TaskList { tasks: tasks.len() },
        Payload::Error(e) => What::Error { code: e.code },
    }
}

/// `text` cut to `MAX_TEXT` bytes on a character boundary.
fn cut(text: &str) -> String {
    if text.len() <= MAX_TEXT {
        return text.to_owned();
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_at_most_max_events_and_counts_the_rest() {
        let mut t = Timeline::default();
        let m = Malformed("x".into());
        for i in 0..(MAX_EVENTS as u64 + 5) {
            t.push(Some(i), Err(&m));
        }
        assert_eq!(t.events.len(), MAX_EVENTS);
        assert_eq!(t.dropped, 5);
    }

    #[test]
    fn cuts_long_text_on_a_char_boundary() {
        let long = "é".repeat(MAX_TEXT);
        let c = cut(&long);
        assert!(c.len() <= MAX_TEXT + "…".len());
        assert!(c.ends_with('…'));
    }
}
