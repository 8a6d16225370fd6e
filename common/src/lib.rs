//! # common — what both roles of a hotpair node run
//!
//! (Essay to be written as the crate fills in; see docs/architecture/.)

pub mod checkpointer;
pub mod node;
pub mod postmaster;
pub mod redo;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod testutil;
pub mod xlog;
