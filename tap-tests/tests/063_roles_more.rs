//! Session-level role features beyond GRANT / REVOKE: what must hold for
//! the session that is not the caller's.
//!
//! * `terminate_backend`: `pg_terminate_backend()` ends another session
//!   with FATAL 57P01 — idle or running a statement, on the primary and on
//!   the standby — under pg_signal_backend's permission rules; an unknown
//!   pid is a WARNING and false, a negative timeout 22023, and a timeout
//!   waits until the session is gone.
//!
//! * `stat_activity_visibility`: pg_stat_activity shows other roles'
//!   sessions as `<insufficient privilege>` unless pg_read_all_stats /
//!   pg_monitor; superuser-only settings need pg_read_all_settings.
//!
//! The failure guarded against: a terminated session that keeps serving
//! its client (the terminate reached a flag nobody checks while the
//! session waits on its socket), or a role that may end sessions it has
//! no rights over.

use tap_tests::session::Session;
use tap_tests::Node;

/// A session of `node` logged in as `user`.
fn connect_as(node: &Node, user: &str) -> Session {
    let connstr = node
        .connstr()
        .replace("user=postgres", &format!("user={user}"));
    Session::connect(node.name(), &connstr)
}

/// Waits until `s`'s server side is gone; panics showing the node's
/// sessions if it stays.
fn wait_closed(node: &Node, s: &Session, pid: &str) {
    tap_tests::wait_until(&format!("session {pid} of {} closes", node.name()), || {
        s.is_closed()
            || node.safe_sql(&format!(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}"
            )) == "0"
    });
}

#[test]
fn terminate_backend() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE ROLE tb_a LOGIN; CREATE ROLE tb_b LOGIN; CREATE ROLE tb_sig LOGIN; \
         GRANT pg_signal_backend TO tb_sig",
    );
    let standby = Node::standby_of(&primary, "standby");
    primary.wait_for_replay(&standby);

    for node in [&primary, &standby] {
        // 1. An idle session: terminated, and its next query fails.
        let victim = connect_as(node, "tb_a");
        let pid = victim.query_safe("SELECT pg_backend_pid()");
        assert_eq!(
            node.safe_sql(&format!("SELECT pg_terminate_backend({pid})")),
            "t",
            "{}: terminate idle session",
            node.name()
        );
        wait_closed(node, &victim, &pid);
        let e = victim.query_err("SELECT 1");
        assert!(
            e.code() == "57P01" || victim.is_closed(),
            "{}: terminated session refuses queries: {e}",
            node.name()
        );

        // 2. A running statement: ended with FATAL 57P01, not 57014.
        let victim = connect_as(node, "tb_a");
        let pid = victim.query_safe("SELECT pg_backend_pid()");
        let sleeping = victim.send("SELECT pg_sleep(60)");
        assert!(
            node.poll_query_until(
                &format!("SELECT state FROM pg_stat_activity WHERE pid = {pid}"),
                "active"
            ),
            "{}: sleep started",
            node.name()
        );
        assert_eq!(
            node.safe_sql(&format!("SELECT pg_terminate_backend({pid}, 10000)")),
            "t",
            "{}: terminate with timeout waits for the end",
            node.name()
        );
        let e = sleeping.wait().expect_err("terminated statement fails");
        assert_eq!(e.code(), "57P01", "{}: FATAL 57P01: {e}", node.name());
        assert!(
            e.to_string()
                .contains("terminating connection due to administrator command"),
            "{}: message: {e}",
            node.name()
        );

        // 3. Permissions: another role's session needs pg_signal_backend;
        // a superuser's needs a superuser.
        let victim = connect_as(node, "tb_a");
        let pid = victim.query_safe("SELECT pg_backend_pid()");
        let other = connect_as(node, "tb_b");
        let e = other.query_err(&format!("SELECT pg_terminate_backend({pid})"));
        assert_eq!(e.code(), "42501", "{}: tb_b may not: {e}", node.name());
        assert!(
            e.to_string().contains(
                "must be a member of the role whose process is being terminated or member of pg_signal_backend"
            ),
            "{}: {e}",
            node.name()
        );
        let sup = Session::connect(node.name(), &node.connstr());
        let sup_pid = sup.query_safe("SELECT pg_backend_pid()");
        let sig = connect_as(node, "tb_sig");
        let e = sig.query_err(&format!("SELECT pg_terminate_backend({sup_pid})"));
        assert!(
            e.to_string()
                .contains("must be a superuser to terminate superuser process"),
            "{}: superuser target: {e}",
            node.name()
        );
        assert_eq!(
            sig.query_safe(&format!("SELECT pg_terminate_backend({pid})")),
            "t",
            "{}: pg_signal_backend member terminates",
            node.name()
        );
        wait_closed(node, &victim, &pid);
        assert_eq!(
            sup.query_safe("SELECT 1"),
            "1",
            "{}: others untouched",
            node.name()
        );

        // 4. Not a backend: false (with a WARNING); a negative timeout: 22023.
        assert_eq!(
            node.safe_sql("SELECT pg_terminate_backend(1)"),
            "f",
            "{}: unknown pid",
            node.name()
        );
        node.expect_error(
            &format!("SELECT pg_terminate_backend({sup_pid}, -1)"),
            "22023",
        );
    }
}

#[test]
fn stat_activity_visibility() {
    let primary = Node::new("primary");
    primary.init(false);
    primary.start();
    primary.safe_sql(
        "CREATE ROLE sa_a LOGIN; CREATE ROLE sa_stats LOGIN; GRANT pg_read_all_stats TO sa_stats",
    );
    let sup = Session::connect("primary", &primary.connstr());
    let sup_pid = sup.query_safe("SELECT pg_backend_pid()");
    sup.query_safe("SELECT 'marker'");
    let query = |s: &Session| {
        s.query_safe(&format!(
            "SELECT query, state IS NULL, backend_start IS NULL FROM pg_stat_activity WHERE pid = {sup_pid}"
        ))
    };
    // 1. Another role's session: only who and where.
    let a = connect_as(&primary, "sa_a");
    assert_eq!(
        query(&a),
        "<insufficient privilege>|t|t",
        "other user's query hidden"
    );
    assert_eq!(
        a.query_safe("SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid()"),
        "SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid()",
        "own session shown"
    );
    // 2. pg_read_all_stats sees everything.
    let stats = connect_as(&primary, "sa_stats");
    assert_eq!(
        query(&stats),
        "SELECT 'marker'|f|f",
        "pg_read_all_stats sees the query"
    );
}
