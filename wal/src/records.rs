//! Typed WAL records and their payload encoding (PostgreSQL's `rmgrdesc`
//! world: one resource manager per subsystem, an `info` byte per kind).
//!
//! | rmgr (id)      | info | record                                   |
//! |----------------|------|------------------------------------------|
//! | Xlog (0)       | 0x00 | checkpoint, shutdown                     |
//! |                | 0x10 | checkpoint, online                       |
//! |                | 0x20 | noop                                     |
//! |                | 0x40 | switch (rest of the segment unused)      |
//! |                | 0x50 | backup end                               |
//! |                | 0xA0 | full-page image                          |
//! | Xact (1)       | 0x00 | commit · 0x10 prepare · 0x20 abort       |
//! |                | 0x30 | commit prepared · 0x40 abort prepared    |
//! | Smgr (2)       | 0x10 | create · 0x20 truncate · 0x30 drop       |
//! | Standby (8)    | 0x10 | running xacts                            |
//! | Heap2 (9)      | 0x10 | prune · 0x50 multi-insert (+0x80 init)   |
//! | Heap (10)      | 0x00 | insert · 0x10 delete · 0x20 update       |
//! |                | 0x40 | HOT update; any of them +0x80 init page  |
//! | Catalog (20)   | 0x00 | opaque catalog/DDL change (SQL layer)    |
//!
//! The numbers follow PostgreSQL where it has the record (so `pg_waldump`
//! habits carry over); `Catalog` is ours. Payloads are little-endian;
//! variable parts carry a u32 count or length before them. The xid of the
//! writing transaction is in the record header, not repeated here, except
//! in xact records where the finished xid may differ from the writer's
//! (COMMIT PREPARED is written by another session).
//!
//! Decoding is total: any byte string yields a record or a [`DecodeError`],
//! never a panic, and never allocates more than the input could describe
//! (counts are checked against the bytes left before allocating).
//! Relation and block numbers are plain `u32` here: `common` has the
//! newtypes, and `common` depends on `wal`, not the other way round.

use std::fmt;

use bytes::Bytes;

use pgtypes::lsn::Lsn;
use pgtypes::{BlockNumber, CommandId, Oid, RelFileId, TransactionId};

/// Size of a heap page and of a full-page image.
pub const BLCKSZ: usize = 8192;

/// Resource managers: which subsystem a record belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RmgrId {
    /// WAL itself: checkpoints, switch, noop, backup end, full-page images.
    Xlog = 0,
    /// Transaction completion.
    Xact = 1,
    /// Relation files.
    Smgr = 2,
    /// Information for hot standbys.
    Standby = 8,
    /// Heap operations that touch many tuples.
    Heap2 = 9,
    /// Heap tuple operations.
    Heap = 10,
    /// Catalog / DDL changes encoded by the SQL layer.
    Catalog = 20,
}

impl RmgrId {
    /// The rmgr for an id byte, if it is one.
    pub fn from_u8(v: u8) -> Option<RmgrId> {
        Some(match v {
            0 => RmgrId::Xlog,
            1 => RmgrId::Xact,
            2 => RmgrId::Smgr,
            8 => RmgrId::Standby,
            9 => RmgrId::Heap2,
            10 => RmgrId::Heap,
            20 => RmgrId::Catalog,
            _ => return None,
        })
    }
}

/// Xlog: shutdown checkpoint.
pub const XLOG_CHECKPOINT_SHUTDOWN: u8 = 0x00;
/// Xlog: online checkpoint.
pub const XLOG_CHECKPOINT_ONLINE: u8 = 0x10;
/// Xlog: no-op.
pub const XLOG_NOOP: u8 = 0x20;
/// Xlog: segment switch.
pub const XLOG_SWITCH: u8 = 0x40;
/// Xlog: end of a base backup.
pub const XLOG_BACKUP_END: u8 = 0x50;
/// Xlog: full-page image.
pub const XLOG_FPI: u8 = 0xA0;
/// Xact: commit.
pub const XLOG_XACT_COMMIT: u8 = 0x00;
/// Xact: prepare.
pub const XLOG_XACT_PREPARE: u8 = 0x10;
/// Xact: abort.
pub const XLOG_XACT_ABORT: u8 = 0x20;
/// Xact: commit prepared.
pub const XLOG_XACT_COMMIT_PREPARED: u8 = 0x30;
/// Xact: abort prepared.
pub const XLOG_XACT_ABORT_PREPARED: u8 = 0x40;
/// Smgr: create.
pub const XLOG_SMGR_CREATE: u8 = 0x10;
/// Smgr: truncate.
pub const XLOG_SMGR_TRUNCATE: u8 = 0x20;
/// Smgr: drop.
pub const XLOG_SMGR_DROP: u8 = 0x30;
/// Standby: running xacts.
pub const XLOG_RUNNING_XACTS: u8 = 0x10;
/// Heap: insert.
pub const XLOG_HEAP_INSERT: u8 = 0x00;
/// Heap: delete.
pub const XLOG_HEAP_DELETE: u8 = 0x10;
/// Heap: update.
pub const XLOG_HEAP_UPDATE: u8 = 0x20;
/// Heap: HOT update (new version on the same page, no index entries).
pub const XLOG_HEAP_HOT_UPDATE: u8 = 0x40;
/// Heap/Heap2 flag: the (new) page is initialised from empty before the change.
pub const XLOG_HEAP_INIT_PAGE: u8 = 0x80;
/// Heap2: prune.
pub const XLOG_HEAP2_PRUNE: u8 = 0x10;
/// Heap2: multi-insert.
pub const XLOG_HEAP2_MULTI_INSERT: u8 = 0x50;
/// Catalog: opaque change.
pub const XLOG_CATALOG_CHANGE: u8 = 0x00;

/// The flags byte of a Heap2 MULTI_INSERT payload, whose layout is
///
/// ```text
///  rel u32 | block u32 | flags u8 | cmin u32 | infomask u16 | ntuples u16
///  CONSECUTIVE:  first_offset u16, then per tuple: datalen u16 | data
///  otherwise:    per tuple: offset u16 | datalen u16 | data
/// ```
///
/// A page filled from empty, or appended to without reusing a line
/// pointer a prune freed, takes consecutive offsets (PostgreSQL omits
/// them for an initialised page only); then each tuple costs two bytes
/// beyond its data.
pub struct MultiInsertFlags;

impl MultiInsertFlags {
    /// xmin is frozen.
    pub const FROZEN: u8 = 0x01;
    /// Offsets are `first_offset`, `first_offset + 1`, … and not logged
    /// per tuple.
    pub const CONSECUTIVE: u8 = 0x02;
    /// Every defined bit; a payload with another is rejected.
    pub const ALL: u8 = Self::FROZEN | Self::CONSECUTIVE;
}

/// True when `offsets` are `first, first + 1, …` (an empty list counts).
pub fn offsets_consecutive(mut offsets: impl Iterator<Item = u16>) -> bool {
    let Some(first) = offsets.next() else {
        return true;
    };
    let mut prev = first;
    offsets.all(|o| {
        let next = prev.checked_add(1) == Some(o);
        prev = o;
        next
    })
}

/// Why a payload could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The payload ends before the record does.
    #[error("record payload is truncated")]
    Truncated,
    /// Bytes are left over after the record.
    #[error("record payload has {0} trailing bytes")]
    TrailingBytes(usize),
    /// No such resource manager.
    #[error("invalid resource manager ID {0}")]
    UnknownRmgr(u8),
    /// No such record kind in this resource manager.
    #[error("unknown info 0x{info:02X} for resource manager {rmid}")]
    UnknownInfo {
        /// The rmgr.
        rmid: u8,
        /// The info byte.
        info: u8,
    },
    /// A full-page image is not exactly one page.
    #[error("full-page image is {0} bytes, expected {BLCKSZ}")]
    BadPageSize(usize),
    /// A string field is not UTF-8.
    #[error("string field is not valid UTF-8")]
    BadUtf8,
    /// A field holds an impossible value.
    #[error("invalid field value: {0}")]
    InvalidValue(&'static str),
}

/// Heap tuple changes (rmgrs Heap and Heap2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeapRecord {
    /// One tuple inserted.
    Insert {
        /// Relation.
        rel: RelFileId,
        /// Block number.
        block: BlockNumber,
        /// Line pointer number (1-based).
        offset: u16,
        /// The tuple, header and data, as stored on the page.
        tuple: Bytes,
        /// The page is initialised (empty) before the insert.
        init_page: bool,
    },
    /// Several tuples inserted on one page (COPY, multi-row INSERT). The
    /// tuples share one header, so only the part redo cannot rebuild is
    /// logged, once: xmin is the record's xid (or frozen), xmax and cmax
    /// are unset, and each ctid is the tuple's own address. Per tuple there
    /// is only its data and, when the offsets are not consecutive, its
    /// line pointer (layout: [`MultiInsertFlags`]).
    MultiInsert {
        /// Relation.
        rel: RelFileId,
        /// Block number.
        block: BlockNumber,
        /// xmin is [`TransactionId::FROZEN`] rather than the record's xid
        /// (COPY FREEZE).
        frozen: bool,
        /// The inserting command, the same for every tuple.
        cmin: CommandId,
        /// The tuples' infomask (defined by the heap AM), the same for
        /// every tuple.
        infomask: u16,
        /// (line pointer number, tuple data after the header) pairs. A
        /// page holds far fewer than 2^16 tuples, and each is shorter than
        /// a page: counts and lengths are logged as u16.
        tuples: Vec<(u16, Bytes)>,
        /// The page is initialised (empty) before the inserts.
        init_page: bool,
    },
    /// A tuple replaced by a new version.
    Update {
        /// Relation.
        rel: RelFileId,
        /// Block of the old version.
        old_block: BlockNumber,
        /// Line pointer of the old version.
        old_offset: u16,
        /// Block of the new version (= old_block for HOT).
        new_block: BlockNumber,
        /// Line pointer of the new version.
        new_offset: u16,
        /// Xmax stamped on the old version.
        xmax: TransactionId,
        /// Infomask bits set on the old version (defined by the heap AM).
        old_infobits: u8,
        /// A HOT update (same page, no new index entries).
        hot: bool,
        /// The new version's page is initialised before the insert.
        init_page: bool,
        /// The new version, header and data.
        new_tuple: Bytes,
    },
    /// A tuple deleted (xmax set).
    Delete {
        /// Relation.
        rel: RelFileId,
        /// Block number.
        block: BlockNumber,
        /// Line pointer.
        offset: u16,
        /// Xmax stamped on the tuple.
        xmax: TransactionId,
        /// Infomask bits set on the tuple (defined by the heap AM).
        infobits: u8,
    },
    /// Dead tuples removed from a page (heap_page_prune_execute).
    Prune {
        /// Relation.
        rel: RelFileId,
        /// Block number.
        block: BlockNumber,
        /// Newest xmax among removed tuples: standby queries whose xmin is
        /// at or before it conflict with this record.
        latest_removed_xid: TransactionId,
        /// Line pointers redirected (from, to): HOT chain roots.
        redirected: Vec<(u16, u16)>,
        /// Line pointers made dead (kept for index entries).
        dead: Vec<u16>,
        /// Line pointers made unused.
        unused: Vec<u16>,
    },
}

/// WAL-internal records (rmgr Xlog).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XlogRecord {
    /// A checkpoint: redo may start at `redo`.
    Checkpoint {
        /// Where redo must start to recover from this checkpoint.
        redo: Lsn,
        /// Next xid to assign.
        next_xid: TransactionId,
        /// Oldest xid running when the checkpoint started (0 = none).
        oldest_active_xid: TransactionId,
        /// Next OID to assign (catalog).
        next_oid: Oid,
        /// Written while running (true) or at shutdown (false).
        online: bool,
        /// Time, microseconds since 2000-01-01 UTC.
        timestamp_us: i64,
    },
    /// End of a base backup that started at `start`.
    BackupEnd {
        /// The backup's start (redo) LSN.
        start: Lsn,
    },
    /// Segment switch: the rest of the current segment is unused.
    Switch,
    /// Does nothing; carries filler bytes (tests, benchmarks).
    Noop {
        /// Filler.
        data: Bytes,
    },
    /// A full image of one page, logged at its first change after a
    /// checkpoint's redo point (torn-page protection).
    FullPageImage {
        /// Relation.
        rel: RelFileId,
        /// Fork number (0 = main).
        fork: u8,
        /// Block number.
        block: BlockNumber,
        /// The page, exactly [`BLCKSZ`] bytes.
        page: Bytes,
    },
}

/// Transaction completion (rmgr Xact). Timestamps are microseconds since
/// 2000-01-01 UTC (PostgreSQL's TimestampTz).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XactRecord {
    /// Committed.
    Commit {
        /// Top-level xid.
        xid: TransactionId,
        /// Committed subtransaction xids.
        subxids: Vec<TransactionId>,
        /// Commit time.
        timestamp_us: i64,
    },
    /// Aborted.
    Abort {
        /// Top-level xid.
        xid: TransactionId,
        /// Aborted subtransaction xids.
        subxids: Vec<TransactionId>,
        /// Abort time.
        timestamp_us: i64,
    },
    /// Prepared for two-phase commit (completes nothing).
    Prepare {
        /// Top-level xid.
        xid: TransactionId,
        /// Subtransaction xids.
        subxids: Vec<TransactionId>,
        /// Prepare time (pg_prepared_xacts.prepared).
        timestamp_us: i64,
        /// Global transaction id.
        gid: String,
        /// Opaque state the 2PC layer needs to rebuild the transaction
        /// (owner, database, locks).
        state: Bytes,
    },
    /// A prepared transaction committed.
    CommitPrepared {
        /// The prepared transaction's xid.
        xid: TransactionId,
        /// Its subtransaction xids.
        subxids: Vec<TransactionId>,
        /// Commit time.
        timestamp_us: i64,
        /// Its gid.
        gid: String,
    },
    /// A prepared transaction rolled back.
    AbortPrepared {
        /// The prepared transaction's xid.
        xid: TransactionId,
        /// Its subtransaction xids.
        subxids: Vec<TransactionId>,
        /// Abort time.
        timestamp_us: i64,
        /// Its gid.
        gid: String,
    },
}

/// Information for hot standbys (rmgr Standby).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StandbyRecord {
    /// The primary's running transactions (LogStandbySnapshot).
    RunningXacts {
        /// Next xid to be assigned.
        next_xid: TransactionId,
        /// Oldest running xid (next_xid if none).
        oldest_running_xid: TransactionId,
        /// Latest completed xid.
        latest_completed_xid: TransactionId,
        /// Running top-level xids.
        xids: Vec<TransactionId>,
        /// Running subxids (incomplete if overflowed).
        subxids: Vec<TransactionId>,
        /// Some proc's subxid cache overflowed.
        subxid_overflow: bool,
    },
}

/// Relation file changes (rmgr Smgr).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SmgrRecord {
    /// A relation's file created.
    RelCreate {
        /// Relation.
        rel: RelFileId,
    },
    /// A relation truncated to `nblocks`.
    RelTruncate {
        /// Relation.
        rel: RelFileId,
        /// New length in blocks.
        nblocks: BlockNumber,
    },
    /// A relation's file dropped.
    RelDrop {
        /// Relation.
        rel: RelFileId,
    },
}

/// Any WAL record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalRecord {
    /// Heap / Heap2.
    Heap(HeapRecord),
    /// Xlog.
    Xlog(XlogRecord),
    /// Xact.
    Xact(XactRecord),
    /// Standby.
    Standby(StandbyRecord),
    /// Smgr.
    Smgr(SmgrRecord),
    /// An opaque catalog/DDL change, encoded and replayed by the SQL layer.
    Catalog {
        /// The SQL layer's encoding.
        payload: Bytes,
    },
}

/// A page a record changes: what redo compares the page LSN against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockRef {
    /// Relation.
    pub rel: RelFileId,
    /// Fork (0 = main).
    pub fork: u8,
    /// Block number.
    pub block: BlockNumber,
}

fn flag(b: bool, bit: u8) -> u8 {
    if b {
        bit
    } else {
        0
    }
}

impl WalRecord {
    /// The resource manager and info byte this record is written with.
    pub fn rmgr_info(&self) -> (RmgrId, u8) {
        use HeapRecord as H;
        match self {
            WalRecord::Heap(h) => match h {
                H::Insert { init_page, .. } => (
                    RmgrId::Heap,
                    XLOG_HEAP_INSERT | flag(*init_page, XLOG_HEAP_INIT_PAGE),
                ),
                H::Delete { .. } => (RmgrId::Heap, XLOG_HEAP_DELETE),
                H::Update { hot, init_page, .. } => (
                    RmgrId::Heap,
                    if *hot {
                        XLOG_HEAP_HOT_UPDATE
                    } else {
                        XLOG_HEAP_UPDATE
                    } | flag(*init_page, XLOG_HEAP_INIT_PAGE),
                ),
                H::MultiInsert { init_page, .. } => (
                    RmgrId::Heap2,
                    XLOG_HEAP2_MULTI_INSERT | flag(*init_page, XLOG_HEAP_INIT_PAGE),
                ),
                H::Prune { .. } => (RmgrId::Heap2, XLOG_HEAP2_PRUNE),
            },
            WalRecord::Xlog(x) => (
                RmgrId::Xlog,
                match x {
                    XlogRecord::Checkpoint { online: true, .. } => XLOG_CHECKPOINT_ONLINE,
                    XlogRecord::Checkpoint { online: false, .. } => XLOG_CHECKPOINT_SHUTDOWN,
                    XlogRecord::BackupEnd { .. } => XLOG_BACKUP_END,
                    XlogRecord::Switch => XLOG_SWITCH,
                    XlogRecord::Noop { .. } => XLOG_NOOP,
                    XlogRecord::FullPageImage { .. } => XLOG_FPI,
                },
            ),
            WalRecord::Xact(x) => (
                RmgrId::Xact,
                match x {
                    XactRecord::Commit { .. } => XLOG_XACT_COMMIT,
                    XactRecord::Abort { .. } => XLOG_XACT_ABORT,
                    XactRecord::Prepare { .. } => XLOG_XACT_PREPARE,
                    XactRecord::CommitPrepared { .. } => XLOG_XACT_COMMIT_PREPARED,
                    XactRecord::AbortPrepared { .. } => XLOG_XACT_ABORT_PREPARED,
                },
            ),
            WalRecord::Standby(StandbyRecord::RunningXacts { .. }) => {
                (RmgrId::Standby, XLOG_RUNNING_XACTS)
            }
            WalRecord::Smgr(s) => (
                RmgrId::Smgr,
                match s {
                    SmgrRecord::RelCreate { .. } => XLOG_SMGR_CREATE,
                    SmgrRecord::RelTruncate { .. } => XLOG_SMGR_TRUNCATE,
                    SmgrRecord::RelDrop { .. } => XLOG_SMGR_DROP,
                },
            ),
            WalRecord::Catalog { .. } => (RmgrId::Catalog, XLOG_CATALOG_CHANGE),
        }
    }

    /// Appends the payload encoding to `out` (no header).
    pub fn encode_payload(&self, out: &mut Vec<u8>) {
        let mut w = Enc(out);
        match self {
            WalRecord::Heap(h) => match h {
                HeapRecord::Insert {
                    rel,
                    block,
                    offset,
                    tuple,
                    ..
                } => {
                    w.u32(rel.0);
                    w.u32(block.0);
                    w.u16(*offset);
                    w.bytes(tuple);
                }
                HeapRecord::MultiInsert {
                    rel,
                    block,
                    frozen,
                    cmin,
                    infomask,
                    tuples,
                    ..
                } => {
                    let consecutive = offsets_consecutive(tuples.iter().map(|(o, _)| *o));
                    w.u32(rel.0);
                    w.u32(block.0);
                    w.u8(flag(*frozen, MultiInsertFlags::FROZEN)
                        | flag(consecutive, MultiInsertFlags::CONSECUTIVE));
                    w.u32(cmin.0);
                    w.u16(*infomask);
                    w.u16(tuples.len() as u16);
                    if consecutive {
                        w.u16(tuples.first().map_or(0, |(o, _)| *o));
                    }
                    for (off, t) in tuples {
                        if !consecutive {
                            w.u16(*off);
                        }
                        w.u16(t.len() as u16);
                        w.raw(t);
                    }
                }
                HeapRecord::Update {
                    rel,
                    old_block,
                    old_offset,
                    new_block,
                    new_offset,
                    xmax,
                    old_infobits,
                    new_tuple,
                    ..
                } => {
                    w.u32(rel.0);
                    w.u32(old_block.0);
                    w.u16(*old_offset);
                    w.u32(new_block.0);
                    w.u16(*new_offset);
                    w.u64(xmax.0);
                    w.u8(*old_infobits);
                    w.bytes(new_tuple);
                }
                HeapRecord::Delete {
                    rel,
                    block,
                    offset,
                    xmax,
                    infobits,
                } => {
                    w.u32(rel.0);
                    w.u32(block.0);
                    w.u16(*offset);
                    w.u64(xmax.0);
                    w.u8(*infobits);
                }
                HeapRecord::Prune {
                    rel,
                    block,
                    latest_removed_xid,
                    redirected,
                    dead,
                    unused,
                } => {
                    w.u32(rel.0);
                    w.u32(block.0);
                    w.u64(latest_removed_xid.0);
                    w.u32(redirected.len() as u32);
                    for (from, to) in redirected {
                        w.u16(*from);
                        w.u16(*to);
                    }
                    w.u16s(dead);
                    w.u16s(unused);
                }
            },
            WalRecord::Xlog(x) => match x {
                XlogRecord::Checkpoint {
                    redo,
                    next_xid,
                    oldest_active_xid,
                    next_oid,
                    timestamp_us,
                    ..
                } => {
                    w.u64(redo.0);
                    w.u64(next_xid.0);
                    w.u64(oldest_active_xid.0);
                    w.u32(*next_oid);
                    w.i64(*timestamp_us);
                }
                XlogRecord::BackupEnd { start } => w.u64(start.0),
                XlogRecord::Switch => {}
                XlogRecord::Noop { data } => w.raw(data),
                XlogRecord::FullPageImage {
                    rel,
                    fork,
                    block,
                    page,
                } => {
                    w.u32(rel.0);
                    w.u8(*fork);
                    w.u32(block.0);
                    w.raw(page);
                }
            },
            WalRecord::Xact(x) => match x {
                XactRecord::Commit {
                    xid,
                    subxids,
                    timestamp_us,
                }
                | XactRecord::Abort {
                    xid,
                    subxids,
                    timestamp_us,
                } => {
                    w.u64(xid.0);
                    w.i64(*timestamp_us);
                    w.xids(subxids);
                }
                XactRecord::Prepare {
                    xid,
                    subxids,
                    timestamp_us,
                    gid,
                    state,
                } => {
                    w.u64(xid.0);
                    w.i64(*timestamp_us);
                    w.xids(subxids);
                    w.bytes(gid.as_bytes());
                    w.bytes(state);
                }
                XactRecord::CommitPrepared {
                    xid,
                    subxids,
                    timestamp_us,
                    gid,
                }
                | XactRecord::AbortPrepared {
                    xid,
                    subxids,
                    timestamp_us,
                    gid,
                } => {
                    w.u64(xid.0);
                    w.i64(*timestamp_us);
                    w.xids(subxids);
                    w.bytes(gid.as_bytes());
                }
            },
            WalRecord::Standby(StandbyRecord::RunningXacts {
                next_xid,
                oldest_running_xid,
                latest_completed_xid,
                xids,
                subxids,
                subxid_overflow,
            }) => {
                w.u64(next_xid.0);
                w.u64(oldest_running_xid.0);
                w.u64(latest_completed_xid.0);
                w.u8(u8::from(*subxid_overflow));
                w.xids(xids);
                w.xids(subxids);
            }
            WalRecord::Smgr(s) => match s {
                SmgrRecord::RelCreate { rel } | SmgrRecord::RelDrop { rel } => w.u32(rel.0),
                SmgrRecord::RelTruncate { rel, nblocks } => {
                    w.u32(rel.0);
                    w.u32(nblocks.0);
                }
            },
            WalRecord::Catalog { payload } => w.raw(payload),
        }
    }

    /// Decodes a payload written with `rmid` / `info`. Tuples and pages in
    /// the result share `payload`'s memory.
    pub fn decode(rmid: u8, info: u8, payload: &Bytes) -> Result<WalRecord, DecodeError> {
        let rm = RmgrId::from_u8(rmid).ok_or(DecodeError::UnknownRmgr(rmid))?;
        let unknown = || DecodeError::UnknownInfo { rmid, info };
        let mut r = Dec {
            buf: payload,
            pos: 0,
        };
        let rec = match rm {
            RmgrId::Heap => {
                let init_page = info & XLOG_HEAP_INIT_PAGE != 0;
                match info & !XLOG_HEAP_INIT_PAGE {
                    XLOG_HEAP_INSERT => WalRecord::Heap(HeapRecord::Insert {
                        rel: RelFileId(r.u32()?),
                        block: BlockNumber(r.u32()?),
                        offset: r.u16()?,
                        tuple: r.bytes()?,
                        init_page,
                    }),
                    XLOG_HEAP_DELETE if !init_page => WalRecord::Heap(HeapRecord::Delete {
                        rel: RelFileId(r.u32()?),
                        block: BlockNumber(r.u32()?),
                        offset: r.u16()?,
                        xmax: TransactionId(r.u64()?),
                        infobits: r.u8()?,
                    }),
                    kind @ (XLOG_HEAP_UPDATE | XLOG_HEAP_HOT_UPDATE) => {
                        WalRecord::Heap(HeapRecord::Update {
                            rel: RelFileId(r.u32()?),
                            old_block: BlockNumber(r.u32()?),
                            old_offset: r.u16()?,
                            new_block: BlockNumber(r.u32()?),
                            new_offset: r.u16()?,
                            xmax: TransactionId(r.u64()?),
                            old_infobits: r.u8()?,
                            hot: kind == XLOG_HEAP_HOT_UPDATE,
                            init_page,
                            new_tuple: r.bytes()?,
                        })
                    }
                    _ => return Err(unknown()),
                }
            }
            RmgrId::Heap2 => {
                let init_page = info & XLOG_HEAP_INIT_PAGE != 0;
                match info & !XLOG_HEAP_INIT_PAGE {
                    XLOG_HEAP2_MULTI_INSERT => {
                        let rel = RelFileId(r.u32()?);
                        let block = BlockNumber(r.u32()?);
                        let flags = r.u8()?;
                        if flags & !MultiInsertFlags::ALL != 0 {
                            return Err(DecodeError::InvalidValue("multi-insert flags"));
                        }
                        let consecutive = flags & MultiInsertFlags::CONSECUTIVE != 0;
                        let cmin = CommandId(r.u32()?);
                        let infomask = r.u16()?;
                        let n = usize::from(r.u16()?);
                        // Each tuple needs its length, and its offset unless implied.
                        r.check_left(n, if consecutive { 2 } else { 4 })?;
                        let mut next = if consecutive { r.u16()? } else { 0 };
                        if consecutive && usize::from(next) + n > usize::from(u16::MAX) + 1 {
                            return Err(DecodeError::InvalidValue("multi-insert offsets"));
                        }
                        let mut tuples = Vec::with_capacity(n);
                        for _ in 0..n {
                            let off = if consecutive {
                                let o = next;
                                next = next.wrapping_add(1);
                                o
                            } else {
                                r.u16()?
                            };
                            let len = usize::from(r.u16()?);
                            tuples.push((off, r.slice(len)?));
                        }
                        WalRecord::Heap(HeapRecord::MultiInsert {
                            rel,
                            block,
                            frozen: flags & MultiInsertFlags::FROZEN != 0,
                            cmin,
                            infomask,
                            tuples,
                            init_page,
                        })
                    }
                    XLOG_HEAP2_PRUNE if !init_page => {
                        let rel = RelFileId(r.u32()?);
                        let block = BlockNumber(r.u32()?);
                        let latest_removed_xid = TransactionId(r.u64()?);
                        let n = r.count(4)?;
                        let mut redirected = Vec::with_capacity(n);
                        for _ in 0..n {
                            redirected.push((r.u16()?, r.u16()?));
                        }
                        let dead = r.u16s()?;
                        let unused = r.u16s()?;
                        WalRecord::Heap(HeapRecord::Prune {
                            rel,
                            block,
                            latest_removed_xid,
                            redirected,
                            dead,
                            unused,
                        })
                    }
                    _ => return Err(unknown()),
                }
            }
            RmgrId::Xlog => WalRecord::Xlog(match info {
                XLOG_CHECKPOINT_ONLINE | XLOG_CHECKPOINT_SHUTDOWN => XlogRecord::Checkpoint {
                    redo: Lsn(r.u64()?),
                    next_xid: TransactionId(r.u64()?),
                    oldest_active_xid: TransactionId(r.u64()?),
                    next_oid: r.u32()?,
                    timestamp_us: r.i64()?,
                    online: info == XLOG_CHECKPOINT_ONLINE,
                },
                XLOG_BACKUP_END => XlogRecord::BackupEnd {
                    start: Lsn(r.u64()?),
                },
                XLOG_SWITCH => XlogRecord::Switch,
                XLOG_NOOP => XlogRecord::Noop { data: r.rest() },
                XLOG_FPI => {
                    let rel = RelFileId(r.u32()?);
                    let fork = r.u8()?;
                    let block = BlockNumber(r.u32()?);
                    let page = r.rest();
                    if page.len() != BLCKSZ {
                        return Err(DecodeError::BadPageSize(page.len()));
                    }
                    XlogRecord::FullPageImage {
                        rel,
                        fork,
                        block,
                        page,
                    }
                }
                _ => return Err(unknown()),
            }),
            RmgrId::Xact => WalRecord::Xact(match info {
                XLOG_XACT_COMMIT | XLOG_XACT_ABORT => {
                    let xid = TransactionId(r.u64()?);
                    let timestamp_us = r.i64()?;
                    let subxids = r.xids()?;
                    if info == XLOG_XACT_COMMIT {
                        XactRecord::Commit {
                            xid,
                            subxids,
                            timestamp_us,
                        }
                    } else {
                        XactRecord::Abort {
                            xid,
                            subxids,
                            timestamp_us,
                        }
                    }
                }
                XLOG_XACT_PREPARE => XactRecord::Prepare {
                    xid: TransactionId(r.u64()?),
                    timestamp_us: r.i64()?,
                    subxids: r.xids()?,
                    gid: r.string()?,
                    state: r.bytes()?,
                },
                XLOG_XACT_COMMIT_PREPARED | XLOG_XACT_ABORT_PREPARED => {
                    let xid = TransactionId(r.u64()?);
                    let timestamp_us = r.i64()?;
                    let subxids = r.xids()?;
                    let gid = r.string()?;
                    if info == XLOG_XACT_COMMIT_PREPARED {
                        XactRecord::CommitPrepared {
                            xid,
                            subxids,
                            timestamp_us,
                            gid,
                        }
                    } else {
                        XactRecord::AbortPrepared {
                            xid,
                            subxids,
                            timestamp_us,
                            gid,
                        }
                    }
                }
                _ => return Err(unknown()),
            }),
            RmgrId::Standby => match info {
                XLOG_RUNNING_XACTS => {
                    let next_xid = TransactionId(r.u64()?);
                    let oldest_running_xid = TransactionId(r.u64()?);
                    let latest_completed_xid = TransactionId(r.u64()?);
                    let subxid_overflow = match r.u8()? {
                        0 => false,
                        1 => true,
                        _ => return Err(DecodeError::InvalidValue("subxid_overflow")),
                    };
                    WalRecord::Standby(StandbyRecord::RunningXacts {
                        next_xid,
                        oldest_running_xid,
                        latest_completed_xid,
                        xids: r.xids()?,
                        subxids: r.xids()?,
                        subxid_overflow,
                    })
                }
                _ => return Err(unknown()),
            },
            RmgrId::Smgr => WalRecord::Smgr(match info {
                XLOG_SMGR_CREATE => SmgrRecord::RelCreate {
                    rel: RelFileId(r.u32()?),
                },
                XLOG_SMGR_TRUNCATE => SmgrRecord::RelTruncate {
                    rel: RelFileId(r.u32()?),
                    nblocks: BlockNumber(r.u32()?),
                },
                XLOG_SMGR_DROP => SmgrRecord::RelDrop {
                    rel: RelFileId(r.u32()?),
                },
                _ => return Err(unknown()),
            }),
            RmgrId::Catalog => match info {
                XLOG_CATALOG_CHANGE => WalRecord::Catalog { payload: r.rest() },
                _ => return Err(unknown()),
            },
        };
        r.finish()?;
        Ok(rec)
    }

    /// The pages this record changes (redo applies it to each page whose
    /// LSN is older than the record). Appends to `out` so redo can reuse one
    /// vector.
    pub fn blocks(&self, out: &mut Vec<BlockRef>) {
        let main = |rel: RelFileId, block: BlockNumber| BlockRef {
            rel,
            fork: 0,
            block,
        };
        match self {
            WalRecord::Heap(h) => match h {
                HeapRecord::Insert { rel, block, .. }
                | HeapRecord::MultiInsert { rel, block, .. }
                | HeapRecord::Delete { rel, block, .. }
                | HeapRecord::Prune { rel, block, .. } => out.push(main(*rel, *block)),
                HeapRecord::Update {
                    rel,
                    old_block,
                    new_block,
                    ..
                } => {
                    out.push(main(*rel, *new_block));
                    if old_block != new_block {
                        out.push(main(*rel, *old_block));
                    }
                }
            },
            WalRecord::Xlog(XlogRecord::FullPageImage {
                rel, fork, block, ..
            }) => out.push(BlockRef {
                rel: *rel,
                fork: *fork,
                block: *block,
            }),
            _ => {}
        }
    }
}

/// A pg_waldump-style one-line description.
impl fmt::Display for WalRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WalRecord::Heap(h) => match h {
                HeapRecord::Insert { rel, block, offset, init_page, .. } => {
                    write!(f, "Heap INSERT{} rel {rel} blk {block} off {offset}", if *init_page { "+INIT" } else { "" })
                }
                HeapRecord::MultiInsert { rel, block, frozen, cmin, tuples, init_page, .. } => write!(
                    f,
                    "Heap2 MULTI_INSERT{} rel {rel} blk {block} ntuples {} cmin {}{}",
                    if *init_page { "+INIT" } else { "" },
                    tuples.len(),
                    cmin.0,
                    if *frozen { " frozen" } else { "" }
                ),
                HeapRecord::Update { rel, old_block, old_offset, new_block, new_offset, xmax, hot, .. } => write!(
                    f,
                    "Heap {} rel {rel} off {old_block}/{old_offset} xmax {xmax} -> {new_block}/{new_offset}",
                    if *hot { "HOT_UPDATE" } else { "UPDATE" }
                ),
                HeapRecord::Delete { rel, block, offset, xmax, .. } => {
                    write!(f, "Heap DELETE rel {rel} blk {block} off {offset} xmax {xmax}")
                }
                HeapRecord::Prune { rel, block, latest_removed_xid, redirected, dead, unused } => write!(
                    f,
                    "Heap2 PRUNE rel {rel} blk {block} latestRemovedXid {latest_removed_xid} nredirected {} ndead {} nunused {}",
                    redirected.len(),
                    dead.len(),
                    unused.len()
                ),
            },
            WalRecord::Xlog(x) => match x {
                XlogRecord::Checkpoint { redo, next_xid, oldest_active_xid, online, .. } => write!(
                    f,
                    "XLOG CHECKPOINT_{} redo {redo}; next xid {next_xid}; oldest running xid {oldest_active_xid}",
                    if *online { "ONLINE" } else { "SHUTDOWN" }
                ),
                XlogRecord::BackupEnd { start } => write!(f, "XLOG BACKUP_END {start}"),
                XlogRecord::Switch => write!(f, "XLOG SWITCH"),
                XlogRecord::Noop { data } => write!(f, "XLOG NOOP len {}", data.len()),
                XlogRecord::FullPageImage { rel, fork, block, .. } => {
                    write!(f, "XLOG FPI rel {rel} fork {fork} blk {block}")
                }
            },
            WalRecord::Xact(x) => match x {
                XactRecord::Commit { xid, subxids, .. } => {
                    write!(f, "Transaction COMMIT {xid} subxacts {:?}", raw_xids(subxids))
                }
                XactRecord::Abort { xid, subxids, .. } => {
                    write!(f, "Transaction ABORT {xid} subxacts {:?}", raw_xids(subxids))
                }
                XactRecord::Prepare { xid, gid, .. } => write!(f, "Transaction PREPARE {xid} gid {gid}"),
                XactRecord::CommitPrepared { xid, gid, .. } => {
                    write!(f, "Transaction COMMIT_PREPARED {xid} gid {gid}")
                }
                XactRecord::AbortPrepared { xid, gid, .. } => write!(f, "Transaction ABORT_PREPARED {xid} gid {gid}"),
            },
            WalRecord::Standby(StandbyRecord::RunningXacts {
                next_xid,
                oldest_running_xid,
                latest_completed_xid,
                xids,
                subxid_overflow,
                ..
            }) => write!(
                f,
                "Standby RUNNING_XACTS nextXid {next_xid} latestCompletedXid {latest_completed_xid} oldestRunningXid {oldest_running_xid}; {} xacts{}",
                xids.len(),
                if *subxid_overflow { "; subxid overflowed" } else { "" }
            ),
            WalRecord::Smgr(s) => match s {
                SmgrRecord::RelCreate { rel } => write!(f, "Storage CREATE rel {rel}"),
                SmgrRecord::RelTruncate { rel, nblocks } => write!(f, "Storage TRUNCATE rel {rel} to {nblocks} blocks"),
                SmgrRecord::RelDrop { rel } => write!(f, "Storage DROP rel {rel}"),
            },
            WalRecord::Catalog { payload } => write!(f, "Catalog CHANGE len {}", payload.len()),
        }
    }
}

/// Xids as bare numbers, the way record descriptions print them.
fn raw_xids(v: &[TransactionId]) -> Vec<u64> {
    v.iter().map(|x| x.0).collect()
}

/// Little-endian payload writer.
struct Enc<'a>(&'a mut Vec<u8>);

impl Enc<'_> {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn raw(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    /// u32 length, then the bytes.
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.raw(b);
    }
    fn u16s(&mut self, v: &[u16]) {
        self.u32(v.len() as u32);
        for x in v {
            self.u16(*x);
        }
    }
    fn xids(&mut self, v: &[TransactionId]) {
        self.u32(v.len() as u32);
        for x in v {
            self.u64(x.0);
        }
    }
}

/// Little-endian payload reader; every read is bounds-checked.
struct Dec<'a> {
    buf: &'a Bytes,
    pos: usize,
}

impl Dec<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::Truncated)?;
        let s = self.buf.get(self.pos..end).ok_or(DecodeError::Truncated)?;
        self.pos = end;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.arr::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.arr()?))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.arr()?))
    }
    /// A u32 element count, checked against the bytes left (each element
    /// takes at least `min_elem` bytes) so garbage cannot make us allocate.
    fn count(&mut self, min_elem: usize) -> Result<usize, DecodeError> {
        let n = self.u32()? as usize;
        self.check_left(n, min_elem)?;
        Ok(n)
    }
    /// Like [`Dec::count`] for a count read otherwise: `n` elements of at
    /// least `min_elem` bytes must fit in what is left.
    fn check_left(&self, n: usize, min_elem: usize) -> Result<(), DecodeError> {
        let left = self.buf.len() - self.pos;
        if n.checked_mul(min_elem).is_none_or(|need| need > left) {
            return Err(DecodeError::Truncated);
        }
        Ok(())
    }
    fn bytes(&mut self) -> Result<Bytes, DecodeError> {
        let n = self.u32()? as usize;
        self.slice(n)
    }
    /// The next `n` bytes, sharing the payload's memory.
    fn slice(&mut self, n: usize) -> Result<Bytes, DecodeError> {
        let start = self.pos;
        self.take(n)?;
        Ok(self.buf.slice(start..start + n))
    }
    fn rest(&mut self) -> Bytes {
        let b = self.buf.slice(self.pos..);
        self.pos = self.buf.len();
        b
    }
    fn string(&mut self) -> Result<String, DecodeError> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| DecodeError::BadUtf8)
    }
    fn u16s(&mut self) -> Result<Vec<u16>, DecodeError> {
        let n = self.count(2)?;
        (0..n).map(|_| self.u16()).collect()
    }
    fn xids(&mut self) -> Result<Vec<TransactionId>, DecodeError> {
        let n = self.count(8)?;
        (0..n).map(|_| self.u64().map(TransactionId)).collect()
    }
    fn finish(&self) -> Result<(), DecodeError> {
        match self.buf.len() - self.pos {
            0 => Ok(()),
            n => Err(DecodeError::TrailingBytes(n)),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn bytes_s(max: usize) -> impl Strategy<Value = Bytes> {
        vec(any::<u8>(), 0..max).prop_map(Bytes::from)
    }

    /// Multi-insert tuples with arbitrary offsets, and with consecutive
    /// ones (the compact layout), up to the last offset there is.
    fn multi_insert_tuples() -> impl Strategy<Value = Vec<(u16, Bytes)>> {
        prop_oneof![
            vec((any::<u16>(), bytes_s(64)), 0..20),
            (
                prop_oneof![Just(u16::MAX - 19), 1..=u16::MAX - 19],
                vec(bytes_s(64), 0..20)
            )
                .prop_map(|(first, data)| data
                    .into_iter()
                    .enumerate()
                    .map(|(i, d)| (first + i as u16, d))
                    .collect()),
        ]
    }

    fn heap() -> impl Strategy<Value = WalRecord> {
        prop_oneof![
            (
                any::<u32>(),
                any::<u32>(),
                any::<u16>(),
                bytes_s(300),
                any::<bool>()
            )
                .prop_map(|(rel, block, offset, tuple, init_page)| {
                    HeapRecord::Insert {
                        rel: RelFileId(rel),
                        block: BlockNumber(block),
                        offset,
                        tuple,
                        init_page,
                    }
                }),
            (
                (any::<u32>(), any::<u32>()),
                (any::<bool>(), any::<u32>(), any::<u16>()),
                multi_insert_tuples(),
                any::<bool>()
            )
                .prop_map(
                    |((rel, block), (frozen, cmin, infomask), tuples, init_page)| {
                        HeapRecord::MultiInsert {
                            rel: RelFileId(rel),
                            block: BlockNumber(block),
                            frozen,
                            cmin: CommandId(cmin),
                            infomask,
                            tuples,
                            init_page,
                        }
                    }
                ),
            (
                any::<u32>(),
                (any::<u32>(), any::<u16>(), any::<u32>(), any::<u16>()),
                any::<u64>(),
                any::<u8>(),
                any::<bool>(),
                any::<bool>(),
                bytes_s(300)
            )
                .prop_map(
                    |(
                        rel,
                        (old_block, old_offset, new_block, new_offset),
                        xmax,
                        old_infobits,
                        hot,
                        init_page,
                        new_tuple,
                    )| {
                        HeapRecord::Update {
                            rel: RelFileId(rel),
                            old_block: BlockNumber(old_block),
                            old_offset,
                            new_block: BlockNumber(new_block),
                            new_offset,
                            xmax: TransactionId(xmax),
                            old_infobits,
                            hot,
                            init_page,
                            new_tuple,
                        }
                    }
                ),
            (
                any::<u32>(),
                any::<u32>(),
                any::<u16>(),
                any::<u64>(),
                any::<u8>()
            )
                .prop_map(|(rel, block, offset, xmax, infobits)| HeapRecord::Delete {
                    rel: RelFileId(rel),
                    block: BlockNumber(block),
                    offset,
                    xmax: TransactionId(xmax),
                    infobits
                }),
            (
                any::<u32>(),
                any::<u32>(),
                any::<u64>(),
                vec((any::<u16>(), any::<u16>()), 0..20),
                vec(any::<u16>(), 0..20),
                vec(any::<u16>(), 0..20)
            )
                .prop_map(
                    |(rel, block, latest_removed_xid, redirected, dead, unused)| {
                        HeapRecord::Prune {
                            rel: RelFileId(rel),
                            block: BlockNumber(block),
                            latest_removed_xid: TransactionId(latest_removed_xid),
                            redirected,
                            dead,
                            unused,
                        }
                    }
                ),
        ]
        .prop_map(WalRecord::Heap)
    }

    fn xlog() -> impl Strategy<Value = WalRecord> {
        prop_oneof![
            (
                any::<u64>(),
                any::<u64>(),
                any::<u64>(),
                any::<u32>(),
                any::<bool>(),
                any::<i64>()
            )
                .prop_map(
                    |(redo, next_xid, oldest_active_xid, next_oid, online, timestamp_us)| {
                        XlogRecord::Checkpoint {
                            redo: Lsn(redo),
                            next_xid: TransactionId(next_xid),
                            oldest_active_xid: TransactionId(oldest_active_xid),
                            next_oid,
                            online,
                            timestamp_us,
                        }
                    }
                ),
            any::<u64>().prop_map(|s| XlogRecord::BackupEnd { start: Lsn(s) }),
            Just(XlogRecord::Switch),
            bytes_s(200).prop_map(|data| XlogRecord::Noop { data }),
            (any::<u32>(), any::<u8>(), any::<u32>(), any::<u8>()).prop_map(
                |(rel, fork, block, fill)| {
                    XlogRecord::FullPageImage {
                        rel: RelFileId(rel),
                        fork,
                        block: BlockNumber(block),
                        page: Bytes::from(vec![fill; BLCKSZ]),
                    }
                }
            ),
        ]
        .prop_map(WalRecord::Xlog)
    }

    fn xact() -> impl Strategy<Value = WalRecord> {
        let subx = || vec(any::<u64>(), 0..10);
        prop_oneof![
            (any::<u64>(), subx(), any::<i64>()).prop_map(|(xid, subxids, timestamp_us)| {
                XactRecord::Commit {
                    xid: TransactionId(xid),
                    subxids: subxids.into_iter().map(TransactionId).collect(),
                    timestamp_us,
                }
            }),
            (any::<u64>(), subx(), any::<i64>()).prop_map(|(xid, subxids, timestamp_us)| {
                XactRecord::Abort {
                    xid: TransactionId(xid),
                    subxids: subxids.into_iter().map(TransactionId).collect(),
                    timestamp_us,
                }
            }),
            (any::<u64>(), subx(), any::<i64>(), ".{0,40}", bytes_s(100)).prop_map(
                |(xid, subxids, timestamp_us, gid, state)| XactRecord::Prepare {
                    xid: TransactionId(xid),
                    subxids: subxids.into_iter().map(TransactionId).collect(),
                    timestamp_us,
                    gid,
                    state
                }
            ),
            (any::<u64>(), subx(), any::<i64>(), ".{0,40}").prop_map(
                |(xid, subxids, timestamp_us, gid)| {
                    XactRecord::CommitPrepared {
                        xid: TransactionId(xid),
                        subxids: subxids.into_iter().map(TransactionId).collect(),
                        timestamp_us,
                        gid,
                    }
                }
            ),
            (any::<u64>(), subx(), any::<i64>(), ".{0,40}").prop_map(
                |(xid, subxids, timestamp_us, gid)| {
                    XactRecord::AbortPrepared {
                        xid: TransactionId(xid),
                        subxids: subxids.into_iter().map(TransactionId).collect(),
                        timestamp_us,
                        gid,
                    }
                }
            ),
        ]
        .prop_map(WalRecord::Xact)
    }

    fn other() -> impl Strategy<Value = WalRecord> {
        prop_oneof![
            (
                any::<u64>(),
                any::<u64>(),
                any::<u64>(),
                vec(any::<u64>(), 0..20),
                vec(any::<u64>(), 0..20),
                any::<bool>()
            )
                .prop_map(
                    |(
                        next_xid,
                        oldest_running_xid,
                        latest_completed_xid,
                        xids,
                        subxids,
                        subxid_overflow,
                    )| {
                        WalRecord::Standby(StandbyRecord::RunningXacts {
                            next_xid: TransactionId(next_xid),
                            oldest_running_xid: TransactionId(oldest_running_xid),
                            latest_completed_xid: TransactionId(latest_completed_xid),
                            xids: xids.into_iter().map(TransactionId).collect(),
                            subxids: subxids.into_iter().map(TransactionId).collect(),
                            subxid_overflow,
                        })
                    }
                ),
            any::<u32>().prop_map(|rel| WalRecord::Smgr(SmgrRecord::RelCreate {
                rel: RelFileId(rel)
            })),
            (any::<u32>(), any::<u32>()).prop_map(|(rel, nblocks)| WalRecord::Smgr(
                SmgrRecord::RelTruncate {
                    rel: RelFileId(rel),
                    nblocks: BlockNumber(nblocks)
                }
            )),
            any::<u32>().prop_map(|rel| WalRecord::Smgr(SmgrRecord::RelDrop {
                rel: RelFileId(rel)
            })),
            bytes_s(200).prop_map(|payload| WalRecord::Catalog { payload }),
        ]
    }

    /// Any record.
    pub(crate) fn any_record() -> impl Strategy<Value = WalRecord> {
        prop_oneof![heap(), xlog(), xact(), other()]
    }

    fn round_trip(rec: &WalRecord) -> Result<WalRecord, DecodeError> {
        let mut out = Vec::new();
        rec.encode_payload(&mut out);
        let (rm, info) = rec.rmgr_info();
        WalRecord::decode(rm as u8, info, &Bytes::from(out))
    }

    proptest! {
        #[test]
        fn heap_round_trip(rec in heap()) {
            prop_assert_eq!(round_trip(&rec), Ok(rec));
        }

        #[test]
        fn xlog_round_trip(rec in xlog()) {
            prop_assert_eq!(round_trip(&rec), Ok(rec));
        }

        #[test]
        fn xact_round_trip(rec in xact()) {
            prop_assert_eq!(round_trip(&rec), Ok(rec));
        }

        #[test]
        fn standby_smgr_catalog_round_trip(rec in other()) {
            prop_assert_eq!(round_trip(&rec), Ok(rec));
        }

        /// Every proper prefix of a payload with a fixed layout is rejected,
        /// never panics; and so is the payload with a byte appended.
        #[test]
        fn truncated_or_extended_payload_is_an_error(rec in any_record()) {
            let mut out = Vec::new();
            rec.encode_payload(&mut out);
            let (rm, info) = rec.rmgr_info();
            for cut in 0..out.len() {
                let r = WalRecord::decode(rm as u8, info, &Bytes::copy_from_slice(&out[..cut]));
                // Records ending in an opaque "rest" field accept prefixes
                // that shorten it; all others must fail.
                if let Ok(d) = r {
                    prop_assert!(matches!(d, WalRecord::Xlog(XlogRecord::Noop { .. }) | WalRecord::Catalog { .. }), "prefix {} accepted", cut);
                }
            }
            out.push(0);
            let r = WalRecord::decode(rm as u8, info, &Bytes::from(out));
            if r.is_ok() {
                prop_assert!(matches!(rec, WalRecord::Xlog(XlogRecord::Noop { .. }) | WalRecord::Catalog { .. }), "extended payload accepted");
            }
        }

        #[test]
        fn garbage_never_panics(rmid in any::<u8>(), info in any::<u8>(), payload in vec(any::<u8>(), 0..64)) {
            let _ = WalRecord::decode(rmid, info, &Bytes::from(payload));
        }
    }

    #[test]
    fn huge_counts_do_not_allocate() {
        // A commit claiming 2^32-1 subxids in a 20-byte payload.
        let mut p = vec![0u8; 16];
        p.extend_from_slice(&u32::MAX.to_le_bytes());
        let r = WalRecord::decode(RmgrId::Xact as u8, XLOG_XACT_COMMIT, &Bytes::from(p));
        assert_eq!(r, Err(DecodeError::Truncated));
    }

    fn multi_insert(first: u16, offsets_step: u16, n: u16) -> WalRecord {
        WalRecord::Heap(HeapRecord::MultiInsert {
            rel: RelFileId(16384),
            block: BlockNumber(7),
            frozen: true,
            cmin: CommandId(2),
            infomask: 0x0900,
            tuples: (0..n)
                .map(|i| (first + i * offsets_step, Bytes::from(vec![i as u8; 10])))
                .collect(),
            init_page: true,
        })
    }

    #[test]
    fn multi_insert_logs_data_length_and_offsets_only_when_needed() {
        let head = 4 + 4 + 1 + 4 + 2 + 2;
        let mut out = Vec::new();
        multi_insert(1, 1, 3).encode_payload(&mut out);
        assert_eq!(
            out.len(),
            head + 2 + 3 * (2 + 10),
            "consecutive: one first offset"
        );
        assert_eq!(
            out[8],
            MultiInsertFlags::FROZEN | MultiInsertFlags::CONSECUTIVE
        );
        out.clear();
        multi_insert(1, 2, 3).encode_payload(&mut out);
        assert_eq!(
            out.len(),
            head + 3 * (2 + 2 + 10),
            "gaps: an offset per tuple"
        );
        assert_eq!(out[8], MultiInsertFlags::FROZEN);
        assert_eq!(
            multi_insert(1, 1, 3).to_string(),
            "Heap2 MULTI_INSERT+INIT rel 16384 blk 7 ntuples 3 cmin 2 frozen"
        );
    }

    #[test]
    fn malformed_multi_insert_is_an_error() {
        let info = XLOG_HEAP2_MULTI_INSERT | XLOG_HEAP_INIT_PAGE;
        let decode =
            |p: &[u8]| WalRecord::decode(RmgrId::Heap2 as u8, info, &Bytes::copy_from_slice(p));
        let mut good = Vec::new();
        multi_insert(1, 1, 3).encode_payload(&mut good);
        let mut p = good.clone();
        p[8] |= 0x80;
        assert_eq!(
            decode(&p),
            Err(DecodeError::InvalidValue("multi-insert flags"))
        );
        // Consecutive offsets running past the last line pointer number.
        let mut p = good.clone();
        p[17..19].copy_from_slice(&(u16::MAX - 1).to_le_bytes());
        assert_eq!(
            decode(&p),
            Err(DecodeError::InvalidValue("multi-insert offsets"))
        );
        // A count the bytes left cannot hold.
        let mut p = good.clone();
        p[15..17].copy_from_slice(&u16::MAX.to_le_bytes());
        assert_eq!(decode(&p), Err(DecodeError::Truncated));
        // A tuple length past the end.
        let mut p = good;
        p[19..21].copy_from_slice(&200u16.to_le_bytes());
        assert_eq!(decode(&p), Err(DecodeError::Truncated));
    }

    #[test]
    fn display_and_blocks() {
        let rec = WalRecord::Heap(HeapRecord::Update {
            rel: RelFileId(16384),
            old_block: BlockNumber(1),
            old_offset: 2,
            new_block: BlockNumber(3),
            new_offset: 4,
            xmax: TransactionId(750),
            old_infobits: 0,
            hot: false,
            init_page: true,
            new_tuple: Bytes::new(),
        });
        assert_eq!(
            rec.to_string(),
            "Heap UPDATE rel 16384 off 1/2 xmax 750 -> 3/4"
        );
        assert_eq!(
            rec.rmgr_info(),
            (RmgrId::Heap, XLOG_HEAP_UPDATE | XLOG_HEAP_INIT_PAGE)
        );
        let mut b = Vec::new();
        rec.blocks(&mut b);
        assert_eq!(
            b,
            vec![
                BlockRef {
                    rel: RelFileId(16384),
                    fork: 0,
                    block: BlockNumber(3)
                },
                BlockRef {
                    rel: RelFileId(16384),
                    fork: 0,
                    block: BlockNumber(1)
                }
            ]
        );
    }
}
