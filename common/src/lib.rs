//! # common — the node
//!
//! The top of the layer stack and the only crate that knows all of it
//! (docs/architecture/overview.md draws the stack). It assembles a node
//! and runs the parts that belong to the node as a whole rather than to
//! one layer:
//!
//! * [`node`] — [`node::Node`]: opens the engine's state from a data
//!   directory, runs start-up, owns the checkpointer and the parse cache,
//!   promotes, checkpoints, shuts down; it implements `sql::NodeServices`,
//!   what sessions need from above them (the engine answers storage's
//!   calls up itself: the prune hook and `HeapRedoHooks`);
//! * [`xlog`] — the control file and StartupXLOG (crash recovery);
//!   [`redo`] — `apply`, the table that hands each replayed record to its
//!   owner's redo routine (heap, FPI, relation files and the catalog here,
//!   transactions in `engine::xact_redo`);
//! * [`checkpointer`] — checkpoints and a standby's restartpoints;
//! * [`auth`] — client authentication: pg_hba.conf as loaded (and
//!   reloaded), the roles it checks, the bootstrap superuser;
//! * [`postmaster`] — the server crate's loop over this node's SQL
//!   sessions, and the primary's whole serve loop (the `primary` binary and
//!   a promoted standby's restart run it);
//! * [`walsender`], [`basebackup`], [`standby_log`] — what a node that takes
//!   writes serves to standbys: streaming, base backups, running-xacts
//!   records. A promoted standby runs them too, which is why they live here
//!   and not in the `primary` binary's crate.
//!
//! Invariants:
//! 1. A node is built in one pass by [`node::Node::open`]: engine state,
//!    then start-up (replay and the WAL writer on a primary), index
//!    rebuild, prepared transactions, then the background checkpointer.
//!    Nothing is served before it returns.
//! 2. The role changes once (standby → primary) in
//!    [`node::Node::finish_recovery`], after the end-of-recovery
//!    checkpoint.
//! 3. Redo applies a record to a page only if the page LSN is older than
//!    the record's.
//!
//! Next: the binaries (`primary`, `standby`), and `tap-tests` for how a
//! node is driven from outside.

pub mod auth;
pub mod basebackup;
pub mod checkpointer;
pub mod checksums;
pub mod node;
pub mod old_snapshot_tick;
pub mod postmaster;
pub mod redo;
pub mod standby_log;
#[cfg(test)]
mod tests;
pub mod walsender;
pub mod xlog;
