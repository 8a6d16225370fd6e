//! Identifier newtypes shared by every layer. They speak PostgreSQL: a reader
//! who knows `TransactionId`, `BlockNumber` or `ItemPointer` from the C source
//! finds the same meaning here (with 64-bit xids: no wraparound, no freezing).

use std::fmt;

/// A 64-bit transaction id. 0 is invalid; 1 is the bootstrap xid, 2 the
/// frozen xid (rows that every snapshot sees, e.g. `COPY … FREEZE`); normal
/// xids start at 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TransactionId(pub u64);

impl TransactionId {
    /// No transaction.
    pub const INVALID: TransactionId = TransactionId(0);
    /// The bootstrap transaction (catalog rows made at initdb).
    pub const BOOTSTRAP: TransactionId = TransactionId(1);
    /// Always committed and visible to everyone.
    pub const FROZEN: TransactionId = TransactionId(2);
    /// The first xid handed out to a real transaction.
    pub const FIRST_NORMAL: TransactionId = TransactionId(3);

    /// True unless this is [`TransactionId::INVALID`].
    pub fn is_valid(self) -> bool {
        self.0 != 0
    }
    /// True for xids handed out to real transactions.
    pub fn is_normal(self) -> bool {
        self.0 >= Self::FIRST_NORMAL.0
    }
    /// The next xid.
    pub fn next(self) -> TransactionId {
        TransactionId(self.0 + 1)
    }
}

impl fmt::Display for TransactionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Command id inside one transaction: each statement that writes increments
/// it, so a statement does not see its own changes but later ones do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct CommandId(pub u32);

impl CommandId {
    /// The first command of a transaction.
    pub const FIRST: CommandId = CommandId(0);
    /// "No command id" (stored as cmax of a tuple nobody deleted).
    pub const INVALID: CommandId = CommandId(u32::MAX);
}

/// A PostgreSQL object id (type oids, relation oids).
pub type Oid = u32;

/// The file number of a relation: `DIR/base/<RelFileId>` (+ `_fsm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RelFileId(pub u32);

impl fmt::Display for RelFileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Which file of a relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ForkNumber {
    /// The heap pages.
    Main = 0,
    /// The free space map.
    Fsm = 1,
}

/// A page number inside one fork of a relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BlockNumber(pub u32);

impl BlockNumber {
    /// "No block".
    pub const INVALID: BlockNumber = BlockNumber(u32::MAX);
}

impl fmt::Display for BlockNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Names one page: the key of the buffer mapping table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BufferTag {
    /// The relation.
    pub rel: RelFileId,
    /// The fork.
    pub fork: ForkNumber,
    /// The block.
    pub block: BlockNumber,
}

/// Size of a page in bytes.
pub const BLCKSZ: usize = 8192;

/// A tuple's address: block and 1-based line pointer offset (PostgreSQL's
/// `ctid`, printed `(block,offset)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ItemPointer {
    /// The heap page.
    pub block: BlockNumber,
    /// The line pointer number, starting at 1.
    pub offset: u16,
}

impl fmt::Display for ItemPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.block.0, self.offset)
    }
}

/// Index of a proc slot in the procarray's fixed table (PostgreSQL's
/// ProcNumber).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcNumber(pub u32);

/// A WAL timeline (PostgreSQL's TimeLineID). Every node runs on timeline
/// 1 until promotions start new ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeLineId(pub u32);

impl fmt::Display for TimeLineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
