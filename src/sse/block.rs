//! One complete event block (its lines, without the blank line) → the event's
//! fields, and the line-end search the framer scans with.

/// One dispatched event. Slices borrow from the pushed piece when the event
/// arrived whole in it, else from the framer's reusable buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field (empty when absent, meaning "message").
    pub event: &'a [u8],
    /// The `data:` lines joined with `\n`. Empty only when the event's one
    /// `data` line had no value (WHATWG dispatches that); an event with no
    /// `data` line at all is not dispatched.
    pub data: &'a [u8],
    /// The `id:` field of this event, if it had one (ids holding NUL are
    /// ignored, as WHATWG says).
    pub id: Option<&'a [u8]>,
    /// Byte offset in the whole stream of the event's first byte.
    pub start: u64,
    /// Byte offset where the blank line that ended it begins.
    pub end: u64,
}

/// Position of the first CR or LF in `s`: the loop the framer spends its
/// time in, so it is memchr's SIMD search (a third of the SWAR loop's time).
pub(crate) fn find_eol(s: &[u8]) -> Option<usize> {
    memchr::memchr2(b'\n', b'\r', s)
}

/// Splits `raw` into lines (CR, LF or CRLF ends; a last line without an end
/// is yielded too).
fn lines(raw: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = raw;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match find_eol(rest) {
            Some(i) => {
                let line = &rest[..i];
                let skip = if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                rest = &rest[i + skip..];
                Some(line)
            }
            None => {
                let line = rest;
                rest = &[];
                Some(line)
            }
        }
    })
}

/// Interprets one block per WHATWG. `None` when it holds no `data` line (such
/// a block is not dispatched). One data line borrows from `raw`; several are
/// joined into `scratch`, whose capacity is reused from block to block.
pub(crate) fn parse_block<'a>(
    raw: &'a [u8],
    scratch: &'a mut Vec<u8>,
    start: u64,
    end: u64,
) -> Option<SseEvent<'a>> {
    parse_lines(lines(raw), scratch, start, end)
}

/// `parse_block` for a block the framer saw to be one line (given without
/// its line end): nothing to split.
pub(crate) fn parse_line<'a>(
    line: &'a [u8],
    scratch: &'a mut Vec<u8>,
    start: u64,
    end: u64,
) -> Option<SseEvent<'a>> {
    parse_lines(std::iter::once(line), scratch, start, end)
}

fn parse_lines<'a>(
    lines: impl Iterator<Item = &'a [u8]>,
    scratch: &'a mut Vec<u8>,
    start: u64,
    end: u64,
) -> Option<SseEvent<'a>> {
    let mut event: &[u8] = &[];
    let mut id = None;
    let mut first: Option<&[u8]> = None;
    let mut joined = false;
    for line in lines {
        if line.first() == Some(&b':') {
            continue; // comment, e.g. `: ping`
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &line[line.len()..]),
        };
        match name {
            b"data" => match first {
                None => first = Some(value),
                Some(f) => {
                    if !joined {
                        scratch.clear();
                        scratch.extend_from_slice(f);
                        joined = true;
                    }
                    scratch.push(b'\n');
                    scratch.extend_from_slice(value);
                }
            },
            b"event" => event = value,
            b"id" if !value.contains(&0) => id = Some(value),
            _ => {} // `retry` and unknown fields
        }
    }
    let first = first?;
    let scratch: &'a Vec<u8> = scratch;
    let data = if joined { scratch.as_slice() } else { first };
    Some(SseEvent {
        event,
        data,
        id,
        start,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_eol_agrees_with_naive_search() {
        let mut s = vec![b'a'; 40];
        assert_eq!(find_eol(&s), None);
        for i in 0..s.len() {
            for b in [b'\n', b'\r'] {
                s[i] = b;
                assert_eq!(find_eol(&s), Some(i));
                s[i] = 0x8d; // high bytes must not produce false hits
                assert_eq!(find_eol(&s), None);
                s[i] = b'a';
            }
        }
    }

    #[test]
    fn lines_split_on_every_line_end() {
        let got: Vec<&[u8]> = lines(b"a\r\nb\rc\nd").collect();
        assert_eq!(got, vec![&b"a"[..], b"b", b"c", b"d"]);
    }

    #[test]
    fn a_one_line_block_reads_as_its_line() {
        let mut scratch = Vec::new();
        for line in [
            &b"data: {\"a\":1}"[..],
            b"data",
            b": comment",
            b"event: x",
            b"id: 3",
        ] {
            let mut block = line.to_vec();
            block.extend_from_slice(b"\r\n");
            let whole = parse_block(&block, &mut scratch, 0, 1).map(|e| format!("{e:?}"));
            let one = parse_line(line, &mut scratch, 0, 1).map(|e| format!("{e:?}"));
            assert_eq!(one, whole, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn block_fields() {
        let mut scratch = Vec::new();
        let raw = b"event: e\r\n: c\nid: 7\ndata: one\ndata:two\ndata\nretry: 5\nxyz: 1\n";
        let ev = parse_block(raw, &mut scratch, 0, 1).expect("has data");
        assert_eq!(ev.event, b"e");
        assert_eq!(ev.id, Some(&b"7"[..]));
        assert_eq!(ev.data, b"one\ntwo\n");
        let ev = parse_block(b"event: x\nid: 1\n", &mut scratch, 0, 1);
        assert!(ev.is_none());
        let ev = parse_block(b"data:  two spaces\n", &mut scratch, 0, 1);
        assert_eq!(ev.map(|e| e.data.to_vec()), Some(b" two spaces".to_vec()));
    }
}
