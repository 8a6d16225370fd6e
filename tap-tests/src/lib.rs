//! # tap-tests — the node harness
//!
//! hotpair's end-to-end tests drive real server processes the way
//! PostgreSQL's `src/test/recovery/t/*.pl` drive them through
//! `PostgreSQL::Test::Cluster`. A test is a plain `#[test]` function that
//! reads top to bottom like the Perl it is modelled on:
//!
//! ```no_run
//! use tap_tests::Node;
//!
//! // 1. A primary with a table.
//! let primary = Node::new("primary");
//! primary.init(false);
//! primary.start();
//! primary.safe_sql("CREATE TABLE t (a int)");
//!
//! // 2. A long-lived session sees another session's commit in its next statement.
//! let reader = primary.background_session();
//! primary.safe_sql("INSERT INTO t VALUES (1)");
//! assert_eq!(reader.query_safe("SELECT a FROM t"), "1", "insert visible");
//! ```
//!
//! ## Pieces
//!
//! | module | PostgreSQL counterpart | what it gives |
//! |---|---|---|
//! | [`cluster`] | `PostgreSQL::Test::Cluster` | [`Node`]: data dir, port, `start` / `stop` / `restart` / `kill9`, `safe_sql`, `psql`, `pgbench`, `poll_query_until`, `log_contains` |
//! | [`session`] | `$node->background_psql` (native) | [`Session`]: a long-lived tokio-postgres connection, `query`, `send` (don't wait) + [`Pending`], `cancel` |
//! | [`psql`] | `IPC::Run::start(['psql', '-XA', '-f', '-'])` of 021_row_visibility.pl | [`PsqlSession`]: a real psql fed on stdin, `query_until(sql, pattern)` |
//! | [`raw`] | hand-built packets of `src/test/modules/libpq_pipeline` / protocol fuzzing | [`raw::RawConnection`]: bytes on a TCP socket, backend messages parsed |
//! | [`netproxy`] | (a network emulator between nodes) | [`netproxy::FaultProxy`]: a TCP proxy that delays, throttles, black-holes, resets or closes |
//! | [`soak`] | (a protocol fuzzer against live nodes) | [`soak::run`]: a primary and standby under mutated protocol traffic while a ledger commits, then checked serving and equal |
//! | [`differential`] | (SQLsmith-style fuzzers) | random schemas, data and queries for comparing hotpair with PostgreSQL 15 |
//! | [`regress`] | `pg_regress` | golden SQL files: schedule, `psql -X -a -q` runs, diffs, regeneration from PostgreSQL 15 |
//! | [`binaries`] | `$ENV{PATH}` of the build tree | locating (and building) the `primary` / `standby` binaries |
//! | [`utils`] | `PostgreSQL::Test::Utils` | `timeout_default`, `wait_until`, free ports |
//!
//! ## Rules the harness keeps
//!
//! * **Nothing waits for a fixed time.** Every wait polls a condition with a
//!   short interval, up to [`utils::timeout_default`] (180 s, or
//!   `PG_TEST_TIMEOUT_DEFAULT`), and on timeout panics showing what it saw
//!   (the log, the psql output, the last query result). A wait is not a test.
//! * **Nodes are real processes** of the built binaries. Before the first
//!   node starts, the harness runs `cargo build -p primary -p standby` once
//!   per test process into the same target directory as the test executable
//!   (a no-op when up to date), because `cargo test` does not rebuild other
//!   packages' binaries. `HOTPAIR_BIN_DIR=dir` skips the build and uses the
//!   binaries in `dir`.
//! * **Per-test directories** live under `<target>/tap-tmp/` (or
//!   `HOTPAIR_TAP_TMPDIR`): removed when the test passes, kept when it
//!   panics (or with `PG_TEST_NOCLEAN`), with the path and the server log's
//!   tail printed.
//! * **Teardown on drop**: a [`Node`] going out of scope kills its server;
//!   if the server log shows a Rust panic ("panicked at"), the drop fails the
//!   test, so a panicking connection task never goes unnoticed.
//! * **Reference mode**: with `HOTPAIR_TAP_POSTGRES_BINDIR=/usr/lib/postgresql/15/bin`
//!   every node is a real PostgreSQL server (initdb + postgres) instead of
//!   hotpair, so the tests' expectations can be checked against PostgreSQL
//!   itself (run as a non-root user). Tests skip hotpair-only checks when
//!   [`Node::is_hotpair`] is false. `HOTPAIR_TAP_PORTS=5501,5502` makes
//!   nodes take their ports from that list in turn (with
//!   `--test-threads=1`).
//!
//! ## Sync API over one runtime
//!
//! Tests are synchronous; native connections live on one process-wide
//! multi-threaded tokio runtime ([`runtime`]) that keeps driving every open
//! connection while the test thread waits on something else — which is what
//! lets one session block on a row lock while another commits. Calling the
//! sync helpers from inside an async context would nest runtimes; async test
//! code uses [`block_on`] around its body and the tokio-postgres client of a
//! [`Session`] directly.
//!
//! ## Replication
//!
//! `backup(name)`, `init_from_backup(&primary, name, has_streaming)`,
//! `lsn(mode)` and `wait_for_catchup(&standby, mode, lsn)` on [`Node`] set
//! up standby nodes with streaming replication and wait for them, as
//! Cluster.pm's methods of the same names do.

pub mod bench;
pub mod binaries;
pub mod cluster;
pub mod differential;
/// The `faultfs` power-cut journal and its undo, shared with the
/// LD_PRELOAD library by path (linking the library would interpose the
/// harness's own file calls).
#[path = "../../common/faultfs/src/journal.rs"]
pub mod faultfs_journal;
pub mod isolation;
pub mod netproxy;
pub mod psql;
pub mod raw;
pub mod regress;
pub mod session;
pub mod soak;
pub mod utils;

use std::future::Future;
use std::sync::OnceLock;

pub use cluster::{Node, StopMode};
pub use psql::{line, PsqlSession};
pub use session::{Pending, Session, SqlError};
pub use utils::{timeout_default, wait_until};

/// The process-wide runtime that drives every native connection.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("tap-tests-rt")
            .build()
            .expect("tap-tests: could not start the tokio runtime")
    })
}

/// Runs `fut` to completion on [`runtime`], from synchronous test code.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    runtime().block_on(fut)
}
