//! Merge join (PostgreSQL's nodeMergejoin).
//!
//! Both inputs arrive sorted ascending on their join keys, NULLs last (a
//! Sort, or an index read whole; the planner only builds this node when
//! `planner::fromclause::output_order` proves it). The node walks them
//! together: the inner rows of one key value form a *group*, kept in a
//! [`TupleStore`] (memory up to `work_mem`, then a temporary file — the
//! part PostgreSQL does with mark and restore), and every outer row with
//! that key is joined with the whole group. Keys compare with the sort
//! order's own comparison (`cmp_for_sort`), so "equal" here is what the
//! sort put together; a row with a NULL key matches nothing.
//!
//! ```text
//!   outer  1 2 2 4        inner  2 2 3 4 4
//!          │ └─┴──joins──────────┴─┘ │ └┴── group of 4
//!          └ no group: LEFT/FULL/ANTI emit it alone; 3: RIGHT/FULL emit it
//! ```
//!
//! Join kinds: INNER, LEFT, RIGHT, FULL (group rows remember whether any
//! outer row matched them), SEMI and ANTI (outer row alone). Output: outer
//! row ++ inner row, NULLs for the missing side. Every loop ticks, so a
//! merge join of two big inputs is cancellable.

use std::cmp::Ordering;

use super::execnodes::{build, ExecNode, Node};
use super::spill::{StoreCursor, TupleStore};
use super::{Ectx, Vis};
use crate::expr::{eval, Expr};
use crate::planner::plannodes::{JoinKind, PlanNode};
use pgtypes::error::PgResult;
use pgtypes::value::{cmp_for_sort, Value};

/// Where the walk is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    /// Read the next outer row.
    NextOuter,
    /// An outer row is held: move the group up to its key.
    Placing,
    /// The group is behind the held outer row: RIGHT / FULL emit its rows
    /// no outer row matched, then back to `Placing`.
    DrainingGroup,
    /// Joining the held outer row with the group's rows.
    Joining,
    /// The outer side ended: RIGHT / FULL emit the group's unmatched rows,
    /// then every inner row left.
    Draining,
    Done,
}

/// A running merge join.
pub struct MergeJoinNode<'p> {
    outer: Node<'p>,
    inner: Node<'p>,
    kind: JoinKind,
    outer_keys: &'p [Expr],
    inner_keys: &'p [Expr],
    qual: Option<&'p Expr>,
    outer_width: usize,
    inner_width: usize,
    step: Step,
    /// The current group: inner rows of one key, and which of them some
    /// outer row matched (RIGHT / FULL).
    group: TupleStore,
    group_key: Vec<Value>,
    group_matched: Vec<bool>,
    group_loaded: bool,
    cursor: StoreCursor,
    /// The inner row read past the group (its key and row), if any.
    lookahead: Option<(Vec<Value>, Vec<Value>)>,
    inner_done: bool,
    /// The group store was made (its spill settings read once).
    store_made: bool,
    outer_key: Vec<Value>,
    outer_matched: bool,
    out: Vec<Value>,
}

fn has_null(key: &[Value]) -> bool {
    key.iter().any(Value::is_null)
}

fn cmp_keys(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = cmp_for_sort(x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn eval_keys(
    keys: &[Expr],
    row: &[Value],
    ec: &mut Ectx<'_>,
    out: &mut Vec<Value>,
) -> PgResult<()> {
    out.clear();
    let p = ec.params;
    for k in keys {
        out.push(eval(k, row, p, ec)?);
    }
    Ok(())
}

impl<'p> MergeJoinNode<'p> {
    /// Both inputs start at once; the first `next` reads them.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        outer: &'p PlanNode,
        inner: &'p PlanNode,
        kind: JoinKind,
        outer_keys: &'p [Expr],
        inner_keys: &'p [Expr],
        qual: Option<&'p Expr>,
        vis: &'p Vis,
    ) -> Self {
        MergeJoinNode {
            outer: build(outer, vis),
            inner: build(inner, vis),
            kind,
            outer_keys,
            inner_keys,
            qual,
            outer_width: outer.width,
            inner_width: inner.width,
            step: Step::NextOuter,
            group: TupleStore::default(),
            group_key: Vec::new(),
            group_matched: Vec::new(),
            group_loaded: false,
            cursor: TupleStore::default().cursor(),
            lookahead: None,
            inner_done: false,
            store_made: false,
            outer_key: Vec::new(),
            outer_matched: false,
            out: Vec::new(),
        }
    }

    fn keeps_unmatched_inner(&self) -> bool {
        matches!(self.kind, JoinKind::Right | JoinKind::Full)
    }

    /// The next inner row with its key, from the lookahead or the input.
    fn next_inner(&mut self, ec: &mut Ectx<'_>) -> PgResult<Option<(Vec<Value>, Vec<Value>)>> {
        if let Some(x) = self.lookahead.take() {
            return Ok(Some(x));
        }
        if self.inner_done {
            return Ok(None);
        }
        ec.tick()?;
        if !self.inner.next(ec)? {
            self.inner_done = true;
            return Ok(None);
        }
        let row = self.inner.row().to_vec();
        let mut key = Vec::with_capacity(self.inner_keys.len());
        eval_keys(self.inner_keys, &row, ec, &mut key)?;
        Ok(Some((key, row)))
    }

    /// Loads the group of the next inner key that is not below `target`
    /// (None: the next key whatever it is). Inner rows skipped on the way
    /// (smaller keys, NULL keys) are returned for RIGHT / FULL to emit:
    /// the first one comes back as `Some(row)` and the load stops there,
    /// to be called again after that row went out.
    fn load_group(
        &mut self,
        target: Option<&[Value]>,
        ec: &mut Ectx<'_>,
    ) -> PgResult<Option<Vec<Value>>> {
        self.group_loaded = false;
        loop {
            let Some((key, row)) = self.next_inner(ec)? else {
                return Ok(None);
            };
            let below =
                has_null(&key) || target.is_some_and(|t| cmp_keys(&key, t) == Ordering::Less);
            if below {
                if self.keeps_unmatched_inner() {
                    return Ok(Some(row));
                }
                continue;
            }
            // A new group: this row and every following one of its key.
            if self.store_made {
                self.group.clear();
            } else {
                self.group = TupleStore::new(ec);
                self.store_made = true;
            }
            self.group.push(&row)?;
            self.group_key = key;
            loop {
                match self.next_inner(ec)? {
                    Some((k, r)) if !has_null(&k) && cmp_keys(&k, &self.group_key).is_eq() => {
                        self.group.push(&r)?;
                    }
                    Some(x) => {
                        self.lookahead = Some(x);
                        break;
                    }
                    None => break,
                }
            }
            self.group.finish()?;
            self.group_matched.clear();
            self.group_matched.resize(self.group.len(), false);
            self.group_loaded = true;
            return Ok(None);
        }
    }

    /// `out` = NULLs ++ an inner row (RIGHT / FULL, unmatched).
    fn null_outer(&mut self, inner: &[Value]) {
        self.out.clear();
        self.out
            .extend(std::iter::repeat_n(Value::Null, self.outer_width));
        self.out.extend_from_slice(inner);
    }

    /// The current outer row alone: `out` = outer (++ NULLs for LEFT /
    /// FULL); false when this kind drops it.
    fn unmatched_outer(&mut self) -> bool {
        self.out.clear();
        self.out.extend_from_slice(self.outer.row());
        match self.kind {
            JoinKind::Left | JoinKind::Full => {
                self.out
                    .extend(std::iter::repeat_n(Value::Null, self.inner_width));
                true
            }
            JoinKind::Anti => true,
            _ => false,
        }
    }

    /// The next unmatched row of the finished group (RIGHT / FULL), in
    /// `out`; false when there is none left.
    fn next_unmatched_group_row(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if !self.group_loaded || !self.keeps_unmatched_inner() {
            return Ok(false);
        }
        while self.cursor.advance(&self.group)? {
            ec.tick()?;
            if !self.group_matched[self.cursor.index()] {
                let row = self.cursor.row(&self.group).to_vec();
                self.null_outer(&row);
                return Ok(true);
            }
        }
        Ok(false)
    }
}

impl ExecNode for MergeJoinNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        loop {
            match self.step {
                Step::Done => return Ok(false),
                Step::NextOuter => {
                    ec.tick()?;
                    if !self.outer.next(ec)? {
                        self.step = Step::Draining;
                        if self.group_loaded {
                            self.cursor = self.group.cursor();
                        }
                        continue;
                    }
                    let mut key = std::mem::take(&mut self.outer_key);
                    eval_keys(self.outer_keys, self.outer.row(), ec, &mut key)?;
                    self.outer_key = key;
                    self.outer_matched = false;
                    if has_null(&self.outer_key) {
                        // Matches nothing.
                        if self.unmatched_outer() {
                            return Ok(true);
                        }
                        continue;
                    }
                    self.step = Step::Placing;
                }
                Step::Placing => {
                    if self.group_loaded {
                        match cmp_keys(&self.group_key, &self.outer_key) {
                            Ordering::Equal => {
                                self.cursor = self.group.cursor();
                                self.step = Step::Joining;
                            }
                            Ordering::Greater => {
                                // No inner row has this key.
                                self.step = Step::NextOuter;
                                if self.unmatched_outer() {
                                    return Ok(true);
                                }
                            }
                            Ordering::Less => {
                                // The group is behind: done with it.
                                if self.keeps_unmatched_inner() {
                                    self.cursor = self.group.cursor();
                                    self.step = Step::DrainingGroup;
                                } else {
                                    self.group_loaded = false;
                                }
                            }
                        }
                        continue;
                    }
                    let target = std::mem::take(&mut self.outer_key);
                    let skipped = self.load_group(Some(&target), ec);
                    self.outer_key = target;
                    if let Some(row) = skipped? {
                        // An inner row below the key or with a NULL key:
                        // nothing matches it (RIGHT / FULL).
                        self.null_outer(&row);
                        return Ok(true);
                    }
                    if !self.group_loaded {
                        // The inner side ended.
                        self.step = Step::NextOuter;
                        if self.unmatched_outer() {
                            return Ok(true);
                        }
                    }
                }
                Step::DrainingGroup => {
                    if self.next_unmatched_group_row(ec)? {
                        return Ok(true);
                    }
                    self.group_loaded = false;
                    self.step = Step::Placing;
                }
                Step::Joining => {
                    if !self.cursor.advance(&self.group)? {
                        // The group is done for this outer row.
                        self.step = Step::NextOuter;
                        if !self.outer_matched && self.unmatched_outer() {
                            return Ok(true);
                        }
                        continue;
                    }
                    ec.tick()?;
                    self.out.clear();
                    self.out.extend_from_slice(self.outer.row());
                    self.out.extend_from_slice(self.cursor.row(&self.group));
                    if !super::join_qual_passes(self.qual, &self.out, ec)? {
                        continue;
                    }
                    self.outer_matched = true;
                    self.group_matched[self.cursor.index()] = true;
                    match self.kind {
                        JoinKind::Semi => {
                            self.step = Step::NextOuter;
                            self.out.truncate(self.outer_width);
                            return Ok(true);
                        }
                        JoinKind::Anti => self.step = Step::NextOuter,
                        _ => return Ok(true),
                    }
                }
                Step::Draining => {
                    // The group's unmatched rows first, then the rest.
                    if self.next_unmatched_group_row(ec)? {
                        return Ok(true);
                    }
                    self.group_loaded = false;
                    if !self.keeps_unmatched_inner() {
                        self.step = Step::Done;
                        continue;
                    }
                    match self.next_inner(ec)? {
                        Some((_, row)) => {
                            self.null_outer(&row);
                            return Ok(true);
                        }
                        None => self.step = Step::Done,
                    }
                }
            }
        }
    }

    fn row(&self) -> &[Value] {
        &self.out
    }
}
