//! What the engine tells its driver besides findings (events read, gaps,
//! agent cards), and why an exchange was not (fully) judged.

use crate::a2a::card::CardInfo;
use crate::a2a::model::{Decoded, EventKind, Malformed};
use crate::findings::Finding;

/// What the engine reports besides findings.
pub trait Sink {
    /// A finding, evidence attached.
    fn finding(&mut self, finding: Finding);
    /// One decoded stream event.
    fn event(&mut self, _kind: EventKind) {}
    /// One frame or whole body was read and judged (decoded or found
    /// malformed): `check` tells "clean" from "nothing read" by it.
    fn read(&mut self) {}
    /// One event the engine did not read (a gap in the stream's history;
    /// judging goes on, findings that would rest on it are withheld).
    fn gap(&mut self, _reason: SkipReason) {}
    /// An agent card passed (a 2xx answer to `GetAgentCard` that is a JSON
    /// object): what it says of the agent.
    fn card(&mut self, _card: CardInfo) {}
    /// What one frame, message or whole body read decoded to (or why it is
    /// malformed), with its event index (`None` for a whole body): for a
    /// report that draws each exchange's timeline (`--format html`).
    fn decoded(&mut self, _index: Option<u64>, _decoded: Result<&Decoded<'_>, &Malformed>) {}
}

impl Sink for Vec<Finding> {
    fn finding(&mut self, finding: Finding) {
        self.push(finding);
    }
}

/// Why an exchange was not (fully) judged: the label of
/// `a2a_analysis_skipped_total{reason}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// A non-streamed response body above `max_body_bytes`.
    BodyTooLarge,
    /// A request body above the classifier's limit.
    RequestTooLarge,
    /// One SSE event above `max_event_bytes`: a gap in its stream, which
    /// is judged on without it.
    EventTooLarge,
    /// A `Content-Encoding` that cannot be undone, or a corrupt body.
    ContentEncoding,
    /// Analysis fell behind and bytes were not seen.
    Overload,
    /// A compressed answer inflated past its budget
    /// (`analysis.max_inflated_bytes`, `analysis.max_inflate_ratio`), or a
    /// gRPC message repeated a field more than judging reads.
    InflatedTooLarge,
}

impl SkipReason {
    /// Every reason, for pre-registering label values.
    pub const ALL: [SkipReason; 6] = [
        SkipReason::BodyTooLarge,
        SkipReason::RequestTooLarge,
        SkipReason::EventTooLarge,
        SkipReason::ContentEncoding,
        SkipReason::Overload,
        SkipReason::InflatedTooLarge,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::BodyTooLarge => "body_too_large",
            SkipReason::RequestTooLarge => "request_too_large",
            SkipReason::EventTooLarge => "event_too_large",
            SkipReason::ContentEncoding => "content_encoding",
            SkipReason::Overload => "overload",
            SkipReason::InflatedTooLarge => "inflated_too_large",
        }
    }
}
