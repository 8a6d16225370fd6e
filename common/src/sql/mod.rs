//! SQL: parse (sqlparser + keyword pre-dispatch), bind, plan, execute.

pub mod catalog;
pub mod copy;
pub mod ddl;
pub mod executor;
pub mod expr;
pub mod functions;
pub mod parser;
pub mod planner;
pub mod session;
#[cfg(test)]
pub(crate) mod tests;
pub mod utility;
