//! Comments on indexes, schemas and roles across restarts, crashes and
//! replication (sql.md, "COMMENT ON"; `engine::comment`, `sql::comment`).
//!
//! Such a comment is an entry of the catalog's comment map, changed by a
//! WAL-logged `SetComment` that carries the setting transaction's xid and
//! the committed text before it. This test checks that the comments
//! survive a restart of the primary and replay on the standby, and that a
//! COMMENT whose transaction a crash cut short leaves the old comment —
//! on the primary after start-up and on the standby, which saw the
//! uncommitted change in the WAL.
//!
//! * `comments_replay_and_survive_a_restart`
//! * `uncommitted_comment_is_undone_after_a_crash`

use tap_tests::Node;

const COMMENTS: &str = "SELECT obj_description('cm_i'::regclass, 'pg_class'), \
     obj_description('cm_s'::regnamespace, 'pg_namespace'), \
     (SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = 'cm_r')";

fn pair() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE cm_t (a int); CREATE INDEX cm_i ON cm_t (a); \
         CREATE SCHEMA cm_s; CREATE ROLE cm_r; \
         COMMENT ON INDEX cm_i IS 'the index'; COMMENT ON SCHEMA cm_s IS 'the schema'; \
         COMMENT ON ROLE cm_r IS 'the role'",
    );
    let standby = Node::standby_of(&primary, "standby");
    (primary, standby)
}

#[test]
fn comments_replay_and_survive_a_restart() {
    let (primary, standby) = pair();
    // 1. A change after the base backup reaches the standby through WAL.
    primary.safe_sql("COMMENT ON INDEX cm_i IS 'index, changed'");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql(COMMENTS),
            "index, changed|the schema|the role",
            "{}: comments",
            node.name()
        );
    }
    // 2. The catalog file keeps them over a restart of either node.
    primary.restart();
    standby.restart();
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql(COMMENTS),
            "index, changed|the schema|the role",
            "{}: comments after a restart",
            node.name()
        );
    }
    // 3. DROP takes the comment with it, on both nodes.
    primary.safe_sql("DROP INDEX cm_i");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql(
                "SELECT count(*) FROM pg_description WHERE description = 'index, changed'"
            ),
            "0",
            "{}: dropped index's comment gone",
            node.name()
        );
    }
}

#[test]
fn uncommitted_comment_is_undone_after_a_crash() {
    let (primary, standby) = pair();
    // 1. A COMMENT in an open transaction; its WAL reaches the standby.
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("COMMENT ON INDEX cm_i IS 'uncommitted'");
    s.query_safe("COMMENT ON SCHEMA cm_s IS NULL");
    s.query_safe("COMMENT ON ROLE cm_r IS 'uncommitted'");
    primary.safe_sql("CREATE TABLE other (a int)");
    primary.wait_for_replay(&standby);
    // 2. Others see the committed comments meanwhile, the standby too.
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql(COMMENTS),
            "the index|the schema|the role",
            "{}: uncommitted comments invisible",
            node.name()
        );
    }
    // 3. kill -9: start-up puts the old comments back, WAL-logged.
    primary.kill9();
    drop(s);
    primary.start();
    assert_eq!(
        primary.safe_sql(COMMENTS),
        "the index|the schema|the role",
        "old comments after the crash"
    );
    primary.safe_sql("COMMENT ON SCHEMA cm_s IS 'after the crash'");
    primary.wait_for_replay(&standby);
    assert_eq!(
        standby.safe_sql(COMMENTS),
        "the index|after the crash|the role",
        "standby follows"
    );
    primary.restart();
    assert_eq!(
        primary.safe_sql(COMMENTS),
        "the index|after the crash|the role",
        "after a clean restart"
    );
}
