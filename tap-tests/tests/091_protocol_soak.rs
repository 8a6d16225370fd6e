//! The protocol soak of issue 21 item 7, short form: a primary and hot
//! standby under mutated protocol traffic from 8 connections at a time for
//! 20 seconds while a ledger of commits runs; then both serve, the standby
//! has caught up, and the ledger and its checksum are equal on both (see
//! `tap_tests::soak`; the `soak` binary runs the long form).
//! `HOTPAIR_SOAK_SEED` replays a run's mutations.

use std::time::Duration;

#[test]
fn mutated_protocol_traffic_leaves_both_nodes_serving_and_equal() {
    let seed = std::env::var("HOTPAIR_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    let r = tap_tests::soak::run(tap_tests::soak::SoakOptions {
        duration: Duration::from_secs(20),
        threads: 8,
        seed,
    });
    eprintln!("# soak seed {seed}: {r:?}");
    assert!(r.conversations > 0 && r.ledger_commits > 0, "{r:?}");
    assert!(
        r.statements_completed > 0 && r.errors_read > 0,
        "the traffic reached statements and errors alike: {r:?}"
    );
}
