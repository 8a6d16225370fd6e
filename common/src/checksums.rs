//! # Verifying page checksums of a stopped data directory (pg_checksums --check)
//!
//! A data directory created with `data_checksums = on` (the control file
//! says so) stores a checksum in every page it writes
//! (`storage::bufpage::Page::compute_checksum`); the running server checks
//! each page as it reads it. [`verify`] checks every page of every relation
//! file of a *stopped* directory, the way `pg_checksums --check` does, so
//! an operator can look for corruption before starting a node, after a
//! restore, or on a copy. The `checksums` binary (in `primary`) is the
//! command line.
//!
//! What is checked: each main-fork file `base/<relfileid>`, block by block;
//! an all-zero (never initialised) page passes, as on a read. A file whose
//! length is not a whole number of blocks is reported (a torn extension)
//! and its last partial block skipped.
//!
//! Refused: a directory whose control file says it is running (or crashed:
//! recovery would rewrite torn pages from WAL first, so checking them now
//! would report damage replay repairs), one whose `postmaster.pid` names a
//! live process, and one without checksums.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use pgtypes::BLCKSZ;
use storage::bufpage::Page;

use crate::xlog::{ControlFile, DbState};

/// One page whose checksum does not match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadBlock {
    /// The file, relative to the data directory (`base/16384`).
    pub file: PathBuf,
    /// The block number in it.
    pub block: u32,
    /// The checksum the contents give.
    pub calculated: u16,
    /// The checksum the page holds.
    pub stored: u16,
}

/// What [`verify`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Relation files read.
    pub files: u64,
    /// Pages checked (new pages included).
    pub blocks: u64,
    /// Pages that failed.
    pub bad: Vec<BadBlock>,
    /// Files whose length was not a multiple of the block size.
    pub partial: Vec<PathBuf>,
}

/// Checks every page of the stopped data directory `dir`. `Err` is a
/// reason the check could not run (pg_checksums' "error:" lines).
pub fn verify(dir: &Path) -> Result<Report, String> {
    let ctl = ControlFile::read(dir)
        .map_err(|e| e.into_fields().message)?
        .ok_or_else(|| {
            format!(
                "could not open file \"{}\": No such file or directory",
                ControlFile::path(dir).display()
            )
        })?;
    if !ctl.data_checksums {
        return Err("data checksums are not enabled in cluster".into());
    }
    if ctl.state == DbState::InProduction {
        return Err("cluster must be shut down".into());
    }
    if crate::postmaster::running_server(dir)?.is_some() {
        return Err("cluster must be shut down".into());
    }
    let base = dir.join("base");
    let mut names: Vec<(u64, String)> = fs::read_dir(&base)
        .map_err(|e| format!("could not open directory \"{}\": {e}", base.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            // Main forks only: `<relfileid>`, digits alone.
            let id = name.parse::<u64>().ok()?;
            Some((id, name))
        })
        .collect();
    names.sort();
    let mut report = Report::default();
    let mut page = Page::default();
    for (_, name) in names {
        let rel_path = Path::new("base").join(&name);
        let path = dir.join(&rel_path);
        let mut f = fs::File::open(&path)
            .map_err(|e| format!("could not open file \"{}\": {e}", path.display()))?;
        report.files += 1;
        let mut block = 0u32;
        loop {
            let got = read_block(&mut f, &mut page.0).map_err(|e| {
                format!(
                    "could not read block {block} in file \"{}\": {e}",
                    path.display()
                )
            })?;
            if got == 0 {
                break;
            }
            if got < BLCKSZ {
                report.partial.push(rel_path.clone());
                break;
            }
            report.blocks += 1;
            if let Err((calculated, stored)) = page.verify_checksum(block) {
                report.bad.push(BadBlock {
                    file: rel_path.clone(),
                    block,
                    calculated,
                    stored,
                });
            }
            block = block.wrapping_add(1);
        }
    }
    Ok(report)
}

/// Reads up to one block; returns the bytes read (less only at the end).
fn read_block(f: &mut fs::File, buf: &mut [u8; BLCKSZ]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < BLCKSZ {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgtypes::TimeLineId;
    use wal::Lsn;

    fn control(dir: &Path, state: DbState, checksums: bool) {
        fs::create_dir_all(dir.join("global")).unwrap();
        fs::create_dir_all(dir.join("base")).unwrap();
        ControlFile {
            state,
            checkpoint: Lsn(0x100_0028),
            redo: Lsn(0x100_0000),
            next_xid: 10,
            next_oid: 16384,
            segment_size: 16 << 20,
            time_us: 0,
            min_recovery_point: Lsn::INVALID,
            timeline: TimeLineId(1),
            prev_timeline: TimeLineId(1),
            data_checksums: checksums,
        }
        .write(dir, false)
        .unwrap();
    }

    fn page(block: u32, fill: u8) -> Page {
        let mut p = Page::default();
        p.init();
        p.0[4000] = fill;
        p.set_checksum(block);
        p
    }

    #[test]
    fn finds_the_corrupt_block_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        control(dir.path(), DbState::ShutDown, true);
        let mut bytes = Vec::new();
        for b in 0..3u32 {
            bytes.extend_from_slice(&page(b, b as u8 + 1).0);
        }
        // A new page passes as it is.
        bytes.extend_from_slice(&[0u8; BLCKSZ]);
        bytes[BLCKSZ + 5000] ^= 0x01;
        fs::write(dir.path().join("base/16384"), &bytes).unwrap();
        fs::write(dir.path().join("base/16385"), page(0, 9).0).unwrap();
        let r = verify(dir.path()).unwrap();
        assert_eq!(r.files, 2);
        assert_eq!(r.blocks, 5);
        assert_eq!(r.bad.len(), 1);
        assert_eq!(r.bad[0].file, Path::new("base/16384"));
        assert_eq!(r.bad[0].block, 1);
        assert_ne!(r.bad[0].calculated, r.bad[0].stored);
    }

    #[test]
    fn a_page_moved_to_another_block_fails() {
        let dir = tempfile::tempdir().unwrap();
        control(dir.path(), DbState::ShutDown, true);
        let mut bytes = page(0, 1).0.to_vec();
        bytes.extend_from_slice(&page(0, 1).0);
        fs::write(dir.path().join("base/16384"), &bytes).unwrap();
        let r = verify(dir.path()).unwrap();
        assert_eq!(r.bad.len(), 1);
        assert_eq!(r.bad[0].block, 1);
    }

    #[test]
    fn refuses_running_or_unchecksummed_clusters() {
        let dir = tempfile::tempdir().unwrap();
        control(dir.path(), DbState::InProduction, true);
        assert_eq!(verify(dir.path()).unwrap_err(), "cluster must be shut down");
        control(dir.path(), DbState::ShutDown, false);
        assert_eq!(
            verify(dir.path()).unwrap_err(),
            "data checksums are not enabled in cluster"
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(verify(empty.path()).unwrap_err().contains("pg_control"));
    }

    #[test]
    fn a_partial_block_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        control(dir.path(), DbState::ShutDown, true);
        let mut bytes = page(0, 1).0.to_vec();
        bytes.extend_from_slice(&[7u8; 100]);
        fs::write(dir.path().join("base/16384"), &bytes).unwrap();
        let r = verify(dir.path()).unwrap();
        assert_eq!(r.blocks, 1);
        assert!(r.bad.is_empty());
        assert_eq!(r.partial, vec![PathBuf::from("base/16384")]);
    }
}
