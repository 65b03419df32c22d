//! The metric labels of a classified exchange.

use crate::proxy::ExchangeLabels;

/// The metric labels of a classified exchange; slots 1..=52 name the
/// (binding, operation) pairs.
pub(super) fn labels_of(exchange: &crate::a2a::model::Exchange) -> ExchangeLabels {
    use crate::a2a::model::{Binding, Operation};
    let op = Operation::ALL
        .iter()
        .position(|o| *o == exchange.operation)
        .unwrap_or(0);
    let binding = match exchange.binding {
        Binding::JsonRpc => 0,
        Binding::Rest => 1,
        Binding::Grpc => 2,
        Binding::Webhook => 3,
    };
    ExchangeLabels {
        binding: exchange.binding.as_str(),
        method: exchange.operation.as_str(),
        slot: u8::try_from(1 + binding * Operation::ALL.len() + op).unwrap_or(u8::MAX),
    }
}
