//! Who may connect: roles, SCRAM-SHA-256 / md5 / password authentication
//! and pg_hba.conf, on a primary and on a standby that replays the roles.
//!
//! The failures this guards against: a server that lets anyone who can
//! reach the port in (or copy the database over a replication
//! connection), one whose messages tell an attacker which user names
//! exist, one that stores passwords instead of verifiers, a reload
//! that swaps in a broken pg_hba.conf and locks everyone out, and one
//! that a flood of wrong passwords slows for others or makes grow
//! (`wrong_password_flood_leaves_others_served`: 10,000 failed SCRAM
//! logins).

use std::process::Command;

use tap_tests::{wait_until, Node, Session, SqlError};

/// The test's pg_hba.conf: the harness's own connections (user postgres)
/// stay trusted; everyone else needs a password of the listed kind.
const HBA: &str = "\
# TYPE  DATABASE     USER        ADDRESS         METHOD
host    all          postgres    127.0.0.1/32    trust
host    replication  postgres    127.0.0.1/32    trust
host    all          rejected    127.0.0.1/32    reject
host    all          md5user     127.0.0.1/32    md5
host    all          pwuser      127.0.0.1/32    password
host    replication  all         127.0.0.1/32    scram-sha-256
host    all          all         127.0.0.1/32    scram-sha-256
";

fn conn(node: &Node, user: &str, password: &str) -> String {
    format!(
        "host={} port={} user={user} password={password} dbname=postgres",
        node.host(),
        node.port()
    )
}

/// Logs in with tokio-postgres and returns the session's current_user.
fn login(node: &Node, user: &str, password: &str) -> Result<String, SqlError> {
    let s = Session::try_connect(user, &conn(node, user, password))?;
    s.query("SELECT current_user")
}

/// psql with PGPASSWORD (libpq's SCRAM client): (exit status, stdout, stderr).
fn psql_login(
    node: &Node,
    user: &str,
    password: &str,
    extra: &str,
    sql: &str,
) -> (i32, String, String) {
    let out = Command::new("psql")
        .args(["-XAtq", "-w", "-d"])
        .arg(format!(
            "host={} port={} user={user} dbname=postgres {extra}",
            node.host(),
            node.port()
        ))
        .args(["-c", sql])
        .env("PGPASSWORD", password)
        .output()
        .expect("run psql");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

/// A login through psycopg 3 (Python): `Ok(session_user)`, `Err(the
/// error's text)`, or None when python3 has no psycopg (.ci/run
/// installs it).
fn psycopg_login(node: &Node, user: &str, password: &str) -> Option<Result<String, String>> {
    const SCRIPT: &str = r#"
import sys
try:
    import psycopg
except ImportError:
    sys.exit(3)
host, port, user, password = sys.argv[1:5]
try:
    with psycopg.connect(host=host, port=port, user=user, password=password,
                         dbname="postgres", sslmode="disable") as c:
        print(c.execute("SELECT session_user").fetchone()[0])
except psycopg.Error as e:
    # A failed connection carries libpq's text, not a SQLSTATE.
    print(str(e).replace("\n", " "))
    sys.exit(1)
"#;
    let out = Command::new("python3")
        .args([
            "-c",
            SCRIPT,
            node.host(),
            &node.port().to_string(),
            user,
            password,
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match out.status.code() {
        Some(0) => Some(Ok(text)),
        Some(3) => None,
        _ => Some(Err(format!(
            "{text} {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

fn write_hba(node: &Node, text: &str) {
    std::fs::write(node.data_dir().join("pg_hba.conf"), text).expect("write pg_hba.conf");
}

#[test]
fn roles_passwords_and_hba() {
    // 1. A primary with the test's pg_hba.conf (written before the first
    //    start, so the initdb-style default is not).
    let primary = Node::new("primary");
    primary.init(true);
    write_hba(&primary, HBA);
    primary.start();

    // 2. Roles with passwords: SCRAM by default, md5 when asked, a
    //    pre-hashed verifier kept as given.
    primary.safe_sql("CREATE USER alice PASSWORD 'alice-pw'");
    primary.safe_sql("SET password_encryption = 'md5'; CREATE USER md5user PASSWORD 'md5-pw'");
    primary.safe_sql("CREATE USER pwuser PASSWORD 'pw-pw'");
    primary.safe_sql("CREATE ROLE nologin_role PASSWORD 'x'");
    primary.safe_sql("CREATE USER rejected PASSWORD 'r'");
    let alice_verifier =
        primary.safe_sql("SELECT rolpassword FROM pg_authid WHERE rolname = 'alice'");
    assert!(
        alice_verifier.starts_with("SCRAM-SHA-256$4096:"),
        "SCRAM verifier stored: {alice_verifier}"
    );
    assert_ne!(
        alice_verifier, "alice-pw",
        "verifier never equals the password"
    );
    let md5 = primary.safe_sql("SELECT rolpassword FROM pg_authid WHERE rolname = 'md5user'");
    assert!(
        md5.starts_with("md5") && md5.len() == 35,
        "md5 verifier: {md5}"
    );
    primary.safe_sql(&format!("CREATE USER copy PASSWORD '{alice_verifier}'"));
    assert_eq!(
        primary.safe_sql("SELECT rolpassword FROM pg_authid WHERE rolname = 'copy'"),
        alice_verifier,
        "pre-hashed verifier kept as is"
    );
    assert_eq!(
        primary.safe_sql("SELECT DISTINCT rolpassword FROM pg_roles"),
        "********",
        "pg_roles hides verifiers"
    );
    let dup = primary.sql("CREATE ROLE alice").unwrap_err();
    assert_eq!(
        (dup.code.as_str(), dup.message.as_str()),
        ("42710", "role \"alice\" already exists")
    );
    let missing = primary.sql("DROP ROLE nobody").unwrap_err();
    assert_eq!(
        (missing.code.as_str(), missing.message.as_str()),
        ("42704", "role \"nobody\" does not exist")
    );

    // 3. SCRAM with tokio-postgres, psql (libpq) and psycopg.
    assert_eq!(
        login(&primary, "alice", "alice-pw").unwrap(),
        "alice",
        "scram login"
    );
    assert_eq!(
        login(&primary, "copy", "alice-pw").unwrap(),
        "copy",
        "copied verifier works"
    );
    let (status, out, err) = psql_login(&primary, "alice", "alice-pw", "", "SELECT session_user");
    assert_eq!(
        (status, out.as_str()),
        (0, "alice"),
        "psql scram login: {err}"
    );
    match psycopg_login(&primary, "alice", "alice-pw") {
        Some(r) => {
            assert_eq!(r, Ok("alice".to_string()), "psycopg scram login");
            let bad = psycopg_login(&primary, "alice", "wrong");
            assert!(
                matches!(&bad, Some(Err(e))
                    if e.contains("FATAL:  password authentication failed for user \"alice\"")),
                "psycopg: a wrong password is 28P01: {bad:?}"
            );
        }
        None => eprintln!(
            "038_auth: psycopg part skipped: python3 has no psycopg (.ci/run installs it)"
        ),
    }

    // 4. Wrong password and unknown user: the same 28P01 message.
    let e = login(&primary, "alice", "nope").unwrap_err();
    assert_eq!(e.code, "28P01");
    assert_eq!(
        e.message,
        "password authentication failed for user \"alice\""
    );
    let e = login(&primary, "ghost", "nope").unwrap_err();
    assert_eq!(e.code, "28P01", "unknown user looks like a wrong password");
    assert_eq!(
        e.message,
        "password authentication failed for user \"ghost\""
    );
    assert!(e.detail.is_none(), "no detail to the client");
    let (status, _, err) = psql_login(&primary, "alice", "nope", "", "SELECT 1");
    assert_eq!(status, 2);
    assert!(
        err.contains("FATAL:  password authentication failed for user \"alice\""),
        "psql: {err}"
    );
    assert!(
        primary.log_contains("Role \"ghost\" does not exist."),
        "the reason is in the server log"
    );

    // 5. md5 and password methods; NOLOGIN; reject.
    assert_eq!(
        login(&primary, "md5user", "md5-pw").unwrap(),
        "md5user",
        "md5 login"
    );
    assert_eq!(login(&primary, "md5user", "bad").unwrap_err().code, "28P01");
    assert_eq!(
        login(&primary, "pwuser", "pw-pw").unwrap(),
        "pwuser",
        "password login"
    );
    assert_eq!(login(&primary, "pwuser", "bad").unwrap_err().code, "28P01");
    let e = login(&primary, "nologin_role", "x").unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        ("28000", "role \"nologin_role\" is not permitted to log in")
    );
    let e = login(&primary, "rejected", "r").unwrap_err();
    assert_eq!(e.code, "28000");
    assert_eq!(
        e.message,
        "pg_hba.conf rejects connection for host \"127.0.0.1\", user \"rejected\", database \"postgres\", no encryption"
    );

    // 6. A role without REPLICATION cannot start replication.
    let (status, _, err) = psql_login(
        &primary,
        "alice",
        "alice-pw",
        "replication=true",
        "IDENTIFY_SYSTEM",
    );
    assert_eq!(status, 2);
    assert!(
        err.contains("must be superuser or replication role to start walsender"),
        "non-replication role refused: {err}"
    );

    // 7. Reload: a broken file keeps the old rules (and says which line);
    //    a good one takes effect, first match wins.
    let offset = primary.log_position();
    write_hba(&primary, &format!("{HBA}hots all all 127.0.0.1/32 trust\n"));
    assert_eq!(primary.safe_sql("SELECT pg_reload_conf()"), "t");
    primary.wait_for_log("pg_hba.conf was not reloaded", offset);
    assert!(primary.log_contains_after("invalid connection type \"hots\"", offset));
    assert_eq!(
        primary
            .safe_sql("SELECT line_number, error FROM pg_hba_file_rules WHERE error IS NOT NULL"),
        "9|invalid connection type \"hots\"",
        "pg_hba_file_rules shows the faulty line"
    );
    assert_eq!(
        login(&primary, "alice", "alice-pw").unwrap(),
        "alice",
        "old rules still in force"
    );

    write_hba(
        &primary,
        "host all postgres 127.0.0.1/32 trust\n\
         host all alice 127.0.0.1/32 reject\n\
         host all alice 127.0.0.1/32 trust\n",
    );
    primary.safe_sql("SELECT pg_reload_conf()");
    wait_until("the new pg_hba.conf rejects alice", || {
        login(&primary, "alice", "alice-pw").is_err_and(|e| e.code == "28000")
    });
    assert_eq!(
        primary.safe_sql("SELECT line_number || ' ' || auth_method FROM pg_hba_file_rules"),
        "1 trust\n2 reject\n3 trust"
    );
    let e = login(&primary, "md5user", "md5-pw").unwrap_err();
    assert_eq!(
        e.message,
        "no pg_hba.conf entry for host \"127.0.0.1\", user \"md5user\", database \"postgres\", no encryption"
    );
    write_hba(&primary, HBA);
    primary.safe_sql("SELECT pg_reload_conf()");
    wait_until("the test's pg_hba.conf is back", || {
        login(&primary, "alice", "alice-pw").is_ok()
    });

    // 8. A standby streaming as a REPLICATION role over SCRAM; a role
    //    created on the primary afterwards logs in on the standby with its
    //    password (pg_hba.conf came with the base backup).
    primary.safe_sql("CREATE ROLE replicator REPLICATION LOGIN PASSWORD 'rep-pw'");
    let standby = Node::new("standby");
    standby.init_from_backup_with_conninfo(&primary, "user=replicator password=rep-pw");
    standby.start();
    primary.safe_sql("CREATE USER bob PASSWORD 'bob-pw'");
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_eq!(
        login(&standby, "bob", "bob-pw").unwrap(),
        "bob",
        "replicated role logs in on the standby"
    );
    assert_eq!(login(&standby, "bob", "bad").unwrap_err().code, "28P01");
    let e = standby.sql("CREATE ROLE x").unwrap_err();
    assert_eq!(e.code, "25006", "no role changes on a standby");
}

/// CONNECTION LIMIT of a role and `superuser_reserved_connections`: the
/// sessions past either get FATAL 53300 with PostgreSQL's message, a
/// superuser still gets in, and a freed slot can be used again.
#[test]
fn connection_limits() {
    let node = Node::new("limits");
    node.init(false);
    node.append_conf("max_connections = 6\nsuperuser_reserved_connections = 3");
    node.start();
    node.safe_sql("CREATE ROLE lim1 LOGIN CONNECTION LIMIT 1; CREATE ROLE plain LOGIN");
    let first = Session::connect("lim1", &conn(&node, "lim1", ""));
    let e = Session::try_connect("lim1 again", &conn(&node, "lim1", ""))
        .err()
        .expect("over the role's limit");
    assert_eq!(
        (e.code(), e.message.as_str()),
        ("53300", "too many connections for role \"lim1\"")
    );
    drop(first);
    assert!(
        node.poll_query_until(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'lim1'",
            "0"
        ),
        "the first lim1 session ends"
    );
    let again = Session::connect("lim1 after", &conn(&node, "lim1", ""));
    // Six slots, three for superusers: this test's own sessions hold some,
    // so count how many more a plain role gets.
    let mut plain = Vec::new();
    let refused = loop {
        match Session::try_connect("plain", &conn(&node, "plain", "")) {
            Ok(s) => plain.push(s),
            Err(e) => break e,
        }
        assert!(plain.len() <= 6, "never refused");
    };
    assert_eq!(
        (refused.code(), refused.message.as_str()),
        (
            "53300",
            "remaining connection slots are reserved for non-replication superuser connections"
        )
    );
    let su = Session::connect("superuser", &conn(&node, "postgres", ""));
    assert_eq!(su.query_safe("SELECT current_user"), "postgres");
    drop(again);
    drop(plain);
    // `-c role=…` in the startup options gets SET ROLE's check.
    let e = Session::try_connect(
        "role option",
        &format!("{} options='-c role=postgres'", conn(&node, "lim1", "")),
    )
    .err()
    .expect("lim1 may not become postgres");
    assert_eq!(
        (e.code(), e.message.as_str()),
        ("42501", "permission denied to set role \"postgres\"")
    );
    let s = Session::connect(
        "superuser as lim1",
        &format!("{} options='-c role=lim1'", conn(&node, "postgres", "")),
    );
    assert_eq!(
        s.query_safe("SELECT current_user, session_user"),
        "lim1|postgres"
    );
}

#[test]
fn wrong_password_flood_leaves_others_served() {
    // 10,000 failed SCRAM logins from four threads while a session that
    // logged in before keeps working; the server's memory stays bounded.
    let primary = Node::new("primary");
    primary.init(true);
    write_hba(&primary, HBA);
    primary.start();
    // Few PBKDF2 rounds: the client's key derivation is the test's cost.
    primary.safe_sql("SET scram_iterations = 16; CREATE USER flood PASSWORD 'right'");
    let s = Session::try_connect("flood", &conn(&primary, "flood", "right")).expect("login");
    // Warm up allocator pools with a first round of failures.
    for _ in 0..200 {
        let e = login(&primary, "flood", "wrong").unwrap_err();
        assert_eq!(e.code, "28P01");
    }
    let before = primary.rss_kib();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..2_450 {
                    let e = login(&primary, "flood", "wrong").unwrap_err();
                    assert_eq!(e.code, "28P01", "{}", e.message);
                }
            });
        }
        // Meanwhile the logged-in session is served.
        for i in 0..50 {
            assert_eq!(s.query(&format!("SELECT {i}")).unwrap(), i.to_string());
        }
    });
    let after = primary.rss_kib();
    assert!(
        after < before + 64 * 1024,
        "memory grew from {before} KiB to {after} KiB over 10,000 failed logins"
    );
    assert_eq!(login(&primary, "flood", "right").unwrap(), "flood");
    assert_eq!(s.query("SELECT current_user").unwrap(), "flood");
}
