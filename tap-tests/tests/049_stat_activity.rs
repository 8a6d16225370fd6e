//! pg_stat_activity on both nodes (`engine::backend_status`).
//!
//! Monitoring and poolers read pg_stat_activity to see who is connected
//! and what each session is doing. This test checks that every client
//! session has a row with PostgreSQL's state names — `active` for the
//! session reading the view, `idle in transaction` and `idle in
//! transaction (aborted)` for a session between statements of a block,
//! `idle` after it — its last statement's text, user, database,
//! application_name and client address, on the primary and on a hot
//! standby, and that a session's row goes when it disconnects.
//!
//! * `sessions_show_their_state_and_query`

use tap_tests::Node;

#[test]
fn sessions_show_their_state_and_query() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (a int)");
    let standby = Node::standby_of(&primary, "standby");
    for node in [&primary, &standby] {
        let other = node.background_session();
        other.query_safe("SET application_name = 'watched'");
        other.query_safe("BEGIN");
        other.query_safe("SELECT count(*) FROM t");
        let row = |n: &Node| {
            n.safe_sql(
                "SELECT state, query, usename, datname, client_addr, wait_event \
                 FROM pg_stat_activity WHERE application_name = 'watched'",
            )
        };
        assert_eq!(
            row(node),
            "idle in transaction|SELECT count(*) FROM t|postgres|postgres|127.0.0.1|ClientRead",
            "{}: a session inside a block",
            node.name()
        );
        let _ = other.query("SELECT 1/0");
        assert!(
            row(node).starts_with("idle in transaction (aborted)|SELECT 1/0|"),
            "{}: a failed block: {}",
            node.name(),
            row(node)
        );
        other.query_safe("ROLLBACK");
        assert!(
            row(node).starts_with("idle|ROLLBACK|"),
            "{}: after the block: {}",
            node.name(),
            row(node)
        );
        // The session reading the view sees itself running.
        assert_eq!(
            node.safe_sql(
                "SELECT state, backend_type FROM pg_stat_activity WHERE pid = pg_backend_pid()"
            ),
            "active|client backend",
            "{}: the reading session",
            node.name()
        );
        drop(other);
        assert!(
            node.poll_query_until(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'watched'",
                "0"
            ),
            "{}: a closed session's row goes",
            node.name()
        );
    }
}
