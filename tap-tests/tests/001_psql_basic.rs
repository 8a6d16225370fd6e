//! psql against a real `primary` process.
//!
//! psql is the first client anyone points at hotpair, and it is picky in
//! ways drivers are not: it prints the server's command tags verbatim
//! (`INSERT 0 2`), aligns columns by the type OIDs in RowDescription (numbers
//! right, text left), prints `(1 row)` footers from the row count, shows the
//! SQLSTATE only if the ErrorResponse carries it, and decides what a failed
//! statement does to a transaction block from ReadyForQuery's status byte.
//! This test guards against any of those drifting from what PostgreSQL 15
//! sends, for `psql -c` and for a script fed on stdin (`psql -f -`).

use tap_tests::Node;

#[test]
fn psql_basic() {
    // 1. A running primary.
    let node = Node::new("primary");
    node.init(false);
    node.start();

    // 2. psql -X -c: DDL and DML print PostgreSQL's command tags.
    let out = node.run_psql(
        &[
            "-X",
            "-c",
            "CREATE TABLE items (id int PRIMARY KEY, name text, price float8)",
        ],
        "",
    );
    assert_eq!(
        (out.status, out.stdout.as_str(), out.stderr.as_str()),
        (0, "CREATE TABLE\n", ""),
        "CREATE TABLE tag"
    );

    let out = node.run_psql(
        &[
            "-X",
            "-c",
            "INSERT INTO items VALUES (1, 'apple', 0.5), (2, 'pear', 1.25)",
        ],
        "",
    );
    assert_eq!(out.stdout, "INSERT 0 2\n", "multi-row INSERT tag");

    // 3. SELECT prints psql's aligned table: numbers right-aligned, text
    //    left-aligned, a row-count footer.
    let out = node.run_psql(
        &["-X", "-c", "SELECT id, name, price FROM items ORDER BY id"],
        "",
    );
    assert_eq!(
        out.stdout,
        concat!(
            " id | name  | price \n",
            "----+-------+-------\n",
            "  1 | apple |   0.5\n",
            "  2 | pear  |  1.25\n",
            "(2 rows)\n",
            "\n"
        ),
        "aligned SELECT output"
    );

    let out = node.run_psql(&["-X", "-c", "SELECT name FROM items WHERE id = 2"], "");
    assert_eq!(
        out.stdout, " name \n------\n pear\n(1 row)\n\n",
        "one-row footer"
    );

    let out = node.run_psql(&["-X", "-c", "SELECT name FROM items WHERE id = 3"], "");
    assert_eq!(
        out.stdout, " name \n------\n(0 rows)\n\n",
        "zero-row footer"
    );

    // 4. UPDATE and DELETE report the rows they touched.
    let out = node.run_psql(&["-X", "-c", "UPDATE items SET price = price * 2"], "");
    assert_eq!(out.stdout, "UPDATE 2\n", "UPDATE tag");
    let out = node.run_psql(&["-X", "-c", "DELETE FROM items WHERE id = 1"], "");
    assert_eq!(out.stdout, "DELETE 1\n", "DELETE tag");

    // 5. An error: exit status 1, the message on stderr, nothing on stdout.
    let out = node.run_psql(&["-X", "-c", "SELECT * FROM missing"], "");
    assert_eq!(out.status, 1, "psql -c exits 1 on an error");
    assert!(
        out.stderr
            .contains("ERROR:  relation \"missing\" does not exist"),
        "undefined table message on stderr: {:?}",
        out.stderr
    );

    // 6. Several statements in one -c are one implicit transaction: a later
    //    failure undoes the earlier insert.
    let out = node.run_psql(
        &[
            "-X",
            "-c",
            "INSERT INTO items VALUES (10, 'fig', 3); SELECT * FROM missing",
        ],
        "",
    );
    assert_eq!(out.status, 1, "multi-statement -c fails");
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM items WHERE id = 10"),
        "0",
        "implicit transaction rolled back"
    );

    // 7. psql -X -f - fed a script: errors do not stop it, the SQLSTATE is
    //    shown with VERBOSITY verbose, a failed statement aborts its block
    //    until ROLLBACK.
    let script = "\
\\set VERBOSITY verbose
CREATE TABLE log (n int);
INSERT INTO log VALUES (1);
SELECT * FROM nope;
BEGIN;
INSERT INTO log VALUES (2);
SELECT * FROM nope;
INSERT INTO log VALUES (3);
ROLLBACK;
BEGIN;
INSERT INTO log VALUES (4);
COMMIT;
SELECT n FROM log ORDER BY n;
";
    let out = node.run_psql(&["-X", "-f", "-"], script);
    assert_eq!(out.status, 0, "script without ON_ERROR_STOP exits 0");
    assert_eq!(
        out.stdout,
        concat!(
            "CREATE TABLE\n",
            "INSERT 0 1\n",
            "BEGIN\n",
            "INSERT 0 1\n",
            "ROLLBACK\n",
            "BEGIN\n",
            "INSERT 0 1\n",
            "COMMIT\n",
            " n \n",
            "---\n",
            " 1\n",
            " 4\n",
            "(2 rows)\n",
            "\n"
        ),
        "script output"
    );
    assert!(
        out.stderr
            .contains("psql:<stdin>:4: ERROR:  42P01: relation \"nope\" does not exist"),
        "42P01 in the script's stderr: {:?}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "psql:<stdin>:8: ERROR:  25P02: current transaction is aborted, commands ignored until end of transaction block"
        ),
        "25P02 for a statement in an aborted block: {:?}",
        out.stderr
    );

    // 8. ON_ERROR_STOP: psql stops at the first error and exits 3.
    let out = node.run_psql(
        &["-X", "-v", "ON_ERROR_STOP=1", "-f", "-"],
        "SELECT 1;\nSELECT * FROM nope;\nSELECT 2;\n",
    );
    assert_eq!(out.status, 3, "ON_ERROR_STOP exit status");
    assert_eq!(
        out.stdout, " ?column? \n----------\n        1\n(1 row)\n\n",
        "stopped before SELECT 2"
    );

    // 9. The harness's own psql helper (psql -XAtq): unaligned, tuples only.
    assert_eq!(
        node.psql("SELECT 1, 'x'"),
        (0, "1|x".to_string(), String::new()),
        "psql -XAtq output"
    );
    let (status, _, stderr) = node.psql("SELECT * FROM nope");
    assert_eq!(status, 3, "psql helper reports a script error");
    assert!(
        stderr.contains("relation \"nope\" does not exist"),
        "psql helper stderr: {stderr:?}"
    );

    node.stop("fast");
}
