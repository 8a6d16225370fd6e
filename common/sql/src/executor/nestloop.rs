//! Nested loop join (PostgreSQL's nodeNestloop).
//!
//! For each outer row, every inner row is tried against the join
//! condition. Two shapes:
//!
//! * **plain**: the inner side does not depend on the outer row, so it is
//!   read once on the first outer row into a `TupleStore` (memory up to
//!   `work_mem`, then a temporary file) and looped over from there
//!   (PostgreSQL puts a Material node there). RIGHT and FULL joins
//!   remember which inner rows matched and emit the others, NULL-extended,
//!   after the last outer row.
//! * **parameterized**: `params` are computed from each outer row into
//!   executor parameter slots and the inner side is started afresh for
//!   that row — an index lookup on the join key, or a LATERAL subquery.
//!   Only INNER, LEFT, SEMI and ANTI joins are planned this way.
//!
//! Output: outer row ++ inner row; for LEFT/FULL the inner part is NULLs
//! when nothing matched; SEMI/ANTI output the outer row alone. Both loops
//! tick, so a cross join of two big tables is cancellable.

use super::execnodes::{build, ExecNode, Node};
use super::spill::{StoreCursor, TupleStore};
use super::{Ectx, Vis};
use crate::expr::{eval, Expr};
use crate::planner::plannodes::{JoinKind, PlanNode};
use pgtypes::error::PgResult;
use pgtypes::value::Value;

/// A running nested loop.
pub struct NestLoopNode<'p> {
    outer: Node<'p>,
    inner_plan: &'p PlanNode,
    kind: JoinKind,
    qual: Option<&'p Expr>,
    params: &'p [(usize, Expr)],
    vis: &'p Vis,
    inner_rows: Option<TupleStore>,
    cursor: StoreCursor,
    inner_matched: Vec<bool>,
    inner_node: Option<Node<'p>>,
    have_outer: bool,
    outer_matched: bool,
    outer_done: bool,
    outer_width: usize,
    /// Length of the current outer row, the prefix of `out`.
    outer_len: usize,
    out: Vec<Value>,
}

impl<'p> NestLoopNode<'p> {
    /// The inner side starts with the first outer row.
    pub fn new(
        outer: Node<'p>,
        inner_plan: &'p PlanNode,
        kind: JoinKind,
        qual: Option<&'p Expr>,
        params: &'p [(usize, Expr)],
        vis: &'p Vis,
        outer_width: usize,
    ) -> Self {
        NestLoopNode {
            outer,
            inner_plan,
            kind,
            qual,
            params,
            vis,
            inner_rows: None,
            cursor: TupleStore::default().cursor(),
            inner_matched: Vec::new(),
            inner_node: None,
            have_outer: false,
            outer_matched: false,
            outer_done: false,
            outer_width,
            outer_len: 0,
            out: Vec::new(),
        }
    }

    /// Reads the (outer-independent) inner side into its store.
    fn materialize_inner(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        let mut n = build(self.inner_plan, self.vis);
        let store = TupleStore::collect(&mut n, ec)?;
        self.inner_matched = vec![false; store.len()];
        self.inner_rows = Some(store);
        Ok(())
    }

    fn null_inner(&mut self) {
        self.out.clear();
        self.out.extend_from_slice(self.outer.row());
        self.out
            .extend(std::iter::repeat_n(Value::Null, self.inner_plan.width));
    }
}

impl ExecNode for NestLoopNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        loop {
            if self.outer_done {
                // RIGHT / FULL: the inner rows nothing matched.
                if matches!(self.kind, JoinKind::Right | JoinKind::Full) {
                    if let Some(store) = &self.inner_rows {
                        while self.cursor.advance(store)? {
                            ec.tick()?;
                            if !self.inner_matched[self.cursor.index()] {
                                self.out.clear();
                                self.out
                                    .extend(std::iter::repeat_n(Value::Null, self.outer_width));
                                self.out.extend_from_slice(self.cursor.row(store));
                                return Ok(true);
                            }
                        }
                    }
                }
                return Ok(false);
            }
            if !self.have_outer {
                ec.tick()?;
                if !self.outer.next(ec)? {
                    self.outer_done = true;
                    if self.inner_rows.is_none()
                        && matches!(self.kind, JoinKind::Right | JoinKind::Full)
                    {
                        self.materialize_inner(ec)?;
                    }
                    if let Some(store) = &self.inner_rows {
                        self.cursor = store.cursor();
                    }
                    continue;
                }
                self.have_outer = true;
                self.outer_matched = false;
                // The joined row's outer part, kept while this outer row's
                // inner rows are tried (each replaces only the inner part).
                self.out.clear();
                self.out.extend_from_slice(self.outer.row());
                self.outer_len = self.out.len();
                if !self.params.is_empty() {
                    let p = ec.params;
                    for (slot, e) in self.params {
                        let v = eval(e, self.outer.row(), p, ec)?;
                        ec.set_exec_param(*slot, v)?;
                    }
                    // The last outer row's inner node starts over when it
                    // can (an index scan keeps its buffers), else a new one.
                    if !self.inner_node.as_mut().is_some_and(|n| n.rescan()) {
                        self.inner_node = Some(build(self.inner_plan, self.vis));
                    }
                } else {
                    if self.inner_rows.is_none() {
                        self.materialize_inner(ec)?;
                    }
                    if let Some(store) = &self.inner_rows {
                        self.cursor = store.cursor();
                    }
                }
            }
            // The next inner candidate, joined into `out`.
            let found = match self.inner_node.as_mut() {
                Some(n) if !self.params.is_empty() => {
                    if n.next(ec)? {
                        self.out.truncate(self.outer_len);
                        self.out.extend_from_slice(n.row());
                        true
                    } else {
                        false
                    }
                }
                _ => match &self.inner_rows {
                    Some(store) if self.cursor.advance(store)? => {
                        self.out.truncate(self.outer_len);
                        self.out.extend_from_slice(self.cursor.row(store));
                        true
                    }
                    _ => false,
                },
            };
            if found {
                ec.tick()?;
                if !super::join_qual_passes(self.qual, &self.out, ec)? {
                    continue;
                }
                self.outer_matched = true;
                if self.params.is_empty() && !self.inner_matched.is_empty() {
                    self.inner_matched[self.cursor.index()] = true;
                }
                match self.kind {
                    JoinKind::Semi => {
                        self.have_outer = false;
                        self.out.truncate(self.outer_len);
                        return Ok(true);
                    }
                    JoinKind::Anti => {
                        self.have_outer = false;
                        continue;
                    }
                    _ => return Ok(true),
                }
            }
            // Inner side exhausted for this outer row.
            self.have_outer = false;
            if !self.outer_matched {
                match self.kind {
                    JoinKind::Left | JoinKind::Full => {
                        self.null_inner();
                        return Ok(true);
                    }
                    JoinKind::Anti => {
                        self.out.truncate(self.outer_len);
                        return Ok(true);
                    }
                    _ => {}
                }
            }
        }
    }
    fn row(&self) -> &[Value] {
        &self.out
    }
}
