//! # pgtypes — the vocabulary every layer of hotpair shares
//!
//! The bottom crate: nothing in hotpair is below it, everything may use
//! it. It holds what PostgreSQL keeps in `src/include/c.h`,
//! `utils/adt` and `utils/misc`, the types a reader of the C source
//! expects:
//!
//! * [`ids`] — identifier newtypes (`TransactionId`, `Oid`, `BlockNumber`,
//!   `RelFileId`, `ItemPointer`, `ProcNumber`, `TimeLineId`, …),
//!   re-exported at the crate root; [`lsn`] — `Lsn`, printed and parsed as
//!   `pg_lsn`, and `AtomicLsn`, the one way positions are shared between
//!   threads;
//! * [`error`] — [`PgError`](error::PgError) with its SQLSTATE, severity,
//!   detail and hint, the one error type sessions send to clients;
//! * [`config`] — settings (GUCs) by PostgreSQL's names, with their
//!   defaults, units and parsers;
//! * SQL data: [`sqltype`] (types with PostgreSQL's OIDs and modifiers),
//!   [`value`] (the runtime datum and its casts, comparisons, text and
//!   binary I/O), [`numeric`], [`datetime`] (which is also the node's
//!   clock: `now_usecs`), [`interval`], [`array`] (one-dimensional arrays),
//!   [`timestamp`] (date_trunc / extract), [`formatting`] (to_char and
//!   friends), [`bytea`], [`json`] (json and jsonb: parser, canonical
//!   form, ordering), [`uuid`], [`inet`] (inet and cidr) and [`enumtype`]
//!   (enum labels);
//! * [`blocking`] — the one helper for calls that may block on a tokio
//!   worker, [`fileutil`] — fsync and atomic-rename helpers, and [`hash`]
//!   — the fast hash of short keys (the executor's hash tables, the
//!   session loop's statement names).
//!
//! Invariants: no global state, no I/O beyond [`fileutil`], no locks —
//! except [`enumtype`], the enum type cache the catalog publishes to (its
//! essay says why). A
//! type here never knows which node role, session or transaction uses it.
//!
//! Next: `wal` (records carry these ids), then `txn`.

pub mod array;
pub mod blocking;
pub mod bytea;
pub mod config;
pub mod datetime;
pub mod enumtype;
pub mod error;
pub mod fileutil;
pub mod formatting;
pub mod hash;
pub mod ids;
pub mod inet;
pub mod interval;
pub mod json;
pub mod lsn;
pub mod md5;
pub mod numeric;
pub mod sqltype;
pub mod ssl;
pub mod stripe;
pub mod syncrep_gram;
#[cfg(feature = "testutil")]
pub mod testutil;
pub mod timestamp;
pub mod txstatus;
pub mod uuid;
pub mod value;

pub use ids::*;
