//! `capability_mismatch`: what an exchange did against the agent card last
//! seen through the proxy (a later card replaces it; before any card, or
//! after one without a `capabilities` object, nothing is judged). Spec §4.4.3 AgentCapabilities: a server that does
//! not declare `streaming` does not support the streaming operations, nor
//! push configs without `pushNotifications` (§11.5 errors
//! UnsupportedOperation / PushNotificationNotSupported), nor the extended
//! card without `extendedAgentCard`.

use super::Worker;
use crate::a2a::card::CardInfo;
use crate::a2a::model::Operation;
use crate::findings::{Finding, Kind};

/// How a card states a capability, for the detail.
fn stated(flag: Option<bool>) -> &'static str {
    match flag {
        Some(false) => "false",
        _ => "absent",
    }
}

impl Worker {
    /// A streaming operation answered with an event stream while the card
    /// does not declare `capabilities.streaming`.
    pub(super) fn stream_against_card(&mut self, id: u64) {
        let (Some(card), Some(live)) = (&self.card, self.live.get_mut(id)) else {
            return;
        };
        if !card.has_capabilities {
            return;
        }
        let op = live.engine.exchange().operation;
        let streaming_op = matches!(
            op,
            Operation::SendStreamingMessage | Operation::SubscribeToTask
        );
        if !streaming_op || !live.engine.is_stream() || card.streaming == Some(true) {
            return;
        }
        let detail = format!(
            "expected no event stream: the agent card seen through the proxy has capabilities.streaming {}; {op} was answered with one",
            stated(card.streaming)
        );
        let exchange = live.engine.exchange().clone();
        self.report(
            id,
            Some(&exchange),
            vec![Finding::new(Kind::CapabilityMismatch, detail)],
        );
    }

    /// A push-config creation or the extended card accepted (a 2xx answer
    /// that is no A2A error) while the card does not declare it.
    pub(super) fn accepted_against_card(&mut self, id: u64) {
        let (Some(card), Some(live)) = (&self.card, self.live.get_mut(id)) else {
            return;
        };
        if !card.has_capabilities {
            return;
        }
        let r = live.engine.reducer();
        if !r.answered_success() || r.answered_error() {
            return;
        }
        let op = live.engine.exchange().operation;
        let (flag, name) = match op {
            Operation::CreateTaskPushNotificationConfig => {
                (card.push_notifications, "capabilities.pushNotifications")
            }
            Operation::GetExtendedAgentCard => (card.extended_card, extended_name(card)),
            _ => return,
        };
        if flag == Some(true) {
            return;
        }
        let detail = format!(
            "expected {op} to be refused: the agent card seen through the proxy has {name} {}; the agent accepted it",
            stated(flag)
        );
        let exchange = live.engine.exchange().clone();
        self.report(
            id,
            Some(&exchange),
            vec![Finding::new(Kind::CapabilityMismatch, detail)],
        );
    }
}

/// The extended-card flag's name in the card's dialect.
fn extended_name(card: &CardInfo) -> &'static str {
    match card.dialect {
        crate::a2a::model::Version::V1_0 => "capabilities.extendedAgentCard",
        crate::a2a::model::Version::V0_3 => "supportsAuthenticatedExtendedCard",
    }
}
