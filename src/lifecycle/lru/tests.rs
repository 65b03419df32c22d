use super::*;

/// Inserts `key`, which must be absent.
fn put(l: &mut Lru<u32>, key: &str, value: u32) -> bool {
    let at = l.touch(key).expect_err("absent");
    l.insert(key, at, value)
}

fn order(l: &mut Lru<u32>) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    while let Some((k, v)) = l.pop_oldest() {
        out.push((k.as_str().to_owned(), v));
    }
    out
}

#[test]
fn touch_moves_to_the_back() {
    let mut l = Lru::new();
    for (i, k) in ["a", "b", "c"].iter().enumerate() {
        assert!(put(&mut l, k, i as u32));
    }
    assert_eq!(l.touch("a").map(|v| *v).ok(), Some(0));
    assert_eq!(l.touch("c").map(|v| *v).ok(), Some(2), "touching the tail");
    assert!(l.touch("zz").is_err());
    assert_eq!(l.oldest(), Some(("b", &1)));
    assert_eq!(l.get("a"), Some(&0));
    let got = order(&mut l);
    assert_eq!(got, vec![("b".into(), 1), ("a".into(), 0), ("c".into(), 2)]);
    assert_eq!(l.len(), 0);
    assert!(l.oldest().is_none() && l.pop_oldest().is_none());
}

#[test]
fn a_freed_slot_reused_holds_only_its_new_key() {
    let mut l = Lru::new();
    put(&mut l, "a", 1);
    put(&mut l, "b", 2);
    assert_eq!(l.get("a"), Some(&1));
    assert_eq!(
        l.pop_oldest().map(|(k, _)| k.as_str().to_owned()),
        Some("a".into())
    );
    assert_eq!(l.get("a"), None, "its slot is free");
    put(&mut l, "c", 3); // reuses a's slot
    assert_eq!(l.get("b"), Some(&2));
    assert_eq!(l.get("c"), Some(&3));
    assert_eq!(l.get("a"), None, "its slot holds c");
    assert_eq!(l.get("b"), Some(&2));
    assert_eq!(l.touch("c").map(|v| *v).ok(), Some(3));
    assert_eq!(order(&mut l), vec![("b".into(), 2), ("c".into(), 3)]);
}

#[test]
fn a_key_missed_is_found_once_inserted() {
    let mut l = Lru::new();
    put(&mut l, "a", 1);
    assert!(l.get("b").is_none());
    assert!(l.get("b").is_none(), "still absent");
    assert!(l.touch("b").is_err());
    put(&mut l, "b", 2);
    assert_eq!(l.get("a"), Some(&1));
    assert_eq!(l.get("b"), Some(&2));
    // A miss, then another key's miss, then the first again.
    assert!(l.get("c").is_none() && l.get("d").is_none() && l.get("c").is_none());
    let at = l.touch("c").expect_err("absent");
    assert!(l.insert("c", at, 3));
    let long = "x".repeat(100);
    assert!(l.get(&long).is_none());
    put(&mut l, &long, 4);
    assert_eq!(l.get("c"), Some(&3));
    assert_eq!(l.get(&long), Some(&4));
    assert_eq!(
        order(&mut l),
        [("a".into(), 1), ("b".into(), 2), ("c".into(), 3), (long, 4)]
    );
}

#[test]
fn slots_are_reused() {
    let mut l = Lru::new();
    put(&mut l, "a", 1);
    put(&mut l, "b", 2);
    l.pop_oldest();
    put(&mut l, "c", 3);
    assert_eq!(l.slots.len(), 2);
    *l.touch("b").expect("present") = 20;
    let mut all: Vec<_> = l
        .iter_mut()
        .map(|(k, v)| (k.as_str().to_owned(), *v))
        .collect();
    all.sort();
    assert_eq!(all, vec![("b".into(), 20), ("c".into(), 3)]);
    assert_eq!(order(&mut l), vec![("c".into(), 3), ("b".into(), 20)]);
}

#[test]
fn the_last_touched_is_found_by_its_key_alone() {
    let mut l = Lru::with_max_key(8);
    put(&mut l, "a", 1);
    put(&mut l, "ab", 2);
    // The tail, a prefix of it, an extension of it: only itself is it.
    assert_eq!(l.get("ab"), Some(&2));
    assert!(l.get("a\u{0}").is_none() && l.get("abc").is_none());
    assert_eq!(l.touch("a").map(|v| *v).ok(), Some(1));
    assert_eq!(l.get("a"), Some(&1));
    assert_eq!(l.get("ab"), Some(&2));
    // A key over `max_key` at the tail, kept as its digest: found by hash.
    let long = "y".repeat(20);
    put(&mut l, &long, 3);
    assert_eq!(l.get(&long), Some(&3));
    assert!(l.get(&"y".repeat(21)).is_none());
    assert_eq!(l.touch(&long).map(|v| *v).ok(), Some(3));
    assert_eq!(
        order(&mut l),
        [
            ("ab".into(), 2),
            ("a".into(), 1),
            (crate::lifecycle::short::cut(&long, 8).into_owned(), 3)
        ]
    );
}
