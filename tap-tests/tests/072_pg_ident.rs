//! User name maps (`pg_ident.conf`, `ident_file`, `server::ident`): a
//! `peer` line with `map=NAME` lets the OS user at the other end of the
//! Unix socket in as another role when a line of the map says so — by
//! name, or by a regular expression whose capture `\1` fills in the role.
//! The file is reloaded with pg_hba.conf (a faulty one keeps the old
//! maps), shown by `pg_ident_file_mappings` to superusers only, written
//! at initialisation as initdb does, and copied to a standby by the base
//! backup.
//!
//! The failures this guards against: a map that lets in a role it does
//! not name, a broken file that silently drops every map (locking out
//! whoever depended on one) or half-applies, and a mapping file readable
//! by anyone.

use std::process::Command;

use tap_tests::{Node, Session};

fn socket_conn(node: &Node, user: &str) -> String {
    format!(
        "host={} port={} user={user} dbname=postgres",
        node.base_dir().display(),
        node.port()
    )
}

/// The OS user this test runs as (the peer the server sees).
fn os_user() -> String {
    let out = Command::new("id").arg("-un").output().expect("run id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn peer_connections_through_user_name_maps() {
    let me = os_user();
    let primary = Node::new("primary");
    primary.init(true);
    let dir = primary.base_dir().display().to_string();
    primary.append_conf(&format!("unix_socket_directories = '{dir}'"));
    primary.start();

    // 1. A new cluster has initdb's pg_ident.conf: comments, no maps.
    let ident_path = primary.data_dir().join("pg_ident.conf");
    let initial = std::fs::read_to_string(&ident_path).expect("pg_ident.conf written at init");
    assert!(
        initial.starts_with("# PostgreSQL User Name Maps\n"),
        "initdb's header"
    );
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM pg_ident_file_mappings"),
        "0",
        "no maps in the initial file"
    );

    // 2. peer lines with map=m1: by name and by regular expression.
    primary.safe_sql(
        "CREATE ROLE ident_mapped LOGIN; CREATE ROLE ident_other LOGIN; \
         CREATE ROLE \"{me}_rx\" LOGIN"
            .replace("{me}", &me)
            .as_str(),
    );
    let hba = "\
local   all          ident_mapped                 peer map=m1
local   all          ident_other                  peer map=m1
local   all          all                          peer map=m1
host    all          all         127.0.0.1/32     trust
host    replication  all         127.0.0.1/32     trust
";
    std::fs::write(primary.data_dir().join("pg_hba.conf"), hba).expect("pg_hba.conf");
    let maps = format!(
        "{initial}m1              {me}                    ident_mapped\n\
         m1              \"/^(.*)$\"               \\1_rx\n"
    );
    std::fs::write(&ident_path, &maps).expect("pg_ident.conf");
    primary.safe_sql("SELECT pg_reload_conf()");
    let rx_role = format!("{me}_rx");
    // The reload is asynchronous, and the old file trusted every local
    // connection: wait until a role the map does not name is refused.
    let mut reloaded = false;
    for _ in 0..100 {
        if Session::try_connect("other", &socket_conn(&primary, "ident_other")).is_err() {
            reloaded = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(reloaded, "the new pg_hba.conf / pg_ident.conf took effect");
    let s = Session::try_connect("mapped", &socket_conn(&primary, "ident_mapped"))
        .expect("the OS user mapped to ident_mapped connects");
    assert_eq!(
        s.query_safe("SELECT current_user, session_user"),
        "ident_mapped|ident_mapped",
        "mapped by name: the session is the role asked for"
    );
    let s = Session::try_connect("rx", &socket_conn(&primary, &rx_role))
        .expect("mapped by the regular expression with \\1");
    assert_eq!(
        s.query_safe("SELECT current_user"),
        rx_role,
        "regex map: \\1 filled in"
    );

    // 3. A role the map does not name: PostgreSQL's FATAL, the reason in
    //    the log only.
    let e = Session::try_connect("other", &socket_conn(&primary, "ident_other"))
        .err()
        .expect("no line maps the OS user to ident_other");
    assert_eq!(
        (e.code(), e.message.as_str()),
        (
            "28000",
            "Peer authentication failed for user \"ident_other\""
        ),
        "unmapped role refused"
    );
    assert!(
        primary.log_contains(&format!(
            "no match in usermap \"m1\" for user \"ident_other\" authenticated as \"{me}\""
        )),
        "the log says which map had no match"
    );

    // 4. pg_ident_file_mappings: every line for a superuser, nothing for
    //    others (PostgreSQL revokes it from PUBLIC).
    assert_eq!(
        primary.safe_sql(
            "SELECT line_number, map_name, sys_name, pg_username, error IS NULL \
             FROM pg_ident_file_mappings ORDER BY 1"
        ),
        format!("43|m1|{me}|ident_mapped|t\n44|m1|/^(.*)$|\\1_rx|t"),
        "pg_ident_file_mappings"
    );
    let mapped = Session::connect("mapped2", &socket_conn(&primary, "ident_mapped"));
    let e = mapped.query_err("SELECT * FROM pg_ident_file_mappings");
    assert_eq!(
        (e.code(), e.message.as_str()),
        ("42501", "permission denied for view pg_ident_file_mappings"),
        "non-superusers may not read the maps"
    );
    let e = mapped.query_err("SELECT * FROM pg_hba_file_rules");
    assert_eq!(
        e.message, "permission denied for view pg_hba_file_rules",
        "nor the rules"
    );

    // 5. A faulty file keeps the old maps, and the view shows the error.
    let broken = format!("{maps}m2 onlytwo\n");
    std::fs::write(&ident_path, broken).expect("pg_ident.conf");
    let offset = primary.log_position();
    primary.safe_sql("SELECT pg_reload_conf()");
    primary.wait_for_log("pg_ident.conf was not reloaded", offset);
    assert!(
        primary.log_contains_after(
            &format!(
                "missing entry in file \"{}\" at end of line 45",
                ident_path.display()
            ),
            offset
        ),
        "the faulty line is logged"
    );
    assert_eq!(
        primary.safe_sql(
            "SELECT line_number, error FROM pg_ident_file_mappings WHERE error IS NOT NULL"
        ),
        "45|missing entry at end of line",
        "the view shows the faulty line"
    );
    assert_eq!(
        primary.safe_sql(
            "SELECT line_number, map_name, pg_username FROM pg_ident_file_mappings \
             WHERE error IS NULL ORDER BY 1"
        ),
        "43|m1|ident_mapped\n44|m1|\\1_rx",
        "the other lines are still shown"
    );
    Session::try_connect("still", &socket_conn(&primary, "ident_mapped"))
        .expect("old maps still in force");

    // 6. A good file without the name line: ident_mapped is refused now.
    std::fs::write(&ident_path, format!("{initial}m1 /^(.*)$ \\1_rx\n")).expect("pg_ident.conf");
    primary.safe_sql("SELECT pg_reload_conf()");
    let mut refused = false;
    for _ in 0..100 {
        if Session::try_connect("gone", &socket_conn(&primary, "ident_mapped")).is_err() {
            refused = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(refused, "a reloaded map no longer admits ident_mapped");

    // 7. map= only on methods that authenticate a name.
    std::fs::write(
        primary.data_dir().join("pg_hba.conf"),
        format!("{hba}host all all 127.0.0.1/32 trust map=m1\n"),
    )
    .expect("pg_hba.conf");
    assert_eq!(
        primary.safe_sql("SELECT error FROM pg_hba_file_rules WHERE error IS NOT NULL"),
        "authentication option \"map\" is only valid for authentication methods ident, peer, gssapi, sspi, and cert",
        "map= on a trust line"
    );
    std::fs::write(primary.data_dir().join("pg_hba.conf"), hba).expect("pg_hba.conf");

    // 8. The base backup carries pg_ident.conf to a standby.
    let standby = Node::new("standby");
    standby.init_from_backup(&primary, "backup", true);
    standby.start();
    assert_eq!(
        std::fs::read_to_string(standby.data_dir().join("pg_ident.conf"))
            .expect("standby's pg_ident.conf"),
        std::fs::read_to_string(&ident_path).expect("primary's pg_ident.conf"),
        "the standby has the primary's maps"
    );
}
