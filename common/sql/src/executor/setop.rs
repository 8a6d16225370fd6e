//! Append and SetOp (PostgreSQL's nodeAppend, nodeSetOp in its hashed
//! form).
//!
//! Append streams each input in turn (UNION ALL; UNION is a HashDistinct
//! over an Append). SetOp reads both inputs, counting each distinct row
//! (NULLs equal, as set operations compare rows) on each side, then emits
//! rows in first-seen order: INTERSECT keeps a row present on both sides
//! (ALL: min(left, right) copies), EXCEPT a row of the left side absent
//! from the right (ALL: left − right copies).
//!
//! Past `work_mem` SetOp makes no new entry: a left row of another value
//! goes to one of 16 partition files by a hash of the row, and so does
//! every right row of a value not held (it may match a spilled left row);
//! the partitions are counted the same way after the rows held are
//! emitted, left rows before right rows as they were read.

use super::spill::KeyMap;

use super::execnodes::{build, ExecNode, Node};
use super::spill::{row_bytes, split_tag, Partitions, Spill, TempFile};
use super::{Ectx, Vis};
use crate::planner::plannodes::{PlanNode, SetOpKind};
use pgtypes::error::{PgError, PgResult};
use pgtypes::value::Value;
use storage::keycodec::encode_key_value;

/// UNION ALL of its inputs.
pub struct AppendNode<'p> {
    inputs: &'p [PlanNode],
    vis: &'p Vis,
    pos: usize,
    cur: Option<Node<'p>>,
}

impl<'p> AppendNode<'p> {
    /// Inputs start one after another.
    pub fn new(inputs: &'p [PlanNode], vis: &'p Vis) -> Self {
        AppendNode {
            inputs,
            vis,
            pos: 0,
            cur: None,
        }
    }
}

impl ExecNode for AppendNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        loop {
            if self.cur.is_none() {
                let Some(p) = self.inputs.get(self.pos) else {
                    return Ok(false);
                };
                self.pos += 1;
                self.cur = Some(build(p, self.vis));
            }
            if let Some(c) = self.cur.as_mut() {
                if c.next(ec)? {
                    return Ok(true);
                }
            }
            self.cur = None;
        }
    }
    fn row(&self) -> &[Value] {
        match &self.cur {
            Some(c) => c.row(),
            None => &[],
        }
    }
}

struct Entry {
    row: Vec<Value>,
    left: u64,
    right: u64,
}

/// INTERSECT / EXCEPT [ALL].
pub struct SetOpNode<'p> {
    left: Node<'p>,
    right: Node<'p>,
    op: SetOpKind,
    all: bool,
    entries: Option<Vec<Entry>>,
    pos: usize,
    left_to_emit: u64,
    spill: Option<Spill>,
    /// Spilled partitions still to count, with their depth.
    pending: Vec<(TempFile, u64)>,
}

impl<'p> SetOpNode<'p> {
    /// Reads both inputs on the first `next`.
    pub fn new(left: Node<'p>, right: Node<'p>, op: SetOpKind, all: bool) -> Self {
        SetOpNode {
            left,
            right,
            op,
            all,
            entries: None,
            pos: 0,
            left_to_emit: 0,
            spill: None,
            pending: Vec::new(),
        }
    }

    fn count(&self, e: &Entry) -> u64 {
        match (self.op, self.all) {
            (SetOpKind::Intersect, true) => e.left.min(e.right),
            (SetOpKind::Intersect, false) => u64::from(e.left > 0 && e.right > 0),
            (SetOpKind::Except, true) => e.left.saturating_sub(e.right),
            (SetOpKind::Except, false) => u64::from(e.left > 0 && e.right == 0),
        }
    }

    /// Counts the inputs (`src` None: left then right) or a spilled
    /// partition at depth `level` into `entries`; spilled partitions are
    /// queued on `pending`.
    fn fill(&mut self, ec: &mut Ectx<'_>, mut src: Option<TempFile>, level: u64) -> PgResult<()> {
        let spill = self
            .spill
            .clone()
            .ok_or_else(|| PgError::internal("set operation before its start"))?;
        let mut entries: Vec<Entry> = Vec::new();
        let mut index: KeyMap<usize> = KeyMap::default();
        let mut parts = Partitions::new(level);
        let (mut mem, mut full, mut spilled_any) = (0usize, false, false);
        let mut kb = Vec::new();
        let mut buf = Vec::new();
        let mut node_side = 0;
        loop {
            let (row, side): (&[Value], usize) = match src.as_mut() {
                None => {
                    let node = if node_side == 0 {
                        &mut self.left
                    } else {
                        &mut self.right
                    };
                    if !node.next(ec)? {
                        if node_side == 0 {
                            node_side = 1;
                            continue;
                        }
                        break;
                    }
                    (node.row(), node_side)
                }
                Some(f) => {
                    if !f.read_row(&mut buf)? {
                        break;
                    }
                    let (row, side) = split_tag(&buf)?;
                    (row, side as usize)
                }
            };
            ec.tick()?;
            kb.clear();
            for v in row {
                encode_key_value(v, &mut kb);
            }
            let i = match index.get(&kb) {
                Some(i) => *i,
                None if side == 1 && !spilled_any => continue, // only left rows can be output
                None if full || side == 1 => {
                    spilled_any = true;
                    parts.write(&spill, &kb, row, Some(side as i32))?;
                    continue;
                }
                None => {
                    mem += row_bytes(row) + 2 * kb.len() + 32;
                    full = mem > spill.hash_mem;
                    entries.push(Entry {
                        row: row.to_vec(),
                        left: 0,
                        right: 0,
                    });
                    index.insert(kb.clone(), entries.len() - 1);
                    entries.len() - 1
                }
            };
            if side == 0 {
                entries[i].left += 1;
            } else {
                entries[i].right += 1;
            }
        }
        drop(src);
        parts.finish(&mut self.pending)?;
        self.entries = Some(entries);
        self.pos = 0;
        self.left_to_emit = 0;
        Ok(())
    }
}

impl ExecNode for SetOpNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.entries.is_none() {
            self.spill = Some(Spill::new(ec));
            self.fill(ec, None, 0)?;
        }
        loop {
            if self.left_to_emit > 0 {
                self.left_to_emit -= 1;
                return Ok(true);
            }
            // Advance to the next entry with copies to emit.
            let n = {
                let entries = self.entries.as_deref().unwrap_or(&[]);
                if self.pos >= entries.len() {
                    match self.pending.pop() {
                        Some((f, level)) => {
                            self.fill(ec, Some(f), level)?;
                            continue;
                        }
                        None => return Ok(false),
                    }
                }
                self.count(&entries[self.pos])
            };
            self.pos += 1;
            if n > 0 {
                self.left_to_emit = n - 1;
                return Ok(true);
            }
        }
    }
    fn row(&self) -> &[Value] {
        match &self.entries {
            Some(e) if self.pos > 0 => &e[self.pos - 1].row,
            _ => &[],
        }
    }
}
