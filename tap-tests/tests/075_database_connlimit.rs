//! A database's CONNECTION LIMIT (`ALTER DATABASE postgres CONNECTION
//! LIMIT n`, `pg_database.datconnlimit`): sessions past it get FATAL 53300
//! `too many connections for database "postgres"`, superusers still get
//! in (they count, as in PostgreSQL, but are never refused), only the
//! owner may change it, and the limit survives a restart (a crash too)
//! and reaches a standby, which enforces it as well.
//!
//! The failures this guards against: a limit that is shown but not
//! enforced, one lost at restart or never replayed (a standby that admits
//! what its primary refuses), and one that locks out the administrator.
//!
//! Every session counts, so the test works through one superuser session
//! per node and waits until it is alone before counting.

use tap_tests::{wait_until, Node, Session};

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

/// Waits until `su` is the only session in database postgres.
fn wait_alone(su: &Session) {
    wait_until("the other sessions end", || {
        su.query(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = 'postgres' AND pid <> pg_backend_pid()",
        )
        .is_ok_and(|n| n == "0")
    });
}

fn limit(su: &Session) -> String {
    su.query_safe("SELECT datconnlimit FROM pg_database WHERE datname = 'postgres'")
}

const TOO_MANY: (&str, &str) = ("53300", "too many connections for database \"postgres\"");

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
    let su = Session::connect("superuser", &primary.connstr());

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

    // 2. Set, shown, enforced for others, not for superusers. The limit
    //    is 2: this superuser session and one more.
    assert_eq!(limit(&su), "-1", "no limit at first");
    su.query_safe("ALTER DATABASE postgres WITH CONNECTION LIMIT 2");
    assert_eq!(limit(&su), "2");
    wait_alone(&su);
    let first = Session::connect("first", &conn(&primary, "dl_user"));
    let (code, msg) = refused(&primary, "dl_user");
    assert_eq!(
        (code.as_str(), msg.as_str()),
        TOO_MANY,
        "a third session refused"
    );
    let su2 = Session::connect("superuser 2", &primary.connstr());
    assert_eq!(su2.query_safe("SELECT 1"), "1", "superusers are exempt");
    drop(su2);
    drop(first);
    wait_alone(&su);
    let again = Session::connect("again", &conn(&primary, "dl_user"));
    drop(again);

    // 3. Replicated: the standby shows and enforces it.
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    let sus = Session::connect("standby superuser", &standby.connstr());
    assert_eq!(limit(&sus), "2", "the standby replayed the change");
    wait_alone(&sus);
    let on_standby = Session::connect("standby first", &conn(&standby, "dl_user"));
    let (code, msg) = refused(&standby, "dl_user");
    assert_eq!(
        (code.as_str(), msg.as_str()),
        TOO_MANY,
        "the standby enforces it"
    );
    drop(on_standby);
    let e = sus
        .query("ALTER DATABASE postgres CONNECTION LIMIT 5")
        .expect_err("read-only standby");
    assert_eq!(e.code(), "25006");

    // 4. Durable: after a clean restart and after a crash.
    drop(su);
    primary.restart();
    let su = Session::connect("superuser", &primary.connstr());
    assert_eq!(limit(&su), "2", "kept across a restart");
    su.query_safe("ALTER DATABASE postgres CONNECTION LIMIT 3");
    drop(su);
    primary.kill9();
    primary.start();
    let su = Session::connect("superuser", &primary.connstr());
    assert_eq!(limit(&su), "3", "kept across a crash");
    wait_alone(&su);
    let a = Session::connect("a", &conn(&primary, "dl_user"));
    let b = Session::connect("b", &conn(&primary, "dl_user"));
    let (code, msg) = refused(&primary, "dl_user");
    assert_eq!(
        (code.as_str(), msg.as_str()),
        TOO_MANY,
        "the fourth is refused"
    );
    drop(a);
    drop(b);

    // 5. -1 lifts it, on the standby too.
    su.query_safe("ALTER DATABASE postgres CONNECTION LIMIT -1");
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_eq!(limit(&sus), "-1");
    let sessions: Vec<Session> = (0..3)
        .map(|i| Session::connect(&format!("s{i}"), &conn(&standby, "dl_user")))
        .collect();
    assert_eq!(sessions.len(), 3, "no limit on the standby either");
}
