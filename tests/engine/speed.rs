//! A rough per-frame cost of the reducer on the happy path, ignored by
//! default. Cheapest way to run it optimised (rebuilds only this crate):
//! `cargo test --config 'profile.dev.package.a2a-tap.opt-level=3' --test
//! engine frames_per_second -- --ignored --nocapture`; measured ~92 ns/frame on the
//! shared 2-core build machine. Criterion benches belong in `benches/`.

use std::time::Instant;

use crate::world::*;
use a2a_tap::a2a::model::Operation;
use a2a_tap::lifecycle::{End, Reducer, Registry, RegistryConfig};

#[test]
#[ignore = "a measurement, not a check: run it with --ignored --nocapture"]
fn frames_per_second() {
    // A registry holding 100 000 other tasks, and a stream that ends at
    // input-required so it can be replayed without findings.
    let mut reg = Registry::new(RegistryConfig::default());
    let mut out = Vec::new();
    for n in 0..99_999u64 {
        let seq = reg.open_exchange();
        let mut r = Reducer::new(ex(Operation::GetTask, None), seq);
        r.on_decoded(
            None,
            &task(&n.to_string(), "c", "working"),
            &mut reg,
            0,
            &mut out,
        );
    }
    let frames: Vec<_> = std::iter::once(task("t", "c", "working"))
        .chain((0..49).map(|_| upd("t", "c", "working")))
        .chain([art("t", "a", false, false)])
        .chain((0..48).map(|_| art("t", "a", true, false)))
        .chain([art("t", "a", true, true), upd("t", "c", "input_required")])
        .collect();
    let streams = 20_000u64;
    let start = Instant::now();
    for n in 0..streams {
        let seq = reg.open_exchange();
        let mut r = Reducer::new(ex(Operation::SendStreamingMessage, None), seq);
        r.on_response_head(200, true);
        for (i, f) in frames.iter().enumerate() {
            r.on_decoded(Some(i as u64), f, &mut reg, n, &mut out);
        }
        r.on_end(End::Upstream, &mut reg, n, &mut out);
    }
    let took = start.elapsed();
    let total = streams * frames.len() as u64;
    println!(
        "{total} frames in {took:?}: {:.0} ns/frame",
        took.as_nanos() as f64 / total as f64
    );
    assert!(out.is_empty(), "{:?}", out.first());
    assert_eq!(reg.len(), 100_000);
}
