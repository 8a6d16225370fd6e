//! In-memory ordered indexes (primary key, unique, plain) pointing at every
//! heap row version; visibility is decided on the heap. Rebuilt from the heap
//! at start-up (`Heap::scan_all`).
//!
//! An index maps order-preserving encoded key bytes (the SQL layer encodes
//! keys so that byte order is value order) to the tids of every row version
//! carrying that key — live, dead or not yet committed. Uniqueness is
//! enforced by the SQL layer: it looks the key up and asks the heap
//! (`Heap::fetch_dirty`) whether any of those versions is live or in
//! progress; the `unique` flag is recorded here for it.
//!
//! ## Structure and locking
//!
//! One `parking_lot::RwLock<BTreeMap<Key, Tids>>`. A `Key` keeps the
//! first 15 key bytes and a length byte inline in the tree node (24 bytes,
//! compared as one `u128`), so a point lookup on an integer key compares
//! integers down the tree instead of calling `memcmp` through a pointer per
//! comparison (a range scan's bounds too, when they fit inline). A point
//! lookup takes the read lock, copies the (usually one or two) tids onto the stack
//! and releases it before calling back — callers routinely insert into the
//! same index from inside the callback (an UPDATE found through its primary
//! key adds the new version's entry), which would deadlock otherwise. Range
//! scans copy up to [`RANGE_BATCH`] entries at a time the same way and
//! resume after the last key seen, so a concurrent insert never waits for a
//! long scan and never deadlocks with it. Point lookups allocate nothing
//! unless a key has more than 8 versions.
//!
//! A lookup's cost is cache misses down the tree, not lock contention (one
//! and two threads cost the same; `throughput::lookup_throughput`, an
//! ignored test, measures it). With boxed keys, `memcmp` through a pointer
//! is a large share of the server's CPU in pgbench select-only, hence the
//! inline keys. The map is not sharded: range scans need the order.
//!
//! ## Point map (unique indexes)
//!
//! Down a tree of a million keys a point lookup misses the cache at
//! nearly every level (about 0.9 µs); a hash table misses about twice. A
//! UNIQUE or PRIMARY KEY index, whose lookups are almost all by whole
//! key, therefore also keeps a [`PointMap`]: the inline head of every
//! short key (≤ [`KEY_INLINE`] bytes) → its one version, or
//! [`SEVERAL`] while the key has more than one (an updated row whose old
//! version is not pruned yet: the lookup then reads the tree). Invariant,
//! kept under the same write lock by every change of the tree: a short
//! key is in the point map exactly when it is in the tree, with its one
//! version when it has one. So a short key absent from the point map is
//! absent from the index, and a lookup never descends the tree for it.
//! Long keys and non-unique indexes use the tree alone. The map is a
//! linear-probing table of 24-byte slots on huge pages ([`PointMap`]),
//! at most three quarters full: 1,000,000 keys take 2^21 slots, 48 MiB,
//! beside the tree's ~76 MiB (its values are 16 bytes: a key's rare list
//! of versions is boxed). The price is that memory and one hash update per
//! change of the index. Measured by `throughput::lookup_throughput` over
//! 1,000,000 keys, two threads: 730 ns per lookup down the tree, 350 ns
//! through `std`'s `HashMap` (its control bytes and slots are two misses),
//! 250 ns through this table.
//! The lock is a leaf: nothing else is acquired while it is held.

use std::collections::{btree_map, BTreeMap};
use std::ops::{Bound, ControlFlow};

use parking_lot::RwLock;

use crate::hugemem::HugeSlice;

use pgtypes::ItemPointer;

/// Entries copied per lock acquisition in a range scan.
pub const RANGE_BATCH: usize = 256;

/// The versions under one key (almost always one). 16 bytes: the rare
/// list is boxed so that the tree's nodes stay small (a `Vec` inline
/// would make it 32).
#[derive(Clone, Debug)]
enum Tids {
    One(ItemPointer),
    #[allow(clippy::box_collection)]
    Many(Box<Vec<ItemPointer>>),
}

impl Tids {
    fn as_slice(&self) -> &[ItemPointer] {
        match self {
            Tids::One(t) => std::slice::from_ref(t),
            Tids::Many(v) => v,
        }
    }
}

/// Key bytes kept inside the tree node.
const KEY_INLINE: usize = 15;

/// A key as the map stores it, 24 bytes: its first [`KEY_INLINE`] bytes
/// zero-padded plus a length byte (the length, or 16 for "longer"), read as
/// one big-endian `u128`, and for a longer key all its bytes boxed. A
/// comparison reads the node being searched instead of chasing a pointer to
/// a separate allocation, and is one integer compare unless two long keys
/// share their first 15 bytes.
///
/// The order is exactly the byte order of the keys (what `Borrow<[u8]>`
/// requires): if the padded bytes differ at `i`, either both keys have a
/// byte there, or the shorter one ended before `i` and is a prefix of the
/// other, whose byte `i` is non-zero — shorter first, as in byte order. If
/// the padded bytes are equal, one key is a prefix of the other (padding
/// is zero), so the length byte orders them — a long key's 16 after any
/// short key's length. Only two long keys fall back to comparing bytes.
#[derive(Clone)]
struct Key {
    head: [u8; KEY_INLINE + 1],
    long: Option<Box<Box<[u8]>>>,
}

impl Key {
    /// A key for `bytes`; `None` when it is too long to fit inline (the
    /// caller then compares by slice instead of allocating).
    fn short(bytes: &[u8]) -> Option<Key> {
        if bytes.len() > KEY_INLINE {
            return None;
        }
        let mut head = [0u8; KEY_INLINE + 1];
        head[..bytes.len()].copy_from_slice(bytes);
        head[KEY_INLINE] = bytes.len() as u8;
        Some(Key { head, long: None })
    }

    /// A key for `bytes` of any length.
    fn new(bytes: &[u8]) -> Key {
        Key::short(bytes).unwrap_or_else(|| {
            let mut head = [0u8; KEY_INLINE + 1];
            head[..KEY_INLINE].copy_from_slice(&bytes[..KEY_INLINE]);
            head[KEY_INLINE] = KEY_INLINE as u8 + 1;
            Key {
                head,
                long: Some(Box::new(bytes.into())),
            }
        })
    }

    fn as_slice(&self) -> &[u8] {
        match &self.long {
            Some(b) => b,
            None => &self.head[..usize::from(self.head[KEY_INLINE]).min(KEY_INLINE)],
        }
    }
}

impl std::borrow::Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Ord for Key {
    #[inline]
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        let (a, b) = (
            u128::from_be_bytes(self.head),
            u128::from_be_bytes(other.head),
        );
        if a != b {
            return a.cmp(&b);
        }
        match (&self.long, &other.long) {
            (Some(x), Some(y)) => x[..].cmp(&y[..]),
            // Equal heads and length bytes: both short and equal.
            _ => std::cmp::Ordering::Equal,
        }
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Key {}

/// A short key's inline head (bytes and length byte) as two words: the
/// point map's key. Distinct short keys have distinct heads (see [`Key`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Head(u64, u64);

impl Head {
    fn of(key: &Key) -> Head {
        let (a, b) = key.head.split_at(8);
        // Infallible: the head is 16 bytes.
        let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().unwrap_or([0; 8]));
        Head(word(a), word(b))
    }
}

/// The point map: a linear-probing hash table of (head, value) slots on
/// huge pages ([`crate::hugemem`]), so that a lookup usually touches one
/// cache line (a key and its value side by side: `std`'s map keeps its
/// control bytes apart, a second miss) and no TLB miss. Deletion shifts
/// the following run back (no tombstones). The hash is a folded multiply
/// with per-process random seeds (from std's `RandomState`), so keys
/// cannot be chosen to collide without knowing them.
struct PointMap {
    slots: HugeSlice<Slot>,
    /// `slots.len() - 1` (a power of two minus one).
    mask: usize,
    len: usize,
    seeds: [u64; 2],
}

/// One slot; `v == EMPTY` marks a free one.
#[derive(Clone, Copy)]
struct Slot {
    k: Head,
    v: u64,
}

/// A free slot's value (never a packed tid, nor [`SEVERAL`]).
const EMPTY: u64 = u64::MAX - 1;

const FREE: Slot = Slot {
    k: Head(0, 0),
    v: EMPTY,
};

fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

impl PointMap {
    fn new() -> PointMap {
        use std::hash::BuildHasher;
        let r = std::hash::RandomState::new();
        PointMap::with_slots(16, [r.hash_one(1u64), r.hash_one(2u64)])
    }

    fn with_slots(n: usize, seeds: [u64; 2]) -> PointMap {
        PointMap {
            slots: HugeSlice::from_fn(n, |_| FREE),
            mask: n - 1,
            len: 0,
            seeds,
        }
    }

    fn home(&self, k: Head) -> usize {
        fold_mul(k.0 ^ self.seeds[0], k.1 ^ self.seeds[1]) as usize & self.mask
    }

    /// The slot holding `k`, or the free slot ending its probe run.
    fn find(&self, k: Head) -> usize {
        let mut i = self.home(k);
        loop {
            let s = &self.slots[i];
            if s.v == EMPTY || s.k == k {
                return i;
            }
            i = (i + 1) & self.mask;
        }
    }

    fn get(&self, k: &Head) -> Option<u64> {
        let s = &self.slots[self.find(*k)];
        (s.v != EMPTY).then_some(s.v)
    }

    /// Room for `additional` more keys at most three quarters full.
    fn reserve(&mut self, additional: usize) {
        let want = (self.len + additional).saturating_mul(4) / 3 + 1;
        if want <= self.slots.len() {
            return;
        }
        let mut grown = PointMap::with_slots(want.next_power_of_two(), self.seeds);
        for s in self.slots.iter().filter(|s| s.v != EMPTY) {
            let i = grown.find(s.k);
            grown.slots[i] = *s;
        }
        grown.len = self.len;
        *self = grown;
    }

    fn insert(&mut self, k: Head, v: u64) {
        self.reserve(1);
        let i = self.find(k);
        if self.slots[i].v == EMPTY {
            self.len += 1;
        }
        self.slots[i] = Slot { k, v };
    }

    fn remove(&mut self, k: &Head) {
        let mut hole = self.find(*k);
        if self.slots[hole].v == EMPTY {
            return;
        }
        self.len -= 1;
        // Move back each later entry of the run whose home is not between
        // the hole and itself (cyclically), so every entry stays reachable
        // from its home without crossing a free slot.
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let s = self.slots[j];
            if s.v == EMPTY {
                break;
            }
            let home = self.home(s.k);
            let stays = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !stays {
                self.slots[hole] = s;
                hole = j;
            }
        }
        self.slots[hole] = FREE;
    }
}

/// The point map's value for a key with more than one version.
const SEVERAL: u64 = u64::MAX;

/// A tid packed into a point-map value (48 bits: never [`SEVERAL`]).
fn pack(t: ItemPointer) -> u64 {
    (u64::from(t.block.0) << 16) | u64::from(t.offset)
}

fn unpack(v: u64) -> ItemPointer {
    ItemPointer {
        block: pgtypes::BlockNumber((v >> 16) as u32),
        offset: v as u16,
    }
}

/// The point-map value for a key's versions.
fn point_value(tids: &Tids) -> u64 {
    match tids {
        Tids::One(t) => pack(*t),
        Tids::Many(_) => SEVERAL,
    }
}

#[derive(Default)]
struct Inner {
    map: BTreeMap<Key, Tids>,
    /// Unique indexes only (module docs, "Point map").
    point: Option<PointMap>,
    entries: usize,
}

impl Inner {
    /// Records in the point map (if any) what the tree now gives the
    /// short key `key`: `Some` point-map value, or `None` when it is gone.
    fn set_point(&mut self, key: &[u8], value: Option<u64>) {
        let (Some(p), Some(k)) = (self.point.as_mut(), Key::short(key)) else {
            return;
        };
        match value {
            Some(v) => p.insert(Head::of(&k), v),
            None => p.remove(&Head::of(&k)),
        }
    }

    /// The versions under `key`: through an inline probe key (integer
    /// comparisons) when it is short, by slice otherwise.
    fn get(&self, key: &[u8]) -> Option<&Tids> {
        match Key::short(key) {
            Some(k) => self.map.get(&k),
            None => self.map.get(key),
        }
    }

    fn get_mut(&mut self, key: &[u8]) -> Option<&mut Tids> {
        match Key::short(key) {
            Some(k) => self.map.get_mut(&k),
            None => self.map.get_mut(key),
        }
    }

    /// The entries in `lo..hi` (per the bounds; not inverted, see
    /// [`empty_range`]): through inline probe keys when both bounds are
    /// short, so the descents compare integers, by slice otherwise (the
    /// two orders are the same, see [`Key`]).
    fn range(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> btree_map::Range<'_, Key, Tids> {
        fn inline(b: Bound<&[u8]>) -> Option<Bound<Key>> {
            Some(match b {
                Bound::Included(k) => Bound::Included(Key::short(k)?),
                Bound::Excluded(k) => Bound::Excluded(Key::short(k)?),
                Bound::Unbounded => Bound::Unbounded,
            })
        }
        match (inline(lo), inline(hi)) {
            (Some(l), Some(h)) => self.map.range((l, h)),
            _ => self.map.range::<[u8], _>((lo, hi)),
        }
    }
}

/// One index: order-preserving encoded key bytes → row versions.
pub struct Index {
    unique: bool,
    inner: RwLock<Inner>,
}

/// Stack storage for a lookup's tids.
struct TidBuf {
    inline: [ItemPointer; 8],
    n: usize,
    spill: Vec<ItemPointer>,
}

impl TidBuf {
    fn new() -> TidBuf {
        TidBuf {
            inline: [ItemPointer::default(); 8],
            n: 0,
            spill: Vec::new(),
        }
    }
    fn fill(&mut self, tids: &[ItemPointer]) {
        if tids.len() <= self.inline.len() {
            self.inline[..tids.len()].copy_from_slice(tids);
            self.n = tids.len();
        } else {
            self.spill.extend_from_slice(tids);
        }
    }
    fn as_slice(&self) -> &[ItemPointer] {
        if self.spill.is_empty() {
            &self.inline[..self.n]
        } else {
            &self.spill
        }
    }
}

/// True if `(lo, hi)` selects nothing — checked first because
/// `BTreeMap::range` panics on inverted or empty-excluded bounds.
fn empty_range(lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
    match (lo, hi) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b))
        | (Bound::Excluded(a), Bound::Excluded(b)) => a >= b,
        _ => false,
    }
}

impl Index {
    /// An empty index.
    pub fn new(unique: bool) -> Index {
        Index {
            unique,
            inner: RwLock::new(Inner {
                point: unique.then(PointMap::new),
                ..Inner::default()
            }),
        }
    }

    /// Declared UNIQUE / PRIMARY KEY.
    pub fn is_unique(&self) -> bool {
        self.unique
    }

    /// Adds an entry (duplicates of (key, tid) are ignored).
    pub fn insert(&self, key: &[u8], tid: ItemPointer) {
        use std::collections::btree_map::Entry;
        let mut g = self.inner.write();
        let g = &mut *g;
        // One descent of the tree (a lookup then an insert would be two, and
        // key comparisons dominate an index build); the key is built up
        // front, which a new key needs anyway.
        // The point-map value when this insert changes it.
        let (added, point) = match g.map.entry(Key::new(key)) {
            Entry::Vacant(v) => {
                v.insert(Tids::One(tid));
                (true, Some(pack(tid)))
            }
            Entry::Occupied(mut o) => match o.get_mut() {
                Tids::One(t) if *t == tid => (false, None),
                slot @ Tids::One(_) => {
                    let Tids::One(t) = *slot else { return };
                    *slot = Tids::Many(Box::new(vec![t, tid]));
                    (true, Some(SEVERAL))
                }
                Tids::Many(v) => {
                    if v.contains(&tid) {
                        (false, None)
                    } else {
                        v.push(tid);
                        (true, None)
                    }
                }
            },
        };
        if point.is_some() {
            g.set_point(key, point);
        }
        if added {
            g.entries += 1;
        }
    }

    /// Loads many entries at once, as an index build does: `entries` must be
    /// sorted (by key, then tid). Into an empty index the tree is built
    /// bottom-up from the sorted run (`BTreeMap`'s bulk build: no descent
    /// and no key comparison per entry beyond grouping equal keys); if
    /// anything was inserted meanwhile, the entries go in one by one.
    pub fn load_sorted(&self, entries: Vec<(Vec<u8>, ItemPointer)>) {
        let mut g = self.inner.write();
        if !g.map.is_empty() {
            drop(g);
            for (k, tid) in entries {
                self.insert(&k, tid);
            }
            return;
        }
        let mut added = 0usize;
        let mut grouped: Vec<(Key, Tids)> = Vec::with_capacity(entries.len());
        for (k, tid) in entries {
            match grouped.last_mut() {
                Some((last, tids)) if last.as_slice() == k.as_slice() => match tids {
                    Tids::One(t) if *t == tid => continue,
                    Tids::One(t) => *tids = Tids::Many(Box::new(vec![*t, tid])),
                    Tids::Many(v) => {
                        if v.last() == Some(&tid) {
                            continue;
                        }
                        v.push(tid);
                    }
                },
                _ => grouped.push((Key::new(&k), Tids::One(tid))),
            }
            added += 1;
        }
        if let Some(p) = g.point.as_mut() {
            p.reserve(grouped.len());
            for (k, tids) in &grouped {
                if k.long.is_none() {
                    p.insert(Head::of(k), point_value(tids));
                }
            }
        }
        g.map = grouped.into_iter().collect();
        g.entries = added;
    }

    /// Removes the entry (key, tid) if present.
    pub fn remove(&self, key: &[u8], tid: ItemPointer) {
        let mut g = self.inner.write();
        // `one`: the key's single version left after removing from several.
        let (removed, now_empty, one) = match g.get_mut(key) {
            Some(Tids::One(t)) => (*t == tid, *t == tid, None),
            Some(slot @ Tids::Many(_)) => {
                let Tids::Many(v) = slot else { return };
                let before = v.len();
                v.retain(|t| *t != tid);
                let removed = v.len() != before;
                let one = (v.len() == 1).then(|| v[0]);
                if let Some(t) = one {
                    *slot = Tids::One(t);
                }
                (removed, false, one)
            }
            None => (false, false, None),
        };
        if now_empty {
            g.map.remove(key);
        }
        if now_empty {
            g.set_point(key, None);
        } else if let Some(t) = one {
            g.set_point(key, Some(pack(t)));
        }
        if removed {
            g.entries -= 1;
        }
    }

    /// Calls `f` for each tid under exactly `key` (with no lock held, so `f`
    /// may modify this index).
    pub fn lookup(&self, key: &[u8], f: &mut dyn FnMut(ItemPointer)) {
        let mut buf = TidBuf::new();
        {
            let g = self.inner.read();
            if let (Some(p), Some(k)) = (g.point.as_ref(), Key::short(key)) {
                match p.get(&Head::of(&k)) {
                    // Absent from the point map: absent from the index.
                    None => return,
                    Some(SEVERAL) => {}
                    Some(v) => {
                        drop(g);
                        f(unpack(v));
                        return;
                    }
                }
            }
            match g.get(key) {
                Some(tids) => buf.fill(tids.as_slice()),
                None => return,
            }
        }
        for &t in buf.as_slice() {
            f(t);
        }
    }

    /// Calls `f(key, tid)` for every entry with `lo <= key <= hi` (per the
    /// bounds), in key order, until it returns `Break`. No lock is held
    /// while `f` runs.
    pub fn range(
        &self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        f: &mut dyn FnMut(&[u8], ItemPointer) -> ControlFlow<()>,
    ) {
        self.range_dir(lo, hi, false, f)
    }

    /// Appends to `out` the versions of the keys in `lo..hi`, in key order,
    /// whole keys at a time, stopping once `out` holds at least `max`;
    /// returns the last key taken when more keys may follow (the next call
    /// starts after it), None when the range is done. One read lock, no
    /// callback: an index scan's batch (`sql::executor::scan`).
    pub fn collect_range(
        &self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        max: usize,
        out: &mut Vec<ItemPointer>,
    ) -> Option<Vec<u8>> {
        if empty_range(lo, hi) {
            return None;
        }
        let g = self.inner.read();
        let mut it = g.range(lo, hi).peekable();
        while let Some((k, v)) = it.next() {
            out.extend_from_slice(v.as_slice());
            if out.len() >= max {
                return it.peek().map(|_| k.as_slice().to_vec());
            }
        }
        None
    }

    /// Like [`Index::range`] in descending key order.
    pub fn range_rev(
        &self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        f: &mut dyn FnMut(&[u8], ItemPointer) -> ControlFlow<()>,
    ) {
        self.range_dir(lo, hi, true, f)
    }

    fn range_dir(
        &self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        rev: bool,
        f: &mut dyn FnMut(&[u8], ItemPointer) -> ControlFlow<()>,
    ) {
        // The resume point: the last key delivered (excluded next time).
        let mut cursor: Option<Vec<u8>> = None;
        let mut keys: Vec<u8> = Vec::new();
        let mut batch: Vec<(usize, usize, ItemPointer)> = Vec::new();
        loop {
            keys.clear();
            batch.clear();
            let (lo_b, hi_b) = match (&cursor, rev) {
                (None, _) => (lo, hi),
                (Some(c), false) => (Bound::Excluded(c.as_slice()), hi),
                (Some(c), true) => (lo, Bound::Excluded(c.as_slice())),
            };
            if empty_range(lo_b, hi_b) {
                return;
            }
            let more = {
                let g = self.inner.read();
                let it = g.range(lo_b, hi_b);
                let mut push = |k: &Key, v: &Tids| {
                    let k = k.as_slice();
                    let s = keys.len();
                    keys.extend_from_slice(k);
                    for &t in v.as_slice() {
                        batch.push((s, keys.len(), t));
                    }
                    batch.len() >= RANGE_BATCH
                };
                let mut full = false;
                if rev {
                    for (k, v) in it.rev() {
                        if push(k, v) {
                            full = true;
                            break;
                        }
                    }
                } else {
                    for (k, v) in it {
                        if push(k, v) {
                            full = true;
                            break;
                        }
                    }
                }
                full
            };
            for &(s, e, t) in &batch {
                if let ControlFlow::Break(()) = f(&keys[s..e], t) {
                    return;
                }
            }
            match batch.last() {
                Some(&(s, e, _)) if more => cursor = Some(keys[s..e].to_vec()),
                _ => return,
            }
        }
    }

    /// Removes every entry.
    pub fn clear(&self) {
        let mut g = self.inner.write();
        g.map.clear();
        if let Some(p) = g.point.as_mut() {
            *p = PointMap::new();
        }
        g.entries = 0;
    }

    /// Number of (key, tid) entries.
    pub fn len(&self) -> usize {
        self.inner.read().entries
    }

    /// True if there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of distinct keys.
    pub fn key_count(&self) -> usize {
        self.inner.read().map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgtypes::BlockNumber;
    use std::sync::Arc;

    fn tid(b: u32, o: u16) -> ItemPointer {
        ItemPointer {
            block: BlockNumber(b),
            offset: o,
        }
    }

    fn all_entries(ix: &Index) -> Vec<(Vec<u8>, ItemPointer)> {
        let mut out = Vec::new();
        ix.range(Bound::Unbounded, Bound::Unbounded, &mut |k, t| {
            out.push((k.to_vec(), t));
            ControlFlow::Continue(())
        });
        out
    }

    /// An index holding `keys` (the i-th at tid (i, 1)), and the keys
    /// sorted without duplicates.
    fn indexed(keys: &[Vec<u8>]) -> (Index, Vec<Vec<u8>>) {
        let ix = Index::new(false);
        for (i, k) in keys.iter().enumerate() {
            ix.insert(k, tid(i as u32, 1));
        }
        let mut sorted = keys.to_vec();
        sorted.sort();
        sorted.dedup();
        (ix, sorted)
    }

    /// Keys around the inline length, with zero bytes and prefixes: the
    /// map's order must be exactly byte order (range scans and `Borrow`
    /// depend on it).
    fn tricky_keys() -> Vec<Vec<u8>> {
        let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
        for len in [1usize, 2, 8, 9, 14, 15, 16, 17, 18, 24, 33] {
            for fill in [0u8, 1, 0x7F, 0xFF] {
                let mut k = vec![fill; len];
                keys.push(k.clone());
                if let Some(last) = k.last_mut() {
                    *last = fill.wrapping_add(1);
                }
                keys.push(k.clone());
                k.push(0);
                keys.push(k);
            }
        }
        keys
    }

    #[test]
    fn point_map_agrees_with_a_hash_map() {
        // Many keys over few slots: long runs, wrap-around at the end of
        // the table, removals shifting runs back, growth.
        let mut m = PointMap::new();
        let mut model = std::collections::HashMap::new();
        let mut x = 7u64;
        for step in 0..60_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = Head((x >> 40) % 500, 3);
            if (x >> 20).is_multiple_of(3) {
                m.remove(&k);
                model.remove(&(k.0, k.1));
            } else {
                m.insert(k, step);
                model.insert((k.0, k.1), step);
            }
            if step.is_multiple_of(997) {
                for i in 0..500 {
                    assert_eq!(m.get(&Head(i, 3)), model.get(&(i, 3)).copied(), "key {i}");
                }
            }
        }
        assert_eq!(m.len, model.len());
    }

    #[test]
    fn tids_are_small() {
        assert_eq!(std::mem::size_of::<Tids>(), 16);
    }

    #[test]
    fn key_is_small() {
        // Three words: a node's keys span few cache lines.
        assert_eq!(std::mem::size_of::<Key>(), 24);
    }

    #[test]
    fn key_order_is_byte_order() {
        let keys = tricky_keys();
        for a in &keys {
            for b in &keys {
                assert_eq!(
                    Key::new(a).cmp(&Key::new(b)),
                    a.as_slice().cmp(b.as_slice()),
                    "{a:?} vs {b:?}"
                );
            }
        }
        let (ix, sorted) = indexed(&keys);
        let got: Vec<Vec<u8>> = all_entries(&ix).into_iter().map(|(k, _)| k).collect();
        let mut got_keys = got.clone();
        got_keys.dedup();
        assert_eq!(got_keys, sorted);
        for k in &keys {
            let mut n = 0;
            ix.lookup(k, &mut |_| n += 1);
            assert!(n >= 1, "{k:?} found");
        }
    }

    proptest::proptest! {
        #[test]
        fn key_order_matches_bytes(
            // A small alphabet, so equal heads and prefixes are common.
            a in proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 0xFF]), 0..40),
            b in proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 0xFF]), 0..40),
        ) {
            proptest::prop_assert_eq!(Key::new(&a).cmp(&Key::new(&b)), a.cmp(&b));
            let ka = Key::new(&a);
            proptest::prop_assert_eq!(ka.as_slice(), a.as_slice());
        }
    }

    #[test]
    fn load_sorted_matches_one_by_one_inserts() {
        // Duplicate keys, a repeated (key, tid), keys that prefix others.
        let mut entries: Vec<(Vec<u8>, ItemPointer)> = Vec::new();
        for i in 0..500u32 {
            let k = format!("k{}", i % 97).into_bytes();
            entries.push((k, tid(i / 7, (i % 7) as u16 + 1)));
        }
        entries.push((b"k1".to_vec(), tid(0, 2)));
        entries.push((b"k1".to_vec(), tid(0, 2)));
        entries.push((b"k".to_vec(), tid(9, 9)));
        let one = Index::new(false);
        for (k, t) in &entries {
            one.insert(k, *t);
        }
        let mut sorted = entries.clone();
        sorted.sort_unstable();
        let bulk = Index::new(false);
        bulk.load_sorted(sorted.clone());
        assert_eq!(bulk.len(), one.len());
        assert_eq!(bulk.key_count(), one.key_count());
        assert_eq!(all_entries(&bulk), all_entries(&one));
        // Into a non-empty index the entries are inserted one by one.
        let busy = Index::new(false);
        busy.insert(b"k5", tid(100, 1));
        busy.load_sorted(sorted);
        assert_eq!(busy.len(), one.len() + 1);
    }

    fn collect(
        ix: &Index,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        rev: bool,
    ) -> Vec<(Vec<u8>, ItemPointer)> {
        let mut out = Vec::new();
        let mut f = |k: &[u8], t| {
            out.push((k.to_vec(), t));
            ControlFlow::Continue(())
        };
        if rev {
            ix.range_rev(lo, hi, &mut f)
        } else {
            ix.range(lo, hi, &mut f)
        }
        out
    }

    /// What `lookup` returns for `key`, sorted.
    fn looked_up(ix: &Index, key: &[u8]) -> Vec<ItemPointer> {
        let mut got = Vec::new();
        ix.lookup(key, &mut |t| got.push(t));
        got.sort_by_key(|t| (t.block.0, t.offset));
        got
    }

    use proptest::strategy::Strategy;

    /// One change of an index in `point_lookups_match_the_tree`.
    #[derive(Clone, Debug)]
    enum Op {
        Insert(usize, u16),
        Remove(usize, u16),
        Clear,
    }

    proptest::proptest! {
        /// Through any sequence of inserts, removes, bulk loads and
        /// clears, a unique index's lookups (through its point map) agree
        /// with a non-unique index's (the tree alone) and with a model,
        /// for short and long keys, keys with several versions and keys
        /// never inserted.
        #[test]
        fn point_lookups_match_the_tree(
            load in proptest::collection::vec((0usize..40, 1u16..4), 0..30),
            ops in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => (0usize..40, 1u16..4).prop_map(|(k, o)| Op::Insert(k, o)),
                    6 => (0usize..40, 1u16..4).prop_map(|(k, o)| Op::Remove(k, o)),
                    1 => proptest::strategy::Just(Op::Clear),
                ],
                0..120,
            ),
        ) {
            use proptest::prop_assert_eq;
            let universe = tricky_keys();
            let key = |i: usize| universe[i % universe.len()].clone();
            let point = Index::new(true);
            let tree = Index::new(false);
            let mut model: BTreeMap<Vec<u8>, Vec<ItemPointer>> = BTreeMap::new();
            let mut sorted: Vec<(Vec<u8>, ItemPointer)> =
                load.iter().map(|&(k, o)| (key(k), tid(k as u32, o))).collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0).then((a.1.block.0, a.1.offset).cmp(&(b.1.block.0, b.1.offset))));
            point.load_sorted(sorted.clone());
            tree.load_sorted(sorted.clone());
            for (k, t) in sorted {
                let v = model.entry(k).or_default();
                if !v.contains(&t) {
                    v.push(t);
                }
            }
            for op in ops {
                match op {
                    Op::Insert(k, o) => {
                        let t = tid(k as u32 % 3, o);
                        point.insert(&key(k), t);
                        tree.insert(&key(k), t);
                        let v = model.entry(key(k)).or_default();
                        if !v.contains(&t) {
                            v.push(t);
                        }
                    }
                    Op::Remove(k, o) => {
                        let t = tid(k as u32 % 3, o);
                        point.remove(&key(k), t);
                        tree.remove(&key(k), t);
                        if let Some(v) = model.get_mut(&key(k)) {
                            v.retain(|x| *x != t);
                            if v.is_empty() {
                                model.remove(&key(k));
                            }
                        }
                    }
                    Op::Clear => {
                        point.clear();
                        tree.clear();
                        model.clear();
                    }
                }
                for k in &universe {
                    let mut want = model.get(k).cloned().unwrap_or_default();
                    want.sort_by_key(|t| (t.block.0, t.offset));
                    prop_assert_eq!(&looked_up(&point, k), &want, "unique index, key {:?}", k);
                    prop_assert_eq!(&looked_up(&tree, k), &want, "tree, key {:?}", k);
                }
                prop_assert_eq!(point.len(), tree.len());
                prop_assert_eq!(point.key_count(), model.len());
            }
        }
    }

    #[test]
    fn insert_lookup_remove() {
        let ix = Index::new(true);
        assert!(ix.is_unique());
        ix.insert(b"a", tid(0, 1));
        ix.insert(b"a", tid(0, 1));
        assert_eq!(ix.len(), 1, "duplicate (key, tid) ignored");
        ix.insert(b"a", tid(0, 2));
        ix.insert(b"b", tid(1, 1));
        let mut got = Vec::new();
        ix.lookup(b"a", &mut |t| got.push(t));
        assert_eq!(got, vec![tid(0, 1), tid(0, 2)], "every version");
        ix.remove(b"a", tid(0, 1));
        ix.remove(b"a", tid(9, 9));
        got.clear();
        ix.lookup(b"a", &mut |t| got.push(t));
        assert_eq!(got, vec![tid(0, 2)]);
        ix.remove(b"a", tid(0, 2));
        got.clear();
        ix.lookup(b"a", &mut |t| got.push(t));
        assert!(got.is_empty());
        assert_eq!((ix.len(), ix.key_count()), (1, 1));
        ix.clear();
        assert!(ix.is_empty());
    }

    #[test]
    fn lookup_callback_may_insert_into_same_index() {
        let ix = Index::new(true);
        ix.insert(b"k", tid(0, 1));
        ix.lookup(b"k", &mut |t| ix.insert(b"k", tid(t.block.0 + 1, 1)));
        assert_eq!(ix.len(), 2);
        // and a range callback too
        ix.range(Bound::Unbounded, Bound::Unbounded, &mut |_, _| {
            ix.insert(b"z", tid(5, 5));
            ControlFlow::Continue(())
        });
        assert_eq!(ix.len(), 3);
    }

    /// Batches of whole keys: a key's versions never split across two.
    #[test]
    fn collect_range_cuts_at_key_boundaries() {
        let ix = Index::new(false);
        for i in 0u32..10 {
            for v in 0..3 {
                ix.insert(&i.to_be_bytes(), tid(i, v));
            }
        }
        let (lo, hi) = (0u32.to_be_bytes(), 100u32.to_be_bytes());
        let mut all = Vec::new();
        let mut from: Option<Vec<u8>> = None;
        let mut batches = 0;
        loop {
            let mut out = Vec::new();
            let start = match &from {
                None => Bound::Included(&lo[..]),
                Some(k) => Bound::Excluded(k.as_slice()),
            };
            let next = ix.collect_range(start, Bound::Excluded(&hi[..]), 4, &mut out);
            assert!(out.len() % 3 == 0, "whole keys: {out:?}");
            all.extend(out);
            batches += 1;
            match next {
                Some(k) => from = Some(k),
                None => break,
            }
        }
        assert_eq!(all.len(), 30, "every version once");
        assert_eq!(batches, 5, "two keys (six versions) a batch");
        let mut out = Vec::new();
        assert_eq!(
            ix.collect_range(
                Bound::Included(&hi[..]),
                Bound::Excluded(&lo[..]),
                4,
                &mut out
            ),
            None
        );
        assert!(out.is_empty(), "an empty range");
    }

    /// A range selects exactly the keys its bounds admit in byte order,
    /// whether the bounds are short (inline probe keys) or long (slices),
    /// over stored keys of every length around the inline limit.
    #[test]
    fn range_selects_by_byte_order_for_any_bound_length() {
        let keys = tricky_keys();
        let (ix, sorted) = indexed(&keys);
        let admits = |b: Bound<&[u8]>, k: &[u8], low: bool| match b {
            Bound::Unbounded => true,
            Bound::Included(x) => {
                if low {
                    k >= x
                } else {
                    k <= x
                }
            }
            Bound::Excluded(x) => {
                if low {
                    k > x
                } else {
                    k < x
                }
            }
        };
        let bound = |i: usize, k: &[u8]| -> Bound<Vec<u8>> {
            match i {
                0 => Bound::Included(k.to_vec()),
                1 => Bound::Excluded(k.to_vec()),
                _ => Bound::Unbounded,
            }
        };
        for a in sorted.iter().step_by(3) {
            for b in sorted.iter().step_by(5) {
                for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1), (2, 1), (0, 2)] {
                    let (lo, hi) = (bound(i, a), bound(j, b));
                    let (lo, hi) = (
                        lo.as_ref().map(|v| v.as_slice()),
                        hi.as_ref().map(|v| v.as_slice()),
                    );
                    let want: Vec<&Vec<u8>> = sorted
                        .iter()
                        .filter(|k| admits(lo, k, true) && admits(hi, k, false))
                        .collect();
                    let mut got = Vec::new();
                    let mut tids = Vec::new();
                    if ix.collect_range(lo, hi, usize::MAX, &mut tids).is_none() {
                        ix.range(lo, hi, &mut |k, _| {
                            if got.last() != Some(&k.to_vec()) {
                                got.push(k.to_vec());
                            }
                            ControlFlow::Continue(())
                        });
                    }
                    let got: Vec<&Vec<u8>> = got.iter().collect();
                    assert_eq!(got, want, "{lo:?}..{hi:?}");
                    assert_eq!(tids.len(), keys.iter().filter(|k| want.contains(k)).count());
                }
            }
        }
    }

    #[test]
    fn range_bounds_and_batches() {
        let ix = Index::new(false);
        for i in 0u32..1000 {
            ix.insert(&i.to_be_bytes(), tid(i, 1));
            if i % 3 == 0 {
                ix.insert(&i.to_be_bytes(), tid(i, 2));
            }
        }
        let k = |i: u32| i.to_be_bytes();
        let (k10, k20) = (k(10), k(20));
        let r = collect(&ix, Bound::Included(&k10), Bound::Excluded(&k20), false);
        assert_eq!(r.len(), 10 + 3, "10..20 with versions of 12, 15, 18");
        assert_eq!(r[0], (k10.to_vec(), tid(10, 1)));
        let r = collect(&ix, Bound::Excluded(&k10), Bound::Included(&k20), false);
        assert_eq!(r.first().unwrap().0, k(11).to_vec());
        assert_eq!(r.last().unwrap().0, k20.to_vec());
        let all = collect(&ix, Bound::Unbounded, Bound::Unbounded, false);
        assert_eq!(all.len(), 1000 + 334, "crosses many batches, nothing twice");
        assert!(all.windows(2).all(|w| w[0].0 <= w[1].0), "ascending");
        let all_rev = collect(&ix, Bound::Unbounded, Bound::Unbounded, true);
        assert_eq!(all_rev.len(), all.len());
        assert!(all_rev.windows(2).all(|w| w[0].0 >= w[1].0), "descending");
        // Inverted or empty bounds select nothing, no panic.
        assert!(collect(&ix, Bound::Included(&k20), Bound::Included(&k10), false).is_empty());
        assert!(collect(&ix, Bound::Excluded(&k10), Bound::Excluded(&k10), false).is_empty());
        assert_eq!(
            collect(&ix, Bound::Included(&k10), Bound::Included(&k10), false).len(),
            1
        );
        // Break stops.
        let mut n = 0;
        ix.range(Bound::Unbounded, Bound::Unbounded, &mut |_, _| {
            n += 1;
            if n == 300 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!(n, 300);
    }

    #[test]
    fn concurrent_lookups_and_inserts() {
        let ix = Arc::new(Index::new(true));
        for i in 0u32..10_000 {
            ix.insert(&i.to_be_bytes(), tid(i, 1));
        }
        let hs: Vec<_> = (0..4)
            .map(|t| {
                let ix = ix.clone();
                std::thread::spawn(move || {
                    let mut found = 0;
                    for i in 0u32..20_000 {
                        if t == 0 {
                            ix.insert(&(10_000 + i).to_be_bytes(), tid(i, 2));
                        } else {
                            ix.lookup(&(i % 10_000).to_be_bytes(), &mut |_| found += 1);
                        }
                    }
                    found
                })
            })
            .collect();
        let found: Vec<usize> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(
            found[1..].iter().all(|&f| f == 20_000),
            "every lookup found its key"
        );
        assert_eq!(ix.len(), 30_000);
    }
}

#[cfg(test)]
mod throughput {
    use super::*;

    /// This process's resident memory (VmRSS), KiB.
    fn rss_kib() -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// CPU seconds used by this process so far (utime + stime from
    /// /proc/self/stat): on a loaded machine, ops per CPU-second is a steadier
    /// measure than wall-clock throughput.
    fn cpu_secs() -> f64 {
        let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let after = s.rsplit_once(')').map(|(_, a)| a).unwrap_or("");
        let f: Vec<&str> = after.split_whitespace().collect();
        let ticks: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
            + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        ticks / 100.0
    }
    use pgtypes::BlockNumber;
    use std::sync::Arc;

    /// Rough measurement, run by hand (`HOTPAIR_INDEX_KEYS`: how many keys,
    /// 100,000 unless set; pgbench's accounts at scale 10 are 1,000,000):
    /// `cargo test --release -p storage --lib index::throughput -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn lookup_throughput() {
        let unique = std::env::var("HOTPAIR_INDEX_UNIQUE").map_or(true, |v| v != "0");
        let rss0 = rss_kib();
        let ix = Arc::new(Index::new(unique));
        let n: u32 = std::env::var("HOTPAIR_INDEX_KEYS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100_000);
        for i in 0..n {
            ix.insert(
                &(i as u64).to_be_bytes(),
                ItemPointer {
                    block: BlockNumber(i / 100),
                    offset: 1,
                },
            );
        }
        println!(
            "index of {n} keys (unique: {unique}): {} KiB resident",
            rss_kib().saturating_sub(rss0)
        );
        let per_thread = 2_000_000u32;
        let start = std::time::Instant::now();
        let cpu0 = cpu_secs();
        let threads: u32 = std::env::var("HOTPAIR_INDEX_THREADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2);
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let ix = ix.clone();
                std::thread::spawn(move || {
                    let mut x = t + 1u32;
                    let mut found = 0u64;
                    for _ in 0..per_thread {
                        x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                        ix.lookup(&((x % n) as u64).to_be_bytes(), &mut |_| found += 1);
                    }
                    found
                })
            })
            .collect();
        let found: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(found, u64::from(threads) * u64::from(per_thread));
        let cpu = cpu_secs() - cpu0;
        println!(
            "index point lookups: {:.2} M/s wall, {:.0} ns CPU per lookup, over {n} keys, {threads} threads",
            found as f64 / secs / 1e6,
            cpu * 1e9 / found as f64
        );
    }
}
