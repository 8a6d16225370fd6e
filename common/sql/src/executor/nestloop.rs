//! Nested loop join (PostgreSQL's nodeNestloop).
//!
//! For each outer row, every inner row is tried against the join
//! condition. Two shapes:
//!
//! * **plain**: the inner side does not depend on the outer row, so it is
//!   read once into memory on the first outer row and looped over from
//!   there (PostgreSQL puts a Material node there). RIGHT and FULL joins
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

use super::execnodes::{build, collect, ExecNode, Node};
use super::{Ectx, Vis};
use crate::expr::{eval, eval_filter, Expr};
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
    inner_rows: Option<Vec<Vec<Value>>>,
    inner_matched: Vec<bool>,
    inner_node: Option<Node<'p>>,
    have_outer: bool,
    outer_matched: bool,
    outer_done: bool,
    pos: usize,
    outer_width: usize,
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
            inner_matched: Vec::new(),
            inner_node: None,
            have_outer: false,
            outer_matched: false,
            outer_done: false,
            pos: 0,
            outer_width,
            out: Vec::new(),
        }
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
                    let rows = self.inner_rows.as_deref().unwrap_or(&[]);
                    while self.pos < rows.len() {
                        let i = self.pos;
                        self.pos += 1;
                        ec.tick()?;
                        if !self.inner_matched[i] {
                            self.out.clear();
                            self.out
                                .extend(std::iter::repeat_n(Value::Null, self.outer_width));
                            self.out.extend_from_slice(&rows[i]);
                            return Ok(true);
                        }
                    }
                }
                return Ok(false);
            }
            if !self.have_outer {
                ec.tick()?;
                if !self.outer.next(ec)? {
                    self.outer_done = true;
                    self.pos = 0;
                    if self.inner_rows.is_none()
                        && matches!(self.kind, JoinKind::Right | JoinKind::Full)
                    {
                        let mut n = build(self.inner_plan, self.vis);
                        let rows = collect(&mut n, ec)?;
                        self.inner_matched = vec![false; rows.len()];
                        self.inner_rows = Some(rows);
                    }
                    continue;
                }
                self.have_outer = true;
                self.outer_matched = false;
                self.pos = 0;
                if !self.params.is_empty() {
                    let p = ec.params;
                    for (slot, e) in self.params {
                        let v = eval(e, self.outer.row(), p, ec)?;
                        ec.set_exec_param(*slot, v)?;
                    }
                    self.inner_node = Some(build(self.inner_plan, self.vis));
                } else if self.inner_rows.is_none() {
                    let mut n = build(self.inner_plan, self.vis);
                    let rows = collect(&mut n, ec)?;
                    self.inner_matched = vec![false; rows.len()];
                    self.inner_rows = Some(rows);
                }
            }
            // The next inner candidate, joined into `out`.
            let found = match self.inner_node.as_mut() {
                Some(n) if !self.params.is_empty() => {
                    if n.next(ec)? {
                        self.out.clear();
                        self.out.extend_from_slice(self.outer.row());
                        self.out.extend_from_slice(n.row());
                        true
                    } else {
                        false
                    }
                }
                _ => {
                    let rows = self.inner_rows.as_deref().unwrap_or(&[]);
                    match rows.get(self.pos) {
                        Some(r) => {
                            self.pos += 1;
                            self.out.clear();
                            self.out.extend_from_slice(self.outer.row());
                            self.out.extend_from_slice(r);
                            true
                        }
                        None => false,
                    }
                }
            };
            if found {
                ec.tick()?;
                let pass = match self.qual {
                    None => true,
                    Some(q) => {
                        let p = ec.params;
                        eval_filter(q, &self.out, p, ec)?
                    }
                };
                if !pass {
                    continue;
                }
                self.outer_matched = true;
                if self.params.is_empty() && !self.inner_matched.is_empty() {
                    self.inner_matched[self.pos - 1] = true;
                }
                match self.kind {
                    JoinKind::Semi => {
                        self.have_outer = false;
                        self.out.clear();
                        self.out.extend_from_slice(self.outer.row());
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
            self.inner_node = None;
            if !self.outer_matched {
                match self.kind {
                    JoinKind::Left | JoinKind::Full => {
                        self.null_inner();
                        return Ok(true);
                    }
                    JoinKind::Anti => {
                        self.out.clear();
                        self.out.extend_from_slice(self.outer.row());
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
