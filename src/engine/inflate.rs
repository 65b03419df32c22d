//! Undoes a response's `Content-Encoding` for analysis only: the caller
//! always gets the original bytes. What an exchange may inflate is budgeted
//! (`Budget`): a compression bomb costs the analysis thread a bounded
//! amount of work per wire byte and per exchange, whatever its ratio.

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

/// Why inflating stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InflateError {
    /// A `Content-Encoding` the engine cannot undo, or a corrupt body.
    Corrupt,
    /// The exchange inflated past its `Budget`.
    OverBudget,
}

/// Plain bytes an exchange may inflate before the ratio bound applies (a
/// short body of repeated text may well inflate 100:1 and more).
const RATIO_GRACE: u64 = 1 << 20;

/// What one exchange may inflate: at most `max_bytes` plain bytes in all,
/// and (past the first MiB) at most `max_ratio` plain bytes per compressed
/// byte, so the analysis CPU an exchange costs is bounded per wire byte and
/// in all (`analysis.max_inflated_bytes`, `analysis.max_inflate_ratio`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub max_bytes: u64,
    pub max_ratio: u64,
    /// Compressed bytes taken so far.
    wire: u64,
    /// Plain bytes they gave.
    plain: u64,
}

impl Budget {
    /// A fresh budget (nothing inflated yet).
    pub fn new(max_bytes: u64, max_ratio: u64) -> Budget {
        Budget {
            max_bytes,
            max_ratio,
            wire: 0,
            plain: 0,
        }
    }

    /// Counts `wire` compressed bytes that gave `plain` bytes; an error once
    /// the exchange is over its budget.
    pub fn take(&mut self, wire: usize, plain: usize) -> Result<(), InflateError> {
        self.wire = self.wire.saturating_add(wire as u64);
        self.plain = self.plain.saturating_add(plain as u64);
        let by_ratio = RATIO_GRACE.saturating_add(self.wire.saturating_mul(self.max_ratio));
        if self.plain > self.max_bytes || self.plain > by_ratio {
            return Err(InflateError::OverBudget);
        }
        Ok(())
    }

    /// Plain bytes the next `wire` compressed bytes may give at most.
    pub fn room(&self, wire: usize) -> usize {
        let wire = self.wire.saturating_add(wire as u64);
        let by_ratio = RATIO_GRACE.saturating_add(wire.saturating_mul(self.max_ratio));
        let left = self.max_bytes.min(by_ratio).saturating_sub(self.plain);
        usize::try_from(left).unwrap_or(usize::MAX)
    }
}

impl Default for Budget {
    /// 64 MiB, 100:1.
    fn default() -> Self {
        Budget::new(64 << 20, 100)
    }
}

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
            Encoding::Unsupported => return Err(InflateError::Corrupt),
        })
    }

    /// True when bytes pass through untouched.
    pub fn is_identity(&self) -> bool {
        matches!(self, Inflate::Identity)
    }

    /// Feeds compressed bytes; calls `out` with whatever plain bytes result.
    /// Stops, with an error, at a corrupt byte or once the exchange is over
    /// `budget` (checked after every small step, so a bomb is stopped
    /// within one step of its limit).
    pub fn push(
        &mut self,
        piece: &[u8],
        budget: &mut Budget,
        out: &mut impl FnMut(&[u8]),
    ) -> Result<(), InflateError> {
        if self.is_identity() {
            out(piece);
            return Ok(());
        }
        for step in piece.chunks(STEP_INPUT) {
            let plain = self.step(step, out)?;
            budget.take(step.len(), plain)?;
        }
        Ok(())
    }

    /// One step; the plain bytes it gave.
    fn step(&mut self, piece: &[u8], out: &mut impl FnMut(&[u8])) -> Result<usize, InflateError> {
        let plain = match self {
            Inflate::Identity => {
                out(piece);
                return Ok(piece.len());
            }
            // flate2's writers keep what they inflated in their own buffer
            // until the next write; the flush hands it over now, so a frame
            // is judged as it passes, and the last one at all.
            Inflate::Gzip(d) => {
                d.write_all(piece).map_err(|_| InflateError::Corrupt)?;
                d.flush().map_err(|_| InflateError::Corrupt)?;
                d.get_mut()
            }
            Inflate::Deflate(d) => {
                d.write_all(piece).map_err(|_| InflateError::Corrupt)?;
                d.flush().map_err(|_| InflateError::Corrupt)?;
                d.get_mut()
            }
            Inflate::Brotli(d) => {
                d.write_all(piece).map_err(|_| InflateError::Corrupt)?;
                d.get_mut()
            }
        };
        let n = plain.0.len();
        if n > 0 {
            out(&plain.0);
            plain.0.clear();
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests;
