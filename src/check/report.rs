//! How `check` prints what it found: a readable report, or audit records
//! as JSON Lines (`--format json`).

use std::io::Write;
use std::path::Path;

use super::{display, errors};
use crate::report::audit::Record;

/// Output format of `a2a-tap check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Accumulates per-file results and prints them.
pub(crate) struct Report {
    format: Format,
    files: usize,
    findings: usize,
    errors: usize,
}

impl Report {
    pub(crate) fn new(format: Format) -> Report {
        Report {
            format,
            files: 0,
            findings: 0,
            errors: 0,
        }
    }

    /// Prints one file's findings.
    pub(crate) fn file(&mut self, path: &Path, records: &[Record]) {
        self.files += 1;
        self.findings += records.len();
        self.errors += errors(records);
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        // A closed stdout (a pipe to `head`) is not worth a panic.
        let _ = match self.format {
            Format::Json => write_json(&mut out, records),
            Format::Text => write_text(&mut out, path, records),
        };
    }

    /// Prints the summary (text only); returns the number of errors.
    pub(crate) fn finish(self) -> usize {
        if self.format == Format::Text {
            println!(
                "{} finding(s), {} error(s), in {} file(s)",
                self.findings, self.errors, self.files
            );
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

fn write_text(out: &mut impl Write, path: &Path, records: &[Record]) -> std::io::Result<()> {
    if records.is_empty() {
        return writeln!(out, "{}: clean", display(path));
    }
    writeln!(out, "{}: {} finding(s)", display(path), records.len())?;
    for r in records {
        let at = match (&r.request_id, r.event_index) {
            (Some(id), Some(i)) if id.contains('#') => format!("{id} event {i}"),
            (Some(id), None) if id.contains('#') => id.clone(),
            (_, Some(i)) => format!("event {i}"),
            (_, None) => "-".into(),
        };
        writeln!(
            out,
            "  {:<7} {:<26} {:<22} task {:<12} {}",
            r.severity,
            r.kind,
            at,
            r.task_id.as_deref().unwrap_or("-"),
            r.detail
        )?;
    }
    Ok(())
}
