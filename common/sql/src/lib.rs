//! SQL: parse (sqlparser + keyword pre-dispatch), bind, plan, execute.

pub mod aclchk;
pub mod analyze;
pub mod comment;
pub mod copy;
pub mod ddl;
pub mod executor;
pub mod expr;
pub mod fmgr;
pub mod functioncmds;
pub mod functions;
pub mod indexcmds;
pub mod jsonfuncs;
pub mod namespace;
pub mod network;
pub mod parse_func;
pub mod parser;
pub mod pgcatalog;
pub mod planner;
pub mod plpgsql;
pub mod portalcmds;
pub mod privileges;
pub mod regexp;
pub mod ri_triggers;
pub mod roles;
pub mod schemacmds;
pub mod sequence;
pub mod session;
pub mod shdepend;
pub mod spi;
pub mod sysviews;
pub mod tablecmds;
pub mod tablerewrite;
pub mod transition;
pub mod trigger;
pub mod typecmds;
pub mod utility;
pub mod view;

use std::sync::Arc;

use engine::Engine;
use pgtypes::error::PgResult;

/// What a SQL session needs from the node that runs it, beyond the
/// engine's shared state: the node implements it (`common::node`).
pub trait NodeServices: Send + Sync {
    /// The engine's shared state.
    fn engine(&self) -> &Arc<Engine>;
    /// Parsed statements by query text, shared by the node's sessions.
    fn parse_cache(&self) -> &parser::ParseCache;
    /// CHECKPOINT (a restartpoint on a standby).
    fn checkpoint(&self) -> PgResult<()>;
}
