use super::ArtifactState::*;
use super::*;

#[test]
fn open_then_complete() {
    let mut a = Artifacts::default();
    assert!(!a.update("a", false, false));
    assert_eq!(a.state("a"), Some(Open));
    assert!(!a.update("a", true, true));
    assert_eq!(a.state("a"), Some(Complete));
    assert!(a.close().is_empty());
}

#[test]
fn replace_reopens_and_close_abandons_only_open_ones() {
    let mut a = Artifacts::default();
    a.update("done", false, true);
    a.update("b", false, true);
    a.update("b", false, false);
    a.update("a", false, false);
    assert_eq!(a.close(), vec!["a", "b"]);
    assert_eq!(a.state("a"), Some(Abandoned));
    assert_eq!(a.state("done"), Some(Complete));
    assert!(a.close().is_empty(), "abandoned once");
}

#[test]
fn append_needs_an_opened_or_known_artifact() {
    let mut a = Artifacts::default();
    assert!(a.update("x", true, false), "unknown append");
    assert!(!a.update("x", true, false), "now opened");
    a.know("snap");
    assert_eq!(a.state("snap"), Some(Known));
    assert!(!a.update("snap", true, true));
    a.know("x");
    assert_eq!(a.state("x"), Some(Open), "snapshot keeps a streamed state");
}

#[test]
fn listed_and_mapped_artifacts_are_judged_alike() {
    let mut a = Artifacts::default();
    let ids: Vec<String> = (0..LISTED + 4).map(|i| format!("a{i:02}")).collect();
    for id in &ids {
        assert!(!a.update(id, false, false));
    }
    assert!(!a.map.is_empty(), "past the list");
    // Appends find both kinds; one of each completes.
    for id in &ids {
        assert!(!a.update(id, true, false), "{id} is open");
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
    assert!(a.update("new", true, false), "unknown append past the list");
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
    assert!(!a.update("one-more", true, false));
    assert!(a.overflowed());
}
