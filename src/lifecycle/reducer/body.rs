//! The reducer on a plain (non-SSE) body: the answer's shape for its
//! operation, and `blocking_returned_active`.

use super::Reducer;
use crate::a2a::model::{
    A2aError, Binding, Decoded, DetailFault, ErrorInfo, Event, Operation, Payload, TaskSnapshot,
    TaskState, Version,
};
use crate::findings::{Finding, Kind};
use crate::lifecycle::registry::Registry;
use crate::lifecycle::short::ShortStr;
use crate::lifecycle::Millis;

/// The payload shape a plain (non-SSE) success answer must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    TaskOrMessage,
    Task,
    TaskList,
}

impl Expect {
    /// `None` for operations whose bodies the engine does not model (push
    /// configs, extended card): those are only checked for their JSON-RPC id.
    pub(super) fn of(op: Operation) -> Option<Expect> {
        match op {
            Operation::SendMessage | Operation::SendStreamingMessage => Some(Expect::TaskOrMessage),
            Operation::GetTask | Operation::CancelTask | Operation::SubscribeToTask => {
                Some(Expect::Task)
            }
            Operation::ListTasks => Some(Expect::TaskList),
            _ => None,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Expect::TaskOrMessage => "a Task or a Message",
            Expect::Task => "a Task",
            Expect::TaskList => "a ListTasks result",
        }
    }
}

// === impl Reducer (plain bodies) ===

impl Reducer {
    /// A whole non-streaming body.
    pub(super) fn on_body(
        &mut self,
        d: &Decoded,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) {
        let op = self.exchange.operation;
        self.saw_error |= matches!(d.payload, Payload::Error(_));
        let Some(expect) = Expect::of(op) else {
            return;
        };
        let ev = match &d.payload {
            // Refusals (TaskNotCancelable, UnsupportedOperation, ...) are
            // answers, not violations; their HTTP status must fit them.
            Payload::Error(e) => {
                self.check_error_status(e, out);
                self.check_error_details(e, None, out);
                return;
            }
            Payload::TaskList(list) if expect == Expect::TaskList => {
                for t in list {
                    self.snapshot_status(t, reg, now, out);
                }
                return;
            }
            Payload::TaskList(list) => {
                let got = if list.is_empty() {
                    "an empty ListTasks result (or an empty object)"
                } else {
                    "a ListTasks result"
                };
                let detail = format!("expected {} for {op}; got {got}", expect.describe());
                out.push(self.finding(Kind::MalformedEvent, None, detail));
                return;
            }
            Payload::Event(ev) => ev,
        };
        let fits = matches!(
            (expect, ev),
            (Expect::TaskOrMessage, Event::Task(_) | Event::Message(_))
                | (Expect::Task, Event::Task(_))
        );
        if !fits {
            let detail = format!(
                "expected {} for {op}; got a {}",
                expect.describe(),
                ev.label()
            );
            out.push(self.finding(Kind::MalformedEvent, None, detail));
            return;
        }
        if let (Some(asked), Some(named)) = (&self.task_id, ev.task_id()) {
            if !asked.is(named) {
                let detail = format!(
                    "expected the answer to {op} for task {} to be about that task; a {} named task {named}",
                    asked.as_str(),
                    ev.label()
                );
                out.push(self.finding(Kind::TaskIdMismatch, None, detail));
                return;
            }
        }
        self.check_accepted(ev.task_id(), None, reg, out);
        let Event::Task(t) = ev else {
            return;
        };
        self.task_id = Some(ShortStr::new(&t.id));
        self.context_id = t.context_id.as_deref().map(ShortStr::new);
        let Some(s) = self.snapshot_status(t, reg, now, out) else {
            return;
        };
        self.state = Some(s);
        if op == Operation::SendMessage
            && self.exchange.blocking
            && matches!(s, TaskState::Submitted | TaskState::Working)
        {
            let detail = format!(
                "expected a blocking SendMessage to return a terminal or interrupted task; task {} came back {s}",
                t.id
            );
            out.push(self.finding(Kind::BlockingReturnedActive, None, detail));
        }
    }

    /// `error_code_mismatch`: an HTTP+JSON 1.0 A2A error whose HTTP status
    /// is not the one the specification maps it to (§5.4; the 1.0.1 table
    /// moved three, and either is accepted). The error is known by its
    /// ErrorInfo `reason`, problem `type` or code; JSON-RPC answers are not
    /// judged (there the code is what names the error).
    fn check_error_status(&self, e: &ErrorInfo, out: &mut Vec<Finding>) {
        let ex = &self.exchange;
        if ex.binding != Binding::Rest || ex.version != Version::V1_0 {
            return;
        }
        let allowed: &[u16] = match e.error {
            A2aError::TaskNotFound => &[404],
            A2aError::TaskNotCancelable => &[409, 400],
            A2aError::ContentTypeNotSupported => &[415, 400],
            A2aError::InvalidAgentResponse => &[502, 500],
            A2aError::PushNotificationNotSupported
            | A2aError::UnsupportedOperation
            | A2aError::ExtendedAgentCardNotConfigured
            | A2aError::ExtensionSupportRequired
            | A2aError::VersionNotSupported => &[400],
            A2aError::Other => return,
        };
        if allowed.contains(&self.http_status) {
            return;
        }
        let want: Vec<String> = allowed.iter().map(u16::to_string).collect();
        let detail = format!(
            "expected {:?} over HTTP+JSON with HTTP status {} (the 1.0.0 or 1.0.1 mapping); it came with {}",
            e.error,
            want.join(" or "),
            self.http_status
        );
        out.push(self.finding(Kind::ErrorCodeMismatch, None, detail));
    }

    /// `error_code_mismatch`: an A2A 1.0 error whose typed details break
    /// their shape: an entry without `@type` (JSON-RPC `data[]`, REST
    /// `details[]`: google.protobuf.Any), or the ErrorInfo naming an A2A
    /// error outside the domain `a2a-protocol.org` (§11.6). Only errors
    /// known as A2A errors (by code or reason) are judged; 0.3 `data` is
    /// free-form.
    pub(super) fn check_error_details(
        &self,
        e: &ErrorInfo,
        ix: Option<u64>,
        out: &mut Vec<Finding>,
    ) {
        let (Some(fault), false) = (e.fault, e.error == A2aError::Other) else {
            return;
        };
        if self.exchange.version != Version::V1_0 {
            return;
        }
        let list = if self.exchange.binding == Binding::Rest {
            "details"
        } else {
            "data"
        };
        let detail = match fault {
            DetailFault::Untyped { entry } => format!(
                "expected every entry of the {:?} error's {list} to name its type with @type (a google.protobuf.Any); entry {entry} has none",
                e.error
            ),
            DetailFault::Domain {
                entry,
                reason,
                has_domain,
            } => format!(
                "expected the ErrorInfo naming {reason:?} ({list} entry {entry}) to have domain \"a2a-protocol.org\"; it has {}",
                if has_domain { "another" } else { "none" }
            ),
        };
        out.push(self.finding(Kind::ErrorCodeMismatch, ix, detail));
    }

    /// A Task snapshot in a body: its status judged, its context checked.
    fn snapshot_status(
        &self,
        t: &TaskSnapshot,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) -> Option<TaskState> {
        let ctx = t.context_id.as_deref();
        self.task_status(&t.id, ctx, &t.status, None, true, reg, now, out)
    }
}
