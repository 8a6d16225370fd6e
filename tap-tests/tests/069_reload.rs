//! Settings reloaded live (`Node::reload`, `pgtypes::config::Config::reload`):
//! SIGHUP and `pg_reload_conf()` re-read the configuration files, on a
//! primary and on a standby.
//!
//! * `reload_applies_sighup_settings` — a sighup setting takes effect at
//!   once with PostgreSQL's log line; a restart-only one keeps its value,
//!   is logged and shows `pending_restart`; sessions already connected
//!   take a new default unless they SET the setting; a file with an
//!   invalid value changes nothing and says why.
//! * `log_settings_reload` — `log_connections` and `log_min_messages`
//!   change for the next connection without a restart.
//! * `standby_reloads_its_settings` — a standby's
//!   `max_standby_streaming_delay` and `hot_standby_feedback` change live.

use std::io::Write;

use tap_tests::{Node, Session};

/// `pg_reload_conf()` on `node`, then waits for the reload's line after
/// `at` (the log offset taken before) and returns the new offset.
fn reload(node: &Node, at: u64, line: &str) -> u64 {
    assert_eq!(node.safe_sql("SELECT pg_reload_conf()"), "t");
    node.wait_for_log(line, at)
}

fn append(node: &Node, file: &str, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(node.data_dir().join(file))
        .expect("open configuration file");
    f.write_all(text.as_bytes()).expect("append");
}

#[test]
fn reload_applies_sighup_settings() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let old = Session::connect("old", &primary.connstr());
    let pinned = Session::connect("pinned", &primary.connstr());
    pinned.query_safe("SET work_mem = '1MB'");
    assert_eq!(old.query_safe("SHOW work_mem"), "4MB");

    // A user setting's server default, a sighup setting and a
    // restart-only one, in one reload.
    primary.safe_sql("ALTER SYSTEM SET work_mem = '8MB'");
    primary.safe_sql("ALTER SYSTEM SET wal_keep_size = '64MB'");
    primary.safe_sql("ALTER SYSTEM SET shared_buffers = '64MB'");
    let at = primary.log_position();
    reload(
        &primary,
        at,
        "parameter \"wal_keep_size\" changed to \"64MB\"",
    );
    primary.wait_for_log("parameter \"work_mem\" changed to \"8MB\"", at);
    primary.wait_for_log(
        "parameter \"shared_buffers\" cannot be changed without restarting the server",
        at,
    );
    assert_eq!(primary.safe_sql("SHOW wal_keep_size"), "64MB");
    assert_eq!(primary.safe_sql("SHOW shared_buffers"), "128MB");
    assert_eq!(
        primary.safe_sql(
            "SELECT name, context, pending_restart FROM pg_settings \
             WHERE name IN ('shared_buffers', 'wal_keep_size', 'work_mem') ORDER BY name"
        ),
        "shared_buffers|postmaster|t\nwal_keep_size|sighup|f\nwork_mem|user|f"
    );
    // The session that never SET work_mem follows the new default at its
    // next statement; the one that SET it keeps its value, and RESET
    // brings it the new default.
    assert_eq!(old.query_safe("SHOW work_mem"), "8MB");
    assert_eq!(pinned.query_safe("SHOW work_mem"), "1MB");
    pinned.query_safe("RESET work_mem");
    assert_eq!(pinned.query_safe("SHOW work_mem"), "8MB");
    // A sighup setting cannot be SET.
    primary.expect_error("SET wal_keep_size = '1MB'", "55P02");

    // Undoing the restart-only change clears pending_restart.
    primary.safe_sql("ALTER SYSTEM RESET shared_buffers");
    let at = primary.log_position();
    reload(
        &primary,
        at,
        "received SIGHUP, reloading configuration files",
    );
    assert!(primary.poll_query_until(
        "SELECT pending_restart FROM pg_settings WHERE name = 'shared_buffers'",
        "f"
    ));

    // An invalid value anywhere in the files: nothing changes.
    append(
        &primary,
        "hotpair.conf",
        "wal_keep_size = '128MB'\ncheckpoint_timeout = 'banana'\n",
    );
    let at = primary.log_position();
    reload(&primary, at, "contains errors; no changes were applied");
    primary.wait_for_log("invalid value for parameter \"checkpoint_timeout\"", at);
    assert_eq!(primary.safe_sql("SHOW wal_keep_size"), "64MB");
    assert_eq!(primary.safe_sql("SHOW checkpoint_timeout"), "5min");
    // The server goes on; a restart with the bad file would refuse.
    primary.safe_sql("SELECT 1");
}

#[test]
fn log_settings_reload() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let probe = |app: &str| {
        let s = Session::connect(
            app,
            &format!("{} application_name={app}", primary.connstr()),
        );
        s.query_safe("SELECT 1");
    };
    probe("before_reload");
    primary.safe_sql("ALTER SYSTEM SET log_connections = on");
    let at = primary.log_position();
    reload(
        &primary,
        at,
        "parameter \"log_connections\" changed to \"on\"",
    );
    probe("after_reload");
    primary.wait_for_log("application_name=after_reload", at);
    assert!(!primary.log_contains("application_name=before_reload"));

    // log_min_messages = warning hides LOG lines from the next
    // connection on; back to info, they show again.
    primary.safe_sql("ALTER SYSTEM SET log_min_messages = warning");
    let at = primary.log_position();
    reload(
        &primary,
        at,
        "parameter \"log_min_messages\" changed to \"warning\"",
    );
    probe("quiet");
    primary.safe_sql("ALTER SYSTEM SET log_min_messages = info");
    primary.safe_sql("SELECT pg_reload_conf()");
    assert!(primary.poll_query_until("SHOW log_min_messages", "info"));
    probe("loud");
    primary.wait_for_log("application_name=loud", at);
    assert!(
        !primary.log_since(at).contains("application_name=quiet"),
        "a LOG line was written under log_min_messages = warning"
    );
}

#[test]
fn standby_reloads_its_settings() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");
    assert_eq!(standby.safe_sql("SHOW max_standby_streaming_delay"), "30s");
    standby.safe_sql("ALTER SYSTEM SET max_standby_streaming_delay = '-1'");
    standby.safe_sql("ALTER SYSTEM SET hot_standby_feedback = on");
    let at = standby.log_position();
    reload(
        &standby,
        at,
        "parameter \"max_standby_streaming_delay\" changed to \"-1\"",
    );
    assert_eq!(standby.safe_sql("SHOW max_standby_streaming_delay"), "-1");
    // Feedback now reaches the primary: the xmin of a standby session's
    // snapshot shows in pg_stat_replication.
    let reader = Session::connect("reader", &standby.connstr());
    reader.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    reader.query_safe("SELECT count(*) FROM pg_class");
    assert!(primary.poll_query_until(
        "SELECT backend_xmin IS NOT NULL FROM pg_stat_replication",
        "t"
    ));
    // The walreceiver kept its connection (no setting it connects with
    // changed) and replay goes on.
    primary.safe_sql("CREATE TABLE after_reload (a int)");
    primary.safe_sql("INSERT INTO after_reload VALUES (1)");
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SELECT a FROM after_reload"), "1");
    reader.query_safe("COMMIT");
}
