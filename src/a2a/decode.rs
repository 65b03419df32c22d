//! Body or frame bytes → one normalised `Decoded`, from any of: 1.0 JSON-RPC
//! envelope, 1.0 bare StreamResponse / Task / ListTasks result, 0.3 `kind`
//! objects, bare event objects of real-world dumps, JSON-RPC / REST errors.

use super::model::{Decoded, Malformed};

/// Decodes one JSON body or SSE event's data.
pub fn decode(data: &[u8]) -> Result<Decoded, Malformed> {
    let _ = data;
    todo!("engine-a")
}
