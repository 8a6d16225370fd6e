//! SQL: parse (sqlparser + keyword pre-dispatch), bind, plan, execute.
//! OWNERS: `types`, `value`, `numeric`, `datetime`, `expr`, `functions`,
//! `rowcodec`, `keycodec` — SQL-values helper (sqlv);
//! `parser`, `catalog`, `executor`, `session` — SQL-statements helper (sqlx).

pub mod datetime;
pub mod expr;
pub mod functions;
pub mod keycodec;
pub mod numeric;
pub mod rowcodec;
pub mod session;
pub mod types;
pub mod value;
