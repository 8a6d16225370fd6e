//! KnownAssignedXids: the standby half of the procarray
//! (PostgreSQL's `KnownAssignedXids*` and `ProcArrayApplyRecoveryInfo`).
//!
//! On a standby no session runs a transaction; the primary's do. Replay
//! tracks their xids in KnownAssignedXids under ProcArrayLock, and standby
//! snapshots are built from it exactly as a primary's are built from the
//! dense `xids` array — with the same completion-counter cache.
//!
//! ## The array
//!
//! ```text
//!            tail                                   head (= xids.len())
//!             v                                      v
//!   xids:  [ 3 ][ 4 ][ 7 ][ 9 ][12 ][13 ][14 ][15 ]
//!   valid: [ f ][ f ][ t ][ f ][ t ][ f ][ t ][ t ]   num_valid = 4
//!            dead prefix
//! ```
//!
//! 1. `xids[tail..]` is strictly ascending, *including* the invalid
//!    entries: an entry is only ever appended above every xid added before
//!    (`latest_observed`), and a removal marks it invalid instead of moving
//!    anything — so a binary search over `xids[tail..]` finds an xid, valid
//!    or not, in O(log n). (Invalid entries at the head are dropped at
//!    once: the newest transaction finishing first is the common case, and
//!    snapshots then copy one hole-free run.)
//! 2. `valid[tail]` holds whenever `tail < head`: a removal at the tail
//!    advances it over the invalid entries behind (each entry is passed
//!    once: amortised O(1)).
//! 3. `num_valid` counts the valid entries of `[tail, head)`.
//! 4. Compression (KnownAssignedXidsCompress) moves the valid entries to
//!    the front. It runs when at least half of `xids` is dead (prefix or
//!    holes) and the array is not tiny; its cost, O(`xids.len()`), is then
//!    at most twice the number of removals since the last compression, so
//!    a removal costs O(log n) amortised — never the O(n) shift of a sorted
//!    `Vec::remove` or `retain` under the exclusive lock.
//!
//! Snapshots copy the valid entries below their `xmax` (O(head − tail),
//! at most twice the running count plus the compression threshold).
//!
//! ## How replay drives it
//!
//! * every xid a replayed record names is *recorded* with the range below
//!   it (`record_known_assigned`), so an xid assigned on the primary but
//!   not yet seen in WAL is still treated as running;
//! * a replayed commit or abort record (also COMMIT/ROLLBACK PREPARED, and
//!   a subtransaction's abort) removes its xids
//!   ([`ProcArray::expire_tree_known_assigned`]); the caller — one line per
//!   record kind in `engine::xact_redo` — then bumps the completion counter
//!   through the returned [`ExpiredTree`] before ProcArrayLock is released;
//! * a running-xacts record initialises the array (the first one,
//!   [`ProcArray::init_known_assigned`], which bumps) or expires what the
//!   primary finished without a record this standby replayed — a
//!   transaction cut short by a crash of the primary
//!   ([`ProcArray::prune_known_assigned`], which bumps when it removed
//!   anything or advanced `latest_completed_xid`);
//! * promotion ends it ([`ProcArray::orphaned_known_assigned`],
//!   [`ProcArray::end_recovery`], which bumps).
//!
//! ## Subxid overflow
//!
//! A running-xacts record lists at most 64 subxids per transaction: when a
//! proc of the primary had more, `subxid_overflow` is set and the list is
//! incomplete. The standby has no XLOG_XACT_ASSIGNMENT records to learn
//! the missing subxids' parents from, so on an overflowed *first* record
//! the caller adds every xid between the oldest running one and the
//! record's `next_xid` that the clog does not show finished — a superset
//! that holds every subxid of a still-running transaction — and
//! [`ProcArray::init_known_assigned`] remembers the newest such xid as
//! `overflowed_xid` (PostgreSQL's `lastOverflowedXid`). A snapshot whose
//! `xmin` is not above it is marked `suboverflowed`, as a primary's is
//! when some proc overflowed: visibility then resolves subxids through the
//! subtrans map before looking in `xip` (and, since the unknown subxids
//! are themselves in `xip`, finds them either way). Once a running-xacts
//! record's oldest running xid passes `overflowed_xid`, every transaction
//! that could have had an unknown subxid is gone and the mark is dropped.
//!
//! Lock order as in the parent module: ProcArrayLock, then XidGenLock.

use std::sync::atomic::Ordering;

use parking_lot::RwLockWriteGuard;
use pgtypes::TransactionId;

use super::{ProcArray, ProcArrayState};

/// Below this many slots the array is never compressed: copying a few
/// dozen entries more often than needed would cost more than it saves.
const COMPRESS_MIN_SLOTS: usize = 64;

/// The KnownAssignedXids array (see the module docs for its invariants).
/// Lives in `ProcArrayState`: every access holds ProcArrayLock.
#[derive(Debug, Default)]
pub(crate) struct KnownAssignedXids {
    /// The xids, `[tail..]` strictly ascending; `[..tail]` is dead.
    xids: Vec<TransactionId>,
    /// Per slot: still running.
    valid: Vec<bool>,
    /// First live slot (a valid one, or `xids.len()`).
    tail: usize,
    /// Valid entries in `[tail, head)`.
    num_valid: usize,
    /// The newest xid ever pushed (latestObservedXid): nothing at or below
    /// it is added again, even after the entries above the last valid
    /// one were dropped.
    latest_observed: TransactionId,
    /// lastOverflowedXid: snapshots with `xmin <= overflowed_xid` are
    /// suboverflowed (INVALID: none).
    overflowed_xid: TransactionId,
    /// Compressions done (tests, diagnostics).
    compressions: u64,
}

impl KnownAssignedXids {
    /// Forgets everything (end of recovery, a new first record).
    pub(crate) fn clear(&mut self) {
        self.xids.clear();
        self.valid.clear();
        self.tail = 0;
        self.num_valid = 0;
        self.latest_observed = TransactionId::INVALID;
        self.overflowed_xid = TransactionId::INVALID;
    }

    /// KnownAssignedXidsAdd for one xid: appended at the head if it is
    /// above every entry (an xid at or below the newest is already known,
    /// or was known and finished: never re-added).
    pub(crate) fn push(&mut self, xid: TransactionId) {
        if xid <= self.latest_observed {
            return;
        }
        self.latest_observed = xid;
        if self.xids.len() == self.xids.capacity() {
            // Make room by compressing rather than growing when half is dead.
            self.maybe_compress();
        }
        self.xids.push(xid);
        self.valid.push(true);
        self.num_valid += 1;
    }

    /// KnownAssignedXidsSearch(remove = true): marks `xid` finished. O(log
    /// n); the tail moves past the invalid entries behind it. Returns
    /// whether `xid` was running.
    pub(crate) fn remove(&mut self, xid: TransactionId) -> bool {
        let Ok(i) = self.xids[self.tail..].binary_search(&xid) else {
            return false;
        };
        let i = self.tail + i;
        if !self.valid[i] {
            return false;
        }
        self.valid[i] = false;
        self.num_valid -= 1;
        if i == self.tail {
            self.advance_tail();
        } else if i + 1 == self.xids.len() {
            // The newest finished first (a short transaction behind long
            // ones): drop the dead head so snapshots copy a hole-free run.
            while self.valid.last() == Some(&false) {
                self.xids.pop();
                self.valid.pop();
            }
        }
        true
    }

    /// KnownAssignedXidsRemovePreceding: forgets every xid below `xid`.
    /// Returns how many were running.
    pub(crate) fn remove_preceding(&mut self, xid: TransactionId) -> usize {
        let mut removed = 0;
        while self.tail < self.xids.len() && self.xids[self.tail] < xid {
            if self.valid[self.tail] {
                self.valid[self.tail] = false;
                self.num_valid -= 1;
                removed += 1;
            }
            self.tail += 1;
        }
        self.advance_tail();
        if self.overflowed_xid.is_valid() && self.overflowed_xid < xid {
            self.overflowed_xid = TransactionId::INVALID;
        }
        self.maybe_compress();
        removed
    }

    /// Moves `tail` over invalid entries (invariant 2); an empty array is
    /// reset to no slots at all.
    fn advance_tail(&mut self) {
        while self.tail < self.xids.len() && !self.valid[self.tail] {
            self.tail += 1;
        }
        if self.num_valid == 0 {
            self.xids.clear();
            self.valid.clear();
            self.tail = 0;
        }
    }

    /// KnownAssignedXidsCompress when at least half of the slots are dead
    /// (invariant 4: amortised O(1) per removal).
    pub(crate) fn maybe_compress(&mut self) {
        let slots = self.xids.len();
        if slots >= COMPRESS_MIN_SLOTS && slots >= 2 * self.num_valid {
            self.compress();
        }
    }

    /// Moves the valid entries to the front, in order.
    fn compress(&mut self) {
        let mut to = 0;
        for from in self.tail..self.xids.len() {
            if self.valid[from] {
                self.xids[to] = self.xids[from];
                self.valid[to] = true;
                to += 1;
            }
        }
        self.xids.truncate(to);
        self.valid.truncate(to);
        self.tail = 0;
        self.compressions += 1;
    }

    /// KnownAssignedXidsExists.
    pub(crate) fn contains(&self, xid: TransactionId) -> bool {
        match self.xids[self.tail..].binary_search(&xid) {
            Ok(i) => self.valid[self.tail + i],
            Err(_) => false,
        }
    }

    /// The oldest running xid (KnownAssignedXidsGetOldestXmin).
    pub(crate) fn oldest(&self) -> Option<TransactionId> {
        (self.num_valid > 0).then(|| self.xids[self.tail])
    }

    /// KnownAssignedXidsGetAndSetXmin: appends the running xids below
    /// `xmax` to `out`, ascending. Allocates nothing when `out` has room.
    pub(crate) fn copy_running(&self, xmax: TransactionId, out: &mut Vec<TransactionId>) {
        let xids = &self.xids[self.tail..];
        let end = xids.partition_point(|x| *x < xmax);
        if self.num_valid == xids.len() {
            // No holes (just compressed, or nothing finished out of order).
            out.extend_from_slice(&xids[..end]);
            return;
        }
        let valid = &self.valid[self.tail..self.tail + end];
        out.extend(
            xids[..end]
                .iter()
                .zip(valid)
                .filter_map(|(x, v)| v.then_some(*x)),
        );
    }

    /// Snapshots with `xmin` at or below this are suboverflowed.
    pub(crate) fn overflowed_xid(&self) -> TransactionId {
        self.overflowed_xid
    }

    /// The running xids, ascending.
    pub(crate) fn to_vec(&self) -> Vec<TransactionId> {
        let mut v = Vec::with_capacity(self.num_valid);
        self.copy_running(TransactionId(u64::MAX), &mut v);
        v
    }

    /// Checks invariants 1–3 (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.xids.len() != self.valid.len() || self.tail > self.xids.len() {
            return Err(format!("bad shape {self:?}"));
        }
        if self.tail < self.xids.len() && !self.valid[self.tail] {
            return Err(format!("tail on an invalid entry {self:?}"));
        }
        if self.xids[self.tail..].windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!("not ascending {self:?}"));
        }
        let n = self.valid[self.tail..].iter().filter(|v| **v).count();
        if n != self.num_valid {
            return Err(format!("num_valid {} != {n}", self.num_valid));
        }
        Ok(())
    }
}

/// A replayed completion whose xids have left KnownAssignedXids, with
/// ProcArrayLock still held exclusively (see
/// [`ProcArray::expire_tree_known_assigned`]). The caller bumps the
/// completion counter through it; dropping it without doing so releases
/// the lock and leaves cached snapshots valid — the bug every replay call
/// site must not have.
#[must_use = "a replayed completion must bump the completion counter"]
pub struct ExpiredTree<'a> {
    st: RwLockWriteGuard<'a, ProcArrayState>,
}

impl ExpiredTree<'_> {
    /// Bumps `xact_completion_count` and releases ProcArrayLock.
    pub fn bump_completion_count(mut self) {
        self.st.bump_completion_count();
    }
}

impl ProcArray {
    /// Enters or leaves recovery: while in recovery snapshots are built from
    /// KnownAssignedXids.
    pub fn set_in_recovery(&self, on: bool) {
        let mut st = self.state.write();
        st.in_recovery = on;
        if !on {
            st.known_assigned_xids.clear();
        }
    }

    /// Promotion, first half: the KnownAssignedXids no proc holds — the
    /// transactions the old primary left running (prepared ones have dummy
    /// procs by now, see `twophase::restore_at_promotion`). The caller
    /// marks them aborted in the clog, then calls
    /// [`ProcArray::end_recovery`]; replay has stopped, so the set cannot
    /// change in between.
    pub fn orphaned_known_assigned(&self) -> Vec<TransactionId> {
        let kax = self.known_assigned();
        kax.into_iter()
            .filter(|x| self.holder_of(*x).is_none())
            .collect()
    }

    /// Promotion, second half (ExpireAllKnownAssignedTransactionIds and the
    /// end of recovery): under ProcArrayLock exclusive KnownAssignedXids is
    /// emptied and snapshots come from the procs from now on;
    /// `latest_completed_xid` advances to `latest_aborted` (the newest
    /// orphan, already aborted in the clog) and the completion counter is
    /// bumped, so no session reuses a snapshot built from
    /// KnownAssignedXids.
    pub fn end_recovery(&self, latest_aborted: TransactionId) {
        let mut st = self.state.write();
        st.known_assigned_xids.clear();
        st.in_recovery = false;
        st.advance_latest_completed(latest_aborted);
        st.bump_completion_count();
    }

    /// RecordKnownAssignedTransactionIds: records that the primary assigned
    /// every xid from `next_xid` up to `xid` (inclusive) and advances
    /// `next_xid`.
    pub fn record_known_assigned(&self, xid: TransactionId) {
        if xid.0 < self.next_xid_hint.load(Ordering::Acquire) {
            // Already known (the common case: every record of a
            // transaction names its xid): no exclusive lock.
            return;
        }
        let mut st = self.state.write();
        let mut gen = self.xid_gen.lock();
        let mut x = (*gen).max(TransactionId::FIRST_NORMAL);
        while x <= xid {
            st.known_assigned_xids.push(x);
            x = x.next();
        }
        if *gen <= xid {
            *gen = xid.next();
            self.next_xid_hint.store(gen.0, Ordering::Release);
        }
    }

    /// ExpireTreeKnownAssignedTransactionIds, first half: under
    /// ProcArrayLock exclusive, removes a replayed commit or abort's `xid`
    /// and `subxids` from KnownAssignedXids and advances
    /// `latest_completed_xid` to `latest_xid`. The lock stays held in the
    /// returned [`ExpiredTree`] until the caller bumps the completion
    /// counter — one call site per record kind, so a test per kind guards
    /// its own bump.
    pub fn expire_tree_known_assigned(
        &self,
        xid: TransactionId,
        subxids: &[TransactionId],
        latest_xid: TransactionId,
    ) -> ExpiredTree<'_> {
        let mut st = self.state.write();
        let kax = &mut st.known_assigned_xids;
        kax.remove(xid);
        for s in subxids {
            kax.remove(*s);
        }
        kax.maybe_compress();
        st.advance_latest_completed(latest_xid.max(xid));
        ExpiredTree { st }
    }

    /// ExpireOldKnownAssignedTransactionIds (a running-xacts record after
    /// the first): forgets known xids older than `oldest_running`, which
    /// the primary has finished without a record replayed here (a crash of
    /// the primary). Their completions were not replayed one by one, so
    /// when anything left — or `latest_completed_xid` moved — the
    /// completion counter is bumped once.
    pub fn prune_known_assigned(&self, oldest_running: TransactionId) {
        let mut st = self.state.write();
        let removed = st.known_assigned_xids.remove_preceding(oldest_running);
        let before = st.latest_completed_xid;
        if oldest_running.0 > 0 {
            st.advance_latest_completed(TransactionId(oldest_running.0 - 1));
        }
        if removed > 0 || st.latest_completed_xid != before {
            st.bump_completion_count();
        }
    }

    /// ProcArrayApplyRecoveryInfo for the first running-xacts record a
    /// standby replays: KnownAssignedXids becomes exactly `running` (top
    /// xids and subxids — with `overflowed`, every xid the standby cannot
    /// rule out, see the module docs), `next_xid` at least `next_xid`,
    /// `latest_completed_xid` at least `latest_completed`; the completion
    /// counter is bumped (snapshots taken before are invalid).
    pub fn init_known_assigned(
        &self,
        running: &[TransactionId],
        overflowed: bool,
        next_xid: TransactionId,
        latest_completed: TransactionId,
    ) {
        let mut sorted = running.to_vec();
        sorted.sort_unstable();
        let mut st = self.state.write();
        let mut gen = self.xid_gen.lock();
        let kax = &mut st.known_assigned_xids;
        kax.clear();
        for x in sorted {
            kax.push(x);
        }
        if overflowed && next_xid.0 > 0 {
            kax.overflowed_xid = TransactionId(next_xid.0 - 1);
        }
        if *gen < next_xid {
            *gen = next_xid;
            self.next_xid_hint.store(gen.0, Ordering::Release);
        }
        drop(gen);
        st.advance_latest_completed(latest_completed);
        st.bump_completion_count();
    }

    /// KnownAssignedXids as a vector (tests, diagnostics).
    pub fn known_assigned(&self) -> Vec<TransactionId> {
        self.state.read().known_assigned_xids.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    fn t(x: u64) -> TransactionId {
        TransactionId(x)
    }

    /// What replay does to KnownAssignedXids.
    #[derive(Clone, Debug)]
    enum Op {
        /// Record xids up to `newest + n` (n ≥ 1).
        Assign(u64),
        /// Remove the i-th running xid (modulo the count), or an xid never
        /// added / already removed when none runs.
        Complete(usize),
        /// Remove an xid that is not running (a replayed abort of a
        /// subxid the array never held, a second completion).
        CompleteUnknown(u64),
        /// Running-xacts: forget xids below the i-th running one.
        Prune(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (1u64..6).prop_map(Op::Assign),
            5 => any::<usize>().prop_map(Op::Complete),
            1 => (0u64..400).prop_map(Op::CompleteUnknown),
            1 => any::<usize>().prop_map(Op::Prune),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Against a `BTreeSet` model: membership, oldest, the snapshot
        /// copy below any xmax, and invariants 1–3 after every step.
        #[test]
        fn matches_a_set(ops in proptest::collection::vec(op(), 1..400)) {
            let mut k = KnownAssignedXids::default();
            let mut model = BTreeSet::new();
            let mut newest = 2u64;
            for op in ops {
                match op {
                    Op::Assign(n) => {
                        for x in newest + 1..=newest + n {
                            k.push(t(x));
                            model.insert(x);
                        }
                        newest += n;
                    }
                    Op::Complete(i) => {
                        if let Some(&x) = model.iter().nth(i % model.len().max(1)) {
                            prop_assert!(k.remove(t(x)));
                            model.remove(&x);
                            k.maybe_compress();
                        }
                    }
                    Op::CompleteUnknown(x) => {
                        prop_assert_eq!(k.remove(t(x)), model.remove(&x));
                    }
                    Op::Prune(i) => {
                        let cut = model
                            .iter()
                            .nth(i % (model.len() + 1))
                            .copied()
                            .unwrap_or(newest + 1);
                        let gone = model.iter().filter(|x| **x < cut).count();
                        prop_assert_eq!(k.remove_preceding(t(cut)), gone);
                        model.retain(|x| *x >= cut);
                    }
                }
                k.check().map_err(TestCaseError::fail)?;
                prop_assert_eq!(k.num_valid, model.len());
                prop_assert_eq!(k.oldest(), model.first().map(|x| t(*x)));
                let xmax = newest.saturating_sub(3);
                let mut got = Vec::new();
                k.copy_running(t(xmax), &mut got);
                let want: Vec<_> = model.iter().filter(|x| **x < xmax).map(|x| t(*x)).collect();
                prop_assert_eq!(got, want);
                for x in newest.saturating_sub(8)..=newest + 1 {
                    prop_assert_eq!(k.contains(t(x)), model.contains(&x));
                }
                // Compression keeps the array within twice the running
                // count (plus the threshold) however many xids went by.
                prop_assert!(k.xids.len() <= 2 * k.num_valid + COMPRESS_MIN_SLOTS + 8);
            }
        }
    }

    /// 1,000 long-running xids and a window of 64 short ones behind them,
    /// finishing oldest first (removals in the middle): the long-running
    /// entries are not moved on each completion — compression runs about
    /// once per 1,000 removals — and the array stays within twice the
    /// running count.
    #[test]
    fn compression_is_amortised() {
        let mut k = KnownAssignedXids::default();
        for x in 3..1067 {
            k.push(t(x));
        }
        for next in 1067..101_067 {
            k.push(t(next));
            assert!(k.remove(t(next - 64)));
            k.maybe_compress();
            assert!(k.xids.len() <= 2 * k.num_valid + 1);
        }
        k.check().unwrap();
        assert_eq!(k.num_valid, 1064);
        // 100,000 removals, each compression needs ≥ 1,000 of them.
        assert!(
            (50..=100).contains(&k.compressions),
            "{} compressions",
            k.compressions
        );
    }

    /// The first running-xacts record bumps the completion counter: a
    /// standby session's snapshot cached before it (taken from an empty
    /// KnownAssignedXids) is not reused after it.
    #[test]
    fn first_running_xacts_bumps() {
        let pa = ProcArray::new(4, t(3));
        pa.set_in_recovery(true);
        let s = pa.connect(4).unwrap();
        let mut c = None;
        let before = pa.get_snapshot(s, &mut c);
        assert!(before.xip.is_empty());
        pa.init_known_assigned(&[t(5)], false, t(8), t(7));
        let after = pa.get_snapshot(s, &mut c);
        assert_eq!(after.xip, vec![t(5)], "running xid of the record listed");
        assert_eq!(after.xmax, t(8));
        assert_eq!(pa.stats().snapshots_computed, 2, "not reused");
    }

    /// A running-xacts record that expires an xid whose completion was
    /// never logged (the primary crashed) bumps the counter, even when
    /// `latest_completed_xid` is already past it: a cached snapshot that
    /// listed the xid as running is not reused.
    #[test]
    fn expiry_by_running_xacts_bumps() {
        let pa = ProcArray::new(4, t(3));
        pa.set_in_recovery(true);
        let s = pa.connect(4).unwrap();
        pa.init_known_assigned(&[], false, t(5), t(4));
        pa.record_known_assigned(t(6)); // 5 and 6 running
        pa.expire_tree_known_assigned(t(6), &[], t(6))
            .bump_completion_count();
        let mut c = None;
        let snap = pa.get_snapshot(s, &mut c);
        assert_eq!(snap.xip, vec![t(5)]);
        let reused = pa.stats().snapshots_reused;
        let _ = pa.get_snapshot(s, &mut c);
        assert_eq!(
            pa.stats().snapshots_reused,
            reused + 1,
            "cached snapshot reused"
        );
        // The primary crashed with 5 running; its next record says nothing
        // below 7 runs. latest_completed_xid (6) does not move.
        pa.prune_known_assigned(t(7));
        let snap = pa.get_snapshot(s, &mut c);
        assert!(
            snap.xip.is_empty(),
            "expired xid no longer running: {snap:?}"
        );
        assert!(!pa.xid_is_running(t(5)));
        // A record that expires nothing and advances nothing bumps nothing.
        let n = pa.xact_completion_count();
        pa.prune_known_assigned(t(7));
        assert_eq!(pa.xact_completion_count(), n);
    }

    /// Each replayed completion removes its tree and bumps once, through
    /// the returned guard; dropping the guard without the bump leaves the
    /// counter alone (the mutation the replay tests catch).
    #[test]
    fn expire_tree_then_bump() {
        let pa = ProcArray::new(4, t(3));
        pa.set_in_recovery(true);
        pa.init_known_assigned(&[], false, t(3), t(2));
        pa.record_known_assigned(t(9));
        let n = pa.xact_completion_count();
        pa.expire_tree_known_assigned(t(4), &[t(6), t(7), t(42)], t(7))
            .bump_completion_count();
        assert_eq!(pa.xact_completion_count(), n + 1);
        assert_eq!(pa.known_assigned(), vec![t(3), t(5), t(8), t(9)]);
        assert_eq!(pa.latest_completed_xid(), t(7));
        let guard = pa.expire_tree_known_assigned(t(3), &[], t(3));
        drop(guard);
        assert_eq!(pa.xact_completion_count(), n + 1);
        assert_eq!(pa.known_assigned(), vec![t(5), t(8), t(9)]);
    }

    /// An overflowed first running-xacts record: the caller hands over
    /// every unfinished xid from the oldest running one (a subxid the
    /// record could not list among them). Snapshots are suboverflowed
    /// until a record's oldest running xid passes the overflow point, and
    /// the unlisted subxid of the still-running transaction counts as
    /// running both in snapshots and for `xid_is_running`.
    #[test]
    fn overflowed_running_xacts() {
        let pa = ProcArray::new(4, t(3));
        pa.set_in_recovery(true);
        let s = pa.connect(4).unwrap();
        // Primary: top 10 with subxids 11..=80 (overflowed: 11..=74 listed
        // at most, say none), 81 committed, next xid 82.
        let running: Vec<_> = (10..=80).map(t).collect();
        pa.init_known_assigned(&running, true, t(82), t(81));
        let mut c = None;
        let snap = pa.get_snapshot(s, &mut c);
        assert!(snap.suboverflowed, "overflowed known set: {snap:?}");
        let parent = |x: TransactionId| pa.subtrans().parent(x);
        assert!(snap.xid_in_snapshot(t(77), &parent), "unlisted subxid runs");
        assert!(
            !snap.xid_in_snapshot(t(81), &parent),
            "committed xid visible"
        );
        assert!(pa.xid_is_running(t(77)));
        // The transaction commits; a later record says 82 is the oldest.
        let subs: Vec<_> = (11..=80).map(t).collect();
        pa.expire_tree_known_assigned(t(10), &subs, t(80))
            .bump_completion_count();
        pa.record_known_assigned(t(83));
        pa.prune_known_assigned(t(82));
        let snap = pa.get_snapshot(s, &mut c);
        assert!(!snap.suboverflowed, "overflow resolved: {snap:?}");
        assert_eq!(snap.xip, Vec::<TransactionId>::new());
        assert!(!pa.xid_is_running(t(77)));
    }
}
