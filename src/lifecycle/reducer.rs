//! The per-exchange reducer: judges one response (a plain JSON body or an SSE
//! stream) against the lifecycle rules, and teaches the registry every task
//! state it carries. This file holds the entry points, plain bodies and the
//! checks shared with streams; `stream.rs` holds the stream rules.

use super::artifacts::Artifacts;
use super::registry::{Observation, Registry, Verdict};
use super::{Millis, Seq};
use crate::a2a::model::{
    Binding, Decoded, ErrorInfo, Event, Exchange, Malformed, Operation, Payload, RpcId, StateValue,
    Status, TaskState,
};
use crate::findings::{Finding, Kind};

/// How a response body ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The upstream ended the body cleanly.
    Upstream,
    /// The caller hung up.
    ClientGone,
    /// The upstream connection failed mid-body.
    UpstreamError,
}

/// How a stream ended: the `outcome` label of `a2a_stream_duration_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The task reached a terminal state, the stream carried its one
    /// Message, or an error answer ended it.
    Terminal,
    /// The stream ended at input-required / auth-required, or after a 0.3
    /// `final:true` at an active state (the server expects a resubscribe).
    Interrupted,
    /// The upstream ended or broke the stream before any of the above.
    Truncated,
    /// The caller hung up first.
    ClientGone,
}

impl Outcome {
    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Terminal => "terminal",
            Outcome::Interrupted => "interrupted",
            Outcome::Truncated => "truncated",
            Outcome::ClientGone => "client_gone",
        }
    }
}

/// Whether the response is judged as an SSE stream or one JSON body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Body {
    /// No head seen: decided per call (`index` present = stream frame).
    Unknown,
    Stream,
    Plain,
}

/// The payload shape a plain (non-SSE) success answer must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    TaskOrMessage,
    Task,
    TaskList,
}

impl Expect {
    /// `None` for operations whose bodies the engine does not model (push
    /// configs, extended card): those are only checked for their JSON-RPC id.
    fn of(op: Operation) -> Option<Expect> {
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

/// Judges one exchange's response. Create it when the request is sent (with
/// the stamp from `Registry::open_exchange`), call `on_response_head` when
/// the head arrives, then `on_decoded`/`on_malformed`/`on_skipped` per frame
/// or body, and `on_end` once. Calls after `on_end` are ignored.
#[derive(Debug)]
pub struct Reducer {
    pub(super) exchange: Exchange,
    pub(super) seq: Seq,
    pub(super) http_status: u16,
    pub(super) body: Body,
    /// The task the exchange is about: the one a subscribe/get/cancel names,
    /// else the first one a response names. Stored once; compared as `&str`.
    pub(super) task_id: Option<String>,
    pub(super) context_id: Option<String>,
    /// Last known state on this response.
    pub(super) state: Option<TaskState>,
    /// The first terminal state the stream reached.
    pub(super) terminal: Option<TaskState>,
    pub(super) final_seen: bool,
    /// Frames seen (decoded, malformed or skipped): the next expected index.
    pub(super) frames: u64,
    /// Decoded A2A events seen on the stream.
    pub(super) events: u64,
    /// A frame was skipped or came out of order: history-based findings are
    /// no longer certain and are not reported.
    pub(super) gapped: bool,
    pub(super) saw_message: bool,
    pub(super) message_reported: bool,
    pub(super) saw_error: bool,
    pub(super) accept_checked: bool,
    pub(super) artifacts: Artifacts,
    pub(super) ended: Option<Outcome>,
}

// === impl Reducer ===

impl Reducer {
    /// A reducer for `exchange`, whose request was stamped `seq`.
    pub fn new(exchange: Exchange, seq: Seq) -> Reducer {
        let task_id = match exchange.operation {
            Operation::SendMessage | Operation::SendStreamingMessage => None,
            _ => exchange.task_id.clone(),
        };
        Reducer {
            exchange,
            seq,
            http_status: 200,
            body: Body::Unknown,
            task_id,
            context_id: None,
            state: None,
            terminal: None,
            final_seen: false,
            frames: 0,
            events: 0,
            gapped: false,
            saw_message: false,
            message_reported: false,
            saw_error: false,
            accept_checked: false,
            artifacts: Artifacts::default(),
            ended: None,
        }
    }

    /// The exchange being judged.
    pub fn exchange(&self) -> &Exchange {
        &self.exchange
    }

    /// The exchange's causal stamp.
    pub fn seq(&self) -> Seq {
        self.seq
    }

    /// The response head: its HTTP status, and whether the body is an SSE
    /// stream (`Content-Type: text/event-stream`). A streaming operation
    /// answered with a plain JSON body (an error raised before the first
    /// event) is judged as one body, not as a stream: no `stream_start`, no
    /// `stream_truncated`. Without this call the status is taken as 200 and
    /// each call's `index` decides (`Some` = stream frame).
    pub fn on_response_head(&mut self, http_status: u16, is_event_stream: bool) {
        self.http_status = http_status;
        self.body = if is_event_stream {
            Body::Stream
        } else {
            Body::Plain
        };
    }

    /// One decoded SSE event (`index` = its 0-based index on the stream) or
    /// the whole non-streaming body (`index` = `None`).
    pub fn on_decoded(
        &mut self,
        index: Option<u64>,
        decoded: &Decoded,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) {
        if self.ended.is_some() {
            return;
        }
        if self.is_stream(index) {
            let i = index.unwrap_or(self.frames);
            self.on_frame(i, decoded, reg, now, out);
        } else {
            self.on_body(decoded, reg, now, out);
        }
    }

    /// A frame or body that did not decode (or was oversized / invalid
    /// UTF-8): `malformed_event`. Not reported for operations whose bodies
    /// the engine does not model (push configs, extended card).
    pub fn on_malformed(&mut self, index: Option<u64>, why: &Malformed, out: &mut Vec<Finding>) {
        if self.ended.is_some() {
            return;
        }
        let stream = self.is_stream(index);
        if !stream && Expect::of(self.exchange.operation).is_none() {
            return;
        }
        let (ix, what) = if stream {
            let i = index.unwrap_or(self.frames);
            self.note_frame(i);
            (Some(i), "event")
        } else {
            (None, "response body")
        };
        let detail = format!(
            "expected a JSON A2A {what} for {}; got one that is not ({})",
            self.exchange.operation, why.0
        );
        out.push(self.finding(Kind::MalformedEvent, ix, detail));
    }

    /// A frame (or body) the driver could not analyse (analysis overflowed):
    /// nothing is reported about it, and findings that depend on the whole
    /// history (`stream_start`, artifacts, `stream_truncated`) are withheld.
    pub fn on_skipped(&mut self, index: Option<u64>) {
        self.gapped = true;
        if let Some(i) = index {
            self.frames = self.frames.max(i.saturating_add(1));
        }
    }

    /// The body ended. Returns the stream outcome (for plain bodies:
    /// `Terminal` when the upstream finished it, `Truncated` when the
    /// upstream failed, `ClientGone` when the caller left). Idempotent.
    pub fn on_end(
        &mut self,
        end: End,
        _reg: &mut Registry,
        _now: Millis,
        out: &mut Vec<Finding>,
    ) -> Outcome {
        if let Some(o) = self.ended {
            return o;
        }
        let stream = match self.body {
            Body::Stream => true,
            Body::Plain => false,
            Body::Unknown => self.frames > 0,
        };
        let outcome = if stream {
            self.end_stream(end, out)
        } else {
            match end {
                End::Upstream => Outcome::Terminal,
                End::ClientGone => Outcome::ClientGone,
                End::UpstreamError => Outcome::Truncated,
            }
        };
        self.ended = Some(outcome);
        outcome
    }

    fn is_stream(&self, index: Option<u64>) -> bool {
        match self.body {
            Body::Stream => true,
            Body::Plain => false,
            Body::Unknown => index.is_some(),
        }
    }

    /// A whole non-streaming body.
    fn on_body(&mut self, d: &Decoded, reg: &mut Registry, now: Millis, out: &mut Vec<Finding>) {
        self.check_rpc_id(None, d, out);
        let op = self.exchange.operation;
        let Some(expect) = Expect::of(op) else {
            return;
        };
        let ev = match &d.payload {
            // Refusals (TaskNotCancelable, UnsupportedOperation, ...) are
            // answers, not violations.
            Payload::Error(_) => return,
            Payload::TaskList(list) if expect == Expect::TaskList => {
                for t in list {
                    self.task_status(
                        &t.id,
                        t.context_id.as_deref(),
                        &t.status,
                        None,
                        true,
                        reg,
                        now,
                        out,
                    );
                }
                return;
            }
            Payload::TaskList(_) => {
                let detail = format!(
                    "expected {} for {op}; got a ListTasks result",
                    expect.describe()
                );
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
        self.check_accepted(ev.task_id(), None, reg, out);
        let Event::Task(t) = ev else {
            return;
        };
        self.task_id = Some(t.id.clone());
        self.context_id = t.context_id.clone();
        let (state, verdict) = self.task_status(
            &t.id,
            t.context_id.as_deref(),
            &t.status,
            None,
            true,
            reg,
            now,
            out,
        );
        let Some(s) = state else {
            return;
        };
        self.state = Some(s);
        self.report_cross_exit(verdict, s, None, out);
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

    /// Checks a status for the unspecified / undefined values, then records a
    /// known state in the registry (after judging the registry's contextId
    /// when `check_ctx`). Returns the known state and the registry's verdict.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn task_status(
        &mut self,
        task_id: &str,
        ctx: Option<&str>,
        status: &Status,
        ix: Option<u64>,
        check_ctx: bool,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) -> (Option<TaskState>, Verdict) {
        let state = match &status.state {
            StateValue::Known(s) => *s,
            StateValue::Unspecified(raw) => {
                let detail = format!("expected a defined task state; task {task_id} reported the unspecified state {raw:?}");
                out.push(make(Kind::UnspecifiedState, Some(task_id), ctx, ix, detail));
                return (None, Verdict::Ignored);
            }
            StateValue::Undefined(raw) => {
                let detail = format!("expected a task state some A2A version defines; task {task_id} reported {raw:?}");
                out.push(make(Kind::UnknownState, Some(task_id), ctx, ix, detail));
                return (None, Verdict::Ignored);
            }
        };
        if check_ctx {
            if let Some(c) = ctx {
                check_registry_context(reg, task_id, c, ix, out);
            }
        }
        let obs = Observation {
            task_id,
            context_id: ctx,
            state,
            timestamp: status.timestamp.as_deref(),
            seq: self.seq,
        };
        (Some(state), reg.observe(&obs, now))
    }

    /// `terminal_exit` across exchanges, from the registry's verdict.
    pub(super) fn report_cross_exit(
        &self,
        v: Verdict,
        now_state: TaskState,
        ix: Option<u64>,
        out: &mut Vec<Finding>,
    ) {
        if let Verdict::TerminalExit { was } = v {
            let detail = format!(
                "task {} was {was} before this {} was sent and is now reported {now_state}",
                self.task_id.as_deref().unwrap_or("?"),
                self.exchange.operation
            );
            out.push(self.finding(Kind::TerminalExit, ix, detail));
        }
    }

    /// `terminal_task_accepted`, judged once, on the first success answer.
    pub(super) fn check_accepted(
        &mut self,
        answer_task: Option<&str>,
        ix: Option<u64>,
        reg: &Registry,
        out: &mut Vec<Finding>,
    ) {
        if std::mem::replace(&mut self.accept_checked, true)
            || !(200..300).contains(&self.http_status)
        {
            return;
        }
        let op = self.exchange.operation;
        let judged = matches!(
            op,
            Operation::SendMessage
                | Operation::SendStreamingMessage
                | Operation::CancelTask
                | Operation::SubscribeToTask
        );
        let Some(t) = self.exchange.task_id.as_deref().filter(|_| judged) else {
            return;
        };
        if answer_task.is_some_and(|a| a != t) {
            return;
        }
        if let Some(was) = reg.terminal_before(t, self.seq) {
            let detail = format!(
                "expected {op} on task {t}, already {was}, to be refused; the upstream accepted it"
            );
            let ctx = self.context_id.as_deref().or(reg.context_of(t));
            out.push(make(Kind::TerminalTaskAccepted, Some(t), ctx, ix, detail));
        }
    }

    /// `jsonrpc_id_mismatch` for JSON-RPC exchanges with a request id. A
    /// `null` id on a parse / invalid-request error is allowed: the server
    /// could not read the id (JSON-RPC 2.0, section 5).
    pub(super) fn check_rpc_id(&self, ix: Option<u64>, d: &Decoded, out: &mut Vec<Finding>) {
        if self.exchange.binding != Binding::JsonRpc {
            return;
        }
        let (Some(want), Some(got)) = (&self.exchange.rpc_id, &d.rpc_id) else {
            return;
        };
        if want == got {
            return;
        }
        let unreadable = matches!(
            d.payload,
            Payload::Error(ErrorInfo {
                code: -32700 | -32600,
                ..
            })
        );
        if *got == RpcId::Null && unreadable {
            return;
        }
        let what = if ix.is_some() {
            "SSE frame"
        } else {
            "response"
        };
        let detail = format!("expected JSON-RPC id {want} on this {what}; got {got}");
        out.push(self.finding(Kind::JsonrpcIdMismatch, ix, detail));
    }

    /// A finding about this exchange's task.
    pub(super) fn finding(&self, kind: Kind, ix: Option<u64>, detail: String) -> Finding {
        make(
            kind,
            self.task_id.as_deref(),
            self.context_id.as_deref(),
            ix,
            detail,
        )
    }
}

/// `context_id_mismatch` against the registry's contextId for `task_id`.
pub(super) fn check_registry_context(
    reg: &Registry,
    task_id: &str,
    ctx: &str,
    ix: Option<u64>,
    out: &mut Vec<Finding>,
) {
    if let Some(known) = reg.context_of(task_id).filter(|k| *k != ctx) {
        let detail = format!("expected task {task_id} to keep contextId {known} seen on an earlier exchange; got {ctx}");
        out.push(make(
            Kind::ContextIdMismatch,
            Some(task_id),
            Some(ctx),
            ix,
            detail,
        ));
    }
}

/// A finding at the kind's default severity.
pub(super) fn make(
    kind: Kind,
    task: Option<&str>,
    ctx: Option<&str>,
    ix: Option<u64>,
    detail: String,
) -> Finding {
    Finding {
        kind,
        severity: kind.default_severity(),
        task_id: task.map(str::to_owned),
        context_id: ctx.map(str::to_owned),
        event_index: ix,
        detail,
        evidence: None,
    }
}
