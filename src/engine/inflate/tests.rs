use super::*;
use flate2::write::GzEncoder;
use flate2::Compression;

#[test]
fn gzip_in_pieces_round_trips() {
    let text = b"data: {\"a\":1}\n\n".repeat(100);
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(&text).unwrap();
    let gz = enc.finish().unwrap();
    let mut inf = Inflate::for_encoding(Encoding::of(Some("gzip"))).unwrap();
    let mut got = Vec::new();
    for piece in gz.chunks(7) {
        inf.push(piece, &mut Budget::default(), &mut |b| {
            got.extend_from_slice(b)
        })
        .unwrap();
    }
    assert_eq!(got, text);
}

#[test]
fn every_piece_yields_all_it_can_at_once() {
    use flate2::write::ZlibEncoder;
    let text = b"data: {\"a\":1}\n\n".repeat(50);
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&text).unwrap();
    let mut zl = ZlibEncoder::new(Vec::new(), Compression::default());
    zl.write_all(&text).unwrap();
    for (enc, packed) in [
        ("gzip", gz.finish().unwrap()),
        ("deflate", zl.finish().unwrap()),
    ] {
        // Whole in one piece: all of it out, with no later write to push it.
        let mut inf = Inflate::for_encoding(Encoding::of(Some(enc))).unwrap();
        let mut got = Vec::new();
        inf.push(&packed, &mut Budget::default(), &mut |b| {
            got.extend_from_slice(b)
        })
        .unwrap();
        assert_eq!(got, text, "{enc}");
        // Split anywhere: the bytes before the split are out before the rest comes.
        for at in [1, packed.len() / 2, packed.len() - 9, packed.len() - 1] {
            let mut inf = Inflate::for_encoding(Encoding::of(Some(enc))).unwrap();
            let mut got = Vec::new();
            inf.push(&packed[..at], &mut Budget::default(), &mut |b| {
                got.extend_from_slice(b)
            })
            .unwrap();
            let first = got.len();
            inf.push(&packed[at..], &mut Budget::default(), &mut |b| {
                got.extend_from_slice(b)
            })
            .unwrap();
            assert_eq!(got, text, "{enc} split at {at}");
            if at >= packed.len() - 9 {
                assert!(first > 0, "{enc}: nothing out before the trailer");
            }
        }
    }
}

#[test]
fn a_compression_bomb_is_refused_not_buffered() {
    // 64 MiB of zeros compress to ~64 KiB; no step may inflate it whole.
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    for _ in 0..64 {
        enc.write_all(&vec![0u8; 1 << 20]).unwrap();
    }
    let gz = enc.finish().unwrap();
    let mut inf = Inflate::for_encoding(Encoding::of(Some("gzip"))).unwrap();
    let mut largest = 0;
    let result = inf.push(&gz, &mut Budget::new(u64::MAX, u64::MAX), &mut |b| {
        largest = largest.max(b.len())
    });
    assert!(largest <= STEP_OUTPUT_CAP);
    // Zeros inflate ~1000:1, so a 1 KiB step stays under the cap and the
    // bomb streams through in bounded steps instead.
    assert!(result.is_ok());
}

#[test]
fn unknown_encoding_and_garbage_are_errors() {
    assert!(Inflate::for_encoding(Encoding::of(Some("zstd"))).is_err());
    let mut inf = Inflate::for_encoding(Encoding::of(Some("gzip"))).unwrap();
    assert!(inf
        .push(b"definitely not gzip", &mut Budget::default(), &mut |_| {})
        .is_err());
    assert!(Inflate::for_encoding(Encoding::of(None))
        .unwrap()
        .is_identity());
}

#[test]
fn encodings_are_read_without_case_or_surrounding_space() {
    let read = [
        (None, Encoding::Identity),
        (Some(""), Encoding::Identity),
        (Some(" Identity "), Encoding::Identity),
        (Some("x-GZIP"), Encoding::Gzip),
        (Some("gzip"), Encoding::Gzip),
        (Some("Deflate"), Encoding::Deflate),
        (Some(" br"), Encoding::Brotli),
        (Some("zstd"), Encoding::Unsupported),
        (Some("gzip, br"), Encoding::Unsupported),
    ];
    for (value, want) in read {
        assert_eq!(Encoding::of(value), want, "{value:?}");
    }
}

#[test]
fn a_bomb_stops_at_its_budget_within_a_step() {
    // 64 MiB of one byte: ~1000:1.
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    let block = vec![b'a'; 1 << 20];
    for _ in 0..64 {
        gz.write_all(&block).unwrap();
    }
    let gz = gz.finish().unwrap();
    // By ratio: 100:1 past the first MiB.
    let mut inf = Inflate::for_encoding(Encoding::Gzip).unwrap();
    let mut plain = 0usize;
    let mut budget = Budget::new(u64::MAX, 100);
    let r = inf.push(&gz, &mut budget, &mut |b| plain += b.len());
    assert_eq!(r, Err(InflateError::OverBudget));
    assert!(plain < (1 << 20) + (2 << 20), "stopped early: {plain}");
    // In all: 2 MiB.
    let mut inf = Inflate::for_encoding(Encoding::Gzip).unwrap();
    let mut plain = 0usize;
    let mut budget = Budget::new(2 << 20, u64::MAX);
    let r = inf.push(&gz, &mut budget, &mut |b| plain += b.len());
    assert_eq!(r, Err(InflateError::OverBudget));
    assert!(plain <= (2 << 20) + (1 << 20) + (4 << 20), "{plain}");
    // Real text at 10:1 never meets the ratio bound.
    let text: Vec<u8> = (0..200_000u32)
        .flat_map(|i| format!("data: {{\"n\":{i},\"s\":\"working\"}}\n\n").into_bytes())
        .collect();
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&text).unwrap();
    let gz = gz.finish().unwrap();
    let mut inf = Inflate::for_encoding(Encoding::Gzip).unwrap();
    let mut got = 0usize;
    inf.push(&gz, &mut Budget::default(), &mut |b| got += b.len())
        .unwrap();
    assert_eq!(got, text.len());
}
