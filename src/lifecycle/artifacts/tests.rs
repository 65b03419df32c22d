use super::ArtifactState::*;
use super::*;

#[test]
fn open_then_complete() {
    let mut a = Artifacts::default();
    assert_eq!(a.update("a", false, false), Update::Fine);
    assert_eq!(a.state("a"), Some(Open));
    assert_eq!(a.update("a", true, true), Update::Fine);
    assert_eq!(a.state("a"), Some(Complete));
    assert!(a.close().is_empty());
}

#[test]
fn an_update_after_the_last_chunk_is_sealed_and_close_abandons_only_open_ones() {
    let mut a = Artifacts::default();
    a.update("done", false, true);
    a.update("b", false, true);
    assert_eq!(a.update("b", false, false), Update::Sealed, "a replace");
    assert_eq!(a.update("b", true, false), Update::Sealed, "an append");
    assert_eq!(a.state("b"), Some(Complete), "still whole");
    a.update("a", false, false);
    assert_eq!(
        a.update("a", false, false),
        Update::Fine,
        "an open one may be replaced"
    );
    assert_eq!(a.close(), vec!["a"]);
    assert_eq!(a.state("a"), Some(Abandoned));
    assert_eq!(a.state("done"), Some(Complete));
    assert!(a.close().is_empty(), "abandoned once");
}

#[test]
fn append_needs_an_opened_or_known_artifact() {
    let mut a = Artifacts::default();
    assert_eq!(a.update("x", true, false), Update::AppendToUnknown);
    assert_eq!(a.update("x", true, false), Update::Fine, "now opened");
    a.know("snap");
    assert_eq!(a.state("snap"), Some(Known));
    assert_eq!(a.update("snap", true, true), Update::Fine);
    a.know("x");
    assert_eq!(a.state("x"), Some(Open), "snapshot keeps a streamed state");
}

#[test]
fn listed_and_mapped_artifacts_are_judged_alike() {
    let mut a = Artifacts::default();
    let ids: Vec<String> = (0..LISTED + 4).map(|i| format!("a{i:02}")).collect();
    for id in &ids {
        assert_eq!(a.update(id, false, false), Update::Fine);
    }
    assert!(!a.map.is_empty(), "past the list");
    // Appends find both kinds; one of each completes.
    for id in &ids {
        assert_eq!(a.update(id, true, false), Update::Fine, "{id} is open");
    }
    a.update(&ids[1], true, true);
    a.update(&ids[LISTED + 1], true, true);
    assert_eq!(a.state(&ids[LISTED + 1]), Some(Complete));
    a.know(&ids[LISTED + 2]);
    assert_eq!(
        a.state(&ids[LISTED + 2]),
        Some(Open),
        "known keeps a streamed state"
    );
    assert_eq!(
        a.update("new", true, false),
        Update::AppendToUnknown,
        "unknown append past the list"
    );
    let mut open: Vec<&str> = ids.iter().map(String::as_str).collect();
    open.retain(|id| *id != ids[1] && *id != ids[LISTED + 1]);
    open.push("new");
    assert_eq!(a.close(), open);
    assert_eq!(a.state(&ids[0]), Some(Abandoned));
    assert_eq!(a.state(&ids[LISTED + 3]), Some(Abandoned));
}

#[test]
fn stops_judging_past_the_cap() {
    let mut a = Artifacts::default();
    for i in 0..MAX_ARTIFACTS {
        a.update(&i.to_string(), false, true);
    }
    assert!(!a.overflowed());
    assert_eq!(a.update("one-more", true, false), Update::Fine);
    assert!(a.overflowed());
}
