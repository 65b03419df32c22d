//! Arbitrary bytes as the offline inputs of `a2a-tap check` (an SSE body, a
//! JSON Lines file, a HAR archive, each with or without a sidecar naming
//! its requests) and as request heads and bodies for the classifier:
//! nothing may panic, and every finding must be a whole record.
#![no_main]

use a2a_tap::a2a::classify::classify;
use a2a_tap::check::judge_recording;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    // The first byte picks the input kind and where a sidecar starts.
    let cut = usize::from(head >> 2) * rest.len() / 63;
    let (body, side) = rest.split_at(cut.min(rest.len()));
    let ext = ["sse", "jsonl", "har", "json"][usize::from(head & 3)];
    for sidecar in [None, Some(side)] {
        if let Ok(records) = judge_recording(ext, body, sidecar) {
            for r in records {
                assert!(!r.detail.is_empty(), "a finding says what it is");
            }
        }
    }
    // The classifier, on any path and method, with the body as sent.
    let path = std::str::from_utf8(side)
        .ok()
        .filter(|p| p.starts_with('/'))
        .and_then(|p| p.parse::<http::Uri>().ok())
        .unwrap_or_else(|| http::Uri::from_static("/tasks/t1:cancel"));
    for method in [http::Method::GET, http::Method::POST, http::Method::DELETE] {
        let _ = classify(&method, &path, &http::HeaderMap::new(), body);
    }
});
