//! The decoder's own JSON reader judges validity exactly as serde_json does:
//! what serde_json accepts is never called invalid JSON, and what it rejects
//! is never decoded. Checked on tricky literals, on generated documents, and
//! on generated documents with random edits.

use a2a_tap::a2a::decode::decode;
use a2a_tap::a2a::model::{Event, Malformed, Payload};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// serde_json's verdict: a valid JSON text (any top-level value). JSON is
/// UTF-8 (RFC 8259 §8.1); `from_str` because `from_slice` lets invalid
/// UTF-8 through in strings it skips.
fn serde_accepts(text: &[u8]) -> bool {
    std::str::from_utf8(text)
        .is_ok_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok())
}

fn says_invalid(text: &[u8]) -> bool {
    matches!(decode(text), Err(Malformed(why)) if why.starts_with("not valid JSON") || why.contains("UTF-8"))
}

/// The law for documents whose members the decoder does not read (so no
/// A2A type error can come first): invalid JSON exactly when serde says so.
fn same_verdict(text: &[u8]) {
    let serde = serde_accepts(text);
    assert_eq!(
        !says_invalid(text),
        serde,
        "{:?}: decode {:?}, serde accepts: {serde}",
        String::from_utf8_lossy(text),
        decode(text)
    );
}

/// The law for any document: valid JSON is never called invalid, and
/// invalid JSON is never decoded.
fn consistent(text: &[u8]) {
    let r = decode(text);
    if serde_accepts(text) {
        assert!(
            !says_invalid(text),
            "{:?}: {r:?}",
            String::from_utf8_lossy(text)
        );
    } else {
        assert!(r.is_err(), "{:?}: {r:?}", String::from_utf8_lossy(text));
    }
}

#[test]
fn tricky_literals_as_serde_judges_them() {
    let cases = [
        r#"{}"#,
        r#" { } "#,
        "{\t\"a\"\r\n:\n1}",
        r#"{"a":1,}"#,
        r#"{,}"#,
        r#"{"a" 1}"#,
        r#"{"a":1 "b":2}"#,
        r#"{"a":1}}"#,
        r#"{"a":1},"#,
        r#"{"a":1} x"#,
        r#"{"a":[1,]}"#,
        r#"{"a":[,1]}"#,
        r#"{"a":[1 2]}"#,
        r#"{"a":[]}"#,
        r#"{"a":[[]]}"#,
        r#"{"a":{}}"#,
        r#"{"a":01}"#,
        r#"{"a":-0}"#,
        r#"{"a":-}"#,
        r#"{"a":1.}"#,
        r#"{"a":.5}"#,
        r#"{"a":+1}"#,
        r#"{"a":1e}"#,
        r#"{"a":1e+}"#,
        r#"{"a":1E-7}"#,
        r#"{"a":1e400}"#,
        r#"{"a":123456789012345678901234567890}"#,
        r#"{"a":tru}"#,
        r#"{"a":true}"#,
        r#"{"a":falsey}"#,
        r#"{"a":nul}"#,
        r#"{"a":null}"#,
        r#"{"a":"\u00e9\n\"\\\/\b\f\r\t"}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":"\u12"}"#,
        r#"{"a":"\u12G4"}"#,
        r#"{"a":"\ud83d\ude00"}"#,
        "{\"a\":\"tab\there\"}",
        "{\"a\":\"nl\nhere\"}",
        "{\"a\":\"del\u{7f}ok\"}",
        r#"{"a":"unterminated}"#,
        r#"{"a\"b":1}"#,
        r#"{a:1}"#,
        r#"{"a":'x'}"#,
        "{\"a\":\"é ü 漢字 😀\"}",
        r#"{"a":1"#,
        r#"{"a":"#,
        r#"{"a""#,
        r#"{"#,
        r#"{"a":[{"b":[{"c":{}}]}]}"#,
    ];
    for c in cases {
        same_verdict(c.as_bytes());
    }
}

#[test]
fn skipped_values_nest_at_any_depth() {
    for depth in [100, 126, 127, 128, 129, 130, 200, 5000] {
        let text = format!(
            "{{\"a\":{}1{}}}",
            "[".repeat(depth - 1),
            "]".repeat(depth - 1)
        );
        same_verdict(text.as_bytes());
        let mixed = format!(
            "{{\"a\":{}1{}}}",
            "[{\"b\":".repeat(depth),
            "}]".repeat(depth)
        );
        same_verdict(mixed.as_bytes());
    }
}

#[test]
fn what_is_read_nests_at_most_128_levels_and_never_overflows_the_stack() {
    for depth in [127, 128, 129, 100_000] {
        let text = format!(
            "{}{{\"messageId\":\"m\"}}{}",
            "{\"result\":".repeat(depth),
            "}".repeat(depth)
        );
        // 128 levels with the innermost object: a shape error at most.
        let r = decode(text.as_bytes());
        assert_eq!(
            says_invalid(text.as_bytes()),
            depth >= 128,
            "{depth}: {r:?}"
        );
    }
}

#[test]
fn escaped_member_names_are_read_unescaped() {
    let text = r#"{"statusUpdate":{"task\u0049d":"t\u00e9","status":{"st\u0061te":"working"}}}"#;
    match decode(text.as_bytes()) {
        Ok(d) => match d.payload {
            Payload::Event(Event::StatusUpdate(u)) => {
                assert_eq!(u.task_id, "t\u{e9}");
                assert_eq!(u.status.state.known().map(|s| s.as_str()), Some("working"));
            }
            other => panic!("{other:?}"),
        },
        Err(e) => panic!("{e:?}"),
    }
}

#[test]
fn duplicate_members_are_not_a_known_shape() {
    let text = r#"{"statusUpdate":{"taskId":"t","taskId":"u","status":{"state":"working"}}}"#;
    let Err(Malformed(why)) = decode(text.as_bytes()) else {
        panic!("duplicate taskId decoded");
    };
    assert!(why.contains("duplicate member `taskId`"), "{why}");
    // Members the decoder does not read may repeat, as in serde_json.
    let text = r#"{"statusUpdate":{"taskId":"t","x":1,"x":2,"status":{"state":"working"}}}"#;
    assert!(decode(text.as_bytes()).is_ok());
}

/// A JSON value tree; `keys` are the member names drawn from.
fn value(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z]{0,8}".prop_map(Value::from),
        any::<String>().prop_map(Value::from),
        "[\\x00-\\x1f\"\\\\/a-z]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(keys), inner), 0..6).prop_map(|kv| {
                Value::Object(
                    kv.into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

fn object(keys: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec((prop::sample::select(keys), value(keys)), 0..6),
        any::<bool>(),
    )
        .prop_map(|(kv, pretty)| {
            let v = Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect());
            if pretty {
                serde_json::to_vec_pretty(&v).unwrap_or_default()
            } else {
                serde_json::to_vec(&v).unwrap_or_default()
            }
        })
}

/// Up to three edits: delete, insert or replace one byte (from JSON's
/// punctuation, so the edits make near-misses rather than noise).
fn edited(doc: Vec<u8>, edits: Vec<(usize, u8, u8)>) -> Vec<u8> {
    const BYTES: &[u8] = b"{}[],:\"\\ 0123456789.eE+-tfnrulsa\t\n\x01";
    let mut d = doc;
    for (pos, op, b) in edits {
        let at = if d.is_empty() { 0 } else { pos % (d.len() + 1) };
        let b = BYTES[usize::from(b) % BYTES.len()];
        match op % 3 {
            0 if at < d.len() => {
                d.remove(at);
            }
            1 => d.insert(at, b),
            _ if at < d.len() => d[at] = b,
            _ => {}
        }
    }
    d
}

const PLAIN_KEYS: &[&str] = &["a", "b", "name", "metadata", "x\"y", "é", ""];
const A2A_KEYS: &[&str] = &[
    "jsonrpc",
    "id",
    "result",
    "error",
    "kind",
    "task",
    "statusUpdate",
    "artifactUpdate",
    "tasks",
    "status",
    "state",
    "taskId",
    "contextId",
    "artifact",
    "artifactId",
    "artifacts",
    "append",
    "lastChunk",
    "final",
    "code",
    "details",
    "reason",
    "type",
    "title",
    "parts",
    "text",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn generated_documents_as_serde_judges_them(doc in object(PLAIN_KEYS)) {
        same_verdict(&doc);
    }

    #[test]
    fn edited_documents_as_serde_judges_them(
        doc in object(PLAIN_KEYS),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..4),
    ) {
        same_verdict(&edited(doc, edits));
    }

    #[test]
    fn a2a_shaped_documents_are_judged_consistently(
        doc in object(A2A_KEYS),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..3),
    ) {
        consistent(&edited(doc, edits));
    }
}
