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
    /// A push delivery: a StreamResponse, any one of its four events
    /// (1.0 §4.3.3); a 0.3 config's deliveries in 0.3's `kind` shapes.
    Delivery,
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
            Operation::PushDelivery => Some(Expect::Delivery),
            _ => None,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Expect::TaskOrMessage => "a Task or a Message",
            Expect::Task => "a Task",
            Expect::TaskList => "a ListTasks result",
            Expect::Delivery => {
                "a StreamResponse with exactly one of task, message, statusUpdate, artifactUpdate (1.0 §4.3.3; a 0.3 config: a Task or event with its `kind`)"
            }
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
        if expect == Expect::Delivery {
            return self.on_delivery(d, reg, now, out);
        }
        let ev = match &d.payload {
            // Refusals (TaskNotCancelable, UnsupportedOperation, ...) are
            // answers, not violations; their HTTP status must fit them.
            Payload::Error(e) => {
                self.check_error_status(e, None, out);
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
        self.check_accepted(ev, None, reg, out);
        let Event::Task(t) = ev else {
            return;
        };
        self.task_id = Some(ShortStr::bounded(&t.id, self.max_id));
        self.context_id = t
            .context_id
            .as_deref()
            .map(|c| ShortStr::bounded(c, self.max_id));
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

    /// A push delivery's body: its shape, its task, then its state into
    /// the registry like any answer (the relay decided beforehand whether
    /// the registry may take it: `judge::push`).
    fn on_delivery(
        &mut self,
        d: &Decoded,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) {
        let got = match (&d.payload, d.dialect) {
            (Payload::Event(ev), Some(_)) => Ok(ev),
            (Payload::Event(ev), None) => Err(format!("a bare {}", ev.label())),
            (Payload::TaskList(_), _) => Err("a ListTasks result".to_string()),
            (Payload::Error(_), _) => Err("an error object".to_string()),
        };
        let ev = match got {
            Ok(ev) => ev,
            Err(got) => {
                let detail = format!("expected {}; got {got}", Expect::Delivery.describe());
                out.push(self.finding(Kind::MalformedEvent, None, detail));
                return;
            }
        };
        if let (Some(asked), Some(named)) = (&self.task_id, ev.task_id()) {
            if !asked.is(named) {
                let detail = format!(
                    "expected a push delivery for the config of task {} to be about that task; a {} named task {named}",
                    asked.as_str(),
                    ev.label()
                );
                out.push(self.finding(Kind::TaskIdMismatch, None, detail));
                return;
            }
        }
        match ev {
            Event::Task(t) => {
                self.task_id = Some(ShortStr::bounded(&t.id, self.max_id));
                self.state = self.snapshot_status(t, reg, now, out);
            }
            Event::StatusUpdate(u) => {
                self.task_id = Some(ShortStr::bounded(&u.task_id, self.max_id));
                let ctx = u.context_id.as_deref();
                self.state =
                    self.task_status(&u.task_id, ctx, &u.status, None, true, reg, now, out);
            }
            Event::ArtifactUpdate(_) | Event::Message(_) => {}
        }
    }

    /// `error_code_mismatch`: an A2A 1.0 error at another status than the
    /// specification maps it to (§5.4; the 1.0.1 table moved some, and
    /// either table is accepted): the HTTP status of an HTTP+JSON body, the
    /// gRPC status of a gRPC call (`ix`: the error ended a stream). The
    /// error is known by its ErrorInfo `reason`, problem `type` or code.
    /// Over JSON-RPC the code names the error: judged only against a typed
    /// ErrorInfo `reason` naming another A2A error (`check_rpc_code`).
    pub(super) fn check_error_status(
        &self,
        e: &ErrorInfo,
        ix: Option<u64>,
        out: &mut Vec<Finding>,
    ) {
        let ex = &self.exchange;
        if ex.version != Version::V1_0 {
            return;
        }
        if ex.binding == Binding::JsonRpc {
            return self.check_rpc_code(e, ix, out);
        }
        let (allowed, got, over): (&[u16], i64, &str) = match (ex.binding, ix) {
            (Binding::Rest, None) => match rest_statuses(e.error) {
                Some(a) => (
                    a,
                    i64::from(self.http_status),
                    "over HTTP+JSON with HTTP status",
                ),
                None => return,
            },
            (Binding::Grpc, _) => match grpc_statuses(e.error) {
                Some(a) => (a, e.code, "over gRPC with status"),
                None => return,
            },
            _ => return,
        };
        if allowed.iter().any(|&a| i64::from(a) == got) {
            return;
        }
        let name = |c: i64| match ex.binding {
            Binding::Grpc => format!("{c} ({})", grpc_name(c)),
            _ => c.to_string(),
        };
        let want: Vec<String> = allowed.iter().map(|&a| name(i64::from(a))).collect();
        let detail = format!(
            "expected {:?} {over} {} (the 1.0.0 or 1.0.1 mapping); it came with {}",
            e.error,
            want.join(" or "),
            name(got)
        );
        out.push(self.finding(Kind::ErrorCodeMismatch, ix, detail));
    }

    /// `error_code_mismatch` over JSON-RPC (1.0): the `code` is one A2A
    /// error's (§5.4's table) while the typed ErrorInfo in `data[]` names
    /// another by its `reason`. Both are the agent's own words, so the
    /// contradiction is certain. Not judged: a code that names no A2A
    /// error (-32603 with a reason, an extension's code), and a code
    /// against what the proxy guesses the cause was.
    fn check_rpc_code(&self, e: &ErrorInfo, ix: Option<u64>, out: &mut Vec<Finding>) {
        let Some(by_code) = e.jsonrpc_code_names() else {
            return;
        };
        if e.error == by_code || e.error == A2aError::Other {
            return;
        }
        let detail = format!(
            "expected the JSON-RPC code and the ErrorInfo reason to name the same A2A error (§5.4); code {} is {by_code:?}, the reason names {:?}",
            e.code, e.error
        );
        out.push(self.finding(Kind::ErrorCodeMismatch, ix, detail));
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
        let list = match self.exchange.binding {
            Binding::Rest => "details",
            Binding::Grpc => "grpc-status-details-bin",
            Binding::JsonRpc | Binding::Webhook => "data",
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

/// The HTTP statuses §5.4 maps an A2A error to over HTTP+JSON (1.0.0 and
/// 1.0.1: TaskNotCancelable 409 → 400, ContentTypeNotSupported 415 → 400,
/// InvalidAgentResponse 502 → 500).
fn rest_statuses(e: A2aError) -> Option<&'static [u16]> {
    Some(match e {
        A2aError::TaskNotFound => &[404],
        A2aError::TaskNotCancelable => &[409, 400],
        A2aError::ContentTypeNotSupported => &[415, 400],
        A2aError::InvalidAgentResponse => &[502, 500],
        A2aError::PushNotificationNotSupported
        | A2aError::UnsupportedOperation
        | A2aError::ExtendedAgentCardNotConfigured
        | A2aError::ExtensionSupportRequired
        | A2aError::VersionNotSupported => &[400],
        A2aError::Other => return None,
    })
}

/// The gRPC statuses §5.4 maps an A2A error to (1.0.1 moved three from
/// UNIMPLEMENTED to FAILED_PRECONDITION; both accepted).
fn grpc_statuses(e: A2aError) -> Option<&'static [u16]> {
    const NOT_FOUND: u16 = 5;
    const FAILED_PRECONDITION: u16 = 9;
    const INVALID_ARGUMENT: u16 = 3;
    const UNIMPLEMENTED: u16 = 12;
    const INTERNAL: u16 = 13;
    Some(match e {
        A2aError::TaskNotFound => &[NOT_FOUND],
        A2aError::TaskNotCancelable
        | A2aError::ExtendedAgentCardNotConfigured
        | A2aError::ExtensionSupportRequired => &[FAILED_PRECONDITION],
        A2aError::PushNotificationNotSupported
        | A2aError::UnsupportedOperation
        | A2aError::VersionNotSupported => &[UNIMPLEMENTED, FAILED_PRECONDITION],
        A2aError::ContentTypeNotSupported => &[INVALID_ARGUMENT],
        A2aError::InvalidAgentResponse => &[INTERNAL],
        A2aError::Other => return None,
    })
}

/// A gRPC status code's name.
fn grpc_name(code: i64) -> &'static str {
    const NAMES: [&str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    usize::try_from(code)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("unknown")
}
