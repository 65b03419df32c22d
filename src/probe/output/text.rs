//! The text report, for people: each interface's checks, a line each,
//! the evidence under every failure, the findings, and the totals.

use std::fmt::Write as _;

use super::{abbreviate, CheckOut, ProbeReport, TEXT_EVIDENCE};
use crate::probe::checks::Verdict;
use crate::report::audit::Record;
use crate::report::log_safe as safe;

pub(super) fn render(r: &ProbeReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "a2a-tap probe {} (card {})", r.url, r.card_url);
    // Everything below may quote the agent: control characters are escaped,
    // so no answer can rewrite the terminal or forge a line.
    check(&mut out, &r.card);
    findings(&mut out, &r.card_findings);
    for i in &r.interfaces {
        let contacted = if i.contacted { "" } else { " (not probed)" };
        let _ = writeln!(out, "\n{} {}{contacted}", safe(&i.name), safe(&i.url));
        if !i.contacted {
            if let Some(first) = i.checks.first() {
                let _ = writeln!(out, "  every check {}", safe(&first.reason));
            }
            continue;
        }
        for c in &i.checks {
            check(&mut out, c);
        }
        findings(&mut out, &i.findings);
    }
    let (mut pass, mut fail, mut na) = (0, 0, 0);
    for (_, c) in r.checks() {
        match c.verdict {
            Verdict::Pass => pass += 1,
            Verdict::Fail => fail += 1,
            Verdict::NotApplicable => na += 1,
        }
    }
    let all: Vec<&Record> = r.findings().collect();
    let errors = all.iter().filter(|f| f.severity == "error").count();
    let _ = writeln!(
        out,
        "\n{pass} passed, {fail} failed, {na} not applicable; {} finding(s), {errors} error(s); {} request(s) (limit {}), {:.1} s (limit {} s)",
        all.len(),
        r.bounds.requests,
        r.bounds.max_requests,
        r.bounds.seconds,
        r.bounds.max_seconds
    );
    if let Some(why) = &r.nothing_ran {
        let _ = writeln!(out, "{}", safe(why));
    }
    out
}

fn check(out: &mut String, c: &CheckOut) {
    let rule = c
        .rule
        .label()
        .map_or_else(String::new, |l| format!(" [{l}]"));
    let _ = writeln!(
        out,
        "  {:<5} {:<38} {}{rule}",
        c.verdict.label(),
        c.id,
        safe(&c.reason)
    );
    if c.verdict == Verdict::Fail {
        for e in &c.evidence {
            let _ = writeln!(
                out,
                "        #{} sent:     {}",
                e.exchange,
                safe(&e.request)
            );
            let _ = writeln!(
                out,
                "        #{} answered: {}",
                e.exchange,
                safe(&abbreviate(&e.answer, TEXT_EVIDENCE))
            );
        }
    }
}

fn findings(out: &mut String, records: &[Record]) {
    if records.is_empty() {
        return;
    }
    let _ = writeln!(out, "  findings on the probe's own traffic:");
    for f in records {
        let _ = writeln!(
            out,
            "    {:<7} {:<26} {} {}",
            f.severity,
            f.kind,
            f.request_id.as_deref().unwrap_or("-"),
            safe(&f.detail)
        );
    }
}
