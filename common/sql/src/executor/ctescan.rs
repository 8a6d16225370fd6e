//! CTE scans and recursive union (PostgreSQL's nodeCtescan,
//! nodeWorktablescan, nodeRecursiveunion).
//!
//! A materialized CTE is computed once per execution, by the first
//! CteScan that reads it, into the statement's `QueryState`; every scan of
//! it then iterates the shared rows (`Arc` of a `TupleStore`: in memory up
//! to `work_mem`, then in a temporary file each scan reads on its own). A recursive CTE's plan is a
//! RecursiveUnion: it streams the non-recursive term's rows, collecting
//! them as the work table, then runs the recursive term — whose
//! WorkTableScan reads the work table — again and again, each time over
//! the rows the previous round produced, until a round produces none.
//! With UNION (not ALL) rows already produced are dropped, which is what
//! makes a cyclic graph walk end.

use std::sync::Arc;

use super::execnodes::{build, ExecNode, Node};
use super::spill::{StoreCursor, TupleStore};
use super::{Ectx, Vis};
use crate::planner::plannodes::PlanNode;
use pgtypes::error::{PgError, PgResult};
use pgtypes::value::Value;
use storage::keycodec::encode_key_value;

/// Shared rows of a CTE or work table.
pub type Rows = Arc<TupleStore>;

/// Reads a materialized CTE.
pub struct CteScanNode<'p> {
    cte: usize,
    vis: &'p Vis,
    rows: Option<Rows>,
    cursor: StoreCursor,
}

impl<'p> CteScanNode<'p> {
    /// Materializes (if no scan did yet) on the first `next`.
    pub fn new(cte: usize, vis: &'p Vis) -> Self {
        CteScanNode {
            cte,
            vis,
            rows: None,
            cursor: TupleStore::default().cursor(),
        }
    }
}

/// The rows of CTE `cte`, computed now if this execution has not yet.
pub fn cte_rows(ec: &mut Ectx<'_>, cte: usize, vis: &Vis) -> PgResult<Rows> {
    let q = ec
        .query
        .as_ref()
        .ok_or_else(|| PgError::internal("CTE scan outside a query"))?;
    if let Some(Some(r)) = q.cte_rows.get(cte) {
        return Ok(r.clone());
    }
    let shared = q.shared.clone();
    let def = shared
        .ctes
        .get(cte)
        .ok_or_else(|| PgError::internal("no such CTE"))?;
    let mut node = build(&def.plan, vis);
    let rows = Arc::new(TupleStore::collect(&mut node, ec)?);
    if let Some(q) = ec.query.as_mut() {
        if let Some(slot) = q.cte_rows.get_mut(cte) {
            *slot = Some(rows.clone());
        }
    }
    Ok(rows)
}

impl ExecNode for CteScanNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.rows.is_none() {
            self.rows = Some(cte_rows(ec, self.cte, self.vis)?);
        }
        ec.tick()?;
        match &self.rows {
            Some(r) => self.cursor.advance(r),
            None => Ok(false),
        }
    }
    fn row(&self) -> &[Value] {
        match &self.rows {
            Some(r) => self.cursor.row(r),
            None => &[],
        }
    }
}

/// Reads the work table of a recursive CTE (the previous round's rows).
pub struct WorkTableScanNode {
    cte: usize,
    rows: Option<Rows>,
    cursor: StoreCursor,
}

impl WorkTableScanNode {
    /// Takes the work table on the first `next`.
    pub fn new(cte: usize) -> WorkTableScanNode {
        WorkTableScanNode {
            cte,
            rows: None,
            cursor: TupleStore::default().cursor(),
        }
    }
}

impl ExecNode for WorkTableScanNode {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.rows.is_none() {
            let q = ec
                .query
                .as_ref()
                .ok_or_else(|| PgError::internal("work table scan outside a query"))?;
            self.rows = Some(q.worktables.get(self.cte).cloned().unwrap_or_default());
        }
        ec.tick()?;
        match &self.rows {
            Some(r) => self.cursor.advance(r),
            None => Ok(false),
        }
    }
    fn row(&self) -> &[Value] {
        match &self.rows {
            Some(r) => self.cursor.row(r),
            None => &[],
        }
    }
}

/// WITH RECURSIVE's union.
pub struct RecursiveUnionNode<'p> {
    nonrec: Node<'p>,
    rec_plan: &'p PlanNode,
    rec: Option<Node<'p>>,
    cte: usize,
    distinct: bool,
    vis: &'p Vis,
    in_rec: bool,
    seen: super::spill::KeySet,
    working: Option<TupleStore>,
    row: Vec<Value>,
    kb: Vec<u8>,
}

impl<'p> RecursiveUnionNode<'p> {
    /// Starts with the non-recursive term.
    pub fn new(
        nonrec: Node<'p>,
        rec_plan: &'p PlanNode,
        cte: usize,
        distinct: bool,
        vis: &'p Vis,
    ) -> Self {
        RecursiveUnionNode {
            nonrec,
            rec_plan,
            rec: None,
            cte,
            distinct,
            vis,
            in_rec: false,
            seen: Default::default(),
            working: None,
            row: Vec::new(),
            kb: Vec::new(),
        }
    }
}

impl ExecNode for RecursiveUnionNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        loop {
            let got = if !self.in_rec {
                self.nonrec.next(ec)?
            } else {
                match self.rec.as_mut() {
                    Some(r) => r.next(ec)?,
                    None => false,
                }
            };
            if got {
                ec.tick()?;
                let src = if !self.in_rec {
                    self.nonrec.row()
                } else {
                    match &self.rec {
                        Some(r) => r.row(),
                        None => &[],
                    }
                };
                if self.distinct {
                    self.kb.clear();
                    for v in src {
                        encode_key_value(v, &mut self.kb);
                    }
                    if self.seen.contains(&self.kb) {
                        continue;
                    }
                    self.seen.insert(self.kb.clone());
                }
                self.row.clear();
                self.row.extend_from_slice(src);
                self.working
                    .get_or_insert_with(|| TupleStore::new(ec))
                    .push(&self.row)?;
                return Ok(true);
            }
            // This round is over: the next one reads what it produced.
            self.in_rec = true;
            let Some(mut wt) = self.working.take().filter(|w| !w.is_empty()) else {
                self.rec = None;
                return Ok(false);
            };
            wt.finish()?;
            let wt = Arc::new(wt);
            match ec
                .query
                .as_mut()
                .and_then(|q| q.worktables.get_mut(self.cte))
            {
                Some(slot) => *slot = wt,
                None => return Err(PgError::internal("recursive union outside a query")),
            }
            self.rec = Some(build(self.rec_plan, self.vis));
        }
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}
