//! The commit log. OWNER: transactions helper (T). Skeleton: the API below is
//! the contract used by visibility checks and commit/abort.

use std::path::Path;

use crate::error::PgResult;
use crate::types::TransactionId;

/// Final (or not) state of a transaction: two bits per xid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XidStatus {
    /// Not finished (or crashed before finishing: treated as aborted once no
    /// proc has it).
    InProgress,
    /// Committed.
    Committed,
    /// Aborted.
    Aborted,
    /// A subtransaction whose parent is still deciding.
    SubCommitted,
}

/// Two bits per xid in files under `DIR/pg_xact`, with cached pages.
pub struct Clog {
    _private: (),
}

impl Clog {
    /// Opens (creating if needed) the clog under `dir`.
    pub fn open(dir: &Path) -> PgResult<Clog> {
        let _ = dir;
        todo!("T: Clog::open")
    }
    /// The status of `xid`. FROZEN and BOOTSTRAP are always committed.
    pub fn get_status(&self, xid: TransactionId) -> XidStatus {
        let _ = xid;
        todo!("T: Clog::get_status")
    }
    /// Records the final status of a transaction tree (top xid + subxids).
    pub fn set_status(&self, xid: TransactionId, subxids: &[TransactionId], status: XidStatus) {
        let _ = (xid, subxids, status);
        todo!("T: Clog::set_status")
    }
    /// Writes dirty pages to disk (checkpoint, clean shutdown).
    pub fn flush(&self) -> PgResult<()> {
        todo!("T: Clog::flush")
    }
}
