//! A map from task id to value in least-recently-used order: a hash index
//! into a slab of slots threaded on a doubly linked list, so lookups, touches,
//! inserts and evictions are O(1) and a touch never allocates. A slot holds
//! its key in place (`ShortStr`: no allocation for ids up to 46 bytes, and a
//! comparison reads no second block) and the key's hash: an eviction finds
//! its index entry by slot number, without hashing or reading the key
//! again.

use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

use super::short::ShortStr;

const NIL: u32 = u32::MAX;

/// Most entries an `Lru` holds (slot indexes are `u32`).
pub(crate) const MAX_LEN: usize = (u32::MAX - 1) as usize;

#[derive(Debug)]
struct Slot<V> {
    key: ShortStr,
    /// `key`'s hash under the map's (randomly keyed) hasher.
    hash: u64,
    prev: u32,
    next: u32,
    value: V,
}

/// Where an absent key goes: its hash, from the lookup that missed it
/// (an insert needs no second hashing).
#[derive(Debug)]
pub(crate) struct Vacant(u64);

/// Task id → `V`, oldest first.
#[derive(Debug)]
pub(crate) struct Lru<V> {
    /// Slot numbers, by their keys' hashes. Task ids come from peers: the
    /// hasher is std's keyed SipHash, so they cannot aim collisions.
    index: HashTable<u32>,
    hasher: RandomState,
    slots: Vec<Option<Slot<V>>>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
    /// Keys longer than this are kept as their digest (`ShortStr::bounded`).
    max_key: usize,
}

// === impl Lru ===

impl<V> Lru<V> {
    #[cfg(test)]
    pub(crate) fn new() -> Lru<V> {
        Lru::with_max_key(usize::MAX)
    }

    /// An empty map keeping keys over `max_key` bytes as their digest.
    pub(crate) fn with_max_key(max_key: usize) -> Lru<V> {
        Lru {
            index: HashTable::new(),
            hasher: RandomState::new(),
            slots: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            max_key,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// The slot holding `key`, or where it would go.
    fn find(&self, key: &str) -> Result<u32, Vacant> {
        // The entry touched last is the one asked for next, most often (a
        // stream's events name its task one after another): found by one
        // comparison, without hashing the key.
        if self.slot(self.tail).is_some_and(|s| s.key.is_in_place(key)) {
            return Ok(self.tail);
        }
        let hash = self.hasher.hash_one(key);
        let slots = &self.slots;
        let found = self.index.find(hash, |&i| {
            slots
                .get(i as usize)
                .and_then(Option::as_ref)
                .is_some_and(|s| s.hash == hash && s.key.is(key))
        });
        found.copied().ok_or(Vacant(hash))
    }

    /// The value of `key`, without touching it.
    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        let i = self.find(key).ok()?;
        self.slot(i).map(|s| &s.value)
    }

    /// The value of `key`, to change in place, without touching it.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let i = self.find(key).ok()?;
        self.slots
            .get_mut(i as usize)
            .and_then(Option::as_mut)
            .map(|s| &mut s.value)
    }

    /// The value of `key`, made the most recently used; or, when absent,
    /// where to `insert` it.
    pub(crate) fn touch(&mut self, key: &str) -> Result<&mut V, Vacant> {
        let i = self.find(key)?;
        if self.tail != i {
            self.unlink(i);
            self.link_back(i);
        }
        // The slot was just found, so it holds a value; were it empty, the
        // key would be absent.
        let Lru { slots, hasher, .. } = self;
        slots
            .get_mut(i as usize)
            .and_then(Option::as_mut)
            .map(|s| &mut s.value)
            .ok_or_else(|| Vacant(hasher.hash_one(key)))
    }

    /// Adds `key` (absent: `at` is what `touch` answered for it) as the
    /// most recently used. Returns false, storing nothing, when `MAX_LEN`
    /// is reached.
    pub(crate) fn insert(&mut self, key: &str, at: Vacant, value: V) -> bool {
        let Vacant(hash) = at;
        let slot = Slot {
            key: ShortStr::bounded(key, self.max_key),
            hash,
            prev: NIL,
            next: NIL,
            value,
        };
        let i = match self.free.pop() {
            Some(i) => i,
            None if self.slots.len() < MAX_LEN => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
            None => return false,
        };
        self.slots[i as usize] = Some(slot);
        let slots = &self.slots;
        self.index.insert_unique(hash, i, |&j| {
            slots
                .get(j as usize)
                .and_then(Option::as_ref)
                .map_or(0, |s| s.hash)
        });
        self.link_back(i);
        true
    }

    /// The least recently used entry.
    pub(crate) fn oldest(&self) -> Option<(&str, &V)> {
        self.slot(self.head).map(|s| (s.key.as_str(), &s.value))
    }

    /// Removes and returns the least recently used entry.
    pub(crate) fn pop_oldest(&mut self) -> Option<(ShortStr, V)> {
        let i = self.head;
        self.slot(i)?;
        self.unlink(i);
        let slot = self.slots.get_mut(i as usize)?.take()?;
        if let Ok(entry) = self.index.find_entry(slot.hash, |&j| j == i) {
            entry.remove();
        }
        self.free.push(i);
        Some((slot.key, slot.value))
    }

    /// Every entry, in no particular order.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&ShortStr, &mut V)> {
        self.slots
            .iter_mut()
            .flatten()
            .map(|s| (&s.key, &mut s.value))
    }

    fn slot(&self, i: u32) -> Option<&Slot<V>> {
        self.slots.get(i as usize)?.as_ref()
    }

    fn slot_mut(&mut self, i: u32) -> Option<&mut Slot<V>> {
        self.slots.get_mut(i as usize)?.as_mut()
    }

    fn unlink(&mut self, i: u32) {
        let Some((prev, next)) = self.slot(i).map(|s| (s.prev, s.next)) else {
            return;
        };
        match self.slot_mut(prev) {
            Some(p) => p.next = next,
            None => self.head = next,
        }
        match self.slot_mut(next) {
            Some(n) => n.prev = prev,
            None => self.tail = prev,
        }
    }

    fn link_back(&mut self, i: u32) {
        let tail = self.tail;
        if let Some(s) = self.slot_mut(i) {
            s.prev = tail;
            s.next = NIL;
        }
        match self.slot_mut(tail) {
            Some(t) => t.next = i,
            None => self.head = i,
        }
        self.tail = i;
    }
}

#[cfg(test)]
mod tests;
