//! The relay's registrations: an unguessable token for each push config
//! registered through the proxy, mapping to the caller's webhook URL.
//! Bounded by count (`push.max_registrations`: past it a config is not
//! relayed, never an old one dropped while its task may still deliver)
//! and by age (`push.ttl`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// One registration.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Where deliveries go.
    pub webhook: http::Uri,
    /// The URL as the caller wrote it (JSON-unescaped), shown back to it.
    pub as_sent: Box<str>,
    /// The `upstream` label of the agent it was registered with.
    pub upstream: std::sync::Arc<str>,
}

/// Why a registration was not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// `push.max_registrations` are held.
    Full,
    /// Not an absolute `http://` or `https://` URL: nothing to relay to.
    BadUrl,
}

/// Token → webhook, bounded.
pub struct Table {
    inner: Mutex<Inner>,
    max: usize,
    ttl: Duration,
}

#[derive(Default)]
struct Inner {
    by_token: HashMap<Box<str>, (Entry, Instant)>,
    /// Tokens in the order they were made (their expiry order).
    order: VecDeque<(Instant, Box<str>)>,
    /// Registrations held, by route.
    held: HashMap<std::sync::Arc<str>, usize>,
}

/// Longest webhook URL relayed (a longer one passes unrelayed: `bad_url`).
pub const MAX_URL: usize = 4096;

/// Bytes of randomness in a token (hex: twice as many characters).
const TOKEN_BYTES: usize = 32;

/// Whether `s` has the form of a token (what the relay looks up).
pub fn is_token(s: &str) -> bool {
    s.len() == 2 * TOKEN_BYTES && s.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Table {
    /// An empty table.
    pub fn new(max: usize, ttl: Duration) -> Table {
        Table {
            inner: Mutex::new(Inner::default()),
            max,
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `webhook` (as the caller wrote it) for `upstream` at
    /// `now`: its new token.
    pub fn insert(
        &self,
        webhook: &str,
        upstream: &std::sync::Arc<str>,
        now: Instant,
    ) -> Result<Box<str>, Refused> {
        if webhook.len() > MAX_URL {
            return Err(Refused::BadUrl);
        }
        let uri = webhook.parse::<http::Uri>().map_err(|_| Refused::BadUrl)?;
        let web = matches!(uri.scheme_str(), Some("http" | "https"));
        if !web || uri.authority().is_none() {
            return Err(Refused::BadUrl);
        }
        let token = new_token().ok_or(Refused::Full)?;
        let mut inner = self.lock();
        self.expire(&mut inner, now);
        if inner.by_token.len() >= self.max {
            return Err(Refused::Full);
        }
        let entry = Entry {
            webhook: uri,
            as_sent: webhook.into(),
            upstream: upstream.clone(),
        };
        *inner.held.entry(upstream.clone()).or_default() += 1;
        inner.by_token.insert(token.clone(), (entry, now));
        inner.order.push_back((now, token.clone()));
        Ok(token)
    }

    /// The registration of `token`, if it is held and not expired at `now`.
    pub fn get(&self, token: &str, now: Instant) -> Option<Entry> {
        let inner = self.lock();
        let (entry, made) = inner.by_token.get(token)?;
        (now.saturating_duration_since(*made) < self.ttl).then(|| entry.clone())
    }

    /// Forgets what is past its TTL at `now`; how many are held, by route.
    pub fn sweep(&self, now: Instant) -> Vec<(std::sync::Arc<str>, usize)> {
        let mut inner = self.lock();
        self.expire(&mut inner, now);
        inner.held.iter().map(|(r, n)| (r.clone(), *n)).collect()
    }

    fn expire(&self, inner: &mut Inner, now: Instant) {
        while let Some((made, _)) = inner.order.front() {
            if now.saturating_duration_since(*made) < self.ttl {
                break;
            }
            let Some((_, token)) = inner.order.pop_front() else {
                break;
            };
            if let Some((entry, _)) = inner.by_token.remove(&token) {
                if let Some(n) = inner.held.get_mut(&entry.upstream) {
                    *n = n.saturating_sub(1);
                }
            }
        }
    }
}

/// A fresh token from the operating system's random source (ring's
/// `SystemRandom`); `None` if it has none to give.
fn new_token() -> Option<Box<str>> {
    let mut bytes = [0u8; TOKEN_BYTES];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).ok()?;
    let mut s = String::with_capacity(2 * TOKEN_BYTES);
    for b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    Some(s.into_boxed_str())
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn tokens_are_unique_bounded_and_expire() {
        let up: Arc<str> = "agent".into();
        let t0 = Instant::now();
        let table = Table::new(2, Duration::from_secs(10));
        let a = table.insert("http://hook/a", &up, t0).unwrap();
        let b = table.insert("https://hook:8443/b?x=1", &up, t0).unwrap();
        assert_ne!(a, b);
        assert!(is_token(&a) && is_token(&b));
        assert_eq!(
            table.insert("http://hook/c", &up, t0).unwrap_err(),
            Refused::Full,
            "bounded: no old registration is dropped for a new one"
        );
        assert_eq!(
            table.get(&b, t0).unwrap().as_sent.as_ref(),
            "https://hook:8443/b?x=1"
        );
        assert!(table.get("0".repeat(64).as_str(), t0).is_none());
        let later = t0 + Duration::from_secs(10);
        assert!(table.get(&a, later).is_none(), "expired");
        assert_eq!(table.sweep(later), [(up.clone(), 0)]);
        assert!(
            table.insert("http://hook/c", &up, later).is_ok(),
            "room again"
        );
    }

    #[test]
    fn only_absolute_web_urls_are_relayed() {
        let up: Arc<str> = "agent".into();
        let table = Table::new(8, Duration::from_secs(10));
        let long = format!("http://h/{}", "a".repeat(MAX_URL));
        for bad in [
            "/relative",
            "ftp://h/x",
            "not a url",
            "",
            "mailto:x@y",
            &long,
        ] {
            assert_eq!(
                table.insert(bad, &up, Instant::now()).unwrap_err(),
                Refused::BadUrl,
                "{bad}"
            );
        }
    }
}
