//! How `check` prints what it found: a readable report, audit records as
//! JSON Lines (`--format json`), JUnit XML (`junit`: one test case per
//! input file, failed by its error-severity findings) or SARIF 2.1.0
//! (`sarif`: one result per finding, the rule id its kind), or one HTML
//! page (`html`: each exchange's timeline, findings on their events).

use std::io::Write;
use std::path::Path;

use super::{display, errors};
use crate::report::audit::Record;
use crate::report::timeline::Lane;
use crate::report::{html, junit, sarif};

pub use crate::report::Format;

/// Accumulates per-file results and prints them.
pub(crate) struct Report {
    format: Format,
    files: usize,
    findings: usize,
    errors: usize,
    /// JUnit: one case per file, written at the end.
    cases: Vec<junit::Case>,
    /// SARIF: one result per finding, written at the end.
    results: Vec<sarif::Finding>,
    /// HTML: the page, written at the end; the next file's lanes.
    page: html::Page,
    lanes: Vec<Lane>,
}

impl Report {
    pub(crate) fn new(format: Format) -> Report {
        Report {
            format,
            files: 0,
            findings: 0,
            errors: 0,
            cases: Vec::new(),
            results: Vec::new(),
            page: html::Page {
                title: "a2a-tap check".into(),
                ..html::Page::default()
            },
            lanes: Vec::new(),
        }
    }

    /// The timelines of the next file's exchanges (HTML).
    pub(crate) fn lanes(&mut self, lanes: Vec<Lane>) {
        self.lanes = lanes;
    }

    /// Prints one file's findings, and which of its answers were not
    /// judged because the recording did not keep them (`unrecorded`).
    pub(crate) fn file(&mut self, path: &Path, records: &[Record], unrecorded: &[String]) {
        self.files += 1;
        self.findings += records.len();
        self.errors += errors(records);
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        // A closed stdout (a pipe to `head`) is not worth a panic.
        let _ = match self.format {
            Format::Json => write_json(&mut out, records),
            Format::Text => write_text(&mut out, path, records, unrecorded),
            Format::Junit => {
                let mut case = case_of(path, records);
                if !unrecorded.is_empty() {
                    let note = unrecorded_note(unrecorded);
                    case.out = [case.out, note].join("\n").trim().to_owned();
                }
                self.cases.push(case);
                Ok(())
            }
            Format::Sarif => {
                let uri = sarif::path_uri(&display(path));
                self.results
                    .extend(records.iter().map(|r| result_of(&uri, r)));
                Ok(())
            }
            Format::Html => {
                self.page.sources.push(html::Source {
                    name: display(path),
                    lanes: std::mem::take(&mut self.lanes),
                    records: records.to_vec(),
                    unrecorded: unrecorded.to_vec(),
                });
                Ok(())
            }
        };
    }

    /// A file that could not be read or parsed (JUnit: an errored case).
    pub(crate) fn unreadable(&mut self, path: &Path, why: &str) {
        self.page.notes.push(format!("{}: {why}", display(path)));
        self.cases.push(junit::Case {
            name: display(path),
            classname: "a2a-tap.check".into(),
            outcome: junit::CaseOutcome::Errored {
                message: why.to_owned(),
            },
            out: String::new(),
        });
    }

    /// Prints the summary (text only); returns the number of errors.
    pub(crate) fn finish(self) -> usize {
        match self.format {
            Format::Text => println!(
                "{} finding(s), {} error(s), in {} file(s)",
                self.findings, self.errors, self.files
            ),
            Format::Json => {}
            Format::Junit => {
                let suite = junit::Suite {
                    name: "a2a-tap check".into(),
                    cases: self.cases,
                    seconds: 0.0,
                };
                print!("{}", junit::write("a2a-tap check", &[suite]));
            }
            Format::Sarif => {
                let log = sarif::log(&[], &self.results);
                println!("{}", serde_json::to_string_pretty(&log).unwrap_or_default());
            }
            Format::Html => {
                // A closed stdout (a pipe to `head`) is not worth a panic.
                let _ = std::io::stdout()
                    .lock()
                    .write_all(self.page.render().as_bytes());
            }
        }
        self.errors
    }
}

fn write_json(out: &mut impl Write, records: &[Record]) -> std::io::Result<()> {
    for r in records {
        serde_json::to_writer(&mut *out, r)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The sentence that says which answers were not judged because the
/// recording did not keep their body.
pub(crate) fn unrecorded(labels: &[String]) -> String {
    format!(
        "{} answer(s) not judged: the recording did not keep their body ({})",
        labels.len(),
        labels.join(", ")
    )
}

fn unrecorded_note(labels: &[String]) -> String {
    format!("note: {}", unrecorded(labels))
}

fn write_text(
    out: &mut impl Write,
    path: &Path,
    records: &[Record],
    unrecorded: &[String],
) -> std::io::Result<()> {
    if records.is_empty() {
        writeln!(out, "{}: clean", display(path))?;
    } else {
        write_findings(out, path, records)?;
    }
    if !unrecorded.is_empty() {
        writeln!(out, "  {}", unrecorded_note(unrecorded))?;
    }
    Ok(())
}

fn write_findings(out: &mut impl Write, path: &Path, records: &[Record]) -> std::io::Result<()> {
    writeln!(out, "{}: {} finding(s)", display(path), records.len())?;
    for r in records {
        writeln!(
            out,
            "  {:<7} {:<26} {:<22} task {:<12} {}",
            r.severity,
            r.kind,
            place(r),
            r.task_id.as_deref().unwrap_or("-"),
            r.detail
        )?;
    }
    Ok(())
}

/// Where in the file a finding is, as the text report and JUnit name it:
/// the HAR entry or exchange (`x.har#3`) and the event index, `-` when
/// neither is known.
fn place(r: &Record) -> String {
    match (&r.request_id, r.event_index) {
        (Some(id), Some(i)) if id.contains('#') => format!("{id} event {i}"),
        (Some(id), None) if id.contains('#') => id.clone(),
        (_, Some(i)) => format!("event {i}"),
        (_, None) => "-".into(),
    }
}

/// One file's test case: failed when it holds error-severity findings
/// (each listed in the failure text); warnings go to `system-out`. Each
/// line names where the finding is (as the text report does) and the
/// rule it rests on.
fn case_of(path: &Path, records: &[Record]) -> junit::Case {
    let line = |r: &Record| {
        let rule = r
            .rule
            .label()
            .map_or_else(String::new, |l| format!(" [{l}]"));
        format!(
            "{} {} at {}: {}{rule}",
            r.severity,
            r.kind,
            place(r),
            r.detail
        )
    };
    let (errs, warns): (Vec<&Record>, Vec<&Record>) =
        records.iter().partition(|r| r.severity == "error");
    let outcome = match errs.first() {
        None => junit::CaseOutcome::Passed,
        Some(first) => junit::CaseOutcome::Failed {
            message: format!("{} error finding(s), first {}", errs.len(), first.kind),
            text: errs
                .iter()
                .map(|r| {
                    let evidence = r.evidence.as_deref().unwrap_or("");
                    format!("{}\n  evidence: {evidence}", line(r))
                })
                .collect::<Vec<_>>()
                .join("\n"),
        },
    };
    junit::Case {
        name: display(path),
        classname: "a2a-tap.check".into(),
        outcome,
        out: warns.iter().map(|r| line(r)).collect::<Vec<_>>().join("\n"),
    }
}

/// One finding as a SARIF result: rule id its kind, level its severity.
fn result_of(uri: &str, r: &Record) -> sarif::Finding {
    let mut properties = serde_json::Map::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            properties.insert(k.into(), v.into());
        }
    };
    put("request_id", r.request_id.clone());
    put("task_id", r.task_id.clone());
    put("method", r.method.map(str::to_owned));
    put("event_index", r.event_index.map(|i| i.to_string()));
    put("evidence", r.evidence.clone());
    sarif::Finding {
        rule_id: r.kind.to_owned(),
        level: if r.severity == "error" {
            sarif::Level::Error
        } else {
            sarif::Level::Warning
        },
        message: r.detail.clone(),
        uri: uri.to_owned(),
        properties,
    }
}
