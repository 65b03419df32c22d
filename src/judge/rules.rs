//! The rules that judge an open exchange against what is known beside it
//! (the time, the registry, the agent card) rather than against its own
//! bytes: run on the analysis thread's tick (`stream_not_closed`,
//! `subscriber_not_notified`) or at its head and end
//! (`capability_mismatch`). Each returns the finding, or `None`; the
//! caller reports each once per exchange.

use std::time::Duration;

use crate::a2a::card::CardInfo;
use crate::a2a::model::{Operation, Version};
use crate::engine::ExchangeEngine;
use crate::findings::{Finding, Kind};
use crate::lifecycle::{Millis, Registry};

/// `stream_not_closed`: a stream still open `open_for` after its last word
/// (1.0 §3.1.2, §3.1.6; 0.3 `final:true`), once that is `wait` or more.
/// Keep-alive comments after the end move nothing: only the stream's end
/// settles it, and a caller that hangs up first ends it too.
pub fn stream_not_closed(
    engine: &ExchangeEngine,
    open_for: Duration,
    wait: Duration,
) -> Option<Finding> {
    if open_for < wait {
        return None;
    }
    let r = engine.reducer();
    let why = match (r.exchange().version, r.state()) {
        (Version::V0_3, _) => "its status with final:true".to_owned(),
        (_, Some(s)) if s.is_terminal() => format!("its task reached {s}"),
        _ => "its one Message".to_owned(),
    };
    let mut f = Finding::new(
        Kind::StreamNotClosed,
        format!(
            "expected the stream to close after {why}; it is still open {:.1}s later (close_wait {:.1}s)",
            open_for.as_secs_f64(),
            wait.as_secs_f64()
        ),
    );
    f.task_id = r.task_id().map(str::to_owned);
    f.context_id = r.context_id().map(str::to_owned);
    Some(f)
}

/// `subscriber_not_notified`: a 1.0 subscribe stream, open before the
/// registry saw its task reach a terminal state on another exchange (the
/// causal rule of `terminal_task_accepted`), that has not carried that
/// state `wait` later (§3.1.6: the stream MUST terminate when the task
/// reaches a terminal state; §3.5.2: every stream MUST receive the same
/// events).
pub fn subscriber_not_notified(
    engine: &ExchangeEngine,
    registry: &Registry,
    now: Millis,
    wait: Millis,
) -> Option<Finding> {
    let r = engine.reducer();
    let ex = r.exchange();
    let subscribe = ex.operation == Operation::SubscribeToTask
        && ex.version == Version::V1_0
        && engine.is_stream();
    // A gap may have been the terminal state itself: silence is only
    // evidence when every frame was read.
    if !subscribe || r.stream_over() || r.gapped() {
        return None;
    }
    let task = ex.task_id.as_deref()?;
    let (state, seen) = registry.terminal_after(task, r.seq())?;
    if now.saturating_sub(seen) < wait {
        return None;
    }
    let mut f = Finding::new(
        Kind::SubscriberNotNotified,
        format!(
            "expected the subscribe stream on task {task} to carry its {state} state and close; another exchange showed it {state} {} ago and this stream is still open without it",
            crate::lifecycle::registry::secs(now.saturating_sub(seen))
        ),
    );
    f.task_id = Some(task.to_owned());
    f.context_id = r
        .context_id()
        .or(registry.context_of(task))
        .map(str::to_owned);
    Some(f)
}

// `capability_mismatch`: what an exchange did against the agent card last
// seen (a later card replaces it; before any card, or after one without a
// `capabilities` object, nothing is judged). Spec §4.4.3
// AgentCapabilities: a server that does not declare `streaming` does not
// support the streaming operations, nor push configs without
// `pushNotifications` (§11.5 errors UnsupportedOperation /
// PushNotificationNotSupported), nor the extended card without
// `extendedAgentCard`.

/// A streaming operation answered with an event stream while `card` does
/// not declare `capabilities.streaming`.
pub fn stream_against_card(card: &CardInfo, engine: &ExchangeEngine) -> Option<Finding> {
    if !card.has_capabilities {
        return None;
    }
    let op = engine.exchange().operation;
    let streaming_op = matches!(
        op,
        Operation::SendStreamingMessage | Operation::SubscribeToTask
    );
    if !streaming_op || !engine.is_stream() || card.streaming == Some(true) {
        return None;
    }
    let detail = format!(
        "expected no event stream: the agent card seen through the proxy has capabilities.streaming {}; {op} was answered with one",
        stated(card.streaming)
    );
    Some(Finding::new(Kind::CapabilityMismatch, detail))
}

/// A push-config creation or the extended card accepted (a 2xx answer
/// that is no A2A error) while `card` does not declare it.
pub fn accepted_against_card(card: &CardInfo, engine: &ExchangeEngine) -> Option<Finding> {
    if !card.has_capabilities {
        return None;
    }
    let r = engine.reducer();
    if !r.answered_success() || r.answered_error() {
        return None;
    }
    let op = engine.exchange().operation;
    let (flag, name) = match op {
        Operation::CreateTaskPushNotificationConfig => {
            (card.push_notifications, "capabilities.pushNotifications")
        }
        Operation::GetExtendedAgentCard => (card.extended_card, extended_name(card)),
        _ => return None,
    };
    if flag == Some(true) {
        return None;
    }
    let detail = format!(
        "expected {op} to be refused: the agent card seen through the proxy has {name} {}; the agent accepted it",
        stated(flag)
    );
    Some(Finding::new(Kind::CapabilityMismatch, detail))
}

/// How a card states a capability, for the detail.
fn stated(flag: Option<bool>) -> &'static str {
    match flag {
        Some(false) => "false",
        _ => "absent",
    }
}

/// The extended-card flag's name in the card's dialect.
fn extended_name(card: &CardInfo) -> &'static str {
    match card.dialect {
        Version::V1_0 => "capabilities.extendedAgentCard",
        Version::V0_3 => "supportsAuthenticatedExtendedCard",
    }
}
