//! A session's transaction-block status, as ReadyForQuery reports it
//! (PostgreSQL's `TransactionBlockStatusCode`).

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
