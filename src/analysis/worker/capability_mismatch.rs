//! `capability_mismatch` on the analysis thread: what an exchange did
//! against the agent card last seen through the proxy, judged by the
//! core's rules (`judge::rules`, spec §4.4.3) at the stream's head and at
//! the exchange's end.

use super::Worker;
use crate::judge::rules;

impl Worker {
    /// A streaming operation answered with an event stream while the card
    /// does not declare `capabilities.streaming`.
    pub(super) fn stream_against_card(&mut self, id: u64) {
        let (Some(card), Some(live)) = (&self.card, self.live.get_mut(id)) else {
            return;
        };
        if let Some(f) = rules::stream_against_card(card, &live.engine) {
            let exchange = live.engine.exchange().clone();
            self.report(id, Some(&exchange), vec![f]);
        }
    }

    /// A push-config creation or the extended card accepted (a 2xx answer
    /// that is no A2A error) while the card does not declare it.
    pub(super) fn accepted_against_card(&mut self, id: u64) {
        let (Some(card), Some(live)) = (&self.card, self.live.get_mut(id)) else {
            return;
        };
        if let Some(f) = rules::accepted_against_card(card, &live.engine) {
            let exchange = live.engine.exchange().clone();
            self.report(id, Some(&exchange), vec![f]);
        }
    }
}
