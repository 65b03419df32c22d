//! Request → exchange: binding, version, operation, ids and blocking flag,
//! from the request head and (for JSON-RPC and sends) a body prefix.

use super::model::Exchange;

/// Whether the classifier needs the request body to decide (JSON-RPC POSTs,
/// REST sends). GETs and other bodiless calls are classified from the head.
pub fn needs_body(method: &http::Method, uri: &http::Uri, headers: &http::HeaderMap) -> bool {
    let _ = (method, uri, headers);
    todo!("engine-a")
}

/// Classifies a request. `body` is the whole request body (the proxy gives up
/// on bodies larger than its limit). `None`: not A2A, pass without judging.
pub fn classify(
    method: &http::Method,
    uri: &http::Uri,
    headers: &http::HeaderMap,
    body: &[u8],
) -> Option<Exchange> {
    let _ = (method, uri, headers, body);
    todo!("engine-a")
}
