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
