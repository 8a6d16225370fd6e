//! SQL: parse (sqlparser + keyword pre-dispatch), bind, plan, execute.
//! OWNERS: `types`, `value`, `numeric`, `datetime`, `expr`, `functions`,
//! `rowcodec`, `keycodec` — SQL-values helper (sqlv);
//! `parser`, `catalog`, `planner`, `executor`, `ddl`, `copy`, `utility`,
//! `session` — SQL-statements helper (sqlx).

pub mod catalog;
pub mod copy;
pub mod ddl;
pub mod executor;
pub mod expr;
pub mod functions;
pub mod keycodec;
pub mod parser;
pub mod planner;
pub mod rowcodec;
pub mod session;
#[cfg(test)]
pub(crate) mod tests;
pub mod utility;
