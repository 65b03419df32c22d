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
        .with_label_values(&["u", "jsonrpc", "GetTask", "2xx"])
        .inc();
    m.request_duration_seconds
        .with_label_values(&["u", "jsonrpc", "GetTask"])
        .observe(0.1);
    m.proxy_overhead_seconds
        .with_label_values(&["u"])
        .observe(0.000_02);
    m.stream_events_total
        .with_label_values(&["u", "rest", "task"])
        .inc();
    m.streams_active.with_label_values(&["u"]).inc();
    m.stream_duration_seconds
        .with_label_values(&["u", "terminal"])
        .observe(1.0);
    m.time_to_first_event_seconds
        .with_label_values(&["u"])
        .observe(0.01);
    m.task_transitions_total
        .with_label_values(&["u", "working", "completed"])
        .inc();
    m.tasks_tracked.with_label_values(&["u", "working"]).set(1);
    m.violations_total
        .with_label_values(&["u", "terminal_exit", "error"])
        .inc();
    m.upstream_errors_total
        .with_label_values(&["u", "connect"])
        .inc();
    m.analysis_skipped_total
        .with_label_values(&["u", "queue_full"])
        .inc();
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
