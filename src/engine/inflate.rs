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
mod tests;
