//! The client of `BASE_BACKUP` (pg_basebackup's job): fills an empty data
//! directory with a copy of the primary's files and the WAL needed to make
//! them consistent. The wire format is documented in the primary's
//! `basebackup.rs`.
//!
//! The copy is written into the directory as it arrives; the marker file
//! `backup_label` (start and end LSN) is written last, after every file is
//! fsynced, so a directory without it is an interrupted copy: the standby
//! refuses to start from it (remove it and start again).

use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use bytes::Buf;
use protocol::client::ClientError;
use protocol::messages::{BackendMessage, FrontendMessage};
use wal::Lsn;

use crate::conninfo::ConnInfo;

/// What a finished base backup recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackupLabel {
    /// Replay starts here.
    pub start: Lsn,
    /// The copy is consistent once replay passed here.
    pub end: Lsn,
    /// The primary's WAL segment size.
    pub segment_size: u64,
}

/// Name of the marker file.
pub const BACKUP_LABEL: &str = "backup_label";

impl BackupLabel {
    /// Reads `DIR/backup_label` (None if absent or unreadable).
    pub fn read(dir: &Path) -> Option<BackupLabel> {
        let text = std::fs::read_to_string(dir.join(BACKUP_LABEL)).ok()?;
        let mut start = None;
        let mut end = None;
        let mut seg = None;
        for line in text.lines() {
            let (k, v) = line.split_once(':')?;
            match k.trim() {
                "START WAL LOCATION" => start = v.trim().parse::<Lsn>().ok(),
                "END WAL LOCATION" => end = v.trim().parse::<Lsn>().ok(),
                "WAL SEGMENT SIZE" => seg = v.trim().parse::<u64>().ok(),
                _ => {}
            }
        }
        Some(BackupLabel {
            start: start?,
            end: end?,
            segment_size: seg?,
        })
    }

    /// Writes `DIR/backup_label` and fsyncs it.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let mut f = File::create(dir.join(BACKUP_LABEL))?;
        writeln!(f, "START WAL LOCATION: {}", self.start)?;
        writeln!(f, "END WAL LOCATION: {}", self.end)?;
        writeln!(f, "WAL SEGMENT SIZE: {}", self.segment_size)?;
        writeln!(f, "BACKUP METHOD: streamed")?;
        f.sync_all()
    }
}

fn err(msg: impl Into<String>) -> String {
    msg.into()
}

fn client_err(e: ClientError) -> String {
    e.to_string()
}

/// A path from the server, checked to stay inside the data directory.
fn safe_join(root: &Path, rel: &str) -> Result<PathBuf, String> {
    let p = Path::new(rel);
    if rel.is_empty() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(err(format!("invalid file name in base backup: \"{rel}\"")));
    }
    Ok(root.join(p))
}

/// Takes a base backup of `ci`'s server into `dir` (created, must be
/// empty), printing progress with `progress`. Returns the label.
pub async fn take(
    ci: &ConnInfo,
    dir: &Path,
    mut progress: impl FnMut(u64, u64),
) -> Result<BackupLabel, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| err(format!("could not create {}: {e}", dir.display())))?;
    let mut client = ci
        .connect(&ci.startup_params())
        .await
        .map_err(|e| err(format!("could not connect to the primary server: {e}")))?;
    let seg = client
        .query_rows("SHOW wal_segment_size")
        .await
        .ok()
        .and_then(|r| r.first().and_then(|row| row.first().cloned().flatten()))
        .and_then(|v| pgtypes::config::parse_bytes(&v))
        .unwrap_or(wal::DEFAULT_SEGMENT_SIZE);
    client
        .send(FrontendMessage::Query("BASE_BACKUP PROGRESS".into()))
        .await
        .map_err(client_err)?;
    let mut lsns: Vec<Lsn> = Vec::new();
    let mut current: Option<(File, PathBuf, u64)> = None;
    let mut written: Vec<PathBuf> = Vec::new();
    loop {
        match client.recv().await.map_err(client_err)? {
            BackendMessage::DataRow(vals) => {
                let v = vals
                    .first()
                    .cloned()
                    .flatten()
                    .ok_or_else(|| err("base backup: missing LSN"))?;
                let lsn = std::str::from_utf8(&v)
                    .ok()
                    .and_then(|s| s.parse::<Lsn>().ok())
                    .ok_or_else(|| err("base backup: invalid LSN"))?;
                lsns.push(lsn);
            }
            BackendMessage::CopyData(mut b) => {
                if b.is_empty() {
                    continue;
                }
                let kind = b.get_u8();
                match kind {
                    b'F' => {
                        if b.len() < 8 {
                            return Err(err("base backup: short file header"));
                        }
                        let size = b.get_u64();
                        let rel = String::from_utf8(b.to_vec())
                            .map_err(|_| err("base backup: file name is not UTF-8"))?;
                        finish_file(&mut current, seg)?;
                        let path = safe_join(dir, &rel)?;
                        if let Some(parent) = path.parent() {
                            std::fs::create_dir_all(parent).map_err(|e| {
                                err(format!("could not create {}: {e}", parent.display()))
                            })?;
                        }
                        let f = File::create(&path).map_err(|e| {
                            err(format!("could not create {}: {e}", path.display()))
                        })?;
                        written.push(path.clone());
                        current = Some((f, path, size));
                    }
                    b'D' => {
                        let Some((f, path, _)) = current.as_mut() else {
                            return Err(err("base backup: data before a file header"));
                        };
                        f.write_all(&b)
                            .map_err(|e| err(format!("could not write {}: {e}", path.display())))?;
                    }
                    b'P' if b.len() >= 16 => {
                        let done = b.get_u64();
                        let total = b.get_u64();
                        progress(done, total);
                    }
                    _ => return Err(err("base backup: unexpected message")),
                }
            }
            BackendMessage::CopyDone => finish_file(&mut current, seg)?,
            BackendMessage::ErrorResponse(e) => {
                return Err(err(format!("base backup failed: {}", e.message())))
            }
            BackendMessage::ReadyForQuery(_) => break,
            _ => {}
        }
    }
    finish_file(&mut current, seg)?;
    let (Some(&start), Some(&end)) = (lsns.first(), lsns.get(1)) else {
        return Err(err("base backup: server did not report start and end LSN"));
    };
    let _ = client.terminate().await;
    for d in ["pg_wal", "base", "global", "pg_xact"] {
        let _ = std::fs::create_dir_all(dir.join(d));
    }
    let label = BackupLabel {
        start,
        end,
        segment_size: seg,
    };
    label
        .write(dir)
        .map_err(|e| err(format!("could not write backup_label: {e}")))?;
    Ok(label)
}

/// Closes the current file: syncs it; WAL segments are extended to full size.
fn finish_file(current: &mut Option<(File, PathBuf, u64)>, seg: u64) -> Result<(), String> {
    if let Some((f, path, _)) = current.take() {
        let is_wal = path
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "pg_wal")
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| wal::segment::parse_segment_file_name(n, seg).is_some());
        if is_wal {
            f.set_len(seg)
                .map_err(|e| err(format!("could not extend {}: {e}", path.display())))?;
        }
        f.sync_all()
            .map_err(|e| err(format!("could not fsync {}: {e}", path.display())))?;
    }
    Ok(())
}
