//! # old_snapshot_threshold (snapmgr.c's old-snapshot half, bufmgr.h's TestForOldSnapshot)
//!
//! A snapshot that stays open for hours holds back the removable horizon
//! and every table bloats behind it. With `old_snapshot_threshold = N`
//! minutes, pruning and VACUUM may remove versions that only snapshots
//! older than N minutes still need; such a snapshot that then *reads what
//! was taken from it* fails with 72000 `snapshot too old`. Nothing else
//! changes: a snapshot that lost nothing it needs never fails.
//!
//! ```text
//!   tick (1/s, off the snapshot path)        pruning / VACUUM
//!   ┌───────────────────────────────┐        ┌──────────────────────────────┐
//!   │ clock      ← now (seconds)    │        │ horizon = max(ordinary,      │
//!   │ xid_by_minute.push(now, bound)│──────▶ │   limited) (LimitedFor-      │
//!   │ limited ← bound N minutes ago │        │   OldSnapshots)              │
//!   │ early.purge(< ordinary)       │        │ removed (xmin, xmax) with    │
//!   └───────────────────────────────┘        │ xmax >= ordinary ──▶ early   │
//!                                            └──────────────┬───────────────┘
//!   a scan reading page (rel, block)                        │ (rel, block),
//!   ┌─────────────────────────────────────────────┐         │ (rel, INDEX)
//!   │ on? ─▶ stamped? ─▶ page LSN > snapshot LSN? │ ◀───────┘
//!   │ ─▶ older than N? ─▶ early record says a     │
//!   │ version this snapshot sees was removed?     │──▶ 72000 snapshot too old
//!   └─────────────────────────────────────────────┘
//! ```
//!
//! ## The time → xid map (`xid_by_minute`)
//!
//! *bound(t)* is `min(latest_completed_xid + 1, every running xid)` at time
//! t: every snapshot taken after t has `xmin >= bound(t)` (a running xid
//! then was running at t or assigned after it, above `latest_completed`).
//! The tick records bound at the first tick of each minute; the *limited
//! horizon* is the newest entry recorded at least N minutes ago. A version
//! whose deleter committed below it is dead to every snapshot younger than
//! N minutes. With N = 0 (tests) the limited horizon is bound(now), computed
//! when pruning asks. The limit never passes a running xid (bound is below
//! every running xid) nor the replication xmin (a standby asking for rows
//! with hot-standby feedback keeps them), and pruning removes only versions
//! whose deleter *committed* (heapam_visibility's `satisfies_vacuum`): a
//! running or aborted deleter's version stays.
//!
//! ## Early removals: why there are no false positives
//!
//! PostgreSQL 9.6–16 failed every old snapshot that read a page with a newer
//! LSN, whatever changed the page. Here pruning records, for each page it
//! removed versions from that the *ordinary* horizon would have kept, the
//! `(xmin, xmax)` of those versions and the prune's LSN, in a map keyed by
//! `(relation, block)` — and under `(relation, INDEX_BLOCK)` for the whole
//! relation, because pruning also removes the versions' index entries
//! (hotpair's indexes have no pages whose LSN an index scan could test).
//! The check errors only if a recorded version was visible to the snapshot
//! — inserter visible (`!xid_in_snapshot(xmin)`), deleter not
//! (`xid_in_snapshot(xmax)`) — which is exactly "the snapshot would have
//! returned this version". An insert, an update whose old version is still
//! there, or the removal of versions the snapshot never saw (deleted before
//! it, or inserted after it) is no error. Past [`MAX_PAIRS`] distinct pairs
//! a page keeps a lossy summary (oldest xmin, newest xmax) tested
//! conservatively: possibly-visible inserter and possibly-invisible deleter.
//!
//! Entries go once the ordinary horizon passes their deleters (the tick):
//! then no snapshot needs them. Memory is bounded by what old snapshots
//! could need, at most [`MAX_PAIRS`] pairs per page.
//!
//! ## Cost when off
//!
//! The threshold is a plain field fixed before the procarray is shared;
//! every snapshot and page path pays one predictable branch on it. Built without
//! the cargo feature `old_snapshot_threshold`, [`OldSnapshot::enabled`] is
//! the constant `false` and the branches compile away.
//!
//! Snapshots built before the feature was on or by hand (`when == 0`) are
//! never tested.
//!
//! ## On a standby
//!
//! A standby does not prune; replay removes what the primary pruned, and
//! without the setting a snapshot that still needs those versions is
//! waited for and then cancelled (40001, engine's standby_conflict.rs) —
//! however little of them it would ever read. With the setting on the
//! standby, replay neither waits for nor cancels a snapshot older than the
//! threshold (`ProcArray::snapshot_is_old`, the same time → xid map kept by
//! the standby's own tick): it records the removed versions here, per page
//! and relation-wide, under the page lock before the page changes, and the
//! reader gets the precise test above. A standby snapshot's LSN is the
//! replay position when it was built (read before its xids, so a page
//! changed by any record replayed after has a newer LSN); the reader's
//! clock is the standby's. Younger snapshots keep the wait-then-cancel
//! rule. So on a standby the setting turns a recovery conflict of an old
//! snapshot into 72000 raised only when that snapshot reads a version it
//! sees that replay removed — and into nothing at all when it does not.
//!
//! Locks: the time map's mutex and the early map's stripes are leaves.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::snapshot::Snapshot;
use crate::subtrans::SubTrans;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::lsn::Lsn;
use pgtypes::TransactionId;

/// The block number under which a relation-wide early-removal record is
/// kept: what index scans test (their entries went with the versions).
pub const INDEX_BLOCK: u32 = u32::MAX;

/// Distinct (xmin, xmax) pairs a page's record keeps exactly.
pub const MAX_PAIRS: usize = 32;

/// Stripes of the early-removal map.
const STRIPES: usize = 16;

const RELAXED: Ordering = Ordering::Relaxed;

/// A source of the current WAL insert position (any lower bound of it is
/// correct: a lower snapshot LSN only lets more pages reach the precise
/// test).
pub type LsnSource = Box<dyn Fn() -> Lsn + Send + Sync>;

/// What pruning removed early from one page (or, under [`INDEX_BLOCK`],
/// from one relation).
#[derive(Clone, Debug, Default)]
struct EarlyRemoval {
    /// LSN of the newest prune that removed something early.
    lsn: Lsn,
    /// (xmin, xmax) of removed versions, distinct.
    pairs: Vec<(TransactionId, TransactionId)>,
    /// Past [`MAX_PAIRS`]: (oldest xmin, newest xmax) of the rest.
    lossy: Option<(TransactionId, TransactionId)>,
}

impl EarlyRemoval {
    fn add(&mut self, removed: &[(TransactionId, TransactionId)], lsn: Lsn) {
        self.lsn = self.lsn.max(lsn);
        for &(xmin, xmax) in removed {
            if self.pairs.contains(&(xmin, xmax)) {
                continue;
            }
            if self.pairs.len() < MAX_PAIRS {
                self.pairs.push((xmin, xmax));
            } else {
                self.lossy = Some(match self.lossy {
                    None => (xmin, xmax),
                    Some((lo, hi)) => (lo.min(xmin), hi.max(xmax)),
                });
            }
        }
    }

    /// Did this removal take a version `snap` sees?
    fn needed_by(&self, snap: &Snapshot, subtrans: &SubTrans) -> bool {
        let parent = |x: TransactionId| subtrans.parent(x);
        let sees = |xmin, xmax| {
            !snap.xid_in_snapshot(xmin, &parent) && snap.xid_in_snapshot(xmax, &parent)
        };
        if self.pairs.iter().any(|&(xmin, xmax)| sees(xmin, xmax)) {
            return true;
        }
        match self.lossy {
            Some((lo, hi)) => lo < snap.xmax && hi >= snap.xmin,
            None => false,
        }
    }

    /// Forgets versions whose deleter is below `horizon` (no snapshot can
    /// see them); true when nothing is left.
    fn purge(&mut self, horizon: TransactionId) -> bool {
        self.pairs.retain(|&(_, xmax)| xmax >= horizon);
        if matches!(self.lossy, Some((_, hi)) if hi < horizon) {
            self.lossy = None;
        }
        self.pairs.is_empty() && self.lossy.is_none()
    }
}

/// One stripe of the early-removal records, by (relation, block).
type EarlyMap = HashMap<(u32, u32), EarlyRemoval>;

/// The old-snapshot state of a node: setting, coarse clock, time → xid map,
/// limited horizon and early-removal records. Owned by the procarray.
pub struct OldSnapshot {
    /// Minutes; -1 when off. Fixed before the procarray is shared.
    threshold: i64,
    /// Seconds since the Unix epoch, set by the tick: snapshots' `when`.
    clock: AtomicU64,
    /// xid_by_minute: (seconds, bound) at the first tick of each minute.
    time_map: Mutex<VecDeque<(u64, TransactionId)>>,
    /// The horizon the map allows (0: none yet).
    limited: AtomicU64,
    /// Early-removal records by (relation, block), striped.
    early: Box<[Mutex<EarlyMap>]>,
    /// Records in `early` (0: no scan needs to look).
    early_count: AtomicUsize,
    /// Where snapshots read their `lsn`: the WAL insert position, and
    /// during recovery the replay position.
    lsn_source: OnceLock<(LsnSource, LsnSource)>,
}

impl Default for OldSnapshot {
    fn default() -> OldSnapshot {
        OldSnapshot::new(-1)
    }
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(1)
        .max(1)
}

impl OldSnapshot {
    /// State for `old_snapshot_threshold = minutes` (-1: off; ignored when
    /// the feature is compiled out).
    pub fn new(minutes: i64) -> OldSnapshot {
        let minutes = minutes.clamp(-1, 86_400);
        OldSnapshot {
            threshold: minutes,
            clock: AtomicU64::new(now_secs()),
            time_map: Mutex::new(VecDeque::new()),
            limited: AtomicU64::new(0),
            early: (0..STRIPES).map(|_| Mutex::new(HashMap::new())).collect(),
            early_count: AtomicUsize::new(0),
            lsn_source: OnceLock::new(),
        }
    }

    /// The feature is on: one load of a plain field, or the constant
    /// `false` when compiled out.
    #[inline(always)]
    pub fn enabled(&self) -> bool {
        #[cfg(feature = "old_snapshot_threshold")]
        {
            self.threshold >= 0
        }
        #[cfg(not(feature = "old_snapshot_threshold"))]
        {
            false
        }
    }

    /// The setting, in minutes (-1: off).
    pub fn threshold(&self) -> i64 {
        if self.enabled() {
            self.threshold
        } else {
            -1
        }
    }

    /// Sets where snapshots read the WAL insert position and, during
    /// recovery, the replay position (once; without them they carry LSN 0
    /// and every page they read reaches the precise test).
    pub fn set_lsn_sources(&self, insert: LsnSource, replay: LsnSource) {
        let _ = self.lsn_source.set((insert, replay));
    }

    /// Stamps a snapshot being built with the insert (or, `in_recovery`,
    /// the replay) LSN and the coarse clock (only when on). Called before
    /// the snapshot's xids are read.
    #[inline(always)]
    pub fn stamp(&self, snap: &mut Snapshot, in_recovery: bool) {
        if self.enabled() {
            self.stamp_slow(snap, in_recovery);
        }
    }

    #[inline(never)]
    fn stamp_slow(&self, snap: &mut Snapshot, in_recovery: bool) {
        snap.lsn = self
            .lsn_source
            .get()
            .map_or(
                Lsn::INVALID,
                |(insert, replay)| {
                    if in_recovery {
                        replay()
                    } else {
                        insert()
                    }
                },
            );
        snap.when = self.clock.load(RELAXED);
    }

    /// The tick (once a second): advances the clock to `now`, records
    /// `bound` (see the module doc) in the time map at the first tick of a
    /// minute, recomputes the limited horizon, and drops early-removal
    /// records whose deleters are all below `ordinary` (the removable
    /// horizon of every snapshot: nobody can need them).
    pub fn tick(&self, now: u64, bound: TransactionId, ordinary: TransactionId) {
        if !self.enabled() {
            return;
        }
        self.clock.fetch_max(now, RELAXED);
        if self.threshold > 0 {
            let keep = self.threshold as usize + 2;
            let mut map = self.time_map.lock();
            if map.back().is_none_or(|&(t, _)| now / 60 > t / 60) {
                map.push_back((now, bound));
            }
            while map.len() > keep {
                map.pop_front();
            }
            let cutoff = now.saturating_sub(self.threshold as u64 * 60);
            let l = map
                .iter()
                .rev()
                .find(|&&(t, _)| t <= cutoff)
                .map_or(0, |&(_, b)| b.0);
            self.limited.store(l, RELAXED);
        }
        if self.early_count.load(RELAXED) != 0 {
            for stripe in self.early.iter() {
                let mut m = stripe.lock();
                let before = m.len();
                m.retain(|_, r| !r.purge(ordinary));
                let gone = before - m.len();
                if gone != 0 {
                    self.early_count.fetch_sub(gone, RELAXED);
                }
            }
        }
    }

    /// The horizon the time map allows for `threshold > 0` (INVALID: none
    /// yet — the node has not run for N minutes). With 0 the caller uses
    /// the bound of now instead.
    pub fn map_limited(&self) -> TransactionId {
        TransactionId(self.limited.load(RELAXED))
    }

    /// Records that a prune logged at `lsn` removed from `block` of `rel`
    /// the versions `removed` (xmin, xmax) that the ordinary horizon would
    /// have kept; `block` [`INDEX_BLOCK`] records it relation-wide, for
    /// index scans (pruning does that before it removes the index entries,
    /// with `Lsn(u64::MAX)`: the relation test relies on the versions).
    /// Called under the page's exclusive lock (or before the index entries
    /// go), so a reader that sees the change finds the record.
    pub fn record_early(
        &self,
        rel: u32,
        block: u32,
        removed: &[(TransactionId, TransactionId)],
        lsn: Lsn,
    ) {
        if removed.is_empty() {
            return;
        }
        let key = (rel, block);
        let mut m = self.stripe(key).lock();
        let r = m.entry(key).or_insert_with(|| {
            self.early_count.fetch_add(1, RELAXED);
            EarlyRemoval::default()
        });
        r.add(removed, lsn);
    }

    fn stripe(&self, key: (u32, u32)) -> &Mutex<EarlyMap> {
        let h = (key.0 as usize)
            .wrapping_mul(31)
            .wrapping_add(key.1 as usize);
        &self.early[h % STRIPES]
    }

    /// TestForOldSnapshot for a heap page (`block` of `rel`, whose LSN is
    /// `page_lsn`) read with `snap`: 72000 `snapshot too old` if the
    /// snapshot is older than the threshold, the page changed after it was
    /// taken, and an early prune of the page removed a version the
    /// snapshot sees. Off: one branch.
    #[inline(always)]
    pub fn test_page(
        &self,
        snap: &Snapshot,
        rel: u32,
        block: u32,
        page_lsn: Lsn,
        subtrans: &SubTrans,
    ) -> PgResult<()> {
        // On, the common answer — the page did not change since the
        // snapshot — is one more comparison here, not a call.
        if self.enabled() && page_lsn > snap.lsn {
            return self.test_slow(snap, (rel, block), Some(page_lsn), subtrans);
        }
        Ok(())
    }

    /// The same test for an index scan of `rel`: its entries went with the
    /// versions, so the relation-wide record stands for the index page.
    #[inline(always)]
    pub fn test_relation(&self, snap: &Snapshot, rel: u32, subtrans: &SubTrans) -> PgResult<()> {
        // On, nothing to look up until an early prune recorded something.
        if self.enabled() && self.early_count.load(RELAXED) != 0 {
            return self.test_slow(snap, (rel, INDEX_BLOCK), None, subtrans);
        }
        Ok(())
    }

    #[inline(never)]
    fn test_slow(
        &self,
        snap: &Snapshot,
        key: (u32, u32),
        page_lsn: Option<Lsn>,
        subtrans: &SubTrans,
    ) -> PgResult<()> {
        if snap.when == 0 {
            return Ok(()); // not an MVCC snapshot this node stamped
        }
        if page_lsn.is_some_and(|l| l <= snap.lsn) {
            return Ok(()); // the page did not change since
        }
        if snap.when + self.threshold as u64 * 60 > self.clock.load(RELAXED) {
            return Ok(()); // younger than the threshold: lost nothing
        }
        if self.early_count.load(RELAXED) == 0 {
            return Ok(());
        }
        let m = self.stripe(key).lock();
        match m.get(&key) {
            Some(r) if r.lsn > snap.lsn && r.needed_by(snap, subtrans) => Err(snapshot_too_old()),
            _ => Ok(()),
        }
    }

    /// Early-removal records kept (pages plus relations).
    pub fn early_records(&self) -> usize {
        self.early_count.load(RELAXED)
    }
}

/// 72000 `snapshot too old`, PostgreSQL's message.
pub fn snapshot_too_old() -> PgError {
    PgError::new(sqlstate::SNAPSHOT_TOO_OLD, "snapshot too old")
}

#[cfg(all(test, feature = "old_snapshot_threshold"))]
mod tests {
    use super::*;

    fn x(n: u64) -> TransactionId {
        TransactionId(n)
    }

    /// An old snapshot: xmin 100, xmax 110, 105 running; taken at t = 1000
    /// with LSN 50.
    fn old_snap() -> Snapshot {
        Snapshot {
            xmin: x(100),
            xmax: x(110),
            xip: vec![x(105)],
            lsn: Lsn(50),
            when: 1000,
            ..Default::default()
        }
    }

    /// What pruning does: the relation first, then the page.
    fn record(
        o: &OldSnapshot,
        rel: u32,
        block: u32,
        removed: &[(TransactionId, TransactionId)],
        lsn: Lsn,
    ) {
        o.record_early(rel, INDEX_BLOCK, removed, Lsn(u64::MAX));
        o.record_early(rel, block, removed, lsn);
    }

    fn state(minutes: i64, now: u64) -> OldSnapshot {
        let o = OldSnapshot::new(minutes);
        o.clock.store(now, RELAXED);
        o
    }

    #[test]
    fn removed_version_the_snapshot_sees_errors() {
        let o = state(0, 2000);
        let st = SubTrans::new();
        let s = old_snap();
        // inserted by 90 (visible), deleted by 120 (after the snapshot)
        record(&o, 7, 3, &[(x(90), x(120))], Lsn(60));
        let e = o.test_page(&s, 7, 3, Lsn(60), &st).unwrap_err();
        assert_eq!(e.code, "72000", "snapshot too old");
        assert_eq!(e.message, "snapshot too old");
        assert!(o.test_relation(&s, 7, &st).is_err(), "index scans too");
        // a deleter running when the snapshot was taken is invisible too
        let o = state(0, 2000);
        record(&o, 7, 3, &[(x(90), x(105))], Lsn(60));
        assert!(o.test_page(&s, 7, 3, Lsn(60), &st).is_err(), "xip deleter");
    }

    #[test]
    fn no_false_positives() {
        let o = state(0, 2000);
        let st = SubTrans::new();
        let s = old_snap();
        // The page changed (LSN 70) but nothing was removed from it.
        assert!(o.test_page(&s, 7, 3, Lsn(70), &st).is_ok(), "insert only");
        // Removed versions the snapshot never saw: deleted before it
        // (xmax 95 < xmin), inserted after it (xmin 115), inserted by a
        // transaction running at the snapshot (105).
        record(
            &o,
            7,
            3,
            &[(x(80), x(95)), (x(115), x(120)), (x(105), x(121))],
            Lsn(70),
        );
        assert!(
            o.test_page(&s, 7, 3, Lsn(70), &st).is_ok(),
            "nothing it sees"
        );
        assert!(
            o.test_relation(&s, 7, &st).is_ok(),
            "nothing it sees (index)"
        );
        // Another page, another relation.
        record(&o, 8, 4, &[(x(90), x(120))], Lsn(80));
        assert!(o.test_page(&s, 7, 4, Lsn(80), &st).is_ok(), "other page");
        assert!(o.test_page(&s, 8, 5, Lsn(80), &st).is_ok(), "other block");
        assert!(o.test_page(&s, 8, 4, Lsn(80), &st).is_err(), "that page");
        // Page not changed since the snapshot: no lookup.
        assert!(o.test_page(&s, 8, 4, Lsn(50), &st).is_ok(), "old page LSN");
        // A young snapshot (threshold 10 min, taken 60 s ago).
        let o = state(10, 1060);
        record(&o, 8, 4, &[(x(90), x(120))], Lsn(80));
        assert!(
            o.test_page(&s, 8, 4, Lsn(80), &st).is_ok(),
            "young snapshot"
        );
        o.clock.store(1000 + 600, RELAXED);
        assert!(o.test_page(&s, 8, 4, Lsn(80), &st).is_err(), "now old");
        // Unstamped snapshots are not tested; a standby's are, as any.
        let mut u = old_snap();
        u.when = 0;
        assert!(o.test_page(&u, 8, 4, Lsn(80), &st).is_ok(), "unstamped");
        let mut r = old_snap();
        r.taken_during_recovery = true;
        assert!(o.test_page(&r, 8, 4, Lsn(80), &st).is_err(), "standby");
    }

    #[test]
    fn off_never_errors() {
        let o = OldSnapshot::new(-1);
        let st = SubTrans::new();
        record(&o, 7, 3, &[(x(90), x(120))], Lsn(60));
        assert!(o.test_page(&old_snap(), 7, 3, Lsn(60), &st).is_ok());
        let mut s = Snapshot::default();
        o.stamp(&mut s, false);
        assert_eq!((s.when, s.lsn), (0, Lsn::INVALID), "off stamps nothing");
    }

    #[test]
    fn lossy_summary_stays_conservative() {
        let o = state(0, 2000);
        let st = SubTrans::new();
        let s = old_snap();
        let many: Vec<_> = (0..MAX_PAIRS as u64 + 5)
            .map(|i| (x(10 + i), x(50 + i)))
            .collect();
        record(&o, 1, 1, &many, Lsn(60));
        assert!(
            o.test_page(&s, 1, 1, Lsn(60), &st).is_ok(),
            "all deleted before"
        );
        record(&o, 1, 1, &[(x(20), x(130))], Lsn(61));
        assert!(
            o.test_page(&s, 1, 1, Lsn(61), &st).is_err(),
            "lossy sees it"
        );
    }

    #[test]
    fn time_map_and_purge() {
        let o = state(2, 0);
        o.tick(60, x(100), x(100));
        assert_eq!(o.map_limited(), x(0), "not 2 minutes yet");
        o.tick(90, x(105), x(100)); // same minute: not recorded
        o.tick(120, x(110), x(100));
        o.tick(180, x(120), x(100));
        assert_eq!(o.map_limited(), x(100), "the bound of 2 minutes ago");
        o.tick(245, x(130), x(100));
        assert_eq!(o.map_limited(), x(110));
        // purge: records whose deleters are below the ordinary horizon go
        record(&o, 1, 1, &[(x(90), x(120))], Lsn(60));
        assert_eq!(o.early_records(), 2, "page and relation");
        o.tick(246, x(130), x(120));
        assert_eq!(o.early_records(), 2, "120 still needed at horizon 120");
        o.tick(247, x(130), x(121));
        assert_eq!(o.early_records(), 0, "purged");
    }
}
