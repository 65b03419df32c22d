//! Per-artifact tracker of one stream: OPEN → COMPLETE | ABANDONED, with the
//! artifacts a Task snapshot lists counted as known (not open).

use std::collections::HashMap;

use super::short::ShortStr;

/// Most artifacts tracked per stream; past it the tracker stops judging
/// (a hostile upstream cannot grow it without bound).
pub(crate) const MAX_ARTIFACTS: usize = 4096;

/// Where one artifact stands on this stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArtifactState {
    /// Listed by a Task snapshot; no chunk of it seen on this stream.
    Known,
    /// Chunks came, `lastChunk:true` has not.
    Open,
    /// `lastChunk:true` came.
    Complete,
    /// The task turned terminal while the artifact was open.
    Abandoned,
}

/// What an artifact update means for its artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Update {
    Fine,
    /// `append:true` for an artifact not opened on this stream.
    AppendToUnknown,
    /// An update after the artifact's `lastChunk:true` on this stream.
    Sealed,
}

/// Artifacts kept in a list searched in order before any go to a map: a
/// stream has one or a few, and comparing a short id with each costs less
/// than hashing it (std's keyed SipHash) for every chunk.
const LISTED: usize = 8;

/// The artifacts of one stream: the first `LISTED` in a list, the rest in a
/// map (ids come from peers: hashed with std's keyed hasher). An id over
/// `max_id` bytes is kept as its digest, so the tracker holds at most
/// `MAX_ARTIFACTS` × (`max_id` + ~100) bytes whatever the agent sends.
#[derive(Debug)]
pub(crate) struct Artifacts {
    list: Vec<(ShortStr, ArtifactState)>,
    map: HashMap<ShortStr, ArtifactState>,
    /// More than `MAX_ARTIFACTS` ids came: findings are no longer certain.
    overflowed: bool,
    max_id: usize,
}

impl Default for Artifacts {
    fn default() -> Self {
        Artifacts::new(super::short::DEFAULT_MAX_ID_BYTES)
    }
}

// === impl Artifacts ===

impl Artifacts {
    /// An empty tracker keeping ids over `max_id` bytes as their digest.
    pub(crate) fn new(max_id: usize) -> Artifacts {
        Artifacts {
            list: Vec::new(),
            map: HashMap::new(),
            overflowed: false,
            max_id,
        }
    }

    /// True when the tracker gave up (too many artifacts).
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// The state of `id`, if tracked.
    #[cfg(test)]
    pub(crate) fn state(&self, id: &str) -> Option<ArtifactState> {
        let list = self.list.iter().find(|(k, _)| k.is(id)).map(|(_, st)| *st);
        list.or_else(|| self.map.get(&ShortStr::bounded(id, self.max_id)).copied())
    }

    /// Where `id` stands, to be changed in place.
    fn get_mut(&mut self, id: &str) -> Option<&mut ArtifactState> {
        match self.list.iter_mut().find(|(k, _)| k.is(id)) {
            Some((_, st)) => Some(st),
            None if self.map.is_empty() => None,
            None => self.map.get_mut(&ShortStr::bounded(id, self.max_id)),
        }
    }

    /// A Task snapshot lists `id`: it exists, so appending to it is legal; an
    /// artifact already being streamed keeps its state.
    pub(crate) fn know(&mut self, id: &str) {
        if self.get_mut(id).is_none() {
            self.add(id, ArtifactState::Known);
        }
    }

    /// An artifact update: what it means for the artifact. A non-append
    /// update replaces the artifact; `lastChunk` completes it; an update to
    /// a completed artifact leaves it complete (it was sealed).
    pub(crate) fn update(&mut self, id: &str, append: bool, last_chunk: bool) -> Update {
        let next = if last_chunk {
            ArtifactState::Complete
        } else {
            ArtifactState::Open
        };
        match self.get_mut(id) {
            Some(st) if *st == ArtifactState::Complete => Update::Sealed,
            Some(st) => {
                *st = next;
                Update::Fine
            }
            None => {
                self.add(id, next);
                if append && !self.overflowed {
                    Update::AppendToUnknown
                } else {
                    Update::Fine
                }
            }
        }
    }

    /// The task turned terminal: every open artifact becomes abandoned.
    /// Returns their ids, sorted (empty when none, without allocating).
    pub(crate) fn close(&mut self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let listed = self.list.iter_mut().map(|(id, st)| (&*id, st));
        for (id, st) in listed.chain(self.map.iter_mut()) {
            if *st == ArtifactState::Open {
                *st = ArtifactState::Abandoned;
                out.push(id.as_str());
            }
        }
        out.sort_unstable();
        out
    }

    fn add(&mut self, id: &str, st: ArtifactState) {
        if self.list.len() < LISTED {
            self.list.push((ShortStr::bounded(id, self.max_id), st));
        } else if self.list.len() + self.map.len() >= MAX_ARTIFACTS {
            self.overflowed = true;
        } else {
            self.map.insert(ShortStr::bounded(id, self.max_id), st);
        }
    }
}

#[cfg(test)]
mod tests;
