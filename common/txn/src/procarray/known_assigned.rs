//! KnownAssignedXids: the standby half of the procarray
//! (PostgreSQL's `KnownAssignedXids*` and `ProcArrayApplyRecoveryInfo`).
//!
//! On a standby no session runs a transaction; the primary's do. Replay
//! tracks their xids in `known_assigned_xids`, a sorted array under
//! ProcArrayLock, and standby snapshots are built from it exactly as a
//! primary's are built from the dense `xids` array — with the same
//! completion-counter cache:
//!
//! * every xid a replayed record names is *recorded* with the range below
//!   it (`record_known_assigned`), so an xid assigned on the primary but
//!   not yet seen in WAL is still treated as running;
//! * a replayed completion removes it through the procarray's one
//!   completion path (`ProcArray::end_transaction`, `Finished::Recovered`),
//!   which bumps the counter;
//! * a running-xacts record initialises the array (the first one,
//!   [`ProcArray::init_known_assigned`]) or expires what the primary has
//!   finished ([`ProcArray::prune_known_assigned`]); both bump the counter
//!   when they change what a snapshot would see;
//! * promotion ends it ([`ProcArray::orphaned_known_assigned`],
//!   [`ProcArray::end_recovery`]).
//!
//! Lock order as in the parent module: ProcArrayLock, then XidGenLock.

use std::sync::atomic::Ordering;

use pgtypes::TransactionId;

use super::ProcArray;

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
        let latest = latest_aborted.max(st.latest_completed_xid);
        Self::complete_locked(&mut st, latest);
    }

    /// KnownAssignedXidsAdd: records that the primary assigned every xid from
    /// `next_xid` up to `xid` (inclusive) and advances `next_xid`.
    pub fn record_known_assigned(&self, xid: TransactionId) {
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

    /// KnownAssignedXidsRemovePreceding (running-xacts record): forgets known
    /// xids older than `oldest_running`, which the primary has finished.
    pub fn prune_known_assigned(&self, oldest_running: TransactionId) {
        let mut st = self.state.write();
        st.known_assigned_xids.retain(|x| *x >= oldest_running);
        // Their completion was not replayed one by one: count it once.
        if oldest_running.0 > 0 && TransactionId(oldest_running.0 - 1) > st.latest_completed_xid {
            Self::complete_locked(&mut st, TransactionId(oldest_running.0 - 1));
        }
    }

    /// ProcArrayApplyRecoveryInfo for the first running-xacts record a
    /// standby replays: KnownAssignedXids becomes exactly `running` (top
    /// xids and subxids), `next_xid` at least `next_xid`,
    /// `latest_completed_xid` at least `latest_completed`; the completion
    /// counter is bumped (snapshots taken before are invalid).
    pub fn init_known_assigned(
        &self,
        running: &[TransactionId],
        next_xid: TransactionId,
        latest_completed: TransactionId,
    ) {
        let mut st = self.state.write();
        let mut gen = self.xid_gen.lock();
        st.known_assigned_xids.clear();
        st.known_assigned_xids.extend_from_slice(running);
        st.known_assigned_xids.sort_unstable();
        st.known_assigned_xids.dedup();
        if *gen < next_xid {
            *gen = next_xid;
            self.next_xid_hint.store(gen.0, Ordering::Release);
        }
        drop(gen);
        Self::complete_locked(&mut st, latest_completed);
    }

    /// KnownAssignedXids as a vector (tests, diagnostics).
    pub fn known_assigned(&self) -> Vec<TransactionId> {
        self.state.read().known_assigned_xids.clone()
    }
}
