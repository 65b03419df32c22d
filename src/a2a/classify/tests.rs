//! The body reader against serde's derive, which it replaced: the same
//! members, types, `null`s, duplicates and trailing text give the same
//! result.
use super::*;
use proptest::prelude::*;
use serde::Deserialize;

/// The derive the reader replaced (`Req` before the cursor).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct SerdeReq {
    #[serde(deserialize_with = "crate::a2a::spelling::rpc_id")]
    id: Option<RpcId<'static>>,
    method: Option<String>,
    params: Option<SerdeParams>,
    message: Option<SerdeMsg>,
    configuration: Option<SerdeConfig>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct SerdeParams {
    id: Option<String>,
    task_id: Option<String>,
    context_id: Option<String>,
    message: Option<SerdeMsg>,
    configuration: Option<SerdeConfig>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct SerdeMsg {
    task_id: Option<String>,
    context_id: Option<String>,
    message_id: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct SerdeConfig {
    return_immediately: Option<bool>,
    blocking: Option<bool>,
}

fn by_serde(body: &str) -> Option<Req<'static>> {
    if !body.trim_start().starts_with('{') {
        return None;
    }
    let r: SerdeReq = serde_json::from_str(body).ok()?;
    let msg = |m: SerdeMsg| Msg {
        task_id: m.task_id.map(Cow::Owned),
        context_id: m.context_id.map(Cow::Owned),
        message_id: m.message_id.map(Cow::Owned),
    };
    let config = |c: SerdeConfig| Config {
        return_immediately: c.return_immediately,
        blocking: c.blocking,
    };
    Some(Req {
        id: r.id,
        method: r.method.map(Cow::Owned),
        params: r.params.map(|p| Params {
            id: p.id.map(Cow::Owned),
            task_id: p.task_id.map(Cow::Owned),
            context_id: p.context_id.map(Cow::Owned),
            message: p.message.map(msg),
            configuration: p.configuration.map(config),
        }),
        message: r.message.map(msg),
        configuration: r.configuration.map(config),
    })
}

fn scalar() -> impl Strategy<Value = String> {
    proptest::sample::select(vec![
        "null",
        "true",
        "false",
        "7",
        "-3",
        "1.50",
        "2e3",
        "18446744073709551616",
        "\"GetTask\"",
        "\"t-1\"",
        "\"a\\\"b\\u00e9\"",
        "\"\"",
        "[]",
        "[1,{\"taskId\":2}]",
        "{}",
    ])
    .prop_map(str::to_owned)
}

/// `right` most of the time, else `null` or a value of any type.
fn mostly(right: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop_oneof![8 => right, 1 => Just("null".to_owned()), 1 => scalar()]
}

/// `mostly` for an object member: no arrays, which the derive reads by
/// position (`a_by_position_member_reads_as_empty`).
fn mostly_object(right: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    let other = scalar().prop_filter("no array", |v| !v.starts_with('['));
    prop_oneof![8 => right, 1 => Just("null".to_owned()), 1 => other]
}

fn text() -> impl Strategy<Value = String> {
    proptest::sample::select(vec!["\"t-1\"", "\"\"", "\"a\\\"b\\u00e9\"", "\"GetTask\""])
        .prop_map(str::to_owned)
}

fn id() -> impl Strategy<Value = String> {
    proptest::sample::select(vec![
        "7",
        "-3",
        "1.50",
        "2e3",
        "18446744073709551616",
        "\"r-1\"",
        "null",
    ])
    .prop_map(str::to_owned)
}

fn flag() -> impl Strategy<Value = String> {
    proptest::sample::select(vec!["true", "false"]).prop_map(str::to_owned)
}

/// An object of some of `members` (each at most once, or, now and
/// then, twice), in any order, with unread members among them; some
/// names escaped.
fn object(members: Vec<(&'static str, BoxedStrategy<String>)>) -> BoxedStrategy<String> {
    let n = members.len();
    let all: Vec<BoxedStrategy<(String, String)>> = members
        .into_iter()
        .map(|(k, v)| {
            let key = prop_oneof![5 => Just(k.to_owned()), 1 => Just(escape_first(k))];
            (key, v).boxed()
        })
        .collect();
    let extra = (Just("x".to_owned()), scalar()).boxed();
    (
        proptest::sample::subsequence((0..n).collect::<Vec<_>>(), 0..=n),
        proptest::collection::vec(any::<prop::sample::Index>(), 0..3),
        any::<prop::sample::Index>(),
        any::<u8>(),
    )
        .prop_flat_map(move |(chosen, extras, twice, shuffle)| {
            let mut picked: Vec<BoxedStrategy<(String, String)>> =
                chosen.iter().map(|&i| all[i].clone()).collect();
            if shuffle % 8 == 0 && n > 0 {
                picked.push(all[twice.index(n)].clone()); // sent twice
            }
            for _ in extras {
                picked.push(extra.clone());
            }
            (picked, Just(shuffle))
        })
        .prop_map(|(mut ms, shuffle)| {
            let k = ms.len().max(1);
            ms.rotate_left(usize::from(shuffle) % k);
            let body: Vec<String> = ms.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", body.join(","))
        })
        .boxed()
}

/// `k` with its first character written as a `\u` escape.
fn escape_first(k: &str) -> String {
    let first = k.chars().next().map_or(0, u32::from);
    format!("\\u{first:04x}{}", &k[1..])
}

fn msg() -> BoxedStrategy<String> {
    object(vec![
        ("taskId", mostly(text()).boxed()),
        ("contextId", mostly(text()).boxed()),
    ])
}

fn config() -> BoxedStrategy<String> {
    object(vec![
        ("returnImmediately", mostly(flag()).boxed()),
        ("blocking", mostly(flag()).boxed()),
    ])
}

fn request() -> BoxedStrategy<String> {
    let params = object(vec![
        ("id", mostly(text()).boxed()),
        ("taskId", mostly(text()).boxed()),
        ("contextId", mostly(text()).boxed()),
        ("message", mostly_object(msg()).boxed()),
        ("configuration", mostly_object(config()).boxed()),
    ]);
    object(vec![
        ("id", prop_oneof![8 => id(), 1 => scalar()].boxed()),
        ("method", mostly(text()).boxed()),
        ("params", mostly_object(params).boxed()),
        ("message", mostly_object(msg()).boxed()),
        ("configuration", mostly_object(config()).boxed()),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn the_reader_agrees_with_the_derive(
        body in request(),
        tail in prop_oneof![4 => Just(""), 1 => Just(" "), 1 => Just(" x"), 1 => Just("}")],
    ) {
        let body = format!(" {body}{tail}");
        let want = by_serde(&body);
        prop_assert_eq!(parse(body.as_bytes()), want, "{}", body);
    }
}

#[test]
fn a_by_position_member_reads_as_empty() {
    let body = r#"{"method":"GetTask","params":["t-1"],"configuration":[true]}"#;
    let req = parse(body.as_bytes()).expect("an object");
    assert_eq!(req.params, Some(Params::default()));
    assert_eq!(req.configuration, Some(Config::default()));
    let ex = classify(
        &Method::POST,
        &Uri::from_static("/"),
        &http::HeaderMap::new(),
        body.as_bytes(),
    );
    assert_eq!(
        ex.map(|e| (e.operation, e.task_id)),
        Some((Operation::GetTask, None))
    );
}

#[test]
fn what_is_not_one_object_is_not_read() {
    for body in [
        "",
        " ",
        "[]",
        "\"{}\"",
        "{} {}",
        "{\"id\":1,}",
        "{\"id\":1",
        "\u{a0}{}",
    ] {
        assert_eq!(parse(body.as_bytes()), None, "{body:?}");
    }
    assert_eq!(parse(b"{\"method\":\"x\"}\xff"), None, "not UTF-8");
    assert_eq!(parse(b"\t{}\r\n"), Some(Req::default()));
}
