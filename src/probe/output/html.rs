//! The probe's report as one HTML page: its checks with their reasons,
//! then every exchange it made with its timeline and findings.

use super::ProbeReport;
use crate::report::html::{CheckRow, Page, Source};

/// The page of `report`.
pub(super) fn render(report: &ProbeReport) -> String {
    let checks = report
        .checks()
        .map(|(iface, c)| CheckRow {
            scope: iface.map_or_else(
                || format!("card {}", report.card_url),
                |i| format!("{} {}", i.name, i.url),
            ),
            id: c.id,
            verdict: match c.verdict {
                super::Verdict::Pass => "pass",
                super::Verdict::Fail => "fail",
                super::Verdict::NotApplicable => "n/a",
            },
            reason: c.reason.clone(),
            exchanges: c.evidence.iter().map(|e| e.exchange).collect(),
        })
        .collect();
    let page = Page {
        title: format!("a2a-tap probe {}", report.url),
        sources: vec![Source {
            name: format!(
                "{} exchange(s) with {} ({:.1} s)",
                report.bounds.requests, report.url, report.bounds.seconds
            ),
            lanes: report.lanes.clone(),
            records: report.findings().cloned().collect(),
            unrecorded: Vec::new(),
        }],
        checks,
        notes: report.nothing_ran.iter().cloned().collect(),
    };
    page.render()
}
