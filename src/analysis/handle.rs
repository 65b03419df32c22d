//! The handle that ends the analysis threads at shutdown, and the shared
//! registry's threads after them.

use std::sync::Arc;
use std::thread::JoinHandle;

use super::msg::Msg;
use super::shards::Shards;

/// Joins the analysis threads at shutdown, after each has judged every
/// message sent before the observers were dropped.
pub struct AnalysisHandle {
    pub(crate) threads: Vec<JoinHandle<()>>,
    pub(crate) shards: Arc<Shards>,
    /// The shared registry's threads, stopped after the analysis threads
    /// (which offer them their last facts).
    pub(crate) replicas: Option<super::shared_registry::Replicas>,
}

impl AnalysisHandle {
    /// Waits until every analysis thread has judged every message sent
    /// before this call, then ends them. Call after the proxy has drained.
    pub fn join(mut self) {
        for tx in self.shards.all() {
            tx.send(Msg::Shutdown);
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        if let Some(r) = self.replicas.take() {
            r.stop();
        }
    }
}
