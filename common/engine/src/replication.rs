//! # Replication state shared by the SQL layer, the walsenders, the
//! walreceiver and the startup process (walsender.c / walreceiver.c /
//! slot.c shared memory)
//!
//! The processes that move WAL between nodes live in the `primary` and
//! `standby` crates; what they must show to SQL (`pg_stat_replication`,
//! `pg_replication_slots`, `pg_stat_wal_receiver`, `pg_is_in_recovery()`,
//! `pg_last_wal_receive_lsn()`, `pg_last_wal_replay_lsn()`) and what the
//! checkpointer must respect (the slots' `restart_lsn`) lives here, in
//! [`ReplicationState`], one per [`crate::Engine`].
//!
//! ```text
//!   walsender (primary) ──▶ WalSndStat (atomics) ──▶ pg_stat_replication
//!   slot commands       ──▶ SlotManager (mutex, DIR/pg_replslot/<name>)
//!                                  └─▶ oldest_slot_lsn() ──▶ checkpointer
//!   walreceiver (standby) ─▶ receive_lsn, WalRcvStat ──▶ pg_stat_wal_receiver
//!   startup (standby)     ─▶ replay_lsn, consistent  ──▶ pg_last_wal_replay_lsn,
//!                                                       57P03 until consistent
//!   pg_promote(), `promote` file ─▶ request_promote() ──▶ startup (standby)
//!   promotion (once)      ─▶ in_recovery: true → false ──▶ Engine::role()
//! ```
//!
//! ## The recovery state: one atomic, switched once
//!
//! `in_recovery` is the node's role: `true` on a standby from
//! [`crate::Engine::open`] until promotion clears it
//! ([`ReplicationState::end_recovery`], called only by
//! `Engine::finish_recovery` once the node can take writes). It never
//! goes back. Everything asks through `Engine::role()` (or
//! [`ReplicationState::in_recovery`] where only this state is at hand), so
//! there is no second copy to disagree with it. The store is `Release` and
//! the loads `Acquire`: a session that sees `false` also sees the WAL the
//! promotion installed before the switch.
//!
//! ## Invariants and locks
//!
//! * LSN counters only grow while a process runs; they are plain atomics
//!   (`Relaxed`: each is read as a whole, no ordering with other data).
//! * `walsenders` and `receiver` are mutexes held only to copy or replace an
//!   entry; no other lock is taken while holding them (leaf locks).
//! * A slot's file `DIR/pg_replslot/<name>/state` is written to a temporary
//!   name, fsynced and renamed, so a crash leaves either the old or the new
//!   state. `restart_lsn` of a slot only moves forward.
//!
//! ## Slot file format
//!
//! One line of text: `physical <restart_lsn as X/X>\n`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use wal::{AtomicLsn, Lsn};

use pgtypes::error::{sqlstate, PgError, PgResult};

const RELAXED: Ordering = Ordering::Relaxed;

/// SQLSTATE invalid_name.
const INVALID_NAME: &str = "42602";
/// SQLSTATE name_too_long.
const NAME_TOO_LONG: &str = "42622";
/// SQLSTATE object_in_use.
pub const OBJECT_IN_USE: &str = "55006";

/// Name of the subdirectory holding replication slots.
pub const SLOT_DIR: &str = "pg_replslot";
/// Maximum length of a slot name (NAMEDATALEN - 1).
pub const MAX_SLOT_NAME_LEN: usize = 63;

/// State of a walsender, as `pg_stat_replication.state` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum WalSndState {
    /// Connected, no START_REPLICATION yet.
    Startup = 0,
    /// Sending a base backup.
    Backup = 1,
    /// Streaming, the standby is behind the flushed LSN.
    Catchup = 2,
    /// Streaming, the standby has caught up once.
    Streaming = 3,
    /// Shutting down.
    Stopping = 4,
}

impl WalSndState {
    fn from_u8(v: u8) -> WalSndState {
        match v {
            1 => WalSndState::Backup,
            2 => WalSndState::Catchup,
            3 => WalSndState::Streaming,
            4 => WalSndState::Stopping,
            _ => WalSndState::Startup,
        }
    }
    /// The word PostgreSQL shows.
    pub fn name(self) -> &'static str {
        match self {
            WalSndState::Startup => "startup",
            WalSndState::Backup => "backup",
            WalSndState::Catchup => "catchup",
            WalSndState::Streaming => "streaming",
            WalSndState::Stopping => "stopping",
        }
    }
}

/// Lag not known (no reply covering a sent position yet): NULL.
pub const LAG_UNKNOWN: u64 = u64::MAX;

/// Which WAL position a `pg_*_lsn()` function asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WalLsnKind {
    /// pg_current_wal_lsn(): written up to (PostgreSQL: write position).
    Current,
    /// pg_current_wal_insert_lsn()
    Insert,
    /// pg_current_wal_flush_lsn()
    Flush,
    /// pg_last_wal_receive_lsn() (standby; NULL on a primary)
    Receive,
    /// pg_last_wal_replay_lsn() (standby; NULL on a primary)
    Replay,
}

/// One walsender's published progress (a row of `pg_stat_replication`).
#[derive(Debug)]
pub struct WalSndStat {
    /// Process id shown (the connection's pseudo pid).
    pub pid: AtomicI32,
    /// The standby's `application_name`.
    pub application_name: String,
    /// Client address.
    pub client_addr: String,
    state: AtomicU8,
    /// Sent up to here.
    pub sent_lsn: AtomicLsn,
    /// Standby wrote up to here (last reply).
    pub write_lsn: AtomicLsn,
    /// Standby flushed up to here.
    pub flush_lsn: AtomicLsn,
    /// Standby replayed up to here.
    pub replay_lsn: AtomicLsn,
    /// Lags in microseconds ([`LAG_UNKNOWN`]: NULL).
    pub write_lag_us: AtomicU64,
    /// See `write_lag_us`.
    pub flush_lag_us: AtomicU64,
    /// See `write_lag_us`.
    pub replay_lag_us: AtomicU64,
    /// Hot-standby feedback xmin held by this walsender for a standby
    /// streaming without a slot (PostgreSQL keeps it in the walsender's
    /// PGPROC xmin), shown as `pg_stat_replication.backend_xmin` (0: none;
    /// with a slot the slot holds it and this stays 0).
    pub feedback_xmin: AtomicU64,
}

impl WalSndStat {
    /// A new entry in state `startup`.
    pub fn new(pid: i32, application_name: &str, client_addr: &str) -> WalSndStat {
        WalSndStat {
            pid: AtomicI32::new(pid),
            application_name: application_name.to_string(),
            client_addr: client_addr.to_string(),
            state: AtomicU8::new(WalSndState::Startup as u8),
            sent_lsn: AtomicLsn::new(Lsn::INVALID),
            write_lsn: AtomicLsn::new(Lsn::INVALID),
            flush_lsn: AtomicLsn::new(Lsn::INVALID),
            replay_lsn: AtomicLsn::new(Lsn::INVALID),
            write_lag_us: AtomicU64::new(LAG_UNKNOWN),
            flush_lag_us: AtomicU64::new(LAG_UNKNOWN),
            replay_lag_us: AtomicU64::new(LAG_UNKNOWN),
            feedback_xmin: AtomicU64::new(0),
        }
    }
    /// Current state.
    pub fn state(&self) -> WalSndState {
        WalSndState::from_u8(self.state.load(RELAXED))
    }
    /// Sets the state.
    pub fn set_state(&self, s: WalSndState) {
        self.state.store(s as u8, RELAXED);
    }
}

/// The walreceiver's published progress (`pg_stat_wal_receiver`).
#[derive(Debug, Clone, Default)]
pub struct WalRcvStat {
    /// Process id shown.
    pub pid: i32,
    /// `streaming`, `waiting`, `stopping`.
    pub status: String,
    /// Where the current stream started.
    pub receive_start_lsn: u64,
    /// The timeline it started on.
    pub receive_start_tli: u32,
    /// The timeline of the WAL received last.
    pub received_tli: u32,
    /// Written up to here.
    pub written_lsn: u64,
    /// Flushed up to here.
    pub flushed_lsn: u64,
    /// The primary's end of WAL as last reported.
    pub latest_end_lsn: u64,
    /// The slot used, if any.
    pub slot_name: String,
    /// Primary host.
    pub sender_host: String,
    /// Primary port.
    pub sender_port: i32,
    /// The conninfo used.
    pub conninfo: String,
}

/// One replication slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotInfo {
    /// Its name.
    pub name: String,
    /// WAL from here on is kept for the slot ([`Lsn::INVALID`]: none reserved).
    pub restart_lsn: Lsn,
    /// A walsender streams from it now.
    pub active: bool,
    /// The standby's hot-standby feedback xmin, held for it even while it
    /// is disconnected (0: none) — `pg_replication_slots.xmin`.
    pub xmin: u64,
    /// Invalidated by `max_slot_wal_keep_size` (`wal_status = 'lost'`):
    /// it reserves nothing any more and never will.
    pub lost: bool,
}

/// Physical replication slots, persisted under `DIR/pg_replslot`.
#[derive(Debug)]
pub struct SlotManager {
    dir: Option<PathBuf>,
    slots: Mutex<Vec<SlotInfo>>,
}

use pgtypes::fileutil::io_error as slot_io;

/// Checks a slot name as ReplicationSlotValidateName does.
pub fn validate_slot_name(name: &str) -> PgResult<()> {
    if name.is_empty() {
        return Err(PgError::new(
            INVALID_NAME,
            format!("replication slot name \"{name}\" is too short"),
        ));
    }
    if name.len() > MAX_SLOT_NAME_LEN {
        return Err(PgError::new(
            NAME_TOO_LONG,
            format!("replication slot name \"{name}\" is too long"),
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(PgError::new(
            INVALID_NAME,
            format!("replication slot name \"{name}\" contains invalid character"),
        )
        .with_hint(
            "Replication slot names may only contain lower case letters, numbers, and the underscore character.",
        ));
    }
    Ok(())
}

impl SlotManager {
    /// Loads the slots of `data_dir` (None: in memory only, for tests).
    pub fn open(data_dir: Option<&Path>) -> PgResult<SlotManager> {
        let mut slots = Vec::new();
        let dir = data_dir.map(|d| d.join(SLOT_DIR));
        if let Some(dir) = &dir {
            std::fs::create_dir_all(dir).map_err(|e| slot_io("create directory", dir, e))?;
            let rd = std::fs::read_dir(dir).map_err(|e| slot_io("open directory", dir, e))?;
            for ent in rd.flatten() {
                let name = ent.file_name().to_string_lossy().into_owned();
                if validate_slot_name(&name).is_err() {
                    continue;
                }
                let state = ent.path().join("state");
                let Ok(text) = std::fs::read_to_string(&state) else {
                    // A slot directory without state: a crash during
                    // creation; it never existed.
                    let _ = std::fs::remove_dir_all(ent.path());
                    continue;
                };
                let mut words = text.split_whitespace();
                let lsn = (words.next() == Some("physical"))
                    .then(|| words.next())
                    .flatten()
                    .and_then(|s| s.parse::<Lsn>().ok());
                // Optional: `xmin N` (hot-standby feedback), `lost`
                // (invalidated by max_slot_wal_keep_size).
                let mut xmin = Some(0);
                let mut lost = false;
                while let Some(w) = words.next() {
                    match w {
                        "xmin" => xmin = words.next().and_then(|n| n.parse::<u64>().ok()),
                        "lost" => lost = true,
                        _ => xmin = None,
                    }
                }
                let (lsn, xmin) = lsn.zip(xmin).ok_or_else(|| {
                    PgError::new(
                        sqlstate::DATA_CORRUPTED,
                        format!("replication slot file \"{}\" is corrupt", state.display()),
                    )
                })?;
                slots.push(SlotInfo {
                    name,
                    restart_lsn: lsn,
                    active: false,
                    xmin,
                    lost,
                });
            }
        }
        slots.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(SlotManager {
            dir,
            slots: Mutex::new(slots),
        })
    }

    fn persist(&self, slot: &SlotInfo) -> PgResult<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let sdir = dir.join(&slot.name);
        std::fs::create_dir_all(&sdir).map_err(|e| slot_io("create directory", &sdir, e))?;
        let mut line = format!("physical {}", slot.restart_lsn);
        if slot.xmin != 0 {
            line.push_str(&format!(" xmin {}", slot.xmin));
        }
        if slot.lost {
            line.push_str(" lost");
        }
        line.push('\n');
        pgtypes::fileutil::write_atomic(&sdir.join("state"), line.as_bytes(), true)
    }

    /// CREATE_REPLICATION_SLOT name PHYSICAL [RESERVE_WAL]: `reserve` is the
    /// LSN to keep WAL from (INVALID: none until first use).
    pub fn create(&self, name: &str, reserve: Lsn) -> PgResult<SlotInfo> {
        validate_slot_name(name)?;
        let mut slots = self.slots.lock();
        if slots.iter().any(|s| s.name == name) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_OBJECT,
                format!("replication slot \"{name}\" already exists"),
            ));
        }
        let slot = SlotInfo {
            name: name.to_string(),
            restart_lsn: reserve,
            active: false,
            xmin: 0,
            lost: false,
        };
        self.persist(&slot)?;
        slots.push(slot.clone());
        slots.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(slot)
    }

    /// DROP_REPLICATION_SLOT name.
    pub fn drop_slot(&self, name: &str) -> PgResult<()> {
        let mut slots = self.slots.lock();
        let Some(i) = slots.iter().position(|s| s.name == name) else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("replication slot \"{name}\" does not exist"),
            ));
        };
        if slots[i].active {
            return Err(PgError::new(
                OBJECT_IN_USE,
                format!("replication slot \"{name}\" is active"),
            ));
        }
        slots.remove(i);
        if let Some(dir) = &self.dir {
            let p = dir.join(name);
            std::fs::remove_dir_all(&p).map_err(|e| slot_io("remove directory", &p, e))?;
        }
        Ok(())
    }

    /// Marks `name` active for a walsender; 55006 if another uses it.
    pub fn acquire(&self, name: &str) -> PgResult<SlotInfo> {
        let mut slots = self.slots.lock();
        let Some(s) = slots.iter_mut().find(|s| s.name == name) else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("replication slot \"{name}\" does not exist"),
            ));
        };
        if s.active {
            return Err(PgError::new(
                OBJECT_IN_USE,
                format!("replication slot \"{name}\" is active"),
            ));
        }
        s.active = true;
        Ok(s.clone())
    }

    /// The walsender using `name` ended.
    pub fn release(&self, name: &str) {
        if let Some(s) = self.slots.lock().iter_mut().find(|s| s.name == name) {
            s.active = false;
        }
    }

    /// The standby flushed up to `lsn`: WAL before it is no longer needed
    /// by the slot. Persisted (rarely: only when it moved by a segment or
    /// more, or was unset), so a restart never removes WAL the slot needs.
    pub fn advance(&self, name: &str, lsn: Lsn, segment_size: u64) -> PgResult<()> {
        self.update(name, |s| {
            if s.lost || lsn <= s.restart_lsn {
                return false;
            }
            let persist = !s.restart_lsn.is_valid()
                || lsn.segment_number(segment_size) != s.restart_lsn.segment_number(segment_size);
            s.restart_lsn = lsn;
            persist
        })
    }

    /// Changes slot `name` (if there is one) with `f`, which says whether
    /// the change must reach disk; the file is written after the slot list
    /// is unlocked.
    fn update(&self, name: &str, f: impl FnOnce(&mut SlotInfo) -> bool) -> PgResult<()> {
        let mut slots = self.slots.lock();
        let Some(s) = slots.iter_mut().find(|s| s.name == name) else {
            return Ok(());
        };
        if !f(s) {
            return Ok(());
        }
        let copy = s.clone();
        drop(slots);
        self.persist(&copy)
    }

    /// PhysicalReplicationSlotNewXmin: the standby streaming from `name`
    /// reported `xmin` (0: it holds nothing any more). Written to disk when
    /// the slot starts or stops holding an xmin — in between the file may
    /// keep an older xmin, which only holds back more (PostgreSQL likewise
    /// saves it lazily, at checkpoints).
    pub fn set_xmin(&self, name: &str, xmin: u64) -> PgResult<()> {
        self.update(name, |s| {
            let persist = (s.xmin == 0) != (xmin == 0);
            s.xmin = xmin;
            persist
        })
    }

    /// The oldest xmin a slot holds (0: none).
    pub fn oldest_slot_xmin(&self) -> u64 {
        self.slots
            .lock()
            .iter()
            .filter(|s| s.xmin != 0)
            .map(|s| s.xmin)
            .min()
            .unwrap_or(0)
    }

    /// InvalidateObsoleteReplicationSlots: every slot whose restart LSN
    /// is before `oldest_kept` (the start of the oldest WAL segment a
    /// checkpoint keeps, lowered by slots no further than
    /// `max_slot_wal_keep_size` allows) loses its reservation for good;
    /// returns their names and old restart LSNs.
    pub fn invalidate_before(&self, oldest_kept: Lsn) -> PgResult<Vec<(String, Lsn)>> {
        let mut gone = Vec::new();
        let mut changed = Vec::new();
        {
            let mut slots = self.slots.lock();
            for s in slots.iter_mut() {
                if !s.lost && s.restart_lsn.is_valid() && s.restart_lsn < oldest_kept {
                    gone.push((s.name.clone(), s.restart_lsn));
                    s.restart_lsn = Lsn::INVALID;
                    s.lost = true;
                    changed.push(s.clone());
                }
            }
        }
        for s in &changed {
            self.persist(s)?;
        }
        Ok(gone)
    }

    /// All slots (for `pg_replication_slots`).
    pub fn list(&self) -> Vec<SlotInfo> {
        self.slots.lock().clone()
    }

    /// The oldest `restart_lsn` of any slot: the checkpointer keeps WAL
    /// from here on (None: no slot reserves WAL).
    pub fn oldest_slot_lsn(&self) -> Option<Lsn> {
        self.slots
            .lock()
            .iter()
            .filter(|s| s.restart_lsn.is_valid())
            .map(|s| s.restart_lsn)
            .min()
    }
}

/// A base backup's claim on WAL (see [`hold_wal`]).
pub struct WalHold {
    db: Arc<crate::Engine>,
    lsn: Lsn,
}
/// CREATE_REPLICATION_SLOT … PHYSICAL [RESERVE_WAL] and
/// pg_create_physical_replication_slot: with `reserve`, the slot holds WAL
/// from the node's flushed position (a standby's: what it received) on.
pub fn create_physical_slot(db: &crate::Engine, name: &str, reserve: bool) -> PgResult<SlotInfo> {
    let lsn = if reserve {
        db.replication()
            .wal_writer()
            .ok_or_else(|| {
                PgError::new(
                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "WAL is not available on this server",
                )
            })?
            .flushed_lsn()
    } else {
        Lsn::INVALID
    };
    db.replication().slots.create(name, lsn)
}

/// DROP_REPLICATION_SLOT and pg_drop_replication_slot: the slot goes, and
/// with it whatever xmin it held back.
pub fn drop_slot(db: &crate::Engine, name: &str) -> PgResult<()> {
    db.replication().slots.drop_slot(name)?;
    update_replication_xmin(db);
    Ok(())
}

/// Keeps `db`'s WAL from `lsn` on until the returned guard is dropped (a
/// base backup copying it): [`ReplicationState::oldest_kept_lsn`].
pub fn hold_wal(db: &Arc<crate::Engine>, lsn: Lsn) -> WalHold {
    db.replication.wal_holds.lock().push(lsn);
    WalHold {
        db: db.clone(),
        lsn,
    }
}

impl Drop for WalHold {
    fn drop(&mut self) {
        let mut h = self.db.replication.wal_holds.lock();
        if let Some(i) = h.iter().position(|l| *l == self.lsn) {
            h.swap_remove(i);
        }
    }
}

/// Replication state of one node; see the module docs.
#[derive(Debug)]
pub struct ReplicationState {
    /// The node is a standby replaying WAL (`pg_is_in_recovery()`); see
    /// the module docs — set at open, cleared once by promotion.
    in_recovery: AtomicBool,
    /// Wakes the startup thread for a promotion request.
    promote_wakeup: tokio::sync::Notify,
    /// Becomes true when recovery ends ([`ReplicationState::end_recovery`]).
    recovery_ended: tokio::sync::watch::Sender<bool>,
    /// `pg_promote()` or the `promote` trigger file asked the startup
    /// process to end recovery.
    promote_requested: AtomicBool,
    /// Hot standby reached a consistent state with a running-xacts record:
    /// read-only connections are accepted.
    pub consistent: AtomicBool,
    /// Standby: WAL received and flushed up to here.
    pub receive_lsn: AtomicLsn,
    /// Standby: WAL replayed up to here (end of the last record applied).
    pub replay_lsn: AtomicLsn,
    /// Live walsenders.
    walsenders: Mutex<Vec<Arc<WalSndStat>>>,
    /// The walreceiver, if running.
    receiver: Mutex<Option<WalRcvStat>>,
    /// Replication slots.
    pub slots: SlotManager,
    /// The shutdown checkpoint is written and flushed: the last WAL a
    /// stopping primary's walsenders must send ([`ReplicationState::wal_final`]).
    wal_final: AtomicBool,
    /// WAL a running base backup still has to send (its start LSN each):
    /// checkpoints and restartpoints keep it ([`hold_wal`]).
    wal_holds: Mutex<Vec<Lsn>>,
    /// Standby queries cancelled (or sessions ended) by snapshot conflicts
    /// with replay (`pg_stat_database_conflicts.confl_snapshot`).
    confl_snapshot: AtomicU64,
    /// The node's WAL writer, once opened (primary: by WAL start-up;
    /// standby: by the walreceiver's start-up), for the walsender, base
    /// backups and the `pg_*_lsn()` functions.
    wal: parking_lot::RwLock<Option<Arc<wal::WalWriter>>>,
    /// Reads the control file's checkpoint (`pg_control_checkpoint()`);
    /// installed by the node, which owns the control file's format.
    control_reader: std::sync::OnceLock<ControlReader>,
    /// Synchronous replication: `synchronous_standby_names` and the
    /// commits waiting for standbys (primary).
    pub syncrep: crate::syncrep::SyncRep,
    /// Replay applied a transaction's end (standby): the walreceiver
    /// replies at once so that `remote_apply` commits return promptly (a
    /// permit is kept if nobody waits).
    pub applied_xact_end: tokio::sync::Notify,
}

/// The control file's last checkpoint as `pg_control_checkpoint()` shows
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// Start of the checkpoint record.
    pub checkpoint_lsn: Lsn,
    /// Its redo point.
    pub redo_lsn: Lsn,
    /// The timeline it was written on.
    pub timeline: pgtypes::TimeLineId,
    /// The timeline of the checkpoint before it.
    pub prev_timeline: pgtypes::TimeLineId,
    /// next_xid at the checkpoint.
    pub next_xid: u64,
    /// next OID at the checkpoint.
    pub next_oid: u32,
    /// When the control file was written (µs since 2000-01-01 UTC).
    pub time_us: i64,
    /// `wal_segment_size`.
    pub segment_size: u64,
}

/// Reads the control file's checkpoint; see
/// [`ReplicationState::set_control_reader`].
pub struct ControlReader(pub Box<dyn Fn() -> Option<CheckpointInfo> + Send + Sync>);

impl std::fmt::Debug for ControlReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ControlReader")
    }
}

impl ReplicationState {
    /// Installs the control-file reader (once; later calls are ignored).
    pub fn set_control_reader(&self, f: ControlReader) {
        let _ = self.control_reader.set(f);
    }

    /// The control file's last checkpoint, if a reader is installed and
    /// the file can be read.
    pub fn control_checkpoint(&self) -> Option<CheckpointInfo> {
        self.control_reader.get().and_then(|f| (f.0)())
    }

    /// State for a node with data directory `data_dir` (None: slots in memory).
    pub fn open(data_dir: Option<&Path>) -> PgResult<ReplicationState> {
        Ok(ReplicationState {
            in_recovery: AtomicBool::new(false),
            recovery_ended: tokio::sync::watch::Sender::new(false),
            promote_wakeup: tokio::sync::Notify::new(),
            promote_requested: AtomicBool::new(false),
            consistent: AtomicBool::new(false),
            receive_lsn: AtomicLsn::new(Lsn::INVALID),
            replay_lsn: AtomicLsn::new(Lsn::INVALID),
            walsenders: Mutex::new(Vec::new()),
            receiver: Mutex::new(None),
            slots: SlotManager::open(data_dir)?,
            wal_holds: Mutex::new(Vec::new()),
            wal_final: AtomicBool::new(false),
            confl_snapshot: AtomicU64::new(0),
            wal: parking_lot::RwLock::new(None),
            control_reader: std::sync::OnceLock::new(),
            syncrep: crate::syncrep::SyncRep::new(),
            applied_xact_end: tokio::sync::Notify::new(),
        })
    }

    /// Publishes the node's WAL writer.
    pub fn set_wal_writer(&self, w: Arc<wal::WalWriter>) {
        *self.wal.write() = Some(w);
    }

    /// The node's WAL writer, if WAL is open.
    pub fn wal_writer(&self) -> Option<Arc<wal::WalWriter>> {
        self.wal.read().clone()
    }

    /// `pg_*_lsn()`: on a primary the writer's positions (receive/replay
    /// NULL); on a standby receive/replay, and 55000 for the others.
    pub fn wal_lsn(&self, which: WalLsnKind) -> PgResult<Option<u64>> {
        use WalLsnKind as K;
        let nonzero = |v: u64| (v != 0).then_some(v);
        if self.in_recovery() {
            return match which {
                K::Receive => Ok(nonzero(self.receive_lsn.load(RELAXED).0)),
                K::Replay => Ok(nonzero(self.replay_lsn.load(RELAXED).0)),
                _ => Err(PgError::new(
                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "recovery is in progress",
                )
                .with_hint("WAL control functions cannot be executed during recovery.")),
            };
        }
        let Some(w) = self.wal_writer() else {
            return Ok(None);
        };
        Ok(match which {
            K::Current => nonzero(w.write_lsn().0.max(w.flushed_lsn().0)),
            K::Insert => nonzero(w.insert_lsn().0),
            K::Flush => nonzero(w.flushed_lsn().0),
            // After a promotion both stay at the last values recovery
            // reached, as in PostgreSQL; a node that never streamed has
            // none (NULL).
            K::Receive => nonzero(self.receive_lsn.load(RELAXED).0),
            K::Replay => nonzero(self.replay_lsn.load(RELAXED).0),
        })
    }

    /// `pg_walfile_name(lsn)`: the name of the segment file holding the
    /// byte before `lsn` (a position on a segment boundary names the
    /// segment it ends, as PostgreSQL's XLByteToPrevSeg) on the timeline
    /// this node writes. 55000 during recovery, as in PostgreSQL.
    pub fn walfile_name(&self, lsn: u64) -> PgResult<Option<String>> {
        if self.in_recovery() {
            return Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "recovery is in progress",
            )
            .with_hint("pg_walfile_name() cannot be executed during recovery."));
        }
        let Some(w) = self.wal_writer() else {
            return Ok(None);
        };
        Ok(Some(wal::segment::walfile_name_tli(
            w.timeline(),
            wal::Lsn(lsn.saturating_sub(1)),
            w.segment_size(),
        )))
    }

    /// True on a standby until it is promoted.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery.load(Ordering::Acquire)
    }

    /// Engine::open of a standby: the node starts in recovery.
    pub(crate) fn begin_recovery(&self) {
        self.in_recovery.store(true, Ordering::Release);
    }

    /// Promotion's last step (`Engine::finish_recovery`): the node is a
    /// primary from now on. Called once; there is no way back.
    pub fn end_recovery(&self) {
        self.in_recovery.store(false, Ordering::Release);
        self.recovery_ended.send_replace(true);
    }

    /// Changes once, when recovery ends (a cascading walsender waits on
    /// it so its standbys reconnect the moment this node is promoted).
    pub fn subscribe_recovery_end(&self) -> tokio::sync::watch::Receiver<bool> {
        self.recovery_ended.subscribe()
    }

    /// SetPromoteIsTriggered: asks the startup process to promote the
    /// node (`pg_promote()`, the `promote` trigger file). Idempotent.
    pub fn request_promote(&self) {
        self.promote_requested.store(true, Ordering::Release);
        // Wakes the startup thread if it waits for WAL (a permit is kept
        // if it does not).
        self.promote_wakeup.notify_one();
    }

    /// Resolves at a promotion request (see [`ReplicationState::request_promote`]).
    pub async fn promote_wakeup(&self) {
        self.promote_wakeup.notified().await
    }

    /// True once promotion was asked for.
    pub fn promote_requested(&self) -> bool {
        self.promote_requested.load(Ordering::Acquire)
    }

    /// Registers a walsender; it shows in `pg_stat_replication` until
    /// [`ReplicationState::unregister_walsender`].
    pub fn register_walsender(&self, stat: Arc<WalSndStat>) {
        self.walsenders.lock().push(stat);
    }

    /// A standby replied: release the commits its synchronous standbys
    /// confirmed (see [`crate::syncrep`]).
    pub fn release_sync_waiters(&self) {
        if self.syncrep.defined() {
            self.syncrep.release(&self.walsenders());
        }
    }

    /// Installs `synchronous_standby_names` (start-up and reloads) and
    /// releases what it allows at once.
    pub fn set_sync_standby_names(
        &self,
        text: &str,
        names: Option<pgtypes::syncrep_gram::SyncStandbyNames>,
    ) {
        self.syncrep.set_names(text, names);
        self.release_sync_waiters();
    }

    /// Removes a walsender.
    pub fn unregister_walsender(&self, stat: &Arc<WalSndStat>) {
        self.walsenders.lock().retain(|s| !Arc::ptr_eq(s, stat));
    }

    /// Number of live walsenders (max_wal_senders check).
    pub fn num_walsenders(&self) -> usize {
        self.walsenders.lock().len()
    }

    /// Publishes the walreceiver's state (None: not running).
    pub fn set_receiver(&self, stat: Option<WalRcvStat>) {
        *self.receiver.lock() = stat;
    }

    /// Updates the walreceiver's state in place, if one is published.
    pub fn update_receiver(&self, f: impl FnOnce(&mut WalRcvStat)) {
        if let Some(r) = self.receiver.lock().as_mut() {
            f(r);
        }
    }

    /// Counts a snapshot conflict a standby session acted on.
    pub fn count_snapshot_conflict(&self) {
        self.confl_snapshot.fetch_add(1, RELAXED);
    }

    /// The oldest xmin replication holds: walsenders' feedback xmins
    /// (standbys without a slot) and slots' xmins (0: none).
    pub fn required_xmin(&self) -> u64 {
        let senders = self
            .walsenders
            .lock()
            .iter()
            .map(|s| s.feedback_xmin.load(RELAXED))
            .filter(|&x| x != 0)
            .min()
            .unwrap_or(0);
        let slots = self.slots.oldest_slot_xmin();
        match (senders, slots) {
            (0, x) | (x, 0) => x,
            (a, b) => a.min(b),
        }
    }

    /// The oldest LSN a slot still needs (for the checkpointer's WAL
    /// removal).
    pub fn oldest_slot_lsn(&self) -> Option<Lsn> {
        self.slots.oldest_slot_lsn()
    }

    /// Shutdown: the shutdown checkpoint record is flushed, nothing more
    /// will be written (walsenders send up to it, then end).
    pub fn set_wal_final(&self) {
        self.wal_final.store(true, Ordering::Release);
    }

    /// See [`ReplicationState::set_wal_final`].
    pub fn wal_final(&self) -> bool {
        self.wal_final.load(Ordering::Acquire)
    }

    /// The oldest start LSN of a running base backup (None: no backup):
    /// checkpoints and restartpoints keep WAL from there.
    pub fn oldest_hold_lsn(&self) -> Option<Lsn> {
        self.wal_holds.lock().iter().copied().min()
    }

    /// The live walsenders (`pg_stat_replication`).
    pub fn walsenders(&self) -> Vec<Arc<WalSndStat>> {
        self.walsenders.lock().clone()
    }

    /// The walreceiver's progress, if one runs (`pg_stat_wal_receiver`).
    pub fn receiver(&self) -> Option<WalRcvStat> {
        self.receiver.lock().clone()
    }

    /// Standby queries cancelled or sessions ended by snapshot conflicts
    /// (`pg_stat_database_conflicts.confl_snapshot`).
    pub fn snapshot_conflicts(&self) -> u64 {
        self.confl_snapshot.load(RELAXED)
    }
}

/// LogStandbySnapshot: writes a running-xacts record (the primary's
/// running transactions) so that a standby can build KnownAssignedXids and
/// prune it. Returns the record's end LSN (None without WAL). Called after a
/// checkpoint, at the end of a base backup, and by the primary's timer.
pub fn log_running_xacts(db: &crate::Engine) -> PgResult<Option<Lsn>> {
    let Some(w) = db.replication.wal_writer() else {
        return Ok(None);
    };
    let (next, oldest, latest, xids, subxids, overflow) = db.procarray.running_xacts();
    let rec = wal::WalRecord::Standby(wal::StandbyRecord::RunningXacts {
        next_xid: next,
        oldest_running_xid: oldest,
        latest_completed_xid: latest,
        xids,
        subxids,
        subxid_overflow: overflow,
    });
    let (_, end) = w
        .insert(pgtypes::TransactionId(0), &rec)
        .map_err(|e| PgError::new(sqlstate::IO_ERROR, format!("could not write to WAL: {e}")))?;
    // Not a commit: no need to wait; the flusher writes it within
    // wal_writer_delay. Ask now so standbys see it promptly.
    w.request_flush(end);
    Ok(Some(end))
}

/// ReplicationSlotsComputeRequiredXmin: recomputes the xmin replication
/// holds and hands it to the horizon ([`txn::procarray::ProcArray::oldest_xmin`]).
/// Called after every change: feedback, a walsender ending, a slot
/// dropped, start-up (slots keep their xmin across restarts).
pub fn update_replication_xmin(db: &crate::Engine) {
    let x = db.replication.required_xmin();
    db.procarray.set_replication_xmin(pgtypes::TransactionId(x));
}

/// Why a hot-standby feedback xmin is not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedbackRejected {
    /// Newer than any xid assigned: from the future.
    Future,
    /// More than 2^32 xids behind: from a wrapped 32-bit counter.
    Wrapped,
}

/// TransactionIdInRecentPast for 64-bit xids: a feedback xmin is believable
/// only if it was assigned already (`<= next_xid`) and lies within 2^32
/// xids of it (the most PostgreSQL's epoch check allows).
pub fn check_feedback_xmin(xmin: u64, next_xid: u64) -> Result<(), FeedbackRejected> {
    if xmin > next_xid {
        return Err(FeedbackRejected::Future);
    }
    if next_xid - xmin > u64::from(u32::MAX) {
        return Err(FeedbackRejected::Wrapped);
    }
    Ok(())
}

/// ProcessStandbyHSFeedbackMessage: the standby streaming through `stat`
/// (from slot `slot`, if any) reports `xmin` (0, or anything below the first
/// normal xid: it holds nothing). A believable xmin is kept in the slot or,
/// without one, in the walsender ([`WalSndStat::feedback_xmin`]), and the
/// horizon is recomputed. An unbelievable one (from the future, wrapped —
/// bad input from the network) is ignored with a log line, never trusted.
pub fn process_hot_standby_feedback(
    db: &crate::Engine,
    stat: &WalSndStat,
    slot: Option<&str>,
    xmin: u64,
) {
    let xmin = if xmin < pgtypes::TransactionId::FIRST_NORMAL.0 {
        0
    } else {
        xmin
    };
    if xmin != 0 {
        if let Err(why) = check_feedback_xmin(xmin, db.procarray.next_xid().0) {
            tracing::debug!("ignoring hot standby feedback xmin {xmin}: {why:?}");
            return;
        }
    }
    match slot {
        Some(name) => {
            if let Err(e) = db.replication.slots.set_xmin(name, xmin) {
                tracing::warn!("could not save replication slot \"{name}\": {}", e.message);
            }
        }
        None => stat.feedback_xmin.store(xmin, RELAXED),
    }
    update_replication_xmin(db);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_persist_and_hold_back_wal() {
        let dir = tempfile::tempdir().unwrap();
        let m = SlotManager::open(Some(dir.path())).unwrap();
        assert_eq!(m.oldest_slot_lsn(), None);
        m.create("s1", Lsn(0x1000000)).unwrap();
        m.create("s2", Lsn::INVALID).unwrap();
        assert_eq!(
            m.create("s1", Lsn::INVALID).unwrap_err().code,
            sqlstate::DUPLICATE_OBJECT
        );
        assert!(m.create("Bad-Name", Lsn::INVALID).is_err());
        assert_eq!(m.oldest_slot_lsn(), Some(Lsn(0x1000000)));
        m.acquire("s1").unwrap();
        assert_eq!(m.acquire("s1").unwrap_err().code, OBJECT_IN_USE);
        m.advance("s1", Lsn(0x2000010), 1 << 24).unwrap();
        m.release("s1");
        let m2 = SlotManager::open(Some(dir.path())).unwrap();
        let l = m2.list();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].restart_lsn, Lsn(0x2000010));
        assert!(!l[0].active);
        m2.drop_slot("s1").unwrap();
        assert_eq!(
            m2.drop_slot("s1").unwrap_err().code,
            sqlstate::UNDEFINED_OBJECT
        );
        assert_eq!(SlotManager::open(Some(dir.path())).unwrap().list().len(), 1);
    }

    /// A slot's feedback xmin survives a restart; the file written before
    /// feedback existed still loads.
    #[test]
    fn slot_xmin_persists() {
        let dir = tempfile::tempdir().unwrap();
        let m = SlotManager::open(Some(dir.path())).unwrap();
        m.create("s1", Lsn(0x1000000)).unwrap();
        assert_eq!(m.oldest_slot_xmin(), 0);
        m.set_xmin("s1", 42).unwrap();
        assert_eq!(m.oldest_slot_xmin(), 42);
        let m2 = SlotManager::open(Some(dir.path())).unwrap();
        assert_eq!(m2.list()[0].xmin, 42, "xmin kept across restart");
        m2.set_xmin("s1", 0).unwrap();
        let m3 = SlotManager::open(Some(dir.path())).unwrap();
        assert_eq!(m3.list()[0].xmin, 0, "released xmin saved too");
        let state = dir.path().join(SLOT_DIR).join("s1").join("state");
        std::fs::write(&state, "physical 0/2000000 xmin bogus\n").unwrap();
        assert_eq!(
            SlotManager::open(Some(dir.path())).unwrap_err().code,
            sqlstate::DATA_CORRUPTED
        );
    }

    /// Feedback from the future or from a wrapped counter is not believed.
    #[test]
    fn feedback_xmin_sanity() {
        assert_eq!(check_feedback_xmin(100, 200), Ok(()));
        assert_eq!(check_feedback_xmin(200, 200), Ok(()));
        assert_eq!(check_feedback_xmin(201, 200), Err(FeedbackRejected::Future));
        assert_eq!(
            check_feedback_xmin(u64::MAX, 200),
            Err(FeedbackRejected::Future)
        );
        assert_eq!(
            check_feedback_xmin(3, 3 + (1u64 << 32)),
            Err(FeedbackRejected::Wrapped)
        );
    }

    /// The feedback of walsenders without a slot and the slots' xmins both
    /// reach the horizon; the older one wins, and releasing one frees it.
    #[test]
    fn feedback_holds_the_horizon() {
        use crate::{Engine, Role};
        use pgtypes::config::Config;
        use pgtypes::TransactionId;
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = Config::new(dir.path());
        cfg.set("fsync", "off").unwrap();
        let db = Engine::open(cfg, Role::Primary, TransactionId::FIRST_NORMAL).unwrap();
        let p = db.procarray.connect(10).unwrap();
        for _ in 0..5 {
            let x = db.procarray.assign_xid(p);
            db.procarray
                .end_transaction(txn::procarray::Finished::Proc(p), x);
        }
        let free = db.procarray.oldest_xmin();
        let old = free.0 - 3;
        let w = Arc::new(WalSndStat::new(7, "standby1", "127.0.0.1"));
        db.replication.register_walsender(w.clone());
        process_hot_standby_feedback(&db, &w, None, old);
        assert_eq!(
            db.procarray.oldest_xmin(),
            TransactionId(old),
            "feedback holds"
        );
        assert_eq!(w.feedback_xmin.load(RELAXED), old, "backend_xmin shows it");
        // From the future: ignored, the held xmin stays.
        process_hot_standby_feedback(&db, &w, None, u64::MAX);
        assert_eq!(db.procarray.oldest_xmin(), TransactionId(old));
        // A slot holding an even older xmin.
        db.replication.slots.create("s", Lsn::INVALID).unwrap();
        process_hot_standby_feedback(&db, &w, Some("s"), old - 1);
        assert_eq!(
            db.procarray.oldest_xmin(),
            TransactionId(old - 1),
            "slot holds"
        );
        // Invalid xmin: released.
        process_hot_standby_feedback(&db, &w, None, 0);
        process_hot_standby_feedback(&db, &w, Some("s"), 0);
        assert_eq!(db.procarray.oldest_xmin(), free, "released");
        db.replication.unregister_walsender(&w);
    }
}
