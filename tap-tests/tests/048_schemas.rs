//! Schemas across restarts, crashes and replication (sql.md, "Schemas";
//! `engine::namespace`, `sql::schemacmds`).
//!
//! A relation's catalog key carries its schema's OID, in the catalog file
//! and in every WAL record that names it; a schema itself is a catalog
//! object with a creator mark. This test checks that tables in schemas
//! survive a restart and replay on the standby with their names resolved
//! the same way (two tables called `t` in two schemas stay apart), that
//! SET SCHEMA and DROP SCHEMA … CASCADE replay, and that a CREATE SCHEMA
//! whose transaction a crash cut short is gone after start-up, on both
//! nodes.
//!
//! * `schemas_replay_and_survive_a_restart`
//! * `uncommitted_schema_is_removed_after_a_crash`
//! * `alter_schema_is_transactional`: an uncommitted RENAME is invisible to
//!   other sessions and the standby (they keep the old name), another
//!   session's ALTER of the schema waits for it, and ROLLBACK or a crash
//!   puts the old name back.

use tap_tests::Node;

fn pair() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE SCHEMA a; CREATE SCHEMA b; \
         CREATE TABLE a.t (id serial PRIMARY KEY, v text); \
         CREATE TABLE b.t (id int PRIMARY KEY REFERENCES a.t (id) ON DELETE CASCADE); \
         CREATE TABLE t (x int); \
         INSERT INTO a.t (v) VALUES ('one'), ('two'); INSERT INTO b.t VALUES (1), (2); \
         INSERT INTO t VALUES (42)",
    );
    let standby = Node::standby_of(&primary, "standby");
    (primary, standby)
}

#[track_caller]
fn contents(node: &Node) -> String {
    node.safe_sql(
        "SELECT (SELECT string_agg(v, ',' ORDER BY id) FROM a.t), \
                (SELECT count(*) FROM b.t), (SELECT x FROM t)",
    )
}

#[test]
fn schemas_replay_and_survive_a_restart() {
    let (primary, standby) = pair();
    primary.safe_sql("DELETE FROM a.t WHERE id = 2; INSERT INTO a.t (v) VALUES ('three')");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            contents(node),
            "one,three|1|42",
            "{}: contents",
            node.name()
        );
    }
    primary.restart();
    assert_eq!(contents(&primary), "one,three|1|42", "after a restart");
    // The serial column's sequence is in schema a and, after a clean
    // shutdown, continues without a gap (Catalog::settle_sequences).
    assert_eq!(
        primary.safe_sql("INSERT INTO a.t (v) VALUES ('four') RETURNING id"),
        "4",
        "serial after a clean restart"
    );
    // SET SCHEMA and DROP SCHEMA … CASCADE replay.
    primary.safe_sql("CREATE SCHEMA c; ALTER TABLE t SET SCHEMA c; DROP SCHEMA b CASCADE");
    primary.wait_for_replay(&standby);
    standby.restart();
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql("SELECT x FROM c.t"),
            "42",
            "{}: moved table",
            node.name()
        );
        node.expect_error("SELECT * FROM b.t", "42P01");
        assert_eq!(
            node.safe_sql("SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname IN ('a','b','c')"),
            "a,c",
            "{}: schemas",
            node.name()
        );
    }
}

#[test]
fn uncommitted_schema_is_removed_after_a_crash() {
    let (primary, standby) = pair();
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("CREATE SCHEMA pending");
    s.query_safe("CREATE TABLE pending.t (a int)");
    // Another commit ships (and flushes) the WAL of the creation.
    primary.safe_sql("CREATE TABLE other (a int)");
    primary.wait_for_replay(&standby);
    primary.kill9();
    drop(s);
    primary.start();
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM pg_namespace WHERE nspname = 'pending'"),
        "0",
        "uncommitted schema removed at start-up"
    );
    // The removal is WAL-logged: the standby follows, and the name is free.
    primary.safe_sql(
        "CREATE SCHEMA pending; CREATE TABLE pending.t (b int); INSERT INTO pending.t VALUES (5)",
    );
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SELECT b FROM pending.t"), "5");
    assert_eq!(contents(&standby), "one,two|2|42");
}

#[test]
fn alter_schema_is_transactional() {
    let (primary, standby) = pair();
    let names = "SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace \
                 WHERE nspname IN ('a', 'a2', 'a3', 'b')";
    let alter = primary.background_session();
    alter.query_safe("BEGIN");
    alter.query_safe("ALTER SCHEMA a RENAME TO a2");
    assert_eq!(alter.query_safe("SELECT count(*) FROM a2.t"), "2");
    assert_eq!(alter.query_safe(names), "a2,b");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(node.safe_sql(names), "a,b", "{}: old name", node.name());
        assert_eq!(contents(node), "one,two|2|42", "{}", node.name());
    }
    // Another session's RENAME waits for the first, then works on the
    // name the ROLLBACK put back.
    let other = primary.background_session();
    let waiting = other.send("ALTER SCHEMA a RENAME TO a3");
    assert!(
        primary.poll_query_until(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
            "1"
        ),
        "the second ALTER SCHEMA waits"
    );
    alter.query_safe("ROLLBACK");
    assert_eq!(waiting.wait_ok(), "");
    assert_eq!(primary.safe_sql(names), "a3,b");
    assert_eq!(primary.safe_sql("SELECT count(*) FROM a3.t"), "2");
    // A crash with a RENAME uncommitted: start-up puts the name back, and
    // the standby never saw it.
    let doomed = primary.background_session();
    doomed.query_safe("BEGIN");
    doomed.query_safe("ALTER SCHEMA a3 RENAME TO gone");
    primary.kill9();
    drop(doomed);
    primary.start();
    assert_eq!(primary.safe_sql(names), "a3,b");
    primary.safe_sql("CREATE TABLE a3.after_crash (x int)");
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql(names), "a3,b");
    assert_eq!(standby.safe_sql("SELECT count(*) FROM a3.t"), "2");
}
