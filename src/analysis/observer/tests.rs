use super::*;
use crate::a2a::model::{Binding, Exchange, Operation, Version};
use crate::proxy::LABEL_SLOTS;

#[test]
fn every_label_pair_has_its_own_cacheable_slot() {
    let mut seen = std::collections::HashMap::new();
    for binding in [Binding::JsonRpc, Binding::Rest] {
        for op in Operation::ALL {
            let labels = labels_of(&Exchange {
                binding,
                version: Version::V1_0,
                operation: *op,
                rpc_id: None,
                task_id: None,
                context_id: None,
                blocking: false,
                guessed_path: None,
                message_id: None,
            });
            let slot = usize::from(labels.slot);
            assert!((1..LABEL_SLOTS).contains(&slot), "{labels:?}");
            let pair = (labels.binding, labels.method);
            assert_eq!(
                *seen.entry(slot).or_insert(pair),
                pair,
                "slot {slot} shared"
            );
        }
    }
    assert_eq!(seen.len(), 2 * Operation::ALL.len());
}
