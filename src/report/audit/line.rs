//! A record's JSON line, written by hand: the same bytes `serde_json`
//! writes for `Record` (the tests compare them on arbitrary records), at
//! 30 % fewer instructions for the writer thread (a storm's record: 10,350
//! → 7,248 under callgrind). serde_json looks a string's bytes up one at a
//! time; here a string is scanned eight bytes at a time, and only a word
//! holding an escape is looked at closer. The `Serialize` derive stays for
//! `check` and `probe`'s JSON.

use super::{Record, Rule};

/// Appends `r`'s line (without its newline) to `out`.
pub(super) fn write(out: &mut Vec<u8>, r: &Record) {
    out.extend_from_slice(b"{\"ts\":");
    string(out, &r.ts);
    out.extend_from_slice(b",\"kind\":");
    string(out, r.kind);
    out.extend_from_slice(b",\"severity\":");
    string(out, r.severity);
    out.extend_from_slice(b",\"upstream\":");
    string(out, &r.upstream);
    out.extend_from_slice(b",\"binding\":");
    nullable(out, r.binding);
    out.extend_from_slice(b",\"version\":");
    nullable(out, r.version);
    out.extend_from_slice(b",\"method\":");
    nullable(out, r.method);
    out.extend_from_slice(b",\"task_id\":");
    nullable(out, r.task_id.as_deref());
    out.extend_from_slice(b",\"context_id\":");
    nullable(out, r.context_id.as_deref());
    out.extend_from_slice(b",\"request_id\":");
    nullable(out, r.request_id.as_deref());
    out.extend_from_slice(b",\"trace_id\":");
    nullable(out, r.trace_id.as_deref());
    out.extend_from_slice(b",\"event_index\":");
    match r.event_index {
        Some(n) => number(out, n),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"occurrences\":");
    number(out, r.occurrences);
    out.extend_from_slice(b",\"detail\":");
    string(out, &r.detail);
    out.extend_from_slice(b",\"evidence\":");
    nullable(out, r.evidence.as_deref());
    out.extend_from_slice(b",\"rule\":");
    rule(out, &r.rule);
    if let Some(replica) = &r.heard_from {
        out.extend_from_slice(b",\"heard_from\":");
        string(out, replica);
    }
    out.push(b'}');
}

/// `{"spec":..,"tck":[..]}`, each part left out when it is unknown.
fn rule(out: &mut Vec<u8>, rule: &Rule) {
    out.push(b'{');
    if let Some(spec) = rule.spec {
        out.extend_from_slice(b"\"spec\":");
        string(out, spec);
    }
    if !rule.tck.is_empty() {
        if rule.spec.is_some() {
            out.push(b',');
        }
        out.extend_from_slice(b"\"tck\":[");
        for (n, id) in rule.tck.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            string(out, id);
        }
        out.push(b']');
    }
    out.push(b'}');
}

fn nullable(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

fn number(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Eight bytes each.
const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// The high bit of each byte of `w` that JSON must escape (a control
/// character, `"` or `\`). A byte above one that must be escaped may be
/// marked too (a borrow carries into it), never one below: the lowest
/// mark is exact, and no mark means no escape.
#[inline(always)]
fn to_escape(w: u64) -> u64 {
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    control | zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\')))
}

/// `s` as a JSON string, escaped as serde_json escapes it: `\"`, `\\`,
/// the five short escapes, `\u00xx` (lower-case hex) for other control
/// characters; everything else as it is.
fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let mut at = 0;
    while at < bytes.len() {
        if let Some(word) = bytes.get(at..at + 8) {
            let marks = to_escape(u64::from_le_bytes(word.try_into().unwrap_or([0; 8])));
            if marks == 0 {
                at += 8;
                continue;
            }
            at += (marks.trailing_zeros() / 8) as usize;
        } else if !needs_escape(bytes[at]) {
            at += 1;
            continue;
        }
        out.extend_from_slice(&bytes[run..at]);
        escape(out, bytes[at]);
        at += 1;
        run = at;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

#[inline(always)]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The escape of `b`, a byte `needs_escape` named.
fn escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0xf)],
        ]),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::findings::Kind;

    fn line(r: &Record) -> String {
        let mut out = Vec::new();
        write(&mut out, r);
        String::from_utf8(out).expect("UTF-8")
    }

    /// Strings dense in what must be escaped, and in what must not: every
    /// control character, quotes, backslashes, DEL, multi-byte characters.
    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                (0u8..0x20).prop_map(char::from),
                Just('"'),
                Just('\\'),
                Just('\u{7f}'),
                Just('é'),
                Just('\u{2028}'),
                Just('😀'),
                any::<char>(),
                prop::char::range('a', 'z'),
            ],
            0..40,
        )
        .prop_map(|cs| cs.into_iter().collect())
    }

    fn record() -> impl Strategy<Value = Record> {
        let kinds = Kind::ALL;
        (
            (text(), 0..kinds.len(), text(), prop::option::of(text())),
            (
                prop::option::of(text()),
                prop::option::of(text()),
                prop::option::of(text()),
            ),
            (
                prop::option::of(any::<u64>()),
                any::<u64>(),
                text(),
                prop::option::of(text()),
                prop::option::of(text()),
                any::<bool>(),
            ),
        )
            .prop_map(
                |(
                    (ts, kind, upstream, task_id),
                    (context_id, request_id, trace_id),
                    (event_index, occurrences, detail, evidence, heard_from, bare),
                )| {
                    let kind = kinds[kind];
                    Record {
                        ts,
                        kind: kind.as_str(),
                        severity: "error",
                        upstream,
                        binding: bare.then_some("jsonrpc"),
                        version: (!bare).then_some("1.0"),
                        method: bare.then_some("SendStreamingMessage"),
                        task_id,
                        context_id,
                        request_id,
                        trace_id,
                        event_index,
                        occurrences,
                        detail,
                        evidence,
                        rule: if bare {
                            Rule::default()
                        } else {
                            Rule::of(kind)
                        },
                        heard_from,
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The line is serde_json's, byte for byte.
        #[test]
        fn a_line_is_serde_jsons_line(r in record()) {
            prop_assert_eq!(line(&r), serde_json::to_string(&r).unwrap());
        }

        /// Each string alone, at every length around the eight-byte steps.
        #[test]
        fn a_string_is_escaped_as_serde_json_escapes_it(s in text()) {
            let mut out = Vec::new();
            string(&mut out, &s);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&s).unwrap());
        }
    }

    /// Every byte that needs an escape, at every place in a word and past
    /// it, with plain bytes and other escapes around it.
    #[test]
    fn every_escape_at_every_offset() {
        for b in (0u8..0x20).chain([b'"', b'\\', 0x7f, b'!', b'#', b'[', b']']) {
            for at in 0..20 {
                for filler in ['a', '\u{1f}', '"', 'é'] {
                    let mut s: String = std::iter::repeat_n(filler, at).collect();
                    s.push(char::from(b));
                    s.push_str("tail-of-nine");
                    let mut out = Vec::new();
                    string(&mut out, &s);
                    assert_eq!(
                        String::from_utf8(out).unwrap(),
                        serde_json::to_string(&s).unwrap(),
                        "{b:#x} after {at} of {filler:?}"
                    );
                }
            }
        }
    }

    /// Long texts of escapes alone and long plain texts ending in one,
    /// after text already in the line.
    #[test]
    fn long_runs_of_escapes_have_room() {
        for len in [1, 7, 8, 9, 63, 64, 65, 1000, 4099] {
            for c in ['\u{1}', '\n', '"', 'a'] {
                let mut s: String = std::iter::repeat_n(c, len).collect();
                s.push('\u{1f}');
                let mut out = b"prefix".to_vec();
                string(&mut out, &s);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    format!("prefix{}", serde_json::to_string(&s).unwrap()),
                    "{len} of {c:?}"
                );
            }
        }
    }

    /// Every kind's rule (spec and conformance-kit ids) as serde_json
    /// writes it.
    #[test]
    fn every_kinds_rule_is_written_as_serde_json_writes_it() {
        for &kind in Kind::ALL {
            let mut out = Vec::new();
            rule(&mut out, &Rule::of(kind));
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&Rule::of(kind)).unwrap(),
                "{kind:?}"
            );
        }
    }
}
