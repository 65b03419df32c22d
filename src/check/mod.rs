//! `a2a-tap check`: validate recorded traffic offline with the same engine
//! the proxy runs. Each file is judged on its own, with its own task
//! registry: separate recordings say nothing of which came first, and a
//! guessed order would make false cross-request findings. Within one file
//! (a HAR session, a `.jsonl` with a sidecar) exchanges are judged in order
//! against one registry.

mod har;
mod input;
mod output;
mod recording_error;
mod sidecar;

use std::path::{Path, PathBuf};

use crate::a2a::model::Exchange;
use crate::findings::Severity;
use crate::judge::{Answer, Settings};
use crate::lifecycle::{End, Millis};
use crate::report::audit::Record;
use crate::report::offline::{Offline, Source};
use crate::report::timeline::Lane;

pub use output::Format;
pub use recording_error::RecordingError;

/// One exchange found in a file, ready to judge.
pub(crate) struct Recorded {
    pub exchange: Exchange,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    /// Milliseconds since the first exchange of the run, when known.
    pub at: Option<Millis>,
    /// When it was recorded (HAR `startedDateTime`), when known: the time
    /// its records carry.
    pub started: Option<std::time::SystemTime>,
    /// The request is assumed (a bare `.sse`/`.jsonl`): with nothing read,
    /// there is no evidence of an exchange at all.
    pub assumed: bool,
    /// The recording did not keep the response body (a HAR entry without
    /// `content.text`): a gap, not judged and never a finding, only said
    /// in the report. A body recorded as empty is judged as empty.
    pub unrecorded: bool,
    /// Where it came from, for the report (`file`, `file#entry`).
    pub label: String,
    pub upstream: String,
    /// How the body ended: `Upstream` for a recording; the probe's own
    /// traffic, `ClientGone` when it stopped reading a stream itself.
    pub end: End,
}

/// Why a file could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {why}")]
    Format { path: PathBuf, why: RecordingError },
}

/// Runs the check; returns the process exit code (0 clean, 1 errors
/// found, 2 a file could not be read or parsed).
pub fn run(format: Format, files: &[PathBuf], settings: &Settings) -> i32 {
    let mut out = output::Report::new(format);
    let timeline = format == Format::Html;
    let mut failed = false;
    for path in files {
        match input::load(path) {
            Ok(exchanges) => {
                let judged = judge_all(exchanges, settings, timeline);
                if judged.read == 0 && (judged.records.is_empty() || judged.assumed) {
                    // A clean report of nothing would pass a CI gate on an
                    // empty or wrong file.
                    let why = match (judged.unrecorded.len(), judged.gaps) {
                        (0, 0) => "no SSE event, JSON answer or A2A exchange in it".to_string(),
                        (0, n) => format!("its {n} event(s) are all over the [analysis] limits"),
                        (n, _) => {
                            format!("the recording kept the body of none of its {n} A2A answer(s)")
                        }
                    };
                    eprintln!("a2a-tap check: {}: nothing was read ({why})", display(path));
                    out.unreadable(path, &format!("nothing was read ({why})"));
                    failed = true;
                    continue;
                }
                if !judged.unrecorded.is_empty() {
                    eprintln!(
                        "a2a-tap check: {}: {}",
                        display(path),
                        output::unrecorded(&judged.unrecorded)
                    );
                }
                out.lanes(judged.lanes);
                out.file(path, &judged.records, &judged.unrecorded);
            }
            Err(e) => {
                eprintln!("a2a-tap check: {e}");
                out.unreadable(path, &e.to_string());
                failed = true;
            }
        }
    }
    let errors = out.finish();
    if failed {
        2
    } else if errors > 0 {
        1
    } else {
        0
    }
}

/// What a recording gave: its records, and how many frames or bodies
/// were read.
pub(crate) struct Checked {
    pub records: Vec<Record>,
    pub read: usize,
    /// Events not read (over a limit).
    pub gaps: usize,
    /// Every exchange's request was assumed.
    pub assumed: bool,
    /// The exchanges whose answer the recording did not keep (their
    /// labels): not judged.
    pub unrecorded: Vec<String>,
    /// Each judged exchange's timeline (with `--format html`).
    pub lanes: Vec<Lane>,
}

/// Judges exchanges in order; returns every finding as an audit record.
/// An agent card in the recording confirms the HTTP+JSON paths after it,
/// as live.
pub(crate) fn judge_all(exchanges: Vec<Recorded>, settings: &Settings, timeline: bool) -> Checked {
    let assumed = exchanges.iter().all(|r| r.assumed);
    let mut judge = Offline::new(settings, timeline);
    let mut records = Vec::new();
    let mut unrecorded = Vec::new();
    for rec in exchanges {
        if rec.unrecorded {
            // What the answer said is unknown: judging its empty stand-in
            // would accuse the agent of the recorder's omission.
            unrecorded.push(rec.label);
            continue;
        }
        let answer = Answer {
            status: rec.status,
            content_type: rec.content_type.as_deref(),
            body: &rec.body,
            end: rec.end,
            at: rec.at,
        };
        let from = Source {
            label: rec.label,
            upstream: &rec.upstream,
            started: rec.started,
        };
        records.extend(judge.judge(rec.exchange, answer, from));
    }
    Checked {
        records,
        read: judge.read,
        gaps: judge.gaps,
        assumed,
        unrecorded,
        lanes: judge.lanes,
    }
}

/// Parses and judges one recording held in memory: `ext` its kind (`sse`,
/// `jsonl`, `har`), `sidecar` the bytes of a `STEM.json` naming its
/// requests. The records of its findings, or why it could not be read.
/// (What `check` does per file, without the file system: the fuzz target
/// `recordings` drives it.)
pub fn judge_recording(
    ext: &str,
    bytes: &[u8],
    sidecar: Option<&[u8]>,
) -> Result<Vec<Record>, RecordingError> {
    let sidecar = sidecar
        .map(sidecar::parse)
        .transpose()
        .map_err(RecordingError::Sidecar)?;
    let exchanges = input::parse(ext, bytes.to_vec(), sidecar, "recording".into())?;
    Ok(judge_all(exchanges, &Settings::default(), false).records)
}

/// Number of error-severity records.
pub(crate) fn errors(records: &[Record]) -> usize {
    records
        .iter()
        .filter(|r| r.severity == Severity::Error.as_str())
        .count()
}

pub(crate) fn display(path: &Path) -> String {
    path.display().to_string()
}
