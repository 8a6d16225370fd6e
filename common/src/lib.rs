//! # common — what both roles of a hotpair node run
//!
//! (Essay to be written as the crate fills in; see docs/architecture/.)

pub mod checkpointer;
pub mod database;
pub mod redo;
pub mod replication;
pub mod server;
pub mod sql;
pub mod standby_conflict;
#[cfg(test)]
mod testutil;
pub mod twophase;
pub mod xact;
pub mod xlog;
