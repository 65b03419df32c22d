//! Push deliveries judged (the relay's, `[push]`): the registrations the
//! relay made, each tied to the exchange that carried it until its answer
//! says whether the agent took it; the deliveries, each judged whole like
//! an answer about the registration's task (shape, task, lifecycle through
//! the registry) plus what only deliveries owe (spec 1.0.1 §4.3.3: the
//! `Authorization` the config asked for, at least one delivery of the
//! terminal state; §3.1.10: none after the config's deletion was
//! answered).
//!
//! Deliveries are at-least-once and retries come late, so a delivery never
//! accuses by its order alone: a repeat is the same state again; a
//! non-terminal state after the terminal one is stale when both carry
//! timestamps and it is stamped before (the registry ignores it), an exit
//! when stamped after, and not certain (counted, judged without the
//! registry) when either has none. A delivery for a task the proxy never
//! saw is learned.

use std::collections::HashMap;

use crate::a2a::model::{Decoded, Event, Payload, TaskState, Version};
pub use crate::a2a::push::PushAuth;
use crate::findings::{Finding, Kind};
use crate::lifecycle::{Millis, Registry, Seq};

/// `map`'s entry for exchange `exchange`, removed. Every exchange's end
/// asks, and most carry no push config: an empty map is not asked (a
/// lookup hashes the key, even in an empty map).
fn take<V>(map: &mut HashMap<u64, V>, exchange: u64) -> Option<V> {
    if map.is_empty() {
        return None;
    }
    map.remove(&exchange)
}

/// A push config the relay registered: the token of its relay URL, the
/// version it was registered over, and what it asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub token: Box<str>,
    pub version: Version,
    pub task_id: Option<String>,
    pub config_id: Option<String>,
    pub auth: Option<PushAuth>,
}

/// How the webhook answered a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookAnswer {
    /// 2xx.
    Delivered,
    /// Another status.
    Error,
    /// No answer (connection refused, reset, timed out).
    Unreachable,
}

/// One delivery, as the relay forwarded it.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub token: Box<str>,
    /// The `Authorization` header it carried.
    pub authorization: Option<String>,
    /// Its body; `None` when not judged (over the limit, encoded).
    pub body: Option<Vec<u8>>,
    pub answer: WebhookAnswer,
    /// Its place in the causal order: the messages sent before it arrived.
    pub seq: Seq,
}

/// What a registration is, as far as the proxy knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Its exchange's answer has not said yet.
    Pending,
    /// The agent took it.
    Active,
    /// The agent refused it (an error answer).
    Refused,
}

impl Reg {
    /// The agent took it, on the exchange stamped `seq` about `task_id`:
    /// a task terminal before that exchange began owes no delivery of it.
    fn take(&mut self, task_id: Option<&str>, seq: Seq, registry: &Registry) {
        self.standing = Standing::Active;
        if self.task_id.is_none() {
            self.task_id = task_id.filter(|t| t.len() <= MAX_ID).map(str::to_owned);
        }
        self.late = self
            .task_id
            .as_deref()
            .and_then(|t| registry.terminal_before(t, seq))
            .is_some();
    }
}

/// What a config's `authentication` asks of deliveries, kept bounded: a
/// few schemes, cut short, and the credentials' SHA-256 (never the
/// credentials themselves).
#[derive(Debug)]
struct Expected {
    schemes: Vec<String>,
    credentials: Option<[u8; 32]>,
}

/// Longest task or config id a registration keeps; a longer one is
/// unknown (nothing is judged that would rest on it).
const MAX_ID: usize = 1024;
/// Schemes kept of a 0.3 config's list, each cut to `MAX_SCHEME` bytes.
const MAX_SCHEMES: usize = 4;
const MAX_SCHEME: usize = 64;

fn digest(s: &str) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, s.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

#[derive(Debug)]
struct Reg {
    /// The exchange that carried it.
    exchange: u64,
    version: Version,
    task_id: Option<String>,
    config_id: Option<String>,
    auth: Option<Expected>,
    standing: Standing,
    made: Millis,
    /// A delivery got a non-2xx answer or none: no promise is judged.
    failed: bool,
    /// A delivery carried a terminal state.
    delivered_terminal: bool,
    /// Its task was terminal before it was taken: no promise to judge.
    late: bool,
    /// When its task was first seen terminal (by the registry), once it is
    /// known terminal while the registration is active.
    terminal_since: Option<Millis>,
    /// `push_not_delivered` was reported.
    reported: bool,
    /// When a delete of it was answered.
    deleted_at: Option<Seq>,
    /// A delete of its task named a config whose id it may have (its id
    /// is unknown): neither promise nor deletion is judged.
    uncertain: bool,
}

/// The registrations and deletes the session follows.
#[derive(Debug, Default)]
pub(crate) struct Pushes {
    regs: HashMap<Box<str>, Reg>,
    /// The registrations still pending, by the exchange that carried them
    /// (its answer takes or refuses them: no scan of every registration
    /// at each exchange's end). At most `settings.max` exchanges.
    pending: HashMap<u64, Vec<Box<str>>>,
    /// Deletes in flight: exchange → (task, config id).
    deletes: HashMap<u64, (Option<String>, Option<String>)>,
    pub(crate) settings: PushSettings,
}

/// The bounds and the wait of push judging.
#[derive(Debug, Clone, Copy)]
pub struct PushSettings {
    /// `push.terminal_wait`.
    pub terminal_wait: Millis,
    /// `push.ttl`.
    pub ttl: Millis,
    /// `push.max_registrations`.
    pub max: usize,
}

impl Default for PushSettings {
    fn default() -> Self {
        PushSettings {
            terminal_wait: 30_000,
            ttl: 24 * 3_600_000,
            max: 100_000,
        }
    }
}

/// What judging a delivery decided before its engine runs.
pub(crate) struct Prepared {
    pub(crate) task_id: Option<String>,
    pub(crate) version: Version,
    /// Findings only deliveries have.
    pub(crate) found: Vec<Finding>,
    /// Its state may not go into the registry (not certain).
    pub(crate) unordered: bool,
}

impl Pushes {
    /// Registrations carried by exchange `exchange`, made at `now`.
    pub(crate) fn registered(&mut self, exchange: u64, regs: Vec<Registration>, now: Millis) {
        if self.pending.len() >= self.settings.max {
            // Exchanges never judged (unclassified) leave theirs behind.
            let any = self.pending.keys().next().copied();
            any.map(|e| self.pending.remove(&e));
        }
        let tokens = self.pending.entry(exchange).or_default();
        tokens.extend(regs.iter().map(|r| r.token.clone()));
        for r in regs {
            if self.regs.len() >= self.settings.max {
                self.evict_oldest();
            }
            let id = |s: Option<String>| s.filter(|s| s.len() <= MAX_ID);
            let auth = r.auth.map(|a| Expected {
                schemes: a
                    .schemes
                    .iter()
                    .take(MAX_SCHEMES)
                    .map(|s| crate::lifecycle::cut(s, MAX_SCHEME).into_owned())
                    .collect(),
                credentials: a.credentials.as_deref().map(digest),
            });
            self.regs.insert(
                r.token,
                Reg {
                    exchange,
                    version: r.version,
                    task_id: id(r.task_id),
                    config_id: id(r.config_id),
                    auth,
                    standing: Standing::Pending,
                    made: now,
                    failed: false,
                    delivered_terminal: false,
                    late: false,
                    terminal_since: None,
                    reported: false,
                    deleted_at: None,
                    uncertain: false,
                },
            );
        }
    }

    /// Whether an exchange's answer may take or refuse registrations or
    /// do a delete (`answered` has something to do).
    pub(crate) fn awaits_answers(&self) -> bool {
        !self.pending.is_empty() || !self.deletes.is_empty()
    }

    /// Exchange `exchange` asks to delete `config_id` of `task_id`.
    pub(crate) fn deleting(
        &mut self,
        exchange: u64,
        task_id: Option<String>,
        config: Option<String>,
    ) {
        self.deletes.insert(exchange, (task_id, config));
    }

    /// Exchange `exchange` was answered (`took`: 2xx without an A2A
    /// error) about `task_id`, the exchange stamped `seq`: its
    /// registrations are taken or refused, its delete done.
    pub(crate) fn answered(
        &mut self,
        exchange: u64,
        took: bool,
        (task_id, seq): (Option<&str>, Seq),
        registry: &Registry,
    ) {
        for token in take(&mut self.pending, exchange).unwrap_or_default() {
            let Some(reg) = self.regs.get_mut(&token) else {
                continue;
            };
            if reg.standing != Standing::Pending {
                continue;
            }
            if took {
                reg.take(task_id, seq, registry);
            } else {
                reg.standing = Standing::Refused;
            }
        }
        let Some((task, config)) = take(&mut self.deletes, exchange) else {
            return;
        };
        if !took {
            return;
        }
        let at = registry.now_seq();
        let task = task.or_else(|| task_id.map(str::to_owned));
        for reg in self.regs.values_mut() {
            if reg.task_id.is_none() || reg.task_id != task {
                continue;
            }
            match (&reg.config_id, &config) {
                (Some(id), Some(gone)) if id == gone => reg.deleted_at = Some(at),
                (Some(_), Some(_)) => {}
                _ => reg.uncertain = true,
            }
        }
    }

    /// An exchange that never got its answer judged (lost, over a limit):
    /// its registrations stay pending, so no promise is ever judged.
    pub(crate) fn forgotten(&mut self, exchange: u64) {
        take(&mut self.deletes, exchange);
        for token in take(&mut self.pending, exchange).unwrap_or_default() {
            if let Some(reg) = self.regs.get_mut(&token) {
                reg.uncertain = true;
            }
        }
    }

    /// What only a delivery owes, judged before its body: `None` when its
    /// token is not (or no longer) known here.
    pub(crate) fn prepare(&mut self, d: &Delivery, registry: &Registry) -> Option<Prepared> {
        let reg = self.regs.get_mut(&d.token)?;
        reg.failed |= d.answer != WebhookAnswer::Delivered;
        let mut found = Vec::new();
        if let Some(f) = auth_missing(reg.auth.as_ref(), d.authorization.as_deref()) {
            found.push(f);
        }
        if reg.deleted_at.is_some_and(|at| d.seq > at) {
            let id = reg.config_id.as_deref().unwrap_or("?");
            found.push(Finding::new(
                Kind::PushAfterDelete,
                format!(
                    "expected no delivery for push config {id} once its deletion was answered (1.0 §3.1.10); the agent delivered after it"
                ),
            ));
        }
        let event = d.body.as_deref().and_then(peek_state);
        // Push before snapshot: the first delivery names the task.
        if reg.task_id.is_none() {
            reg.task_id = event.as_ref().map(|(t, ..)| t.clone());
        }
        let unordered = match (&event, reg.task_id.as_deref()) {
            (Some((task, Some(state), stamped)), Some(ours)) if task == ours => {
                match registry.state_of(task) {
                    Some(known) if known.is_terminal() && known != *state => {
                        !(*stamped && registry.status_stamped(task))
                    }
                    _ => false,
                }
            }
            _ => false,
        };
        for f in &mut found {
            f.task_id.clone_from(&reg.task_id);
        }
        Some(Prepared {
            task_id: reg.task_id.clone(),
            version: reg.version,
            found,
            unordered,
        })
    }

    /// The delivery of `token` carried `state` (what its engine recorded),
    /// or was not read whole (`read`: false; over a limit, an encoding not
    /// undone, no room to judge it): then whether it carried the terminal
    /// state is unknown, and no `push_not_delivered` may rest on its
    /// registration.
    pub(crate) fn delivered(&mut self, token: &str, state: Option<TaskState>, read: bool) {
        let Some(reg) = self.regs.get_mut(token) else {
            return;
        };
        reg.uncertain |= !read;
        reg.delivered_terminal |= state.is_some_and(TaskState::is_terminal);
    }

    /// The time is `now`: registrations past their TTL are forgotten;
    /// `push_not_delivered` for each active one whose task has sat
    /// terminal `terminal_wait` with no delivery of it. `open_took`: for a
    /// registration whose exchange is still open (a stream), its task and
    /// stamp when its answer so far took it.
    pub(crate) fn tick(
        &mut self,
        now: Millis,
        registry: &Registry,
        open_took: &dyn Fn(u64) -> Option<(Option<String>, Seq)>,
        out: &mut Vec<Finding>,
    ) {
        let ttl = self.settings.ttl;
        self.regs.retain(|_, r| now.saturating_sub(r.made) < ttl);
        let wait = self.settings.terminal_wait;
        for reg in self.regs.values_mut() {
            if reg.standing == Standing::Pending {
                if let Some((task, seq)) = open_took(reg.exchange) {
                    reg.take(task.as_deref(), seq, registry);
                }
            }
            let owed = reg.standing == Standing::Active
                && !(reg.failed
                    || reg.delivered_terminal
                    || reg.late
                    || reg.reported
                    || reg.uncertain
                    || reg.deleted_at.is_some());
            let Some(task) = reg.task_id.as_deref().filter(|_| owed) else {
                continue;
            };
            let Some((state, entered)) = registry.terminal_of(task) else {
                continue;
            };
            // From when the proxy saw it, not from this tick (up to one
            // later): the wait is what the finding says it is.
            let since = *reg.terminal_since.get_or_insert(entered);
            if now.saturating_sub(since) < wait {
                continue;
            }
            reg.reported = true;
            let id = reg.config_id.as_deref().unwrap_or("(no id)");
            let mut f = Finding::new(
                Kind::PushNotDelivered,
                format!(
                    "expected at least one delivery of task {task}'s {state} state to its push config {id} (1.0 §4.3.3); none reached the relay within push.terminal_wait ({}s) of the proxy seeing it",
                    wait / 1000
                ),
            );
            f.task_id = Some(task.to_owned());
            out.push(f);
        }
    }

    /// Registrations held.
    pub(crate) fn len(&self) -> usize {
        self.regs.len()
    }

    fn evict_oldest(&mut self) {
        let oldest = self
            .regs
            .iter()
            .min_by_key(|(_, r)| r.made)
            .map(|(t, _)| t.clone());
        if let Some(t) = oldest {
            self.regs.remove(&t);
        }
    }
}

/// `push_auth_missing`: the config asked for `Authorization: {scheme}
/// {credentials}` (§4.3.3 MUST), the delivery sent none, another scheme,
/// or other credentials. The credentials are never written out.
fn auth_missing(auth: Option<&Expected>, sent: Option<&str>) -> Option<Finding> {
    let auth = auth.filter(|a| !a.schemes.is_empty() && a.credentials.is_some())?;
    let want = auth.schemes.join(" or ");
    let got = match sent.map(|s| s.trim().split_once(' ').unwrap_or((s.trim(), ""))) {
        None => "none".to_string(),
        Some((scheme, creds)) => {
            let scheme_ok = auth.schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme));
            let creds_ok = auth.credentials.is_none_or(|c| c == digest(creds.trim()));
            match (scheme_ok, creds_ok) {
                (true, true) => return None,
                (true, false) => format!("scheme {scheme} with other credentials"),
                (false, _) => format!("scheme {:?}", crate::lifecycle::cut(scheme, 32)),
            }
        }
    };
    Some(Finding::new(
        Kind::PushAuthMissing,
        format!(
            "expected the delivery to send Authorization: {want} with the config's credentials (1.0 §4.3.3); it sent {got}"
        ),
    ))
}

/// The task a delivery names, its state and whether it is stamped.
fn peek_state(body: &[u8]) -> Option<(String, Option<TaskState>, bool)> {
    let Ok(Decoded {
        payload: Payload::Event(ev),
        ..
    }) = crate::a2a::decode::decode(body)
    else {
        return None;
    };
    let status = match &ev {
        Event::Task(t) => Some(&t.status),
        Event::StatusUpdate(u) => Some(&u.status),
        _ => None,
    };
    let state = status.and_then(|s| s.state.known());
    let stamped = status.is_some_and(|s| {
        s.timestamp
            .as_deref()
            .and_then(crate::lifecycle::timestamp::parse)
            .is_some()
    });
    Some((ev.task_id()?.to_owned(), state, stamped))
}

#[cfg(test)]
mod tests;
