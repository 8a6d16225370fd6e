//! # txn — transaction status and snapshots
//!
//! Everything that answers "which transactions are running, which
//! committed, and what may this statement see", with no knowledge of pages,
//! WAL or SQL (PostgreSQL's `access/transam` status half and
//! `storage/ipc/procarray.c`, `storage/lmgr`):
//!
//! * [`clog`] — two commit-status bits per xid, in pages cached from
//!   `pg_xact/`;
//! * [`subtrans`] — a subtransaction's parent, for snapshots whose subxid
//!   cache overflowed;
//! * [`procarray`] — proc slots, the dense `xids` / `status_flags` /
//!   `subxid_states` arrays, xid assignment, GetSnapshotData with its
//!   completion-counter cache, the pruning horizon; on a standby its
//!   KnownAssignedXids half;
//! * [`snapshot`] — the MVCC snapshot and its xid test;
//! * [`old_snapshot`] — `old_snapshot_threshold`: the time → xid map, the
//!   limited horizon, early-removal records and the `snapshot too old`
//!   test (its essay says why it has no false positives);
//! * [`lmgr`] — transaction-lock waits with deadlock detection, relation
//!   locks;
//! * [`predicate`] — SIRead predicate locks and rw-conflict tracking for
//!   SERIALIZABLE (SSI), held by the procarray.
//!
//! Invariants live with their owners: procarray's essay states the dense
//! array rules and the snapshot-cache rule (a cached snapshot is reused
//! only while `xact_completion_count` has not moved; every completion —
//! commit, abort, COMMIT/ROLLBACK PREPARED, on the primary or replayed on a
//! standby — bumps it under ProcArrayLock held exclusively).
//!
//! Lock order: ProcArrayLock → XidGenLock; clog page locks are leaves.
//!
//! Next: `storage`, whose tuple visibility reads these.

pub mod clog;
pub mod lmgr;
pub mod old_snapshot;
pub mod predicate;
pub mod procarray;
pub mod snapshot;
pub mod subtrans;
