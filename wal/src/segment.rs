//! Segment files in `pg_wal/`: names, sizes, creation, listing, removal.
//!
//! The WAL stream is cut into files of `wal_segment_size` bytes (a power of
//! two). Segment `segno` holds stream bytes `[segno·size, (segno+1)·size)`
//! and is named like PostgreSQL's, with the timeline that wrote it:
//!
//! ```text
//!   TTTTTTTT XXXXXXXX YYYYYYYY      (24 upper-case hex digits)
//!   timeline segno / (4 GiB/size)   segno % (4 GiB/size)
//!   00000001 00000000 00000001      = segment 1 = 0/1000000 .. 0/1FFFFFF at 16 MiB
//! ```
//!
//! **Timelines.** Promotion starts timeline N+1 (see [`crate::timeline`]):
//! the segment holding the switch point is copied to its timeline-N+1 name
//! up to the switch point and written on from there, and every later
//! segment carries N+1. One segment number may thus exist under several
//! timelines; the node's own history is always the **highest timeline
//! present** for a number ([`find_segment`]): whoever switches deletes the
//! later segments of lower timelines (WAL past the switch point that the
//! new timeline does not contain), so an older name only ever survives for
//! segments up to the switch point, whose bytes up to it the newer copy
//! holds too. Readers ([`crate::WalReader`], [`crate::read_raw`]) open
//! segments that way; writers create them under their own timeline. A data
//! directory that never switched has only timeline-1 names, as before.
//!
//! New segments are created full-size and zero-filled under a temporary
//! name, fsynced, then renamed into place and the directory fsynced (as
//! PostgreSQL's `XLogFileInit`). Zero-filling matters twice: a later
//! `fdatasync` of the file never has to update block allocation metadata,
//! and the tail of the last segment reads as zeros, which is how the reader
//! recognises the clean end of WAL. Segments are deleted when no longer
//! needed rather than recycled under a future name, so stale records from an
//! old segment can never sit in a position the reader may reach.

use pgtypes::fileutil::fsync_dir;
use pgtypes::TimeLineId;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use pgtypes::lsn::Lsn;

/// The first timeline of every cluster (`initdb`'s).
pub const TIMELINE: TimeLineId = TimeLineId(1);
/// Default `wal_segment_size`: 16 MiB, as PostgreSQL.
pub const DEFAULT_SEGMENT_SIZE: u64 = 16 << 20;
/// Smallest `wal_segment_size` the server setting accepts (PostgreSQL's).
pub const MIN_SEGMENT_SIZE_SETTING: u64 = 1 << 20;
/// Largest `wal_segment_size` (PostgreSQL's).
pub const MAX_SEGMENT_SIZE: u64 = 1 << 30;
/// Smallest segment size this crate works with; below the setting's minimum
/// so tests can cross many segment boundaries with little data.
pub const MIN_SEGMENT_SIZE: u64 = 4 << 10;

/// Checks a `wal_segment_size` setting: a power of two from 1 MiB to 1 GiB.
pub fn check_segment_size_setting(size: u64) -> Result<(), String> {
    if !size.is_power_of_two() || !(MIN_SEGMENT_SIZE_SETTING..=MAX_SEGMENT_SIZE).contains(&size) {
        return Err(format!("invalid value for parameter \"wal_segment_size\": {size}: must be a power of two between 1MB and 1GB"));
    }
    Ok(())
}

/// Checks a segment size given to this crate (power of two, 4 KiB..=1 GiB).
pub fn check_segment_size(size: u64) -> io::Result<()> {
    if !size.is_power_of_two() || !(MIN_SEGMENT_SIZE..=MAX_SEGMENT_SIZE).contains(&size) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid WAL segment size {size}"),
        ));
    }
    Ok(())
}

/// The file name of segment `segno` on timeline 1
/// (`000000010000000000000001`).
pub fn segment_file_name(segno: u64, segment_size: u64) -> String {
    segment_file_name_tli(TIMELINE, segno, segment_size)
}

/// The file name of segment `segno` written on timeline `tli`
/// (PostgreSQL's `XLogFileName`).
pub fn segment_file_name_tli(tli: TimeLineId, segno: u64, segment_size: u64) -> String {
    let per_xlogid = 0x1_0000_0000u64 / segment_size;
    format!(
        "{:08X}{:08X}{:08X}",
        tli.0,
        segno / per_xlogid,
        segno % per_xlogid
    )
}

/// The timeline and segment number named by a file name, if it is a
/// segment name for this segment size.
pub fn parse_segment_file_name_tli(name: &str, segment_size: u64) -> Option<(TimeLineId, u64)> {
    if name.len() != 24 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let tli = u32::from_str_radix(name.get(0..8)?, 16).ok()?;
    let hi = u64::from_str_radix(name.get(8..16)?, 16).ok()?;
    let lo = u64::from_str_radix(name.get(16..24)?, 16).ok()?;
    let per_xlogid = 0x1_0000_0000u64 / segment_size;
    if tli == 0 || lo >= per_xlogid {
        return None;
    }
    Some((
        TimeLineId(tli),
        hi.checked_mul(per_xlogid)?.checked_add(lo)?,
    ))
}

/// The segment number named by a file name of any timeline.
pub fn parse_segment_file_name(name: &str, segment_size: u64) -> Option<u64> {
    parse_segment_file_name_tli(name, segment_size).map(|(_, s)| s)
}

/// The path of segment `segno` on timeline 1 in `dir`.
pub fn segment_path(dir: &Path, segno: u64, segment_size: u64) -> PathBuf {
    dir.join(segment_file_name(segno, segment_size))
}

/// The path of segment `segno` of timeline `tli` in `dir`.
pub fn segment_path_tli(dir: &Path, tli: TimeLineId, segno: u64, segment_size: u64) -> PathBuf {
    dir.join(segment_file_name_tli(tli, segno, segment_size))
}

/// The file of segment `segno` in this node's history: the one of the
/// highest timeline present (see the module docs); `None` if there is none.
pub fn find_segment(
    dir: &Path,
    segno: u64,
    segment_size: u64,
) -> io::Result<Option<(TimeLineId, PathBuf)>> {
    // The common case first: a directory that never switched timelines.
    let mut best: Option<TimeLineId> = None;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if let Some((tli, s)) = entry
            .file_name()
            .to_str()
            .and_then(|n| parse_segment_file_name_tli(n, segment_size))
        {
            if s == segno && best.is_none_or(|b| tli > b) {
                best = Some(tli);
            }
        }
    }
    Ok(best.map(|t| (t, segment_path_tli(dir, t, segno, segment_size))))
}

/// Opens segment `segno` of this node's history for reading
/// ([`find_segment`]); `ErrorKind::NotFound` if there is none.
pub fn open_segment(dir: &Path, segno: u64, segment_size: u64) -> io::Result<File> {
    match find_segment(dir, segno, segment_size)? {
        Some((_, path)) => File::open(path),
        None => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("WAL segment {segno} not found"),
        )),
    }
}

/// [`open_segment`] for a caller that knows the newest timeline on the
/// node (its writer's, `newest`): that timeline's file, if present, is the
/// highest one, found without listing the directory.
pub fn open_segment_newest(
    dir: &Path,
    segno: u64,
    segment_size: u64,
    newest: TimeLineId,
) -> io::Result<File> {
    match File::open(segment_path_tli(dir, newest, segno, segment_size)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => open_segment(dir, segno, segment_size),
        r => r,
    }
}

/// The file name of the segment holding `lsn` on timeline 1
/// (`pg_walfile_name`).
pub fn walfile_name(lsn: Lsn, segment_size: u64) -> String {
    segment_file_name(lsn.segment_number(segment_size), segment_size)
}

/// The file name of the segment holding `lsn` on timeline `tli`.
pub fn walfile_name_tli(tli: TimeLineId, lsn: Lsn, segment_size: u64) -> String {
    segment_file_name_tli(tli, lsn.segment_number(segment_size), segment_size)
}

/// Segment numbers present in `dir` under any timeline, ascending, each
/// once. Other files are ignored.
pub fn list_segments(dir: &Path, segment_size: u64) -> io::Result<Vec<u64>> {
    let mut v: Vec<u64> = list_segment_files(dir, segment_size)?
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    v.dedup();
    Ok(v)
}

/// Every segment file in `dir` as (timeline, segment number), sorted by
/// segment number, then timeline.
pub fn list_segment_files(dir: &Path, segment_size: u64) -> io::Result<Vec<(TimeLineId, u64)>> {
    let mut v = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if let Some(ts) = entry
            .file_name()
            .to_str()
            .and_then(|n| parse_segment_file_name_tli(n, segment_size))
        {
            v.push(ts);
        }
    }
    v.sort_unstable_by_key(|(t, s)| (*s, *t));
    Ok(v)
}

/// Writes `len - from` zero bytes into `f` starting at `from`.
pub(crate) fn zero_fill(f: &mut File, from: u64, len: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    const CHUNK: usize = 256 << 10;
    let zeros = vec![0u8; CHUNK.min(len.saturating_sub(from) as usize).max(1)];
    let mut pos = from;
    while pos < len {
        let n = (len - pos).min(zeros.len() as u64) as usize;
        f.write_all_at(&zeros[..n], pos)?;
        pos += n as u64;
    }
    f.flush()
}

/// Creates segment `segno` full-size and zero-filled, durably, unless it
/// already exists; an existing short file (a truncated tail) is extended
/// with zeros. Returns the opened file (read-write).
///
/// Within one writer, creation is serialised by its segment-creation lock;
/// two writers on one directory (a test running its own beside a node's)
/// may still race for the same segment. Each fills a temp file of its own and installs it with a hard
/// link, which fails if the segment appeared meanwhile — never a rename
/// over it, which would leave an earlier creator writing WAL into an
/// unlinked file. The loser drops its temp file and opens the winner's.
pub fn create_segment(
    dir: &Path,
    tli: TimeLineId,
    segno: u64,
    segment_size: u64,
    fsync: bool,
) -> io::Result<File> {
    let path = segment_path_tli(dir, tli, segno, segment_size);
    if let Some(f) = open_existing(&path, segment_size, fsync)? {
        return Ok(f);
    }
    static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);
    let tmp = dir.join(format!(
        "xlogtemp.{}.{}",
        std::process::id(),
        TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)?;
    let filled =
        zero_fill(&mut f, 0, segment_size).and_then(|()| if fsync { f.sync_all() } else { Ok(()) });
    let installed = filled.and_then(|()| fs::hard_link(&tmp, &path));
    // The temp name goes in every case: on success the segment's own
    // name holds the file.
    let _ = fs::remove_file(&tmp);
    match installed {
        Ok(()) => {
            if fsync {
                fsync_dir(dir)?;
            }
            Ok(f)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            drop(f);
            open_existing(&path, segment_size, fsync)?
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "segment vanished"))
        }
        Err(e) => Err(e),
    }
}

/// Makes segment `segno` of timeline `tli` exist for a timeline switch at
/// offset `upto` of it: if it does not exist yet but an older timeline's
/// file of that number does, its first `upto` bytes are copied under the
/// new name and the rest is zeros (PostgreSQL's `XLogFileCopy` at the end
/// of recovery). Installed with a hard link like [`create_segment`], so a
/// half-made copy never carries the segment's name. Nothing happens if the
/// segment exists or there is nothing to copy (the caller creates it).
pub fn adopt_segment(
    dir: &Path,
    tli: TimeLineId,
    segno: u64,
    segment_size: u64,
    upto: u64,
    fsync: bool,
) -> io::Result<()> {
    let path = segment_path_tli(dir, tli, segno, segment_size);
    if path.exists() {
        return Ok(());
    }
    let Some((from_tli, from)) = find_segment(dir, segno, segment_size)? else {
        return Ok(());
    };
    if from_tli > tli {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "segment {} of timeline {from_tli} is newer than timeline {tli}",
                segment_file_name_tli(from_tli, segno, segment_size)
            ),
        ));
    }
    let upto = upto.min(segment_size);
    let tmp = dir.join(format!("xlogtemp.{}.copy", std::process::id()));
    let mut out = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)?;
    let copied = (|| {
        use std::os::unix::fs::FileExt;
        let src = File::open(&from)?;
        let mut buf = vec![0u8; (256usize << 10).min(segment_size as usize)];
        let mut pos = 0u64;
        while pos < upto {
            let n = ((upto - pos) as usize).min(buf.len());
            let got = src.read_at(&mut buf[..n], pos)?;
            if got == 0 {
                break;
            }
            out.write_all_at(&buf[..got], pos)?;
            pos += got as u64;
        }
        zero_fill(&mut out, pos, segment_size)?;
        if fsync {
            out.sync_all()?;
        }
        fs::hard_link(&tmp, &path)
    })();
    let _ = fs::remove_file(&tmp);
    copied?;
    if fsync {
        fsync_dir(dir)?;
    }
    Ok(())
}

/// Removes every segment file (of any timeline) numbered above `segno`:
/// WAL past a timeline switch or past the end of valid WAL.
pub fn remove_segments_after(dir: &Path, segno: u64, segment_size: u64) -> io::Result<usize> {
    let mut n = 0;
    for (tli, s) in list_segment_files(dir, segment_size)? {
        if s > segno {
            fs::remove_file(segment_path_tli(dir, tli, s, segment_size))?;
            n += 1;
        }
    }
    Ok(n)
}

/// An existing segment file, zero-extended to full size if short; `None`
/// if there is none.
fn open_existing(path: &Path, segment_size: u64, fsync: bool) -> io::Result<Option<File>> {
    match OpenOptions::new().read(true).write(true).open(path) {
        Ok(mut f) => {
            let len = f.metadata()?.len();
            if len < segment_size {
                zero_fill(&mut f, len, segment_size)?;
                if fsync {
                    f.sync_all()?;
                }
            }
            Ok(Some(f))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes every segment file (of any timeline) whose number is below
/// `keep_from`; returns how many were removed.
pub fn remove_segments_before(
    dir: &Path,
    keep_from: u64,
    segment_size: u64,
    fsync: bool,
) -> io::Result<usize> {
    let mut n = 0;
    for (tli, segno) in list_segment_files(dir, segment_size)? {
        if segno >= keep_from {
            break;
        }
        fs::remove_file(segment_path_tli(dir, tli, segno, segment_size))?;
        n += 1;
    }
    if n > 0 && fsync {
        fsync_dir(dir)?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Racing creators of one segment all get the same file (a write
    /// through one handle is read through another) and leave no temp file:
    /// none of them writes into a file another has unlinked.
    #[test]
    fn racing_creators_share_one_segment() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let seg = 1 << 20;
        for segno in 1..20u64 {
            let files: Vec<File> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..4)
                    .map(|_| s.spawn(|| create_segment(dir.path(), TIMELINE, segno, seg, false)))
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap().expect("created or opened"))
                    .collect()
            });
            files[0].write_all_at(b"mark", 100).unwrap();
            for f in &files {
                let mut b = [0u8; 4];
                f.read_exact_at(&mut b, 100).unwrap();
                assert_eq!(&b, b"mark", "segment {segno}: one file for all");
            }
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("xlogtemp"))
            .collect();
        assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
    }

    #[test]
    fn names_like_postgres() {
        let seg = DEFAULT_SEGMENT_SIZE;
        assert_eq!(segment_file_name(1, seg), "000000010000000000000001");
        // 0/16B3748 lives in segment 1 at 16 MiB.
        assert_eq!(
            walfile_name(Lsn(0x16B3748), seg),
            "000000010000000000000001"
        );
        // 1/0 is segment 256 at 16 MiB: xlogid 1, seg 0.
        assert_eq!(
            walfile_name(Lsn(0x1_0000_0000), seg),
            "000000010000000100000000"
        );
        assert_eq!(
            walfile_name(Lsn(0x1_FF00_0000), seg),
            "0000000100000001000000FF"
        );
        assert_eq!(segment_file_name(3, 1 << 20), "000000010000000000000003");
        for segno in [0, 1, 255, 256, 4097, 1 << 30] {
            for size in [MIN_SEGMENT_SIZE, 1 << 20, seg, MAX_SEGMENT_SIZE] {
                let name = segment_file_name(segno, size);
                assert_eq!(parse_segment_file_name(&name, size), Some(segno), "{name}");
            }
        }
        assert_eq!(
            parse_segment_file_name_tli("000000020000000000000001", seg),
            Some((TimeLineId(2), 1))
        );
        assert_eq!(
            segment_file_name_tli(TimeLineId(0x1A), 3, seg),
            "0000001A0000000000000003"
        );
        assert_eq!(
            parse_segment_file_name("000000000000000000000001", seg),
            None,
            "timeline 0 does not exist"
        );
        assert_eq!(
            parse_segment_file_name("000000010000000000000100", seg),
            None
        );
        assert_eq!(parse_segment_file_name("xlogtemp.1", seg), None);
        assert_eq!(
            parse_segment_file_name("00000001000000000000000G", seg),
            None
        );
    }

    #[test]
    fn size_checks() {
        assert!(check_segment_size_setting(16 << 20).is_ok());
        assert!(check_segment_size_setting(1 << 20).is_ok());
        assert!(check_segment_size_setting(512 << 10).is_err());
        assert!(check_segment_size_setting(3 << 20).is_err());
        assert!(check_segment_size_setting(2 << 30).is_err());
        assert!(check_segment_size(MIN_SEGMENT_SIZE).is_ok());
        assert!(check_segment_size(1000).is_err());
    }

    #[test]
    fn create_list_remove() {
        let dir = tempfile::tempdir().unwrap();
        let size = MIN_SEGMENT_SIZE;
        for segno in [3, 1, 2] {
            create_segment(dir.path(), TIMELINE, segno, size, true).unwrap();
        }
        fs::write(dir.path().join("junk"), b"x").unwrap();
        assert_eq!(list_segments(dir.path(), size).unwrap(), vec![1, 2, 3]);
        let p = segment_path(dir.path(), 2, size);
        assert_eq!(fs::metadata(&p).unwrap().len(), size);
        assert!(fs::read(&p).unwrap().iter().all(|b| *b == 0));
        // A short file is extended to full size.
        let f = OpenOptions::new().write(true).open(&p).unwrap();
        f.set_len(100).unwrap();
        create_segment(dir.path(), TIMELINE, 2, size, false).unwrap();
        assert_eq!(fs::metadata(&p).unwrap().len(), size);
        assert_eq!(
            remove_segments_before(dir.path(), 3, size, true).unwrap(),
            2
        );
        assert_eq!(list_segments(dir.path(), size).unwrap(), vec![3]);
    }

    /// After a switch one number exists under two timelines: readers take
    /// the newer, listing counts it once, removal takes both.
    #[test]
    fn highest_timeline_wins() {
        let dir = tempfile::tempdir().unwrap();
        let size = MIN_SEGMENT_SIZE;
        create_segment(dir.path(), TIMELINE, 3, size, false).unwrap();
        create_segment(dir.path(), TIMELINE, 4, size, false).unwrap();
        create_segment(dir.path(), TimeLineId(2), 4, size, false).unwrap();
        create_segment(dir.path(), TimeLineId(2), 5, size, false).unwrap();
        assert_eq!(list_segments(dir.path(), size).unwrap(), vec![3, 4, 5]);
        let tli_of = |s| find_segment(dir.path(), s, size).unwrap().map(|(t, _)| t);
        assert_eq!(tli_of(3), Some(TIMELINE));
        assert_eq!(tli_of(4), Some(TimeLineId(2)));
        assert_eq!(tli_of(5), Some(TimeLineId(2)));
        assert_eq!(tli_of(6), None);
        assert_eq!(
            remove_segments_before(dir.path(), 5, size, false).unwrap(),
            3
        );
        assert_eq!(list_segments(dir.path(), size).unwrap(), vec![5]);
    }

    /// A switch at offset 100 of segment 3: the new timeline's file holds
    /// the old bytes up to 100 and zeros after; an existing one is kept.
    #[test]
    fn adopt_copies_up_to_the_switch() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let size = MIN_SEGMENT_SIZE;
        let f = create_segment(dir.path(), TIMELINE, 3, size, false).unwrap();
        f.write_all_at(&[7u8; 200], 0).unwrap();
        adopt_segment(dir.path(), TimeLineId(2), 3, size, 100, true).unwrap();
        let b = fs::read(segment_path_tli(dir.path(), TimeLineId(2), 3, size)).unwrap();
        assert_eq!(b.len() as u64, size);
        assert!(b[..100].iter().all(|x| *x == 7) && b[100..].iter().all(|x| *x == 0));
        f.write_all_at(&[9u8; 10], 0).unwrap();
        adopt_segment(dir.path(), TimeLineId(2), 3, size, 100, true).unwrap();
        let b = fs::read(segment_path_tli(dir.path(), TimeLineId(2), 3, size)).unwrap();
        assert_eq!(b[0], 7, "an existing copy is kept");
        create_segment(dir.path(), TimeLineId(2), 5, size, false).unwrap();
        assert!(adopt_segment(dir.path(), TIMELINE, 5, size, 100, true).is_err());
        // Nothing to copy: nothing made.
        adopt_segment(dir.path(), TimeLineId(2), 9, size, 100, true).unwrap();
        assert_eq!(find_segment(dir.path(), 9, size).unwrap(), None);
    }
}
