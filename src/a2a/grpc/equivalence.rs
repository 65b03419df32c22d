//! The borrowing reader against prost, which it replaced (`oracle.rs`):
//! for every operation and version, every message gives the same
//! `Decoded` from both, or an error from both. The messages are written
//! field by field from the schema both read (declared fields, sent more
//! than once, nested messages merged, oneof members taking turns, wrong
//! wire types, invalid UTF-8, unknown fields of every wire type, groups
//! nested to prost's depth limit), encoded by prost from random structs,
//! joined (a message after another is their merge), cut and edited
//! byte by byte, or any bytes at all. Bounded, the reader leaves the
//! messages `repeats::over` finds over the bound, and reads the rest so.

use proptest::prelude::*;
use prost::Message as _;

use super::{oracle, proto, read, repeats};
use crate::a2a::model::{Decoded, Malformed, Operation, Version};

/// How a declared field is written.
#[derive(Debug)]
enum Kind {
    Str,
    Varint,
    Msg(&'static [(u32, Kind)]),
}
use Kind::*;

type Schema = &'static [(u32, Kind)];

const TIMESTAMP: Schema = &[(1, Varint), (2, Varint)];
const STATUS: Schema = &[(1, Varint), (3, Msg(TIMESTAMP))];
const ARTIFACT: Schema = &[(1, Str)];
const TASK: Schema = &[(1, Str), (2, Str), (3, Msg(STATUS)), (4, Msg(ARTIFACT))];
const MESSAGE: Schema = &[(1, Str), (2, Str), (3, Str)];
/// 0.3's (field 4 `final`); 1.0 does not declare field 4.
const STATUS_UPDATE: Schema = &[(1, Str), (2, Str), (3, Msg(STATUS)), (4, Varint)];
const ARTIFACT_UPDATE: Schema = &[
    (1, Str),
    (2, Str),
    (3, Msg(ARTIFACT)),
    (4, Varint),
    (5, Varint),
];
const STREAM: Schema = &[
    (1, Msg(TASK)),
    (2, Msg(MESSAGE)),
    (3, Msg(STATUS_UPDATE)),
    (4, Msg(ARTIFACT_UPDATE)),
];
const LIST: Schema = &[(1, Msg(TASK))];

/// Every operation the reader is asked about, in both versions.
fn ops() -> impl Strategy<Value = (Version, Operation)> {
    let op = prop_oneof![
        4 => Just(Operation::SendStreamingMessage),
        2 => Just(Operation::SendMessage),
        2 => Just(Operation::SubscribeToTask),
        3 => Just(Operation::GetTask),
        1 => Just(Operation::CancelTask),
        3 => Just(Operation::ListTasks),
        1 => prop::sample::select(Operation::ALL),
    ];
    (prop_oneof![Just(Version::V1_0), Just(Version::V0_3)], op)
}

/// The schema of `op`'s answer.
fn schema(op: Operation) -> Schema {
    match op {
        Operation::GetTask | Operation::CancelTask => TASK,
        Operation::ListTasks => LIST,
        _ => STREAM,
    }
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(number: impl Into<u64>, wire: u8, out: &mut Vec<u8>) {
    varint(number.into() << 3 | u64::from(wire), out);
}

/// A varint field's value: small, large, past 32 bits (int32 cuts it),
/// negative, or written longer than it needs; now and then 10 bytes
/// past 64 bits, or 11.
fn varint_bytes() -> impl Strategy<Value = Vec<u8>> {
    let long = (any::<[u8; 9]>(), 0u8..4, any::<bool>()).prop_map(|(head, last, eleven)| {
        let mut out: Vec<u8> = head.iter().map(|b| b | 0x80).collect();
        out.push(if eleven { last | 0x80 } else { last });
        if eleven {
            out.push(0);
        }
        out
    });
    prop_oneof![12 => fitting(), 1 => long]
}

/// A varint of at most 10 bytes that holds its value.
fn fitting() -> impl Strategy<Value = Vec<u8>> {
    let value = prop_oneof![
        4 => 0u64..10,
        2 => any::<u64>(),
        1 => any::<i32>().prop_map(|n| n as i64 as u64),
        1 => (any::<u32>(), 1u64..4).prop_map(|(n, hi)| hi << 32 | u64::from(n)),
        1 => prop::sample::select(vec![1_764_583_200, 253_402_300_800, 999_999_999, 1_000_000_000]),
    ];
    (value, 0usize..4).prop_map(|(v, pad)| {
        let mut out = Vec::new();
        varint(v, &mut out);
        // Padded with empty 7-bit groups while it stays within 10 bytes.
        for _ in 0..pad {
            if out.len() < 10 && v < 1 << (7 * out.len()).min(63) {
                let last = out.len() - 1;
                out[last] |= 0x80;
                out.push(0);
            }
        }
        out
    })
}

/// A string field's bytes: short ids, often repeated; now and then not UTF-8.
fn string_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::sample::select(vec!["", "t", "t-1", "ctx", "a-1", "é", "\u{1F600}x"])
            .prop_map(|s| s.as_bytes().to_vec()),
        2 => "[a-z0-9é]{0,12}".prop_map(String::into_bytes),
        1 => prop::sample::select(vec![
            &b"\xff"[..], b"a\xc3", b"\xed\xa0\x80", b"\xc0\x80", b"ok\xf4\x90\x80\x80",
        ])
        .prop_map(<[u8]>::to_vec),
    ]
}

fn len_delimited(number: u32, body: &[u8], out: &mut Vec<u8>) {
    key(number, 2, out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// A field no schema here declares (numbers 6 and up), of any wire type:
/// groups hold fields (groups too), and may end wrongly or not at all.
fn unknown() -> BoxedStrategy<Vec<u8>> {
    // 0 and numbers past 2^29 make keys prost refuses.
    let number = prop_oneof![
        12 => 6u64..40,
        1 => Just(1000),
        1 => Just((1 << 29) - 1),
        1 => Just(0),
        1 => (1u64 << 29)..(1 << 33),
    ];
    let leaf = (
        number.clone(),
        0u8..6,
        varint_bytes(),
        prop::collection::vec(any::<u8>(), 0..9),
    )
        .prop_map(|(n, wire, v, bytes)| {
            let mut out = Vec::new();
            key(n, wire, &mut out);
            match wire {
                0 => out.extend_from_slice(&v),
                1 => out.extend_from_slice(&[7; 8]),
                2 => {
                    varint(bytes.len() as u64, &mut out);
                    out.extend_from_slice(&bytes);
                }
                3 => key(n, 4, &mut out), // an empty group
                4 => {}                   // an end with no start
                _ => out.extend_from_slice(&[5; 4]),
            }
            out
        })
        .boxed();
    let group = leaf.clone().prop_recursive(3, 12, 4, move |inner| {
        (
            number.clone(),
            prop::collection::vec(inner, 0..4),
            prop_oneof![8 => Just(0u32), 1 => Just(1), 1 => Just(2)],
        )
            .prop_map(|(n, fields, end)| {
                let mut out = Vec::new();
                key(n, 3, &mut out);
                out.extend(fields.concat());
                match end {
                    0 => key(n, 4, &mut out),
                    1 => key(n + 1, 4, &mut out), // closed by another number
                    _ => {}                       // never closed
                }
                out
            })
    });
    let deep = (6u64..9, 95usize..=101).prop_map(|(n, levels)| {
        let mut out = Vec::new();
        (0..levels).for_each(|_| key(n, 3, &mut out));
        key(n, 0, &mut out);
        out.push(1);
        (0..levels).for_each(|_| key(n, 4, &mut out));
        out
    });
    prop_oneof![6 => leaf, 3 => group, 1 => deep].boxed()
}

/// A message of `schema`, field by field: mostly declared fields with
/// their own wire type (in any order, any number of times), some unknown
/// ones, and now and then a declared field of another wire type.
fn message(schema: Schema) -> BoxedStrategy<Vec<u8>> {
    let declared: Vec<BoxedStrategy<Vec<u8>>> = schema
        .iter()
        .map(|(n, kind)| {
            let n = *n;
            match kind {
                Str => string_bytes()
                    .prop_map(move |s| {
                        let mut out = Vec::new();
                        len_delimited(n, &s, &mut out);
                        out
                    })
                    .boxed(),
                Varint => varint_bytes()
                    .prop_map(move |v| {
                        let mut out = Vec::new();
                        key(n, 0, &mut out);
                        out.extend_from_slice(&v);
                        out
                    })
                    .boxed(),
                Msg(inner) => message(inner)
                    .prop_map(move |m| {
                        let mut out = Vec::new();
                        len_delimited(n, &m, &mut out);
                        out
                    })
                    .boxed(),
            }
        })
        .collect();
    let numbers: Vec<(u32, u8)> = schema
        .iter()
        .map(|(n, k)| (*n, if matches!(k, Varint) { 0 } else { 2 }))
        .collect();
    let wrong = (prop::sample::select(numbers), 0u8..6, varint_bytes()).prop_filter_map(
        "its own wire type",
        |((n, own), wire, v)| {
            (wire != own).then(|| {
                let mut out = Vec::new();
                key(n, wire, &mut out);
                match wire {
                    0 => out.extend_from_slice(&v),
                    1 => out.extend_from_slice(&[1; 8]),
                    2 => out.extend_from_slice(&[1, b'x']),
                    3 => key(n, 4, &mut out),
                    4 => {}
                    _ => out.extend_from_slice(&[1; 4]),
                }
                out
            })
        },
    );
    let field = prop_oneof![
        12 => prop::strategy::Union::new(declared),
        3 => unknown(),
        1 => wrong,
    ];
    prop::collection::vec(field, 0..5)
        .prop_map(|f| f.concat())
        .boxed()
}

fn string() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["", "t", "t-1", "ctx", "a-1", "é"]).prop_map(str::to_owned)
}

fn status() -> impl Strategy<Value = Option<proto::TaskStatus>> {
    let ts = (any::<i64>(), any::<i32>(), 0i64..2_000_000_000, 0i32..3);
    let ts = prop_oneof![
        ts.clone().prop_map(|(s, n, _, _)| proto::Timestamp {
            seconds: s,
            nanos: n
        }),
        ts.prop_map(|(_, _, s, n)| proto::Timestamp {
            seconds: s,
            nanos: n
        }),
    ];
    prop::option::of(
        (-2i32..12, prop::option::of(ts))
            .prop_map(|(state, timestamp)| proto::TaskStatus { state, timestamp }),
    )
}

fn task() -> impl Strategy<Value = proto::Task> {
    let artifact = string().prop_map(|artifact_id| proto::ArtifactId { artifact_id });
    (
        string(),
        string(),
        status(),
        prop::collection::vec(artifact, 0..3),
    )
        .prop_map(|(id, context_id, status, artifacts)| proto::Task {
            id,
            context_id,
            status,
            artifacts,
        })
}

/// A message of `op`'s answer encoded by prost from a random struct.
fn by_prost(version: Version, op: Operation) -> BoxedStrategy<Vec<u8>> {
    match (op, version) {
        (Operation::GetTask | Operation::CancelTask, _) => {
            task().prop_map(|t| t.encode_to_vec()).boxed()
        }
        (Operation::ListTasks, _) => prop::collection::vec(task(), 0..3)
            .prop_map(|tasks| proto::ListTasksResponse { tasks }.encode_to_vec())
            .boxed(),
        (_, Version::V1_0) => prop::option::of(payload())
            .prop_map(|payload| proto::StreamResponse { payload }.encode_to_vec())
            .boxed(),
        (_, Version::V0_3) => prop::option::of(payload03())
            .prop_map(|payload| proto::StreamResponse03 { payload }.encode_to_vec())
            .boxed(),
    }
}

fn message_ids() -> impl Strategy<Value = proto::Message> {
    (string(), string(), string()).prop_map(|(message_id, context_id, task_id)| proto::Message {
        message_id,
        context_id,
        task_id,
    })
}

fn artifact_update() -> impl Strategy<Value = proto::ArtifactUpdate> {
    let artifact =
        prop::option::of(string().prop_map(|artifact_id| proto::ArtifactId { artifact_id }));
    (string(), string(), artifact, any::<bool>(), any::<bool>()).prop_map(
        |(task_id, context_id, artifact, append, last_chunk)| proto::ArtifactUpdate {
            task_id,
            context_id,
            artifact,
            append,
            last_chunk,
        },
    )
}

fn payload() -> impl Strategy<Value = proto::Payload> {
    let update = (string(), string(), status()).prop_map(|(task_id, context_id, status)| {
        proto::StatusUpdate {
            task_id,
            context_id,
            status,
        }
    });
    prop_oneof![
        task().prop_map(proto::Payload::Task),
        message_ids().prop_map(proto::Payload::Message),
        update.prop_map(proto::Payload::StatusUpdate),
        artifact_update().prop_map(proto::Payload::ArtifactUpdate),
    ]
}

fn payload03() -> impl Strategy<Value = proto::Payload03> {
    let update = (string(), string(), status(), any::<bool>()).prop_map(
        |(task_id, context_id, status, r#final)| proto::StatusUpdate03 {
            task_id,
            context_id,
            status,
            r#final,
        },
    );
    prop_oneof![
        task().prop_map(proto::Payload03::Task),
        message_ids().prop_map(proto::Payload03::Message),
        update.prop_map(proto::Payload03::StatusUpdate),
        artifact_update().prop_map(proto::Payload03::ArtifactUpdate),
    ]
}

/// Byte edits: a cut, a byte changed, a byte put in.
fn edit(msg: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = msg.len();
    (0..=len, any::<u8>(), 0u8..4).prop_map(move |(at, byte, how)| {
        let mut m = msg.clone();
        match how {
            0 => m.truncate(at),
            1 if at < len => m[at] = byte,
            1 | 2 => m.insert(at, byte),
            _ => {}
        }
        m
    })
}

/// The reader and prost agree on `msg`; whether they read it.
fn agree(version: Version, op: Operation, msg: &[u8]) -> Result<bool, TestCaseError> {
    let new = read::decode_response(version, op, msg);
    same(&new, version, op, msg)?;
    Ok(new.is_ok())
}

/// Bounded at `max`, the reader leaves what the walk of `repeats` finds
/// over, and reads the rest as prost does.
fn agree_bounded(
    version: Version,
    op: Operation,
    msg: &[u8],
    max: usize,
) -> Result<(), TestCaseError> {
    let over = repeats::over(op, msg, max);
    match read::decode_bounded(version, op, msg, max) {
        None => prop_assert!(
            over,
            "left under {}: {:?} {:?} {:02x?}",
            max,
            version,
            op,
            msg
        ),
        Some(new) => {
            prop_assert!(
                !over,
                "read over {}: {:?} {:?} {:02x?}",
                max,
                version,
                op,
                msg
            );
            same(&new, version, op, msg)?;
        }
    }
    Ok(())
}

/// `new` is what prost gives for `msg`: the same `Decoded`, or an error.
fn same(
    new: &Result<Decoded<'_>, Malformed>,
    version: Version,
    op: Operation,
    msg: &[u8],
) -> Result<(), TestCaseError> {
    let old = oracle::decode_response(version, op, msg);
    match (new, &old) {
        (Ok(n), Ok(o)) => prop_assert_eq!(n, o, "{:?} {:?} {:02x?}", version, op, msg),
        (Err(n), Err(o)) => {
            // The wire's faults are worded apart; the rest word for word.
            let head = |s: &str| s.split(": ").next().unwrap_or("").to_owned();
            prop_assert_eq!(
                head(&n.0),
                head(&o.0),
                "{:?} {:?} {:02x?}",
                version,
                op,
                msg
            );
        }
        _ => prop_assert!(
            false,
            "{:?} {:?} {:02x?}: reader {:?}, prost {:?}",
            version,
            op,
            msg,
            new,
            old
        ),
    }
    Ok(())
}

/// A message written field by field from `op`'s schema, maybe edited.
fn written() -> impl Strategy<Value = (Version, Operation, Vec<u8>)> {
    ops().prop_flat_map(|(v, op)| {
        let msg = message(schema(op));
        let msg = prop_oneof![4 => msg.clone(), 1 => msg.prop_flat_map(edit)];
        (Just(v), Just(op), msg)
    })
}

/// Two prost encodings joined (their merge), with fields spliced in.
fn encoded() -> impl Strategy<Value = (Version, Operation, Vec<u8>)> {
    ops().prop_flat_map(|(v, op)| {
        let parts = (
            by_prost(v, op),
            prop::option::of(by_prost(v, op)),
            prop::option::of(message(schema(op))),
        )
            .prop_map(|(a, b, c)| [a, b.unwrap_or_default(), c.unwrap_or_default()].concat());
        let msg = prop_oneof![4 => parts.clone().boxed(), 1 => parts.prop_flat_map(edit).boxed()];
        (Just(v), Just(op), msg)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6000))]

    #[test]
    fn the_reader_agrees_with_prost_on_messages_written_field_by_field(
        (v, op, msg) in written(),
        max in 0usize..6,
    ) {
        agree(v, op, &msg)?;
        agree_bounded(v, op, &msg, max)?;
    }

    #[test]
    fn the_reader_agrees_with_prost_on_what_prost_encodes(
        (v, op, msg) in encoded(),
        max in 0usize..6,
    ) {
        agree(v, op, &msg)?;
        agree_bounded(v, op, &msg, max)?;
    }

    #[test]
    fn the_reader_agrees_with_prost_on_any_bytes(
        (v, op) in ops(),
        msg in prop::collection::vec(any::<u8>(), 0..40),
        max in 0usize..3,
    ) {
        agree(v, op, &msg)?;
        agree_bounded(v, op, &msg, max)?;
    }
}

/// The generators are worth their cases: both readers accept many of the
/// written messages and refuse many, and some hold more than 2 elements.
#[test]
fn written_messages_are_often_read_and_often_refused() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut ok, mut over, n) = (0, 0, 2000);
    for _ in 0..n {
        let (v, op, msg) = written().new_tree(&mut runner).unwrap().current();
        ok += usize::from(agree(v, op, &msg).unwrap());
        over += usize::from(repeats::over(op, &msg, 2));
    }
    assert!((n / 5..n * 4 / 5).contains(&ok), "{ok} of {n} read");
    assert!((n / 20..n / 2).contains(&over), "{over} of {n} over 2");
}

/// Groups nested about prost's limit (100 levels, the messages around
/// them counted), at each depth a message can hold them: the two readers
/// refuse from the same level on.
#[test]
fn groups_nest_as_deep_as_prost_lets_them() {
    let groups = |levels: usize| {
        let mut out = Vec::new();
        (0..levels).for_each(|_| key(9u32, 3, &mut out));
        key(9u32, 0, &mut out);
        out.push(1);
        (0..levels).for_each(|_| key(9u32, 4, &mut out));
        out
    };
    let wrap = |n: u32, body: Vec<u8>| {
        let mut out = Vec::new();
        len_delimited(n, &body, &mut out);
        out
    };
    for levels in 95..=101 {
        let g = groups(levels);
        let in_timestamp = wrap(1, wrap(3, wrap(3, g.clone())));
        let cases = [
            (Operation::GetTask, g.clone()),
            (Operation::SendStreamingMessage, wrap(1, g.clone())),
            (Operation::SendStreamingMessage, wrap(2, g.clone())),
            (Operation::SendStreamingMessage, in_timestamp.clone()),
            (Operation::ListTasks, in_timestamp),
            (Operation::GetTask, wrap(3, wrap(3, g))),
        ];
        for (op, msg) in cases {
            for v in [Version::V1_0, Version::V0_3] {
                agree(v, op, &msg).unwrap();
            }
        }
    }
}
