//! The power-cut journal: what a write that was never fsynced must be
//! undone to, and the undo itself.
//!
//! With `HOTPAIR_FAULTFS_JOURNAL=<file>` and `HOTPAIR_FAULTFS_ROOT=<dir>`
//! the library appends, before every change to a file under the root, a
//! record of what the change destroys (the bytes a write overwrites, the
//! size before it, a file a rename replaces, whether an `open` creates the
//! file), and after every fsync a record that it happened. A simulated
//! power cut is then: SIGKILL the node, and [`power_cut`] walks the journal
//! backwards undoing every change not made durable by a later fsync —
//! of the file for its contents, of its directory for a created or renamed
//! file — exactly what a kernel may lose when the power goes (the writes
//! sit in its page cache, the directory entries in its dentry cache).
//!
//! This file is shared: the library appends records with [`Record::encode`];
//! the test harness (`tap-tests`, which includes this file by path: linking
//! the library itself would interpose the harness's own calls) reads them
//! back and undoes them.
//!
//! Not modelled: unlink (a removed file stays removed), and writes reaching
//! the disk out of order *within* one unsynced run (a run is lost whole) —
//! a kernel could persist a later write and lose an earlier one.

use std::fs;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// One journal record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A write at `offset` of a file whose size was `old_size`; `old` are
    /// the bytes it overwrote (within the old size).
    Write {
        /// The file.
        path: PathBuf,
        /// Where the write starts.
        offset: u64,
        /// The file's size before it.
        old_size: u64,
        /// The bytes it overwrote.
        old: Vec<u8>,
    },
    /// The size changed (ftruncate, fallocate) from `old_size`; `tail`
    /// holds the bytes a shrink cut off.
    Resize {
        /// The file.
        path: PathBuf,
        /// The size before.
        old_size: u64,
        /// The bytes cut off by a shrink (empty for growth).
        tail: Vec<u8>,
    },
    /// `open` created the file (it did not exist).
    Create {
        /// The file.
        path: PathBuf,
    },
    /// `rename(from, to)`; `saved` is a copy of the file `to` replaced.
    Rename {
        /// The old name.
        from: PathBuf,
        /// The new name.
        to: PathBuf,
        /// A copy of the replaced file, if one was replaced.
        saved: Option<PathBuf>,
    },
    /// fsync / fdatasync of a file or directory.
    Sync {
        /// What was synced.
        path: PathBuf,
    },
}

fn put_path(out: &mut Vec<u8>, p: &Path) {
    let b = p.as_os_str().as_encoded_bytes();
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// A cursor over one record's body.
struct Body<'a>(&'a [u8]);

impl Body<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Some(u64::from_le_bytes(a))
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        let n = self.u32()? as usize;
        self.take(n).map(|b| b.to_vec())
    }
    fn path(&mut self) -> Option<PathBuf> {
        let b = self.bytes()?;
        // SAFETY-free: the bytes came from `as_encoded_bytes` of a path.
        String::from_utf8(b).ok().map(PathBuf::from)
    }
}

impl Record {
    /// The record framed for appending: `u32 length`, kind, body.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        match self {
            Record::Write {
                path,
                offset,
                old_size,
                old,
            } => {
                b.push(b'W');
                put_path(&mut b, path);
                b.extend_from_slice(&offset.to_le_bytes());
                b.extend_from_slice(&old_size.to_le_bytes());
                put_bytes(&mut b, old);
            }
            Record::Resize {
                path,
                old_size,
                tail,
            } => {
                b.push(b'T');
                put_path(&mut b, path);
                b.extend_from_slice(&old_size.to_le_bytes());
                put_bytes(&mut b, tail);
            }
            Record::Create { path } => {
                b.push(b'C');
                put_path(&mut b, path);
            }
            Record::Rename { from, to, saved } => {
                b.push(b'R');
                put_path(&mut b, from);
                put_path(&mut b, to);
                match saved {
                    Some(s) => {
                        b.push(1);
                        put_path(&mut b, s);
                    }
                    None => b.push(0),
                }
            }
            Record::Sync { path } => {
                b.push(b'S');
                put_path(&mut b, path);
            }
        }
        let mut out = (b.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&b);
        out
    }

    fn decode(body: &[u8]) -> Option<Record> {
        let (&kind, rest) = body.split_first()?;
        let mut r = Body(rest);
        Some(match kind {
            b'W' => Record::Write {
                path: r.path()?,
                offset: r.u64()?,
                old_size: r.u64()?,
                old: r.bytes()?,
            },
            b'T' => Record::Resize {
                path: r.path()?,
                old_size: r.u64()?,
                tail: r.bytes()?,
            },
            b'C' => Record::Create { path: r.path()? },
            b'R' => {
                let from = r.path()?;
                let to = r.path()?;
                let saved = match r.take(1)?[0] {
                    1 => Some(r.path()?),
                    _ => None,
                };
                Record::Rename { from, to, saved }
            }
            b'S' => Record::Sync { path: r.path()? },
            _ => return None,
        })
    }
}

/// Every whole record of a journal (a torn last one — the node was killed
/// while appending it, before the change it announces — is dropped).
pub fn read(journal: &Path) -> io::Result<Vec<Record>> {
    let mut bytes = Vec::new();
    match fs::File::open(journal) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes)?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    }
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 4 <= bytes.len() {
        let n =
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize;
        let Some(body) = bytes.get(at + 4..at + 4 + n) else {
            break;
        };
        match Record::decode(body) {
            Some(r) => out.push(r),
            None => break,
        }
        at += 4 + n;
    }
    Ok(out)
}

/// What [`power_cut`] undid.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Undone {
    /// Writes and resizes reverted.
    pub writes: usize,
    /// Created files removed.
    pub creates: usize,
    /// Renames reverted.
    pub renames: usize,
}

/// The power cut: undoes, newest first, every change in `journal` that no
/// later fsync made durable, then empties the journal. Call it with the
/// node killed.
pub fn power_cut(journal: &Path) -> io::Result<Undone> {
    let records = read(journal)?;
    let mut synced: std::collections::HashSet<PathBuf> = Default::default();
    let mut undone = Undone::default();
    let dir_synced = |synced: &std::collections::HashSet<PathBuf>, p: &Path| {
        p.parent().is_some_and(|d| synced.contains(d))
    };
    for r in records.iter().rev() {
        match r {
            Record::Sync { path } => {
                synced.insert(path.clone());
            }
            Record::Write {
                path,
                offset,
                old_size,
                old,
            } if !synced.contains(path) => {
                if let Ok(f) = fs::OpenOptions::new().write(true).open(path) {
                    f.write_all_at(old, *offset)?;
                    f.set_len(*old_size)?;
                    undone.writes += 1;
                }
            }
            Record::Resize {
                path,
                old_size,
                tail,
            } if !synced.contains(path) => {
                if let Ok(mut f) = fs::OpenOptions::new().write(true).open(path) {
                    f.set_len(*old_size)?;
                    if !tail.is_empty() {
                        f.seek(SeekFrom::Start(old_size - tail.len() as u64))?;
                        f.write_all(tail)?;
                    }
                    undone.writes += 1;
                }
            }
            Record::Create { path } if !dir_synced(&synced, path) => {
                if fs::remove_file(path).is_ok() {
                    undone.creates += 1;
                }
                // Its contents go with it: a later fsync of the file does
                // not make its directory entry durable.
                synced.remove(path);
            }
            Record::Rename { from, to, saved } if !dir_synced(&synced, to) => {
                if fs::rename(to, from).is_ok() {
                    undone.renames += 1;
                }
                if let Some(s) = saved {
                    let _ = fs::rename(s, to);
                }
                // What was synced under the new name was synced under the
                // old one.
                if synced.remove(to) {
                    synced.insert(from.clone());
                }
            }
            Record::Rename { to, saved, .. } => {
                if let Some(s) = saved {
                    let _ = fs::remove_file(s);
                }
                let _ = to;
            }
            _ => {}
        }
    }
    fs::write(journal, b"")?;
    Ok(undone)
}
