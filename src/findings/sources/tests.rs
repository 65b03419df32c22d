//! The kinds' sources against docs/conformance.md (the coverage claim) and
//! the spec page's anchors.

use super::*;
use crate::findings::spec_link;

/// docs/conformance.md's table: (requirement id, kinds named as judging it).
pub(crate) fn conformance_rows(column: usize) -> Vec<(String, Vec<String>)> {
    include_str!("../../../docs/conformance.md")
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let id = cells[0]
                .trim_start_matches("| ")
                .trim_matches('`')
                .to_owned();
            let named = cells
                .get(column)
                .map(|c| {
                    c.split(", ")
                        .filter(|n| n.starts_with('`'))
                        .map(|n| n.trim_matches('`').to_owned())
                        .collect()
                })
                .unwrap_or_default();
            (id, named)
        })
        .collect()
}

#[test]
fn the_conformance_table_lists_the_whole_kit() {
    let rows = conformance_rows(4);
    assert_eq!(
        rows.len(),
        129,
        "a2a-tck 1.0-dev@357c4a8 has 129 requirements"
    );
    let mut ids: Vec<&str> = rows.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), rows.len(), "a requirement listed twice");
}

#[test]
fn every_kind_in_the_table_exists_and_names_the_requirement() {
    for (id, kinds) in conformance_rows(4) {
        for name in kinds {
            let kind = Kind::from_name(&name)
                .unwrap_or_else(|| panic!("{id}: `{name}` is no catalogue kind"));
            assert!(
                kind.tck().contains(&id.as_str()),
                "{id} says `{name}` judges it, but {name}.tck() = {:?}",
                kind.tck()
            );
        }
    }
}

#[test]
fn every_requirement_a_kind_names_is_in_the_table_with_it() {
    let rows = conformance_rows(4);
    for kind in Kind::ALL {
        for id in kind.tck() {
            let row = rows.iter().find(|(r, _)| r == id);
            let (_, kinds) = row.unwrap_or_else(|| panic!("{kind}: {id} is not a kit requirement"));
            assert!(
                kinds.iter().any(|k| k == kind.as_str()),
                "{id}'s row does not name `{kind}`"
            );
        }
    }
}

#[test]
fn every_section_a_kind_cites_links_to_the_spec_page() {
    for kind in Kind::ALL {
        let Some(spec) = kind.spec() else { continue };
        assert!(spec.starts_with("1.0.1 §"), "{kind}: {spec}");
        for section in spec.split('§').skip(1) {
            let section = section.trim_end_matches([',', ' ']);
            assert!(
                spec_link::anchor(section).is_some(),
                "{kind}: §{section} has no heading in spec_link"
            );
        }
        assert!(spec_link::help_uri(spec).is_some(), "{kind}");
    }
}

#[test]
fn only_kinds_without_a_rule_in_the_spec_have_no_section() {
    let without: Vec<&str> = Kind::ALL
        .iter()
        .filter(|k| k.spec().is_none())
        .map(|k| k.as_str())
        .collect();
    // Each is explained in docs/findings.md ("What each kind rests on").
    assert_eq!(without, ["task_id_mismatch", "stalled_task"]);
    let doc = include_str!("../../../docs/findings.md");
    for name in without {
        assert!(
            doc.contains(&format!("- `{name}`: ")),
            "docs/findings.md does not say why {name} has no section"
        );
    }
}

/// The catalogue's last two columns (docs/findings.md) say what the table
/// here says: the sections (`none` without one) and the kit's ids (`—`
/// without one), kind by kind.
#[test]
fn the_catalogue_columns_match_the_table() {
    let doc = include_str!("../../../docs/findings.md");
    for kind in Kind::ALL {
        let start = format!("| `{}` |", kind.as_str());
        let row = doc
            .lines()
            .find(|l| l.starts_with(&start))
            .unwrap_or_else(|| panic!("no catalogue row for {kind}"));
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let [.., spec, tck] = cells.as_slice() else {
            panic!("{row}")
        };
        let want_spec = kind
            .spec()
            .map_or("none", |s| s.trim_start_matches("1.0.1 "));
        let want_tck = if kind.tck().is_empty() {
            "—".to_string()
        } else {
            let ids: Vec<String> = kind.tck().iter().map(|id| format!("`{id}`")).collect();
            ids.join(", ")
        };
        assert_eq!((*spec, *tck), (want_spec, want_tck.as_str()), "{kind}");
    }
}
