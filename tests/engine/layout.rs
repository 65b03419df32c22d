//! The layout ARCHITECTURE.md describes: no import cycle between the
//! crate's modules. Reads every file under `src/`, takes the paths it names
//! (`crate::a::b`, `crate::{a, b}`, `super::x`), and draws an edge between
//! two sibling modules when one names the other (`analysis::worker` naming
//! `analysis::msg` is an edge between those two; `analysis` naming
//! `report` is one between top-level modules). Any cycle among siblings,
//! at any depth, fails with the files that make it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module by its path from the crate root (`["analysis", "worker"]`).
type Module = Vec<String>;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).expect("src/ is readable");
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file holds: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).expect("a file under src/");
    let mut parts: Module = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The code of a file without its comments (doc comments name paths in
/// prose) and string literals (messages name them too).
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if !in_str && c == '/' && chars.peek() == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' && prev != '\'' {
                in_str = !in_str;
            } else if !in_str {
                out.push(c);
            }
            prev = if prev == '\\' && c == '\\' { ' ' } else { c };
        }
        out.push('\n');
    }
    out
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The module paths a file's code names, resolved from `module`: each as
/// far as it goes (`crate::a::b::Item` is `[a, b, Item]`).
fn named(module: &Module, code: &str) -> Vec<Module> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        // `a2a_tap::crate::` cannot occur; `$crate::` is a macro's.
        if code[..i].ends_with('$')
            || code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        out.extend(path_at(Vec::new(), &code[i + "crate::".len()..]));
    }
    for (i, _) in code.match_indices("super::") {
        if code[..i].ends_with("super::") {
            continue; // counted from the first `super::` of the run
        }
        let mut base = module.clone();
        let mut rest = &code[i..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        out.extend(path_at(base, rest));
    }
    out
}

/// The paths `rest` names after `base::`: one, or each of a `{...}` group.
fn path_at(base: Module, rest: &str) -> Vec<Module> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let end = group
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => return true,
                    '}' => depth -= 1,
                    _ => {}
                }
                false
            })
            .map_or(group.len(), |(i, _)| i);
        let inner = &group[..end];
        let mut items = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&inner[start..]);
        return items
            .into_iter()
            .flat_map(|item| path_at(base.clone(), item))
            .collect();
    }
    let mut path = base;
    let mut rest = rest;
    loop {
        let name = ident(rest);
        if name.is_empty() || name == "self" {
            break;
        }
        rest = &rest[name.len()..];
        path.push(name);
        match rest.strip_prefix("::") {
            Some(r) if r.starts_with('{') => return path_at(path, r),
            Some(r) => rest = r,
            None => break,
        }
    }
    vec![path]
}

/// The sibling modules an edge `from -> to` joins: the first modules where
/// the two paths part, when `to`'s is a module (not an item of a parent).
fn siblings(from: &Module, to: &Module, modules: &BTreeSet<Module>) -> Option<(Module, Module)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if common >= from.len() || common >= to.len() {
        return None; // a module naming itself, an ancestor or a descendant
    }
    let a = from[..=common].to_vec();
    let b = to[..=common].to_vec();
    modules.contains(&b).then_some((a, b))
}

/// A cycle in `edges` (as its modules in order), if there is one.
fn cycle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        m: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        marks: &mut BTreeMap<Module, Mark>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        match marks.get(m) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let at = stack.iter().position(|s| s == m).unwrap_or(0);
                let mut found = stack[at..].to_vec();
                found.push(m.clone());
                return Some(found);
            }
            None => {}
        }
        marks.insert(m.clone(), Mark::Open);
        stack.push(m.clone());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(found) = visit(next, edges, marks, stack) {
                return Some(found);
            }
        }
        stack.pop();
        marks.insert(m.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for m in edges.keys() {
        if let Some(found) = visit(m, edges, &mut marks, &mut Vec::new()) {
            return Some(found);
        }
    }
    None
}

/// The sibling edges of the crate's sources, each with the files that
/// make it.
fn crate_edges() -> BTreeMap<(Module, Module), BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    // The binary's root is another crate, which names the library by name.
    files.retain(|f| f != &src.join("main.rs"));
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut edges: BTreeMap<(Module, Module), BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        let text = std::fs::read_to_string(file).expect("a source file is readable");
        for to in named(&module, &code(&text)) {
            // The longest module prefix of the path named.
            let mut to = to;
            while !to.is_empty() && !modules.contains(&to) {
                to.pop();
            }
            if let Some(edge) = siblings(&module, &to, &modules) {
                let shown = file
                    .strip_prefix(&src)
                    .unwrap_or(file)
                    .display()
                    .to_string();
                edges.entry(edge).or_default().insert(shown);
            }
        }
    }
    edges
}

#[test]
fn no_import_cycle_between_modules_or_between_folders_inside_one() {
    let edges = crate_edges();
    assert!(
        edges
            .keys()
            .any(|(a, b)| a == &["analysis"] && b == &["report"]),
        "the reader found the edges (analysis names report)"
    );
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        graph.entry(a.clone()).or_default().insert(b.clone());
    }
    if let Some(found) = cycle(&graph) {
        let steps: Vec<String> = found
            .windows(2)
            .map(|w| {
                let files = &edges[&(w[0].clone(), w[1].clone())];
                format!(
                    "{} -> {} (in {})",
                    w[0].join("::"),
                    w[1].join("::"),
                    files.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            })
            .collect();
        panic!("an import cycle:\n  {}", steps.join("\n  "));
    }
}

#[test]
fn the_pure_core_imports_nothing_that_does_io() {
    // ARCHITECTURE.md: the engine and what it drives are pure, so `check`,
    // `probe` and the live path judge with the same code.
    let core = ["sse", "a2a", "lifecycle", "findings", "engine", "judge"];
    let edges = crate_edges();
    let out: Vec<String> = edges
        .iter()
        .filter(|((a, b), _)| {
            a.len() == 1 && core.contains(&a[0].as_str()) && !core.contains(&b[0].as_str())
        })
        .map(|((a, b), files)| format!("{} -> {} ({:?})", a[0], b[0], files))
        .collect();
    assert!(out.is_empty(), "the core imports outside it: {out:?}");
}

#[test]
fn the_reader_resolves_groups_and_super() {
    let m: Module = vec!["analysis".into(), "worker".into(), "records".into()];
    let found = named(
        &m,
        &code("use super::super::msg::{Caller, Msg};\nuse crate::{a2a::model::Exchange, report::{audit, log_safe}};\n// crate::proxy in a comment\nlet s = \"crate::server\";"),
    );
    let want: Vec<Module> = [
        &["a2a", "model", "Exchange"][..],
        &["report", "audit"],
        &["report", "log_safe"],
        &["analysis", "msg", "Caller"],
        &["analysis", "msg", "Msg"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(found, want);
    let mut g = BTreeMap::new();
    let (a, b): (Module, Module) = (vec!["a".into()], vec!["b".into()]);
    g.insert(a.clone(), BTreeSet::from([b.clone()]));
    assert_eq!(cycle(&g), None);
    g.insert(b.clone(), BTreeSet::from([a.clone()]));
    assert!(cycle(&g).is_some(), "a -> b -> a is a cycle");
}
