//! The mistakes a new operator makes get a clear error (exit 2) naming the
//! flag, key or variable and what it accepts; `config check` prints the
//! effective configuration, or every problem at once; the environment
//! stands between the flags and the file.

use crate::support::process::run_with;

/// A config file for one test.
fn file(text: &str) -> tempfile::NamedTempFile {
    let f = tempfile::Builder::new()
        .suffix(".toml")
        .tempfile()
        .expect("temp file");
    std::fs::write(f.path(), text).expect("write config");
    f
}

const BASE: &str =
    "listen = \"127.0.0.1:0\"\nadmin = \"127.0.0.1:0\"\nupstream = \"http://127.0.0.1:1\"\n";

/// `config check` of `BASE` plus `extra`: (exit code, stdout, stderr).
fn check(extra: &str, env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let f = file(&format!("{BASE}{extra}"));
    run_with(
        &[
            "config",
            "check",
            "--config",
            f.path().to_str().expect("utf-8"),
        ],
        env,
    )
}

/// Asserts exit 2 and every `needle` in stderr.
fn refused(result: (Option<i32>, String, String), needles: &[&str]) {
    let (code, _, err) = result;
    assert_eq!(code, Some(2), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
}

#[test]
fn a_port_past_65535_is_refused_not_read_as_80() {
    let r = run_with(
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://127.0.0.1:99999",
        ],
        &[],
    );
    refused(r, &["--upstream", "99999", "65535"]);
}

#[test]
fn a_misspelt_log_level_is_an_error_not_silence() {
    refused(
        check("[log]\nlevel = \"debgu\"\n", &[]),
        &["debgu", "not a level"],
    );
    refused(
        check("", &[("RUST_LOG", "nonsense!!")]),
        &["RUST_LOG", "nonsense!!"],
    );
    refused(
        run_with(
            &[
                "config",
                "check",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "http://a:1",
                "--log-level",
                "infoo",
            ],
            &[],
        ),
        &["--log-level", "infoo"],
    );
    // Target directives stay legal.
    let (code, _, err) = check("[log]\nlevel = \"warn,a2a_tap::server=debug\"\n", &[]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_zero_stall_limit_is_refused_and_a_ca_file_for_http_is_a_warning() {
    refused(
        check("[stall]\nsubmitted = \"0s\"\n", &[]),
        &["stall.submitted", "off"],
    );
    let ca = file("not used\n");
    let (code, _, err) = check(
        &format!("[proxy]\ntls_ca_file = \"{}\"\n", ca.path().display()),
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning") && err.contains("tls_ca_file"),
        "{err}"
    );
}

#[test]
fn sizes_take_units_and_durations_say_what_they_want() {
    let (code, out, err) = check(
        "[proxy]\nmax_request_body = \"64MiB\"\n[audit]\nevidence_bytes = \"4 KB\"\n",
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("max_request_body = 67108864"), "{out}");
    assert!(out.contains("evidence_bytes = 4000"), "{out}");
    refused(
        check("[proxy]\nmax_request_body = \"64 parsecs\"\n", &[]),
        &["max_request_body", "parsecs", "MiB"],
    );
    refused(
        check("[proxy]\ngrace_period = 30\n", &[]),
        &["grace_period", "a duration like", "30"],
    );
}

#[test]
fn an_unknown_severity_kind_lists_the_kinds() {
    refused(
        check("[severity]\nterminal_exitt = \"off\"\n", &[]),
        &["severity.terminal_exitt", "terminal_exit,", "stalled_task"],
    );
}

#[test]
fn config_check_prints_every_problem_at_once_and_binds_nothing() {
    let f = file("admin = \"127.0.0.1:0\"\n[stall]\nworking = \"0s\"\n[registry]\nmax_tasks = 0\n");
    let r = run_with(
        &[
            "config",
            "check",
            "--config",
            f.path().to_str().expect("utf-8"),
        ],
        &[],
    );
    refused(
        r,
        &[
            "`listen`",
            "`upstream`",
            "stall.working",
            "registry.max_tasks",
        ],
    );
    // A port in use does not matter: nothing is bound.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let (code, out, err) = run_with(
        &[
            "config",
            "check",
            "--listen",
            &addr,
            "--upstream",
            "http://user:secret@agent:9999/a2a",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&format!("listen = \"{addr}\"")), "{out}");
    assert!(
        out.contains("grace_period = \"30s\""),
        "defaults filled in: {out}"
    );
    assert!(out.contains("***@agent:9999"), "credentials masked: {out}");
    assert!(!out.contains("secret"), "{out}");
}

#[test]
fn the_environment_sits_between_flags_and_the_file() {
    let f = file(&format!("{BASE}name = \"from-file\"\n"));
    let path = f.path().to_str().expect("utf-8");
    let (code, out, err) = run_with(
        &["config", "check", "--config", path],
        &[
            ("A2A_TAP_NAME", "from-env"),
            ("A2A_TAP_THREADS", "3"),
            ("A2A_TAP_LOG_FORMAT", "json"),
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("name = \"from-env\""), "{out}");
    assert!(out.contains("threads = 3"), "{out}");
    assert!(out.contains("format = \"json\""), "{out}");
    let (code, out, err) = run_with(
        &["config", "check", "--config", path, "--name", "from-flag"],
        &[("A2A_TAP_NAME", "from-env")],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("name = \"from-flag\""), "{out}");
    // The config file itself may come from the environment.
    let (code, out, err) = run_with(&["config", "check"], &[("A2A_TAP_CONFIG", path)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("name = \"from-file\""), "{out}");
    refused(
        run_with(
            &["config", "check", "--config", path],
            &[("A2A_TAP_THREADS", "0")],
        ),
        &["--threads", "1..="],
    );
}

#[tokio::test]
async fn threads_sets_the_serving_threads_and_the_startup_line_says_so() {
    let up = crate::support::Upstream::start().await;
    let p = crate::support::process::Process::start(up.addr, "[proxy]\nthreads = 1\n");
    let log = p.stderr();
    let line = log
        .lines()
        .find(|l| l.contains("a2a-tap serving"))
        .unwrap_or_else(|| panic!("no startup line: {log}"));
    for field in [
        "threads=1",
        "version=",
        "audit=",
        "validate=true",
        "upstream=http://",
    ] {
        assert!(line.contains(field), "`{field}` missing from {line}");
    }
}

/// `[registry] backend = "redis"`: the URL is required, must be redis:// or
/// rediss://, and its password is masked when printed; a URL without the
/// backend is a warning (it would be ignored).
#[test]
fn the_shared_registry_needs_a_redis_url_and_masks_its_password() {
    refused(
        check("[registry]\nbackend = \"redis\"\n", &[]),
        &["registry.redis_url", "required"],
    );
    refused(
        check(
            "[registry]\nbackend = \"redis\"\nredis_url = \"http://cache:6379\"\n",
            &[],
        ),
        &["redis_url", "redis:// or rediss://"],
    );
    refused(
        check("[registry]\nbackend = \"valkey\"\n", &[]),
        &["backend", "valkey"],
    );
    refused(
        check(
            "[registry]\nbackend = \"redis\"\nredis_url = \"redis://h:1\"\nkey_prefix = \"\"\n",
            &[],
        ),
        &["registry.key_prefix"],
    );
    let (code, out, err) = check(
        "[registry]\nbackend = \"redis\"\nredis_url = \"rediss://user:s3cret@cache:6380/2\"\n",
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("redis_url = \"rediss://***@cache:6380/2\""),
        "{out}"
    );
    assert!(
        !out.contains("s3cret") && !err.contains("s3cret"),
        "{out}{err}"
    );
    let (code, _, err) = check("[registry]\nredis_url = \"redis://cache:6379\"\n", &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning") && err.contains("registry.backend"),
        "{err}"
    );
}

/// `registry.shared_key` comes from the file or, over it, from
/// `A2A_TAP_REGISTRY_SHARED_KEY`; `config check` prints it masked; a key
/// too short to be a secret, or a read bound too small for one entry, is
/// refused naming the key.
#[test]
fn the_registry_key_is_masked_and_checked() {
    let redis = "[registry]\nbackend = \"redis\"\nredis_url = \"redis://127.0.0.1:6379\"\n";
    let secret = "file-secret-0123456789";
    let (code, out, err) = check(&format!("{redis}shared_key = \"{secret}\"\n"), &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("shared_key = \"***\""), "{out}");
    assert!(!out.contains(secret), "{out}");
    let env = [("A2A_TAP_REGISTRY_SHARED_KEY", "env-secret-0123456789")];
    let (code, out, err) = check(redis, &env);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("shared_key = \"***\"") && !out.contains("env-secret"),
        "{out}"
    );
    let short = [("A2A_TAP_REGISTRY_SHARED_KEY", "short")];
    refused(
        check(redis, &short),
        &[
            "registry.shared_key",
            "16 bytes",
            "A2A_TAP_REGISTRY_SHARED_KEY",
        ],
    );
    refused(
        check(&format!("{redis}max_read_bytes = \"64KiB\"\n"), &[]),
        &["registry.max_read_bytes", "256KiB"],
    );
}

/// A bad value from the environment names the variable, not the flag it
/// stands for; the same value as a flag names the flag.
#[test]
fn a_bad_environment_value_names_the_variable() {
    let (code, _, err) = run_with(
        &[
            "config",
            "check",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://127.0.0.1:1",
        ],
        &[("A2A_TAP_THREADS", "abc")],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("A2A_TAP_THREADS") && err.contains("'abc'"),
        "{err}"
    );
    assert!(!err.contains("'--threads"), "{err}");
    // Serving (no subcommand) says the same.
    let (code, _, err) = run_with(&[], &[("A2A_TAP_LISTEN", "nowhere")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("A2A_TAP_LISTEN"), "{err}");
    let (code, _, err) = run_with(&["config", "check", "--threads", "abc"], &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("'--threads <N>'") && !err.contains("A2A_TAP_THREADS"),
        "{err}"
    );
}

/// An `A2A_TAP_*` variable no flag reads is a warning naming it and the
/// closest known name, in `config check` and at start.
#[tokio::test]
async fn an_unknown_a2a_tap_variable_is_a_warning() {
    let (code, _, err) = check("", &[("A2A_TAP_UPSTRAEM", "http://127.0.0.1:2")]);
    assert_eq!(code, Some(0), "a warning, not an error: {err}");
    assert!(
        err.contains("warning") && err.contains("A2A_TAP_UPSTRAEM"),
        "{err}"
    );
    assert!(err.contains("did you mean A2A_TAP_UPSTREAM?"), "{err}");
    let up = crate::support::Upstream::start().await;
    let launch = crate::support::process::Launch {
        env: vec![("A2A_TAP_UPSTRAEM".into(), "http://127.0.0.1:2".into())],
        ..Default::default()
    };
    let p = crate::support::process::Process::launch(up.addr, "", launch);
    let log = p.stderr();
    assert!(
        log.lines()
            .any(|l| l.contains("WARN") && l.contains("A2A_TAP_UPSTRAEM")),
        "{log}"
    );
}

/// The card-rewrite knobs have flags and variables, shown by `--help`;
/// turning rewriting on without a public URL names `public_url`.
#[test]
fn card_rewriting_is_reachable_from_flags_and_the_environment() {
    let (code, out, err) = check(
        "",
        &[
            ("A2A_TAP_REWRITE_AGENT_CARD", "true"),
            ("A2A_TAP_PUBLIC_URL", "https://tap.example"),
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("rewrite_agent_card = true"), "{out}");
    assert!(
        out.contains("public_url = \"https://tap.example/\""),
        "{out}"
    );
    let f = file(&format!(
        "{BASE}rewrite_agent_card = true\npublic_url = \"https://tap.example\"\n"
    ));
    let path = f.path().to_str().expect("utf-8");
    // A flag turns off what the file turned on.
    let (code, out, err) = run_with(
        &[
            "config",
            "check",
            "--config",
            path,
            "--rewrite-agent-card=false",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("rewrite_agent_card = false"), "{out}");
    refused(
        run_with(
            &[
                "config",
                "check",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "http://127.0.0.1:1",
                "--rewrite-agent-card",
            ],
            &[],
        ),
        &["public_url", "rewrite_agent_card"],
    );
    refused(
        check("", &[("A2A_TAP_REWRITE_AGENT_CARD", "maybe")]),
        &["A2A_TAP_REWRITE_AGENT_CARD", "'maybe'"],
    );
    let (code, help, _) = run_with(&["--help"], &[]);
    assert_eq!(code, Some(0));
    for needle in [
        "--rewrite-agent-card",
        "A2A_TAP_REWRITE_AGENT_CARD",
        "--public-url",
        "A2A_TAP_PUBLIC_URL",
    ] {
        assert!(
            help.contains(needle),
            "`{needle}` missing from --help: {help}"
        );
    }
}

/// Starting with the upstream unreachable is a warning naming it (not only
/// `/readyz`); a reachable one is not.
#[tokio::test]
async fn an_unreachable_upstream_at_start_is_a_warning_naming_it() {
    let (_refusing, closed) = crate::support::ports::refused();
    let p = crate::support::process::Process::start(closed, "");
    let log = p.stderr();
    let line = log
        .lines()
        .find(|l| l.contains("does not accept connections at start"))
        .unwrap_or_else(|| panic!("no warning: {log}"));
    assert!(
        line.contains("WARN") && line.contains(&closed.to_string()),
        "{line}"
    );
    let up = crate::support::Upstream::start().await;
    let p = crate::support::process::Process::start(up.addr, "");
    let log = p.stderr();
    assert!(!log.contains("does not accept connections"), "{log}");
}

/// Six mistakes take one run: every type error of the file (each named by
/// its line and value), and the rules of the keys that read, whatever else
/// is set (`tracing.sample_ratio` with tracing off; an audit log that
/// cannot be written).
#[test]
fn config_check_names_every_type_error_and_every_rule_in_one_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let audit = dir.path().join("no-such-dir").join("audit.jsonl");
    let f = file(&format!(
        "listen = \"127.0.0.1:0\"\nupstream = \"http://127.0.0.1:99999\"\n\
         audit_log = \"{}\"\n\
         [proxy]\ngrace_period = \"10\"\ndrain_delay = \"ten minutes\"\n\
         [analysis]\nmax_body_bytes = \"64MB!\"\n\
         [tracing]\nsample_ratio = 3.0\n",
        audit.display()
    ));
    let (code, out, err) = run_with(
        &[
            "config",
            "check",
            "--config",
            f.path().to_str().expect("utf-8"),
        ],
        &[],
    );
    assert_eq!(code, Some(2), "{out}{err}");
    for needle in [
        "99999",
        "grace_period = \"10\"",
        "ten minutes",
        "64MB!",
        "`tracing.sample_ratio`: 3 is not from 0 to 1",
        "`audit_log`: cannot be written",
    ] {
        assert!(err.contains(needle), "`{needle}` missing from: {err}");
    }
    // The bad upstream is reported once, not again as missing.
    assert!(!err.contains("`upstream` is required"), "{err}");
    assert!(!audit.exists() && !audit.parent().expect("dir").exists());
}

/// `check --help` and `probe --help` name the same config sections (the
/// ones both apply offline as live).
#[test]
fn check_and_probe_help_agree_on_the_config_sections() {
    for command in ["check", "probe"] {
        let (code, help, err) = run_with(&[command, "--help"], &[]);
        assert_eq!(code, Some(0), "{err}");
        for section in [
            "[severity]",
            "[analysis]",
            "[audit]",
            "[registry]",
            "[stall]",
        ] {
            assert!(
                help.contains(section),
                "{command} --help lacks {section}: {help}"
            );
        }
    }
}

/// `[severity] sdk_drift` is a key `config check` knows: shown in the
/// effective config when set, and a bad value refused naming it.
#[test]
fn config_check_knows_sdk_drift() {
    let good = file(&format!("{BASE}[severity]\nsdk_drift = \"warning\"\n"));
    let path = good.path().to_str().expect("utf-8");
    let (code, out, err) = run_with(&["config", "check", "--config", path], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("sdk_drift = \"warning\""), "{out}");
    let bad = file(&format!("{BASE}[severity]\nsdk_drift = \"loud\"\n"));
    let path = bad.path().to_str().expect("utf-8");
    refused(
        run_with(&["config", "check", "--config", path], &[]),
        &["sdk_drift", "loud"],
    );
}

/// The push relay's keys: on without where to listen or how agents reach
/// it, without validation, or with zero bounds, each is named; a good
/// section is printed with its defaults by `config check`; a relay that
/// cannot bind its port exits 3 naming `push.listen`.
#[test]
fn the_push_relay_names_what_it_lacks() {
    refused(
        check(
            "validate = false\n[push]\nrelay = true\nmax_registrations = 0\n",
            &[],
        ),
        &[
            "`push.listen`",
            "`push.public_url`",
            "`push.relay`: needs validate = true",
            "`push.max_registrations`: must be greater than zero",
        ],
    );
    refused(
        check(
            "[push]\nrelay = true\nlisten = \"127.0.0.1:0\"\npublic_url = \"http://x/?a=1\"\n",
            &[],
        ),
        &["public_url", "must not have a query"],
    );
    let (code, out, err) = check(
        "[push]\nrelay = true\nlisten = \"127.0.0.1:0\"\npublic_url = \"https://push.example\"\n",
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    for line in [
        "[push]",
        "relay = true",
        "terminal_wait = \"30s\"",
        "max_registrations = 100000",
    ] {
        assert!(out.contains(line), "`{line}` missing from: {out}");
    }
    // Its port taken: exit 3, the key named.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    let f = file(&format!(
        "{BASE}audit_log = \"-\"\n[push]\nrelay = true\nlisten = \"127.0.0.1:{port}\"\npublic_url = \"http://127.0.0.1:{port}\"\n"
    ));
    let (code, _, err) = run_with(&["--config", f.path().to_str().expect("utf-8")], &[]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("push.listen"), "{err}");
}

/// `config check` of `text` alone (no `BASE`).
fn check_alone(text: &str) -> (Option<i32>, String, String) {
    let f = file(text);
    run_with(
        &[
            "config",
            "check",
            "--config",
            f.path().to_str().expect("utf-8"),
        ],
        &[],
    )
}

const ROUTES: &str = "listen = \"127.0.0.1:0\"\nadmin = \"127.0.0.1:0\"\n\
    public_url = \"https://gw.example\"\n\
    [[route]]\nname = \"billing\"\nupstream = \"https://billing.example/a2a\"\n\
    path_prefix = \"/agents/billing/\"\nrewrite_agent_card = true\n\
    [route.severity]\nstream_not_closed = \"off\"\n\
    [[route]]\nname = \"search\"\nupstream = \"http://search.internal:9000\"\n\
    host = \"search.example\"\n\
    [[route]]\nname = \"rest\"\nupstream = \"http://fallback.internal\"\npath_prefix = \"/\"\n";

#[test]
fn config_check_prints_the_route_table_in_matching_order() {
    let (code, out, err) = check_alone(ROUTES);
    assert_eq!(code, Some(0), "{err}");
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("# routes"))
        .collect();
    assert_eq!(
        table[1..],
        [
            "#   billing: path /agents/billing/…, prefix stripped -> \
             https://billing.example/a2a, cards rewritten",
            "#   search: host search.example, any path -> http://search.internal:9000/",
            "#   rest: any path -> http://fallback.internal/",
        ],
        "{out}"
    );
    // The tables themselves, as written, with their overrides.
    assert!(out.contains("[[route]]"), "{out}");
    assert!(out.contains("stream_not_closed = \"off\""), "{out}");
}

#[test]
fn route_mistakes_are_named_by_route_and_key() {
    let dup = format!(
        "{ROUTES}[[route]]\nname = \"billing\"\nupstream = \"http://x\"\npath_prefix = \"/agents/billing\"\n"
    );
    refused(
        check_alone(&dup),
        &[
            "route[3].name",
            "already the name of route[0]",
            "route[3].path_prefix",
            "same match as route `billing`",
        ],
    );
    refused(
        check(
            "[[route]]\nname = \"a\"\nupstream = \"http://x\"\npath_prefix = \"/a\"\n",
            &[],
        ),
        &["`upstream`", "cannot be set together with [[route]]"],
    );
    let bad =
        "listen = \"127.0.0.1:0\"\n[[route]]\nupstream = \"http://x\"\npath_prefix = \"a/../b\"\n\
               [[route]]\nname = \"b\"\npath_prefix = \"/b//c\"\nhost = \"http://h/\"\n\
               [route.severity]\nno_such_kind = \"off\"\n";
    refused(
        check_alone(bad),
        &[
            "route[0].name",
            "route[0].path_prefix",
            "must start with `/`",
            "route[1].upstream",
            "route[1].path_prefix",
            "route[1].host",
            "route[1].severity.no_such_kind",
        ],
    );
}

/// The egress example of deploy/ is a config `config check` accepts, one
/// route per remote agent.
#[test]
fn the_egress_example_checks() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/egress/config.toml");
    let (code, out, err) = run_with(&["config", "check", "--config", path], &[]);
    assert_eq!(code, Some(0), "{err}");
    for route in ["billing", "travel", "search"] {
        assert!(
            out.contains(&format!("#   {route}: path /agents/{route}/…")),
            "{out}"
        );
    }
    // No route takes every path: the rest is refused.
    assert!(out.contains("#   any other request: 404"), "{out}");
}

/// With the one `upstream`, the table is that route, taking every request.
#[test]
fn config_check_prints_the_one_upstream_as_the_one_route() {
    let (code, out, err) = check("name = \"agent\"\n", &[]);
    assert_eq!(code, Some(0), "{err}");
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("# routes"))
        .collect();
    assert_eq!(
        table[1..],
        ["#   agent: any path -> http://127.0.0.1:1/"],
        "{out}"
    );
}

/// The push relay judges as the one upstream's: with routes it is refused,
/// named.
#[test]
fn the_push_relay_serves_every_route() {
    let text = format!(
        "{ROUTES}[push]\nrelay = true\nlisten = \"127.0.0.1:0\"\npublic_url = \"https://push.example\"\n"
    );
    let (code, out, err) = check_alone(&text);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("relay = true"), "{out}");
}
