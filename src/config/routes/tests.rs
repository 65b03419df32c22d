use super::*;

#[test]
fn unsafe_paths_are_the_ones_a_server_may_resolve_elsewhere() {
    for path in [
        "/a/../b",
        "/a/./b",
        "/a//b",
        "/a/%2e%2E/b",
        "/a/.%2e",
        "/a%2fb",
        "/a%2Fb",
        "/a%5cb",
        "/a\\b",
        "/..",
        "/%2e",
    ] {
        assert!(unsafe_path(path), "{path}");
    }
    for path in [
        "/",
        "/a",
        "/a/",
        "/a/b.c",
        "/a/...",
        "/a/.well-known/agent-card.json",
        "/a%20b",
    ] {
        assert!(!unsafe_path(path), "{path}");
    }
}

#[test]
fn a_route_takes_the_top_level_settings_and_its_own_over_them() {
    let config: Config = r#"
        listen = "127.0.0.1:0"
        rewrite_agent_card = false
        public_url = "https://gw.example"
        [proxy]
        upstream_http2 = false
        connect_timeout = "3s"
        [severity]
        stream_truncated = "off"
        malformed_event = "warning"
        [[route]]
        name = "a"
        upstream = "http://a/base"
        path_prefix = "/agents/a/"
        upstream_http2 = true
        rewrite_agent_card = true
        [route.severity]
        malformed_event = "error"
        [[route]]
        name = "b"
        upstream = "http://b"
        host = "B.example"
        strip_prefix = false
    "#
    .parse()
    .expect("parses");
    config.validate().expect("valid");
    let specs = config.route_specs();
    let (a, b) = (&specs[0], &specs[1]);
    assert_eq!((a.prefix.as_str(), a.strip), ("/agents/a", true));
    assert!(a.proxy.upstream_http2 && a.rewrite_agent_card);
    assert_eq!(a.proxy.connect_timeout, HumanDuration::secs(3));
    assert_eq!(
        a.severity.keys().collect::<Vec<_>>(),
        ["malformed_event", "stream_truncated"]
    );
    use crate::findings::{Finding, Kind, Severity};
    let severity = |spec: &RouteSpec, kind| {
        let policy = spec.policy().expect("policy");
        policy.apply(Finding::new(kind, "x")).map(|f| f.severity)
    };
    assert_eq!(severity(a, Kind::MalformedEvent), Some(Severity::Error));
    assert_eq!(severity(b, Kind::MalformedEvent), Some(Severity::Warning));
    assert_eq!(severity(a, Kind::StreamTruncated), None);
    assert_eq!(
        (b.prefix.as_str(), b.host.as_deref()),
        ("", Some("b.example"))
    );
    assert!(!b.strip && !b.proxy.upstream_http2 && !b.rewrite_agent_card);
}

#[test]
fn without_routes_the_upstream_is_the_one_route() {
    let config: Config = "upstream = \"http://agent:9999/a2a\"\nname = \"x\""
        .parse()
        .expect("parses");
    let specs = config.route_specs();
    assert_eq!(specs.len(), 1);
    assert_eq!(
        (specs[0].name.as_str(), specs[0].prefix.as_str()),
        ("x", "")
    );
    assert!(!specs[0].strip && specs[0].host.is_none());
}

#[test]
fn config_check_output_reads_back() {
    let config: Config = r#"
        [[route]]
        name = "a"
        upstream = "http://a"
        path_prefix = "/a"
        [route.severity]
        stream_truncated = "off"
    "#
    .parse()
    .expect("parses");
    let printed = toml::to_string(&config).expect("prints");
    let again: Config = printed.parse().expect("reads back");
    assert_eq!(again.routes.len(), 1);
    assert_eq!(again.routes[0].severity.len(), 1);
}

#[test]
fn a_ca_file_on_a_plain_http_route_is_a_warning_naming_it() {
    let config: Config = "[[route]]\nname = \"a\"\nupstream = \"http://a\"\npath_prefix = \"/a\"\n\
                          tls_ca_file = \"/nowhere.pem\"\n"
        .parse()
        .expect("parses");
    let warnings = config.warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("route[0].tls_ca_file") && w.contains("`a`")),
        "{warnings:?}"
    );
}
