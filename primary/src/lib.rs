//! # primary (library part) — what a primary runs besides SQL sessions
//!
//! * [`walsender`] — replication connections: `IDENTIFY_SYSTEM`, slots,
//!   `START_REPLICATION` streaming WAL to standbys.
//! * [`basebackup`] — `BASE_BACKUP`: an online copy of the data directory.
//! * [`postmaster`] — the primary's serve loop (also a promoted standby's
//!   restart).
//! * [`standby_log`] — the timer that logs running-xacts records for hot
//!   standbys.
//!
//! The `primary` binary (main.rs) wires them into the server; the standby
//! crate's tests use them to run a primary in-process.

pub mod basebackup;
pub mod postmaster;
pub mod standby_log;
pub mod walsender;
