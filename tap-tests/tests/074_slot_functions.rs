//! The SQL face of replication slots (PostgreSQL's slotfuncs.c):
//! `pg_create_physical_replication_slot(name, immediately_reserve,
//! temporary)` returning the record `(slot_name, lsn)`, and
//! `pg_drop_replication_slot(name)` — what PostgreSQL's own recovery tests
//! and runbooks call, on a primary and on a standby (for its cascaded
//! standbys).
//!
//! What goes wrong without this: every runbook step "create the slot for
//! the new standby" fails with "function does not exist", and a slot can
//! only be dropped over a replication connection.

use tap_tests::Node;

const SLOT: &str =
    "SELECT slot_type, active, restart_lsn IS NULL FROM pg_replication_slots WHERE slot_name = ";

#[test]
fn slot_functions_on_primary_and_standby() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (a int)");

    // 1. Without reserving WAL: the record's lsn is NULL, as is the slot's
    //    restart_lsn until a standby uses it.
    assert_eq!(
        primary.safe_sql("SELECT pg_create_physical_replication_slot('lazy')"),
        "(lazy,)"
    );
    assert_eq!(primary.safe_sql(&format!("{SLOT}'lazy'")), "physical|f|t");

    // 2. Reserving at once: the lsn returned is the slot's restart_lsn; the
    //    columns can be selected from the function.
    let rec = primary.safe_sql("SELECT pg_create_physical_replication_slot('rep1', true)");
    let restart =
        primary.safe_sql("SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = 'rep1'");
    assert_eq!(rec, format!("(rep1,{restart})"), "record form");
    assert_eq!(
        primary.safe_sql("SELECT pg_create_physical_replication_slot('typed', false, false)"),
        "(typed,)"
    );
    // Its type, as psql's \gdesc describes it (nothing is run).
    let (status, out, err) =
        primary.psql("SELECT pg_create_physical_replication_slot('described') AS s \\gdesc");
    assert_eq!(status, 0, "{err}");
    assert_eq!(out.trim(), "s|record", "{out}");

    // 3. PostgreSQL's errors, nothing created.
    for (sql, code, message) in [
        (
            "SELECT pg_create_physical_replication_slot('rep1')",
            "42710",
            "replication slot \"rep1\" already exists",
        ),
        (
            "SELECT pg_create_physical_replication_slot('Bad-Name')",
            "42602",
            "replication slot name \"Bad-Name\" contains invalid character",
        ),
        (
            "SELECT pg_drop_replication_slot('missing')",
            "42704",
            "replication slot \"missing\" does not exist",
        ),
    ] {
        let e = primary.sql(sql).expect_err(sql);
        assert_eq!((e.code(), e.message.as_str()), (code, message), "{sql}");
    }
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM pg_replication_slots"),
        "3"
    );

    // 4. Only a superuser or a role with REPLICATION may use slots.
    primary.safe_sql("CREATE ROLE plain LOGIN");
    primary.safe_sql("CREATE ROLE repl LOGIN REPLICATION");
    let e = primary
        .sql("SET ROLE plain; SELECT pg_create_physical_replication_slot('by_plain')")
        .expect_err("42501");
    assert_eq!(e.code(), "42501");
    assert_eq!(
        e.message,
        "must be superuser or replication role to use replication slots"
    );
    assert_eq!(
        primary.safe_sql("SET ROLE repl; SELECT pg_create_physical_replication_slot('by_repl')"),
        "(by_repl,)"
    );
    primary.safe_sql("SET ROLE repl; SELECT pg_drop_replication_slot('by_repl')");

    // 5. A standby streams through a slot made by SQL; an active slot
    //    cannot be dropped.
    let standby = Node::new("standby");
    standby.init_from_backup_with_slot(&primary, "rep1");
    standby.start();
    primary.safe_sql("INSERT INTO t VALUES (1)");
    primary.wait_for_replay(&standby);
    assert!(primary.poll_query_until(&format!("{SLOT}'rep1'"), "physical|t|f"));
    let e = primary
        .sql("SELECT pg_drop_replication_slot('rep1')")
        .expect_err("55006");
    assert_eq!(e.code(), "55006", "{}", e.message);

    // 6. On the standby: a slot for a cascaded standby.
    assert_eq!(
        standby.safe_sql("SELECT pg_create_physical_replication_slot('cascade', true) IS NOT NULL"),
        "t"
    );
    assert_eq!(
        standby.safe_sql(&format!("{SLOT}'cascade'")),
        "physical|f|f"
    );
    standby.safe_sql("SELECT pg_drop_replication_slot('cascade')");
    assert_eq!(
        standby.safe_sql("SELECT count(*) FROM pg_replication_slots"),
        "0"
    );

    // 7. Once its standby is gone the slot can be dropped; the drop is
    //    durable.
    standby.stop("fast");
    assert!(primary.poll_query_until(&format!("{SLOT}'rep1'"), "physical|f|f"));
    assert_eq!(
        primary.safe_sql("SELECT pg_drop_replication_slot('rep1')"),
        ""
    );
    primary.restart();
    assert_eq!(
        primary.safe_sql(
            "SELECT string_agg(slot_name, ',' ORDER BY slot_name) FROM pg_replication_slots"
        ),
        "lazy,typed"
    );
}
