//! Set-returning functions and functions with OUT parameters on a primary
//! and its hot standby: functions created on the primary (RETURNS SETOF
//! and TABLE, in LANGUAGE sql and plpgsql, OUT / INOUT parameters, named
//! notation) answer the same on the standby after replay, in FROM, in the
//! select list and under LATERAL; a set-returning function over a large
//! table returns every row (its rows are materialised, as PostgreSQL's
//! tuplestore does); a DROP replicates.
//!
//! It guards against result columns (the OUT / TABLE list, the proargmodes
//! that say which is which) that do not survive WAL replay, and against
//! the standby's planner binding a call differently from the primary's.

use tap_tests::{Node, Session};

const FUNCTIONS: &[&str] = &[
    "CREATE TABLE big (id int PRIMARY KEY, v text)",
    "INSERT INTO big SELECT g, 'v' || g FROM generate_series(1, 50000) AS g",
    "CREATE FUNCTION ints(n int) RETURNS SETOF int LANGUAGE sql AS \
     $$SELECT g FROM generate_series(1, n) AS g$$",
    "CREATE FUNCTION big_rows(lo int) RETURNS TABLE (id int, v text) LANGUAGE plpgsql AS $$
     BEGIN
       RETURN QUERY SELECT b.id, b.v FROM big b WHERE b.id >= lo;
     END $$",
    "CREATE FUNCTION squares(n int, OUT i int, OUT sq int) RETURNS SETOF record LANGUAGE plpgsql AS $$
     BEGIN
       FOR j IN 1..n LOOP i := j; sq := j * j; RETURN NEXT; END LOOP;
     END $$",
    "CREATE FUNCTION pair(a int, OUT doubled int, OUT label text) LANGUAGE plpgsql AS $$
     BEGIN doubled := a * 2; label := 'n' || a; END $$",
    "CREATE FUNCTION bump(INOUT x int, step int DEFAULT 5) LANGUAGE plpgsql AS $$
     BEGIN x := x + step; END $$",
];

/// Queries whose answers must be equal on both nodes, with the answer.
const CHECKS: &[(&str, &str)] = &[
    (
        "SELECT string_agg(i::text, ',') FROM ints(4) AS i",
        "1,2,3,4",
    ),
    ("SELECT count(*), sum(id) FROM big_rows(49991)", "10|499955"),
    (
        "SELECT string_agg(i || ':' || sq, ',') FROM squares(3)",
        "1:1,2:4,3:9",
    ),
    ("SELECT * FROM pair(21)", "42|n21"),
    ("SELECT pair(21)", "(42,n21)"),
    ("SELECT bump(1), bump(x => 1, step => 2)", "6|3"),
    (
        "SELECT string_agg(t.id || '-' || s, ',' ORDER BY t.id, s) \
         FROM big t, LATERAL ints(t.id) AS s WHERE t.id <= 3",
        "1-1,2-1,2-2,3-1,3-2,3-3",
    ),
    ("SELECT count(*) FROM (SELECT ints(3)) AS x", "3"),
];

fn check_all(s: &Session, node: &str) {
    for (sql, want) in CHECKS {
        assert_eq!(s.query_safe(sql), *want, "{sql} on the {node}");
    }
}

#[test]
fn set_returning_functions_replicate() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");
    let catchup = || {
        let lsn = primary.lsn("insert");
        primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    };

    // 1. The functions, created on the primary, answer there.
    for sql in FUNCTIONS {
        primary.safe_sql(sql);
    }
    let p = primary.background_session();
    check_all(&p, "primary");

    // 2. After replay the standby answers the same, its catalog showing
    //    the same parameter modes.
    catchup();
    let s = standby.background_session();
    check_all(&s, "standby");
    let modes = "SELECT string_agg(proname || ' ' || coalesce(proargmodes::text, '-'), ';' \
                 ORDER BY proname) FROM pg_proc WHERE proname IN ('big_rows', 'bump', 'pair')";
    assert_eq!(
        s.query_safe(modes),
        p.query_safe(modes),
        "proargmodes equal on both nodes"
    );
    assert_eq!(
        s.query_safe(modes),
        "big_rows {i,t,t};bump {b,i};pair {i,o,o}",
        "proargmodes as declared"
    );

    // 3. Every row of a set-returning function over the whole table (the
    //    rows are materialised before the scan returns the first).
    assert_eq!(
        s.query_safe("SELECT count(*), count(DISTINCT v) FROM big_rows(1)"),
        "50000|50000",
        "all rows of a large SETOF result on the standby"
    );

    // 4. A DROP replicates: the standby no longer knows the function.
    primary.safe_sql("DROP FUNCTION squares(int)");
    catchup();
    let e = s.query_err("SELECT * FROM squares(3)");
    assert_eq!(e.code(), "42883", "dropped function gone on the standby");
}
