//! The SSE framer: split-invariance over the seed fixtures, line-end and BOM
//! rules, oversized events and bounded memory, borrowing, never panicking.

use a2a_tap::sse::{Frame, Framer};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Out {
    Event {
        event: Vec<u8>,
        data: Vec<u8>,
        id: Option<Vec<u8>>,
        start: u64,
        end: u64,
    },
    Oversized {
        start: u64,
        end: u64,
    },
}

fn own(f: Frame<'_>) -> Out {
    match f {
        Frame::Event(e) => Out::Event {
            event: e.event.to_vec(),
            data: e.data.to_vec(),
            id: e.id.map(<[u8]>::to_vec),
            start: e.start,
            end: e.end,
        },
        Frame::Oversized { start, end } => Out::Oversized { start, end },
    }
}

/// Runs `stream` cut at `cuts` (sorted offsets); returns frames and what
/// `finish` discarded.
fn run(stream: &[u8], cuts: &[usize], max: usize) -> (Vec<Out>, u64) {
    let mut framer = Framer::new(max);
    let mut out = Vec::new();
    let mut from = 0;
    for &c in cuts.iter().chain(std::iter::once(&stream.len())) {
        let c = c.clamp(from, stream.len());
        framer.push(&stream[from..c], &mut |f| out.push(own(f)));
        assert!(framer.buffered_capacity() <= 2 * max + 16, "memory bound");
        from = c;
    }
    let discarded = framer.finish();
    (out, discarded)
}

fn whole(stream: &[u8]) -> (Vec<Out>, u64) {
    run(stream, &[], 1 << 20)
}

fn ev(data: &str, start: u64, end: u64) -> Out {
    Out::Event {
        event: Vec::new(),
        data: data.as_bytes().to_vec(),
        id: None,
        start,
        end,
    }
}

fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/seeds");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("seed dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "sse") {
            let bytes = std::fs::read(&path).expect("read seed");
            out.push((path.display().to_string(), bytes));
        }
    }
    assert_eq!(out.len(), 3, "the three seed fixtures");
    out
}

/// The seeds in their own line-end style, plus CRLF, CR, BOM and ping variants.
fn variants(bytes: &[u8]) -> Vec<Vec<u8>> {
    let crlf: Vec<u8> = bytes
        .iter()
        .flat_map(|&b| {
            if b == b'\n' {
                vec![b'\r', b'\n']
            } else {
                vec![b]
            }
        })
        .collect();
    let cr: Vec<u8> = bytes
        .iter()
        .map(|&b| if b == b'\n' { b'\r' } else { b })
        .collect();
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice(&crlf);
    let mut ping = b": ping\r\n\r\n".to_vec();
    ping.extend_from_slice(&crlf);
    ping.extend_from_slice(b": ping\r\n\r\n");
    vec![bytes.to_vec(), crlf, cr, bom, ping]
}

#[test]
fn seeds_frame_as_expected() {
    for (name, bytes) in seeds() {
        let (out, discarded) = whole(&bytes);
        assert_eq!(discarded, 0, "{name}");
        assert!(out.len() >= 3, "{name}: {out:?}");
        for o in &out {
            let Out::Event {
                data, start, end, ..
            } = o
            else {
                panic!("{name}: unexpected {o:?}")
            };
            assert!(data.starts_with(b"{") && data.ends_with(b"}"), "{name}");
            assert!(serde_json::from_slice::<serde_json::Value>(data).is_ok());
            assert!(bytes[*start as usize..*end as usize].ends_with(b"\n"));
        }
        for v in variants(&bytes) {
            let (o, d) = whole(&v);
            assert_eq!(d, 0);
            let datas = |o: &[Out]| -> Vec<Vec<u8>> {
                o.iter()
                    .filter_map(|x| match x {
                        Out::Event { data, .. } => Some(data.clone()),
                        _ => None,
                    })
                    .collect()
            };
            assert_eq!(datas(&o), datas(&out), "{name} variant");
        }
    }
}

#[test]
fn seeds_split_at_every_offset_and_pair_of_offsets() {
    for (name, bytes) in seeds() {
        for v in variants(&bytes) {
            let expected = whole(&v);
            for cut in 0..=v.len() {
                assert_eq!(run(&v, &[cut], 1 << 20), expected, "{name} cut {cut}");
            }
            for a in (0..v.len()).step_by(7) {
                for b in (a..v.len()).step_by(13) {
                    assert_eq!(run(&v, &[a, b], 1 << 20), expected, "{name} {a},{b}");
                }
            }
            let bytewise: Vec<usize> = (0..v.len()).collect();
            assert_eq!(run(&v, &bytewise, 1 << 20), expected, "{name} bytewise");
        }
    }
}

#[test]
fn crlf_split_across_pieces_is_one_line_end() {
    // "data: a\r" | "\n\r" | "\ndata: b\r\n\r\n": no phantom blank lines.
    let s = b"data: a\r\n\r\ndata: b\r\n\r\n";
    let (out, _) = run(s, &[8, 10], 64);
    assert_eq!(out, vec![ev("a", 0, 9), ev("b", 11, 20)]);
    // A CR then LF split must not end the block early.
    let s = b"data: a\r\ndata: b\r\n\r\n";
    let (out, _) = run(s, &[8], 64);
    assert_eq!(out, vec![ev("a\nb", 0, 18)]);
}

#[test]
fn lone_cr_line_ends() {
    let (out, d) = whole(b"data: a\rdata: b\r\rdata: c\r\r");
    assert_eq!(out, vec![ev("a\nb", 0, 16), ev("c", 17, 25)]);
    assert_eq!(d, 0);
}

#[test]
fn bom_is_skipped_only_at_stream_start() {
    let (out, _) = whole(b"\xEF\xBB\xBFdata: x\n\n");
    assert_eq!(out, vec![ev("x", 3, 11)]);
    // Split inside the BOM.
    let s = b"\xEF\xBB\xBFdata: x\n\n";
    for cut in 0..4 {
        assert_eq!(run(s, &[cut, cut + 1], 64).0, vec![ev("x", 3, 11)]);
    }
    // A BOM prefix that is not a BOM is content (here: a field name).
    let (out, _) = run(b"\xEF\xBBdata: x\n\n", &[1], 64);
    assert!(out.is_empty());
    let (out, _) = run(b"\xEF\xBB\ndata: x\n\n", &[1], 64);
    assert_eq!(out, vec![ev("x", 0, 11)], "one block, first field unknown");
    // A second BOM is content too.
    let (out, _) = whole(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n");
    assert!(out.is_empty());
}

#[test]
fn comments_fields_and_multiline_data() {
    let s = b": ping\n\nevent: error\nid: 42\nretry: 10\nfoo\ndata: {\ndata:  \"a\": 1\ndata\ndata: }\n\n";
    let (out, _) = whole(s);
    assert_eq!(
        out,
        vec![Out::Event {
            event: b"error".to_vec(),
            data: b"{\n \"a\": 1\n\n}".to_vec(),
            id: Some(b"42".to_vec()),
            start: 8,
            end: 77,
        }]
    );
    // No data line: nothing; an empty data line: an empty event (WHATWG).
    let (out, _) = whole(b"event: x\n\nid: 1\n\n: only a comment\n\n");
    assert!(out.is_empty());
    let (out, _) = whole(b"data\n\n");
    assert_eq!(out, vec![ev("", 0, 5)]);
    // A field name without colon but with a value is a different field.
    let (out, _) = whole(b"datax: 1\ndata:1\n\n");
    assert_eq!(out, vec![ev("1", 0, 16)]);
}

#[test]
fn unterminated_last_event_is_discarded_and_counted() {
    let (out, d) = whole(b"data: a\n\ndata: b\n");
    assert_eq!(out, vec![ev("a", 0, 8)]);
    assert_eq!(d, 8);
    let (_, d) = whole(b"data: a\n\n\n\n");
    assert_eq!(d, 0);
    let (_, d) = whole(b"\xEF\xBB");
    assert_eq!(d, 2);
}

#[test]
fn oversized_event_is_reported_once_then_resyncs() {
    let mut s = b"data: small\n\n".to_vec();
    let big_start = s.len() as u64;
    s.extend_from_slice(b"data: ");
    s.extend(std::iter::repeat_n(b'x', 5000));
    s.extend_from_slice(b"\ndata: more\n");
    let big_end = s.len() as u64;
    s.extend_from_slice(b"\ndata: after\n\n");
    let expected = vec![
        ev("small", 0, 12),
        Out::Oversized {
            start: big_start,
            end: big_end,
        },
        ev("after", big_end + 1, big_end + 13),
    ];
    assert_eq!(run(&s, &[], 100).0, expected);
    for step in [1usize, 3, 17, 64, 1000] {
        let cuts: Vec<usize> = (step..s.len()).step_by(step).collect();
        let mut framer = Framer::new(100);
        let mut out = Vec::new();
        let mut from = 0;
        for &c in cuts.iter().chain(std::iter::once(&s.len())) {
            framer.push(&s[from..c], &mut |f| out.push(own(f)));
            assert!(framer.buffered_capacity() <= 2 * 100 + 16, "step {step}");
            from = c;
        }
        assert_eq!(out, expected, "step {step}");
    }
    // Exactly at the limit is fine, one byte more is not.
    let s = b"data: 12345\n\n"; // block is 12 bytes
    assert_eq!(run(s, &[5], 12).0, vec![ev("12345", 0, 12)]);
    assert_eq!(
        run(s, &[5], 11).0,
        vec![Out::Oversized { start: 0, end: 12 }]
    );
}

#[test]
fn whole_piece_events_borrow_from_the_piece() {
    let piece = b"data: {\"a\":1}\r\n\r\nevent: e\ndata: x\n\n";
    let mut framer = Framer::new(1024);
    let range = piece.as_ptr_range();
    let mut n = 0;
    framer.push(piece, &mut |f| {
        let Frame::Event(e) = f else {
            panic!("oversized")
        };
        assert!(range.contains(&e.data.as_ptr()));
        assert!(range.contains(&e.event.as_ptr()) || e.event.is_empty());
        n += 1;
    });
    assert_eq!(n, 2);
    assert_eq!(framer.buffered_capacity(), 0, "nothing buffered");
}

#[test]
fn split_event_buffer_capacity_is_reused() {
    let frame = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\ndata: second line\n\n";
    let mut framer = Framer::new(4096);
    let mut count = 0;
    let mut caps = Vec::new();
    for _ in 0..1000 {
        let (a, b) = frame.split_at(20);
        framer.push(a, &mut |_| count += 1);
        framer.push(b, &mut |_| count += 1);
        caps.push(framer.buffered_capacity());
    }
    assert_eq!(count, 1000);
    assert!(caps.windows(2).skip(1).all(|w| w[0] == w[1]), "{caps:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_cuts_of_seeds_match_single_piece(
        which in 0usize..15,
        mut cuts in proptest::collection::vec(0usize..2000, 0..12),
    ) {
        let seeds = seeds();
        let vs = variants(&seeds[which % 3].1);
        let v = &vs[which / 3];
        cuts.sort_unstable();
        prop_assert_eq!(run(v, &cuts, 1 << 20), whole(v));
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_cuts_do_not_matter(
        bytes in proptest::collection::vec(
            prop_oneof![Just(b'\r'), Just(b'\n'), Just(b':'), Just(b' '), Just(0xEF), any::<u8>(),
                        Just(b'd'), Just(b'a'), Just(b't')], 0..400),
        mut cuts in proptest::collection::vec(0usize..400, 0..8),
        max in 0usize..64,
    ) {
        cuts.sort_unstable();
        let one = run(&bytes, &[], max);
        prop_assert_eq!(run(&bytes, &cuts, max), one);
    }
}
