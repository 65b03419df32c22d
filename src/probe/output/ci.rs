//! The CI formats: JUnit XML (a test suite per interface, the card's own
//! first; a test case per check; failure with reason and evidence,
//! skipped for not applicable; error findings as failed cases of their
//! own) and SARIF 2.1.0 (a result per failed check and per finding).

use super::{describe_rule, rule_of, CheckOut, ProbeReport, NOTHING_RAN};
use crate::probe::checks::Verdict;
use crate::report::audit::Record;
use crate::report::{junit, sarif};

pub(super) fn junit(r: &ProbeReport) -> String {
    let mut suites = vec![junit::Suite {
        name: format!("agent card {}", r.card_url),
        cases: std::iter::once(case("agent card", &r.card))
            .chain(r.card_findings.iter().filter_map(finding_case))
            .collect(),
        seconds: 0.0,
    }];
    for i in &r.interfaces {
        let class = format!("{} {}", i.name, i.url);
        suites.push(junit::Suite {
            name: class.clone(),
            cases: i
                .checks
                .iter()
                .map(|c| case(&class, c))
                .chain(i.findings.iter().filter_map(finding_case))
                .collect(),
            seconds: 0.0,
        });
    }
    if let Some(why) = &r.nothing_ran {
        // An error, not 56 skipped cases and no failure: CI must not pass.
        suites.push(junit::Suite {
            name: format!("a2a-tap probe {}", r.url),
            cases: vec![junit::Case {
                name: NOTHING_RAN.into(),
                classname: "a2a-tap.probe".into(),
                outcome: junit::CaseOutcome::Errored {
                    message: why.clone(),
                },
                out: String::new(),
            }],
            seconds: 0.0,
        });
    }
    if let Some(first) = suites.first_mut() {
        first.seconds = r.bounds.seconds;
    }
    junit::write(&format!("a2a-tap probe {}", r.url), &suites)
}

fn case(class: &str, c: &CheckOut) -> junit::Case {
    let evidence = c
        .evidence
        .iter()
        .map(|e| {
            format!(
                "#{} sent: {}\n#{} answered: {}",
                e.exchange, e.request, e.exchange, e.answer
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let rule = c
        .rule
        .label()
        .map_or_else(String::new, |l| format!("rule: {l}\n"));
    let outcome = match c.verdict {
        Verdict::Pass => junit::CaseOutcome::Passed,
        Verdict::Fail => junit::CaseOutcome::Failed {
            message: c.reason.clone(),
            text: format!("{}\n{rule}{evidence}", c.reason),
        },
        Verdict::NotApplicable => junit::CaseOutcome::Skipped {
            message: c.reason.clone(),
        },
    };
    junit::Case {
        name: c.id.to_owned(),
        classname: class.to_owned(),
        outcome,
        out: match (c.verdict, c.rule.label()) {
            (Verdict::Pass, Some(l)) => format!("{}\nrule: {l}", c.reason),
            (Verdict::Pass, None) => c.reason.clone(),
            (_, Some(l)) => format!("rule: {l}"),
            (_, None) => String::new(),
        },
    }
}

/// An error finding as a failed case of its own (warnings stay out: they
/// do not fail the run).
fn finding_case(f: &Record) -> Option<junit::Case> {
    (f.severity == "error").then(|| junit::Case {
        name: format!("{} {}", f.kind, f.request_id.as_deref().unwrap_or("")),
        classname: "a2a-tap.finding".into(),
        outcome: junit::CaseOutcome::Failed {
            message: f.detail.clone(),
            text: match f.rule.label() {
                Some(l) => format!("rule: {l}\n{}", f.evidence.as_deref().unwrap_or("")),
                None => f.evidence.clone().unwrap_or_default(),
            },
        },
        out: String::new(),
    })
}

pub(super) fn sarif(r: &ProbeReport) -> String {
    let mut results = Vec::new();
    for (iface, c) in r.checks() {
        if c.verdict != Verdict::Fail {
            continue;
        }
        let mut properties = serde_json::Map::new();
        if let Some(i) = iface {
            properties.insert("interface".into(), i.name.clone().into());
        }
        if let Ok(v) = serde_json::to_value(&c.evidence) {
            properties.insert("evidence".into(), v);
        }
        results.push(sarif::Finding {
            rule_id: c.id.to_owned(),
            level: sarif::Level::Error,
            message: c.reason.clone(),
            uri: iface.map_or(r.card_url.clone(), |i| i.url.clone()),
            properties,
        });
    }
    if let Some(why) = &r.nothing_ran {
        results.push(sarif::Finding {
            rule_id: NOTHING_RAN.into(),
            level: sarif::Level::Error,
            message: why.clone(),
            uri: r.card_url.clone(),
            properties: serde_json::Map::new(),
        });
    }
    let located = std::iter::once((&r.card_url, &r.card_findings))
        .chain(r.interfaces.iter().map(|i| (&i.url, &i.findings)));
    for (uri, records) in located {
        for f in records {
            let mut properties = serde_json::Map::new();
            for (k, v) in [
                ("request_id", &f.request_id),
                ("task_id", &f.task_id),
                ("evidence", &f.evidence),
            ] {
                if let Some(v) = v {
                    properties.insert(k.into(), v.clone().into());
                }
            }
            results.push(sarif::Finding {
                rule_id: f.kind.to_owned(),
                level: if f.severity == "error" {
                    sarif::Level::Error
                } else {
                    sarif::Level::Warning
                },
                message: f.detail.clone(),
                uri: uri.clone(),
                properties,
            });
        }
    }
    let rules: Vec<sarif::Rule> = results
        .iter()
        .map(|f| f.rule_id.clone())
        .fold(Vec::new(), |mut acc: Vec<String>, id| {
            if !acc.contains(&id) {
                acc.push(id);
            }
            acc
        })
        .into_iter()
        .map(|id| sarif::Rule {
            description: describe_rule(&id),
            sources: rule_of(&id),
            id,
        })
        .collect();
    serde_json::to_string_pretty(&sarif::log(&rules, &results)).unwrap_or_default() + "\n"
}
