//! # The summary of old committed serializable transactions (pg_serial)
//!
//! When the records of committed serializable transactions pile up behind
//! one long-running transaction, the oldest are *summarised*
//! (SummarizeOldestCommittedSxact): the record goes, and of what it knew
//! only two things are kept — its SIRead locks, merged into the "old
//! committed" locks of [`super`], and, keyed by its top-level xid, whether
//! it had a conflict out to a transaction that committed first and the
//! earliest such commit. A reader that later meets a version that xid
//! wrote looks here (CheckForSerializableConflictOut's SLRU branch).
//!
//! ## Layout
//!
//! One `u64` per xid, 1,024 xids to an 8 KiB page, page `xid / 1024`:
//!
//! * `0` — not summarised (a hole of the file reads so);
//! * [`NO_CONFLICT`] — summarised without a conflict out;
//! * anything else — summarised, with the commit sequence number of the
//!   earliest transaction it had a conflict out to.
//!
//! At most [`CACHED_PAGES`] pages stay in memory; the least recently used
//! goes to `DIR/pg_serial/summary`, at offset `page * 8 KiB` (a sparse file:
//! only written pages take disk). So memory stays bounded however long a
//! transaction holds the summarised ones back. Nothing here survives a
//! restart: the file is emptied at start-up, as PostgreSQL empties
//! pg_serial, because no transaction that could look an entry up survives
//! either.
//!
//! ## Forgetting
//!
//! Each page remembers the highest commit sequence number summarised into
//! it. An entry matters only while some active serializable transaction
//! overlaps the summarised one (its snapshot was taken before that
//! commit); [`Serial::forget_before`] drops every page whose entries all
//! committed at or before the oldest active snapshot's sequence number,
//! and truncates the file when none is left.
//!
//! A page that cannot be written out stays in memory (the bound is then
//! exceeded, never the information lost) and the failure is logged once.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use pgtypes::TransactionId;

/// Entry of a summarised transaction with no conflict out.
pub const NO_CONFLICT: u64 = u64::MAX;
/// Xids per page.
pub const XIDS_PER_PAGE: u32 = 1024;
/// Pages kept in memory (128 KiB).
pub const CACHED_PAGES: usize = 16;

const PAGE_BYTES: u64 = XIDS_PER_PAGE as u64 * 8;

type Page = Box<[u64; XIDS_PER_PAGE as usize]>;

/// What [`Serial::lookup`] found for an xid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Summary {
    /// Never summarised (or forgotten: nothing active overlaps it).
    Absent,
    /// Summarised; it had no conflict out to an earlier commit.
    NoConflictOut,
    /// Summarised with a conflict out; the earliest such commit's number.
    ConflictOut(u64),
}

/// The summary map: cached pages over a sparse file.
#[derive(Default)]
pub struct Serial {
    /// `DIR/pg_serial` (None: pages never leave memory — unit tests).
    dir: Option<PathBuf>,
    file: Option<File>,
    /// Cached pages, and their use order (front: least recent).
    cached: HashMap<u64, Page>,
    order: VecDeque<u64>,
    /// Pages written to the file and not cached.
    on_disk: HashSet<u64>,
    /// Highest commit sequence number summarised into each live page.
    page_max_seq: HashMap<u64, u64>,
    /// Transactions summarised since the map was last empty.
    summarised: u64,
    /// A write-out failed (logged once).
    write_failed: bool,
    /// The horizon of the last [`forget_before`](Self::forget_before).
    forgot_at: Option<Option<u64>>,
}

impl Serial {
    /// A summary spilling to `dir` (created at need); anything left there
    /// by an earlier run is removed.
    pub fn with_dir(dir: PathBuf) -> Serial {
        let _ = std::fs::remove_file(dir.join("summary"));
        Serial {
            dir: Some(dir),
            ..Serial::default()
        }
    }

    /// Records the summary of `xid`, committed at `commit_seq`, with the
    /// earliest conflict-out commit if it had one.
    pub fn add(&mut self, xid: TransactionId, commit_seq: u64, conflict_out: Option<u64>) {
        let (page, slot) = place(xid);
        let value = conflict_out.map_or(NO_CONFLICT, |c| c.clamp(1, NO_CONFLICT - 1));
        self.page_mut(page)[slot] = value;
        let m = self.page_max_seq.entry(page).or_insert(0);
        *m = (*m).max(commit_seq);
        self.summarised += 1;
    }

    /// SerialGetMinConflictCommitSeqNo.
    pub fn lookup(&mut self, xid: TransactionId) -> Summary {
        let (page, slot) = place(xid);
        if !self.cached.contains_key(&page) && !self.on_disk.contains(&page) {
            return Summary::Absent;
        }
        match self.page_mut(page)[slot] {
            0 => Summary::Absent,
            NO_CONFLICT => Summary::NoConflictOut,
            c => Summary::ConflictOut(c),
        }
    }

    /// Forgets every page whose summarised transactions all committed at
    /// or before `horizon` (no active transaction overlaps them); `None`:
    /// no active serializable transaction at all.
    pub fn forget_before(&mut self, horizon: Option<u64>) {
        // Pages added since the last call committed after that horizon: an
        // unchanged horizon has nothing to drop (O(1) behind a long
        // transaction).
        if self.page_max_seq.is_empty() || self.forgot_at == Some(horizon) {
            return;
        }
        self.forgot_at = Some(horizon);
        let stale: Vec<u64> = self
            .page_max_seq
            .iter()
            .filter(|(_, m)| horizon.is_none_or(|h| **m <= h))
            .map(|(p, _)| *p)
            .collect();
        for p in stale {
            self.page_max_seq.remove(&p);
            self.cached.remove(&p);
            self.on_disk.remove(&p);
        }
        self.order.retain(|p| self.page_max_seq.contains_key(p));
        if self.page_max_seq.is_empty() {
            self.cached = HashMap::new();
            self.order = VecDeque::new();
            self.on_disk = HashSet::new();
            self.summarised = 0;
            if let Some(f) = &self.file {
                let _ = f.set_len(0);
            }
        }
    }

    /// (pages in memory, pages in the file, transactions summarised since
    /// the map was last empty).
    pub fn usage(&self) -> (usize, usize, u64) {
        (self.cached.len(), self.on_disk.len(), self.summarised)
    }

    /// The page, cached (read back from the file, or new and zeroed),
    /// marked most recently used; evicts the least recently used beyond
    /// [`CACHED_PAGES`].
    fn page_mut(&mut self, page: u64) -> &mut Page {
        if self.cached.contains_key(&page) {
            if self.order.back() != Some(&page) {
                self.order.retain(|p| *p != page);
                self.order.push_back(page);
            }
        } else {
            let mut data: Page = Box::new([0; XIDS_PER_PAGE as usize]);
            if self.on_disk.remove(&page) {
                self.read_page(page, &mut data);
            }
            self.cached.insert(page, data);
            self.order.push_back(page);
            self.evict();
        }
        self.cached
            .entry(page)
            .or_insert_with(|| Box::new([0; XIDS_PER_PAGE as usize]))
    }

    fn evict(&mut self) {
        let mut kept = VecDeque::new();
        while self.cached.len() > CACHED_PAGES {
            let Some(victim) = self.order.pop_front() else {
                break;
            };
            if self.order.is_empty() {
                // The page just asked for stays.
                kept.push_back(victim);
                break;
            }
            let Some(data) = self.cached.remove(&victim) else {
                continue;
            };
            if self.write_page(victim, &data) {
                self.on_disk.insert(victim);
            } else {
                self.cached.insert(victim, data);
                kept.push_back(victim);
                break;
            }
        }
        while let Some(p) = kept.pop_back() {
            self.order.push_front(p);
        }
    }

    fn open(&mut self) -> Option<&File> {
        if self.file.is_none() {
            let dir = self.dir.as_ref()?;
            let opened = std::fs::create_dir_all(dir).and_then(|()| {
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(dir.join("summary"))
            });
            match opened {
                Ok(f) => self.file = Some(f),
                Err(e) => {
                    self.report(&format!("could not open file \"{}\": {e}", dir.display()));
                    return None;
                }
            }
        }
        self.file.as_ref()
    }

    fn write_page(&mut self, page: u64, data: &Page) -> bool {
        let mut bytes = Vec::with_capacity(PAGE_BYTES as usize);
        for v in data.iter() {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let Some(offset) = page.checked_mul(PAGE_BYTES) else {
            return false;
        };
        let Some(f) = self.open() else {
            return false;
        };
        match f.write_all_at(&bytes, offset) {
            Ok(()) => true,
            Err(e) => {
                self.report(&format!("could not write to pg_serial summary: {e}"));
                false
            }
        }
    }

    fn read_page(&mut self, page: u64, data: &mut Page) {
        let mut bytes = vec![0u8; PAGE_BYTES as usize];
        let read = match (page.checked_mul(PAGE_BYTES), self.open()) {
            (Some(offset), Some(f)) => f.read_exact_at(&mut bytes, offset),
            _ => Err(std::io::Error::other("page out of range")),
        };
        if let Err(e) = read {
            // A page that cannot be read back reads as "every xid summarised
            // with a conflict out at the start": conflicts, never misses.
            self.report(&format!("could not read pg_serial summary: {e}"));
            data.fill(1);
            return;
        }
        for (v, chunk) in data.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            *v = u64::from_le_bytes(b);
        }
    }

    fn report(&mut self, what: &str) {
        if !self.write_failed {
            self.write_failed = true;
            tracing::error!("{what}");
        }
    }
}

fn place(xid: TransactionId) -> (u64, usize) {
    let per = u64::from(XIDS_PER_PAGE);
    (xid.0 / per, (xid.0 % per) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_spill_to_the_file_and_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Serial::with_dir(dir.path().join("pg_serial"));
        // 64 pages' worth of xids: 48 go to the file.
        for i in 0..64u64 {
            let xid = TransactionId(1000 + i * u64::from(XIDS_PER_PAGE));
            let c = (i % 3 != 0).then_some(i + 1);
            s.add(xid, i + 10, c);
        }
        let (mem, disk, n) = s.usage();
        assert_eq!(
            (mem, disk, n),
            (CACHED_PAGES, 64 - CACHED_PAGES, 64),
            "bounded cache"
        );
        for i in 0..64u64 {
            let xid = TransactionId(1000 + i * u64::from(XIDS_PER_PAGE));
            let want = if i % 3 != 0 {
                Summary::ConflictOut(i + 1)
            } else {
                Summary::NoConflictOut
            };
            assert_eq!(s.lookup(xid), want, "xid {}", xid.0);
            assert_eq!(
                s.lookup(TransactionId(xid.0 + 1)),
                Summary::Absent,
                "neighbour"
            );
        }
        assert!(s.usage().0 <= CACHED_PAGES, "lookups keep the bound");
        // Entries committed at or before 40 go; the rest stay.
        s.forget_before(Some(40));
        assert_eq!(s.lookup(TransactionId(1000)), Summary::Absent, "forgotten");
        let late = TransactionId(1000 + 62 * u64::from(XIDS_PER_PAGE));
        assert_eq!(s.lookup(late), Summary::ConflictOut(63), "kept");
        s.forget_before(None);
        assert_eq!(s.usage(), (0, 0, 0), "empty");
        let len = std::fs::metadata(dir.path().join("pg_serial/summary"))
            .unwrap()
            .len();
        assert_eq!(len, 0, "file truncated");
    }

    #[test]
    fn without_a_directory_pages_stay_in_memory() {
        let mut s = Serial::default();
        for i in 0..40u64 {
            s.add(TransactionId(i * u64::from(XIDS_PER_PAGE)), 5, None);
        }
        assert_eq!(s.usage().0, 40, "nowhere to spill: kept");
        assert_eq!(s.lookup(TransactionId(0)), Summary::NoConflictOut, "found");
    }
}
