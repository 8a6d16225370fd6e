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
//! 2020 bug). Every completion therefore goes through
//! [`crate::xact::end_transaction_tree`], the path a primary's own commits
//! take, which updates the clog and then ends the transaction in the
//! procarray under its exclusive lock.
//!
//! Every xid a record names was assigned by the primary: `next_xid` moves
//! past it (in crash recovery it is how xid assignment resumes after the
//! last replayed xid) and, on a standby whose KnownAssignedXids were
//! initialised by a running-xacts record, the range up to it is recorded
//! as assigned before the completion removes it again.

use wal::XactRecord;

use crate::xact::{end_transaction_tree, TreeEnd};
use crate::{Engine, Role};
use pgtypes::TransactionId;
use txn::clog::XidStatus;
use txn::procarray::Finished;

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
    let pa = &engine.procarray;
    if engine.role() == Role::Standby && known_assigned {
        pa.record_known_assigned(latest);
    }
    if latest.is_normal() {
        pa.advance_next_xid(latest);
    }
    let status = match x {
        XactRecord::Commit { .. } | XactRecord::CommitPrepared { .. } => XidStatus::Committed,
        XactRecord::Abort { .. } | XactRecord::AbortPrepared { .. } => XidStatus::Aborted,
        XactRecord::Prepare {
            timestamp_us,
            gid,
            state,
            ..
        } => {
            // Completes nothing: the xids stay running. The node gives the
            // transaction its dummy proc after redo (or at promotion).
            crate::twophase::redo_prepare(engine, xid, subxids, *timestamp_us, gid, state);
            return;
        }
    };
    // Replayed: nothing is written, so nothing can fail.
    let _ = end_transaction_tree(
        engine,
        Some(Finished::Recovered { xid, subxids }),
        xid,
        subxids,
        TreeEnd::Replayed {
            commit: status == XidStatus::Committed,
        },
        || {},
    );
    if matches!(
        x,
        XactRecord::CommitPrepared { .. } | XactRecord::AbortPrepared { .. }
    ) {
        // Forget the prepared transaction and delete its state file.
        crate::twophase::redo_finish(engine, xid, subxids, status == XidStatus::Committed);
    }
}
