//! A trigger-maintained audit table under concurrent writers, and on the
//! hot standby (`sql::trigger`). Eight sessions insert, update and delete
//! rows of one table whose AFTER ROW trigger appends every change to an
//! audit table and bumps a per-operation counter row (a hot row all
//! writers contend for), and whose BEFORE ROW trigger stamps each row.
//!
//! It guards against trigger events lost or doubled under concurrency
//! (the audit must replay to exactly the table's final contents, and the
//! counters must equal the rows the writers' statements reported),
//! against BEFORE ROW changes not reaching the heap, and against a
//! standby that fires triggers during replay: the standby's audit and
//! counters must equal the primary's — a standby running the triggers
//! again would double them — and a write there fails as read-only.

use tap_tests::Node;

const SETUP: &str = "
CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL, stamp text);
CREATE TABLE audit (seq bigserial PRIMARY KEY, op text, id int, old_v int, new_v int);
CREATE TABLE op_counts (op text PRIMARY KEY, n bigint NOT NULL);
INSERT INTO op_counts VALUES ('INSERT', 0), ('UPDATE', 0), ('DELETE', 0);
CREATE FUNCTION acct_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.stamp := TG_OP || ':' || NEW.v;
  RETURN NEW;
END;
$$;
CREATE FUNCTION acct_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO audit (op, id, new_v) VALUES (TG_OP, NEW.id, NEW.v);
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO audit (op, id, old_v, new_v) VALUES (TG_OP, NEW.id, OLD.v, NEW.v);
  ELSE
    INSERT INTO audit (op, id, old_v) VALUES (TG_OP, OLD.id, OLD.v);
  END IF;
  UPDATE op_counts SET n = n + 1 WHERE op = TG_OP;
  RETURN NULL;
END;
$$;
CREATE TRIGGER acct_stamp BEFORE INSERT OR UPDATE ON acct FOR EACH ROW EXECUTE FUNCTION acct_stamp();
CREATE TRIGGER acct_audit AFTER INSERT OR UPDATE OR DELETE ON acct FOR EACH ROW EXECUTE FUNCTION acct_audit();
";

const WRITERS: i32 = 8;
const ROUNDS: i32 = 40;

/// Rows a statement with `RETURNING 1` reported.
fn rows(out: &str) -> i64 {
    out.lines().filter(|l| !l.is_empty()).count() as i64
}

#[test]
fn audit_stays_exact_under_concurrency_and_on_the_standby() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(SETUP);
    let standby = Node::standby_of(&primary, "standby");

    // 1. Eight writers, each on its own keys (writers that update each
    //    other's rows in scan order deadlock, in PostgreSQL too); they all
    //    contend for the audit table and the counter rows.
    let totals: Vec<[i64; 3]> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let s = primary.background_session();
                sc.spawn(move || {
                    let mut done = [0i64; 3];
                    for r in 0..ROUNDS {
                        let id = w * 1000 + r;
                        done[0] += rows(&s.query_safe(&format!(
                            "INSERT INTO acct VALUES ({id}, {r}) RETURNING 1"
                        )));
                        done[1] += rows(&s.query_safe(&format!(
                            "UPDATE acct SET v = v + 1 \
                             WHERE id BETWEEN {} AND {} AND id % 5 = {} RETURNING 1",
                            w * 1000,
                            w * 1000 + 999,
                            r % 5
                        )));
                        if r % 3 == 0 {
                            done[2] += rows(&s.query_safe(&format!(
                                "DELETE FROM acct WHERE id = {id} RETURNING 1"
                            )));
                        }
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("writer"))
            .collect()
    });
    let want: Vec<i64> = (0..3).map(|i| totals.iter().map(|t| t[i]).sum()).collect();

    // 2. The counters equal what the statements reported.
    assert_eq!(
        primary.safe_sql("SELECT n FROM op_counts ORDER BY op"),
        format!("{}\n{}\n{}", want[2], want[0], want[1]),
        "counters (DELETE, INSERT, UPDATE) equal the rows written"
    );
    assert_eq!(
        primary.safe_sql("SELECT op, count(*) FROM audit GROUP BY op ORDER BY op"),
        format!("DELETE|{}\nINSERT|{}\nUPDATE|{}", want[2], want[0], want[1]),
        "one audit row per row written"
    );

    // 3. The audit replays to the table: the last audit row of every key
    //    still present carries its value, deleted keys end with DELETE,
    //    and every stamp is the BEFORE trigger's.
    assert_eq!(
        primary.safe_sql(
            "SELECT count(*) FROM acct a WHERE a.v IS DISTINCT FROM \
             (SELECT new_v FROM audit WHERE audit.id = a.id ORDER BY seq DESC LIMIT 1)"
        ),
        "0",
        "every live row's last audit entry has its value"
    );
    assert_eq!(
        primary
            .safe_sql("SELECT count(DISTINCT id) FROM audit WHERE id NOT IN (SELECT id FROM acct)"),
        primary.safe_sql(&format!("SELECT {}", want[2])),
        "every deleted key is audited as gone"
    );
    assert_eq!(
        primary.safe_sql(
            "SELECT count(*) FROM acct WHERE stamp IS DISTINCT FROM \
             (CASE WHEN id IN (SELECT id FROM audit WHERE op = 'UPDATE') \
              THEN 'UPDATE:' ELSE 'INSERT:' END) || v"
        ),
        "0",
        "the BEFORE ROW trigger's stamp is stored"
    );

    // 4. The standby, caught up, has the same audit and counters — its
    //    replay did not fire the triggers again — and refuses writes.
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    for q in [
        "SELECT n FROM op_counts ORDER BY op",
        "SELECT count(*), sum(seq), sum(coalesce(new_v, 0) - coalesce(old_v, 0)) FROM audit",
        "SELECT count(*), sum(v) FROM acct",
    ] {
        assert_eq!(
            standby.safe_sql(q),
            primary.safe_sql(q),
            "standby equals primary: {q}"
        );
    }
    let err = standby
        .sql("UPDATE acct SET v = 0")
        .expect_err("a write on the standby");
    assert_eq!(err.code(), "25006", "standby write is read-only: {err}");
}
