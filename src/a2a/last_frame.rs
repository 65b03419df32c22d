//! A stream's last content frame, kept with its decoding. An agent streams
//! an artifact (or messages) as frames that differ from one another only in
//! the text of their parts, which the decoder skips unread, and in the
//! artifact update's `append` and `lastChunk` flags. A frame that differs
//! from the kept one only inside some of the longest strings the decoder
//! skipped there (both versions of each free of escapes) and in the
//! literals of those two flags decodes to the kept result with the flags
//! it sets: that result is reused instead of decoding again.
//!
//! Why that holds: between the changes the bytes are identical, each
//! changed string still opens and closes at a quote with nothing in between
//! that is a quote, a backslash or a control character, a changed flag is
//! the other of `true` and `false`, and the whole frame is valid UTF-8; so
//! the cursor takes the same path through both frames, reads nothing of
//! the skipped strings' content, and reads the flags only as the flags of
//! the one artifact update the decoding holds.

use super::decode::Flags;
use super::decode::{decode, decode_noting_skipped};
use super::json::{plain_string_end, Skipped};
use super::model::{ArtifactUpdate, Decoded, Event, Malformed, MessageEvent, Payload, RpcId, Text};

/// Frames longer than this are not kept (the copy is held per stream).
pub const KEEP_MAX: usize = 2048;

/// Most frames decoded without looking for a kept one, after kept frames
/// went unused (e.g. chunks of several artifacts taking turns).
const MOST_REST: u32 = 64;

/// The last content frame of one stream and its decoding.
#[derive(Default)]
pub struct LastFrame {
    data: Vec<u8>,
    /// Where the longest skipped strings lie in `data`...
    skipped: Skipped,
    /// ...and the artifact update's flags.
    flags: Flags,
    decoded: Option<Decoded<'static>>,
    /// Whether the kept decoding has been reused.
    reused: bool,
    /// Kept frames replaced in a row without being reused.
    unused: u32,
    /// Frames left to decode without looking for a kept one...
    rest: u32,
    /// ...and how many the last such pause was (doubling while kept frames
    /// go unused, none after a reuse).
    pause: u32,
}

impl LastFrame {
    /// Decodes `data` (or reuses the kept decoding, when that is the
    /// result) and hands the result to `judge`.
    pub fn decode<R>(
        &mut self,
        data: &[u8],
        judge: impl FnOnce(Result<&Decoded<'_>, &Malformed>) -> R,
    ) -> R {
        if self.rest > 0 {
            self.rest -= 1;
            return judge(decode(data).as_ref());
        }
        if let Some(kept) = &mut self.decoded {
            if let Some(flips) = alike(&self.data, &self.skipped, &self.flags, data) {
                self.reused = true;
                (self.unused, self.pause) = (0, 0);
                return flips.judge(kept, judge);
            }
        }
        let mut skipped = Skipped::default();
        let mut flags = Flags::default();
        let decoded = decode_noting_skipped(data, &mut skipped, &mut flags);
        if let Ok(d) = &decoded {
            self.keep(data, d, skipped, flags);
        }
        judge(decoded.as_ref())
    }

    /// Bytes held for the kept frame.
    pub fn held_bytes(&self) -> usize {
        self.data.capacity()
    }

    /// Keeps an artifact update or message frame (the ones with parts) in
    /// place of the kept one; another kind of frame leaves that in place.
    /// The second kept frame in a row to be replaced unused starts a pause
    /// instead (one frame of a new shape, such as the first chunk of the
    /// next artifact, is not yet a pattern).
    fn keep(&mut self, data: &[u8], d: &Decoded<'_>, skipped: Skipped, flags: Flags) {
        let flags = match &d.payload {
            Payload::Event(Event::ArtifactUpdate(_)) => flags,
            Payload::Event(Event::Message(_)) => Flags::default(),
            _ => return,
        };
        if self.decoded.is_some() && !self.reused {
            self.unused += 1;
            if self.unused >= 2 {
                self.pause = (self.pause * 2).clamp(1, MOST_REST);
                (self.rest, self.unused) = (self.pause, 0);
                self.decoded = None;
                return;
            }
        }
        if (skipped.is_empty() && flags == Flags::default()) || data.len() > KEEP_MAX {
            self.decoded = None;
            return;
        }
        self.data.clear();
        self.data.extend_from_slice(data);
        self.skipped = skipped;
        self.flags = flags;
        self.reused = false;
        own_into(d, &mut self.decoded);
    }
}

/// New values of a kept artifact update's flags, where a frame swapped
/// their literals.
#[derive(Debug, Default, PartialEq, Eq)]
struct Flips {
    append: Option<bool>,
    last_chunk: Option<bool>,
}

impl Flips {
    /// Hands `judge` the kept decoding with these flags set, then sets them
    /// back (the kept decoding stays that of the kept frame).
    fn judge<R>(
        &self,
        kept: &mut Decoded<'static>,
        judge: impl FnOnce(Result<&Decoded<'_>, &Malformed>) -> R,
    ) -> R {
        let Payload::Event(Event::ArtifactUpdate(update)) = &mut kept.payload else {
            return judge(Ok(kept));
        };
        let was = (update.append, update.last_chunk);
        update.append = self.append.unwrap_or(was.0);
        update.last_chunk = self.last_chunk.unwrap_or(was.1);
        let judged = judge(Ok(kept));
        if let Payload::Event(Event::ArtifactUpdate(update)) = &mut kept.payload {
            (update.append, update.last_chunk) = was;
        }
        judged
    }
}

/// Whether `new` is `old` but for the content of skipped strings, each
/// changed into another run of plain string characters, and flag literals
/// swapped for the other one, and is valid UTF-8: if so, the flags `new`
/// swapped.
fn alike(old: &[u8], skipped: &Skipped, flags: &Flags, new: &[u8]) -> Option<Flips> {
    let mut flips = Flips::default();
    let (mut i, mut j) = (0, 0);
    loop {
        let same = common_prefix(&old[i..], &new[j..]);
        (i, j) = (i + same, j + same);
        if i == old.len() && j == new.len() {
            return Some(flips);
        }
        let at = u32::try_from(i).ok();
        if let Some((start, end)) = skipped.around(i, i) {
            if let Some(plain) = last_change_in_string(old, new, (i, j), start, end) {
                return plain.then_some(flips);
            }
            // A skipped string changes from here: it must close at its
            // first special character, and its content must be UTF-8 (the
            // bytes around it are `old`'s, and quotes are ASCII). Its
            // content before here is `old`'s, plain: the scan from its
            // start finds the same close.
            let from = j.checked_sub(i - start)?;
            let (close, utf8) = plain_string_end(new, from)?;
            if !utf8 {
                return None;
            }
            (i, j) = (end, close);
        } else if at.is_some() && (at == flags.append || at == flags.last_chunk) {
            let was = old.get(i) == Some(&b't');
            let other: &[u8] = if was { b"false" } else { b"true" };
            if !new[j..].starts_with(other) {
                return None;
            }
            if at == flags.append {
                flips.append = Some(!was);
            } else {
                flips.last_chunk = Some(!was);
            }
            (i, j) = (i + if was { 4 } else { 5 }, j + other.len());
        } else {
            return None;
        }
    }
}

/// When the frames, equal before `i` in `old` and `j` in `new`, where a
/// skipped string of `old` (content from `start`, closing quote at `end`)
/// changes, differ only in one run that ends inside that string, found by
/// comparing from their ends: whether the run of `new` is plain string
/// characters and keeps the string UTF-8. `None`: they differ further on
/// (the walk goes on). Only the run is scanned: the bytes on either side
/// of it are `old`'s, whose string content was plain and UTF-8.
fn last_change_in_string(
    old: &[u8],
    new: &[u8],
    (i, j): (usize, usize),
    start: usize,
    end: usize,
) -> Option<bool> {
    let tail = common_suffix(&old[i..], &new[j..]);
    if old.len() - tail > end {
        return None;
    }
    // Widen the run to whole characters of both frames, so that the bytes
    // kept on either side are whole characters of `old`'s content.
    let continues = |b: &[u8], at: usize| b.get(at).is_some_and(|c| c & 0xC0 == 0x80);
    let mut back = 0;
    while back < i - start && (continues(old, i - back) || continues(new, j - back)) {
        back += 1;
    }
    let mut to = new.len() - tail;
    while continues(new, to) {
        to += 1;
    }
    let run = new.get(j.checked_sub(back)?..to)?;
    Some(
        !run.iter().any(|&c| c == b'"' || c == b'\\' || c < 0x20)
            && std::str::from_utf8(run).is_ok(),
    )
}

/// How many leading bytes `a` and `b` share (sixteen at a time, compared
/// as one integer).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut same = 0;
    for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        let diff = word(x) ^ word(y);
        if diff != 0 {
            return same + (diff.trailing_zeros() / 8) as usize;
        }
        same += 16;
    }
    same + a[same..]
        .iter()
        .zip(&b[same..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// How many trailing bytes `a` and `b` share (sixteen at a time).
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut same = 0;
    for (x, y) in a.rchunks_exact(16).zip(b.rchunks_exact(16)) {
        let diff = word(x) ^ word(y);
        if diff != 0 {
            return same + (diff.leading_zeros() / 8) as usize;
        }
        same += 16;
    }
    same + a[..n - same]
        .iter()
        .rev()
        .zip(b[..n - same].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// Sixteen bytes as one integer, the first byte lowest.
#[inline(always)]
fn word(b: &[u8]) -> u128 {
    u128::from_le_bytes(b.try_into().unwrap_or([0; 16]))
}

/// Copies an artifact update or message frame's decoding into `slot`,
/// reusing the strings it holds.
fn own_into(d: &Decoded<'_>, slot: &mut Option<Decoded<'static>>) {
    let kept = slot.get_or_insert_with(|| Decoded {
        rpc_id: None,
        payload: Payload::Event(Event::Message(MessageEvent {
            message_id: None,
            task_id: None,
            context_id: None,
        })),
        dialect: None,
    });
    set_id(&mut kept.rpc_id, d.rpc_id.as_ref());
    kept.dialect = d.dialect;
    match (&d.payload, &mut kept.payload) {
        (Payload::Event(Event::ArtifactUpdate(a)), Payload::Event(Event::ArtifactUpdate(k))) => {
            set(&mut k.task_id, &a.task_id);
            set_opt(&mut k.context_id, a.context_id.as_deref());
            set(&mut k.artifact_id, &a.artifact_id);
            k.append = a.append;
            k.last_chunk = a.last_chunk;
        }
        (Payload::Event(Event::ArtifactUpdate(a)), other) => {
            *other = Payload::Event(Event::ArtifactUpdate(ArtifactUpdate {
                task_id: owned(&a.task_id),
                context_id: a.context_id.as_deref().map(owned),
                artifact_id: owned(&a.artifact_id),
                append: a.append,
                last_chunk: a.last_chunk,
            }));
        }
        (Payload::Event(Event::Message(m)), Payload::Event(Event::Message(k))) => {
            set_opt(&mut k.message_id, m.message_id.as_deref());
            set_opt(&mut k.task_id, m.task_id.as_deref());
            set_opt(&mut k.context_id, m.context_id.as_deref());
        }
        (Payload::Event(Event::Message(m)), other) => {
            *other = Payload::Event(Event::Message(MessageEvent {
                message_id: m.message_id.as_deref().map(owned),
                task_id: m.task_id.as_deref().map(owned),
                context_id: m.context_id.as_deref().map(owned),
            }));
        }
        _ => *slot = None,
    }
}

fn owned(s: &str) -> Text<'static> {
    Text::Owned(s.to_owned())
}

/// Sets `t` to `s`, reusing its buffer.
fn set(t: &mut Text<'static>, s: &str) {
    match t {
        Text::Owned(buf) => {
            buf.clear();
            buf.push_str(s);
        }
        Text::Borrowed(_) => *t = owned(s),
    }
}

fn set_opt(t: &mut Option<Text<'static>>, s: Option<&str>) {
    match (t.as_mut(), s) {
        (Some(t), Some(s)) => set(t, s),
        (_, s) => *t = s.map(owned),
    }
}

fn set_id(id: &mut Option<RpcId<'static>>, from: Option<&RpcId<'_>>) {
    match (id.as_mut(), from) {
        (Some(RpcId::Number(t)), Some(RpcId::Number(s)))
        | (Some(RpcId::String(t)), Some(RpcId::String(s))) => set(t, s),
        (_, from) => *id = from.cloned().map(RpcId::into_owned),
    }
}

#[cfg(test)]
mod tests;
