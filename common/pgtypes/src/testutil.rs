//! Helpers for tests of the crates above (behind the `testutil` feature,
//! which only their dev-dependencies turn on).

use std::time::{Duration, Instant};

/// Waits (bounded, 20 s) for a condition another thread brings about;
/// panics naming `what` on timeout.
pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::yield_now();
    }
}
