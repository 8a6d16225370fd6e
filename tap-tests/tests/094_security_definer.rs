//! SECURITY DEFINER functions, SET clauses and the EXECUTE privilege, on
//! a primary and on a standby that replays them (`sql::fmgr`,
//! `sql::functioncmds`, `sql::aclchk`).
//!
//! The failures this guards against: a definer's function that runs with
//! the caller's rights (useless) or leaves the caller with the owner's
//! rights after it returns or fails (a privilege escalation); a SET
//! search_path clause that does not reach the function's statements; a
//! REVOKE EXECUTE that does not stop calls; and a standby that runs a
//! function as it was before an ALTER FUNCTION it replayed. The caller
//! logs in as its own role with a SCRAM password, as an application does.

use tap_tests::{Node, Session, SqlError};

/// The harness's own connections (user postgres) stay trusted; the test's
/// role logs in with its password.
const HBA: &str = "\
# TYPE  DATABASE     USER        ADDRESS         METHOD
host    all          postgres    127.0.0.1/32    trust
host    replication  postgres    127.0.0.1/32    trust
host    all          all         127.0.0.1/32    scram-sha-256
";

/// A session of `reader` (password `reader-pw`) on `node`.
fn reader(node: &Node) -> Session {
    let conn = format!(
        "host={} port={} user=reader password=reader-pw dbname=postgres",
        node.host(),
        node.port()
    );
    match Session::try_connect("reader", &conn) {
        Ok(s) => s,
        Err(e) => panic!("{}: reader could not log in: {e}", node.name()),
    }
}

/// The SQLSTATE and message of a statement that must fail.
fn fails(s: &Session, sql: &str, what: &str) -> SqlError {
    match s.query(sql) {
        Ok(out) => panic!("{what}: {sql} succeeded with {out:?}"),
        Err(e) => e,
    }
}

#[test]
fn security_definer_set_clauses_and_execute() {
    // 1. A primary with the test's pg_hba.conf, and a standby.
    let primary = Node::new("primary");
    primary.init(true);
    std::fs::write(primary.data_dir().join("pg_hba.conf"), HBA).expect("write pg_hba.conf");
    primary.start();
    let standby = Node::standby_of(&primary, "standby");

    // 2. A table in schema app owned by app_owner, which the reader may
    //    not read; definer and invoker functions owned by app_owner, each
    //    finding the table through its own search_path.
    primary.safe_sql(
        "CREATE USER reader PASSWORD 'reader-pw'; \
         CREATE ROLE app_owner NOLOGIN; \
         CREATE SCHEMA app; GRANT USAGE ON SCHEMA app TO app_owner; \
         CREATE TABLE app.secret (id int PRIMARY KEY, v text); \
         INSERT INTO app.secret VALUES (1, 'a'), (2, 'b'), (3, 'c'); \
         ALTER TABLE app.secret OWNER TO app_owner; \
         CREATE FUNCTION count_secret() RETURNS bigint LANGUAGE sql STABLE \
           SECURITY DEFINER SET search_path = app \
           AS 'SELECT count(*) FROM secret'; \
         CREATE FUNCTION count_secret_inv() RETURNS bigint LANGUAGE sql STABLE \
           SET search_path = app AS 'SELECT count(*) FROM secret'; \
         CREATE FUNCTION who() RETURNS text LANGUAGE plpgsql SECURITY DEFINER AS \
           $$BEGIN RETURN current_user || '/' || session_user; END$$; \
         CREATE FUNCTION fail_as_owner() RETURNS int LANGUAGE plpgsql SECURITY DEFINER AS \
           $$BEGIN RAISE EXCEPTION 'as %', current_user; END$$; \
         CREATE FUNCTION wm() RETURNS text LANGUAGE sql STABLE SET work_mem = '3MB' \
           AS $$SELECT current_setting('work_mem')$$; \
         ALTER FUNCTION count_secret() OWNER TO app_owner; \
         ALTER FUNCTION count_secret_inv() OWNER TO app_owner; \
         ALTER FUNCTION who() OWNER TO app_owner; \
         ALTER FUNCTION fail_as_owner() OWNER TO app_owner; \
         ALTER FUNCTION wm() OWNER TO app_owner",
    );
    primary.wait_for_replay(&standby);

    // 3. On both nodes the reader reads through the definer's function,
    //    whatever its own search_path, and is itself again afterwards,
    //    also after the function failed.
    for node in [&primary, &standby] {
        let name = node.name();
        let s = reader(node);
        let e = fails(&s, "SELECT * FROM app.secret", "reader reads the table");
        assert_eq!(e.code, "42501", "{name}: {e}");
        s.query_safe("SET search_path = public");
        assert_eq!(
            s.query_safe("SELECT count_secret()"),
            "3",
            "{name}: definer reads"
        );
        let e = fails(&s, "SELECT count_secret_inv()", "invoker reads");
        assert_eq!(
            e.code, "42501",
            "{name}: invoker runs with the reader's rights: {e}"
        );
        assert_eq!(
            s.query_safe("SELECT who()"),
            "app_owner/reader",
            "{name}: definer identity"
        );
        let e = fails(&s, "SELECT fail_as_owner()", "raises");
        assert_eq!(e.message, "as app_owner", "{name}");
        assert_eq!(
            s.query_safe("SELECT current_user, session_user, current_setting('search_path')"),
            "reader|reader|public",
            "{name}: the caller's identity and settings are back"
        );
        let e = fails(
            &s,
            "SELECT count(*) FROM app.secret",
            "reader after the calls",
        );
        assert_eq!(e.code, "42501", "{name}: no rights left behind: {e}");
        assert_eq!(
            s.query_safe("SELECT wm()"),
            "3MB",
            "{name}: SET clause in force"
        );
        assert_ne!(
            s.query_safe("SHOW work_mem"),
            "3MB",
            "{name}: and gone after"
        );
    }

    // 4. ALTER FUNCTION … SET / RESET on the primary: the standby runs the
    //    altered definition after replay.
    primary.safe_sql(
        "ALTER FUNCTION wm() SET work_mem = '7MB'; \
         ALTER FUNCTION count_secret() SET search_path = public",
    );
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        let name = node.name();
        let s = reader(node);
        assert_eq!(s.query_safe("SELECT wm()"), "7MB", "{name}: altered SET");
        let e = fails(&s, "SELECT count_secret()", "search_path without app");
        assert_eq!(e.code, "42P01", "{name}: {e}");
    }
    primary.safe_sql("ALTER FUNCTION count_secret() SET search_path = app");

    // 5. REVOKE EXECUTE … FROM PUBLIC stops the reader on both nodes; a
    //    GRANT to it lets it call again; the owner's list shows in proacl.
    primary.safe_sql("REVOKE EXECUTE ON FUNCTION count_secret() FROM PUBLIC");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        let name = node.name();
        let s = reader(node);
        let e = fails(&s, "SELECT count_secret()", "revoked");
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            ("42501", "permission denied for function count_secret"),
            "{name}"
        );
        assert_eq!(
            s.query_safe("SELECT has_function_privilege('count_secret()', 'EXECUTE')"),
            "f",
            "{name}"
        );
        assert_eq!(
            node.safe_sql("SELECT count_secret()"),
            "3",
            "{name}: superuser calls"
        );
    }
    primary.safe_sql("GRANT EXECUTE ON FUNCTION count_secret() TO reader");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        let name = node.name();
        assert_eq!(
            node.safe_sql("SELECT proacl FROM pg_proc WHERE proname = 'count_secret'"),
            "{app_owner=X/app_owner,reader=X/app_owner}",
            "{name}: proacl"
        );
        assert_eq!(
            reader(node).query_safe("SELECT count_secret()"),
            "3",
            "{name}: granted"
        );
    }

    // 6. The definitions survive a restart of both nodes.
    primary.restart();
    standby.restart();
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        let name = node.name();
        assert_eq!(
            node.safe_sql(
                "SELECT prosecdef, proconfig FROM pg_proc WHERE proname = 'count_secret'"
            ),
            "t|{search_path=app}",
            "{name}: after restart"
        );
        let s = reader(node);
        assert_eq!(s.query_safe("SELECT count_secret()"), "3", "{name}");
        assert_eq!(s.query_safe("SELECT wm()"), "7MB", "{name}");
    }
}
