//! # standby (library part) — a hot standby's moving parts
//!
//! ```text
//!   primary ──(replication connection)──▶ walreceiver ──write_raw+flush──▶ DIR/pg_wal
//!                                             ▲   │ r (write/flush/apply)            │
//!                                             │   ▼                                  ▼
//!                                          replay_lsn ◀── startup (redo thread: WalReader,
//!                                                          read limit = flushed LSN)
//!                                                          └─▶ clog, procarray (KnownAssignedXids,
//!                                                              completion counter), heap
//! ```
//!
//! * [`conninfo`] — `primary_conninfo` parsing (`host=… port=… application_name=…`,
//!   `sslmode` and its files) and the connection to the primary (TLS as
//!   `sslmode` asks, through `protocol::tls`).
//! * [`basebackup`] — the client of `BASE_BACKUP`: an empty data directory
//!   becomes a copy of the primary's.
//! * [`walreceiver`] — streams WAL into `pg_wal`, replies with positions,
//!   reconnects with backoff.
//! * [`startup`] — continuous redo, KnownAssignedXids, consistency.
//! * [`promote`] — ending recovery: the standby becomes a primary.
//! * [`rewind`] — the `rewind` binary's work (pg_rewind): an old primary
//!   that diverged after a failover becomes a standby of the new one.

pub mod basebackup;
pub mod conninfo;
pub mod promote;
pub mod rewind;
pub mod startup;
pub mod walreceiver;
