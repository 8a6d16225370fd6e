//! The golden SQL suite: hotpair must print, through the real psql, exactly
//! what PostgreSQL 15 printed for each scheduled script of `tap-tests/sql`
//! — on the primary, and for the read-only part on a hot standby that has
//! replayed the setup. It guards against wrong results, wrong result
//! shapes (column names, types, alignment), wrong command tags and error
//! texts, and a standby that answers differently from its primary.
//!
//! The expected files come from PostgreSQL (`cargo run -p tap-tests --bin
//! sql_regen`); this test needs only hotpair and psql. Scripts marked
//! `pending` in `sql/schedule` are listed with their reason and not run
//! (`HOTPAIR_SQL_FILES=name,…` runs just the named scripts, pending or not).
//! See `tap_tests::regress` for the file format and
//! docs/architecture/testing.md ("SQL golden files").

use tap_tests::regress::{self, Status};
use tap_tests::Node;

#[test]
fn sql_golden_files() {
    let dir = regress::sql_dir();

    // 1. The schedule names every script once, and every scheduled script
    //    has its expected output.
    let schedule = regress::read_schedule(&dir).unwrap_or_else(|e| panic!("{e}"));
    let scripts = regress::script_names(&dir).unwrap_or_else(|e| panic!("{e}"));
    for name in &scripts {
        assert!(
            schedule.iter().any(|e| &e.name == name),
            "sql/{name}.sql is not in sql/schedule (add `test {name}` or `pending {name} -- why`)"
        );
    }
    for entry in &schedule {
        assert!(
            scripts.contains(&entry.name),
            "sql/schedule lists {} but sql/{}.sql does not exist",
            entry.name,
            entry.name
        );
        assert!(
            dir.join("expected")
                .join(format!("{}.out", entry.name))
                .is_file(),
            "sql/expected/{}.out is missing: run `cargo run -p tap-tests --bin sql_regen {}`",
            entry.name,
            entry.name
        );
    }
    for entry in &schedule {
        if let Status::Pending(why) = &entry.status {
            eprintln!("# pending {}: {why}", entry.name);
        }
    }

    // `HOTPAIR_SQL_FILES=joins,with` runs just those scripts, pending or
    // not: how a pending script is tried before its line is flipped.
    let only: Option<Vec<String>> = std::env::var("HOTPAIR_SQL_FILES").ok().map(|v| {
        v.split(',')
            .map(|n| n.trim().trim_end_matches(".sql").to_string())
            .filter(|n| !n.is_empty())
            .collect()
    });
    let selected: Vec<&regress::ScheduleEntry> = match &only {
        Some(names) => {
            for n in names {
                assert!(
                    scripts.contains(n),
                    "HOTPAIR_SQL_FILES names {n}, which is not in sql/"
                );
            }
            schedule
                .iter()
                .filter(|e| names.contains(&e.name))
                .collect()
        }
        None => schedule
            .iter()
            .filter(|e| e.status == Status::Test)
            .collect(),
    };

    // 2. A primary and its hot standby.
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");

    // 3. Each scheduled script: whole on the primary, then its read-only
    //    part on the standby once replay has caught up.
    let mut failures = Vec::new();
    let mut ran = 0;
    for entry in selected {
        let name = &entry.name;
        let script = std::fs::read_to_string(dir.join(format!("{name}.sql")))
            .unwrap_or_else(|e| panic!("read {name}.sql: {e}"));
        let expected = std::fs::read_to_string(dir.join("expected").join(format!("{name}.out")))
            .unwrap_or_else(|e| panic!("read {name}.out: {e}"));
        ran += 1;

        let on_primary =
            regress::run_script(primary.host(), primary.port(), "postgres", None, &script);
        let diff = regress::unified_diff(&expected, &on_primary);
        if !diff.is_empty() {
            failures.push(format!(
                "--- sql/expected/{name}.out\n+++ {name} on the primary\n{diff}"
            ));
        }

        let Some(part) = regress::read_only_part(&script) else {
            continue;
        };
        let want = regress::read_only_part(&expected).unwrap_or_else(|| {
            panic!(
                "sql/expected/{name}.out has no `{}` line: regenerate it",
                regress::READ_ONLY_MARKER
            )
        });
        let lsn = primary.lsn("write");
        primary.wait_for_catchup(&standby, "replay", Some(&lsn));
        let on_standby =
            regress::run_script(standby.host(), standby.port(), "postgres", None, part);
        let diff = regress::unified_diff(want, &on_standby);
        if !diff.is_empty() {
            failures.push(format!(
                "--- sql/expected/{name}.out (from its read-only marker)\n+++ {name} on the standby\n{diff}"
            ));
        }
    }

    // 4. Every difference at once, by file.
    assert!(ran > 0, "sql/schedule runs no script");
    assert!(
        failures.is_empty(),
        "{} golden SQL mismatch(es):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}
