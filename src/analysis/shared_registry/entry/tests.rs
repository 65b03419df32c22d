use super::*;
use crate::a2a::model::TaskState;

fn entry(v: &str, r: &str, f: Vec<u8>) -> Vec<(Vec<u8>, Vec<u8>)> {
    vec![
        (b"v".to_vec(), v.into()),
        (b"r".to_vec(), r.into()),
        (b"f".to_vec(), f),
    ]
}

fn reader(own: &str) -> Reader<'_> {
    Reader {
        own,
        stream: "k",
        key: None,
    }
}

fn one(state: &str, task: &str) -> Vec<u8> {
    Facts {
        facts: vec![FactMsg {
            task_id: task.into(),
            context_id: None,
            state: state.into(),
            timestamp: None,
        }],
    }
    .encode_to_vec()
}

#[test]
fn facts_read_back_as_written() {
    let facts = vec![
        Fact {
            task_id: "t-1".into(),
            context_id: Some("c".into()),
            state: TaskState::InputRequired,
            timestamp: Some("2026-12-01T10:00:00Z".into()),
        },
        Fact {
            task_id: "t-2".into(),
            context_id: None,
            state: TaskState::Completed,
            timestamp: None,
        },
    ];
    let bytes = pack(&facts);
    let wire = Facts {
        facts: facts
            .iter()
            .map(|f| FactMsg {
                task_id: f.task_id.to_string(),
                context_id: f.context_id.as_deref().map(str::to_owned),
                state: f.state.as_str().to_owned(),
                timestamp: f.timestamp.as_deref().map(str::to_owned),
            })
            .collect(),
    };
    assert_eq!(bytes, wire.encode_to_vec(), "the same bytes as the message");
    let back = reader("r2").read(&entry(FORMAT, "r1", bytes.clone()));
    assert_eq!(back, Ok(Some(("r1".into(), None, facts.clone()))));
    // With a route: the same facts, about that route.
    let mut routed = entry(FORMAT, "r1", pack(&facts));
    routed.push((b"u".to_vec(), b"billing".to_vec()));
    let back = reader("r2").read(&routed);
    assert_eq!(back, Ok(Some(("r1".into(), Some("billing".into()), facts))));
    assert_eq!(reader("r1").read(&entry(FORMAT, "r1", bytes)), Ok(None));
}

#[test]
fn an_entry_that_is_not_whole_facts_is_skipped() {
    let b = reader("b");
    assert!(b.read(&entry(FORMAT, "a", one("working", "t"))).is_ok());
    assert!(b.read(&entry("1", "a", one("working", "t"))).is_err());
    assert!(b
        .read(&entry(FORMAT, "a", one("TASK_STATE_WORKING", "t")))
        .is_err());
    assert!(b.read(&entry(FORMAT, "a", one("working", ""))).is_err());
    let mut cut = one("working", "t");
    cut.truncate(cut.len() - 2);
    assert!(
        b.read(&entry(FORMAT, "a", cut)).is_err(),
        "a half-read fact"
    );
    let mut twice = entry(FORMAT, "a", one("working", "t"));
    twice.push((b"r".to_vec(), b"b".to_vec()));
    assert!(b.read(&twice).is_err());
    assert!(b
        .read(&entry(FORMAT, "a", one("working", "t"))[..2])
        .is_err());
}

#[test]
fn an_entry_over_a_limit_is_skipped_before_decoding() {
    let b = reader("b");
    let fact = |task: String| Fact {
        task_id: task.into(),
        context_id: None,
        state: TaskState::Working,
        timestamp: None,
    };
    let full: Vec<Fact> = (0..PACK).map(|i| fact("x".repeat(MAX_ID - i))).collect();
    let entry_of = |facts: &[Fact]| entry(FORMAT, "a", pack(facts));
    assert!(
        b.read(&entry_of(&full)).is_ok(),
        "the most a replica writes"
    );
    let many: Vec<Fact> = (0..=PACK).map(|i| fact(format!("t{i}"))).collect();
    assert!(matches!(b.read(&entry_of(&many)), Err(Skip::Oversized(_))));
    let long = [fact("x".repeat(MAX_ID + 1))];
    assert!(matches!(b.read(&entry_of(&long)), Err(Skip::Oversized(_))));
    let huge = [fact("x".repeat(MAX_ENTRY))];
    assert!(matches!(b.read(&entry_of(&huge)), Err(Skip::Oversized(_))));
    let named = entry(FORMAT, &"r".repeat(MAX_REPLICA + 1), one("working", "t"));
    assert!(matches!(b.read(&named), Err(Skip::Oversized(_))));
    assert!(!fits(&long[0]));
}

#[test]
fn with_a_key_only_entries_it_signed_are_read() {
    let key = hmac::Key::new(hmac::HMAC_SHA256, b"0123456789abcdef");
    let other = hmac::Key::new(hmac::HMAC_SHA256, b"fedcba9876543210");
    let b = Reader {
        own: "b",
        stream: "k",
        key: Some(&key),
    };
    let f = one("completed", "t");
    let signed = |k: &hmac::Key, stream: &str, r: &str| {
        let mut e = entry(FORMAT, r, f.clone());
        let tag = sign(k, stream, (r.as_bytes(), None), &f);
        e.push((b"s".to_vec(), tag.as_ref().to_vec()));
        e
    };
    assert!(matches!(b.read(&signed(&key, "k", "a")), Ok(Some(_))));
    assert_eq!(b.read(&entry(FORMAT, "a", f.clone())), Err(Skip::Unsigned));
    assert_eq!(b.read(&signed(&other, "k", "a")), Err(Skip::BadSignature));
    assert_eq!(
        b.read(&signed(&key, "k2", "a")),
        Err(Skip::BadSignature),
        "signed for another stream"
    );
    let mut moved = signed(&key, "k", "a");
    moved[1].1 = b"c".to_vec();
    assert_eq!(b.read(&moved), Err(Skip::BadSignature), "another replica");
    // A route is signed with the rest: added, removed or changed, the
    // entry does not verify.
    let with_route = |route: &[u8]| {
        let mut e = entry(FORMAT, "a", f.clone());
        let tag = sign(&key, "k", (b"a", Some(route)), &f);
        e.push((b"u".to_vec(), route.to_vec()));
        e.push((b"s".to_vec(), tag.as_ref().to_vec()));
        e
    };
    assert!(matches!(
        b.read(&with_route(b"billing")),
        Ok(Some((_, Some(_), _)))
    ));
    let mut changed = with_route(b"billing");
    changed[3].1 = b"search".to_vec();
    assert_eq!(b.read(&changed), Err(Skip::BadSignature), "another route");
    let mut removed = with_route(b"billing");
    removed.remove(3);
    assert_eq!(
        b.read(&removed),
        Err(Skip::BadSignature),
        "its route removed"
    );
    let mut added = signed(&key, "k", "a");
    added.push((b"u".to_vec(), b"billing".to_vec()));
    assert_eq!(b.read(&added), Err(Skip::BadSignature), "a route added");
    let long = vec![b'x'; MAX_ROUTE + 1];
    let mut over = entry(FORMAT, "a", f.clone());
    over.push((b"u".to_vec(), long));
    assert!(matches!(reader("b").read(&over), Err(Skip::Oversized(_))));
    // Without a key, signed entries read as any other.
    assert!(matches!(
        reader("b").read(&signed(&key, "k", "a")),
        Ok(Some(_))
    ));
}
