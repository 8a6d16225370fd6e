//! Window functions (PostgreSQL's nodeWindowAgg).
//!
//! The input arrives sorted by the window's PARTITION BY keys, then its
//! ORDER BY keys (the planner puts a Sort below). The node works one
//! partition at a time: it reads the rows whose PARTITION BY keys encode
//! to the same bytes (one row beyond, which starts the next partition)
//! into a [`TupleStore`] — in memory up to `work_mem`, then in a temporary
//! file, as PostgreSQL's WindowAgg keeps its partition in a tuplestore —
//! and streams them out one by one, computing every window function of
//! the row as it goes, before reading on. What it holds beyond the store
//! is the start of each peer group (rows with equal ORDER BY keys are
//! *peers*) and one running state per function. Each output row is the
//! input row followed by one value per window function of the node.
//!
//! * row_number, rank, dense_rank, percent_rank, cume_dist and ntile read
//!   only the row's position and its peer group.
//! * lag / lead read the row `offset` rows away in the partition (or the
//!   default, evaluated on the current row).
//! * first_value, last_value, nth_value and every aggregate read the
//!   row's *frame*: ROWS counts rows, GROUPS counts peer groups, RANGE
//!   compares ORDER BY values (an offset bound is `key ∓ offset`,
//!   computed by the planner's expression; rows with a NULL key frame
//!   their NULL peers). An aggregate whose frame starts at UNBOUNDED
//!   PRECEDING is computed incrementally (frame ends only move forward);
//!   any other frame is re-aggregated per row, reusing the previous
//!   row's value when the frame is the same (peers under RANGE / GROUPS).

use std::cmp::Ordering;

use super::execnodes::{ExecNode, Node};
use super::spill::{StoreReader, TupleStore};
use super::Ectx;
use crate::expr::window::{FrameBound, FrameUnits, WinFunc, WindowCall};
use crate::expr::Expr;
use crate::functions::Accumulator;
use crate::planner::SortKey;
use pgtypes::error::{PgError, PgResult};
use pgtypes::value::{cmp_for_sort, Value};

/// A running WindowAgg.
pub struct WindowAggNode<'p> {
    input: Node<'p>,
    funcs: &'p [WindowCall],
    partition: &'p [usize],
    order: &'p [SortKey],
    order_cols: Vec<usize>,
    /// The current partition's rows (None before the first is read).
    store: Option<TupleStore>,
    reader: StoreReader,
    grouping: Grouping,
    /// [`Partition::not_null`] of the current partition.
    not_null: Option<(usize, usize)>,
    /// One per function: what it carries from row to row.
    states: Vec<FuncState>,
    /// The partition's row to return next.
    next_row: usize,
    /// The first row of the next partition, read past this one's end.
    lookahead: Option<Vec<Value>>,
    input_done: bool,
    vals: Vec<Value>,
    out: Vec<Value>,
}

impl<'p> WindowAggNode<'p> {
    /// Reads its first partition on the first `next`.
    pub fn new(
        input: Node<'p>,
        funcs: &'p [WindowCall],
        partition: &'p [usize],
        order: &'p [SortKey],
    ) -> Self {
        WindowAggNode {
            input,
            funcs,
            partition,
            order,
            order_cols: order.iter().map(|k| k.column).collect(),
            store: None,
            reader: StoreReader::default(),
            grouping: Grouping::default(),
            not_null: None,
            states: Vec::new(),
            next_row: 0,
            lookahead: None,
            input_done: false,
            vals: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Reads the next partition into the store; false at the input's end.
    fn read_partition(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        let store = self.store.get_or_insert_with(|| TupleStore::new(ec));
        store.clear();
        self.reader.reset();
        self.grouping.starts.clear();
        self.not_null = None;
        self.next_row = 0;
        let (partition, order_cols) = (self.partition, &self.order_cols);
        match self.lookahead.take() {
            Some(r) => {
                self.grouping.add(store, &r, true, partition, order_cols)?;
            }
            None => {
                if self.input_done || !self.input.next(ec)? {
                    self.input_done = true;
                    return Ok(false);
                }
                let row = self.input.row();
                self.grouping.add(store, row, true, partition, order_cols)?;
            }
        }
        loop {
            if !self.input.next(ec)? {
                self.input_done = true;
                break;
            }
            ec.tick()?;
            let row = self.input.row();
            if !self
                .grouping
                .add(store, row, false, partition, order_cols)?
            {
                self.lookahead = Some(row.to_vec());
                break;
            }
        }
        store.finish()?;
        self.states.clear();
        self.states
            .extend(self.funcs.iter().map(|_| FuncState::default()));
        Ok(true)
    }
}

/// How rows are grouped as a partition is read: the encoded keys of the
/// partition and of its current peer group, and where each group starts.
#[derive(Default)]
struct Grouping {
    part_key: Vec<u8>,
    peer_key: Vec<u8>,
    key: Vec<u8>,
    /// The index of each peer group's first row, in order.
    starts: Vec<usize>,
}

impl Grouping {
    /// Adds `row` to `store`, the partition being read (`first`: its first
    /// row): false, and nothing added, when it starts the next partition.
    fn add(
        &mut self,
        store: &mut TupleStore,
        row: &[Value],
        first: bool,
        partition: &[usize],
        order_cols: &[usize],
    ) -> PgResult<bool> {
        self.key.clear();
        super::sort::encode_columns(row, partition, &mut self.key);
        if first {
            std::mem::swap(&mut self.part_key, &mut self.key);
        } else if self.key != self.part_key {
            return Ok(false);
        }
        self.key.clear();
        super::sort::encode_columns(row, order_cols, &mut self.key);
        if first || self.key != self.peer_key {
            self.starts.push(store.len());
            std::mem::swap(&mut self.peer_key, &mut self.key);
        }
        store.push(row)?;
        Ok(true)
    }
}

impl ExecNode for WindowAggNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        loop {
            let next_row = self.next_row;
            if let Some(store) = self.store.as_ref().filter(|s| next_row < s.len()) {
                let n = store.len();
                ec.tick()?;
                let i = self.next_row;
                self.next_row += 1;
                let mut part = Partition {
                    store,
                    reader: &mut self.reader,
                    n,
                    groups: &self.grouping.starts,
                    order: self.order,
                    not_null: &mut self.not_null,
                };
                self.vals.clear();
                for (f, st) in self.funcs.iter().zip(self.states.iter_mut()) {
                    let v = st.value(f, &mut part, i, ec)?;
                    self.vals.push(v);
                }
                let row = part.row(i)?;
                self.out.clear();
                self.out.extend_from_slice(row);
                self.out.append(&mut self.vals);
                return Ok(true);
            }
            if !self.read_partition(ec)? {
                return Ok(false);
            }
        }
    }
    fn row(&self) -> &[Value] {
        &self.out
    }
}

/// What a window function carries from one row of a partition to the next.
#[derive(Default)]
struct FuncState {
    /// ntile's bucket count, read on the partition's first row.
    ntile: Option<Option<i64>>,
    /// An aggregate over frames starting at the partition's first row: the
    /// running state and how many rows it has been fed.
    running: Option<(Accumulator, usize)>,
    /// Any other aggregate: the last frame and its value.
    last: Option<(usize, usize, Value)>,
    /// Its inputs of rows `inputs_from..`, evaluated once while frames
    /// slide over them (at most [`CACHED_INPUTS`]).
    inputs: std::collections::VecDeque<Option<crate::functions::AggInput>>,
    inputs_from: usize,
    /// Where the last row's RANGE offset frame started and ended: the
    /// next row's bounds are searched from there.
    range_hint: [usize; 2],
}

impl FuncState {
    /// Function `f`'s value on row `i` (rows come in order).
    fn value(
        &mut self,
        f: &WindowCall,
        part: &mut Partition<'_>,
        i: usize,
        ec: &mut Ectx<'_>,
    ) -> PgResult<Value> {
        let n = part.n;
        Ok(match &f.func {
            WinFunc::RowNumber => Value::Int8(i as i64 + 1),
            WinFunc::Rank => Value::Int8(part.group(i).0 as i64 + 1),
            WinFunc::DenseRank => Value::Int8(part.group_index(i) as i64 + 1),
            WinFunc::PercentRank => {
                let r = part.group(i).0 as f64;
                Value::Float8(if n > 1 { r / (n - 1) as f64 } else { 0.0 })
            }
            WinFunc::CumeDist => Value::Float8(part.group(i).1 as f64 / n as f64),
            WinFunc::Ntile => {
                let k = match self.ntile {
                    Some(k) => k,
                    None => {
                        let k = as_i64(&eval(&f.args[0], part.row(0)?, ec)?);
                        if k.is_some_and(|k| k <= 0) {
                            return Err(PgError::new(
                                "2201G",
                                "argument of ntile must be greater than zero",
                            ));
                        }
                        *self.ntile.insert(k)
                    }
                };
                match k {
                    None => Value::Null,
                    Some(k) => Value::Int4(ntile_bucket(i, n, k as usize) as i32),
                }
            }
            WinFunc::Lag | WinFunc::Lead => {
                let off = match f.args.get(1) {
                    Some(e) => as_i64(&eval(e, part.row(i)?, ec)?),
                    None => Some(1),
                };
                let Some(off) = off else {
                    return Ok(Value::Null);
                };
                let off = if matches!(f.func, WinFunc::Lag) {
                    -off
                } else {
                    off
                };
                let j = (i as i64).saturating_add(off);
                if j >= 0 && j < n as i64 {
                    eval(&f.args[0], part.row(j as usize)?, ec)?
                } else {
                    match f.args.get(2) {
                        Some(d) => eval(d, part.row(i)?, ec)?,
                        None => Value::Null,
                    }
                }
            }
            WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                let (fs, fe) = part.frame(f, i, &mut self.range_hint, ec)?;
                let at = match f.func {
                    WinFunc::FirstValue => (fs < fe).then_some(fs),
                    WinFunc::LastValue => (fs < fe).then(|| fe - 1),
                    _ => {
                        let nth = eval(&f.args[1], part.row(i)?, ec)?;
                        match as_i64(&nth) {
                            None => None,
                            Some(k) if k <= 0 => {
                                return Err(PgError::new(
                                    "2201W",
                                    "argument of nth_value must be greater than zero",
                                ))
                            }
                            Some(k) => {
                                let j = (fs as i64).saturating_add(k - 1);
                                (j < fe as i64).then_some(j as usize)
                            }
                        }
                    }
                };
                match at {
                    Some(j) => eval(&f.args[0], part.row(j)?, ec)?,
                    None => Value::Null,
                }
            }
            WinFunc::Agg(call) => {
                let (fs, fe) = part.frame(f, i, &mut self.range_hint, ec)?;
                if f.frame.start == FrameBound::UnboundedPreceding {
                    // Frame ends only move forward: feed the new rows.
                    let (acc, fed) = self
                        .running
                        .get_or_insert_with(|| (Accumulator::for_call(call), 0));
                    while *fed < fe {
                        part.feed(call, acc, *fed, ec)?;
                        *fed += 1;
                    }
                    acc.finish()?
                } else {
                    if let Some((s, e, v)) = &self.last {
                        if (*s, *e) == (fs, fe) {
                            return Ok(v.clone());
                        }
                    }
                    // Frames only move forward: inputs before this one's
                    // start are not needed again.
                    if fs < self.inputs_from {
                        self.inputs.clear();
                        self.inputs_from = fs;
                    }
                    while self.inputs_from < fs && self.inputs.pop_front().is_some() {
                        self.inputs_from += 1;
                    }
                    if self.inputs.is_empty() {
                        self.inputs_from = fs;
                    }
                    while self.inputs_from + self.inputs.len() < fe
                        && self.inputs.len() < CACHED_INPUTS
                    {
                        let row = part.row(self.inputs_from + self.inputs.len())?;
                        let p = ec.params;
                        let inp = call.inputs(&mut |e| crate::expr::eval(e, row, p, ec))?;
                        self.inputs.push_back(inp);
                    }
                    let mut acc = Accumulator::for_call(call);
                    for j in fs..fe {
                        ec.tick()?;
                        match self.inputs.get(j - self.inputs_from) {
                            Some(Some(inp)) => acc.feed(inp.clone())?,
                            Some(None) => {}
                            None => part.feed(call, &mut acc, j, ec)?,
                        }
                    }
                    let v = acc.finish()?;
                    self.last = Some((fs, fe, v.clone()));
                    v
                }
            }
        })
    }
}

/// Inputs of a sliding frame's rows a [`FuncState`] keeps evaluated: a
/// frame bigger than this evaluates the rest each time it is aggregated.
const CACHED_INPUTS: usize = 4096;

/// The ntile bucket (from 1) of row `i` of `n` split into `k`: the first
/// `n % k` buckets hold one row more than the others.
fn ntile_bucket(i: usize, n: usize, k: usize) -> usize {
    let (per, rem) = (n / k, n % k);
    let big = rem * (per + 1);
    if i < big {
        i / (per + 1) + 1
    } else {
        rem + (i - big) / per.max(1) + 1
    }
}

/// The partition being returned, as the functions read it: its rows by
/// index (from 0), `n` of them, and its peer groups.
struct Partition<'a> {
    store: &'a TupleStore,
    reader: &'a mut StoreReader,
    n: usize,
    /// The index of each peer group's first row.
    groups: &'a [usize],
    order: &'a [SortKey],
    /// The rows whose first ORDER BY key is not NULL (RANGE offsets),
    /// found on first use.
    not_null: &'a mut Option<(usize, usize)>,
}

fn eval(e: &Expr, row: &[Value], ec: &mut Ectx<'_>) -> PgResult<Value> {
    let p = ec.params;
    crate::expr::eval(e, row, p, ec)
}

fn as_i64(v: &Value) -> Option<i64> {
    v.as_i64()
}

impl Partition<'_> {
    /// Row `i` of the partition.
    fn row(&mut self, i: usize) -> PgResult<&[Value]> {
        self.reader.get(self.store, i)
    }

    /// The index of row `i`'s peer group.
    fn group_index(&self, i: usize) -> usize {
        self.groups.partition_point(|&s| s <= i).saturating_sub(1)
    }

    /// Peer group `g`'s rows [start, end).
    fn group_rows(&self, g: usize) -> (usize, usize) {
        let start = self.groups.get(g).copied().unwrap_or(self.n);
        (start, self.groups.get(g + 1).copied().unwrap_or(self.n))
    }

    /// Row `i`'s peer group [start, end).
    fn group(&self, i: usize) -> (usize, usize) {
        self.group_rows(self.group_index(i))
    }

    /// Feeds row `j`'s inputs of aggregate `call` to `acc`.
    fn feed(
        &mut self,
        call: &crate::expr::AggCall,
        acc: &mut Accumulator,
        j: usize,
        ec: &mut Ectx<'_>,
    ) -> PgResult<()> {
        let row = self.row(j)?;
        let p = ec.params;
        if let Some(inp) = call.inputs(&mut |e| crate::expr::eval(e, row, p, ec))? {
            acc.feed(inp)?;
        }
        Ok(())
    }

    /// Row `i`'s frame [start, end) (start <= end). `hints`: where the
    /// previous row's RANGE offset bounds were.
    fn frame(
        &mut self,
        f: &WindowCall,
        i: usize,
        hints: &mut [usize; 2],
        ec: &mut Ectx<'_>,
    ) -> PgResult<(usize, usize)> {
        let s = self.bound(f, &f.frame.start, true, i, &mut hints[0], ec)?;
        let e = self.bound(f, &f.frame.end, false, i, &mut hints[1], ec)?;
        Ok((s, e.max(s)))
    }

    fn offset(&mut self, e: &Expr, start: bool, i: usize, ec: &mut Ectx<'_>) -> PgResult<i64> {
        let which = if start { "starting" } else { "ending" };
        match eval(e, self.row(i)?, ec)? {
            Value::Null => Err(PgError::new(
                "22004",
                format!("frame {which} offset must not be null"),
            )),
            v => match as_i64(&v) {
                Some(n) if n >= 0 => Ok(n),
                _ => Err(PgError::new(
                    "22013",
                    format!("frame {which} offset must not be negative"),
                )),
            },
        }
    }

    fn bound(
        &mut self,
        f: &WindowCall,
        b: &FrameBound,
        start: bool,
        i: usize,
        hint: &mut usize,
        ec: &mut Ectx<'_>,
    ) -> PgResult<usize> {
        let n = self.n as i64;
        let clamp = |x: i64| x.clamp(0, n) as usize;
        Ok(match b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::UnboundedFollowing => self.n,
            FrameBound::CurrentRow => match (f.frame.units, start) {
                (FrameUnits::Rows, true) => i,
                (FrameUnits::Rows, false) => i + 1,
                (_, true) => self.group(i).0,
                (_, false) => self.group(i).1,
            },
            FrameBound::Preceding(e) | FrameBound::Following(e) => {
                let preceding = matches!(b, FrameBound::Preceding(_));
                match f.frame.units {
                    FrameUnits::Rows => {
                        let off = self.offset(e, start, i, ec)?;
                        let j = if preceding {
                            (i as i64).saturating_sub(off)
                        } else {
                            (i as i64).saturating_add(off)
                        };
                        clamp(if start { j } else { j.saturating_add(1) })
                    }
                    FrameUnits::Groups => {
                        let off = self.offset(e, start, i, ec)?;
                        let g = self.group_index(i) as i64;
                        let t = if preceding {
                            g.saturating_sub(off)
                        } else {
                            g.saturating_add(off)
                        };
                        if t < 0 {
                            0
                        } else if t >= self.groups.len() as i64 {
                            self.n
                        } else {
                            let (s, e) = self.group_rows(t as usize);
                            if start {
                                s
                            } else {
                                e
                            }
                        }
                    }
                    FrameUnits::Range => {
                        let at = self.range_bound(e, start, i, *hint, ec)?;
                        *hint = at;
                        at
                    }
                }
            }
        })
    }

    /// A RANGE offset bound: `e` is the bound's value over row `i`;
    /// `hint` where the previous row's was. The bound only moves forward
    /// as rows do (their keys are sorted, the offset is a constant), so it
    /// is searched from the hint outwards: rows near it, which the store's
    /// reader holds decoded even when the partition is in a file.
    fn range_bound(
        &mut self,
        e: &Expr,
        start: bool,
        i: usize,
        hint: usize,
        ec: &mut Ectx<'_>,
    ) -> PgResult<usize> {
        let peers = self.group(i);
        let peer_bound = if start { peers.0 } else { peers.1 };
        let Some(k) = self.order.first() else {
            return Ok(peer_bound);
        };
        let (col, desc) = (k.column, k.desc);
        let row = self.row(i)?;
        if row[col].is_null() {
            return Ok(peer_bound);
        }
        let b = eval(e, row, ec)?;
        if b.is_null() {
            return Err(PgError::new(
                "22004",
                format!(
                    "frame {} offset must not be null",
                    if start { "starting" } else { "ending" }
                ),
            ));
        }
        let (lo, hi) = self.not_null(col)?;
        // Row `p` sorts before the bound (start), or not after it (end):
        // true for a prefix of [lo, hi).
        let before = |part: &mut Self, p: usize| -> PgResult<bool> {
            let o = cmp_for_sort(&part.row(p)?[col], &b);
            let o = if desc { o.reverse() } else { o };
            Ok(if start {
                o == Ordering::Less
            } else {
                o != Ordering::Greater
            })
        };
        // Narrow [lo, hi) around the hint: behind it if the row before it
        // is already past the bound, else galloping forward from it.
        let h = hint.clamp(lo, hi);
        let (mut lo, mut hi) = (lo, hi);
        if h > lo && !before(self, h - 1)? {
            hi = h - 1;
        } else {
            lo = h;
            let mut step = 1;
            while lo < hi {
                let p = (lo + step - 1).min(hi - 1);
                if !before(self, p)? {
                    hi = p;
                    break;
                }
                lo = p + 1;
                step *= 2;
            }
        }
        // The first row of [lo, hi) not before the bound.
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(self, mid)? {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// The rows whose key in column `col` (the first ORDER BY key) is not
    /// NULL: NULLs sort together at one end, as one peer group.
    fn not_null(&mut self, col: usize) -> PgResult<(usize, usize)> {
        if let Some(r) = *self.not_null {
            return Ok(r);
        }
        let (mut lo, mut hi) = (0, self.n);
        if self.n > 0 {
            if self.row(0)?[col].is_null() {
                lo = self.group_rows(0).1;
            } else if self.row(self.n - 1)?[col].is_null() {
                hi = self.group_rows(self.group_index(self.n - 1)).0;
            }
        }
        *self.not_null = Some((lo, hi));
        Ok((lo, hi))
    }
}
