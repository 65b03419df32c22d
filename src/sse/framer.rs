//! Incremental WHATWG event-stream framer. Bytes are pushed in arbitrary
//! pieces; complete events come out with the byte range they came from.
//!
//! Rules: lines end in LF, CRLF or a lone CR (a CR ending one piece and an LF
//! starting the next are one line end); a UTF-8 BOM at stream start is
//! skipped; a blank line ends a block; a block with no `data` line is not
//! dispatched. The result is the same however the stream is cut into pieces.
//!
//! Offsets: `start` is the stream offset of the block's first byte (the BOM
//! and the blank lines before it excluded); `end` is the offset where the
//! blank line that ended it begins, so `stream[start..end]` is the block's
//! lines with their line ends. Both are independent of how the stream was
//! cut, which `end` "past the blank line" could not be (a CR ending a piece
//! may or may not be followed by LF).
//!
//! Memory: a block wholly inside one piece is parsed in place, borrowing
//! from the piece. Only a block split across pieces is copied into `carry`;
//! a block longer than `max_event_bytes` is reported once as
//! [`Frame::Oversized`] and skipped to the next blank line, so neither
//! buffer grows past the limit. (Size is judged before parsing, so an
//! oversized block is reported even if it held no `data` line.)

use super::block::{find_eol, parse_block, parse_line, SseEvent};

/// What the framer hands out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame<'a> {
    Event(SseEvent<'a>),
    /// An event longer than the limit was skipped up to the next blank line.
    Oversized {
        start: u64,
        end: u64,
    },
}

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The framer state for one stream.
#[derive(Debug)]
pub struct Framer {
    max: usize,
    /// Stream offset of the next byte pushed.
    pos: u64,
    /// BOM bytes matched so far at stream start; `None` once decided.
    bom: Option<usize>,
    /// The previous byte was a CR: an LF now belongs to that line end.
    after_cr: bool,
    at_line_start: bool,
    /// A block has begun (some non-blank line started).
    open: bool,
    block_start: u64,
    /// The open block is longer than the limit: skip to its blank line.
    skipping: bool,
    /// Bytes of the open block from earlier pieces (empty unless split).
    carry: Vec<u8>,
    /// The open block started in an earlier piece.
    carried: bool,
    /// Joined `data` lines of multi-line events.
    scratch: Vec<u8>,
    /// Line ends seen in the open block...
    lines: u32,
    /// ...and where the first one is, in the piece it was seen in.
    first_eol: usize,
}

// === impl Framer ===

impl Framer {
    /// A framer that skips events longer than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Framer {
        Framer {
            max: max_event_bytes,
            pos: 0,
            bom: Some(0),
            after_cr: false,
            at_line_start: true,
            open: false,
            block_start: 0,
            skipping: false,
            carry: Vec::new(),
            carried: false,
            scratch: Vec::new(),
            lines: 0,
            first_eol: 0,
        }
    }

    /// Feeds one piece; calls `sink` for each frame completed by it.
    pub fn push(&mut self, piece: &[u8], sink: &mut impl FnMut(Frame<'_>)) {
        let mut piece = piece;
        if let Some(matched) = self.bom {
            let mut n = matched;
            while n < BOM.len() && n - matched < piece.len() && piece[n - matched] == BOM[n] {
                n += 1;
            }
            let used = n - matched;
            if n == BOM.len() {
                self.bom = None;
                self.pos = BOM.len() as u64;
                piece = &piece[used..];
            } else if used == piece.len() {
                self.bom = Some(n); // the piece was a BOM prefix: wait for more
                return;
            } else {
                // Not a BOM after all: the bytes held back are content.
                self.bom = None;
                piece = &piece[used..];
                self.scan(&BOM[..n], sink);
            }
        }
        self.scan(piece, sink);
    }

    /// End of stream. Per WHATWG an unterminated last event is discarded;
    /// returns the number of bytes so discarded (0 when clean). The framer
    /// is then ready for a new block at the same stream position.
    pub fn finish(&mut self) -> u64 {
        let discarded = match self.bom {
            Some(n) => n as u64,
            None if self.open => self.pos - self.block_start,
            None => 0,
        };
        self.pos += self.bom.unwrap_or(0) as u64;
        self.bom = None;
        self.open = false;
        self.skipping = false;
        self.carried = false;
        self.carry.clear();
        self.at_line_start = true;
        self.after_cr = false;
        discarded
    }

    /// Capacity of the internal buffers, in bytes: stays within about twice
    /// `max_event_bytes` whatever the input (tests assert it).
    pub fn buffered_capacity(&self) -> usize {
        self.carry.capacity() + self.scratch.capacity()
    }

    fn scan(&mut self, piece: &[u8], sink: &mut impl FnMut(Frame<'_>)) {
        let base = self.pos;
        let mut i = 0;
        // Where the open block begins in this piece (0 when carried over).
        let mut block_from = 0;
        while i < piece.len() {
            let b = piece[i];
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    i += 1;
                    continue;
                }
            }
            if self.at_line_start {
                if b == b'\r' || b == b'\n' {
                    if self.open {
                        self.dispatch(piece, block_from, i, base, sink);
                    }
                    self.after_cr = b == b'\r';
                    i += 1;
                    continue;
                }
                if !self.open {
                    self.open = true;
                    self.block_start = base + i as u64;
                    block_from = i;
                    self.lines = 0;
                }
                self.at_line_start = false;
            }
            match find_eol(&piece[i..]) {
                Some(k) => {
                    if self.lines == 0 {
                        self.first_eol = i + k;
                    }
                    self.lines = self.lines.saturating_add(1);
                    self.after_cr = piece[i + k] == b'\r';
                    self.at_line_start = true;
                    i += k + 1;
                }
                None => i = piece.len(),
            }
        }
        if self.open && !self.skipping {
            let tail = &piece[block_from..];
            if self.carry.len() + tail.len() > self.max {
                self.skipping = true;
                self.carry.clear();
            } else {
                self.extend_carry(tail);
                self.carried = true;
            }
        }
        self.pos = base + piece.len() as u64;
    }

    /// The blank line at `piece[at]` ends the open block.
    fn dispatch(
        &mut self,
        piece: &[u8],
        block_from: usize,
        at: usize,
        base: u64,
        sink: &mut impl FnMut(Frame<'_>),
    ) {
        let (start, end) = (self.block_start, base + at as u64);
        let carried = std::mem::replace(&mut self.carried, false);
        self.open = false;
        if std::mem::replace(&mut self.skipping, false) || end - start > self.max as u64 {
            self.carry.clear();
            sink(Frame::Oversized { start, end });
            return;
        }
        let event = if carried {
            self.extend_carry(&piece[..at]);
            parse_block(&self.carry, &mut self.scratch, start, end)
        } else if self.lines == 1 {
            // The usual block, one `data` line, all in this piece: its
            // line end is known, no need to split it again.
            let line = piece.get(block_from..self.first_eol).unwrap_or_default();
            parse_line(line, &mut self.scratch, start, end)
        } else {
            parse_block(&piece[block_from..at], &mut self.scratch, start, end)
        };
        if let Some(ev) = event {
            sink(Frame::Event(ev));
        }
        self.carry.clear();
    }

    /// Appends to `carry`, growing its capacity no further than the limit
    /// (callers never let its length pass the limit).
    fn extend_carry(&mut self, bytes: &[u8]) {
        let need = self.carry.len() + bytes.len();
        if need > self.carry.capacity() {
            let want = need.max(self.carry.capacity() * 2).min(self.max.max(need));
            self.carry.reserve_exact(want - self.carry.len());
        }
        self.carry.extend_from_slice(bytes);
    }
}
