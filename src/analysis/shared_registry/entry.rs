//! Facts as Redis stream entries: one entry carries up to `PACK` facts a
//! replica recorded together, so Redis does one insertion per batch rather
//! than per fact. Fields: `v` (format), `r` (the replica that saw them),
//! `u` (the route whose agent they are about, when the replicas have
//! `[[route]]` tables; absent: the one upstream, or the first route), `f`
//! (the facts, protobuf: a repeated message of task id, context id, state
//! by its metric label, the agent's `status.timestamp`), and with a shared
//! key `s`, the HMAC-SHA256 of the others (and of the stream's name).
//!
//! Whatever an entry holds, reading it is bounded: an entry over
//! `MAX_ENTRY` bytes, over `PACK` facts, or with an id, timestamp or
//! replica name over its limit is skipped whole, before any of it is
//! decoded; with a key, nothing is decoded before the signature checks.

use prost::Message as _;
use ring::hmac;

use crate::lifecycle::registry::Fact;

/// The format written in `v`; entries of another format are skipped.
pub(super) const FORMAT: &str = "2";
/// Most facts in one entry (written, and accepted when read).
pub(super) const PACK: usize = 64;
/// Longest task or context id a fact carries: a fact with a longer one is
/// not published, and an entry holding one is skipped.
pub(super) const MAX_ID: usize = 1024;
/// Longest `status.timestamp` a fact carries (RFC 3339 takes 35 bytes at
/// nanoseconds); a longer one is not published.
pub(super) const MAX_TIMESTAMP: usize = 64;
/// Longest replica name (`r`).
pub(super) const MAX_REPLICA: usize = 128;
/// Longest route name (`u`).
pub(super) const MAX_ROUTE: usize = 256;
/// Longest fact on the wire: two ids, a state label, a timestamp and the
/// protobuf framing.
const MAX_FACT: usize = 2 * MAX_ID + MAX_TIMESTAMP + 64;
/// Most bytes of an entry's fields (names and values) read: `PACK` facts
/// at their limits, the replica's name, the format and the signature.
pub(super) const MAX_ENTRY: usize = PACK * (MAX_FACT + 8) + MAX_REPLICA + MAX_ROUTE + 256;

#[derive(Clone, PartialEq, prost::Message)]
struct Facts {
    #[prost(message, repeated, tag = "1")]
    facts: Vec<FactMsg>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct FactMsg {
    #[prost(string, tag = "1")]
    task_id: String,
    #[prost(string, optional, tag = "2")]
    context_id: Option<String>,
    #[prost(string, tag = "3")]
    state: String,
    #[prost(string, optional, tag = "4")]
    timestamp: Option<String>,
}

/// Whether a fact fits the limits every replica reads by (its ids and
/// timestamp): one that does not is not published.
pub(super) fn fits(f: &Fact) -> bool {
    f.task_id.len() <= MAX_ID
        && f.context_id.as_deref().map_or(0, str::len) <= MAX_ID
        && f.timestamp.as_deref().map_or(0, str::len) <= MAX_TIMESTAMP
}

/// The `f` field of an entry holding `facts`, written straight from them
/// (prost's wire helpers; the same bytes as the `Facts` message).
pub(super) fn pack<'a>(facts: impl IntoIterator<Item = &'a Fact>) -> Vec<u8> {
    use prost::encoding::{encode_key, encode_varint, encoded_len_varint, WireType};
    let field_len = |tag: u32, s: &str| {
        prost::encoding::key_len(tag) + encoded_len_varint(s.len() as u64) + s.len()
    };
    let put = |tag: u32, s: &str, buf: &mut Vec<u8>| {
        encode_key(tag, WireType::LengthDelimited, buf);
        encode_varint(s.len() as u64, buf);
        buf.extend_from_slice(s.as_bytes());
    };
    let mut buf = Vec::new();
    for f in facts {
        let state = f.state.as_str();
        let len = field_len(1, &f.task_id)
            + f.context_id.as_deref().map_or(0, |c| field_len(2, c))
            + field_len(3, state)
            + f.timestamp.as_deref().map_or(0, |t| field_len(4, t));
        encode_key(1, WireType::LengthDelimited, &mut buf);
        encode_varint(len as u64, &mut buf);
        put(1, &f.task_id, &mut buf);
        if let Some(c) = &f.context_id {
            put(2, c, &mut buf);
        }
        put(3, state, &mut buf);
        if let Some(t) = &f.timestamp {
            put(4, t, &mut buf);
        }
    }
    buf
}

/// The signature (`s`) of an entry of `replica` holding `facts` (of
/// `route`, when it names one) on `stream`: HMAC-SHA256 over each part
/// with its length before it, so no two entries sign the same bytes (an
/// entry with its route removed or changed does not verify), and an entry
/// moved to another deployment's stream does not verify there.
pub(super) fn sign(
    key: &hmac::Key,
    stream: &str,
    (replica, route): (&[u8], Option<&[u8]>),
    facts: &[u8],
) -> hmac::Tag {
    hmac::sign(key, &signed(stream, (replica, route), facts))
}

/// The bytes an entry's signature covers.
fn signed(stream: &str, (replica, route): (&[u8], Option<&[u8]>), facts: &[u8]) -> Vec<u8> {
    let mut msg = Vec::with_capacity(facts.len() + replica.len() + stream.len() + 64);
    let parts = [stream.as_bytes(), FORMAT.as_bytes(), replica, facts];
    for part in parts.into_iter().chain(route) {
        msg.extend_from_slice(&(part.len() as u64).to_be_bytes());
        msg.extend_from_slice(part);
    }
    msg
}

/// Why an entry was skipped (the `op` it is counted under, and a reason
/// for the log).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Skip {
    /// Not whole facts of this format.
    Decode(String),
    /// Over a limit (`MAX_ENTRY`, `PACK`, an id, a timestamp, a name).
    Oversized(String),
    /// A key is set and the entry has no signature.
    Unsigned,
    /// A key is set and the signature is not the key's.
    BadSignature,
}

impl Skip {
    /// The `op` label of `a2a_registry_errors_total` it counts under.
    pub(super) fn op(&self) -> &'static str {
        match self {
            Skip::Decode(_) => "decode",
            Skip::Oversized(_) => "oversized",
            Skip::Unsigned => "unsigned",
            Skip::BadSignature => "bad_signature",
        }
    }
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::Decode(why) | Skip::Oversized(why) => f.write_str(why),
            Skip::Unsigned => f.write_str("not signed, and registry.shared_key is set"),
            Skip::BadSignature => f.write_str("not signed with registry.shared_key"),
        }
    }
}

/// What is needed to read an entry: this replica's name (its own entries
/// are not decoded), the stream, and the shared key when set.
pub(super) struct Reader<'a> {
    pub(super) own: &'a str,
    pub(super) stream: &'a str,
    pub(super) key: Option<&'a hmac::Key>,
}

/// An entry read: the replica that wrote it, the route its facts are
/// about (when it names one) and its facts.
pub(super) type Read = crate::analysis::msg::Heard;

impl Reader<'_> {
    /// What an entry's fields say: its replica and facts (`None` when this
    /// replica wrote it), or why the entry is skipped (then nothing of it
    /// is used).
    pub(super) fn read(&self, fields: &[(Vec<u8>, Vec<u8>)]) -> Result<Option<Read>, Skip> {
        let size: usize = fields.iter().map(|(n, v)| n.len() + v.len()).sum();
        if size > MAX_ENTRY {
            return Err(Skip::Oversized(format!(
                "{size} bytes, over the {MAX_ENTRY} an entry may hold"
            )));
        }
        let (mut v, mut r, mut u, mut f, mut s) = (None, None, None, None, None);
        for (name, value) in fields {
            let slot = match name.as_slice() {
                b"v" => &mut v,
                b"r" => &mut r,
                b"u" => &mut u,
                b"f" => &mut f,
                b"s" => &mut s,
                _ => continue,
            };
            if slot.replace(value).is_some() {
                return Err(Skip::Decode("a field appears twice".to_string()));
            }
        }
        if v.map(Vec::as_slice) != Some(FORMAT.as_bytes()) {
            let v = v
                .map(|v| String::from_utf8_lossy(&v[..v.len().min(16)]).into_owned())
                .unwrap_or_default();
            return Err(Skip::Decode(format!("format {v:?}, not {FORMAT}")));
        }
        let (Some(r), Some(f)) = (r, f) else {
            return Err(Skip::Decode(
                "the replica or the facts are missing".to_string(),
            ));
        };
        if r.as_slice() == self.own.as_bytes() {
            return Ok(None); // this replica's own: not decoded
        }
        if r.len() > MAX_REPLICA {
            return Err(Skip::Oversized(format!(
                "a replica name of {} bytes, over {MAX_REPLICA}",
                r.len()
            )));
        }
        if u.is_some_and(|u| u.len() > MAX_ROUTE) {
            return Err(Skip::Oversized(format!(
                "a route name over {MAX_ROUTE} bytes"
            )));
        }
        if let Some(key) = self.key {
            let Some(s) = s else {
                return Err(Skip::Unsigned);
            };
            let msg = signed(self.stream, (r, u.map(Vec::as_slice)), f);
            hmac::verify(key, &msg, s).map_err(|_| Skip::BadSignature)?;
        }
        let Ok(replica) = std::str::from_utf8(r) else {
            return Err(Skip::Decode("a replica name that is not text".to_string()));
        };
        let route = match u.map(|u| std::str::from_utf8(u)) {
            None => None,
            Some(Ok(route)) => Some(Box::<str>::from(route)),
            Some(Err(_)) => return Err(Skip::Decode("a route name that is not text".to_string())),
        };
        check_sizes(f)?;
        let msg = Facts::decode(&f[..])
            .map_err(|e| Skip::Decode(format!("the facts do not decode: {e}")))?;
        let mut facts = Vec::with_capacity(msg.facts.len());
        for m in msg.facts {
            if m.task_id.is_empty() {
                return Err(Skip::Decode("a task id is empty".to_string()));
            }
            let state = Fact::state_from_label(&m.state)
                .ok_or_else(|| Skip::Decode(format!("unknown state {:?}", cut(&m.state))))?;
            let fact = Fact {
                task_id: m.task_id.into(),
                context_id: m.context_id.map(Into::into),
                state,
                timestamp: m.timestamp.map(Into::into),
            };
            if !fits(&fact) {
                return Err(Skip::Oversized(
                    "an id or timestamp over its limit".to_string(),
                ));
            }
            facts.push(fact);
        }
        Ok(Some((replica.into(), route, facts)))
    }
}

/// Checks the facts' framing before anything is decoded: at most `PACK`
/// facts, none over `MAX_FACT` bytes (so decoding allocates little).
fn check_sizes(mut f: &[u8]) -> Result<(), Skip> {
    use prost::encoding::{decode_key, decode_varint, WireType};
    let mut n = 0;
    while !f.is_empty() {
        let bad = |e: prost::DecodeError| Skip::Decode(format!("the facts do not decode: {e}"));
        let (tag, wire) = decode_key(&mut f).map_err(bad)?;
        if tag != 1 || wire != WireType::LengthDelimited {
            return Err(Skip::Decode(format!("an unknown field {tag} in the facts")));
        }
        let len = decode_varint(&mut f).map_err(bad)?;
        n += 1;
        if n > PACK {
            return Err(Skip::Oversized(format!("over {PACK} facts in one entry")));
        }
        if len > MAX_FACT as u64 {
            return Err(Skip::Oversized(format!(
                "a fact of {len} bytes, over {MAX_FACT}"
            )));
        }
        let Some(rest) = f.get(len as usize..) else {
            return Err(Skip::Decode("a half-written fact".to_string()));
        };
        f = rest;
    }
    Ok(())
}

/// At most 32 bytes of `s`, for a log line.
fn cut(s: &str) -> &str {
    let mut end = s.len().min(32);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests;
