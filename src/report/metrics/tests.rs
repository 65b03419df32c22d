use super::*;

const CONTRACT: &[(&str, &str)] = &[
    ("a2a_requests_total", "counter"),
    ("a2a_request_duration_seconds", "histogram"),
    ("a2a_proxy_overhead_seconds", "histogram"),
    ("a2a_stream_events_total", "counter"),
    ("a2a_streams_active", "gauge"),
    ("a2a_stream_duration_seconds", "histogram"),
    ("a2a_time_to_first_event_seconds", "histogram"),
    ("a2a_task_transitions_total", "counter"),
    ("a2a_tasks_tracked", "gauge"),
    ("a2a_violations_total", "counter"),
    ("a2a_upstream_errors_total", "counter"),
    ("a2a_audit_records_dropped_total", "counter"),
    ("a2a_analysis_skipped_total", "counter"),
];

#[test]
fn every_contract_metric_is_registered_with_its_type() {
    let m = Metrics::new().expect("metrics");
    // Touch each labelled family so it shows in the output.
    m.requests_total
        .with("u", "jsonrpc", "GetTask", "2xx")
        .inc();
    m.request_duration_seconds
        .with("u", "jsonrpc", "GetTask")
        .observe(0.1);
    m.proxy_overhead_seconds.with("u").observe(0.000_02);
    m.stream_events_total.with("u", "rest", "task").inc();
    m.streams_active.with("u").inc();
    m.stream_duration_seconds.with("u", "terminal").observe(1.0);
    m.time_to_first_event_seconds.with("u").observe(0.01);
    m.task_transitions_total
        .with("u", "working", "completed")
        .inc();
    m.tasks_tracked.with("u", "working").set(1);
    m.violations_total.with("u", "terminal_exit", "error").inc();
    m.upstream_errors_total.with("u", "connect").inc();
    m.analysis_skipped_total.with("u", "queue_full").inc();
    let text = m.encode();
    for (name, kind) in CONTRACT {
        assert!(
            text.contains(&format!("# TYPE {name} {kind}\n")),
            "{name} missing:\n{text}"
        );
    }
    assert!(text.contains("a2a_proxy_overhead_seconds_bucket{upstream=\"u\",le=\"0.000005\"}"));
}

#[test]
fn two_instances_do_not_collide() {
    assert!(Metrics::new().is_ok());
    assert!(Metrics::new().is_ok());
}

#[test]
fn status_classes() {
    assert_eq!(status_class(http::StatusCode::OK), "2xx");
    assert_eq!(status_class(http::StatusCode::BAD_GATEWAY), "5xx");
    assert_eq!(status_class(http::StatusCode::NOT_FOUND), "4xx");
}

/// Each typed family puts each value under the label its argument is named
/// for (the label names of docs/metrics.md): a value equal to its label's
/// name shows as `label="label"` on the series' line.
#[test]
fn each_value_lands_under_its_label_name() {
    let m = Metrics::new().expect("metrics");
    m.requests_total
        .with("upstream", "binding", "method", "code")
        .inc();
    m.request_duration_seconds
        .with("upstream", "binding", "method")
        .observe(0.1);
    m.stream_events_total
        .with("upstream", "binding", "event")
        .inc();
    m.stream_duration_seconds
        .with("upstream", "outcome")
        .observe(1.0);
    m.task_transitions_total
        .with("upstream", "from", "to")
        .inc();
    m.tasks_tracked.with("upstream", "state").set(1);
    m.violations_total
        .with("upstream", "kind", "severity")
        .inc();
    m.upstream_errors_total.with("upstream", "reason").inc();
    m.analysis_skipped_total.with("upstream", "reason").inc();
    m.ids_over_limit_total.with("upstream").inc();
    m.agent_card_bypass_total.with("upstream").inc();
    m.connections_closed_total.with("reason").inc();
    m.accept_errors_total.with("listener").inc();
    m.upstream_up.with("upstream").set(1);
    m.registry_facts_total.with("direction").inc();
    m.registry_errors_total.with("op").inc();
    let text = m.encode();
    let families: &[(&str, &[&str])] = &[
        (
            "a2a_requests_total",
            &["upstream", "binding", "method", "code"],
        ),
        (
            "a2a_request_duration_seconds_count",
            &["upstream", "binding", "method"],
        ),
        ("a2a_stream_events_total", &["upstream", "binding", "event"]),
        (
            "a2a_stream_duration_seconds_count",
            &["upstream", "outcome"],
        ),
        ("a2a_task_transitions_total", &["upstream", "from", "to"]),
        ("a2a_tasks_tracked", &["upstream", "state"]),
        ("a2a_violations_total", &["upstream", "kind", "severity"]),
        ("a2a_upstream_errors_total", &["upstream", "reason"]),
        ("a2a_analysis_skipped_total", &["upstream", "reason"]),
        ("a2a_ids_over_limit_total", &["upstream"]),
        ("a2a_agent_card_bypass_total", &["upstream"]),
        ("a2a_connections_closed_total", &["reason"]),
        ("a2a_accept_errors_total", &["listener"]),
        ("a2a_upstream_up", &["upstream"]),
        ("a2a_registry_facts_total", &["direction"]),
        ("a2a_registry_errors_total", &["op"]),
    ];
    for (name, labels) in families {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{")))
            .unwrap_or_else(|| panic!("{name} missing:\n{text}"));
        let pairs = line.matches("=\"").count();
        assert_eq!(pairs, labels.len(), "{line}");
        for label in *labels {
            assert!(line.contains(&format!("{label}=\"{label}\"")), "{line}");
        }
    }
    assert!(text.contains(&format!(
        "a2a_build_info{{commit=\"{}\",version=\"{}\"}} 1",
        env!("A2A_TAP_COMMIT"),
        env!("CARGO_PKG_VERSION")
    )));
}
