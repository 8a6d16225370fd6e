//! Replay of transaction records (PostgreSQL's `xact_redo`): the one
//! routine crash recovery and a standby's continuous replay share.
//!
//! | record | clog | procarray | completion counter | prepared registry |
//! |---|---|---|---|---|
//! | COMMIT / ABORT | top and subxids | xids removed, `latest_completed_xid` advanced | bumped | — |
//! | COMMIT / ROLLBACK PREPARED | same | same (the dummy proc or KnownAssignedXids) | bumped | entry and state file removed |
//! | PREPARE | — | — | not bumped: nothing completed | registered (dummy proc after redo) |
//!
//! Why the bump matters: a standby session reuses its cached snapshot
//! while the procarray's completion counter has not moved. A replayed
//! completion that did not bump it would leave every long-lived session
//! blind to the rows that transaction committed (PostgreSQL's September
//! 2020 bug). Each completion sets the clog first (as a primary's commit
//! does: a snapshot that no longer lists the xid must find its outcome),
//! then removes the xids from KnownAssignedXids
//! ([`ProcArray::expire_tree_known_assigned`]) and bumps the counter before
//! ProcArrayLock is released. The four record kinds do this on four
//! separate lines of [`redo`], so that a test per kind
//! (`tap-tests/tests/022_completion_counter.rs`) fails if that kind's bump
//! is lost. A subtransaction's abort (ROLLBACK TO SAVEPOINT) is an ABORT
//! record whose xid is the subxid: it takes the ABORT line.
//!
//! Every xid a record names was assigned by the primary: `next_xid` moves
//! past it (in crash recovery it is how xid assignment resumes after the
//! last replayed xid) and, on a standby whose KnownAssignedXids were
//! initialised by a running-xacts record, the range up to it is recorded
//! as assigned before the completion removes it again.

use wal::XactRecord;

use crate::{Engine, Role};
use pgtypes::TransactionId;
use txn::clog::XidStatus;
use txn::procarray::ProcArray;

/// Replays one transaction record. `known_assigned` is true on a standby
/// once KnownAssignedXids track the primary's running xids (after the
/// first running-xacts or shutdown checkpoint record); it is ignored in
/// crash recovery.
pub fn redo(engine: &Engine, x: &XactRecord, known_assigned: bool) {
    let (xid, subxids) = match x {
        XactRecord::Commit { xid, subxids, .. }
        | XactRecord::CommitPrepared { xid, subxids, .. }
        | XactRecord::Abort { xid, subxids, .. }
        | XactRecord::AbortPrepared { xid, subxids, .. }
        | XactRecord::Prepare { xid, subxids, .. } => (*xid, subxids.as_slice()),
    };
    let latest = subxids.iter().copied().fold(xid, TransactionId::max);
    let pa: &ProcArray = &engine.procarray;
    if engine.role() == Role::Standby && known_assigned {
        pa.record_known_assigned(latest);
    }
    if latest.is_normal() {
        pa.advance_next_xid(latest);
    }
    let clog = engine.clog();
    match x {
        XactRecord::Commit { .. } => {
            clog.set_status(xid, subxids, XidStatus::Committed);
            pa.expire_tree_known_assigned(xid, subxids, latest)
                .bump_completion_count();
        }
        XactRecord::Abort { .. } => {
            clog.set_status(xid, subxids, XidStatus::Aborted);
            pa.expire_tree_known_assigned(xid, subxids, latest)
                .bump_completion_count();
        }
        XactRecord::CommitPrepared { .. } => {
            clog.set_status(xid, subxids, XidStatus::Committed);
            pa.expire_tree_known_assigned(xid, subxids, latest)
                .bump_completion_count();
            // Forget the prepared transaction and delete its state file.
            crate::twophase::redo_finish(engine, xid, subxids, true);
        }
        XactRecord::AbortPrepared { .. } => {
            clog.set_status(xid, subxids, XidStatus::Aborted);
            pa.expire_tree_known_assigned(xid, subxids, latest)
                .bump_completion_count();
            crate::twophase::redo_finish(engine, xid, subxids, false);
        }
        XactRecord::Prepare {
            timestamp_us,
            gid,
            state,
            ..
        } => {
            // Completes nothing: the xids stay running. The node gives the
            // transaction its dummy proc after redo (or at promotion).
            crate::twophase::redo_prepare(engine, xid, subxids, *timestamp_us, gid, state);
        }
    }
}
