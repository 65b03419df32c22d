//! An opt-in alteration (off by default): rewriting the URLs an agent card advertises
//! (1.0 `supportedInterfaces[].url`, 0.3 `url` and
//! `additionalInterfaces[].url`) to the proxy's public base URL, so clients
//! that follow the card keep talking through the proxy. Paths, queries and
//! tenants stay exactly; every other byte of the card stays as sent.
//!
//! A compressed card (`gzip`, `deflate`, `br`) is undone, rewritten and
//! sent uncompressed (`Content-Encoding` removed, `Content-Length` set,
//! `Vary` kept): the caller gets the agent's own text with only the URLs
//! moved, at no compression cost on the serving thread. A card the proxy
//! cannot rewrite (a coding it does not undo, broken bytes, larger than
//! `proxy.max_card_rewrite_bytes`, a caller that refuses an uncompressed
//! answer) passes exactly as sent, and is counted in
//! `a2a_agent_card_bypass_total` and logged: its URLs were not moved.

mod coding;
mod rewrite;

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::header;
use http_body_util::BodyExt;

use self::coding::{takes_identity, Coding, Unreadable};
pub use self::rewrite::rewrite;
use super::gather::{gather, Gathered, Held};
use crate::pace::Every;
use crate::proxy::{ProxyBody, ResponseTransform, Transformed};
use crate::report::Metrics;

/// How cards are rewritten, from the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardSettings {
    /// The proxy's public base URL (`public_url`).
    pub public_base: String,
    /// `proxy.max_card_rewrite_bytes`: larger cards (on the wire or
    /// undone) pass as sent.
    pub max_bytes: usize,
}

/// Rewrites the cards of one upstream, and counts those it could not.
pub struct CardRewriter {
    settings: CardSettings,
    upstream: String,
    bypass: prometheus::IntCounter,
    /// The pace of the warning of cards passed unrewritten.
    warned: Mutex<Every>,
}

/// At most one warning of cards passed unrewritten in this long.
const WARN_EVERY: Duration = Duration::from_secs(60);

impl CardRewriter {
    /// The rewriter of `upstream`'s cards, counting in `metrics`.
    pub fn new(settings: CardSettings, upstream: &str, metrics: &Metrics) -> Arc<CardRewriter> {
        Arc::new(CardRewriter {
            settings,
            upstream: upstream.to_owned(),
            bypass: metrics.agent_card_bypass_total.with(upstream),
            warned: Mutex::new(Every::new(WARN_EVERY)),
        })
    }

    /// A card went out as the agent sent it, its URLs not moved: counted,
    /// and logged at most once a minute.
    fn passed(&self, why: Why) {
        self.bypass.inc();
        let due = self
            .warned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .due();
        let Some(cards) = due else {
            return;
        };
        tracing::warn!(
            upstream = %self.upstream,
            reason = %why,
            cards,
            "an agent card passed unrewritten: clients that follow it may talk to the agent \
             directly, unseen (counted in a2a_agent_card_bypass_total; logged at most once a \
             minute, `cards` since the last line)"
        );
    }
}

/// Why a card passed unrewritten.
#[derive(Debug)]
enum Why {
    Unreadable(Unreadable),
    /// Declared or gathered past the bound, on the wire.
    TooLarge,
    /// Compressed, to a caller that refuses an uncompressed answer.
    RefusesIdentity,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::Unreadable(Unreadable::Coding(name)) => {
                write!(f, "content coding {name:?} is not one the proxy undoes")
            }
            Why::Unreadable(Unreadable::Corrupt) => f.write_str("its compressed bytes are broken"),
            Why::Unreadable(Unreadable::TooLarge) | Why::TooLarge => {
                f.write_str("larger than proxy.max_card_rewrite_bytes")
            }
            Why::RefusesIdentity => f.write_str(
                "compressed, and the caller's Accept-Encoding refuses an uncompressed answer",
            ),
        }
    }
}

/// Card rewriting without validation (`validate = false`,
/// `rewrite_agent_card = true`): observes nothing, alters only cards.
pub struct CardOnly {
    pub card: Arc<CardRewriter>,
}

impl crate::proxy::Inspector for CardOnly {
    fn begin(
        &self,
        _request_id: u64,
        _head: &http::request::Parts,
        _has_body: bool,
    ) -> Option<Arc<dyn crate::proxy::ExchangeObserver>> {
        None
    }

    fn transform_for(&self, head: &http::request::Parts) -> Option<Box<dyn ResponseTransform>> {
        card_transform(head, &self.card)
    }
}

/// The rewrite for `head`, when it asks for an agent card.
pub fn card_transform(
    head: &http::request::Parts,
    card: &Arc<CardRewriter>,
) -> Option<Box<dyn ResponseTransform>> {
    (head.method == http::Method::GET && is_card_path(head.uri.path())).then(|| {
        Box::new(CardRewrite {
            card: card.clone(),
            takes_identity: takes_identity(&head.headers),
        }) as Box<dyn ResponseTransform>
    })
}

/// Rewrites one agent-card response onto the public base URL.
struct CardRewrite {
    card: Arc<CardRewriter>,
    /// The caller takes an uncompressed answer.
    takes_identity: bool,
}

impl ResponseTransform for CardRewrite {
    fn apply(self: Box<Self>, head: http::response::Parts, body: ProxyBody) -> Transformed {
        Box::pin(self.run(head, body))
    }
}

impl CardRewrite {
    /// Gathers the card (bounded), then answers with it rewritten, or as
    /// it came. The head waits for the body: whether it changes
    /// (`Content-Encoding`, `Content-Length`) is known only then.
    async fn run(
        self,
        mut head: http::response::Parts,
        body: ProxyBody,
    ) -> (http::response::Parts, ProxyBody) {
        if !head.status.is_success() {
            return (head, body);
        }
        let max = self.card.settings.max_bytes;
        let coding = match Coding::of(head.headers.get(header::CONTENT_ENCODING)) {
            Ok(coding) => coding,
            Err(why) => return self.pass(head, body, Why::Unreadable(why)),
        };
        if coding != Coding::Identity && !self.takes_identity {
            return self.pass(head, body, Why::RefusesIdentity);
        }
        let declared = head
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > max as u64) {
            return self.pass(head, body, Why::TooLarge);
        }
        let (wire, trailers) = match gather(body, max).await {
            Gathered::Whole { wire, trailers } => (wire, trailers),
            Gathered::Over(held) => return self.pass(head, held.boxed_unsync(), Why::TooLarge),
            // The upstream broke the body: the caller sees it break.
            Gathered::Broken(held) => return (head, held.boxed_unsync()),
        };
        let plain = match coding.inflate(&wire, max) {
            Ok(plain) => plain,
            Err(why) => {
                let held = Held::whole(wire, trailers).boxed_unsync();
                return self.pass(head, held, Why::Unreadable(why));
            }
        };
        // Not a card (an HTML page at the card's path) or nothing to move:
        // as sent.
        let Some(new) = rewrite(&plain, &self.card.settings.public_base) else {
            return (head, Held::whole(wire, trailers).boxed_unsync());
        };
        head.headers.remove(header::CONTENT_ENCODING);
        head.headers
            .insert(header::CONTENT_LENGTH, header::HeaderValue::from(new.len()));
        (head, Held::whole(Bytes::from(new), trailers).boxed_unsync())
    }

    fn pass(
        &self,
        head: http::response::Parts,
        body: ProxyBody,
        why: Why,
    ) -> (http::response::Parts, ProxyBody) {
        self.card.passed(why);
        (head, body)
    }
}

/// Whether a request path asks for an agent card (public or extended).
pub fn is_card_path(path: &str) -> bool {
    path.ends_with("/.well-known/agent-card.json")
        || path.ends_with("/.well-known/agent.json")
        || path.ends_with("/extendedAgentCard")
        || path.ends_with("/v1/card")
}
