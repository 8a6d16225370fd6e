//! Sort, Unique, hashed DISTINCT and Limit (PostgreSQL's nodeSort,
//! nodeUnique, nodeAgg used for DISTINCT, nodeLimit).
//!
//! Sort is the one blocking node here: it reads its input whole, then
//! sorts it — in memory, or past `work_mem` as an external merge sort
//! over temporary files (`spill.rs`) — with PostgreSQL's NULL placement (NULLs sort as larger than
//! any value: last ascending, first descending, unless NULLS FIRST/LAST
//! says otherwise). Unique streams over sorted input (DISTINCT ON keeps
//! the first row of each run); HashDistinct streams the first occurrence
//! of each row, remembering what it has seen. Limit evaluates LIMIT and
//! OFFSET once, and stops pulling from its input as soon as it is done —
//! a `LIMIT 1` over a scan reads one row.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::execnodes::{ExecNode, Node};
use super::spill::{row_bytes, Partitions, Spill, TempFile};
use super::{eval_count, Ectx};
use crate::expr::Expr;
use crate::planner::SortKey;
use pgtypes::error::PgResult;
use pgtypes::value::{cmp_for_sort, Value};
use storage::keycodec::encode_key_value;

/// Orders two rows by `keys`.
pub fn compare_rows(keys: &[SortKey], a: &[Value], b: &[Value]) -> Ordering {
    for k in keys {
        let (x, y) = (&a[k.column], &b[k.column]);
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if k.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if k.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            _ => {
                let o = cmp_for_sort(x, y);
                if k.desc {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// A running sort: in memory while its rows fit `work_mem`, else an
/// external merge sort (sorted runs in temporary files, merged).
pub struct SortNode<'p> {
    input: Node<'p>,
    keys: &'p [SortKey],
    out: Option<Sorted<'p>>,
    row: Vec<Value>,
}

enum Sorted<'p> {
    Memory(std::vec::IntoIter<Vec<Value>>),
    Merge(Merge<'p>),
}

impl<'p> SortNode<'p> {
    /// Reads its input on the first `next`.
    pub fn new(input: Node<'p>, keys: &'p [SortKey]) -> Self {
        SortNode {
            input,
            keys,
            out: None,
            row: Vec::new(),
        }
    }

    /// Reads the input whole. Each time the rows held pass `work_mem`
    /// they are sorted and written out as a run; with runs, the rest
    /// becomes the last one and the runs are merged, `fanin` at a time
    /// in passes until one merge can produce the output. Runs stay in
    /// input order through every pass, so rows with equal keys come out
    /// in input order, as from the in-memory sort.
    fn fill(&mut self, ec: &mut Ectx<'_>) -> PgResult<Sorted<'p>> {
        let spill = Spill::new(ec);
        let keys = self.keys;
        let mut rows = Vec::new();
        let mut mem = 0;
        let mut runs = Vec::new();
        while self.input.next(ec)? {
            ec.tick()?;
            let row = self.input.row().to_vec();
            mem += row_bytes(&row);
            rows.push(row);
            if mem > spill.work_mem {
                runs.push(write_run(&spill, &mut rows, keys, ec)?);
                mem = 0;
            }
        }
        ec.check_interrupts()?;
        if runs.is_empty() {
            rows.sort_by(|a, b| compare_rows(keys, a, b));
            return Ok(Sorted::Memory(rows.into_iter()));
        }
        if !rows.is_empty() {
            runs.push(write_run(&spill, &mut rows, keys, ec)?);
        }
        // Each run being merged reads through its own buffer.
        let fanin = (spill.work_mem / 16_384).clamp(6, 256);
        while runs.len() > fanin {
            let mut next = Vec::with_capacity(runs.len().div_ceil(fanin));
            let mut it = runs.into_iter().peekable();
            while it.peek().is_some() {
                let group: Vec<TempFile> = it.by_ref().take(fanin).collect();
                let mut merge = Merge::new(group, keys)?;
                let mut run = spill.file();
                while let Some(r) = merge.next()? {
                    ec.tick()?;
                    run.write_row(&r)?;
                }
                run.rewind()?;
                next.push(run);
            }
            runs = next;
        }
        Ok(Sorted::Merge(Merge::new(runs, keys)?))
    }
}

/// Sorts `rows` and writes them as a run ready to be read.
fn write_run(
    spill: &Spill,
    rows: &mut Vec<Vec<Value>>,
    keys: &[SortKey],
    ec: &mut Ectx<'_>,
) -> PgResult<TempFile> {
    ec.check_interrupts()?;
    rows.sort_by(|a, b| compare_rows(keys, a, b));
    let mut run = spill.file();
    for r in rows.drain(..) {
        run.write_row(&r)?;
    }
    run.rewind()?;
    Ok(run)
}

/// The next row of each run, smallest first.
struct Head<'p> {
    keys: &'p [SortKey],
    row: Vec<Value>,
    run: usize,
}

impl PartialEq for Head<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Head<'_> {}
impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head<'_> {
    /// Reversed (BinaryHeap is a max-heap); an earlier run first on ties.
    fn cmp(&self, other: &Self) -> Ordering {
        compare_rows(self.keys, &other.row, &self.row).then(other.run.cmp(&self.run))
    }
}

/// A k-way merge of sorted runs.
struct Merge<'p> {
    runs: Vec<TempFile>,
    heap: BinaryHeap<Head<'p>>,
}

impl<'p> Merge<'p> {
    fn new(mut runs: Vec<TempFile>, keys: &'p [SortKey]) -> PgResult<Merge<'p>> {
        let mut heap = BinaryHeap::with_capacity(runs.len());
        for (i, f) in runs.iter_mut().enumerate() {
            let mut row = Vec::new();
            if f.read_row(&mut row)? {
                heap.push(Head { keys, row, run: i });
            }
        }
        Ok(Merge { runs, heap })
    }

    fn next(&mut self) -> PgResult<Option<Vec<Value>>> {
        let Some(mut head) = self.heap.pop() else {
            return Ok(None);
        };
        let mut row = Vec::with_capacity(head.row.len());
        if self.runs[head.run].read_row(&mut row)? {
            std::mem::swap(&mut head.row, &mut row);
            self.heap.push(head);
            Ok(Some(row))
        } else {
            Ok(Some(head.row))
        }
    }
}

impl ExecNode for SortNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.out.is_none() {
            self.out = Some(self.fill(ec)?);
        }
        let next = match self.out.as_mut() {
            Some(Sorted::Memory(rows)) => rows.next(),
            Some(Sorted::Merge(m)) => {
                ec.tick()?;
                m.next()?
            }
            None => None,
        };
        match next {
            Some(r) => {
                self.row = r;
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}

/// The key bytes of `columns` of `row` (cleared first).
pub(crate) fn encode_columns(row: &[Value], columns: &[usize], kb: &mut Vec<u8>) {
    kb.clear();
    for &c in columns {
        encode_key_value(&row[c], kb);
    }
}

/// Drops a row equal (on `columns`) to the one before it.
pub struct UniqueNode<'p> {
    input: Node<'p>,
    columns: &'p [usize],
    prev: Option<Vec<u8>>,
    kb: Vec<u8>,
}

impl<'p> UniqueNode<'p> {
    /// Over sorted input.
    pub fn new(input: Node<'p>, columns: &'p [usize]) -> Self {
        UniqueNode {
            input,
            columns,
            prev: None,
            kb: Vec::new(),
        }
    }
}

impl ExecNode for UniqueNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        loop {
            if !self.input.next(ec)? {
                return Ok(false);
            }
            ec.tick()?;
            encode_columns(self.input.row(), self.columns, &mut self.kb);
            if self.prev.as_deref() == Some(self.kb.as_slice()) {
                continue;
            }
            match &mut self.prev {
                Some(p) => {
                    p.clear();
                    p.extend_from_slice(&self.kb);
                }
                None => self.prev = Some(self.kb.clone()),
            }
            return Ok(true);
        }
    }
    fn row(&self) -> &[Value] {
        self.input.row()
    }
}

/// Streams the first row of each distinct value of `columns`. Past
/// `work_mem` of remembered keys it remembers no new one: a row whose key
/// is not remembered then goes to a partition file by a hash of its key,
/// and the partitions are made distinct the same way after the input (a
/// key is either remembered from its first row on or never, so each key
/// is emitted once).
pub struct HashDistinctNode<'p> {
    input: Node<'p>,
    columns: &'p [usize],
    seen: super::spill::KeySet,
    kb: Vec<u8>,
    spill: Option<Spill>,
    mem: usize,
    full: bool,
    parts: Partitions,
    pending: Vec<(TempFile, u64)>,
    /// The partition being read (None: the input), and its depth.
    src: Option<TempFile>,
    level: u64,
    row: Vec<Value>,
}

impl<'p> HashDistinctNode<'p> {
    /// Over any input.
    pub fn new(input: Node<'p>, columns: &'p [usize]) -> Self {
        HashDistinctNode {
            input,
            columns,
            seen: Default::default(),
            kb: Vec::new(),
            spill: None,
            mem: 0,
            full: false,
            parts: Partitions::new(0),
            pending: Vec::new(),
            src: None,
            level: 0,
            row: Vec::new(),
        }
    }

    /// Ends a pass: its partitions wait their turn; the next one starts.
    /// False when none is left.
    fn next_pass(&mut self) -> PgResult<bool> {
        std::mem::replace(&mut self.parts, Partitions::new(0)).finish(&mut self.pending)?;
        let Some((f, level)) = self.pending.pop() else {
            self.src = None;
            return Ok(false);
        };
        self.src = Some(f);
        self.level = level;
        self.parts = Partitions::new(level);
        self.seen.clear();
        self.mem = 0;
        self.full = false;
        Ok(true)
    }
}

impl ExecNode for HashDistinctNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.spill.is_none() {
            self.spill = Some(Spill::new(ec));
        }
        loop {
            let got = match &mut self.src {
                None => self.input.next(ec)?,
                Some(f) => f.read_row(&mut self.row)?,
            };
            if !got {
                if (self.parts.any() || self.src.is_some()) && self.next_pass()? {
                    continue;
                }
                return Ok(false);
            }
            ec.tick()?;
            let row = match self.src {
                None => self.input.row(),
                Some(_) => &self.row,
            };
            encode_columns(row, self.columns, &mut self.kb);
            if self.seen.contains(&self.kb) {
                continue;
            }
            if self.full {
                let spill = self.spill.as_ref().ok_or_else(|| {
                    pgtypes::error::PgError::internal("DISTINCT before its start")
                })?;
                self.parts.write(spill, &self.kb, row, None)?;
                continue;
            }
            self.mem += 2 * self.kb.len() + 48;
            self.full = self.mem > self.spill.as_ref().map_or(usize::MAX, |s| s.hash_mem);
            self.seen.insert(self.kb.clone());
            return Ok(true);
        }
    }
    fn row(&self) -> &[Value] {
        match self.src {
            None => self.input.row(),
            Some(_) => &self.row,
        }
    }
}

/// LIMIT / OFFSET.
pub struct LimitNode<'p> {
    input: Node<'p>,
    limit: Option<&'p Expr>,
    offset: Option<&'p Expr>,
    state: Option<(Option<u64>, u64)>,
    emitted: u64,
    ties: Option<&'p [usize]>,
    /// WITH TIES: the last row within the limit.
    last: Option<Vec<Value>>,
    done: bool,
}

impl<'p> LimitNode<'p> {
    /// Bounds are evaluated on the first `next`.
    pub fn new(
        input: Node<'p>,
        limit: Option<&'p Expr>,
        offset: Option<&'p Expr>,
        ties: Option<&'p [usize]>,
    ) -> Self {
        LimitNode {
            input,
            limit,
            offset,
            state: None,
            emitted: 0,
            ties,
            last: None,
            done: false,
        }
    }
}

impl ExecNode for LimitNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.state.is_none() {
            let limit = eval_count(ec, self.limit, "LIMIT", "2201W")?;
            let offset = eval_count(ec, self.offset, "OFFSET", "2201X")?.unwrap_or(0);
            self.state = Some((limit, offset));
            if limit != Some(0) {
                for _ in 0..offset {
                    if !self.input.next(ec)? {
                        self.state = Some((Some(0), 0));
                        break;
                    }
                    ec.tick()?;
                }
            }
        }
        let Some((limit, _)) = self.state else {
            return Ok(false);
        };
        if self.done {
            return Ok(false);
        }
        if limit.is_some_and(|l| self.emitted >= l) {
            // WITH TIES: rows peer to the last one within the limit.
            let (Some(cols), Some(last)) = (self.ties, self.last.as_ref()) else {
                return Ok(false);
            };
            if !self.input.next(ec)? {
                self.done = true;
                return Ok(false);
            }
            let row = self.input.row();
            let same = cols.iter().all(|&c| {
                let mut a = Vec::new();
                let mut b = Vec::new();
                encode_key_value(&row[c], &mut a);
                encode_key_value(&last[c], &mut b);
                a == b
            });
            if !same {
                self.done = true;
            }
            return Ok(same);
        }
        if !self.input.next(ec)? {
            return Ok(false);
        }
        self.emitted += 1;
        if self.ties.is_some() && limit == Some(self.emitted) {
            self.last = Some(self.input.row().to_vec());
        }
        Ok(true)
    }
    fn row(&self) -> &[Value] {
        self.input.row()
    }
}
