use super::*;

const D: Deadlines = Deadlines {
    header_read: Duration::from_secs(30),
    idle: Duration::from_secs(60),
    write: Duration::from_secs(8),
};

#[test]
fn a_silent_connection_is_closed_at_the_header_deadline() {
    let t0 = Instant::now();
    let a = Activity::new(t0);
    assert_eq!(a.verdict(t0, &D), Verdict::Wait(Duration::from_secs(30)));
    assert_eq!(
        a.verdict(t0 + Duration::from_secs(30), &D),
        Verdict::Close(Closed::HeaderTimeout)
    );
}

#[test]
fn idle_counts_from_the_last_exchange_end() {
    let t0 = Instant::now();
    let a = Activity::new(t0);
    a.begin();
    assert!(matches!(
        a.verdict(t0 + Duration::from_secs(600), &D),
        Verdict::Wait(_)
    ));
    a.end();
    let ended = Duration::from_millis(a.last_end.load(Ordering::Relaxed));
    assert_eq!(
        a.verdict(t0 + ended + Duration::from_secs(59), &D),
        Verdict::Wait(Duration::from_secs(1))
    );
    assert_eq!(
        a.verdict(t0 + ended + Duration::from_secs(60), &D),
        Verdict::Close(Closed::Idle)
    );
}

#[test]
fn a_chunk_never_taken_past_the_write_timeout_closes() {
    let t0 = Instant::now();
    let a = Activity::new(t0);
    a.begin();
    a.handed();
    let at = |s: u64| t0 + Duration::from_secs(s);
    assert_eq!(a.verdict(at(1), &D), Verdict::Wait(Duration::from_secs(2)));
    assert_eq!(a.verdict(at(8), &D), Verdict::Wait(Duration::from_secs(2)));
    assert_eq!(a.verdict(at(9), &D), Verdict::Close(Closed::WriteTimeout));
    // A caller that keeps taking chunks, however slowly, is reading.
    let b = Activity::new(t0);
    b.begin();
    for s in 1..20 {
        b.handed();
        assert!(matches!(b.verdict(at(s * 5), &D), Verdict::Wait(_)), "{s}");
        b.taken();
    }
    // Waiting on the upstream (nothing handed) is not the caller's.
    assert!(matches!(b.verdict(at(500), &D), Verdict::Wait(_)));
}

#[test]
fn a_write_that_waits_with_nothing_moved_past_the_write_timeout_closes() {
    let t0 = Instant::now();
    let at = |s: u64| t0 + Duration::from_secs(s);
    let a = Activity::new(t0);
    a.begin();
    // The chunk was counted as taken (the body asked again), then the
    // write waits on the caller.
    a.handed();
    a.taken();
    a.write_waits();
    assert!(matches!(a.verdict(at(1), &D), Verdict::Wait(_)));
    // Some bytes moved, and the next write waits: the caller is reading.
    a.write_went(true);
    a.write_waits();
    assert!(matches!(a.verdict(at(9), &D), Verdict::Wait(_)));
    assert_eq!(a.verdict(at(17), &D), Verdict::Close(Closed::WriteTimeout));
    // A write that went through leaves nothing waiting on the caller.
    let b = Activity::new(t0);
    b.begin();
    b.write_waits();
    assert!(matches!(b.verdict(at(1), &D), Verdict::Wait(_)));
    b.write_went(true);
    assert!(matches!(b.verdict(at(500), &D), Verdict::Wait(_)));
}

#[test]
fn an_ended_answer_still_being_written_is_a_write_stall_not_idleness() {
    let t0 = Instant::now();
    let at = |s: u64| t0 + Duration::from_secs(s);
    let d = Deadlines {
        header_read: Duration::from_secs(30),
        idle: Duration::from_secs(4),
        write: Duration::from_secs(8),
    };
    let a = Activity::new(t0);
    a.begin();
    a.handed();
    // The body's end was there with its last chunk: the exchange ended
    // before the write, which waits on the caller.
    a.taken();
    a.end();
    a.write_waits();
    assert!(matches!(a.verdict(at(1), &d), Verdict::Wait(_)));
    assert!(matches!(a.verdict(at(6), &d), Verdict::Wait(_)), "not idle");
    assert_eq!(a.verdict(at(9), &d), Verdict::Close(Closed::WriteTimeout));
    // Written out, the connection is idle from the exchange's end.
    let b = Activity::new(t0);
    b.begin();
    b.end();
    b.write_waits();
    b.write_went(true);
    assert_eq!(b.verdict(at(500), &d), Verdict::Close(Closed::Idle));
}
