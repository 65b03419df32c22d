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

use super::{oracle, read, repeats};
use crate::a2a::model::{Decoded, Malformed, Operation, Version};

mod encoded;
mod written;

use written::{key, len_delimited, message, Schema, LIST, STREAM, TASK};

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
            encoded::by_prost(v, op),
            prop::option::of(encoded::by_prost(v, op)),
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
