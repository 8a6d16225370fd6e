//! The `pair` binary: starts a primary and a hot standby in one directory,
//! both answer (the standby in recovery, showing what the primary wrote),
//! SIGINT stops both cleanly, and a second run starts again from the same
//! data.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use tap_tests::utils::{free_port, timeout_default, POLL_INTERVAL};
use tap_tests::{wait_until, Session};

/// A running `pair`; dropping it interrupts it and waits.
struct Pair {
    child: Child,
    out: PathBuf,
}

impl Pair {
    fn start(dir: &Path, pport: u16, sport: u16, run: u32) -> Pair {
        Pair::start_with(dir, pport, sport, run, &[])
    }

    fn start_with(dir: &Path, pport: u16, sport: u16, run: u32, extra: &[&str]) -> Pair {
        // pair runs the servers next to its own executable: build them.
        tap_tests::binaries::bin_dir();
        let out = dir.join(format!("pair-{run}.out"));
        let f = std::fs::File::create(&out).expect("pair output file");
        let child = Command::new(env!("CARGO_BIN_EXE_pair"))
            .arg("--dir")
            .arg(dir.join("data"))
            .args(["--primary-port", &pport.to_string()])
            .args(["--standby-port", &sport.to_string()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::from(f.try_clone().expect("clone")))
            .stderr(Stdio::from(f))
            .spawn()
            .expect("run pair");
        let mut p = Pair { child, out };
        let deadline = Instant::now() + timeout_default();
        loop {
            let text = p.output();
            if text.contains("Ctrl-C stops all") {
                assert!(text.contains(&format!("psql -h 127.0.0.1 -p {pport} -U postgres")));
                assert!(text.contains(&format!("psql -h 127.0.0.1 -p {sport} -U postgres")));
                return p;
            }
            if let Ok(Some(st)) = p.child.try_wait() {
                panic!("pair exited during start-up ({st}):\n{text}\n{}", logs(dir));
            }
            assert!(
                Instant::now() < deadline,
                "pair not ready:\n{text}\n{}",
                logs(dir)
            );
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    /// SIGINT, then the exit status (true: success).
    fn interrupt(&mut self) -> bool {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + timeout_default();
        loop {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.success();
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!("pair did not exit after SIGINT:\n{}", self.output());
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.interrupt();
        }
    }
}

fn logs(dir: &Path) -> String {
    let mut s = String::new();
    for l in [
        "primary.log",
        "standby.log",
        "standby_2.log",
        "standby_3.log",
    ] {
        let text = std::fs::read_to_string(dir.join("data").join(l)).unwrap_or_default();
        s.push_str(&format!("--- {l}\n{}\n", tap_tests::utils::tail(&text, 30)));
    }
    s
}

fn connstr(port: u16) -> String {
    format!("host=127.0.0.1 port={port} user=postgres dbname=postgres")
}

fn refuses_connections(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
}

#[test]
fn pair_starts_stops_and_restarts() {
    let root = tap_tests::binaries::target_dir().join("tap-tmp");
    std::fs::create_dir_all(&root).expect("tap-tmp");
    let tmp = tempfile::Builder::new()
        .prefix("pair_")
        .tempdir_in(&root)
        .expect("temp dir");
    let dir = tmp.path();
    let (pport, sport) = (free_port(), free_port());

    let mut pair = Pair::start(dir, pport, sport, 1);
    let p = Session::connect("primary", &connstr(pport));
    let s = Session::connect("standby", &connstr(sport));
    assert_eq!(p.query_safe("SELECT pg_is_in_recovery()"), "f");
    assert_eq!(s.query_safe("SELECT pg_is_in_recovery()"), "t");
    p.query_safe("CREATE TABLE kept (note text)");
    p.query_safe("INSERT INTO kept VALUES ('written in run 1')");
    wait_until("the row is visible on the standby", || {
        s.query("SELECT note FROM kept")
            .is_ok_and(|o| o == "written in run 1")
    });
    drop((p, s));
    assert!(pair.interrupt(), "pair exits 0:\n{}", pair.output());
    assert!(refuses_connections(pport) && refuses_connections(sport));
    let log = logs(dir);
    assert_eq!(
        log.matches("database system is shut down").count(),
        2,
        "both servers shut down cleanly:\n{log}"
    );
    drop(pair);

    // Second run: same directory, no new base backup, the row is there.
    let mut pair = Pair::start(dir, pport, sport, 2);
    let p = Session::connect("primary", &connstr(pport));
    let s = Session::connect("standby", &connstr(sport));
    assert_eq!(p.query_safe("SELECT note FROM kept"), "written in run 1");
    assert_eq!(s.query_safe("SELECT note FROM kept"), "written in run 1");
    p.query_safe("INSERT INTO kept VALUES ('written in run 2')");
    wait_until("the second row is visible on the standby", || {
        s.query("SELECT count(*) FROM kept").is_ok_and(|o| o == "2")
    });
    drop((p, s));
    assert!(pair.interrupt(), "pair exits 0:\n{}", pair.output());
    let standby_log =
        std::fs::read_to_string(dir.join("data").join("standby.log")).unwrap_or_default();
    assert_eq!(
        standby_log.matches("base backup completed").count(),
        1,
        "only the first run took a base backup"
    );
}

/// A base port with `n` consecutive free ports.
fn free_ports(n: u16) -> u16 {
    loop {
        let base = free_port();
        let all_free = (0..n).all(|i| {
            base.checked_add(i)
                .is_some_and(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok())
        });
        if all_free {
            return base;
        }
    }
}

/// `pair --standbys 3 --cascade --sync`: three standbys, the third
/// streaming from the first; the two attached to the primary are its
/// synchronous candidates (the first synchronous); a row written on the
/// primary reaches all three; everything stops cleanly.
#[test]
fn pair_with_three_standbys_one_cascading() {
    let root = tap_tests::binaries::target_dir().join("tap-tmp");
    std::fs::create_dir_all(&root).expect("tap-tmp");
    let tmp = tempfile::Builder::new()
        .prefix("pair3_")
        .tempdir_in(&root)
        .expect("temp dir");
    let dir = tmp.path();
    let pport = free_port();
    let sport = free_ports(3);
    let mut pair = Pair::start_with(
        dir,
        pport,
        sport,
        1,
        &["--standbys", "3", "--cascade", "--sync"],
    );
    let out = pair.output();
    for (name, port) in [("standby_2", sport + 1), ("standby_3", sport + 2)] {
        assert!(
            out.contains(&format!("{name}: psql -h 127.0.0.1 -p {port} -U postgres")),
            "{out}"
        );
    }
    assert!(out.contains("(cascading from standby)"), "{out}");
    let p = Session::connect("primary", &connstr(pport));
    let s1 = Session::connect("standby", &connstr(sport));
    let s3 = Session::connect("standby_3", &connstr(sport + 2));
    assert_eq!(
        p.query_safe("SELECT application_name, sync_state FROM pg_stat_replication ORDER BY 1"),
        "pair_standby|sync\npair_standby_2|potential"
    );
    assert_eq!(
        s1.query_safe("SELECT application_name FROM pg_stat_replication"),
        "pair_standby_3",
        "the third streams from the first"
    );
    p.query_safe("CREATE TABLE three (n int); INSERT INTO three VALUES (3)");
    wait_until("the row reaches the cascaded standby", || {
        s3.query("SELECT n FROM three").is_ok_and(|o| o == "3")
    });
    drop((p, s1, s3));
    assert!(pair.interrupt(), "pair exits 0:\n{}", pair.output());
    let log = logs(dir);
    assert_eq!(
        log.matches("database system is shut down").count(),
        4,
        "all four servers shut down cleanly:\n{log}"
    );
}
