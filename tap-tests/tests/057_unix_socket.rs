//! Unix-domain sockets (`unix_socket_directories`, `server::stream`,
//! `postmaster::unix_listener`): clients connect through
//! `DIR/.s.PGSQL.PORT` as they do to PostgreSQL — psql without `-h` when
//! the directory is the default `/var/run/postgresql` — and pg_hba.conf's
//! `local` lines decide, `peer` comparing the OS user with the role.
//!
//! * `clients_connect_through_the_socket`
//! * `connections_are_logged`: `log_connections` / `log_disconnections`
//!   write PostgreSQL's lines for TCP and Unix-socket sessions.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use tap_tests::{Node, Session};

const HBA: &str = "\
local   all          sock_rejected                reject
local   all          sock_peer                    peer
local   all          all                          trust
host    all          all         127.0.0.1/32     trust
host    replication  all         127.0.0.1/32     trust
";

fn socket_conn(node: &Node, dir: &str, user: &str) -> String {
    format!(
        "host={dir} port={} user={user} dbname=postgres",
        node.port()
    )
}

#[test]
fn clients_connect_through_the_socket() {
    let primary = Node::new("primary");
    primary.init(true);
    let dir = primary.base_dir().display().to_string();
    primary.append_conf(&format!(
        "unix_socket_directories = '{dir}'\nunix_socket_permissions = 0770"
    ));
    std::fs::write(primary.data_dir().join("pg_hba.conf"), HBA).expect("write pg_hba.conf");
    primary.start();
    let socket = primary
        .base_dir()
        .join(format!(".s.PGSQL.{}", primary.port()));
    assert!(primary.log_contains(&format!(
        "listening on Unix socket \"{}\"",
        socket.display()
    )));
    let mode = std::fs::metadata(&socket)
        .expect("socket file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o770, "unix_socket_permissions");

    // 1. A session through the socket: no client address, as PostgreSQL.
    let s = Session::connect("socket", &socket_conn(&primary, &dir, "postgres"));
    assert_eq!(
        s.query_safe(
            "SELECT inet_client_addr() IS NULL, client_addr IS NULL, client_port \
             FROM pg_stat_activity WHERE pid = pg_backend_pid()"
        ),
        "t|t|-1"
    );
    s.query_safe("CREATE TABLE via_socket (x int); INSERT INTO via_socket VALUES (1)");
    assert_eq!(primary.safe_sql("SELECT count(*) FROM via_socket"), "1");

    // 2. `local` lines: reject, and peer against the OS user.
    primary.safe_sql("CREATE ROLE sock_rejected LOGIN; CREATE ROLE sock_peer LOGIN");
    let e = Session::try_connect("rejected", &socket_conn(&primary, &dir, "sock_rejected"))
        .err()
        .expect("rejected");
    assert_eq!(e.code(), "28000");
    assert_eq!(
        e.message,
        "pg_hba.conf rejects connection for host \"[local]\", user \"sock_rejected\", database \"postgres\", no encryption"
    );
    let e = Session::try_connect("peer", &socket_conn(&primary, &dir, "sock_peer"))
        .err()
        .expect("the OS user is not sock_peer");
    assert_eq!(
        (e.code(), e.message.as_str()),
        ("28000", "Peer authentication failed for user \"sock_peer\"")
    );

    // 3. psql through the socket directory.
    let out = Command::new("psql")
        .args([
            "-X",
            "-A",
            "-t",
            "-h",
            &dir,
            "-p",
            &primary.port().to_string(),
        ])
        .args(["-U", "postgres", "-d", "postgres", "-c", "SELECT 40 + 2"])
        .output()
        .expect("run psql");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42", "{out:?}");

    // 4. After kill -9 the socket file is left behind; the next start
    //    replaces it.
    drop(s);
    primary.kill9();
    assert!(socket.exists(), "a crashed server leaves its socket file");
    primary.start();
    let s = Session::connect("socket again", &socket_conn(&primary, &dir, "postgres"));
    assert_eq!(s.query_safe("SELECT x FROM via_socket"), "1");

    // 5. A clean stop removes it.
    drop(s);
    primary.stop("fast");
    assert!(!socket.exists(), "a clean stop removes the socket file");
}

#[test]
fn connections_are_logged() {
    let node = Node::new("logged");
    node.init(false);
    let dir = node.base_dir().display().to_string();
    node.append_conf("log_connections = on\nlog_disconnections = on");
    node.start();
    let from = node.log_position();
    let s = Session::connect(
        "tcp",
        &format!("{} application_name=tapapp", node.connstr()),
    );
    assert_eq!(s.query_safe("SELECT 1"), "1");
    drop(s);
    let s = Session::connect("unix", &socket_conn(&node, &dir, "postgres"));
    drop(s);
    for pattern in [
        "connection received: host=127.0.0.1 port=",
        "connection authorized: user=postgres database=postgres application_name=tapapp",
        "disconnection: session time: 0:",
        "connection received: host=[local]",
        "user=postgres database=postgres host=[local]",
    ] {
        node.wait_for_log(pattern, from);
    }
}
