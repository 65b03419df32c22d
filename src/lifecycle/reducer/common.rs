//! Checks the reducer shares between plain bodies and streams: state values,
//! the registry's verdicts and contextId, accepted terminal tasks, JSON-RPC
//! ids, and how a finding is built.

use super::Reducer;
use crate::a2a::model::{
    Binding, Decoded, ErrorInfo, Event, Operation, Payload, RpcId, StateValue, Status, TaskState,
    Version,
};
use crate::findings::{Finding, Kind};
use crate::lifecycle::registry::{secs, Observation, Registry, Verdict};
use crate::lifecycle::timestamp::{self, Fault};
use crate::lifecycle::Millis;

// === impl Reducer (shared checks) ===

impl Reducer {
    /// Checks a status for the unspecified / undefined values, then records a
    /// known state in the registry (after judging the registry's contextId
    /// when `check_ctx`) and reports a `terminal_exit` the registry finds
    /// across exchanges. Returns the known state.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn task_status(
        &self,
        task_id: &str,
        ctx: Option<&str>,
        status: &Status,
        ix: Option<u64>,
        check_ctx: bool,
        reg: &mut Registry,
        now: Millis,
        out: &mut Vec<Finding>,
    ) -> Option<TaskState> {
        // For findings only: the stream's context is read on demand.
        let known_ctx = || ctx.or(self.context_id());
        // Parsed once: for its form here, for its instant in the registry.
        let stamp = status.timestamp.as_deref().and_then(timestamp::parse);
        if let Some(detail) = self.timestamp_fault(task_id, status, stamp.as_ref()) {
            out.push(make(
                Kind::InvalidTimestamp,
                Some(task_id),
                known_ctx(),
                ix,
                detail,
            ));
        }
        let state = match &status.state {
            StateValue::Known(s) => *s,
            StateValue::Unspecified(raw) => {
                let detail = format!("expected a defined task state; task {task_id} reported the unspecified state {raw:?}");
                out.push(make(
                    Kind::UnspecifiedState,
                    Some(task_id),
                    known_ctx(),
                    ix,
                    detail,
                ));
                return None;
            }
            StateValue::Undefined(raw) => {
                let detail = format!("expected a task state some A2A version defines; task {task_id} reported {raw:?}");
                out.push(make(
                    Kind::UnknownState,
                    Some(task_id),
                    known_ctx(),
                    ix,
                    detail,
                ));
                return None;
            }
        };
        let obs = Observation {
            task_id,
            context_id: ctx,
            state,
            timestamp: status.timestamp.as_deref(),
            seq: self.seq,
        };
        // The task's context before this observation, from the same lookup.
        let mut ctx_was = None;
        let verdict = reg.observe_stamped(&obs, stamp, now, &mut ctx_was);
        match (check_ctx, ctx, ctx_was) {
            (true, Some(c), Some(known)) => {
                out.push(context_mismatch(task_id, known.as_str(), c, ix))
            }
            (true, Some(c), None) => self.check_request_context(task_id, c, ix, out),
            _ => {}
        }
        if let Verdict::Stalled { state, sat, limit } = verdict {
            let heard = reg.status_heard_from(task_id);
            let detail = format!(
                "task {task_id} was expected to leave {state} within {}; this answer shows it there with the very status it had when first seen in that state, {} ago{}",
                secs(limit),
                secs(sat),
                heard_note("state", heard)
            );
            let mut f = make(Kind::StalledTask, Some(task_id), known_ctx(), ix, detail);
            f.heard_from = heard.map(str::to_owned);
            out.push(f);
        }
        if let Verdict::TerminalExit { was, from } = verdict {
            let op = self.exchange.operation;
            let heard = reg.heard_from(from);
            let detail = format!(
                "task {task_id} was {was} before this {op} was sent and is now reported {state}{}",
                heard_note("terminal state", heard)
            );
            let mut f = make(Kind::TerminalExit, Some(task_id), known_ctx(), ix, detail);
            f.heard_from = heard.map(str::to_owned);
            out.push(f);
        }
        Some(state)
    }

    /// `invalid_timestamp`: a JSON status timestamp out of its version's
    /// form (`timestamp::fault`). gRPC carries a google.protobuf.Timestamp,
    /// which the engine renders itself: nothing there to judge.
    fn timestamp_fault(
        &self,
        task_id: &str,
        status: &Status,
        parsed: Option<&timestamp::Stamp>,
    ) -> Option<String> {
        let ts = status.timestamp.as_deref()?;
        if self.exchange.binding == Binding::Grpc {
            return None;
        }
        let v1 = self.exchange.version == Version::V1_0;
        let want = match timestamp::fault_parsed(ts, parsed, v1)? {
            Fault::NotUtcZ => "an ISO 8601 time in UTC ending in Z (1.0 §5.6.1)",
            Fault::Unreadable if v1 => "an ISO 8601 time in UTC ending in Z (1.0 §5.6.1)",
            Fault::Unreadable => "an ISO 8601 date and time",
        };
        Some(format!(
            "expected task {task_id}'s status timestamp to be {want}; got {ts:?}"
        ))
    }

    /// `terminal_task_accepted`, judged once, on the first success answer
    /// (`answer`, its first event).
    pub(super) fn check_accepted(
        &mut self,
        answer: &Event,
        ix: Option<u64>,
        reg: &Registry,
        out: &mut Vec<Finding>,
    ) {
        let answer_task = answer.task_id();
        if std::mem::replace(&mut self.accept_checked, true)
            || !(200..300).contains(&self.http_status)
        {
            return;
        }
        let op = self.exchange.operation;
        // Messages (1.0 §3.1.1, 0.3 §7.1/7.2: "Sending a message to such a
        // task will result in an error") and cancels (TaskNotCancelable in
        // both) to a terminal task are refused in every version; a
        // subscribe only in 1.0 (§3.1.6): 0.3 `tasks/resubscribe` may
        // replay the final state and close.
        let judged = match op {
            Operation::SendMessage | Operation::SendStreamingMessage | Operation::CancelTask => {
                true
            }
            Operation::SubscribeToTask => self.exchange.version == Version::V1_0,
            _ => false,
        };
        let Some(t) = self.exchange.task_id.as_deref().filter(|_| judged) else {
            return;
        };
        if answer_task.is_some_and(|a| a != t) {
            return;
        }
        if let Some(was) = reg.terminal_before(t, self.seq) {
            if self.repeated_cancel(was, answer) {
                return;
            }
            let heard = reg.status_heard_from(t);
            let detail = format!(
                "expected {op} on task {t}, already {was}, to be refused; the upstream accepted it{}",
                heard_note("terminal state", heard)
            );
            let ctx = self.context_id().or(reg.context_of(t));
            let mut f = make(Kind::TerminalTaskAccepted, Some(t), ctx, ix, detail);
            f.heard_from = heard.map(str::to_owned);
            out.push(f);
        }
    }

    /// A 1.0 CancelTask of a task already seen CANCELED, answered with the
    /// task still CANCELED: legal, "Cancel Task operations are idempotent -
    /// multiple cancellation requests have the same effect" (1.0 §3.3.1).
    /// A cancel of a task that completed, failed or was rejected stays
    /// refused (§3.1.5: TaskNotCancelableError), and so does any cancel of
    /// a terminal task in 0.3, which states no idempotency and lists
    /// `canceled` among the states TaskNotCancelableError answers (0.3
    /// §8.2).
    fn repeated_cancel(&self, was: TaskState, answer: &Event) -> bool {
        self.exchange.operation == Operation::CancelTask
            && self.exchange.version == Version::V1_0
            && was == TaskState::Canceled
            && matches!(answer, Event::Task(t) if t.status.state == StateValue::Known(TaskState::Canceled))
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
        // Numbers are in their normal form (`spelling::number_id`): equal
        // text is an equal value, exactly, at any length.
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
        make(kind, self.task_id(), self.context_id(), ix, detail)
    }
}

/// What a detail adds when the state it rests on was heard from another
/// replica (`[registry] backend = "redis"`), not seen here.
fn heard_note(what: &str, heard: Option<&str>) -> String {
    heard.map_or_else(String::new, |r| {
        format!(" (the {what} was heard from replica {r})")
    })
}

/// `context_id_mismatch` against the registry's contextId for `task_id`.
impl Reducer {
    /// `context_id_mismatch`: a follow-up that named task T in context C
    /// answered about T in another context (§3.4.3: agents MUST
    /// reject a mismatching contextId and taskId).
    pub(super) fn check_request_context(
        &self,
        task_id: &str,
        ctx: &str,
        ix: Option<u64>,
        out: &mut Vec<Finding>,
    ) {
        let ex = &self.exchange;
        let follow_up = matches!(
            ex.operation,
            Operation::SendMessage | Operation::SendStreamingMessage
        );
        if let (true, Some(t), Some(c)) =
            (follow_up, ex.task_id.as_deref(), ex.context_id.as_deref())
        {
            if t == task_id && c != ctx {
                let detail = format!(
                    "expected the follow-up to task {t}, sent in contextId {c}, to be answered in that context; got {ctx}"
                );
                out.push(make(
                    Kind::ContextIdMismatch,
                    Some(task_id),
                    Some(ctx),
                    ix,
                    detail,
                ));
            }
        }
    }
}

pub(super) fn check_registry_context(
    reg: &Registry,
    task_id: &str,
    ctx: &str,
    ix: Option<u64>,
    out: &mut Vec<Finding>,
) {
    if let Some(known) = reg.context_other_than(task_id, ctx) {
        out.push(context_mismatch(task_id, known, ctx, ix));
    }
}

/// `context_id_mismatch`: `task_id`, known in context `known`, now in `ctx`.
fn context_mismatch(task_id: &str, known: &str, ctx: &str, ix: Option<u64>) -> Finding {
    let detail = format!(
        "expected task {task_id} to keep contextId {known} seen on an earlier exchange; got {ctx}"
    );
    make(
        Kind::ContextIdMismatch,
        Some(task_id),
        Some(ctx),
        ix,
        detail,
    )
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
        artifact_id: None,
        heard_from: None,
        drift: None,
    }
}
