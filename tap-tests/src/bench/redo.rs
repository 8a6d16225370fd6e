//! Redo speed: how fast crash recovery replays WAL, in MB/s, hotpair beside
//! PostgreSQL 15.
//!
//! Each system gets the same load — a CHECKPOINT, then one big INSERT of
//! padded rows (about 250 bytes of WAL a row), committed — and is then
//! killed with SIGKILL (`pg_ctl stop -m immediate` for PostgreSQL: the
//! postmaster's children die as in a crash) and started again. Both log
//! the same three facts, so the rate is read the same way from either
//! log, never timed from outside (start-up also opens files, rebuilds
//! indexes and checkpoints):
//!
//! ```text
//! redo starts at 0/1A2B3C8                                   the redo point
//! redo done at 0/9F00028 system usage: … elapsed: 0.42 s     last record, replay time
//! ```
//!
//! MB/s = (done − starts) / 2^20 / elapsed. PostgreSQL prints `elapsed`
//! with two decimals, so the load is sized to take well over 0.1 s to
//! replay; a replay too short to time is reported as a failure, not a
//! number.

use super::report::{Cell, Chart, Table};
use super::target::{first_line, guarded};
use super::workloads::Ctx;

/// Rows of the load: ~25 MB of WAL with `--quick`, ~150 MB otherwise.
fn load_rows(quick: bool) -> u32 {
    if quick {
        100_000
    } else {
        600_000
    }
}

/// One replay read from a server log.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Replay {
    /// Bytes of WAL from the redo point to the last record replayed.
    pub bytes: u64,
    /// Seconds the replay took, as logged.
    pub secs: f64,
}

/// Parses `X/Y` (hex halves) as a 64-bit LSN.
fn parse_lsn(s: &str) -> Option<u64> {
    let (hi, lo) = s.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

/// The word after `marker` in `line`.
fn word_after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &line[line.find(marker)? + marker.len()..];
    rest.split_whitespace().next()
}

/// The last replay in `log` (hotpair's or PostgreSQL's wording), or why
/// there is none.
pub fn parse_replay(log: &str) -> Result<Replay, String> {
    let start = log
        .lines()
        .filter_map(|l| word_after(l, "redo starts at "))
        .next_back()
        .ok_or("no \"redo starts at\" in the log (no crash recovery ran)")?;
    let done = log
        .lines()
        .rfind(|l| l.contains("redo done at "))
        .ok_or("no \"redo done at\" in the log")?;
    let end = word_after(done, "redo done at ").and_then(parse_lsn);
    let secs = word_after(done, "elapsed: ").and_then(|s| s.trim_end_matches(';').parse().ok());
    match (parse_lsn(start), end, secs) {
        (Some(a), Some(b), Some(secs)) if b >= a => Ok(Replay { bytes: b - a, secs }),
        _ => Err(format!("cannot read the redo lines: {start:?} / {done:?}")),
    }
}

/// The `redo` table: MB/s of crash-recovery replay for each system.
pub fn redo_speed(ctx: &mut Ctx) -> Vec<Table> {
    let mut table = Table::new(
        "redo",
        "crash-recovery redo speed: replay of an INSERT load after kill -9",
        "MB/s",
        "load",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG");
    let rows = load_rows(ctx.cfg.quick);
    let label = format!("{}k rows", rows / 1000);
    table.row(&label, 0.0);
    for t in 0..ctx.targets.len() {
        let cell = match ctx.targets[t].primary() {
            Err(why) => Cell::Skipped(why),
            Ok(_) => match guarded(|| measure(ctx, t, rows)) {
                Ok(Ok(r)) => {
                    let mb = r.bytes as f64 / (1024.0 * 1024.0);
                    table.note(format!(
                        "{}: {mb:.1} MB of WAL replayed in {:.3} s",
                        ctx.targets[t].name, r.secs
                    ));
                    if r.secs > 0.0 {
                        Cell::Value(mb / r.secs, None)
                    } else {
                        Cell::Failed("replay too short to time".into())
                    }
                }
                Ok(Err(e)) | Err(e) => Cell::Failed(first_line(&e).to_string()),
            },
        };
        table.set(&label, 0.0, t, cell);
        ctx.check_alive(t, "redo");
    }
    table.note("MB/s = WAL from the redo point to the last record / the logged elapsed time");
    vec![table]
}

/// Loads, crashes and restarts target `t`; the replay its log reports.
fn measure(ctx: &mut Ctx, t: usize, rows: u32) -> Result<Replay, String> {
    let ep = ctx.targets[t].primary()?.clone();
    ep.sql("DROP TABLE IF EXISTS bench_redo")?;
    ep.sql("CREATE TABLE bench_redo (id int NOT NULL, pad text NOT NULL)")?;
    ep.sql("CHECKPOINT")?;
    ep.sql(&format!(
        "INSERT INTO bench_redo SELECT g, repeat('x', 200) FROM generate_series(1, {rows}) g"
    ))?;
    let log = ctx.targets[t].crash_restart()?;
    let replay = parse_replay(&log);
    // The server is back: leave nothing behind for later workloads.
    let _ = ep.sql("DROP TABLE IF EXISTS bench_redo");
    let _ = ep.sql("CHECKPOINT");
    replay
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_wordings() {
        let hotpair = "2024-05-01 12:00:00.123 UTC [42] LOG:  redo starts at 0/1000028\n\
             LOG:  redo done at 0/3000000 system usage: elapsed: 0.500 s; 9 records, 32.00 MB of WAL, 64.0 MB/s\n";
        assert_eq!(
            parse_replay(hotpair),
            Ok(Replay {
                bytes: 0x3000000 - 0x1000028,
                secs: 0.5
            })
        );
        let pg = "LOG:  redo starts at 1/FF000028\n\
             LOG:  redo done at 2/00000100 system usage: CPU: user: 0.10 s, system: 0.05 s, elapsed: 0.25 s\n";
        assert_eq!(
            parse_replay(pg),
            Ok(Replay {
                bytes: 0x2_0000_0100 - 0x1_FF00_0028,
                secs: 0.25
            })
        );
        assert!(parse_replay("LOG:  database system is ready to accept connections").is_err());
    }
}
