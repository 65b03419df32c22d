//! The session of `check` and `probe`: whole exchanges judged one at a
//! time, in the order they happened, against one registry; the last agent
//! card seen confirms the HTTP+JSON paths after it, as live.

use super::{Folds, Held, Pipeline};
use crate::a2a::card::{self, CardInfo};
use crate::a2a::model::{Decoded, EventKind, Exchange, Malformed};
use crate::engine::{EngineConfig, ExchangeEngine, Sink, SkipReason};
use crate::findings::Finding;
use crate::lifecycle::{End, Millis, Registry, RegistryConfig};

/// How a session judges: the engine's limits, the registry's bounds, and
/// the severity policy (from a `Config`: `config/core_settings.rs`).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub engine: EngineConfig,
    pub registry: RegistryConfig,
    pub pipeline: Pipeline,
}

/// Exchanges judged in order against one registry, with the severity
/// policy and the folds.
#[derive(Debug)]
pub struct Session {
    registry: Registry,
    engine: EngineConfig,
    pipeline: Pipeline,
    /// The last agent card that passed.
    card: Option<CardInfo>,
    /// The time of judging so far: it never goes back.
    now: Millis,
}

/// One exchange's answer, whole: a recording's, or what the probe read.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    pub status: u16,
    pub content_type: Option<&'a str>,
    pub body: &'a [u8],
    /// How it ended: `Upstream` for a recording; `ClientGone` when the
    /// probe stopped reading a stream itself.
    pub end: End,
    /// Milliseconds since the session's start, when known (else it is
    /// judged at the time of the exchange before it).
    pub at: Option<Millis>,
}

/// What judging one exchange found, kept by the policy.
#[derive(Debug, Default)]
pub struct Judged {
    /// The registry's findings about tasks (stalls) due by the exchange's
    /// time, before it.
    pub due: Vec<Finding>,
    /// The exchange's own findings, repeats of a kind folded into the
    /// first.
    pub found: Vec<Held<Finding>>,
    /// Frames or whole bodies read.
    pub read: usize,
    /// Events not read (over a limit).
    pub gaps: usize,
}

impl Session {
    /// A session with an empty registry.
    pub fn new(settings: &Settings) -> Session {
        Session {
            registry: Registry::new(settings.registry.clone()),
            engine: settings.engine,
            pipeline: settings.pipeline.clone(),
            card: None,
            now: 0,
        }
    }

    /// Judges `exchange`, answered with `answer`; `watch` is told what
    /// each frame decoded to and each gap (for a report that draws the
    /// exchange's timeline).
    pub fn judge(
        &mut self,
        mut exchange: Exchange,
        answer: Answer<'_>,
        watch: &mut dyn Sink,
    ) -> Judged {
        let now = answer.at.unwrap_or(self.now).max(self.now);
        self.now = now;
        let mut judged = Judged::default();
        let mut due = Vec::new();
        self.registry.tick(now, &mut due);
        judged.due = due
            .into_iter()
            .filter_map(|f| self.pipeline.keep(f))
            .collect();
        card::confirm(&mut exchange, self.card.as_ref(), "");
        let seq = self.registry.open_exchange();
        let mut engine = ExchangeEngine::new(exchange, seq, self.engine);
        let mut tee = Tee {
            watch,
            findings: Vec::new(),
            read: 0,
            gaps: 0,
            card: None,
        };
        engine.response_head(answer.status, answer.content_type, None);
        engine.response_data(answer.body, &mut self.registry, now, &mut tee);
        engine.response_end(answer.end, &mut self.registry, now, &mut tee);
        let mut folds = Folds::default();
        for f in tee.findings {
            if let Some(f) = self.pipeline.keep(f) {
                folds.add(&f, f.clone());
            }
        }
        judged.found = folds.take().collect();
        judged.read = tee.read;
        judged.gaps = tee.gaps;
        if tee.card.is_some() {
            self.card = tee.card;
        }
        judged
    }
}

/// The engine's sink of one exchange: findings, counts and the card kept,
/// frames and gaps also told to the watcher.
struct Tee<'w> {
    watch: &'w mut dyn Sink,
    findings: Vec<Finding>,
    read: usize,
    gaps: usize,
    card: Option<CardInfo>,
}

impl Sink for Tee<'_> {
    fn finding(&mut self, finding: Finding) {
        self.findings.push(finding);
    }
    fn event(&mut self, kind: EventKind) {
        self.watch.event(kind);
    }
    fn read(&mut self) {
        self.read += 1;
    }
    fn gap(&mut self, reason: SkipReason) {
        self.gaps += 1;
        self.watch.gap(reason);
    }
    fn card(&mut self, card: CardInfo) {
        self.card = Some(card);
    }
    fn decoded(&mut self, index: Option<u64>, decoded: Result<&Decoded<'_>, &Malformed>) {
        self.watch.decoded(index, decoded);
    }
}
