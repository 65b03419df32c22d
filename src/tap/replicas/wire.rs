//! Facts as Redis stream entries: one entry carries up to `PACK` facts a
//! replica recorded together, so Redis does one insertion per batch rather
//! than per fact. Fields: `v` (format), `r` (the replica that saw them),
//! `f` (the facts, protobuf: a repeated message of task id, context id,
//! state by its metric label, the agent's `status.timestamp`).

use prost::Message as _;

use crate::lifecycle::registry::Fact;

/// The format written in `v`; entries of another format are skipped.
pub(super) const FORMAT: &str = "2";
/// Most facts in one entry.
pub(super) const PACK: usize = 64;

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

/// The `f` field of an entry holding `facts`, written straight from them
/// (prost's wire helpers; the same bytes as the `Facts` message).
pub(super) fn pack(facts: &[Fact]) -> Vec<u8> {
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

/// What an entry's fields say: its facts (`None` when replica `own`
/// wrote it), or why the entry is not whole facts (then nothing of it is
/// used).
pub(super) fn read(fields: &[(Vec<u8>, Vec<u8>)], own: &str) -> Result<Option<Vec<Fact>>, String> {
    let (mut v, mut r, mut f) = (None, None, None);
    for (name, value) in fields {
        let slot = match name.as_slice() {
            b"v" => &mut v,
            b"r" => &mut r,
            b"f" => &mut f,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err("a field appears twice".to_string());
        }
    }
    if v.map(Vec::as_slice) != Some(FORMAT.as_bytes()) {
        let v = v
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        return Err(format!("format {v:?}, not {FORMAT}"));
    }
    let (Some(r), Some(f)) = (r, f) else {
        return Err("the replica or the facts are missing".to_string());
    };
    if r.as_slice() == own.as_bytes() {
        return Ok(None); // this replica's own: not decoded
    }
    let msg = Facts::decode(&f[..]).map_err(|e| format!("the facts do not decode: {e}"))?;
    let mut facts = Vec::with_capacity(msg.facts.len());
    for m in msg.facts {
        if m.task_id.is_empty() {
            return Err("a task id is empty".to_string());
        }
        let state = Fact::state_from_label(&m.state)
            .ok_or_else(|| format!("unknown state {:?}", m.state))?;
        facts.push(Fact {
            task_id: m.task_id.into(),
            context_id: m.context_id.map(Into::into),
            state,
            timestamp: m.timestamp.map(Into::into),
        });
    }
    Ok(Some(facts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::model::TaskState;

    fn entry(v: &str, r: &str, f: Vec<u8>) -> Vec<(Vec<u8>, Vec<u8>)> {
        vec![
            (b"v".to_vec(), v.into()),
            (b"r".to_vec(), r.into()),
            (b"f".to_vec(), f),
        ]
    }

    #[test]
    fn facts_read_back_as_written() {
        let facts = vec![
            Fact {
                task_id: "t-1".into(),
                context_id: Some("c".into()),
                state: TaskState::InputRequired,
                timestamp: Some("2026-12-01T10:00:00Z".into()),
            },
            Fact {
                task_id: "t-2".into(),
                context_id: None,
                state: TaskState::Completed,
                timestamp: None,
            },
        ];
        let bytes = pack(&facts);
        let wire = Facts {
            facts: facts
                .iter()
                .map(|f| FactMsg {
                    task_id: f.task_id.to_string(),
                    context_id: f.context_id.as_deref().map(str::to_owned),
                    state: f.state.as_str().to_owned(),
                    timestamp: f.timestamp.as_deref().map(str::to_owned),
                })
                .collect(),
        };
        assert_eq!(bytes, wire.encode_to_vec(), "the same bytes as the message");
        let back = read(&entry(FORMAT, "r1", bytes.clone()), "r2").unwrap();
        assert_eq!(back, Some(facts));
        assert_eq!(read(&entry(FORMAT, "r1", bytes), "r1").unwrap(), None);
    }

    #[test]
    fn an_entry_that_is_not_whole_facts_is_none() {
        let one = |state: &str, task: &str| {
            Facts {
                facts: vec![FactMsg {
                    task_id: task.into(),
                    context_id: None,
                    state: state.into(),
                    timestamp: None,
                }],
            }
            .encode_to_vec()
        };
        assert!(read(&entry(FORMAT, "a", one("working", "t")), "b").is_ok());
        assert!(read(&entry("1", "a", one("working", "t")), "b").is_err());
        assert!(read(&entry(FORMAT, "a", one("TASK_STATE_WORKING", "t")), "b").is_err());
        assert!(read(&entry(FORMAT, "a", one("working", "")), "b").is_err());
        let mut cut = one("working", "t");
        cut.truncate(cut.len() - 2);
        assert!(
            read(&entry(FORMAT, "a", cut), "b").is_err(),
            "a half-read fact"
        );
        let mut twice = entry(FORMAT, "a", one("working", "t"));
        twice.push((b"r".to_vec(), b"b".to_vec()));
        assert!(read(&twice, "b").is_err());
        assert!(read(&entry(FORMAT, "a", one("working", "t"))[..2], "b").is_err());
    }
}
