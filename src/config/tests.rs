//! Config parsing and validation tests (no files needed).

use super::*;
use std::time::Duration;

fn minimal() -> &'static str {
    "listen = \"127.0.0.1:8080\"\nupstream = \"http://127.0.0.1:9999\"\n"
}

fn err_text(text: &str) -> String {
    match text.parse::<Config>().and_then(|c| c.validate().map(|_| c)) {
        Ok(_) => panic!("expected an error for {text:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn defaults_match_the_contract() {
    let c: Config = minimal().parse().expect("parses");
    c.validate().expect("valid");
    assert_eq!(c.admin.to_string(), DEFAULT_ADMIN);
    assert_eq!(c.audit_log, "-");
    assert!(c.validate);
    assert!(!c.rewrite_agent_card);
    assert_eq!(c.upstream_name(), "127.0.0.1:9999");
    assert_eq!(c.proxy.max_request_body, 64 * 1024 * 1024);
    assert_eq!(c.proxy.stream_idle_timeout.0, Duration::from_secs(300));
    assert_eq!(c.proxy.max_connections, 10_000);
    assert_eq!(c.log.format, LogFormat::Text);
    assert_eq!(c.audit.evidence_bytes, 2048);
    assert_eq!(c.analysis.max_body_bytes, 4 * 1024 * 1024);
    assert_eq!(c.registry.ttl.0, Duration::from_secs(3600));
    assert_eq!(c.stall.working, StallLimit::After(Duration::from_secs(600)));
}

#[test]
fn the_example_file_parses_and_holds_the_defaults() {
    let text = include_str!("../../config.toml.example");
    let c: Config = text.parse().expect("example parses");
    c.validate().expect("example is valid");
    let d: Config = minimal().parse().expect("parses");
    assert_eq!(format!("{:?}", c.proxy), format!("{:?}", d.proxy));
    assert_eq!(format!("{:?}", c.audit), format!("{:?}", d.audit));
    assert_eq!(format!("{:?}", c.analysis), format!("{:?}", d.analysis));
    assert_eq!(format!("{:?}", c.registry), format!("{:?}", d.registry));
    assert_eq!(format!("{:?}", c.stall), format!("{:?}", d.stall));
    assert_eq!(format!("{:?}", c.log), format!("{:?}", d.log));
    assert_eq!(c.admin, d.admin);
}

/// What `config check` prints is itself a config that starts the same.
#[test]
fn the_effective_config_reads_back_as_itself() {
    let text = format!(
        "{}name = \"n\"\n[proxy]\nmax_request_body = \"2MiB\"\n[stall]\nworking = \"off\"\n[severity]\nstream_start = \"warning\"\n",
        minimal()
    );
    let c: Config = text.parse().expect("parses");
    let printed = toml::to_string(&c).expect("prints");
    let back: Config = printed.parse().expect("reads back");
    back.validate().expect("valid");
    assert_eq!(format!("{c:?}"), format!("{back:?}"), "{printed}");
}

#[test]
fn unknown_keys_are_named() {
    assert!(err_text("lisen = \"127.0.0.1:1\"").contains("lisen"));
    let e = err_text(&format!("{}[proxy]\nmax_conections = 3\n", minimal()));
    assert!(e.contains("max_conections"), "{e}");
    let e = err_text(&format!("{}[stall]\nsleeping = \"1s\"\n", minimal()));
    assert!(e.contains("sleeping"), "{e}");
}

#[test]
fn missing_listen_and_upstream_are_named() {
    assert!(err_text("upstream = \"http://a:1\"").contains("`listen`"));
    assert!(err_text("listen = \"127.0.0.1:1\"").contains("`upstream`"));
}

#[test]
fn bad_values_are_refused_with_the_reason() {
    let e = err_text(&format!("{}[proxy]\ngrace_period = \"soon\"\n", minimal()));
    assert!(e.contains("grace_period") && e.contains("soon"), "{e}");
    let e = err_text("listen = \"nope\"\nupstream = \"http://a:1\"");
    assert!(e.contains("listen"), "{e}");
    let e = err_text("listen = \"127.0.0.1:1\"\nupstream = \"ftp://a:1\"");
    assert!(e.contains("scheme"), "{e}");
    let e = err_text(&format!("{}[proxy]\nmax_connections = 0\n", minimal()));
    assert!(e.contains("proxy.max_connections"), "{e}");
    let e = err_text(&format!("{}[log]\nformat = \"xml\"\n", minimal()));
    assert!(e.contains("xml"), "{e}");
}

#[test]
fn rewrite_needs_public_url() {
    let e = err_text(&format!("{}rewrite_agent_card = true\n", minimal()));
    assert!(e.contains("public_url"), "{e}");
    let ok = format!(
        "{}rewrite_agent_card = true\npublic_url = \"https://tap.example\"\n",
        minimal()
    );
    let c: Config = ok.parse().expect("parses");
    c.validate().expect("valid");
}

#[test]
fn severity_overrides_build_a_policy() {
    let text = format!(
        "{}[severity]\nstalled_task = \"off\"\nstream_truncated = \"error\"\n",
        minimal()
    );
    let c: Config = text.parse().expect("parses");
    c.validate().expect("valid");
    let policy = c.policy().expect("policy");
    let f = crate::findings::Finding::new(Kind::StalledTask, "x");
    assert!(policy.apply(f).is_none());
    let f = crate::findings::Finding::new(Kind::StreamTruncated, "x");
    assert_eq!(
        policy.apply(f).map(|f| f.severity),
        Some(crate::findings::Severity::Error)
    );
    let e = err_text(&format!(
        "{}[severity]\nno_such_kind = \"off\"\n",
        minimal()
    ));
    assert!(e.contains("no_such_kind"), "{e}");
    let e = err_text(&format!(
        "{}[severity]\nstalled_task = \"loud\"\n",
        minimal()
    ));
    assert!(e.contains("loud"), "{e}");
}

#[test]
fn stall_limits_may_be_off() {
    let text = format!("{}[stall]\nworking = \"off\"\n", minimal());
    let c: Config = text.parse().expect("parses");
    assert_eq!(c.stall.working, StallLimit::Off);
}

#[test]
fn upstream_urls() {
    let u: UpstreamUrl = "https://agent.example/a2a/".parse().expect("url");
    assert_eq!(u.port(), 443);
    assert_eq!(u.base_path(), "/a2a");
    assert_eq!(u.host_port(), "agent.example:443");
    assert!("http://".parse::<UpstreamUrl>().is_err());
    assert!("127.0.0.1:80".parse::<UpstreamUrl>().is_err());
}

#[test]
fn header_list_size_is_bounded_both_ways() {
    let c: Config = minimal().parse().expect("parses");
    assert_eq!(c.proxy.max_header_list_size, 64 * 1024);
    for size in ["\"1KiB\"", "\"64MiB\""] {
        let text = format!("{}[proxy]\nmax_header_list_size = {size}\n", minimal());
        let e = err_text(&text);
        assert!(e.contains("proxy.max_header_list_size"), "{e}");
    }
    let text = format!("{}[proxy]\nmax_header_list_size = \"1MiB\"\n", minimal());
    let c: Config = text.parse().expect("parses");
    c.validate().expect("1 MiB is valid");
}

#[test]
fn close_wait_defaults_to_five_seconds_and_is_never_zero() {
    let c: Config = minimal().parse().expect("parses");
    assert_eq!(c.analysis.close_wait.0, Duration::from_secs(5));
    let text = format!("{}[analysis]\nclose_wait = \"0s\"\n", minimal());
    assert!(err_text(&text).contains("analysis.close_wait"));
    let ok = format!("{}[analysis]\nclose_wait = \"250ms\"\n", minimal());
    let c: Config = ok.parse().expect("parses");
    c.validate().expect("valid");
}

#[test]
fn analysis_threads_are_bounded_and_named_when_over() {
    let text = format!("{}[analysis]\nthreads = 65\n", minimal());
    let err = err_text(&text);
    assert!(err.contains("analysis.threads"), "{err}");
    let ok = format!("{}[analysis]\nthreads = 64\n", minimal());
    assert!(ok.parse::<Config>().and_then(|c| c.validate()).is_ok());
}
