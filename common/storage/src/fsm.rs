//! Free space map (PostgreSQL's freespace.c), kept in memory.
//!
//! For each heap block we keep one byte, the free-space *category*
//! `free_bytes / 32` (0..=255, as PostgreSQL's FSM does), in a binary max
//! tree: leaves are blocks, each inner node is the max of its children.
//! Finding a block with room is a descent from the root to the leftmost leaf
//! whose category is enough (O(log n)); recording a block's free space
//! updates one leaf and its ancestors.
//!
//! ```text
//!             [9]
//!        [9]        [4]
//!     [2]  [9]   [4]  [0]     <- leaves: blocks 0..3
//! ```
//!
//! ## Why in memory, and what is lost at restart
//!
//! The `_fsm` fork is not used: the map is rebuilt lazily. After a restart a
//! relation's map is empty; hio then targets the relation's last block (as
//! PostgreSQL does for a relation without an FSM) and every page it finds
//! full or partly full is recorded as it goes. Space inside older pages is
//! therefore only found again once something records it (an insert that
//! visits the page, or a future VACUUM). Like PostgreSQL's FSM the map is a
//! hint: hio always re-checks the page's real free space under its content
//! lock, so a stale entry costs one page visit, never correctness.
//!
//! Categories round *down* when recorded and the request rounds *up*, so a
//! block returned by [`FreeSpaceMap::search`] really had the room when it
//! was recorded.
//!
//! Locks: one `RwLock` over the relation table, one `Mutex` per relation.
//! Both are leaves (held for a tree operation, never across I/O or a content
//! lock acquisition).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use pgtypes::{BlockNumber, RelFileId};

/// Bytes per category step.
const CATEGORY_BYTES: usize = 32;

/// fsm_space_avail_to_cat: rounds down.
fn avail_to_cat(avail: usize) -> u8 {
    (avail / CATEGORY_BYTES).min(255) as u8
}

/// fsm_space_needed_to_cat: rounds up (at least 1, so "any room" is > 0);
/// `None` beyond what a category can promise (more than 255 * 32 bytes —
/// larger than any heap tuple, see bufpage::MAX_ITEM_SIZE).
fn needed_to_cat(need: usize) -> Option<u8> {
    let c = need.div_ceil(CATEGORY_BYTES).max(1);
    u8::try_from(c).ok()
}

/// The map of one relation.
#[derive(Default)]
struct RelFsm {
    /// Number of leaves (a power of two, or 0).
    cap: usize,
    /// `tree[1]` is the root; leaves are `tree[cap .. 2*cap]`.
    tree: Vec<u8>,
}

impl RelFsm {
    fn grow_to(&mut self, block: usize) {
        if block < self.cap {
            return;
        }
        let mut cap = self.cap.max(64);
        while cap <= block {
            cap *= 2;
        }
        let mut tree = vec![0u8; 2 * cap];
        if self.cap > 0 {
            tree[cap..cap + self.cap].copy_from_slice(&self.tree[self.cap..2 * self.cap]);
        }
        for i in (1..cap).rev() {
            tree[i] = tree[2 * i].max(tree[2 * i + 1]);
        }
        self.cap = cap;
        self.tree = tree;
    }

    fn set(&mut self, block: usize, cat: u8) {
        self.grow_to(block);
        let mut i = self.cap + block;
        self.tree[i] = cat;
        while i > 1 {
            i /= 2;
            let m = self.tree[2 * i].max(self.tree[2 * i + 1]);
            if self.tree[i] == m {
                break;
            }
            self.tree[i] = m;
        }
    }

    fn get(&self, block: usize) -> u8 {
        if block < self.cap {
            self.tree[self.cap + block]
        } else {
            0
        }
    }

    fn search(&self, cat: u8) -> Option<usize> {
        if self.cap == 0 || self.tree[1] < cat {
            return None;
        }
        let mut i = 1;
        while i < self.cap {
            i = if self.tree[2 * i] >= cat {
                2 * i
            } else {
                2 * i + 1
            };
        }
        Some(i - self.cap)
    }
}

/// Free space of every relation's pages.
#[derive(Default)]
pub struct FreeSpaceMap {
    rels: RwLock<HashMap<RelFileId, Arc<Mutex<RelFsm>>>>,
}

impl FreeSpaceMap {
    /// An empty map.
    pub fn new() -> FreeSpaceMap {
        FreeSpaceMap::default()
    }

    fn rel(&self, rel: RelFileId) -> Arc<Mutex<RelFsm>> {
        if let Some(r) = self.rels.read().get(&rel) {
            return r.clone();
        }
        self.rels.write().entry(rel).or_default().clone()
    }

    /// RecordPageWithFreeSpace: block `block` has `avail` bytes free.
    pub fn record(&self, rel: RelFileId, block: BlockNumber, avail: usize) {
        self.rel(rel)
            .lock()
            .set(block.0 as usize, avail_to_cat(avail));
    }

    /// GetPageWithFreeSpace: a block recorded with at least `need` bytes
    /// free (the lowest such block), if any.
    pub fn search(&self, rel: RelFileId, need: usize) -> Option<BlockNumber> {
        let r = self.rels.read().get(&rel)?.clone();
        let b = r.lock().search(needed_to_cat(need)?);
        b.map(|b| BlockNumber(b as u32))
    }

    /// RecordAndGetPageWithFreeSpace: records `old` (found too full) and
    /// searches in one lock round trip.
    pub fn record_and_search(
        &self,
        rel: RelFileId,
        old: BlockNumber,
        avail: usize,
        need: usize,
    ) -> Option<BlockNumber> {
        let r = self.rel(rel);
        let mut g = r.lock();
        g.set(old.0 as usize, avail_to_cat(avail));
        g.search(needed_to_cat(need)?)
            .map(|b| BlockNumber(b as u32))
    }

    /// The recorded free space of a block, in bytes (rounded down to the
    /// category).
    pub fn get(&self, rel: RelFileId, block: BlockNumber) -> usize {
        match self.rels.read().get(&rel) {
            Some(r) => r.lock().get(block.0 as usize) as usize * CATEGORY_BYTES,
            None => 0,
        }
    }

    /// Forgets blocks >= `nblocks` (truncate) — or the whole relation when 0.
    pub fn truncate(&self, rel: RelFileId, nblocks: u32) {
        if nblocks == 0 {
            self.rels.write().remove(&rel);
            return;
        }
        if let Some(r) = self.rels.read().get(&rel) {
            let mut g = r.lock();
            for b in nblocks as usize..g.cap {
                g.set(b, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn search_finds_lowest_block_with_room() {
        let fsm = FreeSpaceMap::new();
        let rel = RelFileId(1);
        assert_eq!(fsm.search(rel, 100), None);
        fsm.record(rel, BlockNumber(5), 50);
        fsm.record(rel, BlockNumber(3), 8000);
        fsm.record(rel, BlockNumber(1000), 4000);
        assert_eq!(fsm.search(rel, 40), Some(BlockNumber(3)));
        assert_eq!(fsm.search(rel, 8001), None);
        assert_eq!(
            fsm.record_and_search(rel, BlockNumber(3), 0, 3000),
            Some(BlockNumber(1000))
        );
        assert_eq!(
            fsm.search(rel, 32),
            Some(BlockNumber(5)),
            "50 bytes free serves 32"
        );
        assert_eq!(
            fsm.search(rel, 33),
            Some(BlockNumber(1000)),
            "50 bytes rounds down to 32, too little for 33"
        );
    }

    proptest! {
        #[test]
        fn matches_linear_scan(ops in proptest::collection::vec((0u32..300, 0usize..8192), 1..200), need in 1usize..8192) {
            let fsm = FreeSpaceMap::new();
            let rel = RelFileId(7);
            let mut model = vec![0usize; 300];
            for (b, avail) in ops {
                fsm.record(rel, BlockNumber(b), avail);
                model[b as usize] = avail;
            }
            let expect = needed_to_cat(need).and_then(|n| model.iter().position(|&a| avail_to_cat(a) >= n));
            let got = fsm.search(rel, need).map(|b| b.0 as usize);
            prop_assert_eq!(got, expect);
            if let Some(b) = got {
                prop_assert!(model[b] >= need, "returned block really has room");
            }
        }
    }
}
