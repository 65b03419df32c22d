//! The probe's report: per interface, each check's verdict, reason and
//! evidence (request sent, answer received, abbreviated), and the
//! engine's findings on the probe's own traffic; printed as text, one
//! JSON document, JUnit XML, SARIF 2.1.0 or one HTML page.

mod ci;
mod html;
mod text;

use std::time::Duration;

use serde::Serialize;

use super::checks::{CheckId, CheckResult, Verdict};
use super::client::{Limits, Sent};
use super::discover::Target;
use crate::engine::evidence::EvidencePolicy;
use crate::report::audit::{Record, Rule};

pub use crate::report::Format;

/// Largest request or answer text the text report prints of evidence
/// (the other formats keep what `[audit]` allows: `evidence_bytes`,
/// `redact_parts`).
pub(crate) const TEXT_EVIDENCE: usize = 600;

/// One exchange as evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    /// Its number in the run (the records' `request_id` is `#n`).
    pub exchange: usize,
    pub request: String,
    pub answer: String,
}

/// One check's verdict, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct CheckOut {
    pub id: &'static str,
    pub verdict: Verdict,
    pub reason: String,
    pub evidence: Vec<Evidence>,
    /// The spec sections and conformance-kit requirements it rests on.
    pub rule: Rule,
}

/// One interface of the card.
#[derive(Debug, Clone, Serialize)]
pub struct IfaceOut {
    /// Binding and version, e.g. `JSONRPC 1.0`.
    pub name: String,
    pub url: String,
    /// Whether the probe talked to it.
    pub contacted: bool,
    pub checks: Vec<CheckOut>,
    /// The engine's findings on this interface's exchanges.
    pub findings: Vec<Record>,
}

/// Requests made and time taken, with their limits.
#[derive(Debug, Clone, Serialize)]
pub struct Bounds {
    pub requests: usize,
    pub max_requests: usize,
    pub seconds: f64,
    pub max_seconds: u64,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    pub url: String,
    pub card_url: String,
    pub card: CheckOut,
    /// The engine's findings on the card exchange.
    pub card_findings: Vec<Record>,
    pub interfaces: Vec<IfaceOut>,
    pub bounds: Bounds,
    /// Why no check could run on any interface, and what to pass instead
    /// (`null` when one did): the run then exits 2, never 0.
    pub nothing_ran: Option<String>,
    /// Each judged exchange's timeline (`--format html` only).
    #[serde(skip)]
    pub lanes: Vec<crate::report::timeline::Lane>,
}

impl IfaceOut {
    /// An interface not probed: every check not applicable for `why`.
    pub(crate) fn skipped(name: String, url: &str, why: &str) -> IfaceOut {
        IfaceOut {
            name,
            url: url.to_owned(),
            contacted: false,
            checks: CheckResult::all_na(why)
                .iter()
                .map(|r| out(r, &[], EvidencePolicy::default()))
                .collect(),
            findings: Vec::new(),
        }
    }

    /// A probed interface.
    pub(crate) fn probed(
        name: String,
        url: &str,
        results: Vec<CheckResult>,
        exchanges: &[usize],
        sent: &[Sent],
        policy: EvidencePolicy,
    ) -> IfaceOut {
        IfaceOut {
            name,
            url: url.to_owned(),
            contacted: true,
            checks: results.iter().map(|r| out(r, sent, policy)).collect(),
            findings: exchanges
                .iter()
                .filter_map(|n| sent.get(n.wrapping_sub(1)))
                .flat_map(|s| s.records.iter().cloned())
                .collect(),
        }
    }
}

impl ProbeReport {
    pub(crate) fn new(
        target: &Target,
        card: CheckResult,
        interfaces: Vec<IfaceOut>,
        sent: &[Sent],
        elapsed: Duration,
        limits: Limits,
        policy: EvidencePolicy,
    ) -> ProbeReport {
        ProbeReport {
            url: target.given.to_string(),
            card_url: target.card.to_string(),
            card: out(&card, sent, policy),
            card_findings: sent.first().map(|s| s.records.clone()).unwrap_or_default(),
            interfaces,
            bounds: Bounds {
                requests: sent.len(),
                max_requests: limits.max_requests,
                seconds: elapsed.as_secs_f64(),
                max_seconds: limits.total.as_secs(),
            },
            nothing_ran: None,
            lanes: Vec::new(),
        }
    }

    /// Every check, with the interface it ran on (`None`: the card).
    pub(crate) fn checks(&self) -> impl Iterator<Item = (Option<&IfaceOut>, &CheckOut)> {
        std::iter::once((None, &self.card)).chain(
            self.interfaces
                .iter()
                .flat_map(|i| i.checks.iter().map(move |c| (Some(i), c))),
        )
    }

    /// Every finding of the run.
    pub(crate) fn findings(&self) -> impl Iterator<Item = &Record> {
        self.card_findings
            .iter()
            .chain(self.interfaces.iter().flat_map(|i| &i.findings))
    }

    /// Whether the run fails: a check failed, or a finding is an error.
    pub fn failed(&self) -> bool {
        self.checks().any(|(_, c)| c.verdict == Verdict::Fail)
            || self.findings().any(|r| r.severity == "error")
    }

    /// Prints the report in `format` on stdout.
    pub fn print(&self, format: Format) {
        let text = match format {
            Format::Text => text::render(self),
            Format::Json => serde_json::to_string_pretty(self).unwrap_or_default() + "\n",
            Format::Junit => ci::junit(self),
            Format::Sarif => ci::sarif(self),
            Format::Html => html::render(self),
        };
        use std::io::Write;
        // A closed stdout (a pipe to `head`) is not worth a panic.
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    }
}

fn out(r: &CheckResult, sent: &[Sent], policy: EvidencePolicy) -> CheckOut {
    CheckOut {
        id: r.id.as_str(),
        verdict: r.verdict,
        reason: r.reason.clone(),
        evidence: r
            .exchanges
            .iter()
            .filter_map(|n| sent.get(n.wrapping_sub(1)))
            .map(|s| evidence(s, policy))
            .collect(),
        rule: r.id.rule(),
    }
}

/// One exchange as evidence: the request as sent, the answer's status,
/// content type and body as `[audit]` keeps evidence (cut to
/// `evidence_bytes`, parts redacted with `redact_parts`).
fn evidence(s: &Sent, policy: EvidencePolicy) -> Evidence {
    let mut request = format!("{} {}", s.method, s.uri);
    if let Some(v) = s.headers.get("a2a-version").and_then(|v| v.to_str().ok()) {
        request.push_str(&format!(" (A2A-Version: {v})"));
    }
    if !s.body.is_empty() {
        request.push(' ');
        request.push_str(&policy.prepare(&s.body));
    }
    let answer = match (s.status, &s.failure) {
        (Some(status), _) => {
            let mut a = format!(
                "{status} {}",
                s.content_type.as_deref().unwrap_or("(no content type)")
            );
            if !s.answer.is_empty() {
                a.push(' ');
                a.push_str(&policy.prepare(&s.answer));
            }
            if let Some(cut) = &s.cut {
                a.push_str(&format!(" [the probe stopped reading: {cut}]"));
            }
            a
        }
        (None, Some(why)) => format!("no answer: {why}"),
        (None, None) => "no answer".into(),
    };
    Evidence {
        exchange: s.n,
        request: flat(&request),
        answer: flat(&answer),
    }
}

/// Line ends as spaces (SSE bodies and pretty JSON on one line).
fn flat(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect()
}

/// `text` cut to about `max` bytes on a character boundary, saying how
/// much was left out.
pub(crate) fn abbreviate(text: &str, max: usize) -> String {
    let flat = flat(text);
    if flat.len() <= max {
        return flat;
    }
    let mut end = max;
    while !flat.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &flat[..end], flat.len())
}

/// The rule id of a run in which no check could run (JUnit case, SARIF
/// result).
pub(crate) const NOTHING_RAN: &str = "no-check-ran";

/// The SARIF rule description of a rule id: a check's, else the kind.
pub(crate) fn describe_rule(id: &str) -> String {
    if id == NOTHING_RAN {
        return "the probe could run no check on any interface of the card".into();
    }
    check_of(id).map_or_else(
        || format!("catalogue finding {id}"),
        |c| c.describe().to_owned(),
    )
}

/// What a rule id rests on: a check's sources, else the kind's.
pub(crate) fn rule_of(id: &str) -> Rule {
    check_of(id).map_or_else(|| Rule::of_name(id), CheckId::rule)
}

fn check_of(id: &str) -> Option<CheckId> {
    CheckId::PER_INTERFACE
        .iter()
        .chain(std::iter::once(&CheckId::AgentCardValid))
        .find(|c| c.as_str() == id)
        .copied()
}
