use super::*;

#[test]
fn host_only_keeps_brackets_and_drops_ports() {
    assert_eq!(host_only("a.example:8080"), "a.example");
    assert_eq!(host_only("a.example"), "a.example");
    assert_eq!(host_only("[::1]:80"), "[::1]");
    assert_eq!(host_only("[::1]"), "[::1]");
}

#[test]
fn a_long_path_is_cut_in_the_reason() {
    let long = format!("/{}", "a".repeat(1000));
    let cut = cut(&long);
    assert!(cut.len() < 300 && cut.ends_with('…'), "{cut}");
    assert_eq!(super::cut("/x"), "/x");
}
