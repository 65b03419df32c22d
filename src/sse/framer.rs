//! Incremental WHATWG event-stream framer. Bytes are pushed in arbitrary
//! pieces; complete events come out with the byte range they came from.

/// One dispatched event. Slices borrow from the pushed piece when the event
/// arrived whole in it, else from the framer's reusable buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field (empty when absent, meaning "message").
    pub event: &'a [u8],
    /// The `data:` lines joined with `\n` (never empty: an event with no data
    /// is not dispatched).
    pub data: &'a [u8],
    /// The `id:` field of this event, if it had one.
    pub id: Option<&'a [u8]>,
    /// Byte offset in the whole stream of the event's first byte.
    pub start: u64,
    /// Byte offset just past the blank line that ended it.
    pub end: u64,
}

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

/// The framer state for one stream.
#[derive(Debug)]
pub struct Framer {
    _max_event_bytes: usize,
}

impl Framer {
    /// A framer that skips events longer than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Framer {
        Framer {
            _max_event_bytes: max_event_bytes,
        }
    }

    /// Feeds one piece; calls `sink` for each frame completed by it.
    pub fn push(&mut self, piece: &[u8], sink: &mut impl FnMut(Frame<'_>)) {
        let _ = (piece, sink);
        todo!("engine-a")
    }

    /// End of stream. Per WHATWG an unterminated last event is discarded;
    /// returns the number of bytes so discarded (0 when clean).
    pub fn finish(&mut self) -> u64 {
        todo!("engine-a")
    }
}
