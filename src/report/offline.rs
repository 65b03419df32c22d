//! What `check` and `probe` make of one judging session
//! (`judge::Session`): the records of what it kept about each exchange,
//! and each exchange's timeline when the report draws it
//! (`--format html`).

use std::time::SystemTime;

use super::audit::{Origin, Record};
use super::timeline::{Lane, Timeline};
use crate::a2a::model::{Decoded, Exchange, Malformed};
use crate::engine::{Sink, SkipReason};
use crate::findings::Finding;
use crate::judge::{Answer, Session, Settings};

/// Exchanges judged one at a time, in the order they happened, through one
/// session (`check` per file, `probe` per run), made records of.
pub struct Offline {
    session: Session,
    /// Keep each exchange's timeline in `lanes`.
    timeline: bool,
    /// Frames or bodies read so far.
    pub read: usize,
    /// Events not read (over a limit) so far.
    pub gaps: usize,
    /// Each exchange judged so far, with its events (kept only with
    /// `timeline`).
    pub lanes: Vec<Lane>,
}

/// Where an exchange came from, for its records.
pub struct Source<'a> {
    /// Its records' `request_id` (`file#entry`, `#n`).
    pub label: String,
    pub upstream: &'a str,
    /// When it was recorded (HAR `startedDateTime`), when known: the time
    /// its records carry (else the time they are made).
    pub started: Option<SystemTime>,
}

impl Offline {
    /// A session judging by `settings`, keeping timelines when `timeline`.
    pub fn new(settings: &Settings, timeline: bool) -> Offline {
        Offline {
            session: Session::new(settings),
            timeline,
            read: 0,
            gaps: 0,
            lanes: Vec::new(),
        }
    }

    /// Judges the next exchange; returns the records of its findings (and
    /// of the registry's, e.g. stalls, due by its time, first).
    pub fn judge(
        &mut self,
        exchange: Exchange,
        answer: Answer<'_>,
        from: Source<'_>,
    ) -> Vec<Record> {
        let about_task = Origin {
            upstream: from.upstream.to_owned(),
            ..Origin::default()
        };
        let origin = Origin::of(from.upstream, &exchange, from.label.clone());
        let lane = self.timeline.then(|| Lane {
            label: from.label,
            request: format!(
                "{} {} {}",
                exchange.binding.as_str(),
                exchange.version.as_str(),
                exchange.operation.as_str()
            ),
            status: answer.status,
            content_type: answer.content_type.map(str::to_owned),
            timeline: Timeline::default(),
        });
        let mut watch = Watch(lane.as_ref().map(|_| Timeline::default()));
        let judged = self.session.judge(exchange, answer, &mut watch);
        let recorded_at = from
            .started
            .map(|t| humantime::format_rfc3339_millis(t).to_string());
        let mut records: Vec<Record> = judged
            .due
            .into_iter()
            .map(|f| Record::new(f, &about_task))
            .collect();
        // Repeats of a kind on one exchange fold into its first record, as
        // live.
        records.extend(judged.found.into_iter().map(|held| {
            let mut record = Record::new(held.first, &origin);
            record.occurrences = held.occurrences;
            if let Some(ts) = &recorded_at {
                record.ts.clone_from(ts);
            }
            record
        }));
        self.read += judged.read;
        self.gaps += judged.gaps;
        if let (Some(mut lane), Some(timeline)) = (lane, watch.0) {
            lane.timeline = timeline;
            self.lanes.push(lane);
        }
        records
    }
}

/// The timeline of one exchange, when the report draws it.
struct Watch(Option<Timeline>);

impl Sink for Watch {
    fn finding(&mut self, _finding: Finding) {}
    fn gap(&mut self, _reason: SkipReason) {
        if let Some(t) = &mut self.0 {
            t.gaps += 1;
        }
    }
    fn decoded(&mut self, index: Option<u64>, decoded: Result<&Decoded<'_>, &Malformed>) {
        if let Some(t) = &mut self.0 {
            t.push(index, decoded);
        }
    }
}
