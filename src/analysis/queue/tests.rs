use super::*;
use std::time::Instant;

/// Runs `send(tx, t)` on four threads (`t` = 0..4) and takes all they sent.
fn sent_by_four_threads(
    send: impl Fn(&Sender<(usize, usize)>, usize) + Clone + Send + 'static,
) -> Vec<(usize, usize)> {
    let (tx, rx) = queue::<(usize, usize)>(usize::MAX);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (tx, send) = (tx.clone(), send.clone());
            std::thread::spawn(move || send(&tx, t))
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().expect("sender"));
    let mut all = Vec::new();
    rx.take(&mut all, &mut Vec::new());
    all
}

#[test]
fn items_come_out_in_the_order_they_were_sent_from_all_threads() {
    let all = sent_by_four_threads(|tx, t| (0..10_000).for_each(|i| tx.send((t, i))));
    assert_eq!(all.len(), 40_000);
    // Each sender's items keep their order.
    let mut next = [0usize; 4];
    for (t, i) in all {
        assert_eq!(i, next[t], "sender {t}");
        next[t] += 1;
    }
}

#[test]
fn bytes_past_the_budget_are_refused_until_given_back() {
    let (tx, rx) = queue::<u32>(100);
    let send = |items: &[u32], bytes| tx.send_with(bytes, |q| q.items.extend_from_slice(items));
    assert!(send(&[1, 2], 60));
    let refused = tx.send_with(41, |_| panic!("filled over the budget"));
    assert!(!refused, "61..=101 is over");
    assert!(send(&[4, 5], 40), "exactly the limit");
    tx.send(6); // weightless
    assert!(!send(&[7], 1));
    let mut got = Vec::new();
    rx.take(&mut got, &mut Vec::new());
    assert_eq!(got, [1, 2, 4, 5, 6], "a refused batch is not queued");
    assert!(!send(&[8], 1), "taken is not given back");
    rx.give_back(60);
    assert!(send(&[9], 60));
    assert!(!send(&[10], usize::MAX), "no overflow");
}

#[test]
fn a_batch_is_not_interleaved_with_other_senders() {
    let all = sent_by_four_threads(|tx, t| {
        for b in 0..1_000 {
            assert!(tx.send_with(0, |q| q.items.extend((0..5).map(|i| (t, b * 5 + i)))));
        }
    });
    assert_eq!(all.len(), 20_000);
    for batch in all.chunks(5) {
        let (t, first) = batch[0];
        assert_eq!(first % 5, 0, "a batch starts at its first item");
        let expected: Vec<_> = (first..first + 5).map(|i| (t, i)).collect();
        assert_eq!(batch, expected.as_slice());
    }
}

#[test]
fn the_count_sent_is_what_was_queued_and_nothing_refused() {
    let (tx, rx) = queue::<u32>(10);
    assert_eq!(tx.sent(), 0);
    tx.send(1);
    assert!(tx.send_with(10, |q| q.items.extend([2, 3, 4])));
    assert!(!tx.send_with(1, |q| q.items.push(5)), "over the budget");
    assert!(tx.send_with(0, |_| {}), "an empty batch");
    assert_eq!(tx.sent(), 4);
    let mut got = Vec::new();
    rx.take(&mut got, &mut Vec::new());
    assert_eq!(got, [1, 2, 3, 4], "item n was the n-th counted");
    assert_eq!(tx.sent(), 4, "taking does not uncount");
    assert_eq!(rx.sent(), 4, "the receiver reads the same count");
    assert_eq!(rx.in_flight(), (10, 10), "bytes sent, not given back");
    rx.give_back(4);
    assert!(tx.reserve(3));
    assert_eq!(rx.in_flight(), (9, 10));
    tx.unreserve(3);
    assert!(!tx.reserve(5), "over the budget");
    assert_eq!(
        rx.in_flight(),
        (6, 10),
        "a refused reservation takes nothing"
    );
    // From every thread, each item counted once.
    let all = sent_by_four_threads(|tx, t| (0..1_000).for_each(|i| tx.send((t, i))));
    assert_eq!(all.len(), 4_000);
}

#[test]
fn a_parked_receiver_wakes_for_a_send_and_not_before() {
    let (tx, rx) = queue::<u32>(usize::MAX);
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        tx.send(7);
    });
    let started = Instant::now();
    rx.wait(Duration::from_secs(30));
    let waited = started.elapsed();
    let mut got = Vec::new();
    rx.take(&mut got, &mut Vec::new());
    assert_eq!(got, [7]);
    assert!(waited >= Duration::from_millis(40), "{waited:?}");
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    sender.join().expect("sender");
    assert!(rx.senders_gone());
}

#[test]
fn waiting_on_an_empty_queue_times_out() {
    let (tx, rx) = queue::<u32>(usize::MAX);
    let started = Instant::now();
    rx.wait(Duration::from_millis(20));
    assert!(started.elapsed() >= Duration::from_millis(20));
    let mut got = Vec::new();
    rx.take(&mut got, &mut Vec::new());
    assert!(got.is_empty());
    assert!(!rx.senders_gone());
    drop(tx);
    assert!(rx.senders_gone());
}

#[test]
fn items_find_their_bytes_in_the_buffer_taken_with_them() {
    let (tx, rx) = queue::<std::ops::Range<usize>>(usize::MAX);
    for piece in [&b"abc"[..], b"", b"defgh"] {
        assert!(tx.send_with(piece.len(), |q| {
            let at = q.copy(piece);
            q.items.push(at);
        }));
    }
    let (mut items, mut bytes) = (Vec::new(), Vec::new());
    rx.take(&mut items, &mut bytes);
    let pieces: Vec<&[u8]> = items.iter().map(|r| &bytes[r.clone()]).collect();
    assert_eq!(pieces, [&b"abc"[..], b"", b"defgh"]);
    // The next drain's bytes start afresh in the buffer handed back.
    items.clear();
    bytes.clear();
    rx.take(&mut items, &mut bytes);
    assert!(tx.send_with(2, |q| {
        let at = q.copy(b"ij");
        q.items.push(at);
    }));
    let (mut items, mut bytes) = (Vec::new(), Vec::new());
    rx.take(&mut items, &mut bytes);
    assert_eq!(items, vec![0..2]);
    assert_eq!(bytes, b"ij");
}

#[test]
fn an_oversized_byte_buffer_is_not_kept() {
    let (tx, rx) = queue::<u8>(usize::MAX);
    let mut big = Vec::with_capacity(KEEP_BYTES + 1);
    rx.take(&mut Vec::new(), &mut big);
    assert!(rx.0.lock().bytes.capacity() <= KEEP_BYTES);
    assert!(tx.send_with(1, |q| {
        q.copy(b"x");
    }));
    let mut bytes = Vec::new();
    rx.take(&mut Vec::new(), &mut bytes);
    assert_eq!(bytes, b"x");
}

#[test]
fn an_oversized_buffer_is_not_kept() {
    let (tx, rx) = queue::<u8>(usize::MAX);
    let mut big = Vec::with_capacity(KEEP_CAPACITY + 1);
    rx.take(&mut big, &mut Vec::new());
    // The senders append to a fresh buffer, never the oversized one.
    assert!(rx.0.lock().items.capacity() <= KEEP_CAPACITY);
    tx.send(1);
    let mut got = Vec::new();
    rx.take(&mut got, &mut Vec::new());
    assert_eq!(got, [1]);
}
