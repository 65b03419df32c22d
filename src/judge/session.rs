//! The judging session: exchanges judged against one registry, the last
//! agent card seen confirming the HTTP+JSON paths after it. A driver opens
//! exchanges by its own id and moves them message by message (`exchanges`:
//! open, head, piece, end, tick, heard); `check` and `probe` judge whole
//! exchanges one at a time, in the order they happened (`judge`: open,
//! head, piece and end at once).

mod exchanges;
mod pushes;

use super::{Folds, Held, Pipeline};
use crate::a2a::card::CardInfo;
use crate::a2a::model::{Decoded, EventKind, Exchange, Malformed};
use crate::engine::{EngineConfig, Head, Sink, SkipReason};
use crate::findings::Finding;
use crate::lifecycle::{End, Millis, Registry, RegistryConfig};
pub use exchanges::{Ended, Found, IdMap};
pub use pushes::Delivered;

/// How a session judges: the engine's limits, the registry's bounds, and
/// the severity policy (from a `Config`: `config/core_settings.rs`).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub engine: EngineConfig,
    pub registry: RegistryConfig,
    pub pipeline: Pipeline,
}

/// Exchanges judged against one registry, with the severity policy.
#[derive(Debug)]
pub struct Session {
    registry: Registry,
    engine: EngineConfig,
    pipeline: Pipeline,
    /// The last agent card that passed.
    card: Option<CardInfo>,
    /// The time of judging so far: it never goes back.
    now: Millis,
    /// The exchanges open, by the driver's id.
    open: exchanges::OpenSet,
    /// The upstream URL's path, which the proxy puts before every
    /// caller's path (a card names the agent's own URLs); empty offline.
    base_path: String,
    /// Whether `capability_mismatch` is judged: live only (a recording
    /// or a probe judged it never, and `check` keeps its findings).
    card_rules: bool,
    /// Push registrations and deletes followed (the relay's, live).
    pushes: super::push::Pushes,
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
            open: Default::default(),
            base_path: String::new(),
            card_rules: false,
            pushes: Default::default(),
        }
    }

    /// Confirms paths against cards under `base_path` (the upstream URL's
    /// path) and judges `capability_mismatch`: the live proxy's session
    /// (`check` and `probe` judge no `capability_mismatch`, as before
    /// the session was shared).
    pub fn live(mut self, base_path: &str) -> Session {
        self.base_path = base_path.to_owned();
        self.card_rules = true;
        self
    }

    /// Judges from now on by `pipeline` (a reloaded severity policy) and
    /// confirms paths under `base_path`; the registry and card stay.
    pub fn set_pipeline(&mut self, pipeline: Pipeline, base_path: &str) {
        self.pipeline = pipeline;
        base_path.clone_into(&mut self.base_path);
    }

    /// A session judging against `registry` (the live proxy's, shared
    /// with the other replicas or not).
    pub fn with_registry(registry: Registry, engine: EngineConfig, pipeline: Pipeline) -> Session {
        Session {
            registry,
            ..Session::new(&Settings {
                engine,
                registry: RegistryConfig::default(),
                pipeline,
            })
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The registry, for the driver's stamps, facts and gauges.
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }

    /// The last agent card that passed.
    pub fn card(&self) -> Option<&CardInfo> {
        self.card.as_ref()
    }

    /// Judges `exchange`, answered with `answer`, whole: open, head,
    /// piece and end at the answer's time; `watch` is told what each frame
    /// decoded to and each gap (for a report that draws the exchange's
    /// timeline).
    pub fn judge(
        &mut self,
        exchange: Exchange,
        answer: Answer<'_>,
        watch: &mut dyn Sink,
    ) -> Judged {
        let now = answer.at.unwrap_or(self.now).max(self.now);
        let mut judged = Judged::default();
        let mut out = Vec::new();
        // Only the registry's stalls: no exchange is open between two.
        let mut due = Vec::new();
        self.registry.tick(now, &mut due);
        judged.due = due
            .into_iter()
            .filter_map(|f| self.pipeline.keep(f))
            .collect();
        // The one id of this session's one open exchange.
        const ID: u64 = 0;
        let seq = self.next_seq();
        self.open(ID, exchange, seq);
        let mut tee = Count {
            watch,
            read: 0,
            gaps: 0,
        };
        let head = Head::read(answer.status, answer.content_type, None);
        self.head(ID, head, &mut out);
        self.piece(ID, answer.body, now, &mut tee, &mut out);
        self.end(ID, answer.end, None, now, &mut tee, &mut out);
        let mut folds = Folds::default();
        for found in out {
            folds.add(found.finding, |f| f);
        }
        judged.found = folds.take().collect();
        judged.read = tee.read;
        judged.gaps = tee.gaps;
        judged
    }
}

/// The watcher of a whole exchange, its frames and gaps counted.
struct Count<'w> {
    watch: &'w mut dyn Sink,
    read: usize,
    gaps: usize,
}

impl Sink for Count<'_> {
    fn finding(&mut self, _finding: Finding) {}
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
    fn decoded(&mut self, index: Option<u64>, decoded: Result<&Decoded<'_>, &Malformed>) {
        self.watch.decoded(index, decoded);
    }
}

#[cfg(test)]
mod tests;
