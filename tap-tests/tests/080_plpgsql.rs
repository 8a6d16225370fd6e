//! Server-side functions on a primary and its hot standby: a PL/pgSQL
//! function created on the primary runs on the standby after replay (the
//! seed's `snapme`), its DROP replicates, each statement of a VOLATILE
//! function takes its own snapshot (the snapshot counters move by the
//! loop count) while a STABLE one reuses the caller's, and an exception
//! block rolls back exactly its own writes — more than 64 of them in one
//! call, which overflows the procarray's subxid cache — on both nodes.
//!
//! It guards against a function catalog that does not replicate, against
//! statements inside functions sharing one snapshot (what snapme
//! measures would then be nothing), and against subtransaction rollback
//! inside a function leaking rows or leaving running subxids behind.

use tap_tests::{Node, Session};

const SNAPME: &str =
    "CREATE FUNCTION snapme(p_ret int, p_loop int) RETURNS int VOLATILE LANGUAGE plpgsql AS \
     $$BEGIN FOR x in 1..p_loop LOOP EXECUTE 'SELECT 1'; END LOOP; RETURN p_ret; END;$$";

const SNAPME_STABLE: &str =
    "CREATE FUNCTION snapme_stable(p_ret int, p_loop int) RETURNS int STABLE LANGUAGE plpgsql AS \
     $$BEGIN FOR x in 1..p_loop LOOP EXECUTE 'SELECT 1'; END LOOP; RETURN p_ret; END;$$";

/// Every 2nd iteration's insert is rolled back by its own exception block.
const SAVEPOINTS: &str = "CREATE FUNCTION fill(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE kept int := 0;
BEGIN
  FOR i IN 1..n LOOP
    BEGIN
      INSERT INTO sub VALUES (i);
      IF i % 2 = 0 THEN
        RAISE EXCEPTION 'undo %', i;
      END IF;
      kept := kept + 1;
    EXCEPTION WHEN raise_exception THEN
      NULL;
    END;
  END LOOP;
  RETURN kept;
END;
$$";

/// Snapshots taken on the node `s` is connected to (computed + reused).
fn snapshots(s: &Session) -> i64 {
    s.query_safe("SELECT snapshots_computed + snapshots_reused FROM hotpair_stat_snapshots")
        .parse()
        .expect("snapshot counters")
}

/// The number of snapshots `sql` took, measured around it by `s`.
fn snapshots_taken(s: &Session, sql: &str, want: &str) -> i64 {
    let before = snapshots(s);
    assert_eq!(s.query_safe(sql), want, "{sql} result");
    snapshots(s) - before
}

#[test]
fn functions_replicate_and_take_snapshots_per_statement() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");
    let catchup = || {
        let lsn = primary.lsn("insert");
        primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    };

    // 1. snapme created on the primary runs there and, after replay, on
    //    the standby.
    primary.safe_sql(SNAPME);
    primary.safe_sql(SNAPME_STABLE);
    catchup();
    let p = primary.background_session();
    let s = standby.background_session();
    assert_eq!(
        p.query_safe("SELECT snapme(17, 10)"),
        "17",
        "snapme on the primary"
    );
    assert_eq!(
        s.query_safe("SELECT snapme(17, 10)"),
        "17",
        "snapme on the standby"
    );

    // 2. A VOLATILE function's statements each take a snapshot: the
    //    counters move by at least p_loop (the two counter reads and the
    //    call itself take a few more); a STABLE one takes none of its own.
    for (node, sess) in [("primary", &p), ("standby", &s)] {
        let n = snapshots_taken(sess, "SELECT snapme(17, 1000)", "17");
        assert!(
            (1000..1100).contains(&n),
            "volatile snapme took {n} snapshots on the {node}, want 1000 + a few"
        );
        let n = snapshots_taken(sess, "SELECT snapme_stable(17, 1000)", "17");
        assert!(
            n < 100,
            "stable snapme took {n} snapshots on the {node}, want a few"
        );
    }

    // 3. Exception blocks: 100 subtransactions in one call (beyond the 64
    //    the procarray caches), every second one rolled back.
    primary.safe_sql("CREATE TABLE sub (i int)");
    primary.safe_sql(SAVEPOINTS);
    p.query_safe("BEGIN");
    assert_eq!(p.query_safe("SELECT fill(100)"), "50", "kept rows reported");
    assert_eq!(
        p.query_safe("SELECT count(*) FROM sub"),
        "50",
        "own rows visible"
    );
    let other = primary.background_session();
    assert_eq!(
        other.query_safe("SELECT count(*) FROM sub"),
        "0",
        "uncommitted subtransactions invisible to others on the primary"
    );
    catchup();
    assert_eq!(
        s.query_safe("SELECT count(*) FROM sub"),
        "0",
        "uncommitted subtransactions invisible on the standby"
    );
    p.query_safe("COMMIT");
    assert_eq!(
        other.query_safe("SELECT count(*), min(i), max(i), sum(i % 2) FROM sub"),
        "50|1|99|50",
        "exactly the odd rows after commit on the primary"
    );
    catchup();
    assert_eq!(
        s.query_safe("SELECT count(*), min(i), max(i), sum(i % 2) FROM sub"),
        "50|1|99|50",
        "exactly the odd rows after commit on the standby"
    );
    // Nothing of the call is still running: a new snapshot has no xip.
    let snap = other.query_safe("SELECT pg_current_snapshot()");
    assert!(snap.ends_with(':'), "no transaction left running: {snap}");

    // 4. A failed call rolls back only its own writes (the statement);
    //    the session's transaction goes on.
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO sub VALUES (1000)");
    let e = p.query_err("SELECT fill(1) / 0");
    assert_eq!(e.code(), "22012", "division by zero after the call");
    p.query_safe("ROLLBACK");
    assert_eq!(
        p.query_safe("SELECT count(*) FROM sub"),
        "50",
        "failed call left nothing"
    );

    // 5. The standby refuses writes made through a function; DROP FUNCTION
    //    replicates.
    let e = s.query_err("SELECT fill(2)");
    assert_eq!(e.code(), "25006", "function writes refused on the standby");
    primary.safe_sql("DROP FUNCTION snapme(int, int)");
    catchup();
    let e = s.query_err("SELECT snapme(1, 1)");
    assert_eq!(e.code(), "42883", "dropped function gone on the standby");
    assert_eq!(
        s.query_safe("SELECT snapme_stable(1, 1)"),
        "1",
        "the other one stays"
    );

    // 6. Cancel and statement_timeout reach a loop.
    p.query_safe("SET statement_timeout = '200ms'");
    let e = p.query_err("DO $$BEGIN LOOP PERFORM 1; END LOOP; END$$");
    assert_eq!(e.code(), "57014", "statement_timeout stops an endless loop");
    p.query_safe("RESET statement_timeout");

    // 7. A body that does not parse fails CREATE (PostgreSQL validates
    //    PL/pgSQL at CREATE); nothing is created.
    for body in [
        "BEGIN\n  IF true THEN RETURN 1;\nEND;",
        "BEGIN RAISE NOTICE '% %', 1; RETURN 1; END",
        "BEGIN LOOP NULL; END; END",
        "BEGIN x := 1; END",
        "DECLARE c CONSTANT int := 1; BEGIN c := 2; RETURN c; END",
    ] {
        let e = p.query_err(&format!(
            "CREATE FUNCTION bad() RETURNS int LANGUAGE plpgsql AS $x${body}$x$"
        ));
        assert_eq!(
            e.code(),
            "42601",
            "syntax error at CREATE for {body:?}: {e:?}"
        );
    }
    let e = p.query_err("SELECT bad()");
    assert_eq!(e.code(), "42883", "no function left by a failed CREATE");

    // 8. Procedures are CALLed, functions SELECTed; a rolled-back CREATE
    //    leaves nothing.
    p.query_safe(
        "CREATE PROCEDURE pr(k int) LANGUAGE plpgsql AS $$BEGIN INSERT INTO sub VALUES (k); END$$",
    );
    assert_eq!(
        p.query_err("SELECT pr(1)").code(),
        "42809",
        "a procedure is not SELECTed"
    );
    p.query_safe("CALL pr(7000)");
    assert_eq!(
        p.query_safe("SELECT count(*) FROM sub WHERE i = 7000"),
        "1",
        "CALL ran the procedure"
    );
    assert_eq!(
        p.query_err("CALL fill(1)").code(),
        "42809",
        "a function is not CALLed"
    );
    p.query_safe("BEGIN");
    p.query_safe("CREATE FUNCTION gone() RETURNS int LANGUAGE sql AS 'SELECT 1'");
    assert_eq!(p.query_safe("SELECT gone()"), "1", "visible to its creator");
    assert_eq!(
        other.query_err("SELECT gone()").code(),
        "42883",
        "invisible to others before commit"
    );
    p.query_safe("ROLLBACK");
    assert_eq!(
        p.query_err("SELECT gone()").code(),
        "42883",
        "gone after ROLLBACK"
    );
    catchup();
    assert_eq!(
        s.query_err("SELECT gone()").code(),
        "42883",
        "never on the standby"
    );
}
