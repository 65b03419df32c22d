//! The README's quick start as a new user runs it: the binary installed
//! before any command calls `a2a-tap`, and the bundled agent built from the
//! normal dependencies alone (no proptest, criterion or rcgen to compile).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn readme() -> String {
    std::fs::read_to_string(Path::new(ROOT).join("README.md")).expect("README.md")
}

/// `cargo SUBCOMMAND ARGS` in the repository, offline; its stdout.
fn cargo(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("run cargo");
    assert!(out.status.success(), "cargo {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The package's own `cargo metadata` (no dependencies, offline).
fn metadata() -> Value {
    serde_json::from_str(&cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]))
    .expect("cargo metadata is JSON")
}

#[test]
fn the_readmes_first_command_builds_and_runs_the_proxy() {
    // The first command a new user copies...
    let command = "cargo run --release -- --listen 127.0.0.1:8080 --upstream http://127.0.0.1:9999";
    let text = readme();
    let at = text
        .find(command)
        .expect("the README's build-and-run command");
    assert!(
        text.find("```sh").is_some_and(|block| block < at) && !text[..at].contains("a2a-tap --"),
        "it is the first command that runs the proxy"
    );
    // ...runs the proxy, not the quick start's agent: with two binaries
    // `cargo run` needs the package's `default-run`.
    let meta = metadata();
    assert_eq!(meta["packages"][0]["default_run"], "a2a-tap", "{meta}");
}

#[test]
fn the_readme_installs_the_binary_before_any_command_runs_it() {
    let text = readme();
    let install = text
        .find("cargo install --locked --path .")
        .expect("the install command");
    let first_run = text
        .lines()
        .scan(0, |at, line| {
            let start = *at;
            *at += line.len() + 1;
            Some((start, line))
        })
        .find(|(_, line)| line.trim_start().starts_with("a2a-tap "))
        .map(|(at, _)| at)
        .expect("a command running a2a-tap");
    assert!(
        install < first_run,
        "install at {install}, first run at {first_run}"
    );
}

#[test]
fn the_quick_start_agent_builds_from_normal_dependencies_only() {
    // The command the README gives...
    let command = "cargo run --release --features example-agent --bin misbehaving_agent";
    assert!(readme().contains(command), "the README runs the agent so");
    // ...names a binary target behind that feature (a binary, unlike an
    // example, is built without the dev-dependencies)...
    let meta = metadata();
    let targets = meta["packages"][0]["targets"].as_array().expect("targets");
    let agent = targets
        .iter()
        .find(|t| t["name"] == "misbehaving_agent")
        .expect("the agent's target");
    assert_eq!(agent["kind"], serde_json::json!(["bin"]), "{agent}");
    assert_eq!(
        agent["required-features"],
        serde_json::json!(["example-agent"]),
        "so that `cargo install --path .` installs a2a-tap alone: {agent}"
    );
    // ...whose dependency graph holds none of the test-only crates.
    let tree = cargo(&[
        "tree",
        "--offline",
        "--features",
        "example-agent",
        "-e",
        "normal,build",
        "--prefix",
        "none",
    ]);
    for dev_only in ["proptest ", "criterion ", "rcgen "] {
        assert!(!tree.contains(dev_only), "{dev_only}in {tree}");
    }
}

/// The README's two-route config is one `config check` accepts, its
/// routes in the table it prints.
#[test]
fn the_readmes_two_route_config_checks() {
    let text = readme();
    let block = text
        .split("```toml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("[[route]]"))
        .expect("a config with routes in the README");
    let file = tempfile::Builder::new()
        .suffix(".toml")
        .tempfile()
        .expect("temp file");
    std::fs::write(file.path(), block).expect("write config");
    let (code, out, err) = crate::support::process::run_with(
        &[
            "config",
            "check",
            "--config",
            file.path().to_str().expect("utf-8"),
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    for line in [
        "#   scripted: path /agents/scripted/…, prefix stripped -> http://127.0.0.1:9999/, cards rewritten",
        "#   billing: path /agents/billing/…, prefix stripped -> https://billing.partner.example/a2a",
    ] {
        assert!(out.contains(line), "`{line}` missing from:\n{out}");
    }
}
