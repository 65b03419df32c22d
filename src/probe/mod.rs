//! `a2a-tap probe URL`: drives a live agent through the conformance
//! checks (its card, then every interface it offers on the origin given)
//! and judges every answer with the same engine as `check` and the proxy.
//! The number of requests and the total time are bounded.

mod answer;
mod capability;
mod check_sources;
mod checks;
mod client;
mod dialect;
mod discover;
mod error;
mod flow;
mod output;
mod terminal;

use std::time::Duration;

use http::Method;

pub use checks::{CheckId, CheckResult, Verdict};
pub use output::Format;

use crate::a2a::card::CardInfo;
use crate::judge::Settings;
use crate::report::offline::Offline;
use client::{headers, Client, Limits};
use error::ProbeError;
pub use error::UrlError;
use output::{IfaceOut, ProbeReport};

/// The message sent when `--message` is not given.
pub const DEFAULT_MESSAGE: &str = "a2a-tap probe: please reply briefly";

/// The bounds of a run.
pub const LIMITS: ProbeLimits = ProbeLimits {
    max_requests: 200,
    total: Duration::from_secs(120),
    per_request: Duration::from_secs(15),
};

/// The probe's documented bounds.
#[derive(Debug, Clone, Copy)]
pub struct ProbeLimits {
    pub max_requests: usize,
    pub total: Duration,
    pub per_request: Duration,
}

/// What to probe and how to report it.
#[derive(Debug, Clone)]
pub struct Options {
    pub url: String,
    pub message: String,
    pub format: Format,
    pub settings: Settings,
}

/// Checks whether `url` can be probed (http or https, with a host): the
/// command line's own validation of its `URL`.
pub fn check_url(url: &str) -> Result<(), UrlError> {
    discover::Target::parse(url).map(|_| ())
}

/// Runs the probe and prints the report; returns the exit code: 0 every
/// check passed or was not applicable and no finding is at error
/// severity, 1 a check failed or an error finding, 2 a bad URL or a URL
/// on which no check could run (a clean report of nothing would pass a CI
/// gate), 3 the agent could not be reached at all.
pub fn run(options: &Options) -> i32 {
    let target = match discover::Target::parse(&options.url) {
        Ok(t) => t,
        Err(why) => {
            eprintln!("a2a-tap probe: URL {}: {why}", options.url);
            return 2;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("a2a-tap probe: cannot start the runtime: {e}");
            return 3;
        }
    };
    match runtime.block_on(probe(&target, options)) {
        Ok(report) => {
            report.print(options.format);
            if let Some(why) = &report.nothing_ran {
                eprintln!("a2a-tap probe: URL {}: {why}", options.url);
            }
            if report.failed() {
                1
            } else if report.nothing_ran.is_some() {
                2
            } else {
                0
            }
        }
        Err(why) => {
            eprintln!("a2a-tap probe: {why}");
            3
        }
    }
}

/// The whole run; `Err` when the card URL could not be reached at all.
async fn probe(target: &discover::Target, options: &Options) -> Result<ProbeReport, ProbeError> {
    let judge = Offline::new(&options.settings, options.format == Format::Html);
    let limits = Limits {
        max_requests: LIMITS.max_requests,
        total: LIMITS.total,
        per_request: LIMITS.per_request,
        // One byte over the engine's limit, so that it skips (not
        // misjudges) what the probe did not read whole.
        max_body: options.settings.engine.max_body_bytes.saturating_add(1),
        grace: Duration::from_millis(1000),
    };
    let upstream = target
        .given
        .authority()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let mut client = Client::new(target.https(), limits, judge, upstream)?;
    let card_headers = headers(&[("accept", "application/json")]);
    let i = client
        .send(Method::GET, target.card.clone(), card_headers, Vec::new())
        .await?;
    let sent = &client.sent[i];
    if sent.status.is_none() {
        return Err(ProbeError::Unreachable {
            card: target.card.clone(),
            why: sent.failure.as_deref().unwrap_or("no answer").to_owned(),
        });
    }
    let (card_check, card) = discover::judge_card(sent.status, &sent.answer, &sent.read, sent.n);
    let mut interfaces = Vec::new();
    let mut seen = Vec::new();
    for i in card.iter().flat_map(|c| &c.interfaces) {
        let Some(card) = &card else { break };
        let name = format!("{} {}", i.binding, i.version.as_deref().unwrap_or("-"));
        match discover::plan(target, card, i) {
            discover::Plan::Skip(why) => interfaces.push(IfaceOut::skipped(name, &i.url, &why)),
            discover::Plan::Probe(iface) if seen.contains(&iface) => {
                interfaces.push(IfaceOut::skipped(name, &i.url, "listed twice: probed once"));
            }
            discover::Plan::Probe(iface) => {
                seen.push(iface.clone());
                let caps = flow::Caps {
                    streaming: card.streaming == Some(true),
                    push: card.push_notifications == Some(true),
                };
                let name = iface.name();
                let (results, exchanges) =
                    flow::probe(&mut client, iface, caps, &options.message).await;
                interfaces.push(IfaceOut::probed(
                    name,
                    &i.url,
                    results,
                    &exchanges,
                    &client.sent,
                    options.settings.engine.evidence,
                ));
            }
        }
    }
    let nothing_ran = card
        .as_ref()
        .and_then(|card| nothing_ran(target, card, &interfaces));
    let mut report = ProbeReport::new(
        target,
        card_check,
        interfaces,
        &client.sent,
        client.elapsed(),
        client.limits(),
        options.settings.engine.evidence,
    );
    report.nothing_ran = nothing_ran;
    report.lanes = client.lanes();
    Ok(report)
}

/// Why no check could run on any interface of `card`, and what to pass
/// instead; `None` when one interface was probed.
fn nothing_ran(
    target: &discover::Target,
    card: &CardInfo,
    interfaces: &[IfaceOut],
) -> Option<String> {
    if interfaces.iter().any(|i| i.contacted) {
        return None;
    }
    if card.interfaces.is_empty() {
        return Some(
            "no check could run: the card lists no interface (1.0 supportedInterfaces, 0.3 url); \
             pass the URL of an agent whose card lists its JSON-RPC or HTTP+JSON endpoint"
                .into(),
        );
    }
    let why: Vec<String> = interfaces
        .iter()
        .map(|i| {
            let reason = i.checks.first().map_or("", |c| c.reason.as_str());
            format!("{} {}: {reason}", i.name, i.url)
        })
        .collect();
    // An interface in a binding the probe speaks, on another origin: the
    // agent's own URL is likely there.
    let elsewhere = card.interfaces.iter().find_map(|i| {
        let spoken = ["JSONRPC", "HTTP+JSON"]
            .iter()
            .any(|b| i.binding.eq_ignore_ascii_case(b));
        let url = i.url.parse::<http::Uri>().ok()?;
        let origin = format!("{}://{}", url.scheme_str()?, url.authority()?);
        (spoken && !target.same_origin(&url)).then_some(origin)
    });
    let what = match elsewhere {
        Some(origin) => format!(
            "the probe only talks to the origin of the URL given: pass the agent's own URL, e.g. `a2a-tap probe {origin}`"
        ),
        None => "the probe speaks JSON-RPC and HTTP+JSON, 1.0 and 0.3: pass the URL of an agent that offers one of them".into(),
    };
    Some(format!(
        "no check could run: none of the {} interface(s) the card lists could be probed ({}); {what}",
        interfaces.len(),
        why.join("; ")
    ))
}
