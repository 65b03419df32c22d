//! Arbitrary bytes, cut at an arbitrary point, through the SSE framer and the
//! decoder (and the classifier, as a JSON-RPC body). Checks that nothing
//! panics and that the cut does not change what the framer yields.
#![no_main]

use a2a_tap::a2a::{classify::classify, decode::decode};
use a2a_tap::sse::{Frame, Framer};
use libfuzzer_sys::fuzz_target;

fn frames(pieces: &[&[u8]], max: usize) -> (Vec<String>, u64) {
    let mut framer = Framer::new(max);
    let mut out = Vec::new();
    for p in pieces {
        framer.push(p, &mut |f| {
            if let Frame::Event(e) = &f {
                let _ = decode(e.data);
            }
            out.push(format!("{f:?}"));
        });
    }
    (out, framer.finish())
}

fuzz_target!(|data: &[u8]| {
    let Some((&head, body)) = data.split_first() else {
        return;
    };
    let cut = usize::from(head) * body.len() / 255;
    let max = 64 + usize::from(head);
    let (a, b) = body.split_at(cut.min(body.len()));
    assert_eq!(frames(&[a, b], max), frames(&[body], max));
    let _ = decode(body);
    let uri = http::Uri::from_static("/a2a");
    let _ = classify(&http::Method::POST, &uri, &http::HeaderMap::new(), body);
});
