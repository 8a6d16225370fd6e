//! Hash join (PostgreSQL's nodeHash + nodeHashjoin).
//!
//! The inner side is read whole into memory on the first call and hashed
//! on its join keys (the order-preserving key encoding, which maps equal
//! values of the planner's allowed key types to equal bytes); each outer
//! row then probes with its own keys. A NULL key matches nothing, as `=`
//! says. Among key matches the remaining join condition decides.
//!
//! Join types: INNER; LEFT (an outer row without a match is emitted with
//! NULLs); RIGHT and FULL (inner rows are flagged when matched, the
//! others are emitted NULL-extended after the last outer row); SEMI and
//! ANTI (the outer row alone, on its first match / when none). The build
//! loop and the probe loop tick, so both are cancellable.

use std::collections::HashMap;

use super::execnodes::{ExecNode, Node};
use super::Ectx;
use crate::expr::{eval, eval_filter, Expr};
use crate::planner::plannodes::JoinKind;
use pgtypes::error::PgResult;
use pgtypes::value::Value;
use storage::keycodec::encode_key_value;

/// A running hash join.
pub struct HashJoinNode<'p> {
    outer: Node<'p>,
    inner: Node<'p>,
    kind: JoinKind,
    outer_keys: &'p [Expr],
    inner_keys: &'p [Expr],
    qual: Option<&'p Expr>,
    outer_width: usize,
    inner_width: usize,
    built: bool,
    rows: Vec<Vec<Value>>,
    matched: Vec<bool>,
    table: HashMap<Vec<u8>, Vec<usize>>,
    bucket: Vec<usize>,
    pos: usize,
    have_outer: bool,
    outer_matched: bool,
    outer_done: bool,
    tail: usize,
    kb: Vec<u8>,
    out: Vec<Value>,
}

impl<'p> HashJoinNode<'p> {
    /// The hash table is built on the first `next`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        outer: Node<'p>,
        inner: Node<'p>,
        kind: JoinKind,
        outer_keys: &'p [Expr],
        inner_keys: &'p [Expr],
        qual: Option<&'p Expr>,
        outer_width: usize,
        inner_width: usize,
    ) -> Self {
        HashJoinNode {
            outer,
            inner,
            kind,
            outer_keys,
            inner_keys,
            qual,
            outer_width,
            inner_width,
            built: false,
            rows: Vec::new(),
            matched: Vec::new(),
            table: HashMap::new(),
            bucket: Vec::new(),
            pos: 0,
            have_outer: false,
            outer_matched: false,
            outer_done: false,
            tail: 0,
            kb: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Encodes `keys` over `row` into `kb`; false if one is NULL.
    fn key(ec: &mut Ectx<'_>, keys: &[Expr], row: &[Value], kb: &mut Vec<u8>) -> PgResult<bool> {
        kb.clear();
        let p = ec.params;
        for k in keys {
            let v = eval(k, row, p, ec)?;
            if v.is_null() {
                return Ok(false);
            }
            encode_key_value(&v, kb);
        }
        Ok(true)
    }

    fn build_table(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        while self.inner.next(ec)? {
            ec.tick()?;
            let row = self.inner.row();
            let i = self.rows.len();
            if Self::key(ec, self.inner_keys, row, &mut self.kb)? {
                match self.table.get_mut(self.kb.as_slice()) {
                    Some(v) => v.push(i),
                    None => {
                        self.table.insert(self.kb.clone(), vec![i]);
                    }
                }
            } else if !matches!(self.kind, JoinKind::Right | JoinKind::Full) {
                continue; // a NULL key never matches; only outer-joined rows are kept
            }
            self.rows.push(row.to_vec());
        }
        self.matched = vec![false; self.rows.len()];
        Ok(())
    }
}

impl ExecNode for HashJoinNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if !self.built {
            self.built = true;
            self.build_table(ec)?;
            // Nothing to join with: an inner or semi join is empty.
            if self.rows.is_empty() && matches!(self.kind, JoinKind::Inner | JoinKind::Semi) {
                self.outer_done = true;
                self.tail = usize::MAX;
            }
        }
        loop {
            if self.outer_done {
                if matches!(self.kind, JoinKind::Right | JoinKind::Full) {
                    while self.tail < self.rows.len() {
                        let i = self.tail;
                        self.tail += 1;
                        ec.tick()?;
                        if !self.matched[i] {
                            self.out.clear();
                            self.out
                                .extend(std::iter::repeat_n(Value::Null, self.outer_width));
                            self.out.extend_from_slice(&self.rows[i]);
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
                    continue;
                }
                self.have_outer = true;
                self.outer_matched = false;
                self.pos = 0;
                self.bucket.clear();
                if Self::key(ec, self.outer_keys, self.outer.row(), &mut self.kb)? {
                    if let Some(b) = self.table.get(self.kb.as_slice()) {
                        self.bucket.extend_from_slice(b);
                    }
                }
            }
            if let Some(&i) = self.bucket.get(self.pos) {
                self.pos += 1;
                ec.tick()?;
                self.out.clear();
                self.out.extend_from_slice(self.outer.row());
                self.out.extend_from_slice(&self.rows[i]);
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
                self.matched[i] = true;
                match self.kind {
                    JoinKind::Semi => {
                        self.have_outer = false;
                        self.out.truncate(self.outer_width);
                        return Ok(true);
                    }
                    JoinKind::Anti => {
                        self.have_outer = false;
                        continue;
                    }
                    _ => return Ok(true),
                }
            }
            self.have_outer = false;
            if !self.outer_matched {
                match self.kind {
                    JoinKind::Left | JoinKind::Full => {
                        self.out.clear();
                        self.out.extend_from_slice(self.outer.row());
                        self.out
                            .extend(std::iter::repeat_n(Value::Null, self.inner_width));
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
