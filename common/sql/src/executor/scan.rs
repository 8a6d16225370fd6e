//! Leaf nodes: where rows come from (PostgreSQL's nodeSeqscan,
//! nodeIndexscan, nodeFunctionscan, nodeValuesscan, nodeResult).
//!
//! A table scan takes the table's shared relation lock when it starts and
//! holds it until the node is dropped, checks that the table was not
//! dropped meanwhile, and decodes each visible row into one reused
//! buffer (a sequential scan with the `RowLayout` decode plans of its
//! column masks, built when it starts). The index scan is the point-lookup path of pgbench -S: it
//! evaluates its key once (a parameter, a constant or an executor
//! parameter set by a nested loop), collects the tids under that key and
//! fetches each with the statement's snapshot; a version dead to everyone
//! has its page pruned on the way (kill_prior_tuple). Its per-row cost is
//! one decode into the reused row, with the decode plan its plan node
//! keeps.

use super::execnodes::{project_into, ExecNode};
use super::{dead_to_all, eval_lookup_key, Ectx, ExecBuffers, Vis};
use crate::expr::{eval, eval_filter, Expr};
use crate::planner::plannodes::{FilterFirst, NodeKind, PlanNode};
use engine::catalog::{IndexDef, RelShared, TableDef};
use engine::Engine as Db;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;
use pgtypes::ItemPointer;
use std::sync::{Arc, OnceLock};
use storage::heapam::HeapScan;
use storage::rowcodec::RowLayout;

/// One empty row.
#[derive(Default)]
pub struct ResultNode {
    done: bool,
}

impl ResultNode {
    /// A fresh one.
    pub fn new() -> ResultNode {
        ResultNode { done: false }
    }
}

impl ExecNode for ResultNode {
    fn next(&mut self, _ec: &mut Ectx<'_>) -> PgResult<bool> {
        Ok(!std::mem::replace(&mut self.done, true))
    }
    fn row(&self) -> &[Value] {
        &[]
    }
}

/// The page counters of a parallel plan's scans (the driving scan's, and
/// those of the hashed sides built together), each named by its plan
/// node's address.
pub struct ParallelScans(Vec<(usize, Arc<storage::heapam::ParallelBlocks>)>);

impl ParallelScans {
    /// A counter for each `parallel` SeqScan of `plan`.
    pub fn new(db: &Db, plan: &PlanNode) -> PgResult<ParallelScans> {
        type Counters = Vec<(usize, Arc<storage::heapam::ParallelBlocks>)>;
        fn walk(db: &Db, n: &PlanNode, out: &mut Counters) -> PgResult<()> {
            if let NodeKind::SeqScan {
                table,
                parallel: true,
                ..
            } = &n.kind
            {
                out.push((
                    n as *const PlanNode as usize,
                    db.heap().parallel_blocks(table.rel)?,
                ));
            }
            for c in n.children() {
                walk(db, c, out)?;
            }
            Ok(())
        }
        let mut v = Vec::new();
        walk(db, plan, &mut v)?;
        Ok(ParallelScans(v))
    }

    fn get(&self, id: usize) -> Option<Arc<storage::heapam::ParallelBlocks>> {
        self.0
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, b)| b.clone())
    }

    /// Hands out no more pages of any scan (a participant failed).
    pub fn finish(&self) {
        for (_, b) in &self.0 {
            b.finish();
        }
    }
}

/// Sequential scan with a pushed-down filter.
pub struct SeqScanNode<'p> {
    table: &'p Arc<TableDef>,
    filter: Option<&'p Expr>,
    needed: Option<&'p [bool]>,
    vis: &'p Vis,
    /// Reads only the pages it claims from `Ectx::parallel_scan`: its
    /// plan node's address, which names its counter there.
    parallel: Option<usize>,
    /// The filter's columns decoded first (see [`FilterFirst`]).
    filter_first: Option<&'p FilterFirst>,
    lock: Option<RelShared<'p>>,
    scan: Option<HeapScan>,
    types: &'p [SqlType],
    row: Vec<Value>,
    /// The decode plans of its masks, built when the scan starts: the
    /// filter's and the rest's with a [`FilterFirst`], else `needed`'s
    /// (decoding as `decode_needed` with those masks does).
    layouts: Option<(RowLayout, Option<RowLayout>)>,
}

impl<'p> SeqScanNode<'p> {
    /// Not started until the first `next`.
    pub fn new(
        table: &'p Arc<TableDef>,
        filter: Option<&'p Expr>,
        needed: Option<&'p [bool]>,
        vis: &'p Vis,
        parallel: Option<usize>,
        filter_first: Option<&'p FilterFirst>,
    ) -> Self {
        SeqScanNode {
            table,
            filter,
            needed,
            vis,
            parallel,
            filter_first,
            lock: None,
            scan: None,
            types: table.row_types(),
            row: Vec::new(),
            layouts: None,
        }
    }
}

impl ExecNode for SeqScanNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        let db = ec.db;
        if self.scan.is_none() {
            if !ec.locks_held {
                self.lock = Some(self.table.lock.shared());
            }
            self.table.check_not_dropped()?;
            self.vis.lock_relation(db, self.table);
            // A parallel participant reads the pages it claims; alone (no
            // counter for this scan) it reads them all.
            let shared = match (self.parallel, &ec.parallel_scan) {
                (Some(id), Some(scans)) if !ec.serial_scans => scans.get(id),
                _ => None,
            };
            self.scan = Some(match shared {
                Some(b) => db.heap().begin_parallel_scan(b),
                None => db.heap().begin_scan(self.table.rel)?,
            });
            let types = &self.types;
            self.layouts = Some(match (self.filter_first, self.filter) {
                (Some(ff), Some(_)) => (
                    RowLayout::new(types, Some(&ff.filter)),
                    Some(RowLayout::new(types, Some(&ff.rest))),
                ),
                _ => (RowLayout::new(types, self.needed), None),
            });
        }
        let (Some(scan), Some((layout, rest_layout))) = (self.scan.as_mut(), self.layouts.as_ref())
        else {
            return Ok(false);
        };
        let cx = self.vis.cx(db);
        loop {
            ec.tick()?;
            let Some((_tid, data)) = scan.next_tuple(db.heap(), &cx)? else {
                return Ok(false);
            };
            if let (Some(ff), Some(f), Some(rest)) = (self.filter_first, self.filter, rest_layout) {
                let (table, row) = (self.table, &mut self.row);
                table.decode_layout(data, layout, row, db.heap())?;
                if !eval_filter(f, row, ec.params, ec)? {
                    ec.removed[0] += 1;
                    continue;
                }
                table.decode_layout(data, rest, row, db.heap())?;
                for &c in &ff.drop {
                    if let Some(v) = row.get_mut(c) {
                        *v = Value::Null;
                    }
                }
                return Ok(true);
            }
            self.table
                .decode_layout(data, layout, &mut self.row, db.heap())?;
            match self.filter {
                None => return Ok(true),
                Some(f) => {
                    let p = ec.params;
                    if eval_filter(f, &self.row, p, ec)? {
                        return Ok(true);
                    }
                    ec.removed[0] += 1;
                }
            }
        }
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}

/// Index point lookup with the rest of the WHERE clause as filter.
pub struct IndexScanNode<'p> {
    table: &'p Arc<TableDef>,
    index: &'p Arc<IndexDef>,
    key: &'p [Expr],
    key_types: &'p [SqlType],
    filter: Option<&'p Expr>,
    needed: Option<&'p [bool]>,
    /// The plan's decode plan of `needed`, made at its first execution.
    layout: &'p OnceLock<RowLayout>,
    vis: &'p Vis,
    lock: Option<RelShared<'p>>,
    started: bool,
    tids: Vec<ItemPointer>,
    pos: usize,
    /// A scan of a key range (leading columns, or the whole index) reads
    /// [`INDEX_BATCH`] entries at a time: the range's end, and the last
    /// key read (the next batch starts after it); None when done.
    range: Option<(Vec<u8>, Vec<u8>)>,
    /// The encoded lookup key, kept across rescans (the inner side of a
    /// nested loop evaluates a new key per outer row).
    key_buf: Vec<u8>,
    types: &'p [SqlType],
    row: Vec<Value>,
    /// The projection above it, made here, and its output row.
    project: Option<&'p [Expr]>,
    out: Vec<Value>,
}

/// Entries a range scan of an index holds at once (more when one key has
/// more versions): a scan of a whole big index streams, it does not
/// collect every tid first.
const INDEX_BATCH: usize = 4096;

/// The next batch of a range scan: the tids of whole keys after `from`
/// (from `lo`, inclusive, the first time: `from` empty) below `hi`, at
/// least [`INDEX_BATCH`] unless the range ends. Returns the last key read,
/// None when the range ended.
fn range_batch(
    index: &storage::index::Index,
    lo: &[u8],
    from: &[u8],
    hi: &[u8],
    tids: &mut Vec<ItemPointer>,
) -> Option<Vec<u8>> {
    use std::ops::Bound;
    let start = if from.is_empty() {
        Bound::Included(lo)
    } else {
        Bound::Excluded(from)
    };
    index.collect_range(start, Bound::Excluded(hi), INDEX_BATCH, tids)
}

impl<'p> IndexScanNode<'p> {
    /// The node of an IndexScan plan node (None for another kind), not
    /// started until the first `next`. With `project` (the projection
    /// above it) it emits those expressions over each row instead of the
    /// row.
    pub fn from_plan(
        plan: &'p PlanNode,
        vis: &'p Vis,
        project: Option<&'p [Expr]>,
    ) -> Option<Self> {
        let NodeKind::IndexScan {
            table,
            index,
            key,
            key_types,
            filter,
            needed,
            layout,
        } = &plan.kind
        else {
            return None;
        };
        Some(IndexScanNode {
            table,
            index,
            key,
            key_types,
            filter: filter.as_ref(),
            needed: needed.as_deref(),
            layout,
            vis,
            lock: None,
            started: false,
            tids: Vec::new(),
            pos: 0,
            range: None,
            key_buf: Vec::new(),
            types: table.row_types(),
            row: Vec::new(),
            project,
            out: Vec::new(),
        })
    }

    /// Emits the current row: true, after projecting it if a projection
    /// was folded in.
    fn emit(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if let Some(exprs) = self.project {
            project_into(exprs, &self.row, &mut self.out, ec)?;
        }
        Ok(true)
    }
}

impl ExecNode for IndexScanNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        let db = ec.db;
        if !self.started {
            self.started = true;
            if !ec.locks_held && self.lock.is_none() {
                self.lock = Some(self.table.lock.shared());
            }
            self.table.check_not_dropped()?;
            if self.key_buf.capacity() == 0 {
                if let Some(pool) = ec.buffers.as_deref_mut() {
                    self.key_buf = pool.bytes();
                    self.tids = pool.tids();
                    self.row = pool.row();
                }
            }
            let kb = &mut self.key_buf;
            if eval_lookup_key(ec, self.key, self.key_types, kb)? {
                let kb: &[u8] = kb;
                let tids = &mut self.tids;
                if self.key.len() < self.index.spec.columns.len() {
                    // The leading columns only: every key that starts with
                    // them (each column's encoding is self-delimiting and
                    // the next one starts with a tag below 0x03), a batch
                    // at a time.
                    let mut hi = kb.to_vec();
                    hi.push(0x03);
                    let last = range_batch(&self.index.index, kb, &[], &hi, tids);
                    self.range = last.map(|l| (hi, l));
                    self.vis.lock_index(db, self.index);
                } else {
                    self.index.index.lookup(kb, &mut |t| tids.push(t));
                    self.vis.lock_index_key(db, self.index, kb);
                }
            }
            // TestForOldSnapshot on the "index page": pruning removed
            // entries a snapshot older than old_snapshot_threshold needs.
            db.procarray().old_snapshot().test_relation(
                &self.vis.snapshot,
                self.table.rel.0,
                db.procarray().subtrans(),
            )?;
        }
        let cx = self.vis.cx(db);
        let layout = self
            .layout
            .get_or_init(|| RowLayout::new(self.types, self.needed));
        loop {
            if self.pos == self.tids.len() {
                // The next batch of a range scan, if any.
                let Some((hi, from)) = self.range.take() else {
                    break;
                };
                self.tids.clear();
                self.pos = 0;
                self.range = range_batch(&self.index.index, &[], &from, &hi, &mut self.tids)
                    .map(|l| (hi, l));
                if self.tids.is_empty() {
                    break;
                }
            }
            let tid = self.tids[self.pos];
            self.pos += 1;
            ec.tick()?;
            let row = &mut self.row;
            let table = self.table;
            let found = db.heap().fetch(self.table.rel, tid, &cx, |data| {
                table.decode_layout(data, layout, row, db.heap())
            })?;
            match found {
                None => {
                    // Invisible to us; if dead to everyone, prune its page,
                    // which drops its entries too (kill_prior_tuple).
                    if let Some(h) = dead_to_all(db, self.table.rel, tid, cx.snapshot)? {
                        db.heap().prune_block(
                            self.table.rel,
                            tid.block,
                            h,
                            db.clog(),
                            db.procarray(),
                        )?;
                    }
                    continue;
                }
                Some(r) => r?,
            }
            match self.filter {
                None => return self.emit(ec),
                Some(f) => {
                    let p = ec.params;
                    if eval_filter(f, &self.row, p, ec)? {
                        return self.emit(ec);
                    }
                    ec.removed[0] += 1;
                }
            }
        }
        Ok(false)
    }
    fn row(&self) -> &[Value] {
        match self.project {
            Some(_) => &self.out,
            None => &self.row,
        }
    }
    fn rescan(&mut self) -> bool {
        // The lock, if taken, stays held to the statement's end as it
        // would have; the key is evaluated again at the next `next`.
        self.started = false;
        self.tids.clear();
        self.pos = 0;
        self.range = None;
        true
    }
    fn recycle(&mut self, pool: &mut ExecBuffers) {
        pool.put_bytes(std::mem::take(&mut self.key_buf));
        pool.put_tids(std::mem::take(&mut self.tids));
        pool.put_row(std::mem::take(&mut self.row));
        pool.put_row(std::mem::take(&mut self.out));
    }
}

/// generate_series over integers, or over timestamps with an interval
/// step.
pub struct FunctionScanNode<'p> {
    start: &'p Expr,
    stop: &'p Expr,
    step: Option<&'p Expr>,
    ty: SqlType,
    state: Option<(i64, i64, SeriesStep)>,
    done: bool,
    row: [Value; 1],
}

/// How a series advances.
#[derive(Clone, Copy)]
enum SeriesStep {
    Int(i64),
    Interval(pgtypes::interval::Interval),
}

impl<'p> FunctionScanNode<'p> {
    /// Arguments are evaluated at the first `next`.
    pub fn new(start: &'p Expr, stop: &'p Expr, step: Option<&'p Expr>, ty: SqlType) -> Self {
        FunctionScanNode {
            start,
            stop,
            step,
            ty,
            state: None,
            done: false,
            row: [Value::Null],
        }
    }

    /// Evaluates the arguments: None when one is NULL (no rows).
    fn first(&self, ec: &mut Ectx<'_>) -> PgResult<Option<(i64, i64, SeriesStep)>> {
        let a = ec.eval(self.start, &[])?;
        let b = ec.eval(self.stop, &[])?;
        let s = match self.step {
            Some(e) => ec.eval(e, &[])?,
            None => Value::Int8(1),
        };
        let zero = || {
            PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                "step size cannot equal zero",
            )
        };
        if let (
            Value::Timestamp(x) | Value::TimestampTz(x),
            Value::Timestamp(y) | Value::TimestampTz(y),
            Value::Interval(step),
        ) = (&a, &b, &s)
        {
            if step.span().signum() == 0 {
                return Err(zero());
            }
            return Ok(Some((*x, *y, SeriesStep::Interval(*step))));
        }
        let (Some(a), Some(b), Some(s)) = (a.as_i64(), b.as_i64(), s.as_i64()) else {
            return Ok(None);
        };
        if s == 0 {
            return Err(zero());
        }
        Ok(Some((a, b, SeriesStep::Int(s))))
    }
}

impl ExecNode for FunctionScanNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.done && self.state.is_some() {
            self.state = None;
            return Ok(false);
        }
        if self.done {
            return Ok(false);
        }
        if self.state.is_none() {
            match self.first(ec)? {
                Some(st) => self.state = Some(st),
                None => {
                    self.done = true; // a NULL argument: no rows
                    return Ok(false);
                }
            }
        }
        let Some((i, b, s)) = self.state else {
            return Ok(false);
        };
        let up = match s {
            SeriesStep::Int(s) => s > 0,
            SeriesStep::Interval(iv) => iv.span() > 0,
        };
        if !((up && i <= b) || (!up && i >= b)) {
            self.done = true;
            return Ok(false);
        }
        ec.tick()?;
        self.row[0] = match self.ty {
            SqlType::Int8 => Value::Int8(i),
            SqlType::Timestamp => Value::Timestamp(i),
            SqlType::TimestampTz => Value::TimestampTz(i),
            _ => Value::Int4(i as i32),
        };
        let next = match s {
            SeriesStep::Int(s) => i.checked_add(s),
            SeriesStep::Interval(iv) => match pgtypes::interval::add_to_timestamp(i, iv) {
                Ok(n) if n != i => Some(n),
                _ => None,
            },
        };
        match next {
            Some(n) => self.state = Some((n, b, s)),
            // Past the end of the type: this value is the last.
            None => self.done = true,
        }
        Ok(true)
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}

/// `unnest(array)`: the array is evaluated at the first `next`.
pub struct UnnestNode<'p> {
    array: &'p Expr,
    items: Option<(std::sync::Arc<pgtypes::array::ArrayValue>, usize)>,
    row: [Value; 1],
}

impl<'p> UnnestNode<'p> {
    /// The array is evaluated at the first `next`.
    pub fn new(array: &'p Expr) -> Self {
        UnnestNode {
            array,
            items: None,
            row: [Value::Null],
        }
    }
}

impl ExecNode for UnnestNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.items.is_none() {
            match ec.eval(self.array, &[])? {
                Value::Array(a) => self.items = Some((a, 0)),
                _ => return Ok(false), // NULL: no rows
            }
        }
        let item = self.items.as_mut().and_then(|(a, i)| {
            let v = a.items.get(*i).cloned();
            *i += 1;
            v
        });
        match item {
            Some(v) => {
                ec.tick()?;
                self.row[0] = v;
                Ok(true)
            }
            None => {
                // Rescanned (under a nested loop): evaluate again.
                self.items = None;
                Ok(false)
            }
        }
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}

/// A set-returning json function: the argument is evaluated and the rows
/// built at the first `next`.
pub struct JsonSrfNode<'p> {
    call: &'p crate::jsonfuncs::SrfCall,
    arg: &'p Expr,
    rows: Option<std::vec::IntoIter<Vec<Value>>>,
    row: Vec<Value>,
}

impl<'p> JsonSrfNode<'p> {
    /// Nothing is evaluated until the first `next`.
    pub fn new(call: &'p crate::jsonfuncs::SrfCall, arg: &'p Expr) -> Self {
        JsonSrfNode {
            call,
            arg,
            rows: None,
            row: Vec::new(),
        }
    }
}

impl ExecNode for JsonSrfNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.rows.is_none() {
            let v = ec.eval(self.arg, &[])?;
            self.rows = Some(crate::jsonfuncs::srf_rows(self.call, &v)?.into_iter());
        }
        match self.rows.as_mut().and_then(Iterator::next) {
            Some(r) => {
                ec.tick()?;
                self.row = r;
                Ok(true)
            }
            None => {
                // Rescanned (under a nested loop): evaluate again.
                self.rows = None;
                Ok(false)
            }
        }
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}

/// A user-defined function in FROM: its arguments are evaluated and its
/// rows made (`crate::fmgr::call_rows`, materialised as PostgreSQL's
/// tuplestore) at the first `next`.
pub struct UserFunctionNode<'p> {
    call: &'p Expr,
    as_record: bool,
    rows: Option<std::vec::IntoIter<Vec<Value>>>,
    row: Vec<Value>,
}

impl<'p> UserFunctionNode<'p> {
    /// Nothing is evaluated until the first `next`.
    pub fn new(call: &'p Expr, as_record: bool) -> Self {
        UserFunctionNode {
            call,
            as_record,
            rows: None,
            row: Vec::new(),
        }
    }
}

impl ExecNode for UserFunctionNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.rows.is_none() {
            let Expr::Func {
                func: crate::functions::Func::User(oid),
                args,
            } = self.call
            else {
                return Err(PgError::internal("function scan without a user function"));
            };
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(ec.eval(a, &[])?);
            }
            let rows = crate::fmgr::call_rows(ec, *oid, &vals)?;
            self.rows = Some(rows.into_iter());
        }
        match self.rows.as_mut().and_then(Iterator::next) {
            Some(r) => {
                ec.tick()?;
                self.row = if self.as_record {
                    vec![crate::fmgr::record_value(&r)]
                } else {
                    r
                };
                Ok(true)
            }
            None => {
                // Rescanned (under a nested loop): call again.
                self.rows = None;
                Ok(false)
            }
        }
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}

/// A system view's rows as of the first `next`.
pub struct SystemViewNode<'p> {
    view: &'static crate::sysviews::SystemView,
    /// A keyed scan's relation OID (see `NodeKind::KeyedView`).
    key: Option<&'p Expr>,
    rows: Option<std::vec::IntoIter<Vec<Value>>>,
    row: Vec<Value>,
}

impl<'p> SystemViewNode<'p> {
    /// Rows are built at the first `next`.
    pub fn new(
        view: &'static crate::sysviews::SystemView,
        key: Option<&'p Expr>,
    ) -> SystemViewNode<'p> {
        SystemViewNode {
            view,
            key,
            rows: None,
            row: Vec::new(),
        }
    }
}

impl ExecNode for SystemViewNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        let view = self.view;
        if self.rows.is_none() {
            // A key that is no OID (NULL, out of range) matches no
            // relation's rows, but the filter decides: build them all.
            let (mut key, mut name) = (None, None);
            if let Some(k) = self.key {
                match ec.eval(k, &[])? {
                    Value::Oid(o) => key = Some(o),
                    Value::Int4(n) => key = u32::try_from(n).ok(),
                    Value::Int8(n) => key = u32::try_from(n).ok(),
                    Value::Text(s) => name = Some(s.to_string()),
                    _ => {}
                }
            }
            ec.view_key = key;
            ec.view_name_key = name;
            let built = view.rows(&*ec);
            ec.view_key = None;
            ec.view_name_key = None;
            self.rows = Some(built.into_iter());
        }
        let Some(rows) = self.rows.as_mut() else {
            return Ok(false);
        };
        match rows.next() {
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

/// `FROM sequence`: one row, PostgreSQL's sequence tuple (`last_value`,
/// `log_cnt`: values left before the next WAL record, `is_called`), of
/// the definition this transaction sees.
pub struct SequenceNode {
    oid: pgtypes::Oid,
    done: bool,
    row: Vec<Value>,
}

impl SequenceNode {
    /// The row is read at the first `next`.
    pub fn new(oid: pgtypes::Oid) -> SequenceNode {
        SequenceNode {
            oid,
            done: false,
            row: Vec::new(),
        }
    }
}

impl ExecNode for SequenceNode {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.done {
            return Ok(false);
        }
        self.done = true;
        let own = ec.xact.own();
        let seq = ec
            .db
            .catalog()
            .view(own.xids, ec.db.clog())
            .sequences()
            .into_iter()
            .find(|s| s.spec.oid == self.oid)
            .ok_or_else(|| {
                PgError::new(
                    pgtypes::error::sqlstate::UNDEFINED_TABLE,
                    format!("could not open relation with OID {}", self.oid),
                )
            })?;
        let (last, called) = seq.counter();
        let logged = seq.state.logged.load(std::sync::atomic::Ordering::Acquire);
        let inc = seq.spec.increment;
        let log_cnt = if called && logged != last && inc != 0 {
            (logged.saturating_sub(last) / inc).saturating_add(1).max(0)
        } else {
            0
        };
        self.row = vec![Value::Int8(last), Value::Int8(log_cnt), Value::Bool(called)];
        Ok(true)
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}

/// A VALUES list, one row evaluated per `next`.
pub struct ValuesNode<'p> {
    rows: &'p [Vec<Expr>],
    pos: usize,
    row: Vec<Value>,
}

impl<'p> ValuesNode<'p> {
    /// From the bound rows.
    pub fn new(rows: &'p [Vec<Expr>]) -> Self {
        ValuesNode {
            rows,
            pos: 0,
            row: Vec::new(),
        }
    }
}

impl ExecNode for ValuesNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        let Some(r) = self.rows.get(self.pos) else {
            return Ok(false);
        };
        self.pos += 1;
        ec.tick()?;
        self.row.clear();
        let p = ec.params;
        for e in r {
            let v = eval(e, &[], p, ec)?;
            self.row.push(v);
        }
        Ok(true)
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}
