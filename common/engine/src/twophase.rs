//! # Two-phase commit (twophase.c)
//!
//! `PREPARE TRANSACTION 'gid'` ends a session's transaction without
//! finishing it: the transaction's xid and subxids move to a *dummy proc* in
//! the procarray ([`ProcArray::transfer_to_dummy`]), so they stay in the
//! dense arrays — still running for every snapshot (its rows stay invisible)
//! and still the holder of its row locks (writers wait on its xid) — while
//! the session becomes idle and may run other transactions.
//! `COMMIT PREPARED 'gid'` / `ROLLBACK PREPARED 'gid'`, from any session,
//! finish it: clog commit/abort of the tree, then the dummy proc leaves the
//! procarray through the one completion path,
//! [`ProcArray::end_transaction`]`(Finished::DummyProc(p))`, which advances
//! `latest_completed_xid`, bumps `xact_completion_count` and wakes waiters.
//! PREPARE itself bumps nothing: the xids keep running.
//!
//! ## The registry ([`TwoPhaseState`], TwoPhaseStateData)
//!
//! One entry ([`GlobalTransaction`]) per prepared transaction, bounded by
//! `max_prepared_transactions` (0 disables PREPARE). An entry goes through
//!
//! ```text
//!   reserve ──► (WAL Prepare record, flushed) ──► valid ──► locked ──► removed
//!   (gid unique,                                 (listed,  (one COMMIT/
//!    not listed)                                  dummy    ROLLBACK PREPARED
//!                                                 proc)    owns it)
//! ```
//!
//! * A gid is unique among all entries, reserved ones included (42710).
//! * Only valid entries are listed in `pg_prepared_xacts` and can be
//!   finished; a reserved one is "does not exist" (42704) as in PostgreSQL.
//! * Exactly one session finishes an entry: it marks it locked; a second
//!   one gets 55000 "... is busy", and once it is removed, 42704.
//! * Every prepared transaction has an xid: PREPARE assigns one to a
//!   transaction that never wrote, as PostgreSQL does.
//!
//! ## Durability
//!
//! PREPARE writes and flushes a WAL `Prepare` record (xid, subxids, gid,
//! time, and the owner/database in `state`) *before* the transaction moves
//! to the dummy proc — its row changes are already in WAL as heap records.
//! COMMIT/ROLLBACK PREPARED write `CommitPrepared`/`AbortPrepared`, flushed,
//! *before* clog and procarray change. WAL goes through the
//! [`XactShared::log_twophase_record`] hook (the node's WAL; nothing in tests
//! without one).
//!
//! A checkpoint may remove the WAL holding a Prepare record, so
//! [`checkpoint`] writes one state file per prepared transaction,
//! `DIR/pg_twophase/<xid as 16 hex digits>` (magic, the Prepare record's
//! payload, CRC-32), atomically: temp file, fsync, rename, fsync directory.
//! Finishing a transaction removes its file after its record is flushed.
//!
//! Start-up: recovery replays `Prepare` records into the registry
//! ([`redo_prepare`]) and removes finished ones ([`redo_finish`], which
//! also sets the clog and deletes the state file); then
//! [`restore_at_startup`] merges the state files, discards any entry whose
//! xid the clog says finished (a crash between the record and the file
//! removal), and gives every remaining entry a dummy proc holding its xid
//! and subxids as running — before the first session connects, since a
//! prepared xid that is in progress in the clog but not running would read
//! as crashed (aborted). Both orders of the redo functions and the file
//! merge give the same registry: entries are keyed by xid.
//!
//! ## Locks, in order
//!
//! `delay_chkpt` (RwLock; PREPARE holds it shared from reserving its entry
//! until the entry is valid, [`checkpoint`] takes it exclusive, so a
//! checkpoint never misses a transaction whose Prepare record precedes its
//! redo point) → the registry mutex (leaf; never held across I/O or a
//! procarray call). COMMIT/ROLLBACK PREPARED hold the WAL's
//! delay-checkpoint lock (`XLog::delay_checkpoint`, as a commit does) from
//! before their record until the clog is set and the entry removed.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use wal::{WalRecord, XactRecord};

use crate::xact::{TreeEnd, XactShared};
use pgtypes::error::{sqlstate, PgError, PgResult, Severity};
use pgtypes::fileutil::io_error as io_err;
use pgtypes::ProcNumber;
use pgtypes::TransactionId;
use txn::clog::XidStatus;
use txn::predicate::PreparedPredicate;
use txn::procarray::Finished;

/// Longest gid plus one (GIDSIZE): a gid must be shorter than this.
pub const GIDSIZE: usize = 200;

/// Directory of the state files under the data directory.
pub const STATE_DIR: &str = "pg_twophase";

/// First bytes of a state file.
const STATE_MAGIC: &[u8; 8] = b"HP2PCST1";

/// A prepared transaction as `pg_prepared_xacts` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedXact {
    /// Its top-level xid.
    pub xid: TransactionId,
    /// Its global transaction id.
    pub gid: String,
    /// When it was prepared (microseconds since 2000-01-01 UTC).
    pub prepared_at: i64,
    /// The user that prepared it.
    pub owner: String,
    /// The database it was prepared in.
    pub database: String,
}

/// One registry entry (GlobalTransactionData).
#[derive(Clone, Debug)]
struct GlobalTransaction {
    /// What the view shows.
    info: PreparedXact,
    /// Live (committed-with-the-top) subtransaction xids.
    subxids: Vec<TransactionId>,
    /// A serializable transaction's predicate-lock state, rebuilt at
    /// start-up and promotion.
    predicate: Option<PreparedPredicate>,
    /// The dummy proc holding the xids as running (None while reserved and
    /// during recovery).
    dummy: Option<ProcNumber>,
    /// PREPARE completed (or rebuilt at start-up): listed, finishable.
    valid: bool,
    /// A COMMIT/ROLLBACK PREPARED owns it.
    locked: bool,
    /// Its state file is written.
    ondisk: bool,
}

/// The prepared-transaction registry of a node (TwoPhaseStateData).
pub struct TwoPhaseState {
    /// `max_prepared_transactions`.
    max: usize,
    /// Data directory (state files under `pg_twophase/`); None: no files.
    dir: Option<PathBuf>,
    /// The entries, in preparation order.
    gxacts: Mutex<Vec<GlobalTransaction>>,
    /// DELAY_CHKPT_START: shared while a PREPARE is between reservation and
    /// validity, exclusive in [`checkpoint`].
    delay_chkpt: RwLock<()>,
}

/// A registry with PREPARE disabled and no files (the default for
/// [`XactShared`] implementations without two-phase commit).
pub static DISABLED: TwoPhaseState = TwoPhaseState::disabled();

fn corrupt(p: &Path, why: &str) -> PgError {
    PgError::new(
        sqlstate::DATA_CORRUPTED,
        format!("invalid two-phase state file \"{}\": {why}", p.display()),
    )
}

fn does_not_exist(gid: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("prepared transaction with identifier \"{gid}\" does not exist"),
    )
}

fn fatal_too_many(max: usize) -> PgError {
    let mut e = too_many(max);
    e.severity = Severity::Fatal;
    e
}

fn too_many(max: usize) -> PgError {
    PgError::new(
        sqlstate::OUT_OF_MEMORY,
        "maximum number of prepared transactions reached",
    )
    .with_hint(format!(
        "Increase max_prepared_transactions (currently {max})."
    ))
}

impl TwoPhaseState {
    /// A registry for `max_prepared_transactions = max` whose state files
    /// live in `data_dir/pg_twophase` (`None`: in memory only).
    pub fn new(max: usize, data_dir: Option<&Path>) -> TwoPhaseState {
        TwoPhaseState {
            max,
            dir: data_dir.map(|d| d.join(STATE_DIR)),
            gxacts: Mutex::new(Vec::new()),
            delay_chkpt: RwLock::new(()),
        }
    }

    /// PREPARE disabled, no files.
    pub const fn disabled() -> TwoPhaseState {
        TwoPhaseState {
            max: 0,
            dir: None,
            gxacts: Mutex::new(Vec::new()),
            delay_chkpt: RwLock::new(()),
        }
    }

    /// `max_prepared_transactions`.
    pub fn max_prepared(&self) -> usize {
        self.max
    }

    /// The valid prepared transactions, in preparation order (the rows of
    /// `pg_prepared_xacts`).
    pub fn list(&self) -> Vec<PreparedXact> {
        self.gxacts
            .lock()
            .iter()
            .filter(|g| g.valid)
            .map(|g| g.info.clone())
            .collect()
    }

    /// Every xid (top-level and subxids) of every entry: on a standby, the
    /// transactions a shutdown checkpoint leaves running.
    pub fn all_xids(&self) -> Vec<TransactionId> {
        let gx = self.gxacts.lock();
        let mut out = Vec::new();
        for g in gx.iter() {
            out.push(g.info.xid);
            out.extend(g.subxids.iter().copied());
        }
        out
    }

    /// Number of entries (reserved ones included).
    pub fn len(&self) -> usize {
        self.gxacts.lock().len()
    }

    /// True when nothing is prepared.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// MarkAsPreparing: reserves `gid` for `xid` (not yet listed).
    fn reserve(&self, g: GlobalTransaction) -> PgResult<()> {
        let mut gx = self.gxacts.lock();
        if gx.iter().any(|e| e.info.gid == g.info.gid) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_OBJECT,
                format!(
                    "transaction identifier \"{}\" is already in use",
                    g.info.gid
                ),
            ));
        }
        if gx.len() >= self.max {
            return Err(too_many(self.max));
        }
        gx.push(g);
        Ok(())
    }

    /// MarkAsPrepared: the entry of `xid` becomes listed and finishable.
    fn mark_valid(&self, xid: TransactionId, dummy: ProcNumber) {
        let mut gx = self.gxacts.lock();
        if let Some(g) = gx.iter_mut().find(|g| g.info.xid == xid) {
            g.dummy = Some(dummy);
            g.valid = true;
        }
    }

    /// Removes the entry of `xid`; returns it.
    fn remove(&self, xid: TransactionId) -> Option<GlobalTransaction> {
        let mut gx = self.gxacts.lock();
        let i = gx.iter().position(|g| g.info.xid == xid)?;
        Some(gx.remove(i))
    }

    /// LockGXact: claims the valid entry named `gid` for this session.
    fn lock_gxact(&self, gid: &str) -> PgResult<GlobalTransaction> {
        let mut gx = self.gxacts.lock();
        let Some(g) = gx.iter_mut().find(|g| g.valid && g.info.gid == gid) else {
            return Err(does_not_exist(gid));
        };
        if g.locked {
            return Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("prepared transaction with identifier \"{gid}\" is busy"),
            ));
        }
        g.locked = true;
        Ok(g.clone())
    }

    /// Gives a claimed entry back (its finish failed before any change).
    fn unlock(&self, xid: TransactionId) {
        if let Some(g) = self.gxacts.lock().iter_mut().find(|g| g.info.xid == xid) {
            g.locked = false;
        }
    }

    /// Adds a recovered entry unless its xid is already known.
    fn add_recovered(&self, g: GlobalTransaction) {
        let mut gx = self.gxacts.lock();
        if !gx.iter().any(|e| e.info.xid == g.info.xid) {
            gx.push(g);
        }
    }

    fn file_path(&self, xid: TransactionId) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{:016X}", xid.0)))
    }

    /// Deletes the state file of `xid` (missing is fine).
    fn remove_file(&self, xid: TransactionId) {
        let Some(p) = self.file_path(xid) else {
            return;
        };
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("could not remove file \"{}\": {e}", p.display()),
        }
    }
}

// ----- state encoding ---------------------------------------------------------

/// The `state` bytes of a Prepare record: owner and database names, then,
/// for a serializable transaction, its predicate-lock state (tag 1, length,
/// [`PreparedPredicate::encode`]). Records written before the predicate
/// part existed simply end after the database.
fn encode_state(owner: &str, database: &str, predicate: Option<&PreparedPredicate>) -> Bytes {
    let mut v = Vec::with_capacity(8 + owner.len() + database.len());
    for s in [owner, database] {
        v.extend_from_slice(&(s.len() as u32).to_le_bytes());
        v.extend_from_slice(s.as_bytes());
    }
    if let Some(p) = predicate {
        let mut body = Vec::new();
        p.encode(&mut body);
        v.push(1);
        v.extend_from_slice(&(body.len() as u32).to_le_bytes());
        v.extend_from_slice(&body);
    }
    Bytes::from(v)
}

/// The decoded `state` of a Prepare record.
type State = (String, String, Option<PreparedPredicate>);

/// Inverse of [`encode_state`]; `None` on malformed bytes.
fn decode_state(b: &[u8]) -> Option<State> {
    let mut rest = b;
    let mut take = |n: usize| -> Option<&[u8]> {
        let (head, tail) = (rest.get(..n)?, rest.get(n..)?);
        rest = tail;
        Some(head)
    };
    let mut text = || -> Option<String> {
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        Some(std::str::from_utf8(take(len)?).ok()?.to_string())
    };
    let owner = text()?;
    let database = text()?;
    let mut take = |n: usize| -> Option<&[u8]> {
        let (head, tail) = (rest.get(..n)?, rest.get(n..)?);
        rest = tail;
        Some(head)
    };
    let predicate = match take(1) {
        None => None,
        Some([1]) => {
            let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
            Some(PreparedPredicate::decode(take(len)?)?)
        }
        Some(_) => return None,
    };
    rest.is_empty().then_some((owner, database, predicate))
}

impl GlobalTransaction {
    fn prepare_record(&self) -> XactRecord {
        XactRecord::Prepare {
            xid: self.info.xid,
            subxids: self.subxids.clone(),
            timestamp_us: self.info.prepared_at,
            gid: self.info.gid.clone(),
            state: encode_state(
                &self.info.owner,
                &self.info.database,
                self.predicate.as_ref(),
            ),
        }
    }

    /// An entry rebuilt from a Prepare record (valid, no dummy proc yet).
    fn from_prepare(
        xid: TransactionId,
        subxids: &[TransactionId],
        timestamp_us: i64,
        gid: &str,
        state: &[u8],
    ) -> GlobalTransaction {
        let (owner, database, predicate) = decode_state(state).unwrap_or_default();
        GlobalTransaction {
            info: PreparedXact {
                xid,
                gid: gid.to_string(),
                prepared_at: timestamp_us,
                owner,
                database,
            },
            subxids: subxids.to_vec(),
            predicate,
            dummy: None,
            valid: true,
            locked: false,
            ondisk: false,
        }
    }
}

/// A state file's bytes: magic, payload length, payload (an encoded
/// Prepare record), CRC-32 of everything before it.
fn encode_file(g: &GlobalTransaction) -> Vec<u8> {
    let mut payload = Vec::new();
    WalRecord::Xact(g.prepare_record()).encode_payload(&mut payload);
    let mut out = Vec::with_capacity(payload.len() + 16);
    out.extend_from_slice(STATE_MAGIC);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Decodes a state file (never panics on any bytes).
fn decode_file(p: &Path, b: &[u8]) -> PgResult<GlobalTransaction> {
    let hdr = STATE_MAGIC.len() + 4;
    if b.len() < hdr + 4 || &b[..STATE_MAGIC.len()] != STATE_MAGIC {
        return Err(corrupt(p, "bad magic number"));
    }
    let len = u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize;
    if b.len() != hdr + len + 4 {
        return Err(corrupt(p, "bad size"));
    }
    let body = &b[..hdr + len];
    let crc = u32::from_le_bytes([
        b[hdr + len],
        b[hdr + len + 1],
        b[hdr + len + 2],
        b[hdr + len + 3],
    ]);
    if crc32fast::hash(body) != crc {
        return Err(corrupt(
            p,
            "calculated CRC checksum does not match value stored in file",
        ));
    }
    let payload = Bytes::copy_from_slice(&b[hdr..hdr + len]);
    match WalRecord::decode(
        wal::RmgrId::Xact as u8,
        wal::records::XLOG_XACT_PREPARE,
        &payload,
    ) {
        Ok(WalRecord::Xact(XactRecord::Prepare {
            xid,
            subxids,
            timestamp_us,
            gid,
            state,
        })) => Ok(GlobalTransaction::from_prepare(
            xid,
            &subxids,
            timestamp_us,
            &gid,
            &state,
        )),
        _ => Err(corrupt(p, "undecodable contents")),
    }
}

// ----- PREPARE / COMMIT PREPARED / ROLLBACK PREPARED ---------------------------

/// PrepareTransaction's two-phase half, called by
/// [`crate::xact::Xact::prepare`] with the transaction's top xid (assigned)
/// and live subxids: checks the gid (22023 too long, 55000 disabled, 42710
/// in use, 53200 too many), writes and flushes the Prepare record, moves the
/// xids from `proc` to a dummy proc, and lists the transaction. On error
/// nothing is left behind (the caller aborts the transaction).
pub fn prepare_transaction(
    shared: &dyn XactShared,
    proc: ProcNumber,
    gid: &str,
    xid: TransactionId,
    subxids: &[TransactionId],
    owner: &str,
    database: &str,
    predicate: Option<PreparedPredicate>,
) -> PgResult<()> {
    if gid.len() >= GIDSIZE {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("transaction identifier \"{gid}\" is too long"),
        ));
    }
    let tp = shared.twophase();
    if tp.max == 0 {
        return Err(PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            "prepared transactions are disabled",
        )
        .with_hint("Set max_prepared_transactions to a nonzero value."));
    }
    if !xid.is_valid() {
        return Err(PgError::internal(
            "cannot prepare a transaction without an xid",
        ));
    }
    let _delay = tp.delay_chkpt.read();
    let g = GlobalTransaction {
        info: PreparedXact {
            xid,
            gid: gid.to_string(),
            prepared_at: pgtypes::datetime::now_usecs(),
            owner: owner.to_string(),
            database: database.to_string(),
        },
        subxids: subxids.to_vec(),
        predicate,
        dummy: None,
        valid: false,
        locked: false,
        ondisk: false,
    };
    let rec = g.prepare_record();
    tp.reserve(g)?;
    if let Err(e) = shared.log_twophase_record(rec, true) {
        tp.remove(xid);
        return Err(e);
    }
    let Some(dummy) = shared.procarray().transfer_to_dummy(proc) else {
        // Unreachable by sizing (max_connections + max_prepared_transactions
        // + spare slots). The caller's abort record follows the Prepare
        // record, so recovery discards this one too.
        tp.remove(xid);
        return Err(PgError::internal(
            "no free proc slot for a prepared transaction",
        ));
    };
    tp.mark_valid(xid, dummy);
    Ok(())
}

/// FinishPreparedTransaction: COMMIT PREPARED (`commit`) or ROLLBACK
/// PREPARED `gid`. The caller has checked that no transaction block is open
/// (25001). 42704 when no such prepared transaction exists, 55000 while
/// another session is finishing it.
pub fn finish_prepared(shared: &dyn XactShared, gid: &str, commit: bool) -> PgResult<()> {
    let tp = shared.twophase();
    let g = tp.lock_gxact(gid)?;
    let xid = g.info.xid;
    // The registry entry goes while checkpoints are still delayed: a
    // checkpoint whose redo point follows the record must neither miss the
    // outcome in the clog nor write a state file for a finished transaction.
    let mut removed = None;
    let r = crate::xact::end_transaction_tree(
        shared,
        g.dummy.map(Finished::DummyProc),
        xid,
        &g.subxids,
        TreeEnd::Prepared {
            commit,
            gid: &g.info.gid,
        },
        || removed = tp.remove(xid),
    );
    if let Err(e) = r {
        tp.unlock(xid);
        return Err(e);
    }
    if removed.is_some_and(|g| g.ondisk) {
        tp.remove_file(xid);
    }
    // PredicateLockTwoPhaseFinish: a prepared serializable transaction
    // kept its SIRead locks and conflicts until now.
    shared.procarray().predicate().two_phase_finish(xid, commit);
    Ok(())
}

// ----- recovery and checkpoints -----------------------------------------------

/// PrepareRedoAdd: a Prepare record replayed at start-up (or on a standby).
/// The transaction is registered (once per xid); [`restore_at_startup`]
/// gives it its dummy proc after redo and advances `next_xid` then (the
/// redo loop notes the record's xids as assigned itself).
pub fn redo_prepare(
    shared: &dyn XactShared,
    xid: TransactionId,
    subxids: &[TransactionId],
    timestamp_us: i64,
    gid: &str,
    state: &[u8],
) {
    let tp = shared.twophase();
    tp.add_recovered(GlobalTransaction::from_prepare(
        xid,
        subxids,
        timestamp_us,
        gid,
        state,
    ));
}

/// A CommitPrepared (`commit`) or AbortPrepared record replayed: sets the
/// clog for the tree (idempotent beside the redo loop's own update),
/// forgets the entry (ending its dummy proc if it has one) and deletes its
/// state file.
pub fn redo_finish(
    shared: &dyn XactShared,
    xid: TransactionId,
    subs: &[TransactionId],
    commit: bool,
) {
    let tp = shared.twophase();
    let dummy = tp.remove(xid).and_then(|g| g.dummy);
    // Replayed: nothing is written, so nothing can fail.
    let _ = crate::xact::end_transaction_tree(
        shared,
        dummy.map(Finished::DummyProc),
        xid,
        subs,
        TreeEnd::Replayed { commit },
        || {},
    );
    tp.remove_file(xid);
}

/// CheckPointTwoPhase: writes the state file of every prepared transaction
/// not yet on disk, so the WAL before the checkpoint's redo point may go.
/// Waits for PREPAREs in flight (between reservation and validity). The
/// recovery/checkpoint code calls it after choosing the redo point and
/// before removing old WAL.
pub fn checkpoint(shared: &dyn XactShared) -> PgResult<()> {
    let tp = shared.twophase();
    let Some(dir) = tp.dir.clone() else {
        return Ok(());
    };
    let _no_prepares = tp.delay_chkpt.write();
    let todo: Vec<GlobalTransaction> = tp
        .gxacts
        .lock()
        .iter()
        .filter(|g| !g.ondisk)
        .cloned()
        .collect();
    if todo.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(&dir).map_err(|e| io_err("create directory", &dir, e))?;
    for g in &todo {
        if let Some(p) = tp.file_path(g.info.xid) {
            pgtypes::fileutil::write_atomic(&p, &encode_file(g), true)?;
        }
    }
    // Finished meanwhile (their finisher saw ondisk = false): remove again.
    let mut gone = Vec::new();
    {
        let mut gx = tp.gxacts.lock();
        for g in &todo {
            match gx.iter_mut().find(|e| e.info.xid == g.info.xid) {
                Some(e) => e.ondisk = true,
                None => gone.push(g.info.xid),
            }
        }
    }
    for x in gone {
        tp.remove_file(x);
    }
    tracing::debug!("{} two-phase state files written at checkpoint", todo.len());
    Ok(())
}

/// RestoreTwoPhaseData + RecoverPreparedTransactions, after redo (or at
/// open without WAL) and before any session runs: reads the state files
/// into the registry (next to what redo found), drops entries and files
/// whose xid the clog says finished, gives each remaining prepared
/// transaction a dummy proc holding its xids as running and advances
/// `next_xid` past them. FATAL 53200 if more remain than
/// `max_prepared_transactions` allows, as PostgreSQL (not checked in
/// recovery: a standby's registry mirrors the primary's). In recovery (a
/// standby) no dummy procs are made; calling it again at promotion makes
/// them for the entries that have none.
pub fn restore_at_startup(shared: &dyn XactShared) -> PgResult<()> {
    let tp = shared.twophase();
    if let Some(dir) = tp.dir.clone() {
        std::fs::create_dir_all(&dir).map_err(|e| io_err("create directory", &dir, e))?;
        let rd = std::fs::read_dir(&dir).map_err(|e| io_err("open directory", &dir, e))?;
        for ent in rd {
            let ent = ent.map_err(|e| io_err("read directory", &dir, e))?;
            let path = ent.path();
            let name = ent.file_name();
            let name = name.to_string_lossy();
            let Some(xid) = (name.len() == 16)
                .then(|| u64::from_str_radix(&name, 16).ok())
                .flatten()
            else {
                // A temp file of an interrupted write, or a stranger.
                if name.ends_with(".tmp") {
                    let _ = std::fs::remove_file(&path);
                }
                continue;
            };
            let bytes = std::fs::read(&path).map_err(|e| io_err("read file", &path, e))?;
            let mut g = decode_file(&path, &bytes)?;
            if g.info.xid.0 != xid {
                return Err(corrupt(&path, "transaction id does not match file name"));
            }
            g.ondisk = true;
            let mut gx = tp.gxacts.lock();
            match gx.iter_mut().find(|e| e.info.xid == g.info.xid) {
                Some(e) => e.ondisk = true,
                None => gx.push(g),
            }
        }
    }
    let clog = shared.clog();
    let entries: Vec<GlobalTransaction> = {
        let mut gx = tp.gxacts.lock();
        let (keep, stale): (Vec<_>, Vec<_>) = std::mem::take(&mut *gx)
            .into_iter()
            .partition(|g| clog.get_status(g.info.xid) == XidStatus::InProgress);
        for g in &stale {
            tracing::info!(
                "removing stale two-phase state for transaction {}",
                g.info.xid.0
            );
            tp.remove_file(g.info.xid);
        }
        *gx = keep;
        gx.clone()
    };
    if shared.in_recovery() {
        // A standby tracks the primary's running xids (prepared ones
        // included) in KnownAssignedXids; the dummy procs are made when it
        // is promoted ([`restore_at_promotion`]). Its registry mirrors the
        // primary's, bounded by the primary's setting, not its own.
        return Ok(());
    }
    give_dummy_procs(shared, entries)
}

/// Promotion (RecoverPreparedTransactions at the end of a standby's
/// recovery): every prepared transaction replay registered (PREPARE
/// records, state files read at start-up) gets its dummy proc, so it stays
/// running once snapshots stop coming from KnownAssignedXids, and can be
/// finished by COMMIT/ROLLBACK PREPARED. Called while the procarray is
/// still in recovery (the xids are in KnownAssignedXids as well, so no
/// snapshot sees a gap). Fails, as start-up does, if there are more than
/// this node's `max_prepared_transactions`.
pub fn restore_at_promotion(shared: &dyn XactShared) -> PgResult<()> {
    let entries = shared.twophase().gxacts.lock().clone();
    give_dummy_procs(shared, entries)
}

/// The end of [`restore_at_startup`] and [`restore_at_promotion`]: a dummy
/// proc for each entry that has none.
fn give_dummy_procs(shared: &dyn XactShared, entries: Vec<GlobalTransaction>) -> PgResult<()> {
    let tp = shared.twophase();
    if entries.len() > tp.max {
        return Err(fatal_too_many(tp.max));
    }
    for g in entries.into_iter().filter(|g| g.dummy.is_none()) {
        tracing::info!(
            "recovering prepared transaction {} from shared memory",
            g.info.xid.0
        );
        let Some(d) = shared.procarray().restore_dummy(g.info.xid, &g.subxids) else {
            return Err(fatal_too_many(tp.max));
        };
        if let Some(p) = &g.predicate {
            shared
                .procarray()
                .predicate()
                .recover_prepared(g.info.xid, p);
        }
        tp.mark_valid(g.info.xid, d);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::xact::Xact;
    use pgtypes::testutil::wait_until;
    use pgtypes::txstatus::TxStatus;
    use txn::clog::Clog;
    use txn::procarray::{ProcArray, PGPROC_MAX_CACHED_SUBXIDS};

    struct TestShared {
        clog: Clog,
        procarray: ProcArray,
        twophase: TwoPhaseState,
        dir: PathBuf,
    }

    impl XactShared for TestShared {
        fn clog(&self) -> &Clog {
            &self.clog
        }
        fn procarray(&self) -> &ProcArray {
            &self.procarray
        }
        fn max_connections(&self) -> usize {
            4
        }
        fn deadlock_timeout(&self) -> Duration {
            Duration::from_millis(50)
        }
        fn in_recovery(&self) -> bool {
            false
        }
        fn twophase(&self) -> &TwoPhaseState {
            &self.twophase
        }
    }

    /// A node over `dir` (files persist across "restarts" in one dir).
    fn node(dir: &Path, max_prepared: usize) -> Arc<TestShared> {
        Arc::new(TestShared {
            clog: Clog::open(dir).unwrap(),
            procarray: ProcArray::new(4 + max_prepared + 2, TransactionId::FIRST_NORMAL),
            twophase: TwoPhaseState::new(max_prepared, Some(dir)),
            dir: dir.to_path_buf(),
        })
    }

    fn session(sh: &Arc<TestShared>) -> Xact {
        Xact::with_shared(sh.clone()).unwrap()
    }

    /// BEGIN, one write (xid), PREPARE.
    fn prepared(s: &mut Xact, gid: &str) -> PgResult<TransactionId> {
        s.start_statement();
        s.begin(None);
        s.finish_statement(true).unwrap();
        s.start_statement();
        let x = s.assign_xid().unwrap();
        s.finish_statement(true).unwrap();
        s.start_statement();
        let r = s.prepare(gid, "alice", "db1");
        s.finish_statement(r.is_ok()).unwrap();
        let (tag, warn) = r?;
        assert_eq!((tag, warn), ("PREPARE TRANSACTION", None));
        Ok(x)
    }

    #[test]
    fn prepare_moves_to_dummy_and_commit_prepared_finishes() {
        let d = tempfile::tempdir().unwrap();
        let sh = node(d.path(), 2);
        let mut a = session(&sh);
        let mut b = session(&sh);
        let before = sh.procarray.xact_completion_count();
        let x = prepared(&mut a, "g1").unwrap();
        assert_eq!(
            sh.procarray.xact_completion_count(),
            before,
            "PREPARE bumps nothing"
        );
        // The session is free; its xid still runs, held by a dummy proc.
        assert_eq!(a.status(), TxStatus::Idle);
        assert!(!a.in_transaction());
        assert_eq!(sh.procarray.proc_xid(a.proc()), TransactionId::INVALID);
        let (holder, top) = sh.procarray.holder_of(x).unwrap();
        assert_ne!(holder, a.proc());
        assert_eq!(top, x);
        assert_eq!(sh.clog.get_status(x), XidStatus::InProgress);
        b.start_statement();
        let snap = b.statement_snapshot();
        b.finish_statement(true).unwrap();
        assert!(snap.xid_in_snapshot(x, &|_| None), "invisible to others");
        // The session may start a new transaction with a new xid.
        a.start_statement();
        let y = a.assign_xid().unwrap();
        a.finish_statement(true).unwrap();
        assert!(y > x);
        let list = sh.twophase.list();
        assert_eq!(list.len(), 1);
        assert_eq!(
            (list[0].xid, list[0].gid.as_str(), list[0].owner.as_str()),
            (x, "g1", "alice")
        );
        assert_eq!(list[0].database, "db1");
        // COMMIT PREPARED from another session: one bump, clog committed.
        let before = sh.procarray.xact_completion_count();
        finish_prepared(&*sh, "g1", true).unwrap();
        assert_eq!(sh.procarray.xact_completion_count(), before + 1);
        assert_eq!(sh.clog.get_status(x), XidStatus::Committed);
        assert!(!sh.procarray.xid_is_running(x));
        assert!(sh.twophase.list().is_empty());
        let e = finish_prepared(&*sh, "g1", true).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "42704",
                "prepared transaction with identifier \"g1\" does not exist"
            )
        );
        // ROLLBACK PREPARED: aborted, one bump.
        let z = prepared(&mut b, "g2").unwrap();
        let before = sh.procarray.xact_completion_count();
        finish_prepared(&*sh, "g2", false).unwrap();
        assert_eq!(sh.procarray.xact_completion_count(), before + 1);
        assert_eq!(sh.clog.get_status(z), XidStatus::Aborted);
        assert!(!sh.procarray.xid_is_running(z));
        sh.procarray.check_invariants().unwrap();
        drop(a);
        drop(b);
        assert_eq!(sh.procarray.num_procs(), 0, "dummy slots freed");
    }

    #[test]
    fn read_only_transaction_gets_an_xid() {
        let d = tempfile::tempdir().unwrap();
        let sh = node(d.path(), 2);
        let mut a = session(&sh);
        a.start_statement();
        a.begin(None);
        a.finish_statement(true).unwrap();
        a.start_statement();
        assert_eq!(a.prepare("ro", "u", "d").unwrap().0, "PREPARE TRANSACTION");
        a.finish_statement(true).unwrap();
        let x = sh.twophase.list()[0].xid;
        assert!(x.is_normal());
        assert!(sh.procarray.xid_is_running(x));
        let before = sh.procarray.xact_completion_count();
        finish_prepared(&*sh, "ro", true).unwrap();
        assert_eq!(sh.procarray.xact_completion_count(), before + 1);
    }

    #[test]
    fn block_states() {
        let d = tempfile::tempdir().unwrap();
        let sh = node(d.path(), 2);
        let mut a = session(&sh);
        // Outside a block: warning, ROLLBACK tag, the statement's own
        // transaction goes on.
        a.start_statement();
        let (tag, w) = a.prepare("x", "u", "d").unwrap();
        assert_eq!(tag, "ROLLBACK");
        let w = w.unwrap();
        assert_eq!(
            (w.code, w.message.as_str()),
            ("25P01", "there is no transaction in progress")
        );
        assert!(a.in_transaction());
        a.finish_statement(true).unwrap();
        assert!(sh.twophase.is_empty());
        // Failed block: rolled back, ROLLBACK, no warning.
        a.start_statement();
        a.begin(None);
        let x = a.assign_xid().unwrap();
        a.finish_statement(false).unwrap();
        assert_eq!(a.status(), TxStatus::Failed);
        a.start_statement();
        assert_eq!(a.prepare("x", "u", "d").unwrap(), ("ROLLBACK", None));
        a.finish_statement(true).unwrap();
        assert_eq!(a.status(), TxStatus::Idle);
        assert_eq!(sh.clog.get_status(x), XidStatus::Aborted);
        assert!(sh.twophase.is_empty());
        // Multi-statement implicit block: warning, but prepared.
        a.begin_implicit_block();
        a.start_statement();
        let y = a.assign_xid().unwrap();
        a.finish_statement(true).unwrap();
        a.start_statement();
        assert!(a.in_transaction_block());
        let (tag, w) = a.prepare("imp", "u", "d").unwrap();
        assert_eq!(tag, "PREPARE TRANSACTION");
        assert_eq!(w.unwrap().code, "25P01");
        a.finish_statement(true).unwrap();
        a.end_implicit_block(true).unwrap();
        assert_eq!(sh.twophase.list()[0].xid, y);
        assert!(sh.procarray.xid_is_running(y));
        assert_eq!(sh.clog.get_status(y), XidStatus::InProgress);
        finish_prepared(&*sh, "imp", false).unwrap();
    }

    #[test]
    fn errors_abort_and_leave_the_session_idle() {
        let d = tempfile::tempdir().unwrap();
        let sh = node(d.path(), 2);
        let mut a = session(&sh);
        let mut b = session(&sh);
        let long = "g".repeat(GIDSIZE);
        let e = prepared(&mut a, &long).unwrap_err();
        assert_eq!(
            (e.code, e.message.clone()),
            (
                "22023",
                format!("transaction identifier \"{long}\" is too long")
            )
        );
        assert_eq!(a.status(), TxStatus::Idle);
        prepared(&mut a, &"g".repeat(GIDSIZE - 1)).unwrap();
        prepared(&mut a, "x").unwrap();
        // Duplicate gid: 42710, the transaction is rolled back.
        b.start_statement();
        b.begin(None);
        let bx = b.assign_xid().unwrap();
        let e = b.prepare("x", "u", "d").unwrap_err();
        b.finish_statement(false).unwrap();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42710", "transaction identifier \"x\" is already in use")
        );
        assert_eq!(b.status(), TxStatus::Idle);
        assert_eq!(sh.clog.get_status(bx), XidStatus::Aborted);
        assert!(!sh.procarray.xid_is_running(bx));
        // Too many: 53200 with PostgreSQL's hint.
        let e = prepared(&mut b, "y").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str(), e.hint.as_deref()),
            (
                "53200",
                "maximum number of prepared transactions reached",
                Some("Increase max_prepared_transactions (currently 2).")
            )
        );
        // Busy: another session is finishing it.
        let g = sh.twophase.lock_gxact("x").unwrap();
        let e = finish_prepared(&*sh, "x", true).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "55000",
                "prepared transaction with identifier \"x\" is busy"
            )
        );
        sh.twophase.unlock(g.info.xid);
        finish_prepared(&*sh, "x", true).unwrap();
        sh.procarray.check_invariants().unwrap();
        // Disabled.
        let d2 = tempfile::tempdir().unwrap();
        let off = node(d2.path(), 0);
        let mut c = session(&off);
        let e = prepared(&mut c, "x").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str(), e.hint.as_deref()),
            (
                "55000",
                "prepared transactions are disabled",
                Some("Set max_prepared_transactions to a nonzero value.")
            )
        );
        assert_eq!(c.status(), TxStatus::Idle);
    }

    #[test]
    fn subtransactions_move_with_it() {
        let d = tempfile::tempdir().unwrap();
        let sh = node(d.path(), 2);
        let mut a = session(&sh);
        a.start_statement();
        a.begin(None);
        let top = a.assign_xid().unwrap();
        a.savepoint("kept").unwrap();
        let kept = a.assign_xid().unwrap();
        a.release("kept").unwrap();
        a.savepoint("gone").unwrap();
        let gone = a.assign_xid().unwrap();
        a.rollback_to("gone").unwrap();
        assert_eq!(a.prepare("s", "u", "d").unwrap().0, "PREPARE TRANSACTION");
        a.finish_statement(true).unwrap();
        assert_eq!(sh.procarray.holder_of(kept).map(|h| h.1), Some(top));
        assert!(!sh.procarray.xid_is_running(gone));
        finish_prepared(&*sh, "s", true).unwrap();
        assert_eq!(sh.clog.get_status(top), XidStatus::Committed);
        assert_eq!(sh.clog.get_status(kept), XidStatus::Committed);
        assert_eq!(sh.clog.get_status(gone), XidStatus::Aborted);
    }

    #[test]
    fn waiters_keep_waiting_across_prepare_until_commit_prepared() {
        let d = tempfile::tempdir().unwrap();
        let sh = node(d.path(), 2);
        let mut a = session(&sh);
        let w = session(&sh);
        a.start_statement();
        a.begin(None);
        let x = a.assign_xid().unwrap();
        let cancel = AtomicBool::new(false);
        std::thread::scope(|sc| {
            let t = sc.spawn(|| w.wait_for_xid(x, &cancel, txn::lmgr::WaitLimits::NONE));
            wait_until("waiter registered", || {
                sh.procarray.lmgr().waiting_for(w.proc()) == Some(x)
            });
            assert_eq!(a.prepare("w", "u", "d").unwrap().0, "PREPARE TRANSACTION");
            a.finish_statement(true).unwrap();
            // Woken by the move, it finds the dummy proc and waits again.
            wait_until("waiter re-registered on the dummy", || {
                sh.procarray.lmgr().waiting_for(w.proc()) == Some(x)
                    && sh.procarray.holder_of(x).is_some_and(|h| h.0 != a.proc())
            });
            assert!(!t.is_finished());
            finish_prepared(&*sh, "w", true).unwrap();
            t.join().unwrap().unwrap();
        });
        assert_eq!(sh.clog.get_status(x), XidStatus::Committed);
    }

    #[test]
    fn concurrent_finishers_only_one_wins() {
        let d = tempfile::tempdir().unwrap();
        let sh = node(d.path(), 2);
        let mut a = session(&sh);
        for round in 0..20 {
            let gid = format!("c{round}");
            let x = prepared(&mut a, &gid).unwrap();
            let before = sh.procarray.xact_completion_count();
            let results: Vec<PgResult<()>> = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..3)
                    .map(|i| {
                        let sh = &sh;
                        let gid = &gid;
                        sc.spawn(move || finish_prepared(&**sh, gid, i % 2 == 0))
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let wins = results.iter().filter(|r| r.is_ok()).count();
            assert_eq!(wins, 1, "{results:?}");
            for e in results.iter().filter_map(|r| r.as_ref().err()) {
                assert!(e.code == "42704" || e.code == "55000", "{e:?}");
            }
            assert_eq!(sh.procarray.xact_completion_count(), before + 1);
            assert_ne!(sh.clog.get_status(x), XidStatus::InProgress);
            sh.procarray.check_invariants().unwrap();
        }
    }

    #[test]
    fn state_files_survive_restart() {
        let d = tempfile::tempdir().unwrap();
        let (x, subs, y) = {
            let sh = node(d.path(), 3);
            let mut a = session(&sh);
            a.start_statement();
            a.begin(None);
            let x = a.assign_xid().unwrap();
            // More subxids than a proc caches: restored as overflowed.
            let mut subs = Vec::new();
            for i in 0..PGPROC_MAX_CACHED_SUBXIDS + 3 {
                a.savepoint(&format!("s{i}")).unwrap();
                subs.push(a.assign_xid().unwrap());
            }
            a.prepare("big", "alice", "db1").unwrap();
            a.finish_statement(true).unwrap();
            let y = prepared(&mut a, "small").unwrap();
            let z = prepared(&mut a, "done").unwrap();
            checkpoint(&*sh).unwrap();
            // Finished after the checkpoint: its file goes.
            finish_prepared(&*sh, "done", true).unwrap();
            assert!(!d
                .path()
                .join(STATE_DIR)
                .join(format!("{:016X}", z.0))
                .exists());
            // A file whose transaction the clog says committed (a crash
            // between the record and the removal) is stale.
            let stale = GlobalTransaction::from_prepare(z, &[], 0, "stale", &[]);
            let p = sh.twophase.file_path(z).unwrap();
            pgtypes::fileutil::write_atomic(&p, &encode_file(&stale), true).unwrap();
            sh.clog.flush().unwrap();
            (x, subs, y)
        }; // "crash": nothing else is written
        let sh = node(d.path(), 3);
        restore_at_startup(&*sh).unwrap();
        let list = sh.twophase.list();
        let gids: Vec<_> = list.iter().map(|p| p.gid.as_str()).collect();
        assert_eq!(gids.len(), 2, "{gids:?}");
        assert!(gids.contains(&"big") && gids.contains(&"small"));
        let big = list.iter().find(|p| p.gid == "big").unwrap();
        assert_eq!(
            (big.xid, big.owner.as_str(), big.database.as_str()),
            (x, "alice", "db1")
        );
        assert!(sh.procarray.xid_is_running(x));
        assert!(sh.procarray.xid_is_running(y));
        for s in &subs {
            assert_eq!(sh.procarray.holder_of(*s).map(|h| h.1), Some(x));
        }
        assert!(sh.procarray.next_xid() > *subs.last().unwrap());
        let mut a = session(&sh);
        // A later commit moves xmax past the restored xids.
        a.start_statement();
        a.assign_xid().unwrap();
        a.finish_statement(true).unwrap();
        a.start_statement();
        let snap = a.statement_snapshot();
        a.finish_statement(true).unwrap();
        assert!(snap.suboverflowed);
        assert!(snap.xid_in_snapshot(subs[66], &|s| sh.procarray.subtrans().parent(s)));
        let files = std::fs::read_dir(d.path().join(STATE_DIR)).unwrap().count();
        assert_eq!(files, 2, "stale file removed");
        // Finish both after the restart; their files go.
        let before = sh.procarray.xact_completion_count();
        finish_prepared(&*sh, "big", true).unwrap();
        finish_prepared(&*sh, "small", false).unwrap();
        assert_eq!(sh.procarray.xact_completion_count(), before + 2);
        assert_eq!(sh.clog.get_status(subs[66]), XidStatus::Committed);
        assert_eq!(sh.clog.get_status(y), XidStatus::Aborted);
        let files = std::fs::read_dir(d.path().join(STATE_DIR)).unwrap().count();
        assert_eq!(files, 0);
        sh.procarray.check_invariants().unwrap();
        drop(a);
        assert_eq!(sh.procarray.num_procs(), 0);
        let _ = &sh.dir;
    }

    #[test]
    fn restore_refuses_more_than_allowed_and_corrupt_files() {
        let d = tempfile::tempdir().unwrap();
        {
            let sh = node(d.path(), 2);
            let mut a = session(&sh);
            prepared(&mut a, "a").unwrap();
            checkpoint(&*sh).unwrap();
        }
        let e = restore_at_startup(&*node(d.path(), 0)).unwrap_err();
        assert_eq!(
            (e.severity, e.code, e.hint.as_deref()),
            (
                Severity::Fatal,
                "53200",
                Some("Increase max_prepared_transactions (currently 0).")
            )
        );
        restore_at_startup(&*node(d.path(), 1)).unwrap();
        // Corrupt contents: an error, never a panic.
        let dir = d.path().join(STATE_DIR);
        let f = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let good = std::fs::read(&f).unwrap();
        for cut in 0..good.len() {
            std::fs::write(&f, &good[..cut]).unwrap();
            let e = restore_at_startup(&*node(d.path(), 1)).unwrap_err();
            assert_eq!(e.code, sqlstate::DATA_CORRUPTED);
        }
        let mut bad = good.clone();
        bad[14] ^= 0x40;
        std::fs::write(&f, &bad).unwrap();
        let e = restore_at_startup(&*node(d.path(), 1)).unwrap_err();
        assert!(e.message.contains("CRC"), "{e:?}");
        std::fs::write(&f, &good).unwrap();
        restore_at_startup(&*node(d.path(), 1)).unwrap();
    }

    #[test]
    fn redo_then_restore() {
        let d = tempfile::tempdir().unwrap();
        let sh = node(d.path(), 4);
        let st = encode_state("bob", "db2", None);
        // Replayed: three prepares, one committed, one aborted later.
        redo_prepare(
            &*sh,
            TransactionId(10),
            &[TransactionId(11), TransactionId(12)],
            5,
            "p10",
            &st,
        );
        redo_prepare(&*sh, TransactionId(20), &[], 6, "p20", &st);
        redo_prepare(&*sh, TransactionId(30), &[], 7, "p30", &st);
        redo_prepare(&*sh, TransactionId(30), &[], 7, "p30", &st); // once per xid
        redo_finish(&*sh, TransactionId(20), &[], true);
        redo_finish(&*sh, TransactionId(30), &[], false);
        // Finished transactions whose Prepare preceded the redo point.
        redo_finish(&*sh, TransactionId(40), &[TransactionId(41)], true);
        assert_eq!(sh.clog.get_status(TransactionId(20)), XidStatus::Committed);
        assert_eq!(sh.clog.get_status(TransactionId(41)), XidStatus::Committed);
        assert_eq!(sh.clog.get_status(TransactionId(30)), XidStatus::Aborted);
        restore_at_startup(&*sh).unwrap();
        let list = sh.twophase.list();
        assert_eq!(list.len(), 1);
        assert_eq!(
            (
                list[0].gid.as_str(),
                list[0].owner.as_str(),
                list[0].prepared_at
            ),
            ("p10", "bob", 5)
        );
        assert!(sh.procarray.xid_is_running(TransactionId(12)));
        assert!(sh.procarray.next_xid() > TransactionId(12));
        // Replay of its commit on a running node (standby) ends the dummy.
        let before = sh.procarray.xact_completion_count();
        redo_finish(
            &*sh,
            TransactionId(10),
            &[TransactionId(11), TransactionId(12)],
            true,
        );
        assert!(!sh.procarray.xid_is_running(TransactionId(10)));
        assert_eq!(sh.procarray.xact_completion_count(), before + 1);
        assert!(sh.twophase.is_empty());
    }

    #[test]
    fn state_decoding_is_total() {
        assert_eq!(
            decode_state(&encode_state("o", "d", None)),
            Some(("o".into(), "d".into(), None))
        );
        use pgtypes::RelFileId;
        use txn::predicate::Target;
        let pred = PreparedPredicate {
            read_only: false,
            locks: vec![
                Target::Relation(RelFileId(16384)),
                Target::Page(RelFileId(16385), 7),
                Target::Tuple(RelFileId(16385), 3, 12),
                Target::Index(16390),
                Target::IndexKey(16391, 0xdead_beef_0123_4567),
            ],
        };
        let with = encode_state("owner", "database", Some(&pred));
        assert_eq!(
            decode_state(&with),
            Some(("owner".into(), "database".into(), Some(pred)))
        );
        for good in [encode_state("owner", "database", None), with] {
            for cut in 0..good.len() {
                let _ = decode_state(&good[..cut]);
                let mut bad = good.to_vec();
                bad[cut] ^= 0x5a;
                let _ = decode_state(&bad);
            }
        }
        assert_eq!(decode_state(&[0xff, 0xff, 0xff, 0xff]), None);
    }
}
