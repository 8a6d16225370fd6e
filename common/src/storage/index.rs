//! In-memory ordered indexes (primary key, unique, plain) pointing at every
//! heap row version; visibility is decided on the heap. Rebuilt from the heap
//! at start-up. OWNER: storage helper (S).

use crate::types::ItemPointer;

/// One index: order-preserving encoded key bytes → row versions.
pub struct Index {
    _private: (),
}

impl Index {
    /// An empty index.
    pub fn new(unique: bool) -> Index {
        let _ = unique;
        todo!("S")
    }
    /// Adds an entry (duplicates of (key, tid) are ignored).
    pub fn insert(&self, key: &[u8], tid: ItemPointer) {
        let _ = (key, tid);
        todo!("S")
    }
    /// Calls `f` for each tid under exactly `key`.
    pub fn lookup(&self, key: &[u8], f: &mut dyn FnMut(ItemPointer)) {
        let _ = (key, f);
        todo!("S")
    }
    /// Removes every entry.
    pub fn clear(&self) {
        todo!("S")
    }
}
