//! `probe --format html` in headless chromium: the checks with their
//! reasons, and the findings on the probe's own traffic marked on the
//! event they rest on (the same page writer as `check`'s, whose test
//! also covers hostile agent text: tests/process/html.rs).

use serde_json::Value;

use super::agent::{self, Defect};
use super::run;
use crate::html::{chromium, event, render};

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs chromium: run scripts/test.sh"]
async fn probe_html_report_shows_checks_and_findings_on_their_events() {
    let addr = agent::start(Defect::StreamStartsWithStatus).await;
    let url = format!("http://{addr}");
    let args = |format: &str| {
        vec![
            "probe".into(),
            "--format".into(),
            format.into(),
            url.clone(),
        ]
    };
    let json = run(args("json")).await;
    let html = run(args("html")).await;
    // Exit codes are the other formats'.
    assert_eq!(json.status.code(), Some(1));
    assert_eq!(html.status.code(), json.status.code());
    let report: Value = serde_json::from_slice(&json.stdout).expect("json report");
    let page = String::from_utf8(html.stdout).expect("utf-8 page");

    // Every failed check is a row with its reason.
    let failed: Vec<&Value> = report["interfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["checks"].as_array().into_iter().flatten())
        .filter(|c| c["verdict"] == "fail")
        .collect();
    assert!(!failed.is_empty(), "{report:#}");
    for c in &failed {
        let id = c["id"].as_str().expect("id");
        let row = format!("<tr class=\"check fail\" data-check=\"{id}\">");
        assert!(page.contains(&row), "no failed row for {id}");
    }
    // A finding on one event of one exchange (`#n`).
    let finding = report["interfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["findings"].as_array().into_iter().flatten())
        .find(|r| r["event_index"].is_u64())
        .unwrap_or_else(|| panic!("no finding on an event: {report:#}"));
    let (request, index, kind) = (
        finding["request_id"].as_str().expect("request id"),
        finding["event_index"].as_u64().expect("index"),
        finding["kind"].as_str().expect("kind"),
    );

    let chromium = chromium();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("probe.html");
    std::fs::write(&file, &page).expect("write page");
    let shown = render(&chromium, &file);
    assert!(shown.console.is_empty(), "console: {:#?}", shown.console);
    assert!(shown.dom.contains(&format!("<title>a2a-tap probe {url}")));
    let on = event(&shown.dom, Some(request), index);
    assert!(
        on.contains(&format!("data-kind=\"{kind}\"")),
        "{request} event {index}: {on}"
    );
    let summary = shown.dom.find("id=\"summary\"").expect("summary");
    let failed_count = format!("<b>{}</b> failed", failed.len());
    assert!(
        shown.dom[summary..].contains(&failed_count),
        "{failed_count}"
    );
}
