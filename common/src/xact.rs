//! Per-session transaction state (xact.c). OWNER: transactions helper (T).
//! Skeleton: the methods below are what the SQL layer calls; fill them in,
//! add what you need, keep these names.

use std::sync::Arc;

use crate::error::PgResult;
use crate::snapshot::Snapshot;
use crate::types::{CommandId, TransactionId};
use crate::visibility::OwnXact;

/// Isolation level of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IsolationLevel {
    /// A new snapshot per statement (the default).
    #[default]
    ReadCommitted,
    /// One snapshot for the whole transaction; write conflicts raise 40001.
    RepeatableRead,
}

/// The transaction status byte of ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// `I`: not in a transaction block.
    Idle,
    /// `T`: in a transaction block.
    InBlock,
    /// `E`: in a failed transaction block (25P02 until ROLLBACK).
    Failed,
}

impl TxStatus {
    /// The byte sent in ReadyForQuery.
    pub fn byte(self) -> u8 {
        match self {
            TxStatus::Idle => b'I',
            TxStatus::InBlock => b'T',
            TxStatus::Failed => b'E',
        }
    }
}

/// One session's transaction machinery: its proc slot, the block state
/// (idle / implicit / explicit block / failed block), subtransactions, the
/// command counter and the snapshot cache.
pub struct Xact {
    _private: (),
}

impl Xact {
    /// Placeholder for the contract; T decides the real constructor, e.g.
    /// `Xact::new(shared: Arc<TxnShared>) -> PgResult<Xact>` (53300 when no
    /// proc slot is free).
    pub fn status(&self) -> TxStatus {
        todo!("T")
    }
    /// The snapshot for the statement starting now (RC: fresh or cached by
    /// completion count; RR: the transaction's first).
    pub fn statement_snapshot(&mut self) -> Arc<Snapshot> {
        todo!("T")
    }
    /// The xid of the current (sub)transaction, assigning one on first write.
    pub fn assign_xid(&mut self) -> PgResult<TransactionId> {
        todo!("T")
    }
    /// The own-transaction view for visibility checks.
    pub fn own(&self) -> OwnXact<'_> {
        todo!("T")
    }
    /// CommandCounterIncrement after a writing statement.
    pub fn command_counter_increment(&mut self) {
        todo!("T")
    }
    /// The current command id.
    pub fn curcid(&self) -> CommandId {
        todo!("T")
    }
}
