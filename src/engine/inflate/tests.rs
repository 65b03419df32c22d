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
        inf.push(piece, &mut |b| got.extend_from_slice(b)).unwrap();
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
        inf.push(&packed, &mut |b| got.extend_from_slice(b))
            .unwrap();
        assert_eq!(got, text, "{enc}");
        // Split anywhere: the bytes before the split are out before the rest comes.
        for at in [1, packed.len() / 2, packed.len() - 9, packed.len() - 1] {
            let mut inf = Inflate::for_encoding(Encoding::of(Some(enc))).unwrap();
            let mut got = Vec::new();
            inf.push(&packed[..at], &mut |b| got.extend_from_slice(b))
                .unwrap();
            let first = got.len();
            inf.push(&packed[at..], &mut |b| got.extend_from_slice(b))
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
    let result = inf.push(&gz, &mut |b| largest = largest.max(b.len()));
    assert!(largest <= STEP_OUTPUT_CAP);
    // Zeros inflate ~1000:1, so a 1 KiB step stays under the cap and the
    // bomb streams through in bounded steps instead.
    assert!(result.is_ok());
}

#[test]
fn unknown_encoding_and_garbage_are_errors() {
    assert!(Inflate::for_encoding(Encoding::of(Some("zstd"))).is_err());
    let mut inf = Inflate::for_encoding(Encoding::of(Some("gzip"))).unwrap();
    assert!(inf.push(b"definitely not gzip", &mut |_| {}).is_err());
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
