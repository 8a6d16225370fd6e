//! Privileges across replication, restarts and crashes (`sql::aclchk`,
//! `engine::acl`): a GRANT replays on the standby, where the grantee
//! reads and others get 42501; the lists survive a restart; a GRANT
//! whose transaction a crash cut short is gone after start-up; a role
//! without REPLICATION cannot start a walsender.
//!
//! * `grants_replay_survive_restarts_and_crashes`
//! * `replication_needs_the_replication_attribute`

use tap_tests::psql::run_psql;
use tap_tests::Node;

const ACL: &str = "SELECT relacl FROM pg_class WHERE relname = 'pt'";

/// `sql` run as `role` (SET ROLE in the same session): (status, stdout,
/// stderr).
fn as_role(node: &Node, role: &str, sql: &str) -> (i32, String, String) {
    node.psql(&format!("SET ROLE {role};\n{sql}"))
}

#[test]
fn grants_replay_survive_restarts_and_crashes() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");
    primary.safe_sql(
        "CREATE ROLE pa LOGIN; CREATE ROLE pb LOGIN; \
         CREATE TABLE pt (a int, b int); INSERT INTO pt VALUES (1, 2); \
         GRANT SELECT ON pt TO pa; GRANT SELECT (a) ON pt TO pb",
    );
    primary.wait_for_replay(&standby);
    // 1. The standby checks the replayed lists: pa reads all, pb only a.
    for node in [&primary, &standby] {
        let (status, out, err) = as_role(node, "pa", "SELECT * FROM pt");
        assert_eq!((status, out.as_str()), (0, "1|2"), "{}: {err}", node.name());
        let (status, out, err) = as_role(node, "pb", "SELECT a FROM pt");
        assert_eq!((status, out.as_str()), (0, "1"), "{}: {err}", node.name());
        let (status, _, err) = as_role(node, "pb", "SELECT b FROM pt");
        assert_ne!(status, 0, "{}", node.name());
        assert!(
            err.contains("permission denied for table pt"),
            "{}: {err}",
            node.name()
        );
    }
    let committed = primary.safe_sql(ACL);
    assert_eq!(committed, "{postgres=arwdDxt/postgres,pa=r/postgres}");
    // 2. An uncommitted GRANT: invisible to others, the standby included.
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("GRANT ALL ON pt TO pb");
    s.query_safe("REVOKE SELECT ON pt FROM pa");
    primary.safe_sql("CREATE TABLE other (a int)");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(node.safe_sql(ACL), committed, "{}", node.name());
        let (status, _, err) = as_role(node, "pb", "SELECT * FROM pt");
        assert_ne!(status, 0, "{}: uncommitted GRANT not in force", node.name());
        assert!(
            err.contains("42501") || err.contains("permission denied"),
            "{err}"
        );
    }
    // 3. kill -9 mid-transaction: start-up puts the committed list back.
    primary.kill9();
    drop(s);
    primary.start();
    assert_eq!(primary.safe_sql(ACL), committed, "after the crash");
    // 4. Committed changes survive a clean restart of both nodes.
    primary.safe_sql("REVOKE SELECT ON pt FROM pa; ALTER TABLE pt OWNER TO pb");
    primary.wait_for_replay(&standby);
    primary.restart();
    standby.restart();
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql(
                "SELECT pg_get_userbyid(relowner), relacl FROM pg_class WHERE relname = 'pt'"
            ),
            "pb|{pb=arwdDxt/pb}",
            "{}",
            node.name()
        );
        let (status, _, _) = as_role(node, "pa", "SELECT * FROM pt");
        assert_ne!(status, 0, "{}: revoked", node.name());
        let (status, out, err) = as_role(node, "pb", "SELECT * FROM pt");
        assert_eq!(
            (status, out.as_str()),
            (0, "1|2"),
            "{}: owner: {err}",
            node.name()
        );
    }
}

#[test]
fn replication_needs_the_replication_attribute() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE ROLE plain LOGIN; CREATE ROLE repl LOGIN REPLICATION");
    let try_as = |user: &str| {
        let conn = primary
            .connstr()
            .replace("user=postgres", &format!("user={user}"))
            + " replication=database";
        let args: Vec<String> = ["-XAt", "-c", "IDENTIFY_SYSTEM", "-d", conn.as_str()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        run_psql(&args, "", None)
    };
    let out = try_as("plain");
    assert_ne!(out.status, 0);
    assert!(
        out.stderr
            .contains("must be superuser or replication role to start walsender"),
        "{}",
        out.stderr
    );
    let out = try_as("repl");
    assert_eq!(out.status, 0, "{}", out.stderr);
    // The ordinary session goes on.
    assert_eq!(primary.safe_sql("SELECT 1"), "1");
}
