//! Subqueries used as expressions, and the per-execution state of a
//! statement (PostgreSQL's nodeSubplan and the executor's PARAM_EXEC
//! slots).
//!
//! An `Expr::SubPlan` names one of the statement's subplans
//! (`StatementPlans::subplans`) and carries its correlation values,
//! evaluated over the current row. Evaluating it:
//!
//! 1. copies the correlation values into the subplan's executor
//!    parameter slots (`Expr::ExecParam` inside the subquery reads them);
//! 2. starts the subquery's plan and pulls only as many rows as the answer
//!    needs: EXISTS stops at the first row; a scalar subquery reads a
//!    second row only to raise 21000; ANY/ALL stop at the first row that
//!    decides.
//!
//! An uncorrelated subplan (no slots) is PostgreSQL's initplan: run at
//! most once per execution, on first use, and its answer cached — for
//! ANY/ALL the list of values, plus a hash set when the test is `=` on
//! hashable types, so `x IN (SELECT …)` and `x NOT IN (SELECT …)` cost one
//! probe per row. NULLs follow SQL: `x IN (…)` is NULL rather than false
//! when no value equals `x` but some comparison was NULL, which is what
//! makes `NOT IN` over a list holding NULL return no rows.
//!
//! [`QueryState`] also holds the materialized CTEs and the work tables of
//! recursive CTEs (`ctescan.rs`). It is installed on the `Ectx` by
//! `run_query` for the duration of one execution and removed after.

use super::spill::KeySet;
use std::sync::Arc;

use super::ctescan::Rows;
use super::execnodes::build;
use super::{Ectx, Vis};
use crate::expr::{eval, SubLinkKind};
use crate::planner::plannodes::StatementPlans;
use pgtypes::error::{PgError, PgResult};
use pgtypes::value::Value;
use storage::keycodec::encode_key_value;

/// 21000 cardinality_violation.
const CARDINALITY_VIOLATION: &str = "21000";

/// A cached answer of an uncorrelated subplan.
enum SubCache {
    /// EXISTS / scalar.
    Value(Value),
    /// ANY / ALL: the subquery's values.
    List {
        values: Vec<Value>,
        keys: Option<KeySet>,
        has_null: bool,
    },
}

/// Per-execution state of a statement with subplans, CTEs or executor
/// parameters.
pub struct QueryState {
    /// The statement's subplans and CTEs.
    pub shared: Arc<StatementPlans>,
    /// What the statement sees (subplans and CTEs run with it).
    pub vis: Arc<Vis>,
    /// Executor parameter slots.
    pub exec: Vec<Value>,
    cache: Vec<Option<SubCache>>,
    /// Materialized CTE rows, computed on first scan.
    pub cte_rows: Vec<Option<Rows>>,
    /// Work tables of recursive CTEs.
    pub worktables: Vec<Rows>,
}

impl QueryState {
    /// Fresh state for one execution.
    pub fn new(shared: Arc<StatementPlans>, vis: &Vis) -> QueryState {
        let vis = Arc::new(Vis {
            snapshot: vis.snapshot.clone(),
            own: vis.own.clone(),
            curcid: vis.curcid,
            serializable: vis.serializable,
        });
        QueryState {
            exec: vec![Value::Null; shared.exec_params],
            cache: (0..shared.subplans.len()).map(|_| None).collect(),
            cte_rows: vec![None; shared.ctes.len()],
            worktables: (0..shared.ctes.len()).map(|_| Rows::default()).collect(),
            shared,
            vis,
        }
    }
}

fn more_than_one_row() -> PgError {
    PgError::new(
        CARDINALITY_VIOLATION,
        "more than one row returned by a subquery used as an expression",
    )
}

fn no_state() -> PgError {
    PgError::internal("subplan outside a query")
}

impl Ectx<'_> {
    /// Sets executor parameter `slot`.
    pub fn set_exec_param(&mut self, slot: usize, v: Value) -> PgResult<()> {
        match self.query.as_mut().and_then(|q| q.exec.get_mut(slot)) {
            Some(s) => {
                *s = v;
                Ok(())
            }
            None => Err(PgError::internal(format!(
                "executor parameter {slot} does not exist"
            ))),
        }
    }

    /// The value of executor parameter `slot`.
    pub fn get_exec_param(&self, slot: usize) -> PgResult<Value> {
        self.query
            .as_ref()
            .and_then(|q| q.exec.get(slot))
            .cloned()
            .ok_or_else(|| PgError::internal(format!("executor parameter {slot} is not set")))
    }

    /// Evaluates subplan `id` (see the module doc).
    pub fn eval_subplan(&mut self, id: usize, args: &[Value], lhs: &Value) -> PgResult<Value> {
        let q = self.query.as_ref().ok_or_else(no_state)?;
        let shared = q.shared.clone();
        let vis = q.vis.clone();
        let def = shared
            .subplans
            .get(id)
            .ok_or_else(|| PgError::internal("no such subplan"))?;
        let correlated = !def.slots.is_empty();
        if correlated {
            for (slot, v) in def.slots.iter().zip(args) {
                self.set_exec_param(*slot, v.clone())?;
            }
        } else {
            let cached = self
                .query
                .as_mut()
                .and_then(|q| q.cache.get_mut(id))
                .and_then(Option::take);
            if let Some(c) = cached {
                let r = answer_cached(self, def, &c, lhs);
                self.cache(id, c);
                return r;
            }
        }
        let mut node = build(&def.plan, &vis);
        match def.kind {
            SubLinkKind::Exists => {
                let v = Value::Bool(node.next(self)?);
                drop(node);
                if !correlated {
                    self.cache(id, SubCache::Value(v.clone()));
                }
                Ok(v)
            }
            SubLinkKind::Scalar => {
                let v = if node.next(self)? {
                    let v = node.row().first().cloned().unwrap_or(Value::Null);
                    if node.next(self)? {
                        return Err(more_than_one_row());
                    }
                    v
                } else {
                    Value::Null
                };
                drop(node);
                if !correlated {
                    self.cache(id, SubCache::Value(v.clone()));
                }
                Ok(v)
            }
            SubLinkKind::Array(elem) => {
                let mut items = Vec::new();
                while node.next(self)? {
                    self.tick()?;
                    items.push(node.row().first().cloned().unwrap_or(Value::Null));
                }
                drop(node);
                let v = pgtypes::array::array_value(elem, items);
                if !correlated {
                    self.cache(id, SubCache::Value(v.clone()));
                }
                Ok(v)
            }
            SubLinkKind::Any | SubLinkKind::All => {
                if !correlated {
                    // Read the whole list once; answer this and later rows
                    // from the cache.
                    let mut values = Vec::new();
                    let mut keys = def.hashable.then(KeySet::default);
                    let mut has_null = false;
                    let mut kb = Vec::new();
                    while node.next(self)? {
                        self.tick()?;
                        let v = node.row().first().cloned().unwrap_or(Value::Null);
                        if v.is_null() {
                            has_null = true;
                        } else if let Some(k) = keys.as_mut() {
                            kb.clear();
                            encode_key_value(&v, &mut kb);
                            k.insert(kb.clone());
                        }
                        values.push(v);
                    }
                    drop(node);
                    let c = SubCache::List {
                        values,
                        keys,
                        has_null,
                    };
                    let r = answer_cached(self, def, &c, lhs);
                    self.cache(id, c);
                    return r;
                }
                let all = def.kind == SubLinkKind::All;
                let mut saw_null = false;
                let mut any_row = false;
                while node.next(self)? {
                    self.tick()?;
                    any_row = true;
                    let v = node.row().first().cloned().unwrap_or(Value::Null);
                    match test(self, def, lhs, v)? {
                        Some(b) if b != all => return Ok(Value::Bool(b)),
                        None => saw_null = true,
                        _ => {}
                    }
                }
                Ok(finish(all, any_row, saw_null))
            }
        }
    }

    fn cache(&mut self, id: usize, c: SubCache) {
        if let Some(slot) = self.query.as_mut().and_then(|q| q.cache.get_mut(id)) {
            *slot = Some(c);
        }
    }
}

/// The comparison of ANY/ALL for one subquery value.
fn test(
    ec: &mut Ectx<'_>,
    def: &crate::planner::plannodes::SubPlanDef,
    lhs: &Value,
    v: Value,
) -> PgResult<Option<bool>> {
    let Some(t) = &def.test else {
        return Err(PgError::internal("ANY/ALL without a test"));
    };
    let pair = [lhs.clone(), v];
    let p = ec.params;
    match eval(t, &pair, p, ec)? {
        Value::Bool(b) => Ok(Some(b)),
        _ => Ok(None),
    }
}

/// ANY: false over no rows, else NULL if some comparison was NULL;
/// ALL: true over no rows, else NULL if some comparison was NULL.
fn finish(all: bool, _any_row: bool, saw_null: bool) -> Value {
    if saw_null {
        Value::Null
    } else {
        Value::Bool(all)
    }
}

fn answer_cached(
    ec: &mut Ectx<'_>,
    def: &crate::planner::plannodes::SubPlanDef,
    c: &SubCache,
    lhs: &Value,
) -> PgResult<Value> {
    match c {
        SubCache::Value(v) => Ok(v.clone()),
        SubCache::List {
            values,
            keys,
            has_null,
        } => {
            let all = def.kind == SubLinkKind::All;
            if values.is_empty() {
                return Ok(Value::Bool(all));
            }
            if let (Some(keys), false) = (keys, all) {
                if lhs.is_null() {
                    return Ok(Value::Null);
                }
                let mut kb = Vec::new();
                encode_key_value(lhs, &mut kb);
                if keys.contains(&kb) {
                    return Ok(Value::Bool(true));
                }
                return Ok(if *has_null {
                    Value::Null
                } else {
                    Value::Bool(false)
                });
            }
            let mut saw_null = false;
            for v in values {
                ec.tick()?;
                match test(ec, def, lhs, v.clone())? {
                    Some(b) if b != all => return Ok(Value::Bool(b)),
                    None => saw_null = true,
                    _ => {}
                }
            }
            Ok(finish(all, true, saw_null))
        }
    }
}
