//! # rewind (pg_rewind): an old primary made a standby of the new one
//!
//! After a failover the old primary's data directory has WAL, and pages,
//! the new primary never saw: it *diverged* at the point where the new
//! primary's timeline forked off. `rewind` makes it a copy of the new
//! primary again without a full base backup, by replacing only what the
//! old primary changed since the fork and letting replay do the rest:
//!
//! ```text
//!  1. target stopped?  postmaster.pid not locked (a SIGKILLed target is fine, below)
//!  2. source: IDENTIFY_SYSTEM (same system identifier?), TIMELINE_HISTORY
//!     target: global/pg_control, pg_wal/*.history
//!     fork point = where the last common timeline ends in either history
//!  3. target WAL from its checkpoint to its end: past the fork point?
//!       no  → "no rewind required", exit 0, nothing written (but
//!             --write-recovery-conf's files, as pg_rewind)
//!       yes → last common checkpoint C = last checkpoint record before the
//!             fork (forward from the control file's checkpoint, or following
//!             prev-links back from the fork point)
//!  4. target WAL from C's redo point to its end → every (relation, fork,
//!     block) a record changed; the changed blocks come from the source
//!  5. LIST_DATA_FILES on the source, the same walk of the target:
//!       relation file on both       truncate/extend to the source's size,
//!                                   copy the changed blocks and the new tail
//!       only on the source          copied whole (dropped on the target)
//!       only on the target          removed (created on the target)
//!       catalog, pg_xact, pg_twophase, other files of global/
//!                                   copied whole (catalog and DDL records,
//!                                   commits and 2PC state are not block
//!                                   changes); pg_control is written below
//!  6. backup_label (start = C's redo, end = the source's flushed WAL after
//!     the copy) and pg_control in state InArchiveRecovery at C with that
//!     end as minRecoveryPoint
//!  7. pg_wal: the target's WAL is cut at the fork point (later segments and
//!     the other timelines' files removed, the fork segment zeroed from
//!     there); the source's history files written; --write-recovery-conf:
//!     primary_conninfo in hotpair.conf and standby.signal
//! ```
//!
//! `standby -D DIR` then replays from C's redo point: the common WAL it
//! kept, then — streamed from the source, following the timeline switch at
//! the fork point like any standby — the new timeline, and is consistent
//! past the source's position at the end of the copy. Pages copied from a
//! live source may be newer than the WAL being replayed or torn; redo's
//! page-LSN rule and the full-page images after the source's checkpoints
//! fix them, as for a base backup. The catalog file carries its own LSN and
//! skips older records.
//!
//! ## Why these files and no others
//!
//! * Every page change is WAL-logged with its block (heap records,
//!   full-page images); a page is written only after its WAL is flushed.
//!   So the WAL from C's redo to the end of *valid* WAL names every block
//!   the target changed since C, even after a SIGKILL (PostgreSQL's
//!   pg_rewind first runs single-user crash recovery; it needs it for its
//!   own checks, not for this). A crash cannot tear a page the way a power
//!   failure does, and a torn page from a logged change is replaced whole.
//! * **Hint bits** are set without WAL (PostgreSQL without
//!   `wal_log_hints`, which pg_rewind refuses). A hint on a page the target
//!   changed only by hints can record a post-fork outcome: a transaction
//!   running at the fork that committed on the target but is aborted on
//!   the source. Such an xid is at least the oldest xid running at C
//!   (C's `oldest_active_xid`, else its `next_xid`); on every page kept
//!   from the target, hints about xids from there on are cleared —
//!   always safe, a hint is a cache of the clog — and found again.
//! * Non-relation state (catalog, clog, prepared transactions) is small
//!   and copied whole; `postmaster.pid`, the configuration files,
//!   `pg_replslot/` and `global/system_identifier` stay the target's.
//!
//! ## Fetching: replication commands, not SQL functions
//!
//! pg_rewind reads the source through `pg_ls_dir`, `pg_stat_file` and
//! `pg_read_binary_file` over a normal connection. The source here is read
//! over a replication connection (`replication=true`, a REPLICATION role,
//! the `replication` line of pg_hba.conf — what a standby of that source
//! needs anyway) with two commands of the walsender: `LIST_DATA_FILES`
//! (path, size of every file a base backup copies) and `READ_DATA_FILE
//! 'path' offset length` (a bytea; NULL once dropped), which refuse
//! absolute paths and `..` with `pg_read_binary_file`'s errors and serve
//! only the directories a base backup copies. One connection does the
//! whole rewind: IDENTIFY_SYSTEM, TIMELINE_HISTORY and the files.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use common::xlog::{ControlFile, DbState};
use pgtypes::{TimeLineId, TransactionId, BLCKSZ};
use protocol::client::Client;
use protocol::messages::{BackendMessage, FrontendMessage};
use storage::bufpage::Page;
use storage::htup::{self, TupleHeader};
use wal::timeline::TimeLineHistory;
use wal::{BlockRef, Lsn, WalReader, WalRecord, XlogRecord};

use crate::basebackup::BackupLabel;
use crate::conninfo::ConnInfo;

/// What to do (the command line).
#[derive(Debug, Clone)]
pub struct Options {
    /// The old primary's data directory.
    pub target: PathBuf,
    /// The new primary.
    pub source: ConnInfo,
    /// The source's conninfo as given (written by `write_recovery_conf`).
    pub source_text: String,
    /// Make the target a standby of the source (hotpair.conf, standby.signal).
    pub write_recovery_conf: bool,
    /// Everything but writing.
    pub dry_run: bool,
    /// Progress lines while copying.
    pub progress: bool,
}

/// How a rewind ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The target had not diverged: nothing was written.
    NotNeeded,
    /// The target was rewound (or would have been, with `dry_run`).
    Rewound,
}

/// Blocks per READ_DATA_FILE when copying blocks or whole files (1 MiB).
const RUN_BLOCKS: u64 = 128;
const CHUNK: u64 = RUN_BLOCKS * BLCKSZ as u64;

/// Directories synchronised with the source (those a base backup copies).
const DIRS: &[&str] = &["global", "base", "pg_xact", "pg_twophase"];

/// Files of those directories that stay the target's.
const KEEP: &[&str] = &["global/pg_control", "global/system_identifier"];

/// A relation fork file `base/<relfileid>[_fsm]`: (relfileid, fork).
fn relation_file(path: &str) -> Option<(u32, u8)> {
    let name = path.strip_prefix("base/")?;
    let (num, fork) = match name.strip_suffix("_fsm") {
        Some(n) => (n, 1),
        None => (name, 0),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((num.parse().ok()?, fork))
}

/// What happens to one file of the target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    /// Copy the whole file from the source.
    Copy { size: u64 },
    /// Remove it (only the target has it).
    Remove,
    /// A relation fork on both: set its length to the source's and copy
    /// these blocks; the others are kept (hints cleared).
    Blocks {
        source_size: u64,
        target_size: u64,
        blocks: BTreeSet<u32>,
    },
}

/// The source server over one replication connection.
struct Source {
    client: Client,
}

/// IDENTIFY_SYSTEM's answer.
struct Identity {
    sysid: String,
    timeline: TimeLineId,
    flushed: Lsn,
}

impl Source {
    async fn connect(ci: &ConnInfo) -> Result<Source, String> {
        let client = ci.connect(&ci.startup_params()).await.map_err(|e| {
            format!(
                "could not connect to the source server ({}:{}): {e}",
                ci.host, ci.port
            )
        })?;
        Ok(Source { client })
    }

    /// Runs a replication command; its rows, values raw.
    async fn rows(&mut self, cmd: &str) -> Result<Vec<Vec<Option<Vec<u8>>>>, String> {
        self.client
            .send(FrontendMessage::Query(cmd.to_string()))
            .await
            .map_err(|e| format!("could not send \"{cmd}\" to the source server: {e}"))?;
        let mut rows = Vec::new();
        let mut error = None;
        loop {
            match self
                .client
                .recv()
                .await
                .map_err(|e| format!("could not receive the result of \"{cmd}\": {e}"))?
            {
                BackendMessage::DataRow(v) => {
                    rows.push(v.into_iter().map(|b| b.map(|b| b.to_vec())).collect())
                }
                BackendMessage::ErrorResponse(e) => error = Some(e.message().to_string()),
                BackendMessage::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(format!("\"{cmd}\" failed on the source server: {e}")),
            None => Ok(rows),
        }
    }

    async fn identify(&mut self) -> Result<Identity, String> {
        let rows = self.rows("IDENTIFY_SYSTEM").await?;
        let text = |i: usize| {
            rows.first()
                .and_then(|r| r.get(i).cloned().flatten())
                .and_then(|b| String::from_utf8(b).ok())
        };
        let bad = || "invalid IDENTIFY_SYSTEM result from the source server".to_string();
        Ok(Identity {
            sysid: text(0).ok_or_else(bad)?,
            timeline: text(1)
                .and_then(|t| t.parse::<u32>().ok())
                .filter(|t| *t > 0)
                .map(TimeLineId)
                .ok_or_else(bad)?,
            flushed: text(2)
                .and_then(|l| l.parse::<Lsn>().ok())
                .ok_or_else(bad)?,
        })
    }

    /// TIMELINE_HISTORY `tli`: the file's content.
    async fn history(&mut self, tli: TimeLineId) -> Result<Vec<u8>, String> {
        let rows = self.rows(&format!("TIMELINE_HISTORY {tli}")).await?;
        rows.into_iter()
            .next()
            .and_then(|r| r.into_iter().nth(1).flatten())
            .ok_or_else(|| format!("no history file for timeline {tli} on the source server"))
    }

    /// LIST_DATA_FILES: path → size.
    async fn list(&mut self) -> Result<BTreeMap<String, u64>, String> {
        let mut out = BTreeMap::new();
        for r in self.rows("LIST_DATA_FILES").await? {
            let path = r
                .first()
                .cloned()
                .flatten()
                .and_then(|b| String::from_utf8(b).ok());
            let size = r
                .get(1)
                .cloned()
                .flatten()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|s| s.parse::<u64>().ok());
            match (path, size) {
                (Some(p), Some(s)) => {
                    out.insert(p, s);
                }
                _ => return Err("invalid LIST_DATA_FILES result from the source server".into()),
            }
        }
        Ok(out)
    }

    /// READ_DATA_FILE: `None` if the file is gone.
    async fn read(&mut self, path: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, String> {
        let rows = self
            .rows(&format!("READ_DATA_FILE '{path}' {offset} {len}"))
            .await?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }
}

/// The file walk of the target's synchronised directories: path → size.
fn list_target(root: &Path) -> Result<BTreeMap<String, u64>, String> {
    fn walk(root: &Path, rel: &str, out: &mut BTreeMap<String, u64>) -> Result<(), String> {
        let abs = root.join(rel);
        let rd = match fs::read_dir(&abs) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(format!(
                    "could not open directory \"{}\": {e}",
                    abs.display()
                ))
            }
        };
        for ent in rd {
            let ent =
                ent.map_err(|e| format!("could not read directory \"{}\": {e}", abs.display()))?;
            let name = ent.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tmp") {
                continue;
            }
            let p = format!("{rel}/{name}");
            let md = ent
                .metadata()
                .map_err(|e| format!("could not stat file \"{}\": {e}", ent.path().display()))?;
            if md.is_dir() {
                walk(root, &p, out)?;
            } else if md.is_file() {
                out.insert(p, md.len());
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    for d in DIRS {
        walk(root, d, &mut out)?;
    }
    Ok(out)
}

/// The last timeline both histories share and where it ends in either
/// (the earlier end): `None` when neither left it (same timeline).
fn fork_point(
    source: &TimeLineHistory,
    target: &TimeLineHistory,
) -> Result<(TimeLineId, Option<Lsn>), String> {
    let mut common = None;
    for (s, t) in source.entries.iter().zip(target.entries.iter()) {
        if s.tli != t.tli || s.begin != t.begin {
            break;
        }
        common = Some((s, t));
    }
    let Some((s, t)) = common else {
        return Err(
            "could not find common ancestor of the source and target cluster's timelines".into(),
        );
    };
    let end = match (s.end, t.end) {
        (None, None) => None,
        (Some(a), None) | (None, Some(a)) => Some(a),
        (Some(a), Some(b)) => Some(a.min(b)),
    };
    Ok((s.tli, end))
}

/// The last common checkpoint: its LSN and record.
struct CommonCheckpoint {
    lsn: Lsn,
    redo: Lsn,
    next_xid: TransactionId,
    oldest_active_xid: TransactionId,
    next_oid: u32,
}

fn as_checkpoint(lsn: Lsn, rec: &WalRecord) -> Option<CommonCheckpoint> {
    match rec {
        WalRecord::Xlog(XlogRecord::Checkpoint {
            redo,
            next_xid,
            oldest_active_xid,
            next_oid,
            ..
        }) => Some(CommonCheckpoint {
            lsn,
            redo: *redo,
            next_xid: *next_xid,
            oldest_active_xid: *oldest_active_xid,
            next_oid: *next_oid,
        }),
        _ => None,
    }
}

/// Where the target's valid WAL ends, scanning from its control file's
/// checkpoint, and the last checkpoint before `fork` seen on the way.
fn scan_target_end(
    wal_dir: &Path,
    seg: u64,
    ctl: &ControlFile,
    fork: Lsn,
) -> Result<(Lsn, Option<CommonCheckpoint>), String> {
    let mut r = WalReader::new(wal_dir, seg)
        .map_err(|e| format!("could not open WAL in \"{}\": {e}", wal_dir.display()))?;
    r.seek(ctl.checkpoint, None);
    let mut last = None;
    let mut first = true;
    loop {
        match r.next_record() {
            Ok(rec) => {
                first = false;
                if rec.start_lsn < fork {
                    if let Some(c) = as_checkpoint(rec.start_lsn, &rec.record) {
                        last = Some(c);
                    }
                }
            }
            Err(end) if first => {
                return Err(format!(
                    "could not read the target's checkpoint record at {}: {end}",
                    ctl.checkpoint
                ))
            }
            Err(end) => return Ok((end.lsn, last)),
        }
    }
}

/// The last checkpoint record before `fork`, following prev-links back
/// from the record at the fork point (pg_rewind's findLastCheckpoint).
fn find_last_checkpoint(wal_dir: &Path, seg: u64, fork: Lsn) -> Result<CommonCheckpoint, String> {
    let mut r = WalReader::new(wal_dir, seg)
        .map_err(|e| format!("could not open WAL in \"{}\": {e}", wal_dir.display()))?;
    let mut at = fork;
    loop {
        r.seek(at, None);
        let rec = r
            .next_record()
            .map_err(|e| format!("could not find previous WAL record at {at}: {e}"))?;
        if rec.start_lsn < fork {
            if let Some(c) = as_checkpoint(rec.start_lsn, &rec.record) {
                return Ok(c);
            }
        }
        if !rec.header.prev.is_valid() || rec.header.prev >= at {
            return Err(format!(
                "could not find a checkpoint record before the fork point {fork}"
            ));
        }
        at = rec.header.prev;
    }
}

/// Blocks changed, per (relfileid, fork).
type ChangedBlocks = HashMap<(u32, u8), BTreeSet<u32>>;

/// Every block the target's WAL changes from `from` to its end.
fn changed_blocks(wal_dir: &Path, seg: u64, from: Lsn, fork: Lsn) -> Result<ChangedBlocks, String> {
    let mut r = WalReader::new(wal_dir, seg)
        .map_err(|e| format!("could not open WAL in \"{}\": {e}", wal_dir.display()))?;
    r.seek(from, None);
    let mut map = ChangedBlocks::new();
    let mut refs: Vec<BlockRef> = Vec::new();
    loop {
        match r.next_record() {
            Ok(rec) => {
                refs.clear();
                rec.record.blocks(&mut refs);
                for b in &refs {
                    map.entry((b.rel.0, b.fork)).or_default().insert(b.block.0);
                }
            }
            Err(end) => {
                if end.lsn <= fork {
                    return Err(format!(
                        "could not read WAL record at {}: {end}: the target's WAL from the last common checkpoint's redo point {from} to the fork point {fork} is needed",
                        end.lsn
                    ));
                }
                return Ok(map);
            }
        }
    }
}

/// What happens to each file (pg_rewind's filemap): `source` and `target`
/// list path → size, `changed` the blocks the target's WAL names.
fn file_map(
    source_files: &BTreeMap<String, u64>,
    target_files: &BTreeMap<String, u64>,
    changed: &ChangedBlocks,
) -> BTreeMap<String, Action> {
    let mut plan: BTreeMap<String, Action> = BTreeMap::new();
    for (path, &size) in source_files {
        if KEEP.contains(&path.as_str()) {
            continue;
        }
        let action = match (target_files.get(path), relation_file(path)) {
            (Some(&tsize), Some(key)) => {
                let src_blocks = size / BLCKSZ as u64;
                let tgt_blocks = tsize / BLCKSZ as u64;
                let mut blocks: BTreeSet<u32> = changed
                    .get(&key)
                    .map(|b| {
                        b.range(..src_blocks.min(u32::MAX as u64) as u32)
                            .copied()
                            .collect()
                    })
                    .unwrap_or_default();
                blocks.extend((tgt_blocks..src_blocks).map(|b| b as u32));
                Action::Blocks {
                    source_size: size,
                    target_size: tsize,
                    blocks,
                }
            }
            _ => Action::Copy { size },
        };
        plan.insert(path.clone(), action);
    }
    for path in target_files.keys() {
        if !source_files.contains_key(path) && !KEEP.contains(&path.as_str()) {
            plan.insert(path.clone(), Action::Remove);
        }
    }
    plan
}

/// Carries out one file's [`Action`] on the target.
async fn apply(
    source: &mut Source,
    target: &Path,
    path: &str,
    action: &Action,
    hint_from: TransactionId,
    progress: &mut Progress<'_>,
) -> Result<(), String> {
    let abs = target.join(path);
    match action {
        Action::Remove => match fs::remove_file(&abs) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("remove file", &abs, e)),
        },
        Action::Copy { .. } => {
            if let Some(parent) = abs.parent() {
                fs::create_dir_all(parent).map_err(|e| io("create directory", parent, e))?;
            }
            let mut f = File::create(&abs).map_err(|e| io("create file", &abs, e))?;
            // Other files in one request when they fit: one open on
            // the source, so a file replaced by rename (the catalog)
            // is never read half old, half new.
            let chunk = if relation_file(path).is_some() {
                CHUNK
            } else {
                common::basebackup::READ_DATA_FILE_MAX
            };
            let mut offset = 0u64;
            loop {
                let Some(data) = source.read(path, offset, chunk).await? else {
                    // Dropped on the source since listed: replay drops it too.
                    break;
                };
                f.write_all(&data).map_err(|e| io("write file", &abs, e))?;
                offset += data.len() as u64;
                progress.add(data.len() as u64, false);
                if (data.len() as u64) < chunk {
                    break;
                }
            }
            f.sync_all().map_err(|e| io("fsync file", &abs, e))?;
        }
        Action::Blocks {
            source_size,
            target_size,
            blocks,
        } => {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&abs)
                .map_err(|e| io("open file", &abs, e))?;
            if source_size != target_size {
                f.set_len(*source_size)
                    .map_err(|e| io("truncate file", &abs, e))?;
            }
            // Pages kept from the target: hints about post-fork
            // outcomes cleared (main fork: heap pages).
            if relation_file(path).is_some_and(|(_, fork)| fork == 0) {
                let kept = (*source_size.min(target_size)) / BLCKSZ as u64;
                tokio::task::block_in_place(|| {
                    let mut page = Page::default();
                    for b in 0..kept {
                        if blocks.contains(&(b as u32)) {
                            continue;
                        }
                        let at = b * BLCKSZ as u64;
                        f.read_exact_at(&mut page.0, at)
                            .map_err(|e| io("read file", &abs, e))?;
                        if clear_hints(&mut page, hint_from) {
                            f.write_all_at(&page.0, at)
                                .map_err(|e| io("write file", &abs, e))?;
                        }
                    }
                    Ok::<(), String>(())
                })?;
            }
            // Consecutive blocks in one request.
            let list: Vec<u32> = blocks.iter().copied().collect();
            let mut i = 0;
            while i < list.len() {
                let start = list[i];
                let mut n = 1;
                while i + n < list.len()
                    && (n as u64) < RUN_BLOCKS
                    && list[i + n] == start + n as u32
                {
                    n += 1;
                }
                let at = start as u64 * BLCKSZ as u64;
                let want = n as u64 * BLCKSZ as u64;
                if let Some(data) = source.read(path, at, want).await? {
                    f.write_all_at(&data, at)
                        .map_err(|e| io("write file", &abs, e))?;
                }
                progress.add(want, false);
                i += n;
            }
            f.sync_all().map_err(|e| io("fsync file", &abs, e))?;
        }
    }
    Ok(())
}

/// Clears the hint bits about xids at or after `from` on one page;
/// true if it changed (see the module docs).
fn clear_hints(page: &mut Page, from: TransactionId) -> bool {
    if page.is_new() || page.verify().is_err() {
        return false;
    }
    let mut changed = false;
    for off in 1..=page.max_offset() {
        let Ok(item) = page.item_mut(off) else {
            continue;
        };
        let Some(mut h) = TupleHeader::read(item) else {
            continue;
        };
        let mut clear = 0;
        if h.xmin >= from {
            clear |= htup::XMIN_COMMITTED | htup::XMIN_INVALID;
        }
        if h.xmax >= from {
            clear |= htup::XMAX_COMMITTED | htup::XMAX_INVALID;
        }
        if h.infomask & clear != 0 {
            h.infomask &= !clear;
            h.write(item);
            changed = true;
        }
    }
    changed
}

fn io(what: &str, p: &Path, e: std::io::Error) -> String {
    format!("could not {what} \"{}\": {e}", p.display())
}

/// Progress of the copy (`--progress`).
struct Progress<'a> {
    on: bool,
    done: u64,
    total: u64,
    last: u64,
    log: &'a mut dyn FnMut(&str),
}

impl Progress<'_> {
    fn add(&mut self, n: u64, force: bool) {
        self.done += n;
        if self.on && (force || self.done - self.last >= 1 << 20) {
            self.last = self.done;
            let pct = (self.done * 100)
                .checked_div(self.total)
                .unwrap_or(100)
                .min(100);
            (self.log)(&format!(
                "{}/{} kB ({pct}%) copied",
                self.done / 1024,
                self.total / 1024
            ));
        }
    }
}

/// Rewinds `opts.target` (see the module docs); `log` gets pg_rewind's
/// progress messages, one line each.
pub async fn run(opts: &Options, log: &mut dyn FnMut(&str)) -> Result<Outcome, String> {
    let target = &opts.target;
    // 1. The target must not be running.
    if let Some(pid) = common::postmaster::running_server(target)? {
        return Err(format!(
            "target server must be shut down cleanly\nDETAIL:  A server (PID {pid}) is running in data directory \"{}\" (lock file \"postmaster.pid\" is held).",
            target.display()
        ));
    }
    let ctl = ControlFile::read(target)
        .map_err(|e| e.into_fields().message)?
        .ok_or_else(|| {
            format!(
                "could not open file \"{}\": no control file: not a data directory",
                ControlFile::path(target).display()
            )
        })?;
    let seg = ctl.segment_size;
    let wal_dir = target.join("pg_wal");
    let target_sysid = fs::read_to_string(target.join("global/system_identifier"))
        .map_err(|e| io("read file", &target.join("global/system_identifier"), e))?
        .trim()
        .to_string();

    // 2. The source, its history and the fork point.
    let mut source = Source::connect(&opts.source).await?;
    let id = source.identify().await?;
    if id.sysid != target_sysid {
        return Err(format!(
            "source and target clusters are from different systems\nDETAIL:  The source's system identifier is {}, the target's is {target_sysid}.",
            id.sysid
        ));
    }
    let mut source_histories: Vec<(TimeLineId, Vec<u8>)> = Vec::new();
    let source_history = if id.timeline.0 > 1 {
        let content = source.history(id.timeline).await?;
        let text = String::from_utf8_lossy(&content).into_owned();
        let h = wal::timeline::parse_history(&text, id.timeline).map_err(|e| e.to_string())?;
        source_histories.push((id.timeline, content));
        h
    } else {
        wal::timeline::read_history(&wal_dir, TimeLineId(1)).map_err(|e| e.to_string())?
    };
    let target_tli = wal::segment::list_segment_files(&wal_dir, seg)
        .map_err(|e| io("read directory", &wal_dir, e))?
        .into_iter()
        .map(|(t, _)| t)
        .max()
        .unwrap_or(ctl.timeline)
        .max(ctl.timeline);
    let target_history =
        wal::timeline::read_history(&wal_dir, target_tli).map_err(|e| e.to_string())?;
    let (common_tli, fork) = fork_point(&source_history, &target_history)?;
    // Nothing to rewind: as pg_rewind, `--write-recovery-conf` still
    // makes the target a standby of the source.
    let not_needed = |log: &mut dyn FnMut(&str)| {
        log("no rewind required");
        if opts.write_recovery_conf && !opts.dry_run {
            write_recovery_conf(target, &opts.source_text)?;
        }
        Ok(Outcome::NotNeeded)
    };
    let Some(fork) = fork else {
        log("source and target cluster are on the same timeline");
        return not_needed(log);
    };
    log(&format!(
        "servers diverged at WAL location {fork} on timeline {common_tli}"
    ));

    // 3. Did the target go past the fork point? The last common checkpoint.
    let (target_end, seen) = if ctl.checkpoint < fork {
        scan_target_end(&wal_dir, seg, &ctl, fork)?
    } else {
        (Lsn::MAX, None)
    };
    if target_end <= fork {
        return not_needed(log);
    }
    let ckpt = match seen {
        Some(c) => c,
        None => find_last_checkpoint(&wal_dir, seg, fork)?,
    };
    let ckpt_tli = target_history.timeline_of(ckpt.lsn);
    log(&format!(
        "rewinding from last common checkpoint at {} on timeline {ckpt_tli}",
        ckpt.lsn
    ));

    // 4. The blocks the target changed since then.
    log("reading WAL in target");
    let changed = tokio::task::block_in_place(|| changed_blocks(&wal_dir, seg, ckpt.redo, fork))?;

    // 5. The file map.
    log("reading source file list");
    let source_files = source.list().await?;
    log("reading target file list");
    let target_files = list_target(target)?;
    let plan = file_map(&source_files, &target_files, &changed);
    let to_copy: u64 = plan
        .values()
        .map(|a| match a {
            Action::Copy { size } => *size,
            Action::Blocks { blocks, .. } => blocks.len() as u64 * BLCKSZ as u64,
            Action::Remove => 0,
        })
        .sum();
    let source_total: u64 = source_files.values().sum();
    log(&format!(
        "need to copy {} MB (total source directory size is {} MB)",
        to_copy / (1 << 20),
        source_total / (1 << 20)
    ));
    for tli in source_history.entries.iter().map(|e| e.tli) {
        if tli.0 > 1 && tli != id.timeline {
            let content = source.history(tli).await?;
            source_histories.push((tli, content));
        }
    }
    let hint_from = if ckpt.oldest_active_xid.0 != 0 {
        ckpt.oldest_active_xid.min(ckpt.next_xid)
    } else {
        ckpt.next_xid
    };

    if opts.dry_run {
        let _ = source.client.terminate().await;
        log("Done!");
        return Ok(Outcome::Rewound);
    }
    // Held while writing, so a server cannot start meanwhile.
    let _lock = common::postmaster::PidFile::acquire(target, 0)?;

    // 5. Copy and remove.
    let mut progress = Progress {
        on: opts.progress,
        done: 0,
        total: to_copy,
        last: 0,
        log,
    };
    for (path, action) in &plan {
        apply(&mut source, target, path, action, hint_from, &mut progress).await?;
    }
    progress.add(0, true);
    let log = progress.log;

    // 6. Where replay starts and when it is consistent. Written before
    // the WAL is cut: a rewind interrupted before this point finds the
    // target's WAL still diverged and can simply be run again.
    let end = source.identify().await?.flushed.max(fork);
    let _ = source.client.terminate().await;
    log("creating backup label and updating control file");
    BackupLabel {
        start: ckpt.redo,
        end,
        segment_size: seg,
    }
    .write(target)
    .map_err(|e| {
        io(
            "write file",
            &target.join(crate::basebackup::BACKUP_LABEL),
            e,
        )
    })?;
    ControlFile {
        state: DbState::InArchiveRecovery,
        checkpoint: ckpt.lsn,
        redo: ckpt.redo,
        next_xid: ckpt.next_xid.0,
        next_oid: ckpt.next_oid,
        segment_size: seg,
        time_us: pgtypes::datetime::now_usecs(),
        min_recovery_point: end,
        timeline: ckpt_tli,
        prev_timeline: ckpt_tli,
        data_checksums: ctl.data_checksums,
    }
    .write(target, true)
    .map_err(|e| e.into_fields().message)?;
    // 7. pg_wal: cut at the fork point; the source's history files.
    rewrite_wal(&wal_dir, seg, common_tli, fork, &source_histories)?;
    if opts.write_recovery_conf {
        write_recovery_conf(target, &opts.source_text)?;
    }
    log("syncing target data directory");
    for d in DIRS.iter().chain(["pg_wal", "."].iter()) {
        if let Ok(f) = File::open(target.join(d)) {
            let _ = f.sync_all();
        }
    }
    log("Done!");
    Ok(Outcome::Rewound)
}

/// The target's WAL ends at `fork` on timeline `common`: segments after the
/// fork's and of later timelines removed, the fork's segment kept as
/// `common`'s file with everything from the fork point zeroed; history files
/// of timelines after `common` replaced by the source's.
fn rewrite_wal(
    dir: &Path,
    seg: u64,
    common: TimeLineId,
    fork: Lsn,
    histories: &[(TimeLineId, Vec<u8>)],
) -> Result<(), String> {
    let fork_seg = fork.segment_number(seg);
    let mut fork_file = fs::read(
        wal::segment::find_segment(dir, fork_seg, seg)
            .map_err(|e| io("read directory", dir, e))?
            .map(|(_, p)| p)
            .unwrap_or_default(),
    )
    .unwrap_or_default();
    fork_file.resize(seg as usize, 0);
    fork_file[fork.segment_offset(seg) as usize..].fill(0);
    let path = wal::segment::segment_path_tli(dir, common, fork_seg, seg);
    let tmp = path.with_extension("tmp");
    let mut f = File::create(&tmp).map_err(|e| io("create file", &tmp, e))?;
    f.write_all(&fork_file)
        .and_then(|_| f.sync_all())
        .map_err(|e| io("write file", &tmp, e))?;
    fs::rename(&tmp, &path).map_err(|e| io("rename file", &tmp, e))?;
    // The fork segment first: interrupted after it, the WAL already ends
    // at the fork point (zeros), whatever later segments remain.
    for (tli, segno) in
        wal::segment::list_segment_files(dir, seg).map_err(|e| io("read directory", dir, e))?
    {
        if segno > fork_seg || tli > common || (segno == fork_seg && tli != common) {
            let p = wal::segment::segment_path_tli(dir, tli, segno, seg);
            fs::remove_file(&p).map_err(|e| io("remove file", &p, e))?;
        }
    }
    for ent in fs::read_dir(dir)
        .map_err(|e| io("read directory", dir, e))?
        .flatten()
    {
        let name = ent.file_name().to_string_lossy().into_owned();
        if let Some(tli) = wal::timeline::parse_history_file_name(&name) {
            if tli > common {
                fs::remove_file(ent.path()).map_err(|e| io("remove file", &ent.path(), e))?;
            }
        }
    }
    for (tli, content) in histories {
        wal::timeline::write_history_file(dir, *tli, content, true).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `--write-recovery-conf`: `primary_conninfo` in hotpair.conf (replacing
/// any earlier one) and `standby.signal`, as the standby's base backup
/// writes them.
fn write_recovery_conf(target: &Path, conninfo: &str) -> Result<(), String> {
    let conf = target.join("hotpair.conf");
    let old = match fs::read_to_string(&conf) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io("read file", &conf, e)),
    };
    let mut text: String = old
        .lines()
        .filter(|l| {
            let k = l.split('=').next().unwrap_or("").trim();
            k != "primary_conninfo" && k != "primary_slot_name"
        })
        .map(|l| format!("{l}\n"))
        .collect();
    text.push_str("# written by rewind\n");
    text.push_str(&format!(
        "primary_conninfo = '{}'\n",
        conninfo.replace('\\', "\\\\").replace('\'', "\\'")
    ));
    pgtypes::fileutil::write_atomic(&conf, text.as_bytes(), true)
        .map_err(|e| e.into_fields().message)?;
    let signal = target.join(crate::promote::STANDBY_SIGNAL_FILE);
    File::create(&signal)
        .and_then(|f| f.sync_all())
        .map_err(|e| io("create file", &signal, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wal::timeline::TimeLineHistoryEntry;

    fn hist(entries: &[(u32, u64, Option<u64>)]) -> TimeLineHistory {
        TimeLineHistory {
            entries: entries
                .iter()
                .map(|&(t, b, e)| TimeLineHistoryEntry {
                    tli: TimeLineId(t),
                    begin: Lsn(b),
                    end: e.map(Lsn),
                })
                .collect(),
        }
    }

    #[test]
    fn fork_points() {
        let one = hist(&[(1, 0, None)]);
        let two = hist(&[(1, 0, Some(0x500)), (2, 0x500, None)]);
        assert_eq!(
            fork_point(&two, &one).unwrap(),
            (TimeLineId(1), Some(Lsn(0x500)))
        );
        assert_eq!(
            fork_point(&one, &two).unwrap(),
            (TimeLineId(1), Some(Lsn(0x500)))
        );
        assert_eq!(fork_point(&two, &two).unwrap(), (TimeLineId(2), None));
        // Two promotions to the same number from different points.
        let other = hist(&[(1, 0, Some(0x300)), (2, 0x300, None)]);
        assert_eq!(
            fork_point(&two, &other).unwrap(),
            (TimeLineId(1), Some(Lsn(0x300)))
        );
        let unrelated = hist(&[(3, 0, None)]);
        assert!(fork_point(&one, &unrelated).is_err());
    }

    #[test]
    fn file_map_decides_per_file() {
        let m = |v: &[(&str, u64)]| {
            v.iter()
                .map(|(p, n)| (p.to_string(), *n))
                .collect::<BTreeMap<_, _>>()
        };
        let b = BLCKSZ as u64;
        let source = m(&[
            ("base/100", 4 * b),
            ("base/200", 2 * b),
            ("base/300", b),
            ("global/catalog", 77),
            ("global/pg_control", 512),
        ]);
        let target = m(&[
            ("base/100", 3 * b),
            ("base/200", 5 * b),
            ("base/400", b),
            ("global/catalog", 70),
            ("global/pg_control", 512),
        ]);
        let mut changed = ChangedBlocks::new();
        changed.insert((100, 0), [0u32, 2].into_iter().collect());
        changed.insert((200, 0), [1u32, 4].into_iter().collect());
        let plan = file_map(&source, &target, &changed);
        let blocks = |p: &str| match &plan[p] {
            Action::Blocks { blocks, .. } => blocks.iter().copied().collect::<Vec<_>>(),
            other => panic!("{p}: {other:?}"),
        };
        assert_eq!(
            blocks("base/100"),
            vec![0, 2, 3],
            "changed + the source's new tail"
        );
        assert_eq!(
            blocks("base/200"),
            vec![1],
            "changed blocks past the source's end dropped"
        );
        assert_eq!(
            plan["base/300"],
            Action::Copy { size: b },
            "dropped on the target"
        );
        assert_eq!(plan["base/400"], Action::Remove, "created on the target");
        assert_eq!(plan["global/catalog"], Action::Copy { size: 77 });
        assert!(
            !plan.contains_key("global/pg_control"),
            "pg_control is written, not copied"
        );
    }

    #[test]
    fn hints_cleared_only_for_recent_xids() {
        let mut page = Page::default();
        page.init();
        for (xmin, xmax) in [(100u64, 0u64), (500, 0), (100, 600)] {
            let mut h = TupleHeader::new_insert(TransactionId(xmin), pgtypes::CommandId(0));
            h.xmax = TransactionId(xmax);
            h.infomask |= htup::XMIN_COMMITTED | htup::XMAX_INVALID;
            if xmax != 0 {
                h.infomask = (h.infomask & !htup::XMAX_INVALID) | htup::XMAX_COMMITTED;
            }
            let mut t = vec![0u8; htup::HEADER_SIZE + 4];
            h.write(&mut t);
            page.add_item(&t).expect("room");
        }
        assert!(clear_hints(&mut page, TransactionId(400)));
        let mask = |off: u16| {
            TupleHeader::read(page.item(off).expect("item"))
                .expect("header")
                .infomask
        };
        assert_eq!(
            mask(1) & htup::HINT_BITS,
            htup::XMIN_COMMITTED | htup::XMAX_INVALID,
            "old xmin kept"
        );
        assert_eq!(
            mask(2) & htup::HINT_BITS,
            htup::XMAX_INVALID,
            "recent xmin's hint cleared"
        );
        assert_eq!(
            mask(3) & htup::HINT_BITS,
            htup::XMIN_COMMITTED,
            "recent xmax's hint cleared"
        );
        assert!(
            !clear_hints(&mut page, TransactionId(400)),
            "nothing left to clear"
        );
        assert!(
            !clear_hints(&mut Page::default(), TransactionId(1)),
            "new page"
        );
    }

    #[test]
    fn relation_files() {
        assert_eq!(relation_file("base/16384"), Some((16384, 0)));
        assert_eq!(relation_file("base/16384_fsm"), Some((16384, 1)));
        assert_eq!(relation_file("base/x"), None);
        assert_eq!(relation_file("global/catalog"), None);
        assert_eq!(relation_file("base/_fsm"), None);
    }
}
