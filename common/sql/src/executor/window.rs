//! Window functions (PostgreSQL's nodeWindowAgg).
//!
//! The input arrives sorted by the window's PARTITION BY keys, then its
//! ORDER BY keys (the planner puts a Sort below). The node works one
//! partition at a time: it reads the rows whose PARTITION BY keys encode
//! to the same bytes (one row beyond, which starts the next partition),
//! computes every window function over them and streams them out before
//! reading on, so it holds one partition, not its whole input. Rows with
//! equal ORDER BY keys are *peers* (a peer group). Each output row is the
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
use super::Ectx;
use crate::expr::window::{FrameBound, FrameUnits, WinFunc, WindowCall};
use crate::expr::Expr;
use crate::functions::{Accumulator, AggInput};
use crate::planner::SortKey;
use pgtypes::error::{PgError, PgResult};
use pgtypes::value::{cmp_for_sort, Value};

/// A running WindowAgg.
pub struct WindowAggNode<'p> {
    input: Node<'p>,
    funcs: &'p [WindowCall],
    partition: &'p [usize],
    order: &'p [SortKey],
    /// The current partition's rows, with their window values.
    rows: std::vec::IntoIter<Vec<Value>>,
    /// The first row of the next partition, read past this one's end.
    lookahead: Option<Vec<Value>>,
    input_done: bool,
    out: Vec<Value>,
}

fn encode_cols(row: &[Value], cols: &[usize]) -> Vec<u8> {
    let mut k = Vec::new();
    super::sort::encode_columns(row, cols, &mut k);
    k
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
            rows: Vec::new().into_iter(),
            lookahead: None,
            input_done: false,
            out: Vec::new(),
        }
    }

    /// The next partition's rows, in input order (empty at the end).
    fn read_partition(&mut self, ec: &mut Ectx<'_>) -> PgResult<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        match self.lookahead.take() {
            Some(r) => rows.push(r),
            None => {
                if self.input_done || !self.input.next(ec)? {
                    self.input_done = true;
                    return Ok(rows);
                }
                rows.push(self.input.row().to_vec());
            }
        }
        let pk = encode_cols(&rows[0], self.partition);
        loop {
            if !self.input.next(ec)? {
                self.input_done = true;
                break;
            }
            ec.tick()?;
            let row = self.input.row();
            if encode_cols(row, self.partition) != pk {
                self.lookahead = Some(row.to_vec());
                break;
            }
            rows.push(row.to_vec());
        }
        Ok(rows)
    }

    /// One partition's rows, each followed by its window values.
    fn compute(
        &mut self,
        ec: &mut Ectx<'_>,
        mut rows: Vec<Vec<Value>>,
    ) -> PgResult<Vec<Vec<Value>>> {
        let order_cols: Vec<usize> = self.order.iter().map(|k| k.column).collect();
        let mut results: Vec<Vec<Value>> = vec![Vec::with_capacity(self.funcs.len()); rows.len()];
        let (ps, pe) = (0, rows.len());
        // Peer groups.
        let mut group_of = Vec::with_capacity(pe - ps);
        let mut bounds: Vec<(usize, usize)> = Vec::new();
        let mut prev: Option<Vec<u8>> = None;
        for (i, row) in rows.iter().enumerate() {
            let k = encode_cols(row, &order_cols);
            if prev.as_ref() != Some(&k) {
                if let Some(last) = bounds.last_mut() {
                    last.1 = i;
                }
                bounds.push((i, pe));
                prev = Some(k);
            }
            group_of.push(bounds.len() - 1);
        }
        let part = Partition {
            rows: &rows,
            ps,
            pe,
            group_of,
            bounds,
            order: self.order,
        };
        for f in self.funcs {
            let vals = part.run(f, ec)?;
            for (i, v) in vals.into_iter().enumerate() {
                results[ps + i].push(v);
            }
        }
        for (row, r) in rows.iter_mut().zip(results) {
            row.extend(r);
        }
        Ok(rows)
    }
}

impl ExecNode for WindowAggNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        loop {
            if let Some(r) = self.rows.next() {
                self.out = r;
                return Ok(true);
            }
            let rows = self.read_partition(ec)?;
            if rows.is_empty() {
                return Ok(false);
            }
            self.rows = self.compute(ec, rows)?.into_iter();
        }
    }
    fn row(&self) -> &[Value] {
        &self.out
    }
}

struct Partition<'a> {
    rows: &'a [Vec<Value>],
    ps: usize,
    pe: usize,
    /// Peer group of each row (index relative to `ps`).
    group_of: Vec<usize>,
    /// Each peer group's rows [start, end) (absolute).
    bounds: Vec<(usize, usize)>,
    order: &'a [SortKey],
}

fn eval(e: &Expr, row: &[Value], ec: &mut Ectx<'_>) -> PgResult<Value> {
    let p = ec.params;
    crate::expr::eval(e, row, p, ec)
}

fn as_i64(v: &Value) -> Option<i64> {
    v.as_i64()
}

impl Partition<'_> {
    fn len(&self) -> usize {
        self.pe - self.ps
    }

    fn group(&self, i: usize) -> (usize, usize) {
        self.bounds[self.group_of[i - self.ps]]
    }

    fn run(&self, f: &WindowCall, ec: &mut Ectx<'_>) -> PgResult<Vec<Value>> {
        let n = self.len();
        let mut out = Vec::with_capacity(n);
        match &f.func {
            WinFunc::RowNumber => out.extend((1..=n as i64).map(Value::Int8)),
            WinFunc::Rank => {
                for i in self.ps..self.pe {
                    out.push(Value::Int8((self.group(i).0 - self.ps + 1) as i64));
                }
            }
            WinFunc::DenseRank => {
                out.extend(self.group_of.iter().map(|g| Value::Int8(*g as i64 + 1)))
            }
            WinFunc::PercentRank => {
                for i in self.ps..self.pe {
                    let r = (self.group(i).0 - self.ps) as f64;
                    out.push(Value::Float8(if n > 1 { r / (n - 1) as f64 } else { 0.0 }));
                }
            }
            WinFunc::CumeDist => {
                for i in self.ps..self.pe {
                    let e = (self.group(i).1 - self.ps) as f64;
                    out.push(Value::Float8(e / n as f64));
                }
            }
            WinFunc::Ntile => {
                let k = eval(&f.args[0], &self.rows[self.ps], ec)?;
                let Some(k) = as_i64(&k) else {
                    out.extend((0..n).map(|_| Value::Null));
                    return Ok(out);
                };
                if k <= 0 {
                    return Err(PgError::new(
                        "2201G",
                        "argument of ntile must be greater than zero",
                    ));
                }
                let k = k as usize;
                let per = n / k;
                let rem = n % k;
                let mut bucket = 1;
                let mut left = if rem > 0 { per + 1 } else { per };
                for _ in 0..n {
                    while left == 0 {
                        bucket += 1;
                        left = if bucket <= rem { per + 1 } else { per };
                    }
                    out.push(Value::Int4(bucket as i32));
                    left -= 1;
                }
            }
            WinFunc::Lag | WinFunc::Lead => {
                for i in self.ps..self.pe {
                    let row = &self.rows[i];
                    let off = match f.args.get(1) {
                        Some(e) => as_i64(&eval(e, row, ec)?),
                        None => Some(1),
                    };
                    let Some(off) = off else {
                        out.push(Value::Null);
                        continue;
                    };
                    let off = if matches!(f.func, WinFunc::Lag) {
                        -off
                    } else {
                        off
                    };
                    let j = i as i64 + off;
                    if j >= self.ps as i64 && j < self.pe as i64 {
                        out.push(eval(&f.args[0], &self.rows[j as usize], ec)?);
                    } else {
                        out.push(match f.args.get(2) {
                            Some(d) => eval(d, row, ec)?,
                            None => Value::Null,
                        });
                    }
                }
            }
            WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                for i in self.ps..self.pe {
                    ec.tick()?;
                    let (fs, fe) = self.frame(f, i, ec)?;
                    let at = match f.func {
                        WinFunc::FirstValue => (fs < fe).then_some(fs),
                        WinFunc::LastValue => (fs < fe).then(|| fe - 1),
                        _ => {
                            let nth = eval(&f.args[1], &self.rows[i], ec)?;
                            match as_i64(&nth) {
                                None => None,
                                Some(k) if k <= 0 => {
                                    return Err(PgError::new(
                                        "2201W",
                                        "argument of nth_value must be greater than zero",
                                    ))
                                }
                                Some(k) => {
                                    let j = fs as i64 + k - 1;
                                    (j < fe as i64).then_some(j as usize)
                                }
                            }
                        }
                    };
                    out.push(match at {
                        Some(j) => eval(&f.args[0], &self.rows[j], ec)?,
                        None => Value::Null,
                    });
                }
            }
            WinFunc::Agg(call) => {
                let mut inputs: Vec<Option<AggInput>> = Vec::with_capacity(n);
                for i in self.ps..self.pe {
                    let row = &self.rows[i];
                    let p = ec.params;
                    inputs.push(call.inputs(&mut |e| crate::expr::eval(e, row, p, ec))?);
                }
                let feed = |acc: &mut Accumulator, inp: &Option<AggInput>| -> PgResult<()> {
                    if let Some(inp) = inp {
                        acc.feed(AggInput {
                            value: inp.value.clone(),
                            extra: inp.extra.clone(),
                            keys: inp.keys.clone(),
                        })?;
                    }
                    Ok(())
                };
                if f.frame.start == FrameBound::UnboundedPreceding {
                    let mut acc = Accumulator::for_call(call);
                    let mut fed = self.ps;
                    for i in self.ps..self.pe {
                        ec.tick()?;
                        let (_, fe) = self.frame(f, i, ec)?;
                        while fed < fe {
                            feed(&mut acc, &inputs[fed - self.ps])?;
                            fed += 1;
                        }
                        out.push(acc.finish()?);
                    }
                } else {
                    let mut last: Option<(usize, usize, Value)> = None;
                    for i in self.ps..self.pe {
                        ec.tick()?;
                        let (fs, fe) = self.frame(f, i, ec)?;
                        if let Some((s, e, v)) = &last {
                            if *s == fs && *e == fe {
                                out.push(v.clone());
                                continue;
                            }
                        }
                        let mut acc = Accumulator::for_call(call);
                        for inp in &inputs[(fs - self.ps)..(fe - self.ps)] {
                            feed(&mut acc, inp)?;
                        }
                        let v = acc.finish()?;
                        out.push(v.clone());
                        last = Some((fs, fe, v));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Row `i`'s frame [start, end) (absolute indexes, start <= end).
    fn frame(&self, f: &WindowCall, i: usize, ec: &mut Ectx<'_>) -> PgResult<(usize, usize)> {
        let s = self.bound(f, &f.frame.start, true, i, ec)?;
        let e = self.bound(f, &f.frame.end, false, i, ec)?;
        Ok((s, e.max(s)))
    }

    fn offset(&self, e: &Expr, start: bool, i: usize, ec: &mut Ectx<'_>) -> PgResult<i64> {
        let which = if start { "starting" } else { "ending" };
        match eval(e, &self.rows[i], ec)? {
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
        &self,
        f: &WindowCall,
        b: &FrameBound,
        start: bool,
        i: usize,
        ec: &mut Ectx<'_>,
    ) -> PgResult<usize> {
        let (ps, pe) = (self.ps as i64, self.pe as i64);
        let clamp = |x: i64| x.clamp(ps, pe) as usize;
        let (gs, ge) = self.group(i);
        Ok(match b {
            FrameBound::UnboundedPreceding => self.ps,
            FrameBound::UnboundedFollowing => self.pe,
            FrameBound::CurrentRow => match f.frame.units {
                FrameUnits::Rows => {
                    if start {
                        i
                    } else {
                        i + 1
                    }
                }
                _ => {
                    if start {
                        gs
                    } else {
                        ge
                    }
                }
            },
            FrameBound::Preceding(e) | FrameBound::Following(e) => {
                let preceding = matches!(b, FrameBound::Preceding(_));
                match f.frame.units {
                    FrameUnits::Rows => {
                        let off = self.offset(e, start, i, ec)?;
                        let j = if preceding {
                            i as i64 - off
                        } else {
                            i as i64 + off
                        };
                        clamp(if start { j } else { j + 1 })
                    }
                    FrameUnits::Groups => {
                        let off = self.offset(e, start, i, ec)?;
                        let g = self.group_of[i - self.ps] as i64;
                        let t = if preceding { g - off } else { g + off };
                        if t < 0 {
                            self.ps
                        } else if t >= self.bounds.len() as i64 {
                            self.pe
                        } else {
                            let (s, e) = self.bounds[t as usize];
                            if start {
                                s
                            } else {
                                e
                            }
                        }
                    }
                    FrameUnits::Range => self.range_bound(e, start, i, (gs, ge), ec)?,
                }
            }
        })
    }

    /// A RANGE offset bound: `e` is the bound's value over row `i`.
    fn range_bound(
        &self,
        e: &Expr,
        start: bool,
        i: usize,
        peers: (usize, usize),
        ec: &mut Ectx<'_>,
    ) -> PgResult<usize> {
        let Some(k) = self.order.first() else {
            return Ok(if start { peers.0 } else { peers.1 });
        };
        let col = k.column;
        if self.rows[i][col].is_null() {
            return Ok(if start { peers.0 } else { peers.1 });
        }
        let b = eval(e, &self.rows[i], ec)?;
        if b.is_null() {
            return Err(PgError::new(
                "22004",
                format!(
                    "frame {} offset must not be null",
                    if start { "starting" } else { "ending" }
                ),
            ));
        }
        // The non-NULL keys of the partition, in sort order.
        let mut ns = self.ps;
        while ns < self.pe && self.rows[ns][col].is_null() {
            ns += 1;
        }
        let mut ne = self.pe;
        while ne > ns && self.rows[ne - 1][col].is_null() {
            ne -= 1;
        }
        let keys = &self.rows[ns..ne];
        // Position in sort order of `key` relative to the bound.
        let cmp = |r: &Vec<Value>| {
            let o = cmp_for_sort(&r[col], &b);
            if k.desc {
                o.reverse()
            } else {
                o
            }
        };
        let p = if start {
            keys.partition_point(|r| cmp(r) == Ordering::Less)
        } else {
            keys.partition_point(|r| cmp(r) != Ordering::Greater)
        };
        Ok(ns + p)
    }
}
