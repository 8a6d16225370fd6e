//! Small shared helpers, after `PostgreSQL::Test::Utils`: the default
//! timeout, a condition poller, free TCP ports.
//!
//! Free ports are found by binding `127.0.0.1:0` (the kernel picks an unused
//! port) and remembered in a process-wide set so two nodes of one test
//! process never get the same port even if a server has not bound it yet.
//! The kernel hands out ephemeral ports round-robin, so a port just released
//! by another test process is not returned again soon.

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Interval between polls of a condition. Short: it is a latency bound for
/// the test, not a wait for anything to happen.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// How long any wait may take before the harness gives up:
/// `PG_TEST_TIMEOUT_DEFAULT` seconds, 180 by default (as PostgreSQL's
/// `$PostgreSQL::Test::Utils::timeout_default`).
pub fn timeout_default() -> Duration {
    let secs = std::env::var("PG_TEST_TIMEOUT_DEFAULT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(180);
    Duration::from_secs(secs)
}

/// Polls `condition` until it returns true; panics after
/// [`timeout_default`] with `what` (a description of the awaited state).
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout_default();
    loop {
        if condition() {
            return;
        }
        if Instant::now() >= deadline {
            panic!(
                "timed out after {:?} waiting until {what}",
                timeout_default()
            );
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// A TCP port on 127.0.0.1 nothing listens on, not handed out before by this
/// process — or, with `HOTPAIR_TAP_PORTS=5501,5502`, the next port of that
/// list in turn (a machine where only those ports may be used; run one
/// test at a time, with no more nodes alive at once than ports listed).
pub fn free_port() -> u16 {
    static NEXT: Mutex<usize> = Mutex::new(0);
    if let Some(list) = std::env::var_os("HOTPAIR_TAP_PORTS") {
        let ports: Vec<u16> = list
            .to_string_lossy()
            .split(',')
            .filter_map(|p| p.trim().parse().ok())
            .collect();
        if !ports.is_empty() {
            let mut next = NEXT.lock().unwrap_or_else(|e| e.into_inner());
            let port = ports[*next % ports.len()];
            *next += 1;
            return port;
        }
    }
    static TAKEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
    let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    let taken = taken.get_or_insert_with(HashSet::new);
    for _ in 0..1000 {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("could not bind 127.0.0.1:0");
        let port = listener
            .local_addr()
            .expect("local_addr of a bound socket")
            .port();
        if taken.insert(port) {
            return port;
        }
    }
    panic!("could not find a free port");
}

/// The last `n` lines of `text`, for failure messages.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_distinct() {
        let a = free_port();
        let b = free_port();
        assert_ne!(a, b, "two free ports differ");
    }

    #[test]
    fn tail_keeps_last_lines() {
        assert_eq!(tail("a\nb\nc", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}

/// A small deterministic generator (xorshift64*) for randomised tests: a
/// failure is replayed from its seed.
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed` (any value; 0 is made odd).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// An index in `0..n` (0 when n is 0).
    pub fn pick(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

/// A randomised test's seed: the environment variable `var` when set (to
/// replay a run), else the clock. Callers print it.
pub fn seed_from_env(var: &str) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        })
}
