//! Golden-file SQL tests, after PostgreSQL's `pg_regress`.
//!
//! A test is a SQL script `tap-tests/sql/NAME.sql` and the output real
//! PostgreSQL 15 gave for it, `tap-tests/sql/expected/NAME.out`: what
//! `psql -X -a -q` prints (every input line echoed, then the result tables,
//! notices and errors, stdout and stderr in one stream) when the script is
//! fed on its standard input. Running hotpair through the same psql and
//! comparing the two texts byte for byte checks results, column names and
//! alignment (from the type OIDs), command tags, error messages, DETAIL /
//! HINT lines and error cursor positions at once.
//!
//! ```text
//! tap-tests/sql/
//! ├── schedule            which scripts run: `test NAME` or `pending NAME -- why`
//! ├── NAME.sql            setup (DDL, DML) … "-- @@ read-only" … queries
//! └── expected/NAME.out   PostgreSQL 15's psql output, made by `sql_regen`
//! ```
//!
//! ## Primary and standby
//!
//! A script is two parts split by the marker line [`READ_ONLY_MARKER`]:
//! everything before it builds tables (primary only), everything from it on
//! only reads. The whole script runs on the primary; then, once the
//! standby has replayed the primary's WAL, the read-only part runs on the
//! standby, and its output must equal the expected file from the marker
//! line on. A script without the marker (one that writes throughout) runs on
//! the primary only. Both are true of the expected files too: `sql_regen`
//! makes them on a PostgreSQL primary and checks the read-only part against
//! a PostgreSQL standby.
//!
//! ## Invariants the scripts keep
//!
//! * Deterministic output: every query returning several rows has an ORDER
//!   BY that orders them totally (or its rows are identical where they tie);
//!   no `now()`, `random()` or plan-dependent row order (multi-row
//!   RETURNING only where the order is fixed).
//! * Independent scripts: each creates its own tables with its own name
//!   prefix; the test runs them all in one database, in schedule order,
//!   while `sql_regen` gives each a fresh database.
//! * A fixed client environment ([`psql_env`]): no `~/.psqlrc` (`-X`),
//!   `PGCLIENTENCODING=UTF8`, `LC_ALL=C`, none of the libpq variables that
//!   change session settings. The server side is hotpair's defaults
//!   (docs/operations.md: TimeZone UTC, DateStyle ISO, MDY, IntervalStyle
//!   postgres, extra_float_digits 1), which `sql_regen` gives PostgreSQL
//!   through `PGOPTIONS`.
//!
//! Where to go next: `tests/035_sql_golden.rs` (the test), `src/bin/sql_regen.rs`
//! (regeneration), docs/architecture/testing.md ("SQL golden files").

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::session::one_shot;
use crate::utils::{timeout_default, POLL_INTERVAL};

/// The line that ends a script's setup part and starts its read-only part.
pub const READ_ONLY_MARKER: &str = "-- @@ read-only";

/// Session settings `sql_regen` gives PostgreSQL so that its defaults are
/// hotpair's (docs/operations.md).
pub const REFERENCE_PGOPTIONS: &str =
    "-c TimeZone=UTC -c DateStyle=ISO,MDY -c IntervalStyle=postgres -c extra_float_digits=1 -c lc_messages=C";

/// `tap-tests/sql`.
pub fn sql_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sql")
}

/// Whether a scheduled script runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// `test NAME`: runs, must match.
    Test,
    /// `pending NAME -- reason`: listed with its reason, not run (hotpair
    /// lacks a feature it needs).
    Pending(String),
}

/// One line of the schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleEntry {
    /// The script's name, without `.sql`.
    pub name: String,
    /// Run it or not.
    pub status: Status,
}

/// Parses a schedule: `test NAME` or `pending NAME -- reason` per line;
/// blank lines and `#` comments are skipped. Errors name the bad line.
pub fn parse_schedule(text: &str) -> Result<Vec<ScheduleEntry>, String> {
    let mut entries: Vec<ScheduleEntry> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (head, reason) = match line.split_once("--") {
            Some((h, r)) => (h.trim(), Some(r.trim())),
            None => (line, None),
        };
        let mut words = head.split_whitespace();
        let (Some(kind), Some(name), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!(
                "schedule line {}: expected `test NAME` or `pending NAME -- reason`: {raw}",
                i + 1
            ));
        };
        let status = match (kind, reason) {
            ("test", _) => Status::Test,
            ("pending", Some(r)) if !r.is_empty() => Status::Pending(r.to_string()),
            ("pending", _) => {
                return Err(format!(
                    "schedule line {}: a pending script needs `-- reason`: {raw}",
                    i + 1
                ))
            }
            _ => {
                return Err(format!(
                    "schedule line {}: unknown kind {kind:?}: {raw}",
                    i + 1
                ))
            }
        };
        if entries.iter().any(|e| e.name == name) {
            return Err(format!("schedule line {}: {name} listed twice", i + 1));
        }
        entries.push(ScheduleEntry {
            name: name.to_string(),
            status,
        });
    }
    Ok(entries)
}

/// Reads `sql/schedule`.
pub fn read_schedule(dir: &Path) -> Result<Vec<ScheduleEntry>, String> {
    let path = dir.join("schedule");
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
    parse_schedule(&text)
}

/// The names of every `*.sql` file in `dir`, sorted.
pub fn script_names(dir: &Path) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("read {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("read {}: {e}", dir.display()))?
            .path();
        if path.extension().is_some_and(|x| x == "sql") {
            if let Some(stem) = path.file_stem() {
                names.push(stem.to_string_lossy().into_owned());
            }
        }
    }
    names.sort();
    Ok(names)
}

/// Splits `text` (a script or its output) at the marker line: the part from
/// the marker line on, or `None` without one.
pub fn read_only_part(text: &str) -> Option<&str> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == READ_ONLY_MARKER {
            return Some(&text[offset..]);
        }
        offset += line.len();
    }
    None
}

/// The environment every psql run of a script gets (see the module doc).
pub fn psql_env(cmd: &mut Command) {
    for var in [
        "PGOPTIONS",
        "PGTZ",
        "PGDATESTYLE",
        "PGGEOQO",
        "PGSERVICE",
        "PGSERVICEFILE",
        "PGDATABASE",
        "PGUSER",
        "PGHOST",
        "PGPORT",
        "PGAPPNAME",
        "PSQLRC",
        "PSQL_PAGER",
        "PAGER",
        "COLUMNS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("PGCLIENTENCODING", "UTF8")
        .env("LC_ALL", "C")
        .env("LANG", "C");
}

/// Feeds `script` to `psql -X -a -q` connected to `host:port` as
/// `postgres` to database `db` (with `pgoptions` as `PGOPTIONS` if given)
/// and returns stdout and stderr as one stream, in the order psql wrote
/// them (both go to one file). Panics if psql cannot be started or does not
/// exit within the default timeout.
pub fn run_script(
    host: &str,
    port: u16,
    db: &str,
    pgoptions: Option<&str>,
    script: &str,
) -> String {
    let mut out_file = tempfile::tempfile().unwrap_or_else(|e| panic!("psql output file: {e}"));
    let err_file = out_file
        .try_clone()
        .unwrap_or_else(|e| panic!("psql output file: {e}"));
    let mut cmd = Command::new("psql");
    cmd.args([
        "-X",
        "-a",
        "-q",
        "-h",
        host,
        "-p",
        &port.to_string(),
        "-U",
        "postgres",
        "-d",
        db,
    ]);
    psql_env(&mut cmd);
    if let Some(opts) = pgoptions {
        cmd.env("PGOPTIONS", opts);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::from(
            out_file
                .try_clone()
                .unwrap_or_else(|e| panic!("psql output file: {e}")),
        ))
        .stderr(Stdio::from(err_file));
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("could not start psql: {e}"));
    let mut stdin = child.stdin.take().expect("piped stdin");
    let text = script.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let deadline = Instant::now() + timeout_default();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL_INTERVAL),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "psql on port {port} did not finish within {:?}",
                    timeout_default()
                );
            }
        }
    }
    let _ = writer.join();
    let mut bytes = Vec::new();
    out_file
        .rewind()
        .and_then(|_| out_file.read_to_end(&mut bytes))
        .unwrap_or_else(|e| panic!("read psql output: {e}"));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A line-based diff of `expected` and `actual` in unified style (`-`
/// expected, `+` actual, three lines of context, `@@ -l,n +l,n @@`
/// hunks); empty when equal.
pub fn unified_diff(expected: &str, actual: &str) -> String {
    if expected == actual {
        return String::new();
    }
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // Longest common subsequence table, from the ends (scripts are small).
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    // The edit script: (' ' | '-' | '+', line in a, line in b).
    let mut ops: Vec<(char, usize, usize)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            ops.push(('-', i, j));
            i += 1;
        } else {
            ops.push(('+', i, j));
            j += 1;
        }
    }
    const CONTEXT: usize = 3;
    let mut out = String::new();
    let mut k = 0;
    while k < ops.len() {
        if ops[k].0 == ' ' {
            k += 1;
            continue;
        }
        // A hunk: from CONTEXT lines before this change to CONTEXT lines
        // after the last change closer than 2 * CONTEXT to the previous.
        let start = k.saturating_sub(CONTEXT);
        let mut end = k;
        let mut last_change = k;
        while end < ops.len() {
            if ops[end].0 != ' ' {
                last_change = end;
            } else if end - last_change > 2 * CONTEXT {
                break;
            }
            end += 1;
        }
        let end = (last_change + CONTEXT + 1).min(ops.len());
        let hunk = &ops[start..end];
        let a_len = hunk.iter().filter(|o| o.0 != '+').count();
        let b_len = hunk.iter().filter(|o| o.0 != '-').count();
        out.push_str(&format!(
            "@@ -{},{a_len} +{},{b_len} @@\n",
            hunk[0].1 + 1,
            hunk[0].2 + 1
        ));
        for &(op, ia, jb) in hunk {
            let text = if op == '+' { b[jb] } else { a[ia] };
            out.push(op);
            out.push_str(text);
            out.push('\n');
        }
        k = end;
    }
    if out.is_empty() {
        // Same lines, different line ends (a missing final newline).
        out.push_str("(the texts differ only in their final newline)\n");
    }
    out
}

/// Polls `standby` (a connection string) until its replay position has
/// reached `lsn`; panics on timeout with what it last saw.
pub fn wait_for_replay(standby_connstr: &str, lsn: &str) {
    let sql = format!("SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn");
    let deadline = Instant::now() + timeout_default();
    loop {
        let last = one_shot(standby_connstr, &sql);
        if matches!(&last, Ok(s) if s == "t") {
            return;
        }
        if Instant::now() >= deadline {
            panic!("standby ({standby_connstr}) did not replay up to {lsn}: last answer {last:?}");
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// What regeneration did with one script.
#[derive(Debug)]
pub struct Regenerated {
    /// The script's name.
    pub name: String,
    /// Whether the expected file changed.
    pub changed: bool,
    /// A diff if the read-only part gave other output on the standby.
    pub standby_diff: Option<String>,
}

/// Regenerates `expected/NAME.out` for each of `names` from a PostgreSQL
/// primary (`primary_port`) and checks each read-only part on its standby
/// (`standby_port`), both on 127.0.0.1 with user `postgres`. Each script
/// gets a fresh database `regress_NAME`.
pub fn regenerate(
    dir: &Path,
    names: &[String],
    primary_port: u16,
    standby_port: u16,
) -> Result<Vec<Regenerated>, String> {
    let host = "127.0.0.1";
    let primary = format!("host={host} port={primary_port} user=postgres dbname=postgres");
    std::fs::create_dir_all(dir.join("expected")).map_err(|e| format!("mkdir expected: {e}"))?;
    let mut done = Vec::new();
    for name in names {
        let script_path = dir.join(format!("{name}.sql"));
        let script = std::fs::read_to_string(&script_path)
            .map_err(|e| format!("read {}: {e}", script_path.display()))?;
        let db = format!("regress_{name}");
        one_shot(&primary, &format!("DROP DATABASE IF EXISTS {db}"))
            .map_err(|e| format!("{db}: {e}"))?;
        one_shot(&primary, &format!("CREATE DATABASE {db}")).map_err(|e| format!("{db}: {e}"))?;
        let output = run_script(host, primary_port, &db, Some(REFERENCE_PGOPTIONS), &script);
        let out_path = dir.join("expected").join(format!("{name}.out"));
        let old = std::fs::read_to_string(&out_path).unwrap_or_default();
        std::fs::write(&out_path, &output)
            .map_err(|e| format!("write {}: {e}", out_path.display()))?;
        let mut standby_diff = None;
        if let Some(part) = read_only_part(&script) {
            let lsn =
                one_shot(&primary, "SELECT pg_current_wal_lsn()").map_err(|e| format!("{e}"))?;
            wait_for_replay(
                &format!("host={host} port={standby_port} user=postgres dbname={db}"),
                &lsn,
            );
            let on_standby = run_script(host, standby_port, &db, Some(REFERENCE_PGOPTIONS), part);
            let want = read_only_part(&output).unwrap_or("");
            if on_standby != want {
                standby_diff = Some(unified_diff(want, &on_standby));
            }
        }
        one_shot(&primary, &format!("DROP DATABASE {db}")).map_err(|e| format!("{db}: {e}"))?;
        done.push(Regenerated {
            name: name.clone(),
            changed: old != output,
            standby_diff,
        });
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_schedule() {
        let s = "# c\n\ntest basics\npending joins -- needs joins\n";
        let e = parse_schedule(s).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].status, Status::Test);
        assert_eq!(e[1].status, Status::Pending("needs joins".into()));
        assert!(parse_schedule("pending x\n").is_err());
        assert!(parse_schedule("test a\ntest a\n").is_err());
        assert!(parse_schedule("run a\n").is_err());
    }

    #[test]
    fn splits_at_marker() {
        let s = "CREATE TABLE t (a int);\n-- @@ read-only\nSELECT 1;\n";
        assert_eq!(read_only_part(s), Some("-- @@ read-only\nSELECT 1;\n"));
        assert_eq!(read_only_part("SELECT 1;\n"), None);
    }

    #[test]
    fn diffs() {
        assert_eq!(unified_diff("a\nb\n", "a\nb\n"), "");
        let d = unified_diff("a\nb\nc\n", "a\nx\nc\n");
        assert_eq!(d, "@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n");
        assert!(unified_diff("a", "a\n").contains("final newline"));
    }
}
