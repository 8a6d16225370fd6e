//! SQL: parse (sqlparser + keyword pre-dispatch), bind, plan, execute.
//! OWNERS: `types`, `value`, `expr`, `functions` — SQL-values helper (Q1);
//! `parser`, `catalog`, `executor`, `session` — SQL-statements helper (Q2).

pub mod expr;
pub mod parser;
pub mod session;
pub mod types;
pub mod value;
