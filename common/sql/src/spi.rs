//! SPI: running SQL statements from inside a running statement
//! (PostgreSQL's `executor/spi.c`), for user-defined functions
//! (`crate::fmgr`, `crate::plpgsql`).
//!
//! A statement run through [`execute`] is parsed, planned against the
//! catalog as the session sees it and executed under the session's
//! transaction with a fresh [`Ectx`] that shares the caller's transaction,
//! cancel flag, deadline, settings, sequences and plan cache. Its rows are
//! collected (functions read them as values, never stream them).
//!
//! ## Snapshots and command ids (PostgreSQL's rule)
//!
//! ```text
//!   VOLATILE function      every statement takes a new statement snapshot
//!   (SnapshotMode::Fresh)  (READ COMMITTED: Xact::statement_snapshot, which
//!                          the procarray's snapshot cache may answer), and a
//!                          statement that wrote bumps the command counter
//!                          afterwards, so the next one sees its rows
//!   STABLE / IMMUTABLE     the caller's snapshot and command id
//!   (SnapshotMode::Caller)
//! ```
//!
//! In REPEATABLE READ `statement_snapshot` returns the transaction's
//! snapshot either way.
//!
//! ## Plan cache
//!
//! Plans are kept per session ([`PlanCache`], reached through
//! [`Ectx::plans`]) keyed by statement text, parameter types and search
//! path, and dropped wholesale when the catalog version moves (any DDL),
//! so a PL/pgSQL loop plans its expressions once. Statements that the
//! planner does not handle (DDL, utility statements) are refused with
//! 0A000 inside functions.

use std::collections::HashMap;
use std::sync::Arc;

use crate::executor::{run_dml, run_query, Ectx, Vis};
use crate::functions::EvalContext;
use crate::parser::Stmt;
use crate::planner::{Plan, Planned};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;
use pgtypes::Oid;
use server::backend::FieldDescription;

/// Entries a [`PlanCache`] holds before it starts over.
const PLAN_CACHE_ENTRIES: usize = 1024;

/// How a statement run through SPI sees the database (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotMode {
    /// A new statement snapshot (VOLATILE functions, DO blocks).
    Fresh,
    /// The calling statement's snapshot (STABLE and IMMUTABLE functions).
    Caller,
}

/// What a statement returned.
#[derive(Debug, Default)]
pub struct SpiResult {
    /// The result columns (empty for DML without RETURNING).
    pub columns: Vec<FieldDescription>,
    /// Its rows (RETURNING rows for DML).
    pub rows: Vec<Vec<Value>>,
    /// Rows processed: returned by a query, affected by DML
    /// (GET DIAGNOSTICS ROW_COUNT).
    pub processed: u64,
    /// True for INSERT / UPDATE / DELETE.
    pub dml: bool,
}

/// A session's cached plans of statements run through SPI.
#[derive(Default)]
pub struct PlanCache {
    version: u64,
    plans: HashMap<(String, Vec<Oid>, Vec<Oid>), Arc<Planned>>,
    functions: HashMap<Oid, Arc<crate::plpgsql::Compiled>>,
    /// The last user whose privileges a function's statement was checked
    /// with (role name, its AclUser): a loop's statements run as the same
    /// user, and role changes move the catalog version.
    acl: Option<(String, Arc<crate::privileges::AclUser>)>,
}

impl PlanCache {
    /// Drops everything when the catalog moved past what was cached.
    fn check_version(&mut self, version: u64) {
        if self.version != version {
            self.plans.clear();
            self.functions.clear();
            self.acl = None;
            self.version = version;
        }
    }

    /// `role`'s privileges ([`crate::privileges::AclUser::of`]), cached
    /// under catalog `version`.
    pub fn acl_user(
        &mut self,
        db: &engine::Engine,
        role: &str,
        version: u64,
    ) -> Arc<crate::privileges::AclUser> {
        self.check_version(version);
        match &self.acl {
            Some((r, u)) if r == role => u.clone(),
            _ => {
                let u = Arc::new(crate::privileges::AclUser::of(db, role));
                self.acl = Some((role.to_string(), u.clone()));
                u
            }
        }
    }

    /// The compiled PL/pgSQL body of function `oid`, if cached under
    /// catalog `version`.
    pub fn function(&mut self, oid: Oid, version: u64) -> Option<Arc<crate::plpgsql::Compiled>> {
        self.check_version(version);
        self.functions.get(&oid).cloned()
    }

    /// Keeps a compiled body.
    pub fn keep_function(&mut self, oid: Oid, version: u64, c: Arc<crate::plpgsql::Compiled>) {
        self.check_version(version);
        if self.functions.len() >= PLAN_CACHE_ENTRIES {
            self.functions.clear();
        }
        self.functions.insert(oid, c);
    }
}

/// Parses and plans `sql` with parameters of `types`, or takes the plan
/// from the session's cache.
fn plan(ec: &mut Ectx<'_>, sql: &str, types: &[SqlType]) -> PgResult<Arc<Planned>> {
    let oids: Vec<Oid> = types.iter().map(|t| t.oid()).collect();
    let version = ec.db.catalog().version();
    // A CALL's query binds procedures, which the same text outside a
    // CALL must not: the two are cached apart.
    let text = if crate::parse_func::calling() {
        format!("CALL\0{sql}")
    } else {
        sql.to_string()
    };
    let key = (text, oids, ec.path.to_vec());
    // A plan reading a trigger's transition tables holds their rows: it
    // is neither taken from the cache nor kept.
    let cacheable = !crate::transition::transition_active();
    if let (Some(cache), true) = (ec.plans.as_deref_mut(), cacheable) {
        cache.check_version(version);
        if let Some(p) = cache.plans.get(&key) {
            if p.sizes_hold(ec.db.catalog()) {
                return Ok(p.clone());
            }
        }
    }
    let (stmt, call) = match crate::parser::parse_one(sql)? {
        Stmt::Sql(s) if crate::planner::is_plannable(&s) => (s, false),
        // CALL run as a statement (EXECUTE 'CALL p()', a SQL function's
        // body): its query, binding procedures.
        Stmt::Function(crate::parser::funcstmt::FuncStmt::Call { name, args }) => {
            match crate::parser::parse_one(&call_query(&name, &args))? {
                Stmt::Sql(s) => (s, true),
                _ => return Err(PgError::internal("CALL's query does not parse")),
            }
        }
        Stmt::Empty => return Err(PgError::syntax("syntax error at end of input")),
        _ => {
            return Err(PgError::unsupported(format!(
                "statement is not supported inside a function: {}",
                sql.trim()
            )))
        }
    };
    let planned = {
        let own = ec.xact.own();
        let view = ec
            .db
            .catalog()
            .view(own.xids, ec.db.clog())
            .with_path(&ec.path);
        let plan = || crate::planner::plan_statement(&view, &stmt, &key.1);
        Arc::new(if call {
            crate::parse_func::with_procedures(plan)?
        } else {
            plan()?
        })
    };
    if let (Some(cache), true) = (ec.plans.as_deref_mut(), cacheable) {
        if cache.plans.len() >= PLAN_CACHE_ENTRIES {
            cache.plans.clear();
        }
        cache.plans.insert(key, planned.clone());
    }
    Ok(planned)
}

/// CALL's query for a call written `name(args)`: the procedure in FROM,
/// whose result columns are its OUT and INOUT parameters (one `void`
/// column when it has none).
pub fn call_query(name: &str, args: &str) -> String {
    format!("SELECT * FROM {name}({args})")
}

/// True if a CALL's result columns say the procedure has no output
/// parameters (it returns nothing to show).
pub fn call_returns_nothing(columns: &[FieldDescription]) -> bool {
    matches!(columns, [c] if c.ty == SqlType::Void)
}

/// The procedure a CALL's query ([`call_query`]) calls, binding it
/// (cached): what its output columns map back to.
pub fn call_target(ec: &mut Ectx<'_>, sql: &str, types: &[SqlType]) -> PgResult<Option<Oid>> {
    crate::parse_func::with_procedures(|| Ok(plan(ec, sql, types)?.called_routine()))
}

/// Runs a CALL's query ([`call_query`]; `$n` are `params` of `types`):
/// one row of the procedure's output parameters.
pub fn call(
    ec: &mut Ectx<'_>,
    sql: &str,
    params: &[Value],
    types: &[SqlType],
    mode: SnapshotMode,
) -> PgResult<SpiResult> {
    crate::parse_func::with_procedures(|| execute(ec, sql, params, types, mode, None))
}

/// COMMIT / ROLLBACK [AND CHAIN] in a procedure or DO block
/// (PostgreSQL's SPI_commit / SPI_rollback): allowed only where the
/// session started the call outside a transaction block and nothing in
/// between made it atomic ([`Ectx::nonatomic`]), and never inside a
/// subtransaction (an EXCEPTION block). COMMIT fires the checks deferred
/// to it first; either way the next transaction starts at once and the
/// procedure goes on under a new snapshot. Its variables and open cursors
/// (materialised when opened) survive.
pub fn end_transaction(ec: &mut Ectx<'_>, commit: bool, chain: bool) -> PgResult<()> {
    if !ec.nonatomic || !ec.xact.in_single_statement() {
        return Err(PgError::new(
            sqlstate::INVALID_TRANSACTION_TERMINATION,
            "invalid transaction termination",
        ));
    }
    if ec.xact.nesting_depth() > 1 {
        return Err(PgError::new(
            sqlstate::INVALID_TRANSACTION_TERMINATION,
            if commit {
                "cannot commit while a subtransaction is active"
            } else {
                "cannot roll back while a subtransaction is active"
            },
        ));
    }
    let deferred = std::mem::take(&mut ec.ri_deferred);
    if commit && !deferred.is_empty() {
        let modes = std::mem::take(&mut ec.constraint_modes);
        let r = crate::ri_triggers::fire_deferred(ec, deferred);
        ec.constraint_modes = modes;
        r?;
    }
    ec.xact.restart_in_procedure(commit, chain)?;
    ec.xact_ts = pgtypes::datetime::now_usecs();
    ec.snapshot = Some(ec.xact.statement_snapshot());
    Ok(())
}

/// The result columns `sql` would return, planning it (cached).
pub fn describe(
    ec: &mut Ectx<'_>,
    sql: &str,
    types: &[SqlType],
) -> PgResult<Vec<FieldDescription>> {
    Ok(plan(ec, sql, types)?.columns.clone().unwrap_or_default())
}

/// Runs `sql` (one plannable statement; `$n` are `params` of `types`)
/// under the session's transaction. `limit` stops a query after that
/// many rows (SELECT INTO needs two to know whether there were more).
pub fn execute(
    ec: &mut Ectx<'_>,
    sql: &str,
    params: &[Value],
    types: &[SqlType],
    mode: SnapshotMode,
    limit: Option<usize>,
) -> PgResult<SpiResult> {
    ec.check_interrupts()?;
    let planned = plan(ec, sql, types)?;
    if params.len() < planned.param_types.len() {
        return Err(PgError::new(
            sqlstate::UNDEFINED_PARAMETER,
            format!("there is no parameter ${}", params.len() + 1),
        ));
    }
    let writes = planned.writes();
    let what = planned.plan.command();
    if writes && mode == SnapshotMode::Caller {
        return Err(PgError::unsupported(format!(
            "{what} is not allowed in a non-volatile function"
        )));
    }
    if writes && EvalContext::is_in_recovery(ec) {
        return Err(PgError::new(
            sqlstate::READ_ONLY_SQL_TRANSACTION,
            format!("cannot execute {what} in a read-only transaction"),
        ));
    }
    // The caller's rights apply to what the function's statements touch
    // (SECURITY INVOKER), as to the caller's own statements.
    let role = EvalContext::current_user(ec);
    let version = ec.db.catalog().version();
    let user = match ec.plans.as_deref_mut() {
        Some(cache) => cache.acl_user(ec.db, &role, version),
        None => Arc::new(crate::privileges::AclUser::of(ec.db, &role)),
    };
    if !user.superuser || planned.reads_view {
        let own = ec.xact.own();
        let view = ec
            .db
            .catalog()
            .view(own.xids, ec.db.clog())
            .with_path(&ec.path);
        crate::aclchk::check_planned(&view, &user, &planned, sql)?;
    }
    let vis = match (mode, ec.snapshot.clone()) {
        (SnapshotMode::Caller, Some(snapshot)) => {
            let own = ec.xact.own();
            Vis {
                snapshot,
                own: own.xids.to_vec(),
                curcid: own.curcid,
                // The caller's serializable transaction, if any: reads
                // inside the function take its SIRead locks.
                serializable: ec.xact.sxact(),
            }
        }
        _ => Vis::take(ec.xact),
    };
    let mut sub = ec.nested(params, vis.snapshot.clone());
    let mut out = SpiResult {
        columns: planned.columns.clone().unwrap_or_default(),
        dml: writes,
        ..SpiResult::default()
    };
    let result = match &planned.plan {
        Plan::Query(q) => {
            let rows = &mut out.rows;
            run_query(&mut sub, &vis, q, &mut |_, row| {
                if limit.is_none_or(|l| rows.len() < l) {
                    rows.push(row.to_vec());
                }
                Ok(())
            })
        }
        p => {
            let rows = &mut out.rows;
            run_dml(&mut sub, &vis, p, &mut |_, row| {
                rows.push(row.to_vec());
                Ok(())
            })
        }
    };
    let notices = std::mem::take(&mut sub.notices);
    let deferred = std::mem::take(&mut sub.ri_deferred);
    drop(sub);
    ec.notices.extend(notices);
    ec.ri_deferred.extend(deferred);
    out.processed = result?;
    if writes && mode == SnapshotMode::Fresh {
        ec.xact.command_counter_increment();
    }
    Ok(out)
}
