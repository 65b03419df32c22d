//! Stamps the build with its commit (`a2a_build_info{commit}`): the
//! `A2A_TAP_COMMIT` variable when set (a container build without `.git`),
//! else `git rev-parse`, else "unknown".

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=A2A_TAP_COMMIT");
    let commit = std::env::var("A2A_TAP_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=A2A_TAP_COMMIT={commit}");
    // Rebuilt when HEAD moves: HEAD itself, its log (written on every
    // commit and checkout), the branch's ref where it is a file, and the
    // packed refs. Only files that exist are named: cargo takes a missing
    // one as changed, and would rebuild the crate every time (a fresh clone
    // has no `packed-refs`; a worktree's branch ref lives elsewhere, which
    // `--git-path` resolves).
    let mut watched = vec!["HEAD".to_string(), "logs/HEAD".into(), "packed-refs".into()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
}
