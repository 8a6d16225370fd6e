//! A bad network between primary and standby (issue 21 item 5): the
//! standby streams, through its replication slot, across a
//! [`FaultProxy`] that delays, throttles, resets, closes and finally
//! black-holes the link. After each fault the client-side ledger of
//! acknowledged commits is whole on the primary and, once the standby has
//! caught up, on the standby, and the two tables' checksums are equal.
//!
//! 1. TCP keepalives on both ends: the server's `tcp_keepalives_*` are on
//!    the walsender's socket and shown by SHOW (0 on a Unix socket, as
//!    PostgreSQL); `keepalives_*` in `primary_conninfo` are on the
//!    walreceiver's socket (read from /proc/net/tcp: a keepalive timer due
//!    within the configured idle time, not the kernel's two hours).
//! 2. A 150 ms delay each way and a 64 kB/s pipe: streaming goes on, no
//!    reconnect, the standby catches up.
//! 3. A reset (RST) and a close (FIN) mid-stream: the standby says it lost
//!    the stream, reconnects by itself and resumes where it was.
//! 4. A black hole while the primary writes past `max_slot_wal_keep_size`:
//!    the slot is invalidated (`lost`) instead of WAL filling the disk, and
//!    when the path is back the standby says the WAL it needs is gone.

use std::process::Command;

use tap_tests::netproxy::{FaultProxy, Mode};
use tap_tests::{wait_until, Node};

/// The acknowledged commits: ids the primary answered COMMIT for.
struct Ledger {
    next: i64,
    acked: Vec<i64>,
}

impl Ledger {
    /// `n` single-row commits with `bytes` of payload each.
    fn commit(&mut self, primary: &Node, n: usize, bytes: usize) {
        for _ in 0..n {
            let id = self.next;
            self.next += 1;
            primary.safe_sql(&format!(
                "INSERT INTO ledger VALUES ({id}, repeat(md5('{id}'), {}))",
                bytes.div_ceil(32)
            ));
            self.acked.push(id);
        }
    }

    /// Every acknowledged id is on `node`, nothing else.
    fn check(&self, node: &Node, what: &str) {
        let want: i64 = self.acked.iter().sum();
        assert_eq!(
            node.safe_sql("SELECT count(*), coalesce(sum(id), 0) FROM ledger"),
            format!("{}|{want}", self.acked.len()),
            "{what}: the ledger on {}",
            node.name()
        );
    }
}

const CHECKSUM: &str = "SELECT md5(string_agg(id::text || ':' || v, ',' ORDER BY id)) FROM ledger";

/// The standby has replayed everything and equals the primary.
fn caught_up_and_equal(primary: &Node, standby: &Node, ledger: &Ledger, what: &str) {
    primary.wait_for_replay(standby);
    ledger.check(primary, what);
    ledger.check(standby, what);
    assert_eq!(
        standby.safe_sql(CHECKSUM),
        primary.safe_sql(CHECKSUM),
        "{what}: table checksums"
    );
}

/// (timer kind, ticks until it fires) of each established IPv4 socket
/// from local port `local` to remote port `remote` (either 0: any), from
/// /proc/net/tcp. Kind 2 is the keepalive timer; ticks are USER_HZ.
fn tcp_timers(local: u16, remote: u16) -> Vec<(u32, u64)> {
    let text = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let port = |addr: &str| {
        addr.rsplit(':')
            .next()
            .and_then(|p| u16::from_str_radix(p, 16).ok())
    };
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (lp, rp) = (port(f.get(1)?)?, port(f.get(2)?)?);
            if *f.get(3)? != "01" || (local != 0 && lp != local) || (remote != 0 && rp != remote) {
                return None;
            }
            let (tr, when) = f.get(5)?.split_once(':')?;
            Some((
                u32::from_str_radix(tr, 16).ok()?,
                u64::from_str_radix(when, 16).ok()?,
            ))
        })
        .collect()
}

/// Waits until a socket matching the ports has its keepalive timer armed
/// to fire within `idle_s` seconds.
fn wait_keepalive_armed(what: &str, local: u16, remote: u16, idle_s: u64) {
    wait_until(what, || {
        tcp_timers(local, remote)
            .iter()
            .any(|&(tr, when)| tr == 2 && when <= idle_s * 100)
    });
}

#[test]
fn replication_survives_a_bad_network() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf(
        "wal_sender_timeout = 3s\n\
         wal_segment_size = 1MB\nmax_wal_size = 4MB\n\
         tcp_keepalives_idle = 7\ntcp_keepalives_interval = 3\ntcp_keepalives_count = 4",
    );
    primary.start();
    primary.safe_sql("CREATE TABLE ledger (id bigint PRIMARY KEY, v text)");
    primary.safe_sql("CREATE TABLE filler (a int, b text)");
    primary.create_physical_slot("rep1");

    let proxy = FaultProxy::start(primary.port());
    let standby = Node::new("standby");
    standby.init_from_backup_through(
        &primary,
        Some("rep1"),
        &format!(
            "port={} keepalives_idle=5 keepalives_interval=2 keepalives_count=3",
            proxy.port()
        ),
    );
    standby.start();
    standby.append_conf("wal_receiver_timeout = 3s");
    standby.safe_sql("SELECT pg_reload_conf()");
    wait_until("wal_receiver_timeout reloaded", || {
        standby.sql("SHOW wal_receiver_timeout").ok().as_deref() == Some("3s")
    });
    let mut ledger = Ledger {
        next: 1,
        acked: Vec::new(),
    };
    ledger.commit(&primary, 20, 100);
    caught_up_and_equal(&primary, &standby, &ledger, "a plain link");

    // 1. Keepalives. SHOW reads the socket, as PostgreSQL's show hooks.
    assert_eq!(primary.safe_sql("SHOW tcp_keepalives_idle"), "7");
    assert_eq!(primary.safe_sql("SHOW tcp_keepalives_count"), "4");
    assert_eq!(
        primary.safe_sql("SET tcp_keepalives_idle = 30; SHOW tcp_keepalives_idle"),
        "30",
        "SET reaches the socket"
    );
    assert_eq!(
        primary.safe_sql(
            "SET tcp_keepalives_idle = 30; RESET tcp_keepalives_idle; SHOW tcp_keepalives_idle"
        ),
        "7",
        "RESET puts the server's value back"
    );
    let e = primary
        .sql("SET tcp_keepalives_idle = -1")
        .expect_err("out of range");
    assert!(
        e.to_string()
            .contains("-1 s is outside the valid range for parameter \"tcp_keepalives_idle\" (0 .. 2147483647)"),
        "{e}"
    );
    let unix = Command::new("psql")
        .args(["-XAt", "-h"])
        .arg(primary.base_dir())
        .args([
            "-p",
            &primary.port().to_string(),
            "-U",
            "postgres",
            "-d",
            "postgres",
        ])
        .args(["-c", "SHOW tcp_keepalives_idle"])
        .output()
        .expect("run psql");
    assert_eq!(
        String::from_utf8_lossy(&unix.stdout).trim(),
        "0",
        "no keepalives on a Unix socket: {}",
        String::from_utf8_lossy(&unix.stderr)
    );
    // The walsender's socket (accepted from the proxy) and the
    // walreceiver's (connected to the proxy).
    wait_keepalive_armed("the walsender's keepalive timer", primary.port(), 0, 7);
    wait_keepalive_armed("the walreceiver's keepalive timer", 0, proxy.port(), 5);

    // 2. A long path and a thin pipe: streaming goes on.
    let connections = proxy.accepted();
    proxy.set_mode(Mode::Delay(std::time::Duration::from_millis(150)));
    ledger.commit(&primary, 20, 100);
    caught_up_and_equal(&primary, &standby, &ledger, "a 150 ms delay");
    proxy.set_mode(Mode::Throttle(64 * 1024));
    ledger.commit(&primary, 1, 10);
    primary
        .safe_sql("INSERT INTO filler SELECT g, repeat('x', 400) FROM generate_series(1, 1500) g");
    ledger.commit(&primary, 5, 2000);
    caught_up_and_equal(&primary, &standby, &ledger, "a 64 kB/s pipe");
    assert_eq!(
        proxy.accepted(),
        connections,
        "delay and throttling need no reconnect"
    );
    proxy.set_mode(Mode::Pass);

    // 3. The connection reset, then closed, mid-stream.
    for (fault, end) in [("reset", true), ("close", false)] {
        let at = standby.log_position();
        let before = proxy.accepted();
        if end {
            proxy.reset_all();
        } else {
            proxy.close_all();
        }
        ledger.commit(&primary, 10, 100);
        wait_until("the standby says it lost the stream", || {
            let log = standby.log_since(at);
            log.contains("could not receive data from WAL stream")
                || log.contains("replication terminated by primary server")
        });
        wait_until("the standby reconnected", || proxy.accepted() > before);
        caught_up_and_equal(&primary, &standby, &ledger, fault);
    }
    assert_eq!(
        standby.safe_sql("SELECT status FROM pg_stat_wal_receiver"),
        "streaming"
    );

    // 4. A dead path while the primary writes past the slot's limit.
    primary.safe_sql("ALTER SYSTEM SET max_slot_wal_keep_size = '2MB'");
    primary.safe_sql("SELECT pg_reload_conf()");
    proxy.set_mode(Mode::BlackHole);
    let at = primary.log_position();
    ledger.commit(&primary, 5, 100);
    for _ in 0..5 {
        primary.safe_sql(
            "INSERT INTO filler SELECT g, repeat('x', 500) FROM generate_series(1, 1500) g; DELETE FROM filler",
        );
        primary.safe_sql("CHECKPOINT");
    }
    primary.wait_for_log("invalidating slot \"rep1\" because its restart_lsn", at);
    assert_eq!(
        primary.safe_sql("SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'rep1'"),
        "lost"
    );
    let segments = std::fs::read_dir(primary.data_dir().join("pg_wal"))
        .expect("pg_wal")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().len() == 24)
        .count();
    assert!(
        segments <= 12,
        "the lost slot holds no WAL: {segments} segments of 1 MB in pg_wal"
    );
    ledger.check(&primary, "after the slot was lost");
    let at = standby.log_position();
    proxy.set_mode(Mode::Pass);
    standby.wait_for_log("has already been removed", at);
    standby.stop("fast");
    primary.stop("fast");
}
