//! A fact as a Redis stream entry: `v` (format), `r` (the replica that
//! saw it), `t` (task id), `s` (state, by its metric label), and when
//! known `c` (context id) and `ts` (the agent's `status.timestamp`).

use crate::lifecycle::registry::Fact;

/// The format written in `v`; entries of another format are skipped.
pub(super) const FORMAT: &str = "1";

/// The fields of `f`'s entry, seen by `replica`.
pub(super) fn fields<'a>(f: &'a Fact, replica: &'a str) -> Vec<(&'static str, &'a str)> {
    let mut out = vec![
        ("v", FORMAT),
        ("r", replica),
        ("t", &*f.task_id),
        ("s", f.state.as_str()),
    ];
    if let Some(c) = &f.context_id {
        out.push(("c", c));
    }
    if let Some(ts) = &f.timestamp {
        out.push(("ts", ts));
    }
    out
}

/// What an entry's fields say: the replica and its fact, or why the entry
/// is not one (then nothing of it is used).
pub(super) fn read(fields: &[(Vec<u8>, Vec<u8>)]) -> Result<(String, Fact), String> {
    let (mut v, mut r, mut t, mut s, mut c, mut ts) = (None, None, None, None, None, None);
    for (name, value) in fields {
        let value = std::str::from_utf8(value).map_err(|_| "a field is not UTF-8".to_string())?;
        let slot = match name.as_slice() {
            b"v" => &mut v,
            b"r" => &mut r,
            b"t" => &mut t,
            b"s" => &mut s,
            b"c" => &mut c,
            b"ts" => &mut ts,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err("a field appears twice".to_string());
        }
    }
    if v != Some(FORMAT) {
        return Err(format!("format {:?}, not {FORMAT}", v.unwrap_or("")));
    }
    let (Some(r), Some(t), Some(s)) = (r, t, s) else {
        return Err("the replica, task or state is missing".to_string());
    };
    if t.is_empty() {
        return Err("the task id is empty".to_string());
    }
    let state = Fact::state_from_label(s).ok_or_else(|| format!("unknown state {s:?}"))?;
    let fact = Fact {
        task_id: t.into(),
        context_id: c.map(Into::into),
        state,
        timestamp: ts.map(Into::into),
    };
    Ok((r.to_string(), fact))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::model::TaskState;

    fn owned(f: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        f.iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn a_fact_reads_back_as_written() {
        let f = Fact {
            task_id: "t-1".into(),
            context_id: Some("c".into()),
            state: TaskState::InputRequired,
            timestamp: Some("2026-12-01T10:00:00Z".into()),
        };
        let (replica, back) = read(&owned(&fields(&f, "r1"))).unwrap();
        assert_eq!((replica.as_str(), back), ("r1", f.clone()));
        let bare = Fact {
            context_id: None,
            timestamp: None,
            ..f
        };
        assert_eq!(read(&owned(&fields(&bare, "r2"))).unwrap().1, bare);
    }

    #[test]
    fn a_half_fact_is_none() {
        let good = [("v", "1"), ("r", "a"), ("t", "t"), ("s", "working")];
        assert!(read(&owned(&good)).is_ok());
        for drop in 0..good.len() {
            let mut f = good.to_vec();
            f.remove(drop);
            assert!(read(&owned(&f)).is_err(), "{f:?}");
        }
        let mut twice = good.to_vec();
        twice.push(("s", "completed"));
        assert!(read(&owned(&twice)).is_err());
        let odd = [("v", "2"), ("r", "a"), ("t", "t"), ("s", "working")];
        assert!(read(&owned(&odd)).is_err());
        let state = [
            ("v", "1"),
            ("r", "a"),
            ("t", "t"),
            ("s", "TASK_STATE_WORKING"),
        ];
        assert!(read(&owned(&state)).is_err());
        let bytes = vec![(b"t".to_vec(), vec![0xff])];
        assert!(read(&bytes).is_err());
    }
}
