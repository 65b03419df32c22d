use proptest::prelude::*;

use super::*;
use crate::a2a::decode::decode;

fn chunk(text: &str, append: bool) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"artifactUpdate":{{"taskId":"t-1","contextId":"c-1","append":{append},"artifact":{{"artifactId":"a-1","parts":[{{"text":"{text}"}}]}}}}}}}}"#
    )
    .into_bytes()
}

/// A 0.3 artifact update: its flags come after the artifact's text.
fn kind_chunk(text: &str, append: bool, last: bool) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"kind":"artifact-update","taskId":"t-1","contextId":"c-1","artifact":{{"artifactId":"a-1","parts":[{{"kind":"text","text":"{text}"}}]}},"append":{append},"lastChunk":{last}}}}}"#
    )
    .into_bytes()
}

/// An `append` on the envelope, beside the update, not in it.
fn outer_flag(text: &str, append: bool) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"append":{append},"result":{{"artifactUpdate":{{"taskId":"t-1","artifact":{{"artifactId":"a-1","parts":[{{"text":"{text}"}}]}}}}}}}}"#
    )
    .into_bytes()
}

/// Two updates built, the first returned (the envelope's `result`), the
/// second beside it.
fn two_updates(text: &str, append: bool, beside: bool) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"artifactUpdate":{{"taskId":"t-1","append":{append},"artifact":{{"artifactId":"a-1","parts":[{{"text":"{text}"}}]}}}}}},"artifactUpdate":{{"taskId":"t-2","append":{beside},"artifact":{{"artifactId":"a-2"}}}}}}"#
    )
    .into_bytes()
}

fn status(state: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"statusUpdate":{{"taskId":"t-1","contextId":"c-1","status":{{"state":"{state}"}}}}}}}}"#
    )
    .into_bytes()
}

/// Judges `data` through `last` and checks the result is what a fresh
/// decode gives; returns whether the kept decoding was reused.
fn judge(last: &mut LastFrame, data: &[u8]) -> bool {
    let reused = last.rest == 0
        && last.decoded.is_some()
        && alike(&last.data, &last.skipped, &last.flags, data).is_some();
    let fresh = decode(data);
    last.decode(data, |got| {
        assert_eq!(got, fresh.as_ref(), "{}", String::from_utf8_lossy(data))
    });
    reused
}

#[test]
fn a_frame_that_differs_only_in_skipped_text_reuses_the_kept_decoding() {
    let mut last = LastFrame::default();
    assert!(!judge(&mut last, &chunk("The quarterly figures", true)));
    assert!(judge(&mut last, &chunk("show a steady rise", true)));
    assert!(judge(&mut last, &chunk("", true)));
    assert!(judge(
        &mut last,
        &chunk("in throughput, caf\u{e9} \u{1F600}", true)
    ));
    // The very same frame again.
    assert!(judge(&mut last, &chunk("The quarterly figures", true)));
}

#[test]
fn a_frame_that_swaps_the_updates_flags_reuses_the_kept_decoding_with_them() {
    let mut last = LastFrame::default();
    assert!(!judge(&mut last, &chunk("one", false)));
    assert!(judge(&mut last, &chunk("two", true)));
    assert!(judge(&mut last, &chunk("three", true)));
    assert!(judge(&mut last, &chunk("one", false)), "kept as it was");
    // Flags after the text, one or both swapped, the text changed or not.
    let mut last = LastFrame::default();
    assert!(!judge(&mut last, &kind_chunk("first", false, false)));
    assert!(judge(&mut last, &kind_chunk("second", true, false)));
    assert!(judge(&mut last, &kind_chunk("second", true, false)));
    assert!(judge(&mut last, &kind_chunk("the last one", true, true)));
    assert!(judge(&mut last, &kind_chunk("", false, true)));
    assert!(judge(&mut last, &kind_chunk("first", false, false)));
}

#[test]
fn an_artifact_streamed_with_a_replacing_first_and_a_closing_last_chunk_is_decoded_once() {
    let chunk = |i: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"artifactUpdate":{{"taskId":"t-1","contextId":"c-1","append":{},"lastChunk":{},"artifact":{{"artifactId":"a-1","parts":[{{"text":"chunk {i:02} of the answer"}}]}}}}}}}}"#,
            i > 0,
            i == 16
        )
    };
    let mut last = LastFrame::default();
    let reused: Vec<bool> = (0..17)
        .map(|i| judge(&mut last, chunk(i).as_bytes()))
        .collect();
    assert!(!reused[0]);
    assert!(reused[1..].iter().all(|r| *r), "{reused:?}");
}

#[test]
fn a_flag_that_is_not_the_returned_updates_own_decodes_again() {
    let mut last = LastFrame::default();
    judge(&mut last, &outer_flag("one", false));
    assert!(judge(&mut last, &outer_flag("two", false)));
    assert!(!judge(&mut last, &outer_flag("two", true)));
    let mut last = LastFrame::default();
    judge(&mut last, &two_updates("one", false, false));
    assert!(judge(&mut last, &two_updates("two", false, false)));
    assert!(!judge(&mut last, &two_updates("two", true, false)));
    judge(&mut last, &two_updates("one", false, false));
    assert!(!judge(&mut last, &two_updates("two", false, true)));
    // Not a literal swap: `null`, or another literal.
    let mut last = LastFrame::default();
    judge(&mut last, &chunk("one", false));
    for other in ["null", "falsy", "tru", "\"true\"", "true "] {
        let f = String::from_utf8(chunk("one", false))
            .unwrap()
            .replace(r#""append":false"#, &format!(r#""append":{other}"#));
        assert!(!judge(&mut last, f.as_bytes()), "{other}");
        judge(&mut last, &chunk("one", false));
    }
}

#[test]
fn a_difference_outside_the_skipped_string_decodes_again() {
    let mut last = LastFrame::default();
    judge(&mut last, &chunk("one", true));
    let other_task = String::from_utf8(chunk("four", true))
        .unwrap()
        .replace("t-1", "t-2");
    assert!(!judge(&mut last, other_task.as_bytes()));
    let other_artifact = String::from_utf8(chunk("five", true))
        .unwrap()
        .replace("a-1", "a-22");
    assert!(!judge(&mut last, other_artifact.as_bytes()));
    let extra_member = String::from_utf8(chunk("six", true))
        .unwrap()
        .replace(r#""text":"six""#, r#""text":"six","lastChunk":true"#);
    assert!(!judge(&mut last, extra_member.as_bytes()));
}

#[test]
fn a_new_text_that_is_not_a_plain_run_decodes_again() {
    let mut last = LastFrame::default();
    judge(&mut last, &chunk("plain words", true));
    for text in [
        r#"an \"escaped\" quote"#,
        r"a \n newline",
        "raw \u{1} control",
        r"bad \x escape",
    ] {
        assert!(!judge(&mut last, &chunk(text, true)), "{text}");
    }
    // A raw quote ends the string early: not JSON any more, and said so.
    let broken = chunk(r#"a " quote"#, true);
    assert!(!judge(&mut last, &broken));
    assert!(decode(&broken).is_err());
    // Invalid UTF-8 where the text was.
    let mut bad = chunk("xx", true);
    let at = bad.windows(2).position(|w| w == b"xx").unwrap();
    bad[at] = 0xFF;
    assert!(!judge(&mut last, &bad));
    assert!(decode(&bad).is_err());
}

#[test]
fn a_change_at_the_end_of_the_text_is_judged_by_its_run_alone() {
    let mut last = LastFrame::default();
    judge(&mut last, &chunk("caf\u{e9} au lait", true));
    // One character for another of the same first byte (é → ê): the run
    // compared from both ends is a lone continuation byte, widened to the
    // whole character.
    assert!(judge(&mut last, &chunk("caf\u{ea} au lait", true)));
    // ...and one of the same last byte (é → ĩ: C3 A9 → C4 A9).
    assert!(judge(&mut last, &chunk("caf\u{129} au lait", true)));
    // The closing quote gone, or one put inside: not the same shape.
    let text = chunk("caf\u{e9} au lait", true);
    let close = text.windows(5).position(|w| w == b"lait\"").unwrap() + 4;
    let mut unclosed = text.clone();
    unclosed.remove(close);
    assert!(!judge(&mut last, &unclosed));
    let mut quoted = text.clone();
    quoted.insert(close - 1, b'"');
    assert!(!judge(&mut last, &quoted));
}

#[test]
fn a_kept_text_with_escapes_is_never_the_skipped_string() {
    let mut last = LastFrame::default();
    judge(
        &mut last,
        &chunk(r#"he said \"no\" and left, a long line"#, true),
    );
    // The longest skipped string had escapes: the next longest ("2.0") is
    // the one noted, so a text change decodes again.
    assert!(!judge(
        &mut last,
        &chunk(r#"he said \"no\" and left, a long lime"#, true)
    ));
}

#[test]
fn only_frames_with_parts_are_kept_and_other_frames_leave_them() {
    let mut last = LastFrame::default();
    judge(&mut last, &status("TASK_STATE_WORKING"));
    assert!(last.decoded.is_none(), "a status update is not kept");
    judge(&mut last, &chunk("one", true));
    assert!(!judge(&mut last, &status("TASK_STATE_WORKING")));
    assert!(judge(&mut last, &chunk("two", true)));
    let long = "x".repeat(KEEP_MAX);
    judge(&mut last, &chunk(&long, true));
    assert!(
        last.data.len() <= KEEP_MAX,
        "a frame over the limit is not kept"
    );
    assert!(last.held_bytes() >= last.data.len());
}

/// Past two blocks of 64 bytes and a word.
const ALL: &str = concat!(
    "0123456789abcdefghijklmnopqrstuvwxyz0123456789",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ-abcdefghijklmnopqrstuvwxyz",
    "9876543210zyxwvutsrqponmlkjihgfedcba."
);

#[test]
fn common_prefix_counts_every_byte() {
    let all = ALL.as_bytes();
    // Every length (below, at and past whole words and blocks), every
    // place.
    for len in 0..=all.len() {
        let a = &all[..len];
        for cut in 0..len {
            let mut b = a.to_vec();
            b[cut] = b'#';
            assert_eq!(common_prefix(a, &b), cut, "{len} {cut}");
        }
        assert_eq!(common_prefix(a, a), len);
        assert_eq!(common_prefix(a, all), len, "a prefix of the other");
    }
    assert_eq!(common_prefix(b"abc", b"abcdef"), 3);
}

#[test]
fn common_suffix_counts_every_byte() {
    let all = ALL.as_bytes();
    for len in 0..=all.len() {
        let a = &all[all.len() - len..];
        for cut in 0..len {
            let mut b = a.to_vec();
            b[cut] = b'#';
            assert_eq!(common_suffix(a, &b), len - cut - 1, "{len} {cut}");
        }
        assert_eq!(common_suffix(a, a), len);
        assert_eq!(common_suffix(a, all), len, "a suffix of the other");
    }
    assert_eq!(common_suffix(b"def", b"abcdef"), 3);
}

/// Bytes that matter to JSON, to UTF-8, and plain ones.
fn edit_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        Just(b'"'),
        Just(b'\\'),
        Just(b'\n'),
        Just(b'}'),
        Just(b','),
        Just(b'a'),
        Just(b' '),
        Just(0xC3),
        Just(0xA9),
        Just(0xFF),
        any::<u8>(),
    ]
}

fn base() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        ("[a-z ]{0,40}", any::<bool>()).prop_map(|(t, a)| chunk(&t, a)),
        "[a-z ]{0,40}".prop_map(|t| {
            format!(
                r#"{{"jsonrpc":"2.0","id":"r","result":{{"message":{{"messageId":"m-1","role":"ROLE_AGENT","parts":[{{"text":"{t}"}}],"metadata":{{"k":"a longer value here"}}}}}}}}"#
            )
            .into_bytes()
        }),
        "[A-Z_]{0,20}".prop_map(|s| status(&s)),
        ("[a-z ]{0,40}", any::<bool>(), any::<bool>()).prop_map(|(t, a, l)| kind_chunk(&t, a, l)),
        ("[a-z ]{0,40}", any::<bool>()).prop_map(|(t, a)| outer_flag(&t, a)),
        ("[a-z ]{0,40}", any::<bool>(), any::<bool>())
            .prop_map(|(t, a, b)| two_updates(&t, a, b)),
    ]
}

/// A frame with one of its `true`/`false` literals swapped for the other.
fn swapped() -> impl Strategy<Value = Vec<u8>> {
    (base(), any::<prop::sample::Index>()).prop_map(|(f, which)| {
        let text = String::from_utf8(f).unwrap();
        let literals: Vec<_> = text
            .match_indices("true")
            .chain(text.match_indices("false"))
            .collect();
        if literals.is_empty() {
            return text.into_bytes();
        }
        let (at, lit) = *which.get(&literals);
        let other = if lit == "true" { "false" } else { "true" };
        format!("{}{other}{}", &text[..at], &text[at + lit.len()..]).into_bytes()
    })
}

/// A frame with a run of bytes replaced (often inside the text).
fn edited() -> impl Strategy<Value = Vec<u8>> {
    (
        base(),
        any::<prop::sample::Index>(),
        0usize..6,
        prop::collection::vec(edit_byte(), 0..6),
    )
        .prop_map(|(mut f, at, cut, with)| {
            let at = at.index(f.len() + 1);
            let end = (at + cut).min(f.len());
            f.splice(at..end, with);
            f
        })
}

proptest! {
    #[test]
    fn every_result_is_what_a_fresh_decode_gives(
        frames in prop::collection::vec(prop_oneof![base(), edited(), swapped()], 1..12)
    ) {
        let mut last = LastFrame::default();
        for f in &frames {
            judge(&mut last, f);
        }
    }
}

#[test]
fn chunks_of_artifacts_taking_turns_pause_the_looking_and_a_reuse_ends_the_pause() {
    let turns = |i: usize| {
        String::from_utf8(chunk("same text", true))
            .unwrap()
            .replace("a-1", &format!("a-{}", i % 4))
            .into_bytes()
    };
    let mut last = LastFrame::default();
    let mut reused = 0;
    for i in 0..400 {
        reused += usize::from(judge(&mut last, &turns(i)));
    }
    assert_eq!(reused, 0);
    assert_eq!(last.pause, MOST_REST, "the pause doubled to its most");
    // One artifact again: once the pause is over, its chunks are reused.
    let mut from = None;
    for i in 0..2 * MOST_REST as usize {
        if judge(&mut last, &chunk(&format!("word {i}"), true)) {
            from.get_or_insert(i);
        }
    }
    assert!(
        from.is_some_and(|i| i <= MOST_REST as usize + 2),
        "{from:?}"
    );
    assert_eq!(last.pause, 0);
}

proptest! {
    #[test]
    fn any_bytes_in_place_of_the_text_are_judged_as_a_fresh_decode_judges_them(
        text in "[a-z \u{e9}\u{1F600}]{1,30}",
        edits in prop::collection::vec(
            (any::<prop::sample::Index>(), 0usize..4, prop::collection::vec(edit_byte(), 0..5)),
            1..6,
        ),
    ) {
        let mut last = LastFrame::default();
        let kept = chunk(&text, true);
        judge(&mut last, &kept);
        let at = kept.windows(text.len()).position(|w| w == text.as_bytes()).unwrap();
        for (i, cut, with) in edits {
            let mut f = kept.clone();
            let from = at + i.index(text.len() + 1);
            let to = (from + cut).min(at + text.len());
            f.splice(from..to, with);
            judge(&mut last, &f);
        }
    }
}
