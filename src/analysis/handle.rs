//! The handle that ends the analysis thread at shutdown, and the shared
//! registry's threads after it.

use std::thread::JoinHandle;

use super::msg::Msg;
use super::queue::Sender;

/// Joins the analysis thread at shutdown, after it has judged every
/// message sent before the observers were dropped.
pub struct AnalysisHandle {
    pub(crate) thread: Option<JoinHandle<()>>,
    pub(crate) tx: Sender<Msg>,
    /// The shared registry's threads, stopped after the analysis thread
    /// (which offers them its last facts).
    pub(crate) replicas: Option<super::shared_registry::Replicas>,
}

impl AnalysisHandle {
    /// Waits until the analysis thread has judged every message sent before
    /// this call, then ends it. Call after the proxy has drained.
    pub fn join(mut self) {
        self.tx.send(Msg::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(r) = self.replicas.take() {
            r.stop();
        }
    }
}
