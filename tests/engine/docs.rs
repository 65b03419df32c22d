//! The docs a user reads stay true to the tree: the README stays a product
//! page (under 10,000 characters; the references live in docs/), and every
//! relative link in the README, docs/, dashboards/ and deploy/ names a file
//! that exists (files move; a dead link is a doc that lies).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The user-facing Markdown files: the README, ARCHITECTURE, BENCHMARKS,
/// and every `.md` under docs/, dashboards/ and deploy/.
fn user_docs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"]
        .iter()
        .map(|f| root().join(f))
        .collect();
    for dir in ["docs", "dashboards", "deploy"] {
        let entries = std::fs::read_dir(root().join(dir)).expect("a docs folder");
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// The targets of the inline Markdown links `[text](target)` in `text`.
fn link_targets(text: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(&rest[..end]);
        }
    }
    targets
}

#[test]
fn the_readme_is_a_product_page_under_10000_characters() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let chars = readme.chars().count();
    assert!(
        chars < 10_000,
        "README.md has {chars} characters: move reference material to docs/ and link it"
    );
}

#[test]
fn every_relative_link_in_the_docs_names_a_file_that_exists() {
    let mut dead = Vec::new();
    for file in user_docs() {
        let text = std::fs::read_to_string(&file).expect("a readable doc");
        let dir = file.parent().unwrap_or(Path::new("."));
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let path = target.split('#').next().unwrap_or(target);
            if path.is_empty() || path.contains(' ') {
                continue;
            }
            if !dir.join(path).exists() {
                dead.push(format!("{}: {target}", file.display()));
            }
        }
    }
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

#[test]
fn link_targets_reads_inline_links_only() {
    let text = "see [a](docs/a.md) and [b](b.md#x), not (c.md) or [d]";
    assert_eq!(link_targets(text), vec!["docs/a.md", "b.md#x"]);
}
