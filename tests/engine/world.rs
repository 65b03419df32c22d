//! Builders for lifecycle tests: exchanges and decoded frames made by hand
//! (the decoder is not used), and a small driver that runs a trace.
#![allow(dead_code)]

use a2a_tap::a2a::model::*;
use a2a_tap::findings::{Finding, Kind, Severity};
use a2a_tap::lifecycle::{End, Millis, Outcome, Reducer, Registry, RegistryConfig};

/// A 1.0 JSON-RPC exchange with request id 1.
pub fn ex(op: Operation, task: Option<&str>) -> Exchange {
    Exchange {
        binding: Binding::JsonRpc,
        version: Version::V1_0,
        operation: op,
        rpc_id: Some(RpcId::Number("1".into())),
        task_id: task.map(str::to_owned),
        context_id: None,
        blocking: false,
        guessed_path: None,
        message_id: None,
    }
}

pub fn rest(op: Operation, task: Option<&str>) -> Exchange {
    Exchange {
        binding: Binding::Rest,
        rpc_id: None,
        ..ex(op, task)
    }
}

fn wrap(payload: Payload) -> Decoded {
    Decoded {
        rpc_id: Some(RpcId::Number("1".into())),
        payload,
        dialect: None,
    }
}

pub fn st(state: &str) -> StateValue {
    match state {
        "submitted" => StateValue::Known(TaskState::Submitted),
        "working" => StateValue::Known(TaskState::Working),
        "input_required" => StateValue::Known(TaskState::InputRequired),
        "auth_required" => StateValue::Known(TaskState::AuthRequired),
        "completed" => StateValue::Known(TaskState::Completed),
        "failed" => StateValue::Known(TaskState::Failed),
        "canceled" => StateValue::Known(TaskState::Canceled),
        "rejected" => StateValue::Known(TaskState::Rejected),
        "TASK_STATE_UNSPECIFIED" | "unknown" => StateValue::Unspecified(state.into()),
        other => StateValue::Undefined(other.into()),
    }
}

/// Test values own their text, so they outlive the strings they came from.
pub fn owned(s: &str) -> Text<'static> {
    std::borrow::Cow::Owned(s.to_owned())
}

pub fn status_of(state: &str, ts: Option<&str>) -> Status<'static> {
    Status {
        state: st(state),
        timestamp: ts.map(owned),
    }
}

pub fn snapshot(id: &str, ctx: &str, state: &str, artifacts: &[&str]) -> TaskSnapshot<'static> {
    TaskSnapshot {
        id: owned(id),
        context_id: Some(owned(ctx)),
        status: status_of(state, None),
        artifact_ids: artifacts.iter().map(|a| owned(a)).collect(),
    }
}

pub fn task(id: &str, ctx: &str, state: &str) -> Decoded<'static> {
    wrap(Payload::Event(Event::Task(snapshot(id, ctx, state, &[]))))
}

pub fn task_with(id: &str, ctx: &str, state: &str, artifacts: &[&str]) -> Decoded<'static> {
    wrap(Payload::Event(Event::Task(snapshot(
        id, ctx, state, artifacts,
    ))))
}

pub fn task_at(id: &str, ctx: &str, state: &str, ts: &str) -> Decoded<'static> {
    let mut t = snapshot(id, ctx, state, &[]);
    t.status.timestamp = Some(owned(ts));
    wrap(Payload::Event(Event::Task(t)))
}

pub fn upd(id: &str, ctx: &str, state: &str) -> Decoded<'static> {
    upd_final(id, Some(ctx), state, None)
}

pub fn upd_at(id: &str, ctx: &str, state: &str, ts: &str) -> Decoded<'static> {
    wrap(Payload::Event(Event::StatusUpdate(StatusUpdate {
        task_id: owned(id),
        context_id: Some(owned(ctx)),
        status: status_of(state, Some(ts)),
        final_flag: None,
    })))
}

pub fn upd_final(
    id: &str,
    ctx: Option<&str>,
    state: &str,
    final_flag: Option<bool>,
) -> Decoded<'static> {
    wrap(Payload::Event(Event::StatusUpdate(StatusUpdate {
        task_id: owned(id),
        context_id: ctx.map(owned),
        status: status_of(state, None),
        final_flag,
    })))
}

pub fn art(id: &str, artifact: &str, append: bool, last_chunk: bool) -> Decoded<'static> {
    wrap(Payload::Event(Event::ArtifactUpdate(ArtifactUpdate {
        task_id: owned(id),
        context_id: None,
        artifact_id: owned(artifact),
        append,
        last_chunk,
    })))
}

pub fn msg(task: Option<&str>) -> Decoded<'static> {
    wrap(Payload::Event(Event::Message(MessageEvent {
        message_id: Some(owned("m-1")),
        task_id: task.map(owned),
        context_id: None,
    })))
}

pub fn err(error: A2aError, code: i64) -> Decoded<'static> {
    wrap(Payload::Error(ErrorInfo::new(code, error)))
}

pub fn list(tasks: Vec<TaskSnapshot<'static>>) -> Decoded<'static> {
    wrap(Payload::TaskList(tasks))
}

pub fn with_id(mut d: Decoded<'static>, id: Option<RpcId<'static>>) -> Decoded<'static> {
    d.rpc_id = id;
    d
}

/// A registry and a clock shared by the exchanges of one scenario.
pub struct World {
    pub reg: Registry,
    pub now: Millis,
}

impl World {
    pub fn new() -> World {
        World {
            reg: Registry::new(RegistryConfig::default()),
            now: 0,
        }
    }

    /// Opens an exchange (its request is sent now).
    pub fn open(&mut self, exchange: Exchange) -> Reducer {
        let seq = self.reg.open_exchange();
        Reducer::new(exchange, seq)
    }

    /// Feeds SSE frames 0.. to `r`.
    pub fn feed(&mut self, r: &mut Reducer, frames: &[Decoded]) -> Vec<Finding> {
        let mut out = Vec::new();
        r.on_response_head(200, true);
        for (i, f) in frames.iter().enumerate() {
            self.now += 10;
            r.on_decoded(Some(i as u64), f, &mut self.reg, self.now, &mut out);
        }
        out
    }

    pub fn end(&mut self, r: &mut Reducer, end: End, out: &mut Vec<Finding>) -> Outcome {
        r.on_end(end, &mut self.reg, self.now, out)
    }

    /// A whole stream: open, feed, end.
    pub fn stream(
        &mut self,
        exchange: Exchange,
        frames: &[Decoded],
        end: End,
    ) -> (Vec<Finding>, Outcome) {
        let mut r = self.open(exchange);
        let mut out = self.feed(&mut r, frames);
        let o = self.end(&mut r, end, &mut out);
        (out, o)
    }

    /// A whole plain body with HTTP status `status`.
    pub fn body(&mut self, exchange: Exchange, status: u16, body: &Decoded) -> Vec<Finding> {
        let mut r = self.open(exchange);
        self.answer(&mut r, status, body)
    }

    /// Answers an already opened exchange with a plain body.
    pub fn answer(&mut self, r: &mut Reducer, status: u16, body: &Decoded) -> Vec<Finding> {
        let mut out = Vec::new();
        r.on_response_head(status, false);
        self.now += 10;
        r.on_decoded(None, body, &mut self.reg, self.now, &mut out);
        self.end(r, End::Upstream, &mut out);
        out
    }
}

pub fn kinds(f: &[Finding]) -> Vec<Kind> {
    f.iter().map(|f| f.kind).collect()
}

/// Asserts exactly one finding, of `kind`, and returns it.
pub fn only(f: &[Finding], kind: Kind) -> &Finding {
    assert_eq!(kinds(f), vec![kind], "{f:#?}");
    &f[0]
}

/// Asserts kind, severity, task id and event index of a finding.
pub fn is(f: &Finding, kind: Kind, sev: Severity, task: Option<&str>, index: Option<u64>) {
    assert_eq!(f.kind, kind, "{f:#?}");
    assert_eq!(f.severity, sev, "{f:#?}");
    assert_eq!(f.task_id.as_deref(), task, "{f:#?}");
    assert_eq!(f.event_index, index, "{f:#?}");
    assert!(!f.detail.is_empty() && f.evidence.is_none(), "{f:#?}");
}
