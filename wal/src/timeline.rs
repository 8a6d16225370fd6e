//! Timelines and their history files (PostgreSQL's `timeline.c`).
//!
//! Every promotion starts a new timeline: the WAL of the new primary is a
//! branch of its old primary's, forking at the *switch point* — the end of
//! the last record the standby replayed. The branch gets the next free
//! timeline ID, and `pg_wal/0000000N.history` records where each ancestor
//! ended, one line per ancestor, in PostgreSQL's format:
//!
//! ```text
//!  00000003.history
//!  ┌────────────────────────────────────────────────┐
//!  │1 → 0/3000158 → no recovery target specified    │  timeline 1 ended at 0/3000158
//!  │                                                │  (blank line: as PostgreSQL,
//!  │2 → 0/5000060 → no recovery target specified    │   a copied parent file is
//!  └────────────────────────────────────────────────┘   followed by one)
//!  parentTLI \t switchpoint X/X \t reason          (→ = a tab)
//! ```
//!
//! Timeline 1 has no file; a missing file means "no parents". A history as
//! a value ([`TimeLineHistory`]) lists every timeline oldest first, each
//! with the range of WAL it owns: `[begin, end)`, the newest one open-ended.
//!
//! **What is checked.** [`parse_history`] refuses what `readTimeLineHistory`
//! refuses, with its words: a line whose first field is not a number
//! ("Expected a numeric timeline ID."), one without a switch point
//! ("Expected a write-ahead log switchpoint location."), IDs not increasing,
//! an ID not below the file's own timeline. A history received from a
//! primary is parsed before it is written ([`write_history_file`]), so a
//! garbage file never lands in `pg_wal`. Switch points must not go
//! backwards either (PostgreSQL does not check; a file that did would
//! make every "has this standby passed the fork?" answer wrong).
//!
//! **Writing** is atomic: a temporary file, fsync, rename, fsync of the
//! directory, as every other file whose torn state would be fatal.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use pgtypes::lsn::Lsn;
use pgtypes::TimeLineId;

/// Why the promotion ended recovery where it did (PostgreSQL's reason for
/// a promotion without a recovery target).
pub const REASON_NO_TARGET: &str = "no recovery target specified";

/// One timeline of a history and the WAL it owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeLineHistoryEntry {
    /// The timeline.
    pub tli: TimeLineId,
    /// Where it began (its parent's switch point; 0/0 for the first).
    pub begin: Lsn,
    /// Where it ended (its switch point); `None` for the newest one.
    pub end: Option<Lsn>,
}

/// A timeline's ancestry, oldest first, ending with the timeline itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeLineHistory {
    /// The entries, oldest first; never empty.
    pub entries: Vec<TimeLineHistoryEntry>,
}

/// Why a history file could not be used; messages and hints are
/// PostgreSQL's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// A line that is not `tli  X/X  reason`.
    #[error("syntax error in history file: {line}")]
    Syntax {
        /// The offending line.
        line: String,
        /// PostgreSQL's hint.
        hint: &'static str,
    },
    /// Timeline IDs out of order, or switch points going backwards.
    #[error("invalid data in history file: {line}")]
    Invalid {
        /// The offending line.
        line: String,
        /// PostgreSQL's hint.
        hint: &'static str,
    },
    /// A parent not older than the file's own timeline.
    #[error("invalid data in history file \"{file}\"")]
    NotAParent {
        /// The file name.
        file: String,
    },
    /// The file could not be read or written.
    #[error("could not {what} file \"{path}\": {err}")]
    Io {
        /// What was attempted.
        what: &'static str,
        /// The file.
        path: String,
        /// The OS error.
        err: String,
    },
}

impl HistoryError {
    /// PostgreSQL's hint for the error, if it has one.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            HistoryError::Syntax { hint, .. } | HistoryError::Invalid { hint, .. } => Some(hint),
            HistoryError::NotAParent { .. } => {
                Some("Timeline IDs must be less than child timeline's ID.")
            }
            HistoryError::Io { .. } => None,
        }
    }
}

/// `0000000N.history` (PostgreSQL's `TLHistoryFileName`).
pub fn history_file_name(tli: TimeLineId) -> String {
    format!("{:08X}.history", tli.0)
}

/// The timeline a history file name names, if it is one.
pub fn parse_history_file_name(name: &str) -> Option<TimeLineId> {
    let hex = name.strip_suffix(".history")?;
    if hex.len() != 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(hex, 16)
        .ok()
        .filter(|t| *t > 0)
        .map(TimeLineId)
}

/// The path of timeline `tli`'s history file in `dir` (`pg_wal`).
pub fn history_path(dir: &Path, tli: TimeLineId) -> PathBuf {
    dir.join(history_file_name(tli))
}

/// Parses the content of timeline `tli`'s history file (see the module
/// docs for what is refused).
pub fn parse_history(text: &str, tli: TimeLineId) -> Result<TimeLineHistory, HistoryError> {
    let mut entries: Vec<TimeLineHistoryEntry> = Vec::new();
    let mut prev_end = Lsn::INVALID;
    for line in text.lines() {
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let mut fields = t.split_whitespace();
        let syntax = |hint| HistoryError::Syntax {
            line: line.to_string(),
            hint,
        };
        let parent = fields
            .next()
            .and_then(|f| f.parse::<u32>().ok())
            .ok_or_else(|| syntax("Expected a numeric timeline ID."))?;
        let switch = fields
            .next()
            .and_then(|f| f.parse::<Lsn>().ok())
            .ok_or_else(|| syntax("Expected a write-ahead log switchpoint location."))?;
        if let Some(last) = entries.last() {
            if parent <= last.tli.0 {
                return Err(HistoryError::Invalid {
                    line: line.to_string(),
                    hint: "Timeline IDs must be in increasing sequence.",
                });
            }
        }
        if switch < prev_end {
            return Err(HistoryError::Invalid {
                line: line.to_string(),
                hint: "Switch points must not go backwards.",
            });
        }
        entries.push(TimeLineHistoryEntry {
            tli: TimeLineId(parent),
            begin: prev_end,
            end: Some(switch),
        });
        prev_end = switch;
    }
    if entries.last().is_some_and(|e| e.tli >= tli) {
        return Err(HistoryError::NotAParent {
            file: history_file_name(tli),
        });
    }
    entries.push(TimeLineHistoryEntry {
        tli,
        begin: prev_end,
        end: None,
    });
    Ok(TimeLineHistory { entries })
}

/// Timeline `tli`'s history from `dir` (PostgreSQL's
/// `readTimeLineHistory`): timeline 1, and any timeline without a file,
/// has no parents.
pub fn read_history(dir: &Path, tli: TimeLineId) -> Result<TimeLineHistory, HistoryError> {
    let alone = TimeLineHistory {
        entries: vec![TimeLineHistoryEntry {
            tli,
            begin: Lsn::INVALID,
            end: None,
        }],
    };
    if tli.0 <= 1 {
        return Ok(alone);
    }
    let path = history_path(dir, tli);
    match fs::read(&path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            parse_history(&text, tli)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(alone),
        Err(e) => Err(io_err("open", &path, e)),
    }
}

fn io_err(what: &'static str, path: &Path, e: io::Error) -> HistoryError {
    HistoryError::Io {
        what,
        path: path.display().to_string(),
        err: e.to_string(),
    }
}

impl TimeLineHistory {
    /// The newest timeline (the history's own).
    pub fn tip(&self) -> TimeLineId {
        self.entries.last().map_or(TimeLineId(1), |e| e.tli)
    }

    /// Whether `tli` is in this history.
    pub fn contains(&self, tli: TimeLineId) -> bool {
        self.entries.iter().any(|e| e.tli == tli)
    }

    /// Where `tli` ended in this history and which timeline followed it
    /// (PostgreSQL's `tliSwitchPoint`): `Some((switch point, next))` for an
    /// ancestor, `None` for the tip or a timeline not in the history.
    pub fn switch_point(&self, tli: TimeLineId) -> Option<(Lsn, TimeLineId)> {
        let i = self.entries.iter().position(|e| e.tli == tli)?;
        let end = self.entries[i].end?;
        let next = self.entries.get(i + 1)?.tli;
        Some((end, next))
    }

    /// The timeline owning WAL position `lsn` (PostgreSQL's
    /// `tliOfPointInHistory`): a switch point belongs to the child.
    pub fn timeline_of(&self, lsn: Lsn) -> TimeLineId {
        self.entries
            .iter()
            .find(|e| e.end.is_none_or(|end| lsn < end))
            .map_or(self.tip(), |e| e.tli)
    }
}

/// Writes `content` as timeline `tli`'s history file, atomically, after
/// checking that it parses (a history received from a primary: garbage is
/// refused and nothing is written). Returns the parsed history.
pub fn write_history_file(
    dir: &Path,
    tli: TimeLineId,
    content: &[u8],
    fsync: bool,
) -> Result<TimeLineHistory, HistoryError> {
    let text = std::str::from_utf8(content).map_err(|_| HistoryError::Syntax {
        line: String::from_utf8_lossy(content)
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
        hint: "Expected a numeric timeline ID.",
    })?;
    let history = parse_history(text, tli)?;
    let path = history_path(dir, tli);
    pgtypes::fileutil::write_atomic(&path, content, fsync).map_err(|e| HistoryError::Io {
        what: "write",
        path: path.display().to_string(),
        err: e.into_fields().message,
    })?;
    Ok(history)
}

/// Creates timeline `new`'s history file at promotion (PostgreSQL's
/// `writeTimeLineHistory`): the parent's file, if it has one, then a blank
/// line and `parent \t switchpoint \t reason`. Returns the new history.
pub fn write_history(
    dir: &Path,
    new: TimeLineId,
    parent: TimeLineId,
    switchpoint: Lsn,
    reason: &str,
    fsync: bool,
) -> Result<TimeLineHistory, HistoryError> {
    let parent_path = history_path(dir, parent);
    let mut content = match fs::read(&parent_path) {
        Ok(b) if parent.0 > 1 => b,
        Ok(_) => Vec::new(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_err("open", &parent_path, e)),
    };
    if !content.is_empty() {
        if !content.ends_with(b"\n") {
            content.push(b'\n');
        }
        content.push(b'\n');
    }
    content.extend_from_slice(format!("{}\t{switchpoint}\t{reason}\n", parent.0).as_bytes());
    write_history_file(dir, new, &content, fsync)
}

/// The newest timeline with a history file in `dir`, at least `from`
/// (PostgreSQL's `findNewestTimeLine`, which probes upwards the same way).
pub fn find_newest_timeline(dir: &Path, from: TimeLineId) -> TimeLineId {
    let mut newest = from;
    while history_path(dir, TimeLineId(newest.0 + 1)).exists() {
        newest = TimeLineId(newest.0 + 1);
    }
    newest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(history_file_name(TimeLineId(2)), "00000002.history");
        assert_eq!(history_file_name(TimeLineId(0x1B)), "0000001B.history");
        assert_eq!(
            parse_history_file_name("0000001B.history"),
            Some(TimeLineId(0x1B))
        );
        assert_eq!(parse_history_file_name("00000000.history"), None);
        assert_eq!(parse_history_file_name("0000001.history"), None);
        assert_eq!(parse_history_file_name("000000010000000000000001"), None);
    }

    /// PostgreSQL's format, blank line and comments included.
    #[test]
    fn parse_like_postgres() {
        let text = "1\t0/3000158\tno recovery target specified\n\n2\t0/5000060\tno recovery target specified\n# comment\n";
        let h = parse_history(text, TimeLineId(3)).unwrap();
        let t = TimeLineId;
        assert_eq!(h.tip(), t(3));
        assert_eq!(h.entries.len(), 3);
        assert_eq!(h.switch_point(t(1)), Some((Lsn(0x3000158), t(2))));
        assert_eq!(h.switch_point(t(2)), Some((Lsn(0x5000060), t(3))));
        assert_eq!(h.switch_point(t(3)), None);
        assert_eq!(h.switch_point(t(4)), None);
        assert!(h.contains(t(1)) && !h.contains(t(4)));
        assert_eq!(h.timeline_of(Lsn(0x3000157)), t(1));
        assert_eq!(h.timeline_of(Lsn(0x3000158)), t(2));
        assert_eq!(h.timeline_of(Lsn(0x9000000)), t(3));
        assert_eq!(h.entries[1].begin, Lsn(0x3000158));
    }

    #[test]
    fn garbage_is_refused_with_postgres_words() {
        let t = TimeLineId(3);
        let e = parse_history("hello world\n", t).unwrap_err();
        assert_eq!(e.to_string(), "syntax error in history file: hello world");
        assert_eq!(e.hint(), Some("Expected a numeric timeline ID."));
        let e = parse_history("1\tnot-an-lsn\tx\n", t).unwrap_err();
        assert_eq!(
            e.hint(),
            Some("Expected a write-ahead log switchpoint location.")
        );
        let e = parse_history("2\t0/5\tx\n1\t0/9\tx\n", t).unwrap_err();
        assert_eq!(
            e.hint(),
            Some("Timeline IDs must be in increasing sequence.")
        );
        let e = parse_history("1\t0/5\tx\n3\t0/9\tx\n", t).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid data in history file \"00000003.history\""
        );
        let e = parse_history("1\t0/9\tx\n2\t0/5\tx\n", t).unwrap_err();
        assert!(matches!(e, HistoryError::Invalid { .. }), "{e}");
        // Never a panic on arbitrary bytes.
        for s in ["\t", "1", "1\t", "4294967296\t0/0", "-1\t0/0", "1\t/\t"] {
            let _ = parse_history(s, t);
        }
    }

    #[test]
    fn write_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let t = TimeLineId;
        assert_eq!(read_history(d, t(1)).unwrap().tip(), t(1));
        let h2 = write_history(d, t(2), t(1), Lsn(0x3000158), REASON_NO_TARGET, true).unwrap();
        assert_eq!(h2.switch_point(t(1)), Some((Lsn(0x3000158), t(2))));
        assert_eq!(
            fs::read_to_string(history_path(d, t(2))).unwrap(),
            "1\t0/3000158\tno recovery target specified\n"
        );
        write_history(d, t(3), t(2), Lsn(0x5000060), REASON_NO_TARGET, false).unwrap();
        assert_eq!(
            fs::read_to_string(history_path(d, t(3))).unwrap(),
            "1\t0/3000158\tno recovery target specified\n\n2\t0/5000060\tno recovery target specified\n"
        );
        assert_eq!(read_history(d, t(3)).unwrap().entries.len(), 3);
        assert_eq!(find_newest_timeline(d, t(1)), t(3));
        assert_eq!(find_newest_timeline(d, t(5)), t(5));
        // Garbage received for timeline 4: refused, nothing written.
        let e = write_history_file(d, t(4), b"garbage\n", true).unwrap_err();
        assert!(matches!(e, HistoryError::Syntax { .. }));
        assert!(!history_path(d, t(4)).exists());
        let e = write_history_file(d, t(4), &[0xff, 0xfe, b'\n'], true).unwrap_err();
        assert!(matches!(e, HistoryError::Syntax { .. }));
        assert!(!history_path(d, t(4)).exists());
    }
}
