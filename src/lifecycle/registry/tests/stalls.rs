//! The stall watch (`registry/watch.rs`): what stalls, when, and what does not.

use super::*;
use crate::findings::Kind;

/// A task a stream follows stalls when the stream stays silent in one
/// state past its limit; once per state entry.
#[test]
fn a_watched_task_stalls_once_per_state_entry() {
    let mut r = reg(10);
    let s = r.open_exchange();
    let mut out = Vec::new();
    r.observe(&obs("t", Working, None, s), 1_000);
    r.watch("t");
    r.tick(601_000, &mut out);
    assert!(out.is_empty(), "exactly the limit is not past it");
    r.tick(601_001, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, Kind::StalledTask);
    assert_eq!(out[0].task_id.as_deref(), Some("t"));
    assert_eq!(out[0].context_id.as_deref(), Some("c"));
    // The same state again does not re-enter it.
    r.observe(&obs("t", Working, None, s), 700_000);
    r.tick(1_400_000, &mut out);
    assert_eq!(out.len(), 1);
    r.observe(&obs("t", InputRequired, None, s), 900_000);
    r.observe(&obs("t", Working, None, s), 901_000);
    r.tick(1_501_000, &mut out);
    assert_eq!(out.len(), 1);
    r.tick(1_501_001, &mut out);
    assert_eq!(out.len(), 2, "re-entry arms the watch again: {out:?}");
    // Terminal tasks never stall.
    r.observe(&obs("t", Failed, None, s), 1_600_000);
    r.tick(3_000_000, &mut out);
    assert_eq!(out.len(), 2);
}

/// Silence is measured from the last news of the task, not its entry into
/// the state: artifact chunks on its stream keep it from stalling.
#[test]
fn news_on_a_watched_stream_is_no_stall() {
    let mut r = reg(10);
    let s = r.open_exchange();
    let mut out = Vec::new();
    r.observe(&obs("t", Working, None, s), 0);
    r.watch("t");
    r.heard("t", 500_000);
    r.tick(1_000_000, &mut out);
    assert!(out.is_empty(), "{out:?}");
    r.tick(1_100_001, &mut out);
    assert_eq!(out.len(), 1, "silent 600.001 s since the last chunk");
}

/// What the proxy did not see is not evidence: a task no open stream
/// follows (its stream closed, or it was only polled) never stalls by the
/// clock alone; one whose stream closed stops counting.
#[test]
fn an_unwatched_task_never_stalls_by_the_clock() {
    let mut r = reg(10);
    let s = r.open_exchange();
    let mut out = Vec::new();
    r.observe(&obs("polled", Submitted, None, s), 0);
    r.observe(&obs("closed", Working, None, s), 0);
    r.watch("closed");
    r.unwatch("closed");
    r.unwatch("closed");
    r.tick(3_000_000, &mut out);
    assert!(out.is_empty(), "{out:?}");
    // Two streams: one ending leaves the other watching.
    r.observe(&obs("two", Working, None, s), 3_000_000);
    r.watch("two");
    r.watch("two");
    r.unwatch("two");
    r.tick(3_600_001, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].task_id.as_deref(), Some("two"));
    r.watch("never-seen");
}

/// A later answer showing the very status the task had when first seen in
/// that state (same `status.timestamp`) past the limit is a stall; a newer
/// timestamp, or none, is no evidence.
#[test]
fn a_later_answer_with_the_same_status_shows_a_stall() {
    let mut r = reg(10);
    let s = r.open_exchange();
    let ts = Some("2026-11-29T10:00:00Z");
    r.observe(&obs("t", Working, ts, s), 0);
    assert_eq!(
        r.observe(&obs("t", Working, ts, s), 600_000),
        Verdict::Recorded
    );
    assert_eq!(
        r.observe(&obs("t", Working, ts, s), 600_001),
        Verdict::Stalled {
            state: Working,
            sat: 600_001,
            limit: 600_000
        }
    );
    assert_eq!(
        r.observe(&obs("t", Working, ts, s), 900_000),
        Verdict::Recorded,
        "once"
    );
    // Touched since (a newer stamp), or unstamped: no evidence.
    r.observe(&obs("u", Working, ts, s), 0);
    let newer = Some("2026-11-29T10:05:00Z");
    assert_eq!(
        r.observe(&obs("u", Working, newer, s), 700_000),
        Verdict::Recorded
    );
    r.observe(&obs("v", Submitted, None, s), 0);
    assert_eq!(
        r.observe(&obs("v", Submitted, None, s), 700_000),
        Verdict::Recorded
    );
    let mut out = Vec::new();
    r.tick(5_000_000, &mut out);
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn unlimited_states_never_stall() {
    let mut r = Registry::new(RegistryConfig {
        stall: StallLimits {
            working: None,
            ..StallLimits::default()
        },
        ttl: 0,
        ..RegistryConfig::default()
    });
    let s = r.open_exchange();
    r.observe(&obs("t", Working, None, s), 0);
    let mut out = Vec::new();
    r.tick(u64::MAX, &mut out);
    assert!(out.is_empty());
    assert_eq!(r.len(), 1, "ttl 0 disables expiry");
}
