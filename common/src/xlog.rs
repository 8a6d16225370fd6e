//! # WAL on a node: the control file and start-up (PostgreSQL's xlog.c)
//!
//! The `wal` crate is the log itself and `storage::xloginsert` the handle
//! sessions insert through; this module is what a node does with them at
//! the edges of its life:
//!
//! * [`ControlFile`] — `DIR/global/pg_control`: where the last checkpoint
//!   is, its redo point, and whether the node was shut down cleanly;
//! * [`startup`] — StartupXLOG: read the control file, find the checkpoint,
//!   replay WAL from its redo point with [`crate::redo::apply`], open the
//!   writer at the end of valid WAL.

use std::fs;
use std::path::{Path, PathBuf};

use std::time::Instant;

use wal::{Lsn, WalPosition, WalReader, WalRecord, WalWriter, WalWriterOptions, XlogRecord};

use crate::node::Node;
use pgtypes::config::Config;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::fileutil::{io_error, write_atomic};
use pgtypes::{TimeLineId, TransactionId};

use storage::xloginsert::wal_error;

// ---------------------------------------------------------------------------
// The control file
// ---------------------------------------------------------------------------

/// Size of `global/pg_control` on disk (one sector: written atomically by
/// the device, and we also write it via temp file + rename).
pub const CONTROL_FILE_SIZE: usize = 512;
/// The magic also names the on-disk format (control file, WAL records,
/// pages): a binary refuses a data directory of another format rather than
/// misreading its WAL. Change the number with any such format change.
///
/// `HPCTRL03` added the timelines, `HPCTRL04` the data checksum version.
/// Older files are still read — a `HPCTRL02` one (written before timelines
/// existed) as timeline 1, both without checksums — and rewritten in the
/// new layout at the next checkpoint.
const CONTROL_MAGIC: &[u8; 8] = b"HPCTRL04";
const CONTROL_MAGIC_V3: &[u8; 8] = b"HPCTRL03";
const CONTROL_MAGIC_V2: &[u8; 8] = b"HPCTRL02";
const CONTROL_BODY_V2: usize = 8 + 4 + 8 + 8 + 8 + 4 + 8 + 8 + 8;
const CONTROL_BODY_V3: usize = CONTROL_BODY_V2 + 4 + 4;
const CONTROL_BODY: usize = CONTROL_BODY_V3 + 4;

/// DBState: what the node was doing when the control file was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbState {
    /// Cleanly shut down (the checkpoint is a shutdown checkpoint).
    ShutDown,
    /// Running; a start-up finding this state after a stop crashed.
    InProduction,
    /// A standby's restartpoint (DB_IN_ARCHIVE_RECOVERY): `checkpoint` and
    /// `redo` are those of a replayed checkpoint of the primary, and a
    /// restarted standby replays from `redo` instead of its backup's start.
    InArchiveRecovery,
}

/// `DIR/global/pg_control`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlFile {
    /// Shut down or in production.
    pub state: DbState,
    /// Start of the last checkpoint record.
    pub checkpoint: Lsn,
    /// That checkpoint's redo point.
    pub redo: Lsn,
    /// next_xid at that checkpoint.
    pub next_xid: u64,
    /// next OID at that checkpoint.
    pub next_oid: u32,
    /// `wal_segment_size` the cluster was created with.
    pub segment_size: u64,
    /// When this file was written (µs since 2000-01-01 UTC).
    pub time_us: i64,
    /// Standby (`InArchiveRecovery`): replay had reached here when the
    /// restartpoint wrote the buffers, so the files may hold changes up to
    /// here and hot standby must not open before replay passes it
    /// (minRecoveryPoint). Invalid on a primary.
    pub min_recovery_point: Lsn,
    /// The timeline of that checkpoint (the node's, when written;
    /// `pg_control_checkpoint().timeline_id`).
    pub timeline: TimeLineId,
    /// The timeline of the checkpoint before it: differs from `timeline`
    /// only for the first checkpoint after a promotion
    /// (`prev_timeline_id`).
    pub prev_timeline: TimeLineId,
    /// `data_checksums`, chosen when the directory was created
    /// (`data_checksum_version` 1 when on): every page carries a checksum.
    pub data_checksums: bool,
}

/// Why a control file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlFileError {
    /// Shorter than the fixed layout.
    #[error("control file is {0} bytes, expected {CONTROL_FILE_SIZE}")]
    BadSize(usize),
    /// Not our magic.
    #[error("control file has an unknown format (wrong magic number): the data directory was made by an incompatible hotpair build")]
    BadMagic,
    /// CRC mismatch.
    #[error("incorrect checksum in control file")]
    BadCrc,
    /// A field out of range.
    #[error("invalid data in control file: {0}")]
    BadValue(&'static str),
}

impl ControlFile {
    /// Path of the control file in a data directory.
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join("global").join("pg_control")
    }

    /// The on-disk bytes.
    pub fn encode(&self) -> [u8; CONTROL_FILE_SIZE] {
        let mut b = [0u8; CONTROL_FILE_SIZE];
        let mut o = 0;
        let mut put = |v: &[u8]| {
            b[o..o + v.len()].copy_from_slice(v);
            o += v.len();
        };
        put(CONTROL_MAGIC);
        put(&(match self.state {
            DbState::ShutDown => 1u32,
            DbState::InProduction => 2u32,
            DbState::InArchiveRecovery => 3u32,
        })
        .to_le_bytes());
        put(&self.checkpoint.0.to_le_bytes());
        put(&self.redo.0.to_le_bytes());
        put(&self.next_xid.to_le_bytes());
        put(&self.next_oid.to_le_bytes());
        put(&self.segment_size.to_le_bytes());
        put(&self.time_us.to_le_bytes());
        put(&self.min_recovery_point.0.to_le_bytes());
        put(&self.timeline.0.to_le_bytes());
        put(&self.prev_timeline.0.to_le_bytes());
        put(&u32::from(self.data_checksums).to_le_bytes());
        let crc = crc32fast::hash(&b[..CONTROL_BODY]);
        b[CONTROL_BODY..CONTROL_BODY + 4].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Parses and checks the on-disk bytes.
    pub fn decode(b: &[u8]) -> Result<ControlFile, ControlFileError> {
        if b.len() < CONTROL_FILE_SIZE {
            return Err(ControlFileError::BadSize(b.len()));
        }
        let body = match b.get(..8) {
            Some(m) if m == CONTROL_MAGIC => CONTROL_BODY,
            Some(m) if m == CONTROL_MAGIC_V3 => CONTROL_BODY_V3,
            Some(m) if m == CONTROL_MAGIC_V2 => CONTROL_BODY_V2,
            _ => return Err(ControlFileError::BadMagic),
        };
        let crc = u32::from_le_bytes([b[body], b[body + 1], b[body + 2], b[body + 3]]);
        if crc != crc32fast::hash(&b[..body]) {
            return Err(ControlFileError::BadCrc);
        }
        let u64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(a)
        };
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let state = match u32_at(8) {
            1 => DbState::ShutDown,
            2 => DbState::InProduction,
            3 => DbState::InArchiveRecovery,
            _ => return Err(ControlFileError::BadValue("state")),
        };
        let c = ControlFile {
            state,
            checkpoint: Lsn(u64_at(12)),
            redo: Lsn(u64_at(20)),
            next_xid: u64_at(28),
            next_oid: u32_at(36),
            segment_size: u64_at(40),
            time_us: u64_at(48) as i64,
            min_recovery_point: Lsn(u64_at(56)),
            timeline: if body >= CONTROL_BODY_V3 {
                TimeLineId(u32_at(64))
            } else {
                wal::segment::TIMELINE
            },
            prev_timeline: if body >= CONTROL_BODY_V3 {
                TimeLineId(u32_at(68))
            } else {
                wal::segment::TIMELINE
            },
            data_checksums: match body {
                CONTROL_BODY => match u32_at(72) {
                    0 => false,
                    1 => true,
                    _ => return Err(ControlFileError::BadValue("data_checksum_version")),
                },
                _ => false,
            },
        };
        if c.timeline.0 == 0 || c.prev_timeline.0 == 0 || c.prev_timeline > c.timeline {
            return Err(ControlFileError::BadValue("timeline"));
        }
        if wal::segment::check_segment_size(c.segment_size).is_err() {
            return Err(ControlFileError::BadValue("wal_segment_size"));
        }
        if !c.checkpoint.is_valid() || c.redo > c.checkpoint {
            return Err(ControlFileError::BadValue("checkpoint location"));
        }
        Ok(c)
    }

    /// Reads the control file; `None` if there is none (a new cluster).
    pub fn read(data_dir: &Path) -> PgResult<Option<ControlFile>> {
        let p = Self::path(data_dir);
        match fs::read(&p) {
            Ok(b) => ControlFile::decode(&b).map(Some).map_err(|e| {
                PgError::new(
                    sqlstate::DATA_CORRUPTED,
                    format!("could not use control file \"{}\": {e}", p.display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error("read file", &p, e)),
        }
    }

    /// Writes the control file atomically (`fsync = off` skips the syncs).
    pub fn write(&self, data_dir: &Path, fsync: bool) -> PgResult<()> {
        write_atomic(&Self::path(data_dir), &self.encode(), fsync)
    }
}

/// `2024-05-01 12:00:00 UTC` for a time in µs since 2000-01-01 UTC (log
/// lines).
pub fn format_log_time(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let days = secs.div_euclid(86_400) + pgtypes::datetime::days_from_civil(2000, 1, 1);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = pgtypes::datetime::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

// ---------------------------------------------------------------------------
// Start-up (StartupXLOG)
// ---------------------------------------------------------------------------

/// What start-up found and did, for the caller and tests.
#[derive(Debug, Clone)]
pub struct StartupOutcome {
    /// Records replayed (0 after a clean shutdown).
    pub records_replayed: u64,
    /// Where replay began, if it did.
    pub redo_start: Option<Lsn>,
    /// Where valid WAL ends (the writer continues here).
    pub end_of_wal: Lsn,
    /// Why the reader stopped there (None for a new cluster).
    pub end_reason: Option<wal::EndOfWal>,
}

/// The WAL directory of a data directory.
pub fn wal_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("pg_wal")
}

/// The cluster's segment size: the control file's, else the setting.
pub fn segment_size(config: &Config, ctl: Option<&ControlFile>) -> PgResult<u64> {
    if let Some(c) = ctl {
        return Ok(c.segment_size);
    }
    let raw = config.get("wal_segment_size").unwrap_or("16MB");
    let size = pgtypes::config::parse_bytes(raw).unwrap_or(0);
    wal::segment::check_segment_size_setting(size)
        .map_err(|e| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, e))?;
    Ok(size)
}

/// Writer options from the configuration.
pub fn writer_options(config: &Config, segment_size: u64) -> WalWriterOptions {
    WalWriterOptions::new(segment_size, config.bool("fsync")).panicking()
}

/// Reads the checkpoint record at `lsn` (the control file's).
pub fn read_checkpoint_record(
    dir: &Path,
    segment_size: u64,
    lsn: Lsn,
) -> PgResult<(XlogRecord, Lsn)> {
    let invalid = |why: String| {
        PgError::new(
            sqlstate::DATA_CORRUPTED,
            format!("could not locate a valid checkpoint record at {lsn}: {why}"),
        )
    };
    let mut r = WalReader::new(dir, segment_size).map_err(|e| invalid(e.to_string()))?;
    r.seek(lsn, None);
    match r.next_record() {
        Ok(rec) => match rec.record {
            WalRecord::Xlog(x @ XlogRecord::Checkpoint { .. }) => Ok((x, rec.end_lsn)),
            other => Err(invalid(format!("found {other}"))),
        },
        Err(e) => Err(invalid(e.to_string())),
    }
}

/// StartupXLOG for a primary: replays WAL from the control file's
/// checkpoint (or creates WAL for a new cluster), opens the writer at the
/// end of valid WAL and installs it in `db` (heap, catalog, bufmgr hook).
/// `ctl` is the control file read by the caller (`None`: new cluster).
pub fn startup(db: &Node, ctl: Option<ControlFile>) -> PgResult<StartupOutcome> {
    // Replay is the startup process's IO in pg_stat_io.
    let _io = storage::pgstat_io::as_backend(storage::pgstat_io::BackendType::Startup);
    let data_dir = db.config().data_dir.clone();
    let dir = wal_dir(&data_dir);
    fs::create_dir_all(&dir).map_err(|e| io_error("create directory", &dir, e))?;
    let seg = segment_size(&db.config(), ctl.as_ref())?;
    let Some(ctl) = ctl else {
        // A new cluster: there must be no WAL yet.
        let existing = wal::segment::list_segments(&dir, seg)
            .map_err(|e| io_error("read directory", &dir, e))?;
        if !existing.is_empty() {
            return Err(PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!(
                    "could not find control file \"{}\" but WAL exists",
                    ControlFile::path(&data_dir).display()
                ),
            ));
        }
        let pos = WalPosition::initial(seg);
        let writer =
            WalWriter::open(&dir, writer_options(&db.config(), seg), pos).map_err(wal_error)?;
        start_inserting(db, writer, pos.end);
        crate::checkpointer::create_checkpoint(db, crate::checkpointer::CheckpointKind::Initial)?;
        return Ok(StartupOutcome {
            records_replayed: 0,
            redo_start: None,
            end_of_wal: pos.end,
            end_reason: None,
        });
    };

    match ctl.state {
        DbState::ShutDown => tracing::info!(
            "database system was shut down at {}",
            format_log_time(ctl.time_us)
        ),
        DbState::InProduction => tracing::info!(
            "database system was interrupted; last known up at {}",
            format_log_time(ctl.time_us)
        ),
        DbState::InArchiveRecovery => tracing::info!(
            "database system was interrupted while in recovery at log time {}",
            format_log_time(ctl.time_us)
        ),
    }
    let (ckpt, _) = read_checkpoint_record(&dir, seg, ctl.checkpoint)?;
    let (redo, shutdown_ckpt) = match ckpt {
        XlogRecord::Checkpoint {
            redo,
            next_xid,
            next_oid,
            online,
            ..
        } => {
            db.procarray()
                .advance_next_xid(TransactionId(next_xid.0.saturating_sub(1)));
            db.catalog().advance_next_oid(next_oid);
            (redo, !online)
        }
        _ => (ctl.redo, false),
    };
    if ctl.state != DbState::ShutDown {
        tracing::info!(
            "database system was not properly shut down; automatic recovery in progress"
        );
    }

    let mut reader = WalReader::new(&dir, seg).map_err(|e| io_error("open WAL in", &dir, e))?;
    reader.seek(redo, None);
    let mut started: Option<(Lsn, Instant)> = None;
    let mut last = Lsn::INVALID;
    let mut replayed = 0u64;
    let end = loop {
        match reader.next_record() {
            Ok(rec) => {
                let is_own_checkpoint = rec.start_lsn == ctl.checkpoint && shutdown_ckpt;
                if started.is_none() && !is_own_checkpoint {
                    tracing::info!("redo starts at {}", rec.start_lsn);
                    started = Some((rec.start_lsn, Instant::now()));
                }
                crate::redo::apply(db, &rec).map_err(|e| {
                    PgError::new(
                        e.code,
                        format!(
                            "WAL redo at {} for {} failed: {}",
                            rec.start_lsn, rec.record, e.message
                        ),
                    )
                })?;
                if started.is_some() {
                    replayed += 1;
                }
                last = rec.start_lsn;
            }
            Err(e) => break e,
        }
    };
    if started.is_some() || !matches!(end.reason, wal::EndReason::Zeroed) {
        tracing::info!("{end}");
    }
    if let Some((from, t0)) = started {
        let secs = t0.elapsed().as_secs_f64();
        let mb = end.lsn.distance_from(from) as f64 / (1024.0 * 1024.0);
        tracing::info!(
            "redo done at {last} system usage: elapsed: {secs:.3} s; {replayed} records, {mb:.2} MB of WAL, {:.1} MB/s",
            if secs > 0.0 { mb / secs } else { 0.0 }
        );
    }
    let pos = reader.position();
    let mut tli = wal_timeline(&dir, pos.end, seg).max(ctl.timeline);
    // A promotion that stopped (crashed) after writing the new timeline's
    // history file but before its first segment: the WAL ends exactly at
    // the recorded switch point, so the node goes on on that timeline
    // rather than writing past the fork on the old one.
    let newest = wal::timeline::find_newest_timeline(&dir, tli);
    if newest > tli {
        if let Ok(h) = wal::timeline::read_history(&dir, newest) {
            if h.switch_point(tli).map(|(at, _)| at) == Some(pos.end) {
                tracing::info!("continuing promotion to timeline {newest} at {}", pos.end);
                tli = newest;
            }
        }
    }
    let writer = WalWriter::open(
        &dir,
        writer_options(&db.config(), seg).with_timeline(tli),
        pos,
    )
    .map_err(wal_error)?;
    start_inserting(db, writer, redo);
    db.checkpointer().set_last_redo(redo);
    if started.is_some() {
        crate::checkpointer::create_checkpoint(
            db,
            crate::checkpointer::CheckpointKind::EndOfRecovery,
        )?;
    } else {
        // Clean start: from now on a crash needs recovery.
        ControlFile {
            state: DbState::InProduction,
            time_us: pgtypes::datetime::now_usecs(),
            min_recovery_point: Lsn::INVALID,
            ..ctl
        }
        .write(&data_dir, db.config().bool("fsync"))?;
    }
    Ok(StartupOutcome {
        records_replayed: replayed,
        redo_start: started.map(|s| s.0),
        end_of_wal: pos.end,
        end_reason: Some(end),
    })
}

/// Promotion: opens the writer at `pos` — the end of the last valid record
/// a standby replayed; anything after it (a torn record the walreceiver
/// had half received) is cut off — and starts inserting through it (the
/// node's WAL handle leaves recovery mode). The redo point is `pos`
/// itself: every page changed before it gets a full-page image at its next
/// change until the end-of-recovery checkpoint moves the redo point.
///
/// A promotion (`new_timeline`) also starts the next timeline: its history
/// file is written first (the old timeline ends at `pos.end`), then the
/// writer opens on the new timeline, copying the segment holding the
/// switch point under the new name ([`wal::segment`]).
pub(crate) fn open_after_recovery(
    db: &Node,
    pos: WalPosition,
    seg: u64,
    new_timeline: bool,
) -> PgResult<()> {
    let dir = wal_dir(&db.config().data_dir);
    let old = wal_timeline(&dir, pos.end, seg);
    let tli = if new_timeline {
        let fsync = db.config().bool("fsync");
        let new = TimeLineId(wal::timeline::find_newest_timeline(&dir, old).0 + 1);
        tracing::info!("selected new timeline ID: {new}");
        wal::timeline::write_history(
            &dir,
            new,
            old,
            pos.end,
            wal::timeline::REASON_NO_TARGET,
            fsync,
        )
        .map_err(history_error)?;
        new
    } else {
        old
    };
    let writer = WalWriter::open(
        &dir,
        writer_options(&db.config(), seg).with_timeline(tli),
        pos,
    )
    .map_err(wal_error)?;
    start_inserting(db, writer, pos.end);
    Ok(())
}

/// The timeline of the WAL at `end`: that of the segment file holding it
/// (the highest present, see [`wal::segment`]), else the newest segment's,
/// else timeline 1.
pub fn wal_timeline(dir: &Path, end: Lsn, seg: u64) -> TimeLineId {
    if let Ok(Some((tli, _))) = wal::segment::find_segment(dir, end.segment_number(seg), seg) {
        return tli;
    }
    wal::segment::list_segment_files(dir, seg)
        .ok()
        .and_then(|v| v.into_iter().map(|(t, _)| t).max())
        .unwrap_or(wal::segment::TIMELINE)
}

/// A history file error as the client and the log see it (SQLSTATE
/// XX001 data_corrupted, with PostgreSQL's hint).
pub fn history_error(e: wal::timeline::HistoryError) -> PgError {
    let err = PgError::new(sqlstate::DATA_CORRUPTED, e.to_string());
    match e.hint() {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// Recovery is over: the node's WAL handle (which heap and catalog hold
/// since they were built) starts inserting through `writer`, and the
/// walsenders stream from it.
fn start_inserting(db: &Node, writer: WalWriter, redo: Lsn) {
    let w = db.xlog().start_inserting(writer, redo);
    db.replication().set_wal_writer(w.clone());
}

/// The system identifier: created once per cluster in
/// `global/system_identifier` (when a primary first opens its data
/// directory, written and fsynced with its directory: a power cut must not
/// give the cluster a new identity its standbys would refuse), copied by
/// base backups.
pub fn system_identifier(db: &Node) -> u64 {
    let p = db
        .config()
        .data_dir
        .join("global")
        .join("system_identifier");
    if let Some(v) = std::fs::read_to_string(&p)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    {
        return v;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let v = (now << 12) | u64::from(std::process::id() & 0xfff);
    let fsync = db.config().bool("fsync");
    if let Err(e) = pgtypes::fileutil::write_atomic(&p, format!("{v}\n").as_bytes(), fsync) {
        tracing::warn!("could not write the system identifier: {}", e.message);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ControlFile {
        ControlFile {
            state: DbState::InProduction,
            checkpoint: Lsn(0x100_0028),
            redo: Lsn(0x100_0000),
            next_xid: 1234,
            next_oid: 16390,
            segment_size: 16 << 20,
            time_us: 768_000_000_000_000,
            min_recovery_point: Lsn::INVALID,
            timeline: TimeLineId(3),
            prev_timeline: TimeLineId(2),
            data_checksums: true,
        }
    }

    /// A control file written before timelines existed reads as
    /// timeline 1.
    #[test]
    fn old_layout_reads_as_timeline_one() {
        let c = sample();
        let mut b = c.encode();
        b[..8].copy_from_slice(CONTROL_MAGIC_V2);
        let crc = crc32fast::hash(&b[..CONTROL_BODY_V2]);
        b[CONTROL_BODY_V2..CONTROL_BODY_V2 + 4].copy_from_slice(&crc.to_le_bytes());
        let old = ControlFile::decode(&b).expect("old layout");
        assert_eq!(old.timeline, TimeLineId(1));
        assert_eq!(old.prev_timeline, TimeLineId(1));
        assert_eq!(old.checkpoint, c.checkpoint);
        assert_eq!(old.min_recovery_point, c.min_recovery_point);
        assert!(!old.data_checksums);
    }

    /// A control file written before checksums existed reads with them
    /// off, keeping its timelines.
    #[test]
    fn v3_layout_reads_without_checksums() {
        let c = sample();
        let mut b = c.encode();
        b[..8].copy_from_slice(CONTROL_MAGIC_V3);
        let crc = crc32fast::hash(&b[..CONTROL_BODY_V3]);
        b[CONTROL_BODY_V3..CONTROL_BODY_V3 + 4].copy_from_slice(&crc.to_le_bytes());
        let old = ControlFile::decode(&b).expect("v3 layout");
        assert_eq!(old.timeline, c.timeline);
        assert_eq!(old.prev_timeline, c.prev_timeline);
        assert!(!old.data_checksums);
    }

    #[test]
    fn control_file_round_trip_and_atomic_write() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("global")).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), None);
        let c = sample();
        c.write(dir.path(), true).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), Some(c));
        assert!(!dir.path().join("global/pg_control.tmp").exists());
        let c2 = ControlFile {
            state: DbState::ShutDown,
            ..c
        };
        c2.write(dir.path(), false).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), Some(c2));
        let c2 = ControlFile {
            state: DbState::InArchiveRecovery,
            min_recovery_point: Lsn(0x100_0100),
            ..c
        };
        c2.write(dir.path(), false).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), Some(c2));
    }

    #[test]
    fn corrupted_control_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("global")).unwrap();
        sample().write(dir.path(), false).unwrap();
        let p = ControlFile::path(dir.path());
        let mut b = fs::read(&p).unwrap();
        b[20] ^= 0x40;
        fs::write(&p, &b).unwrap();
        let e = ControlFile::read(dir.path()).unwrap_err();
        assert_eq!(e.code, sqlstate::DATA_CORRUPTED);
        assert!(
            e.message.contains("incorrect checksum in control file"),
            "{}",
            e.message
        );
        fs::write(&p, &b[..30]).unwrap();
        let e = ControlFile::read(dir.path()).unwrap_err();
        assert!(
            e.message.contains("control file is 30 bytes"),
            "{}",
            e.message
        );
        fs::write(&p, vec![0u8; CONTROL_FILE_SIZE]).unwrap();
        let e = ControlFile::read(dir.path()).unwrap_err();
        assert!(e.message.contains("wrong magic number"), "{}", e.message);
        // Every single-byte flip of the body is caught, never a panic.
        let good = sample().encode();
        for i in 0..CONTROL_BODY + 4 {
            let mut b = good;
            b[i] ^= 0x01;
            assert!(ControlFile::decode(&b).is_err(), "flip at {i} accepted");
        }
    }

    #[test]
    fn log_time_format() {
        assert_eq!(format_log_time(0), "2000-01-01 00:00:00 UTC");
        assert_eq!(
            format_log_time(86_400_000_000 + 3_723_000_000),
            "2000-01-02 01:02:03 UTC"
        );
    }
}
