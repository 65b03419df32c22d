//! Undoes a response's `Content-Encoding` for analysis only: the caller
//! always gets the original bytes.

use std::io::Write;

use brotli_decompressor::DecompressorWriter;
use flate2::write::{GzDecoder, ZlibDecoder};

/// A streaming decoder: compressed pieces in, plain bytes out. Memory is
/// bounded however hostile the body: input goes in small steps, and a step
/// that inflates past `STEP_OUTPUT_CAP` (a compression bomb, not text) is an
/// error, which leaves the exchange unjudged.
pub enum Inflate {
    Identity,
    // Boxed, as the rare case: inline, a gzip decoder would make every
    // exchange's engine (moved on open and close) 224 bytes larger.
    Gzip(Box<GzDecoder<Capped>>),
    Deflate(Box<ZlibDecoder<Capped>>),
    Brotli(Box<DecompressorWriter<Capped>>),
}

/// Compressed bytes fed per step.
const STEP_INPUT: usize = 1024;
/// Most plain bytes one step may yield (real text inflates ~10:1).
const STEP_OUTPUT_CAP: usize = 4 << 20;

/// A `Vec` sink that refuses to grow past `STEP_OUTPUT_CAP`.
#[derive(Default)]
pub struct Capped(Vec<u8>);

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + data.len() > STEP_OUTPUT_CAP {
            return Err(std::io::Error::other("inflated step over the cap"));
        }
        self.0.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A `Content-Encoding` the engine cannot undo, or a corrupt body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InflateError;

/// A `Content-Encoding` as far as the engine goes: one it can undo, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Deflate,
    Brotli,
    /// Anything else: the body is not judged.
    Unsupported,
}

impl Encoding {
    /// Reads a `Content-Encoding` value (absent or empty: identity).
    pub fn of(value: Option<&str>) -> Encoding {
        let Some(enc) = value.map(str::trim).filter(|e| !e.is_empty()) else {
            return Encoding::Identity;
        };
        if enc.eq_ignore_ascii_case("identity") {
            Encoding::Identity
        } else if enc.eq_ignore_ascii_case("gzip") || enc.eq_ignore_ascii_case("x-gzip") {
            Encoding::Gzip
        } else if enc.eq_ignore_ascii_case("deflate") {
            Encoding::Deflate
        } else if enc.eq_ignore_ascii_case("br") {
            Encoding::Brotli
        } else {
            Encoding::Unsupported
        }
    }
}

impl Inflate {
    /// The decoder for an encoding.
    pub fn for_encoding(encoding: Encoding) -> Result<Inflate, InflateError> {
        Ok(match encoding {
            Encoding::Identity => Inflate::Identity,
            Encoding::Gzip => Inflate::Gzip(Box::new(GzDecoder::new(Capped::default()))),
            Encoding::Deflate => Inflate::Deflate(Box::new(ZlibDecoder::new(Capped::default()))),
            Encoding::Brotli => {
                Inflate::Brotli(Box::new(DecompressorWriter::new(Capped::default(), 4096)))
            }
            Encoding::Unsupported => return Err(InflateError),
        })
    }

    /// True when bytes pass through untouched.
    pub fn is_identity(&self) -> bool {
        matches!(self, Inflate::Identity)
    }

    /// Feeds compressed bytes; calls `out` with whatever plain bytes result.
    pub fn push(&mut self, piece: &[u8], out: &mut impl FnMut(&[u8])) -> Result<(), InflateError> {
        if self.is_identity() {
            out(piece);
            return Ok(());
        }
        for step in piece.chunks(STEP_INPUT) {
            self.step(step, out)?;
        }
        Ok(())
    }

    fn step(&mut self, piece: &[u8], out: &mut impl FnMut(&[u8])) -> Result<(), InflateError> {
        let plain = match self {
            Inflate::Identity => {
                out(piece);
                return Ok(());
            }
            // flate2's writers keep what they inflated in their own buffer
            // until the next write; the flush hands it over now, so a frame
            // is judged as it passes, and the last one at all.
            Inflate::Gzip(d) => {
                d.write_all(piece).map_err(|_| InflateError)?;
                d.flush().map_err(|_| InflateError)?;
                d.get_mut()
            }
            Inflate::Deflate(d) => {
                d.write_all(piece).map_err(|_| InflateError)?;
                d.flush().map_err(|_| InflateError)?;
                d.get_mut()
            }
            Inflate::Brotli(d) => {
                d.write_all(piece).map_err(|_| InflateError)?;
                d.get_mut()
            }
        };
        if !plain.0.is_empty() {
            out(&plain.0);
            plain.0.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
}
