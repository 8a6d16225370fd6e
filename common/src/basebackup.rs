//! # BASE_BACKUP (basebackup.c): an online copy of the data directory
//!
//! A standby starts from a copy of the primary's files taken while writes
//! go on. The copy is made consistent by WAL: every change not (or only
//! partly) in the copied files has a record at or after the backup's start
//! LSN, and the standby replays from there to at least the end LSN.
//!
//! ```text
//!  1. start = insert position; checkpoint (dirty pages, clog to disk)
//!     → every change logged before `start` is in the files
//!  2. copy base/, global/, pg_xact/, pg_twophase/ (files may change under
//!     us: torn or newer pages are fixed by replaying from `start`)
//!  3. log BACKUP_END(start) and a running-xacts record, flush: end = its end
//!  4. copy pg_wal segments [segment(start) … segment(end)], the last one
//!     cut at `end` (the receiver zero-fills it to full size)
//! ```
//!
//! ## Wire format (our own; PostgreSQL sends tar archives)
//!
//! ```text
//!  RowDescription(recptr text, tli int4), DataRow(start, 1), CommandComplete "SELECT"
//!  CopyOutResponse
//!    CopyData 'F' u64 size, path…      a file of `size` bytes begins
//!    CopyData 'D' bytes…               the next bytes of the current file
//!    CopyData 'P' u64 done, u64 total  progress (bytes), at least every 1 MiB
//!  CopyDone
//!  RowDescription(recptr text, tli int4), DataRow(end, 1), CommandComplete "SELECT"
//!  CommandComplete "BASE_BACKUP"
//! ```
//!
//! Paths are relative to the data directory, `/`-separated, and never
//! contain `..` (the receiver checks). Integers are big-endian.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::node::Node;
use bytes::{BufMut, BytesMut};
use pgtypes::error::{sqlstate, PgError};
use protocol::messages::{write_command_complete, BackendMessage};
use wal::{Lsn, WalRecord, XlogRecord};

use crate::walsender::{wal_writer, write_row, Conn, INT4_OID, TEXT_OID};

/// Bytes per 'D' message.
const CHUNK: usize = 64 * 1024;
/// The control file, relative to the data directory.
const CONTROL_FILE: &str = "global/pg_control";
/// Directories copied, relative to the data directory.
const DIRS: &[&str] = &["global", "base", "pg_xact", "pg_twophase"];

fn io_err(what: &str, p: &Path, e: std::io::Error) -> PgError {
    PgError::new(
        sqlstate::IO_ERROR,
        format!("could not {what} \"{}\": {e}", p.display()),
    )
}

fn wal_err(e: wal::WalError) -> PgError {
    PgError::new(sqlstate::IO_ERROR, format!("could not write to WAL: {e}"))
}

/// Files under `root/dir`, recursively, as (relative path, absolute path, size).
fn list_files(
    root: &Path,
    dir: &str,
    out: &mut Vec<(String, PathBuf, u64)>,
) -> Result<(), PgError> {
    let abs = root.join(dir);
    let rd = match std::fs::read_dir(&abs) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err("open directory", &abs, e)),
    };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for ent in entries {
        let name = ent.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tmp") {
            continue;
        }
        let rel = format!("{dir}/{name}");
        let Ok(md) = ent.metadata() else { continue };
        if md.is_dir() {
            list_files(root, &rel, out)?;
        } else if md.is_file() {
            out.push((rel, ent.path(), md.len()));
        }
    }
    Ok(())
}

/// The checkpoint that starts a backup; returns the start LSN (a record
/// boundary from which replay makes the copied files consistent) and the
/// hold that keeps WAL from there until the backup has sent it.
///
/// On a standby (a backup for a cascaded standby) nothing can be logged:
/// the backup starts at the redo point of a restartpoint (one is made now
/// if a newer checkpoint was replayed), whose changes are all in the
/// files; the running-xacts record the primary logged after that
/// checkpoint makes the copy's KnownAssignedXids ready.
fn start_checkpoint(
    db: &Arc<Node>,
    writer: &wal::WalWriter,
) -> Result<(Lsn, engine::replication::WalHold), PgError> {
    if db.replication().in_recovery() {
        let hold = engine::replication::hold_wal(db.engine(), db.checkpointer().last_redo());
        db.checkpoint()?;
        return Ok((db.checkpointer().last_redo(), hold));
    }
    let start = writer.insert_lsn();
    let hold = engine::replication::hold_wal(db.engine(), start);
    db.checkpoint()?;
    Ok((start, hold))
}

/// A standby's control file as its backup carries it: in production
/// state, so that the copy starts from its backup label (a restartpoint's
/// control file would send it to the redo point of whatever restartpoint
/// ran while the files were copied).
fn control_file_for_copy(root: &Path) -> Result<Vec<u8>, PgError> {
    let ctl = crate::xlog::ControlFile::read(root)?.ok_or_else(|| {
        PgError::new(
            "58P01",
            format!(
                "could not open file \"{}\": No such file or directory",
                crate::xlog::ControlFile::path(root).display()
            ),
        )
    })?;
    Ok(crate::xlog::ControlFile {
        state: crate::xlog::DbState::InProduction,
        min_recovery_point: Lsn::INVALID,
        ..ctl
    }
    .encode()
    .to_vec())
}

struct Sender<'a> {
    conn: &'a mut Conn,
    done: u64,
    total: u64,
    last_progress: u64,
    started: Instant,
}

impl Sender<'_> {
    async fn msg(&mut self, payload: BytesMut) -> Result<(), PgError> {
        let _ = BackendMessage::CopyData(payload.freeze()).encode(&mut self.conn.out);
        if self.conn.out.len() >= 256 * 1024 {
            self.conn.flush().await.map_err(|e| {
                PgError::new(
                    sqlstate::CONNECTION_FAILURE,
                    format!("could not send data to client: {e}"),
                )
            })?;
        }
        Ok(())
    }

    async fn progress(&mut self, force: bool) -> Result<(), PgError> {
        if !force && self.done - self.last_progress < (1 << 20) {
            return Ok(());
        }
        self.last_progress = self.done;
        let mut p = BytesMut::with_capacity(17);
        p.put_u8(b'P');
        p.put_u64(self.done);
        p.put_u64(self.total.max(self.done));
        self.msg(p).await
    }

    /// Starts file `rel` of `size` bytes.
    async fn header(&mut self, rel: &str, size: u64) -> Result<(), PgError> {
        let mut h = BytesMut::with_capacity(9 + rel.len());
        h.put_u8(b'F');
        h.put_u64(size);
        h.put_slice(rel.as_bytes());
        self.msg(h).await
    }

    /// Sends `data` as file `rel`.
    async fn bytes(&mut self, rel: &str, data: &[u8]) -> Result<(), PgError> {
        self.header(rel, data.len() as u64).await?;
        for chunk in data.chunks(CHUNK) {
            let mut d = BytesMut::with_capacity(1 + chunk.len());
            d.put_u8(b'D');
            d.put_slice(chunk);
            self.msg(d).await?;
            self.done += chunk.len() as u64;
        }
        self.progress(false).await
    }

    /// Sends `limit` bytes of `abs` as file `rel` (zeros if it shrank).
    async fn file(&mut self, rel: &str, abs: &Path, limit: u64) -> Result<(), PgError> {
        self.header(rel, limit).await?;
        let mut f = match std::fs::File::open(abs) {
            Ok(f) => Some(f),
            // Dropped since listed: send zeros; replay removes it again.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err("open file", abs, e)),
        };
        let mut left = limit;
        let mut buf = vec![0u8; CHUNK];
        while left > 0 {
            let want = (left as usize).min(CHUNK);
            let mut got = 0;
            if let Some(f) = f.as_mut() {
                while got < want {
                    let n = tokio::task::block_in_place(|| f.read(&mut buf[got..want]))
                        .map_err(|e| io_err("read file", abs, e))?;
                    if n == 0 {
                        break;
                    }
                    got += n;
                }
            }
            buf[got..want].fill(0);
            let mut d = BytesMut::with_capacity(1 + want);
            d.put_u8(b'D');
            d.put_slice(&buf[..want]);
            self.msg(d).await?;
            left -= want as u64;
            self.done += want as u64;
            self.progress(false).await?;
        }
        Ok(())
    }
}

/// BASE_BACKUP: see the module docs. `options` are the upper-cased words
/// after the command (PROGRESS, LABEL 'x', FAST … are accepted and ignored).
pub(crate) async fn send(
    db: &Arc<Node>,
    conn: &mut Conn,
    _options: &[&str],
) -> Result<(), PgError> {
    let writer = wal_writer(db)?;
    let seg = writer.segment_size();
    let root = db.config().data_dir.clone();
    let started = Instant::now();
    let from_standby = db.replication().in_recovery();
    let (start, _hold) = tokio::task::block_in_place(|| start_checkpoint(db, &writer))?;
    tracing::info!("base backup: checkpoint done, backup starts at {start}");
    // Make sure the system identifier exists so the copy carries it.
    let _ = crate::xlog::system_identifier(db);

    write_row(
        &mut conn.out,
        &[("recptr", TEXT_OID), ("tli", INT4_OID)],
        &[
            Some(&start.to_string()),
            Some(&writer.timeline().to_string()),
        ],
        "SELECT",
    );
    let _ = BackendMessage::CopyOutResponse {
        format: 0,
        column_formats: vec![],
    }
    .encode(&mut conn.out);

    let mut files = Vec::new();
    for d in DIRS {
        list_files(&root, d, &mut files)?;
    }
    // The client authentication files travel with the data, as in
    // PostgreSQL's base backups: the standby admits who the primary does.
    for name in ["pg_hba.conf", "pg_ident.conf"] {
        let path = root.join(name);
        if let Ok(md) = std::fs::metadata(&path) {
            if md.is_file() {
                files.push((name.into(), path, md.len()));
            }
        }
    }
    let data_total: u64 = files.iter().map(|f| f.2).sum();
    let mut s = Sender {
        conn,
        done: 0,
        total: data_total + seg,
        last_progress: 0,
        started,
    };
    s.progress(true).await?;
    for (rel, abs, size) in &files {
        if from_standby && rel == CONTROL_FILE {
            let ctl = tokio::task::block_in_place(|| control_file_for_copy(&root))?;
            s.bytes(rel, &ctl).await?;
        } else {
            s.file(rel, abs, *size).await?;
        }
    }

    let end = if from_standby {
        // All the WAL received: replay never passes it, so no page copied
        // holds a change from beyond it (a standby writes a page only
        // after replaying its record), and the copy is consistent once it
        // has replayed this far.
        let replayed = db
            .replication()
            .replay_lsn
            .load(std::sync::atomic::Ordering::Acquire);
        writer.write_lsn().max(replayed).max(start)
    } else {
        // End of the data files: BACKUP_END and a running-xacts record, so
        // the standby can reach consistency right after replaying them.
        let (_, end) = writer
            .insert(
                pgtypes::TransactionId(0),
                &WalRecord::Xlog(XlogRecord::BackupEnd { start }),
            )
            .map_err(wal_err)?;
        let end = engine::replication::log_running_xacts(db)?.unwrap_or(end);
        tokio::task::block_in_place(|| writer.flush(end)).map_err(wal_err)?;
        end
    };

    let first = start.segment_number(seg);
    let last = end.segment_number(seg);
    s.total = s.done + (last - first) * seg + end.segment_offset(seg);
    for segno in first..=last {
        let (name, abs) = match wal::segment::find_segment(writer.dir(), segno, seg) {
            Ok(Some((tli, abs))) => (wal::segment::segment_file_name_tli(tli, segno, seg), abs),
            _ => {
                let tli = writer.timeline();
                let name = wal::segment::segment_file_name_tli(tli, segno, seg);
                (
                    name,
                    wal::segment::segment_path_tli(writer.dir(), tli, segno, seg),
                )
            }
        };
        let limit = if segno == last {
            end.segment_offset(seg)
        } else {
            seg
        };
        if limit == 0 {
            continue;
        }
        if !abs.exists() {
            return Err(PgError::new(
                "58P01",
                format!("requested WAL segment {name} has already been removed"),
            ));
        }
        s.file(&format!("pg_wal/{name}"), &abs, limit).await?;
    }
    // Timeline history files: the copy must know its ancestry to follow
    // its primary's next promotion (PostgreSQL's base backup sends them
    // too).
    let mut histories: Vec<(String, std::path::PathBuf, u64)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(writer.dir()) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if wal::timeline::parse_history_file_name(&name).is_some() {
                let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                histories.push((name, e.path(), len));
            }
        }
    }
    histories.sort();
    for (name, abs, len) in &histories {
        s.file(&format!("pg_wal/{name}"), abs, *len).await?;
    }
    s.progress(true).await?;
    let elapsed = s.started.elapsed();
    let total_kb = s.done / 1024;
    let _ = BackendMessage::CopyDone.encode(&mut s.conn.out);
    write_row(
        &mut s.conn.out,
        &[("recptr", TEXT_OID), ("tli", INT4_OID)],
        &[Some(&end.to_string()), Some(&writer.timeline().to_string())],
        "SELECT",
    );
    let _ = write_command_complete(&mut s.conn.out, "BASE_BACKUP");
    tracing::info!(
        "base backup: sent {} files, {total_kb} kB, WAL {start} to {end}, in {:.1} s",
        files.len() + (last - first + 1) as usize,
        elapsed.as_secs_f64()
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Single files: what `rewind` fetches (pg_rewind's pg_ls_dir / pg_stat_file /
// pg_read_binary_file, as replication commands)
// ---------------------------------------------------------------------------

/// Most bytes one READ_DATA_FILE returns.
pub const READ_DATA_FILE_MAX: u64 = 16 << 20;

/// LIST_DATA_FILES: one row `(path text, size int8)` per file a base backup
/// would copy from the data directories (`global/`, `base/`, `pg_xact/`,
/// `pg_twophase/`), sorted by path.
pub(crate) fn write_file_list(db: &Node, out: &mut BytesMut) -> Result<(), PgError> {
    let root = db.config().data_dir.clone();
    let mut files = Vec::new();
    for d in DIRS {
        list_files(&root, d, &mut files)?;
    }
    let _ = BackendMessage::RowDescription(vec![
        crate::walsender::field_info("path", TEXT_OID),
        crate::walsender::field_info("size", crate::walsender::INT8_OID),
    ])
    .encode(out);
    for (rel, _, size) in &files {
        if let Ok(mut w) = protocol::messages::DataRowWriter::begin(out, 2) {
            w.value(rel.as_bytes());
            w.value(size.to_string().as_bytes());
            let _ = w.finish();
        }
    }
    let _ = write_command_complete(out, &format!("SELECT {}", files.len()));
    Ok(())
}

/// Checks a path a client names (READ_DATA_FILE) the way
/// `pg_read_binary_file` checks one for an unprivileged caller, and further
/// limits it to the directories a base backup copies. Returns the file's
/// absolute path.
pub(crate) fn check_data_file_path(root: &Path, rel: &str) -> Result<PathBuf, PgError> {
    let p = Path::new(rel);
    if p.is_absolute() {
        return Err(PgError::new(
            sqlstate::INSUFFICIENT_PRIVILEGE,
            "absolute path not allowed",
        ));
    }
    if rel.is_empty()
        || p.components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(PgError::new(
            sqlstate::INSUFFICIENT_PRIVILEGE,
            "path must be in or below the current directory",
        ));
    }
    if !DIRS.iter().any(|d| p.starts_with(d)) || DIRS.contains(&rel) {
        return Err(PgError::new(
            sqlstate::INSUFFICIENT_PRIVILEGE,
            format!("file \"{rel}\" is not in a directory a base backup copies"),
        ));
    }
    Ok(root.join(p))
}

/// READ_DATA_FILE: up to `length` bytes (at most [`READ_DATA_FILE_MAX`])
/// of the file at `offset`; fewer at its end, `None` if it does not exist
/// (dropped since it was listed: `pg_read_binary_file(…, missing_ok)`).
pub(crate) fn read_data_file(
    db: &Node,
    rel: &str,
    offset: u64,
    length: u64,
) -> Result<Option<Vec<u8>>, PgError> {
    use std::os::unix::fs::FileExt;
    let abs = check_data_file_path(&db.config().data_dir, rel)?;
    let f = match std::fs::File::open(&abs) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("open file", Path::new(rel), e)),
    };
    let mut buf = vec![0u8; length.min(READ_DATA_FILE_MAX) as usize];
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err("read file", Path::new(rel), e)),
        }
    }
    buf.truncate(got);
    Ok(Some(buf))
}
