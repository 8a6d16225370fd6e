//! Constraint triggers deferred to COMMIT, a transition-table trigger and
//! TRUNCATE triggers on the primary, and what the hot standby sees of them
//! (`sql::trigger`, `sql::ri_triggers`' deferred queue).
//!
//! A deferred constraint trigger's function runs when the transaction
//! commits (or at `SET CONSTRAINTS … IMMEDIATE`), not when the row is
//! written; an error there fails the COMMIT and takes the whole
//! transaction with it. A statement trigger with `REFERENCING NEW TABLE`
//! reads all the rows its statement wrote, once. A TRUNCATE trigger runs
//! at the TRUNCATE and its
//! writes commit with it. It guards against deferred events fired early,
//! lost, or fired twice, against a failed deferred check that still
//! commits, and against a standby that fires triggers during replay: the
//! standby must show exactly the primary's audit rows, which it can only
//! have received as WAL.

use tap_tests::Node;

const SETUP: &str = "
CREATE TABLE orders (id int PRIMARY KEY, qty int NOT NULL);
CREATE TABLE scratch (x int);
CREATE TABLE audit (seq bigserial PRIMARY KEY, what text NOT NULL);
CREATE FUNCTION orders_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.qty < 0 THEN
    RAISE EXCEPTION 'order % has negative quantity', NEW.id;
  END IF;
  INSERT INTO audit (what) VALUES ('checked ' || NEW.id || ' qty ' || NEW.qty);
  RETURN NULL;
END;
$$;
CREATE FUNCTION scratch_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit (what) VALUES (TG_WHEN || ' ' || TG_OP || ' ' || TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
CREATE TABLE order_totals (stmt_seq bigserial PRIMARY KEY, nrows bigint, qty bigint);
CREATE FUNCTION orders_total() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_totals (nrows, qty) SELECT count(*), sum(qty) FROM new_orders;
  RETURN NULL;
END;
$$;
CREATE TRIGGER orders_total AFTER INSERT ON orders REFERENCING NEW TABLE AS new_orders
  FOR EACH STATEMENT EXECUTE FUNCTION orders_total();
CREATE CONSTRAINT TRIGGER orders_check AFTER INSERT OR UPDATE ON orders
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION orders_check();
CREATE TRIGGER scratch_truncated AFTER TRUNCATE ON scratch
  FOR EACH STATEMENT EXECUTE FUNCTION scratch_truncated();
";

#[test]
fn deferred_transition_and_truncate_triggers_reach_the_standby_as_wal() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(SETUP);
    let standby = Node::standby_of(&primary, "standby");
    let s = primary.background_session();

    // 1. A deferred constraint trigger waits for COMMIT.
    s.query_safe("BEGIN");
    s.query_safe("INSERT INTO orders VALUES (1, 5), (2, 7)");
    s.query_safe("UPDATE orders SET qty = 8 WHERE id = 2");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM audit"),
        "0",
        "deferred trigger has not fired before COMMIT"
    );
    s.query_safe("COMMIT");
    assert_eq!(
        primary.safe_sql("SELECT what FROM audit ORDER BY seq"),
        "checked 1 qty 5\nchecked 2 qty 7\nchecked 2 qty 8",
        "deferred trigger fired once per event at COMMIT, in order"
    );

    // 2. An error in a deferred trigger fails the COMMIT: nothing of the
    //    transaction stays.
    s.query_safe("BEGIN");
    s.query_safe("INSERT INTO orders VALUES (3, 1), (4, -1)");
    let err = s
        .query("COMMIT")
        .expect_err("COMMIT with a failing deferred trigger");
    assert_eq!(
        err.code(),
        "P0001",
        "deferred trigger's error fails COMMIT: {err}"
    );
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM orders WHERE id IN (3, 4)"),
        "0",
        "failed COMMIT kept no row"
    );
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM audit"),
        "3",
        "failed COMMIT kept no audit row"
    );

    // 3. SET CONSTRAINTS … IMMEDIATE fires the pending events at once.
    s.query_safe("BEGIN");
    s.query_safe("INSERT INTO orders VALUES (5, 2)");
    s.query_safe("SET CONSTRAINTS orders_check IMMEDIATE");
    assert_eq!(
        s.query_safe("SELECT what FROM audit ORDER BY seq DESC LIMIT 1"),
        "checked 5 qty 2",
        "SET CONSTRAINTS IMMEDIATE fired the pending event"
    );
    s.query_safe("INSERT INTO orders VALUES (6, 3)");
    s.query_safe("COMMIT");

    // 4. The transition-table trigger saw each INSERT's rows once (the
    //    failed transaction's row is gone with it).
    primary.safe_sql("INSERT INTO orders SELECT g, g FROM generate_series(100, 149) g");
    assert_eq!(
        primary.safe_sql("SELECT nrows, qty FROM order_totals ORDER BY stmt_seq"),
        "2|12\n1|2\n1|3\n50|6225",
        "one totals row per INSERT statement, over all its rows"
    );

    // 5. A TRUNCATE trigger's audit row commits with the TRUNCATE, in and
    //    out of a transaction block.
    primary.safe_sql("INSERT INTO scratch SELECT generate_series(1, 10)");
    primary.safe_sql("TRUNCATE scratch");
    s.query_safe("BEGIN");
    s.query_safe("INSERT INTO scratch VALUES (1)");
    s.query_safe("TRUNCATE scratch");
    s.query_safe("ROLLBACK");
    assert_eq!(
        primary.safe_sql("SELECT what FROM audit WHERE what LIKE 'AFTER%' ORDER BY seq"),
        "AFTER TRUNCATE scratch",
        "TRUNCATE trigger fired; the rolled-back one left nothing"
    );

    // 6. The standby, caught up, has exactly the primary's rows: it applied
    //    the triggers' writes from WAL and fired nothing itself.
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    for q in [
        "SELECT seq, what FROM audit ORDER BY seq",
        "SELECT id, qty FROM orders ORDER BY id",
        "SELECT count(*) FROM scratch",
        "SELECT stmt_seq, nrows, qty FROM order_totals ORDER BY stmt_seq",
    ] {
        assert_eq!(
            standby.safe_sql(q),
            primary.safe_sql(q),
            "standby equals primary: {q}"
        );
    }
    assert_eq!(
        standby.safe_sql("SELECT count(*) FROM audit"),
        "56",
        "standby fired no trigger of its own"
    );
    let err = standby
        .sql("TRUNCATE scratch")
        .expect_err("TRUNCATE on the standby");
    assert_eq!(err.code(), "25006", "standby TRUNCATE is read-only: {err}");
}
