//! Tests that need a whole node (start-up, WAL, the checkpointer) and
//! the SQL sessions over it.

pub(crate) mod sql;
mod twophase;
