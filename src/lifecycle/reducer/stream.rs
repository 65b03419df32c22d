//! The stream rules of the reducer: how a task stream must start, stay on one
//! task and context, treat artifacts, stop at a terminal state, and end.
//!
//! Readings of the catalogue this file commits to:
//! - After the terminal status, a status or snapshot with another known state
//!   is `terminal_exit`; one repeating the same terminal state is not a state
//!   change, so it is `event_after_terminal`, except on subscribe streams,
//!   where it is a replay of the current state. An unreadable state after the
//!   terminal one gives only `unspecified_state` / `unknown_state`.
//! - `message_not_alone` is reported once per stream, at the first event that
//!   keeps a Message company (before or after it).
//! - `task_id_mismatch` is judged against the task a subscribe names, else
//!   the first task the stream names; the foreign event is not applied.
//! - `context_id_mismatch` is judged on the stream, and against the registry
//!   once per stream (when the stream first learns the context).
//! - An error frame is an event for `event_after_terminal` and
//!   `message_not_alone`, but not for `stream_start` (an error first is no
//!   task stream at all).
//! - `stream_start`, artifact findings and `stream_truncated` need the whole
//!   history: a skipped or out-of-order frame index withholds them.

use super::common::{check_registry_context, make};
use super::Reducer;
use super::{End, Outcome};
use crate::a2a::model::{Decoded, Event, Operation, Payload, StateClass, TaskState, Version};
use crate::findings::{Drift, Finding, Kind, Severity};
use crate::lifecycle::artifacts::Update;
use crate::lifecycle::registry::Registry;
use crate::lifecycle::short::ShortStr;
use crate::lifecycle::Millis;

// === impl Reducer (streams) ===

impl Reducer {
    /// One SSE frame at index `i`.
    pub(super) fn on_frame(
        &mut self,
        i: u64,
        d: &Decoded,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) {
        let first = self.frames == 0 && i == 0;
        self.note_frame(i);
        match &d.payload {
            Payload::Event(ev) => self.on_event(i, first, ev, reg, now, out),
            Payload::TaskList(_) => {
                let detail =
                    "expected a StreamResponse on the event stream; got a ListTasks result"
                        .to_owned();
                out.push(self.finding(Kind::MalformedEvent, Some(i), detail));
            }
            Payload::Error(e) => {
                self.saw_error = true;
                self.check_error_status(e, Some(i), out);
                self.check_error_details(e, Some(i), out);
                if let Some(term) = self.terminal {
                    if self.after_terminal_judged() {
                        let detail = self.after_terminal_detail(term, "an error");
                        out.push(self.finding(Kind::EventAfterTerminal, Some(i), detail));
                    }
                } else {
                    self.check_message_alone(i, "error", out);
                }
            }
        }
    }

    /// Records that frame `i` arrived; a skipped or reordered index makes
    /// the history uncertain.
    pub(super) fn note_frame(&mut self, i: u64) {
        if i != self.frames {
            self.gap();
        }
        self.frames = self.frames.max(i.saturating_add(1));
    }

    fn on_event(
        &mut self,
        i: u64,
        first: bool,
        ev: &Event,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) {
        let ix = Some(i);
        if let Some(t) = ev.task_id() {
            match &self.task_id {
                Some(s) if !s.is(t) => {
                    let detail = format!(
                        "expected every event on this stream to name task {}; a {} named task {t}",
                        s.as_str(),
                        ev.label()
                    );
                    out.push(self.finding(Kind::TaskIdMismatch, ix, detail));
                    return;
                }
                Some(_) => {}
                None => self.task_id = Some(ShortStr::bounded(t, self.max_id)),
            }
        }
        self.check_accepted(ev, ix, reg, out);
        if let Some(term) = self.terminal {
            self.after_terminal(i, term, ev, reg, now, out);
            return;
        }
        let op = self.exchange.operation;
        // 1.0 only: §3.1.2 "the stream MUST begin with the Task object"
        // (§3.1.6 for subscribe); 0.3 states nothing of a stream's first
        // event, and its SDKs begin follow-ups with a status update.
        if first && op.streams() && self.exchange.version == Version::V1_0 {
            let fits = match ev {
                Event::Task(_) => true,
                Event::Message(_) => op == Operation::SendStreamingMessage,
                _ => false,
            };
            if !fits {
                let wanted = if op == Operation::SendStreamingMessage {
                    "a Task snapshot (or exactly one Message)"
                } else {
                    "a Task snapshot"
                };
                let mut detail = format!(
                    "expected the {op} stream to begin with {wanted}; it began with {}",
                    match ev {
                        Event::ArtifactUpdate(_) => "an artifact update",
                        Event::StatusUpdate(_) => "a status update",
                        Event::Task(_) => "a Task",
                        Event::Message(_) => "a Message",
                    }
                );
                // A follow-up (the request named this task, and the stream
                // went on with its status) is what the Python SDK does.
                let drift = match (&self.exchange.task_id, ev) {
                    (Some(t), Event::StatusUpdate(_)) if op == Operation::SendStreamingMessage => {
                        detail.push_str(&format!(
                            ": a follow-up on existing task {t}, {}",
                            Drift::PythonFollowUpStream.describe()
                        ));
                        Some(Drift::PythonFollowUpStream)
                    }
                    _ => None,
                };
                let mut f = self.finding(Kind::StreamStart, ix, detail);
                f.drift = drift;
                out.push(f);
            }
        }
        let is_message = matches!(ev, Event::Message(_));
        if self.saw_message || (is_message && self.events > 0) {
            self.saw_message = true;
            self.check_message_alone(i, ev.label(), out);
        }
        self.saw_message |= is_message;
        self.events += 1;
        if let Some(c) = ev.context_id() {
            self.stream_context(c, i, reg, out);
        }
        match ev {
            Event::Task(t) => {
                for a in &t.artifact_ids {
                    self.artifacts.know(a);
                }
                self.status(&t.id, t.context_id.as_deref(), &t.status, i, reg, now, out);
            }
            Event::StatusUpdate(u) => {
                let is_final = u.final_flag == Some(true);
                self.final_seen |= is_final;
                self.terminal_final = is_final;
                self.status(
                    &u.task_id,
                    u.context_id.as_deref(),
                    &u.status,
                    i,
                    reg,
                    now,
                    out,
                );
            }
            Event::ArtifactUpdate(a) => {
                reg.heard(&a.task_id, now);
                let update = self
                    .artifacts
                    .update(&a.artifact_id, a.append, a.last_chunk);
                let (kind, detail) = match update {
                    Update::AppendToUnknown if !self.is_subscribe() && !self.gapped => (
                        Kind::AppendToUnknownArtifact,
                        format!(
                            "expected append:true only for an artifact opened on this stream; artifact {} was never opened",
                            a.artifact_id
                        ),
                    ),
                    // After the final chunk the artifact is whole (spec
                    // §4.2.2 lastChunk: "the final chunk of the artifact").
                    Update::Sealed if !self.gapped => (
                        Kind::SealedArtifactUpdated,
                        format!(
                            "expected no update to artifact {} after its lastChunk:true on this stream; {} came",
                            a.artifact_id,
                            if a.append {
                                "an append (append:true)"
                            } else {
                                "a replace (append absent or false)"
                            }
                        ),
                    ),
                    _ => return,
                };
                let mut f = self.finding(kind, ix, detail);
                f.artifact_id = Some(a.artifact_id.to_string());
                out.push(f);
            }
            Event::Message(_) => {}
        }
    }

    /// `message_not_alone`, once per stream. 1.0 only: §3.1.2 says a
    /// Message stream "MUST contain exactly one `Message` object and then
    /// close immediately"; 0.3 states no such rule.
    fn check_message_alone(&mut self, i: u64, what: &str, out: &mut Vec<Finding>) {
        if self.saw_message
            && self.exchange.version == Version::V1_0
            && !std::mem::replace(&mut self.message_reported, true)
        {
            let detail = format!("expected a stream that carried a Message to carry nothing else; it also carried another event ({what})");
            out.push(self.finding(Kind::MessageNotAlone, Some(i), detail));
        }
    }

    /// `context_id_mismatch` on the stream, or (when the stream first learns
    /// the context) against the registry.
    fn stream_context(&mut self, c: &str, i: u64, reg: &Registry, out: &mut Vec<Finding>) {
        match &self.context_id {
            Some(known) if !known.is(c) => {
                let task = self.task_id().unwrap_or("?");
                let known = known.as_str();
                let detail = format!("expected task {task} to keep contextId {known} on this stream; an event said {c}");
                out.push(make(
                    Kind::ContextIdMismatch,
                    self.task_id(),
                    Some(c),
                    Some(i),
                    detail,
                ));
                self.context_id = Some(ShortStr::bounded(c, self.max_id));
            }
            Some(_) => {}
            None => {
                if let Some(t) = self.task_id() {
                    let before = out.len();
                    check_registry_context(reg, t, c, Some(i), out);
                    if out.len() == before {
                        self.check_request_context(t, c, Some(i), out);
                    }
                }
                self.context_id = Some(ShortStr::bounded(c, self.max_id));
            }
        }
    }

    /// A status (snapshot or update) on the stream before any terminal state.
    #[allow(clippy::too_many_arguments)]
    fn status(
        &mut self,
        task: &str,
        ctx: Option<&str>,
        status: &crate::a2a::model::Status,
        i: u64,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) {
        let state = self.task_status(task, ctx, status, Some(i), false, reg, now, out);
        let Some(s) = state else {
            return;
        };
        if !self.watching {
            // While the stream is open, its silence is evidence of a stall.
            reg.watch(task);
            self.watching = true;
        }
        self.state = Some(s);
        if !s.is_terminal() {
            return;
        }
        self.terminal = Some(s);
        // On subscribe streams the terminal frame may be a replay without the
        // artifact frames before it: reconcile, don't accuse.
        let judge = !self.is_subscribe() && !self.gapped && !self.artifacts.overflowed();
        let severity = if s == TaskState::Completed {
            Severity::Error
        } else {
            Severity::Warning
        };
        for id in self.artifacts.close() {
            if judge {
                let detail = format!(
                    "expected artifact {id} to end with lastChunk:true before task {task} turned {s}; it was still open"
                );
                let mut f = make(
                    Kind::AbandonedArtifact,
                    Some(task),
                    self.context_id.as_ref().map(ShortStr::as_str),
                    Some(i),
                    detail,
                );
                f.severity = severity;
                f.artifact_id = Some(id.to_owned());
                out.push(f);
            }
        }
    }

    /// The stream's outcome, and `stream_truncated` when the upstream ended
    /// it while the task was active.
    pub(super) fn end_stream(&mut self, end: End, out: &mut Vec<Finding>) -> Outcome {
        if self.terminal.is_some() || self.saw_message {
            return Outcome::Terminal;
        }
        if end == End::ClientGone {
            return Outcome::ClientGone;
        }
        let Some(s) = self.state else {
            if self.saw_error && end == End::Upstream {
                return Outcome::Terminal;
            }
            if self.frames == 0 && end == End::Upstream {
                let op = self.exchange.operation;
                let detail = format!(
                    "expected the {op} stream to carry a Task snapshot{}; the upstream ended it with no event",
                    if op == Operation::SendStreamingMessage { " (or one Message)" } else { "" }
                );
                out.push(self.finding(Kind::StreamStart, None, detail));
            }
            return Outcome::Truncated;
        };
        if s.class() == StateClass::Interrupted || self.final_seen {
            return Outcome::Interrupted;
        }
        if !self.gapped {
            let how = if end == End::Upstream {
                "ended the stream"
            } else {
                "connection failed"
            };
            let task = self.task_id().unwrap_or("?");
            let detail = format!(
                "expected the stream to run until a terminal or interrupted state (or a final:true); the upstream {how} while task {task} was {s}"
            );
            out.push(self.finding(Kind::StreamTruncated, None, detail));
        }
        Outcome::Truncated
    }
}
