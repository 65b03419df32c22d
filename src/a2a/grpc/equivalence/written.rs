//! Messages written field by field from the schema the two readers
//! read: declared fields with their own wire type or another, strings
//! that are not UTF-8, varints of every length, unknown fields of every
//! wire type (groups nested, ended wrongly, or to prost's depth limit).

use proptest::prelude::*;

/// How a declared field is written.
#[derive(Debug)]
pub(super) enum Kind {
    Str,
    Varint,
    Msg(&'static [(u32, Kind)]),
}
use Kind::*;

pub(super) type Schema = &'static [(u32, Kind)];

const TIMESTAMP: Schema = &[(1, Varint), (2, Varint)];
const STATUS: Schema = &[(1, Varint), (3, Msg(TIMESTAMP))];
const ARTIFACT: Schema = &[(1, Str)];
pub(super) const TASK: Schema = &[(1, Str), (2, Str), (3, Msg(STATUS)), (4, Msg(ARTIFACT))];
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
pub(super) const STREAM: Schema = &[
    (1, Msg(TASK)),
    (2, Msg(MESSAGE)),
    (3, Msg(STATUS_UPDATE)),
    (4, Msg(ARTIFACT_UPDATE)),
];
pub(super) const LIST: Schema = &[(1, Msg(TASK))];

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(super) fn key(number: impl Into<u64>, wire: u8, out: &mut Vec<u8>) {
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

pub(super) fn len_delimited(number: u32, body: &[u8], out: &mut Vec<u8>) {
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
pub(super) fn message(schema: Schema) -> BoxedStrategy<Vec<u8>> {
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
