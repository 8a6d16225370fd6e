//! A database's CONNECTION LIMIT (`ALTER DATABASE postgres CONNECTION
//! LIMIT n`, `pg_database.datconnlimit`): sessions past it get FATAL 53300
//! `too many connections for database "postgres"`, superusers still get
//! in, only the owner may change it, and the limit survives a restart
//! (a crash too) and reaches a standby, which enforces it as well.
//!
//! The failures this guards against: a limit that is shown but not
//! enforced, one lost at restart or never replayed (a standby that admits
//! what its primary refuses), and one that locks out the administrator.

use tap_tests::{Node, Session};

fn conn(node: &Node, user: &str) -> String {
    format!(
        "host={} port={} user={user} dbname=postgres",
        node.host(),
        node.port()
    )
}

fn refused(node: &Node, user: &str) -> (String, String) {
    let e = Session::try_connect("over", &conn(node, user))
        .err()
        .expect("a session past the database's limit");
    (e.code().to_string(), e.message)
}

const TOO_MANY: (&str, &str) = (
    "53300",
    "too many connections for database \"postgres\"",
);

#[test]
fn database_connection_limit() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE ROLE dl_user LOGIN");
    primary.backup("backup");
    let standby = Node::new("standby");
    standby.init_from_backup(&primary, "backup", true);
    standby.start();

    // 1. Only the owner (or a superuser) may set it.
    let user = Session::connect("dl_user", &conn(&primary, "dl_user"));
    let e = user
        .query("ALTER DATABASE postgres CONNECTION LIMIT 1")
        .expect_err("dl_user does not own postgres");
    assert_eq!(
        (e.code(), e.message.as_str()),
        ("42501", "must be owner of database postgres"),
        "non-owner refused"
    );
    drop(user);
    assert!(
        primary.poll_query_until(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'dl_user'",
            "0"
        ),
        "dl_user's first session ends"
    );

    // 2. Set, shown, enforced for others, not for superusers.
    assert_eq!(
        primary.safe_sql("SELECT datconnlimit FROM pg_database WHERE datname = 'postgres'"),
        "-1",
        "no limit at first"
    );
    primary.safe_sql("ALTER DATABASE postgres WITH CONNECTION LIMIT 1");
    assert_eq!(
        primary.safe_sql("SELECT datconnlimit FROM pg_database WHERE datname = 'postgres'"),
        "1"
    );
    let first = Session::connect("first", &conn(&primary, "dl_user"));
    let (code, msg) = refused(&primary, "dl_user");
    assert_eq!((code.as_str(), msg.as_str()), TOO_MANY, "second session refused");
    let su = Session::connect("superuser", &primary.connstr());
    assert_eq!(su.query_safe("SELECT 1"), "1", "superusers are exempt");
    drop(su);
    drop(first);
    assert!(
        primary.poll_query_until(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'dl_user'",
            "0"
        ),
        "the first session ends"
    );
    let again = Session::connect("again", &conn(&primary, "dl_user"));
    drop(again);

    // 3. Replicated: the standby shows and enforces it.
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_eq!(
        standby.safe_sql("SELECT datconnlimit FROM pg_database WHERE datname = 'postgres'"),
        "1",
        "the standby replayed the change"
    );
    let on_standby = Session::connect("standby first", &conn(&standby, "dl_user"));
    let (code, msg) = refused(&standby, "dl_user");
    assert_eq!(
        (code.as_str(), msg.as_str()),
        TOO_MANY,
        "the standby enforces it"
    );
    drop(on_standby);
    let e = standby
        .sql("ALTER DATABASE postgres CONNECTION LIMIT 5")
        .expect_err("read-only standby");
    assert_eq!(e.code, "25006");

    // 4. Durable: after a clean restart and after a crash.
    primary.restart();
    assert_eq!(
        primary.safe_sql("SELECT datconnlimit FROM pg_database WHERE datname = 'postgres'"),
        "1",
        "kept across a restart"
    );
    primary.safe_sql("ALTER DATABASE postgres CONNECTION LIMIT 2");
    primary.kill9();
    primary.start();
    assert_eq!(
        primary.safe_sql("SELECT datconnlimit FROM pg_database WHERE datname = 'postgres'"),
        "2",
        "kept across a crash"
    );
    let a = Session::connect("a", &conn(&primary, "dl_user"));
    let b = Session::connect("b", &conn(&primary, "dl_user"));
    let (code, msg) = refused(&primary, "dl_user");
    assert_eq!((code.as_str(), msg.as_str()), TOO_MANY, "the third is refused");
    drop(a);
    drop(b);

    // 5. -1 lifts it.
    primary.safe_sql("ALTER DATABASE postgres CONNECTION LIMIT -1");
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    let sessions: Vec<Session> = (0..3)
        .map(|i| Session::connect(&format!("s{i}"), &conn(&standby, "dl_user")))
        .collect();
    assert_eq!(sessions.len(), 3, "no limit on the standby either");
}
