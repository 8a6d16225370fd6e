//! Hash join (PostgreSQL's nodeHash + nodeHashjoin).
//!
//! The inner side is read whole into memory on the first call and hashed
//! on its join keys (the order-preserving key encoding, which maps equal
//! values of the planner's allowed key types to equal bytes); each outer
//! row then probes with its own keys. A NULL key matches nothing, as `=`
//! says. Among key matches the remaining join condition decides.
//!
//! The inner rows are held one after another in one vector of values;
//! the table maps key bytes to a key's first and last row, and a vector
//! of row numbers chains a key's rows in arrival order (PostgreSQL's
//! bucket chains): a probe reads the table's slot and then the row's
//! values, with no per-key or per-row allocation between them (TPC-H
//! Q13's 1.5 million probes of 150,000 customers were bound by those
//! cache misses).
//!
//! Join types: INNER; LEFT (an outer row without a match is emitted with
//! NULLs); RIGHT and FULL (inner rows are flagged when matched, the
//! others are emitted NULL-extended after the last outer row); SEMI and
//! ANTI (the outer row alone, on its first match / when none). The build
//! loop and the probe loop tick, so both are cancellable.
//!
//! ## Batches (past `work_mem`)
//!
//! PostgreSQL's hybrid hash join: when the inner rows held pass
//! `work_mem`, the number of batches doubles (1, 2, 4, …) and each row
//! belongs to batch `hash(key) mod nbatch`. Batch 0 stays in memory; the
//! other batches' inner rows go to temporary files (`spill.rs`), and so do
//! the outer rows of those batches while batch 0 is probed. Then each
//! batch in turn: its inner file is loaded into the hash table and its
//! outer file streamed against it. A batch that does not fit when loaded
//! doubles the count again; rows whose batch moved (always to a later one)
//! are written forward when they are read. If a doubling moves no row or
//! every row (one key holds them all), growth stops and the batch is held
//! in memory whole, as PostgreSQL does. An outer row with a NULL key
//! matches nothing in any batch and is answered at once; an inner one
//! (kept only by RIGHT and FULL joins) sits in a fixed batch and is emitted
//! NULL-extended with that batch's unmatched rows.

use super::execnodes::{ExecNode, Node};
use super::spill::{row_bytes, KeyMap, Spill, TempFile};
use super::Ectx;
use crate::expr::{eval, Expr};
use crate::planner::plannodes::{JoinKind, PlanNode};
use pgtypes::error::PgResult;
use pgtypes::hash::{hash_key, KeyBuild};
use pgtypes::value::Value;
use std::sync::Arc;
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
    /// The inner columns kept in the table (None: all); the others are
    /// NULL in joined rows.
    inner_cols: Option<&'p [usize]>,
    /// Joined rows are inner ++ outer (see [`HashJoinNode::emit_swapped`]).
    swap_out: bool,
    /// An inner row read back from a batch file, widened for its keys.
    wide: Vec<Value>,
    built: bool,
    /// The current batch's inner rows and their table.
    held: Held,
    /// A parallel participant's table built by another (see
    /// [`ParallelJoins`]): used instead of `held`.
    shared: Option<Arc<Held>>,
    stride: usize,
    matched: Vec<bool>,
    /// The current outer row's next candidate inner row ([`NONE`]: none).
    cand: u32,
    /// A kept inner row on its way into `rows` or a batch file.
    kept: Vec<Value>,
    /// Short texts of the held rows, one copy each (see [`Texts`]).
    texts: Texts,
    have_outer: bool,
    outer_matched: bool,
    outer_done: bool,
    tail: usize,
    kb: Vec<u8>,
    out: Vec<Value>,
    /// Batching: None until the first batch is read.
    spill: Option<Spill>,
    /// Bytes of inner rows held.
    mem: usize,
    nbatch: usize,
    grow: bool,
    cur: usize,
    inner_files: Vec<Option<TempFile>>,
    outer_files: Vec<Option<TempFile>>,
    /// The outer row read from a batch file (batches after the first).
    orow: Vec<Value>,
    /// A join whose outer side reads a parallel scan's share: its plan
    /// node's address, which names it in [`ParallelJoins`].
    parallel_id: Option<usize>,
    /// The multiple of `hash_mem` the inner rows may hold before
    /// batching: the participants' count while building the table they
    /// all share, else 1.
    budget: usize,
    /// This batch's matches are merged (`merge_matches`).
    merged: bool,
    /// A parallel participant's join whose hashed side reads a parallel
    /// scan's share: the table is built together (`Build::Parts`); the
    /// inner plan, to build the whole table again alone if the parts do
    /// not fit.
    together: Option<(&'p PlanNode, &'p super::Vis)>,
}

/// A batch's inner rows (as kept: `stride` values each) one after
/// another, and their table: a probe goes from the table to the row's
/// values without another allocation's pointer to follow.
#[derive(Default)]
pub struct Held {
    rows: Vec<Value>,
    nrows: usize,
    /// Key bytes → the first and last row with that key; `next` links a
    /// key's rows in the order they came (PostgreSQL's bucket chains).
    table: KeyMap<(u32, u32)>,
    next: Vec<u32>,
}

impl Held {
    /// One table of the parts' rows: each part's rows after the ones
    /// before, a key's chain running through the parts in turn.
    fn merge(mut parts: Vec<Held>) -> PgResult<Held> {
        let Some(big) = (0..parts.len()).max_by_key(|&i| parts[i].nrows) else {
            return Ok(Held::default());
        };
        let mut all = parts.swap_remove(big);
        for p in parts {
            let off = row_index(all.nrows)?;
            row_index(all.nrows + p.nrows)?;
            all.rows.extend(p.rows);
            all.next.extend(
                p.next
                    .iter()
                    .map(|&n| if n == NONE { NONE } else { n + off }),
            );
            for (kb, (first, last)) in p.table.into_entries() {
                let (first, last) = (first + off, last + off);
                match all.table.get_mut(&kb) {
                    Some((_, end)) => {
                        all.next[*end as usize] = first;
                        *end = last;
                    }
                    None => {
                        all.table.insert(kb, (first, last));
                    }
                }
            }
            all.nrows += p.nrows;
        }
        Ok(all)
    }
}

/// The distinct short texts of a batch's held rows, each held once: a
/// row's text equal to one held already points to it (TPC-H Q14's
/// 200,000 parts carry 150 distinct `p_type`s). Only [`Texts::MAX`]
/// texts of up to [`Texts::SHORT`] bytes are kept, so the set stays
/// small whatever the column holds.
#[derive(Default)]
struct Texts {
    set: std::collections::HashSet<Arc<str>, KeyBuild>,
    /// Bytes of the texts in `set`.
    bytes: usize,
}

impl Texts {
    const MAX: usize = 4096;
    const SHORT: usize = 64;

    /// Points `row`'s short texts at the held copies (holding new ones
    /// while there is room); the bytes the row adds to the batch.
    fn share(&mut self, row: &mut [Value]) -> usize {
        let before = self.bytes;
        let mut shared = 0;
        for v in row.iter_mut() {
            let Value::Text(t) = v else { continue };
            if t.len() > Self::SHORT {
                continue;
            }
            match self.set.get(&**t) {
                Some(held) => *t = held.clone(),
                None if self.set.len() < Self::MAX => {
                    self.bytes += 16 + t.len();
                    self.set.insert(t.clone());
                }
                None => continue,
            }
            shared += 16 + t.len();
        }
        row_bytes(row).saturating_sub(shared) + (self.bytes - before)
    }

    /// [`row_bytes`] of a held row, less the texts it shares with the
    /// set (counted once, in the set's own bytes).
    fn held_bytes(&self, row: &[Value]) -> usize {
        let shared: usize = row
            .iter()
            .filter_map(|v| match v {
                Value::Text(t) => self
                    .set
                    .get(&**t)
                    .filter(|h| Arc::ptr_eq(h, t))
                    .map(|_| 16 + t.len()),
                _ => None,
            })
            .sum();
        row_bytes(row).saturating_sub(shared)
    }
}

/// The held rows a probe reads: the shared ones, or its own.
fn held<'a>(own: &'a Held, shared: &'a Option<Arc<Held>>) -> &'a Held {
    shared.as_deref().unwrap_or(own)
}

/// Where the participants of a parallel aggregation meet over the hash
/// joins on its driving path (those whose outer side reads the parallel
/// scan's share).
///
/// Each such join's inner side is built once. When the inner side reads
/// a parallel scan of its own (the planner's `build_together`; EXPLAIN's
/// Parallel Hash), every participant hashes the rows of its pages as a
/// part (`Build::Parts`), and the one that completes the set — every
/// participant has brought its part or ended its run — makes them one
/// table (`Held::merge`); past the budget, each builds the whole table
/// alone from every page instead. Otherwise the first participant to
/// reach it builds the table with the memory of all the participants
/// planned (PostgreSQL's Parallel Hash budget) while the others wait,
/// and all probe that one table (TPC-H Q14's 200,000 parts, Q13's
/// 150,000 customers). If it does not fit, the builder batches its own
/// table within its own `hash_mem` and the others build theirs (a right
/// or full join's copies batched exactly as the builder's: the same
/// budget until the same row). No builder waits for another: such an
/// inner side never reads a parallel scan, so it holds no shared join of
/// its own; and parts are only waited for by participants that brought
/// theirs, from joins met in the same order by all.
///
/// A right or full join's unmatched inner rows: every participant has
/// the same inner rows in the same order (one table, or copies made
/// under one snapshot with no parallel scan below), and a row is
/// unmatched only if no participant matched it. So as each finishes a
/// batch's outer rows it adds its match flags here, and the last to
/// finish emits the rows none matched, the others none; no one waits.
pub struct ParallelJoins {
    /// Participants the session planned, itself included.
    planned: usize,
    /// The participants; 0 until the session has started its workers
    /// (no one can be last before the session itself finishes).
    participants: std::sync::atomic::AtomicUsize,
    /// (join, batch) → the matches so far and how many added them.
    pending: parking_lot::Mutex<std::collections::HashMap<(usize, usize), Matches>>,
    /// join → its shared table, locked while it is built.
    builds: parking_lot::Mutex<std::collections::HashMap<usize, BuildSlot>>,
    /// Participants whose run has ended (see [`ParallelJoins::participant`]).
    finished: std::sync::atomic::AtomicUsize,
}

/// A batch's match flags ORed so far, and how many participants added
/// theirs.
type Matches = (Vec<bool>, usize);

/// A join's [`Build`], locked while it is built, and where participants
/// wait for the parts of a table built together.
type BuildSlot = Arc<(parking_lot::Mutex<Build>, parking_lot::Condvar)>;

/// A join's table, as the participants share it.
enum Build {
    /// No one has built it yet (or its builder failed).
    NotYet,
    /// Built and fits: every participant probes it.
    Shared(Arc<Held>),
    /// Too big to share: each participant builds its own.
    Private,
    /// Built together (its hashed side reads a parallel scan's share):
    /// the parts the participants have hashed so far.
    Parts(Parts),
}

/// The parts of a table built together, as the participants arrive.
#[derive(Default)]
struct Parts {
    parts: Vec<Held>,
    /// Participants that brought their part.
    arrived: usize,
    /// Bytes of the parts.
    mem: usize,
    /// A part, or all of them, passed the budget: each participant
    /// builds the whole table alone instead.
    over: bool,
}

/// A participant's run of a parallel plan: counted finished when it
/// drops, however the run ended (see [`ParallelJoins::participant`]).
pub struct Participant<'a>(&'a ParallelJoins);

impl Drop for Participant<'_> {
    fn drop(&mut self) {
        self.0
            .finished
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let slots: Vec<BuildSlot> = self.0.builds.lock().values().cloned().collect();
        for s in slots {
            s.1.notify_all();
        }
    }
}

impl ParallelJoins {
    /// The meeting place of `planned` participants.
    pub fn new(planned: usize) -> ParallelJoins {
        ParallelJoins {
            planned,
            participants: Default::default(),
            pending: Default::default(),
            builds: Default::default(),
            finished: Default::default(),
        }
    }

    /// Starts a participant's run; held until it ends. A participant
    /// that ends without reaching a table built together (its plan
    /// stopped above it: an inner join over an empty table reads no
    /// outer rows) brought no rows to it, and the others' parts are
    /// whole without it: each read its scan's pages until none were
    /// left.
    pub fn participant(&self) -> Participant<'_> {
        Participant(self)
    }

    /// Every participant has brought its part, `arrived` of them, or
    /// ended without one.
    fn parts_complete(&self, arrived: usize) -> bool {
        let n = self.participants.load(std::sync::atomic::Ordering::SeqCst);
        let done = self.finished.load(std::sync::atomic::Ordering::SeqCst);
        n > 0 && arrived + done >= n
    }

    fn build_slot(&self, join: usize) -> BuildSlot {
        self.builds
            .lock()
            .entry(join)
            .or_insert_with(|| {
                Arc::new((
                    parking_lot::Mutex::new(Build::NotYet),
                    parking_lot::Condvar::new(),
                ))
            })
            .clone()
    }

    /// The session has started `n` participants, itself included.
    pub fn set_participants(&self, n: usize) {
        let _held = self.pending.lock();
        self.participants
            .store(n, std::sync::atomic::Ordering::SeqCst);
    }

    /// Adds one participant's matches of `batch` of `join`: all of them,
    /// if it is the last to do so.
    fn finish(&self, join: usize, batch: usize, matched: &[bool]) -> PgResult<Option<Vec<bool>>> {
        let mut pending = self.pending.lock();
        let n = self.participants.load(std::sync::atomic::Ordering::SeqCst);
        let e = pending
            .entry((join, batch))
            .or_insert_with(|| (vec![false; matched.len()], 0));
        if e.0.len() != matched.len() {
            return Err(pgtypes::error::PgError::internal(
                "parallel participants read different inner rows",
            ));
        }
        for (a, &b) in e.0.iter_mut().zip(matched) {
            *a |= b;
        }
        e.1 += 1;
        if e.1 == n {
            return Ok(pending.remove(&(join, batch)).map(|(m, _)| m));
        }
        Ok(None)
    }
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
        inner_cols: Option<&'p [usize]>,
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
            inner_cols,
            swap_out: false,
            wide: Vec::new(),
            built: false,
            held: Held::default(),
            shared: None,
            stride: inner_cols.map_or(inner_width, <[usize]>::len),
            matched: Vec::new(),
            cand: NONE,
            kept: Vec::new(),
            texts: Texts::default(),
            have_outer: false,
            outer_matched: false,
            outer_done: false,
            tail: 0,
            kb: Vec::new(),
            out: Vec::new(),
            spill: None,
            mem: 0,
            nbatch: 1,
            grow: true,
            cur: 0,
            inner_files: Vec::new(),
            outer_files: Vec::new(),
            orow: Vec::new(),
            parallel_id: None,
            budget: 1,
            merged: false,
            together: None,
        }
    }

    /// Marks a join over a parallel scan's share (see
    /// [`ParallelJoins`]); `plan` is its plan node.
    pub fn parallel(
        mut self,
        plan: &'p PlanNode,
        vis: &'p super::Vis,
        parallel_outer: bool,
    ) -> Self {
        if parallel_outer {
            self.parallel_id = Some(plan as *const PlanNode as usize);
            if let crate::planner::plannodes::NodeKind::HashJoin { inner, .. } = &plan.kind {
                if inner.has_parallel_scan() {
                    self.together = Some((inner, vis));
                }
            }
        }
        self
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

    fn keeps_unmatched_inner(&self) -> bool {
        matches!(self.kind, JoinKind::Right | JoinKind::Full)
    }

    /// The batch of a key's bytes (a NULL key: of no bytes).
    fn batch_of(&self, kb: &[u8]) -> usize {
        (hash_key(kb, 0) as usize) & (self.nbatch - 1)
    }

    /// Batch `b`'s file; a batch file buffers a share of `work_mem`
    /// (between 2 and 8 kB), so a thousand batches stay near the budget.
    fn file<'f>(files: &'f mut [Option<TempFile>], spill: &Spill, b: usize) -> &'f mut TempFile {
        let n = files.len().max(1);
        files[b]
            .get_or_insert_with(|| spill.file_buffered((spill.work_mem / n / 4).clamp(2048, 8192)))
    }

    /// Moves `row` (an inner row as kept; left empty) into the current
    /// batch (`kb` holds its key; `keyed` false for a NULL key), or
    /// writes it to its batch's file.
    fn add_inner(&mut self, ec: &mut Ectx<'_>, row: &mut Vec<Value>, keyed: bool) -> PgResult<()> {
        // Every held row is `stride` wide, whatever its input made.
        row.resize(self.stride, Value::Null);
        let kb = if keyed { &self.kb[..] } else { &[][..] };
        if self.nbatch > 1 {
            let b = self.batch_of(kb);
            if b != self.cur {
                let spill = self.spill.as_ref().ok_or_else(no_spill)?;
                Self::file(&mut self.inner_files, spill, b).write_row(row)?;
                row.clear();
                return Ok(());
            }
        }
        let i = row_index(self.held.nrows)?;
        if keyed {
            match self.held.table.get_mut(kb) {
                Some((_, last)) => {
                    self.held.next[*last as usize] = i;
                    *last = i;
                }
                None => {
                    self.held.table.insert_slice(kb, (i, i));
                }
            }
        }
        self.held.next.push(NONE);
        self.mem += self.texts.share(row);
        self.held.rows.append(row);
        self.held.nrows += 1;
        let limit = self.spill.as_ref().map_or(usize::MAX, |s| s.hash_mem);
        if self.mem > limit.saturating_mul(self.budget) && self.grow {
            // Past a shared table's budget: this participant's own
            // table, batched within its own.
            self.budget = 1;
            self.double(ec)?;
        }
        Ok(())
    }

    /// Doubles the batches and writes out the held rows that now belong
    /// to a later batch.
    fn double(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        ec.check_interrupts()?;
        self.nbatch *= 2;
        self.inner_files.resize_with(self.nbatch, || None);
        self.outer_files.resize_with(self.nbatch, || None);
        let Held {
            rows,
            nrows,
            table,
            next,
        } = std::mem::take(&mut self.held);
        // Each held row's batch: by its key, or a NULL key's.
        let null_batch = self.batch_of(&[]);
        let mut batch = vec![null_batch; nrows];
        for (kb, &(head, _)) in table.iter() {
            let b = self.batch_of(kb);
            let mut i = head;
            while i != NONE {
                batch[i as usize] = b;
                i = next[i as usize];
            }
        }
        let moved = batch.iter().filter(|&&b| b != self.cur).count();
        if moved == 0 || moved == nrows {
            // One key (or one hash) holds them all: splitting cannot help.
            self.grow = false;
        }
        let spill = self.spill.as_ref().ok_or_else(no_spill)?;
        let mut new_index = vec![NONE; nrows];
        self.mem = self.texts.bytes;
        let mut values = rows.into_iter();
        let mut row = Vec::with_capacity(self.stride);
        for (i, &b) in batch.iter().enumerate() {
            row.clear();
            row.extend(values.by_ref().take(self.stride));
            if b == self.cur {
                new_index[i] = row_index(self.held.nrows)?;
                self.mem += self.texts.held_bytes(&row);
                self.held.rows.append(&mut row);
                self.held.next.push(NONE);
                self.held.nrows += 1;
            } else {
                Self::file(&mut self.inner_files, spill, b).write_row(&row)?;
            }
        }
        for (kb, (head, _)) in table.into_entries() {
            // The key's kept rows, linked again in their order.
            let mut ends: Option<(u32, u32)> = None;
            let mut i = head;
            while i != NONE {
                let n = new_index[i as usize];
                if n != NONE {
                    ends = Some(match ends {
                        None => (n, n),
                        Some((first, last)) => {
                            self.held.next[last as usize] = n;
                            (first, n)
                        }
                    });
                }
                i = next[i as usize];
            }
            if let Some(e) = ends {
                self.held.table.insert(kb, e);
            }
        }
        Ok(())
    }

    /// Reads the inner side (batch 0), spilling past `work_mem`.
    fn build_table(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        self.spill = Some(Spill::new(ec));
        let (Some(join), Some(joins)) = (self.parallel_id, ec.parallel_joins.clone()) else {
            return self.build_own(ec);
        };
        if self.together.is_some() {
            return self.build_together(ec, &joins, join);
        }
        let slot = joins.build_slot(join);
        let mut build = slot.0.lock();
        match &*build {
            Build::Shared(h) => {
                self.matched = vec![false; h.nrows];
                self.shared = Some(h.clone());
                return Ok(());
            }
            Build::Private => {
                drop(build);
                // A right or full join's batches must be the builder's,
                // batch for batch, for their unmatched rows to meet: so
                // the same budget, given up at the same row.
                if self.keeps_unmatched_inner() {
                    self.budget = joins.planned.max(1);
                }
                return self.build_own(ec);
            }
            Build::NotYet | Build::Parts(_) => {}
        }
        // Built once for all, with all their memory; the others wait.
        self.budget = joins.planned.max(1);
        self.build_own(ec)?;
        self.budget = 1;
        if self.nbatch == 1 {
            let h = Arc::new(std::mem::take(&mut self.held));
            self.shared = Some(h.clone());
            *build = Build::Shared(h);
        } else {
            *build = Build::Private;
        }
        Ok(())
    }

    /// Builds the table with the other participants: hashes the inner
    /// rows of its share, adds them as its part, and waits for the
    /// others'; the last to come makes the parts one table. If they do
    /// not fit the participants' budget together, each builds the whole
    /// table alone, reading every page (the same rows, under the same
    /// snapshot).
    fn build_together(
        &mut self,
        ec: &mut Ectx<'_>,
        joins: &ParallelJoins,
        join: usize,
    ) -> PgResult<()> {
        let limit = self
            .spill
            .as_ref()
            .map_or(usize::MAX, |s| s.hash_mem)
            .saturating_mul(joins.planned.max(1));
        self.grow = false;
        let whole = self.read_inner(ec, limit)?;
        self.grow = true;
        let slot = joins.build_slot(join);
        let mut build = slot.0.lock();
        if matches!(*build, Build::NotYet) {
            *build = Build::Parts(Parts::default());
        }
        if let Build::Parts(p) = &mut *build {
            p.arrived += 1;
            p.mem = p.mem.saturating_add(self.mem);
            if whole && !p.over && p.mem <= limit {
                p.parts.push(std::mem::take(&mut self.held));
            } else {
                p.over = true;
                p.parts.clear();
            }
        }
        self.held = Held::default();
        self.texts = Texts::default();
        self.mem = 0;
        loop {
            match &mut *build {
                Build::Shared(h) => {
                    self.matched = vec![false; h.nrows];
                    self.shared = Some(h.clone());
                    return Ok(());
                }
                Build::Parts(p) if joins.parts_complete(p.arrived) => {
                    let p = std::mem::take(p);
                    *build = if p.over {
                        Build::Private
                    } else {
                        Build::Shared(Arc::new(Held::merge(p.parts)?))
                    };
                    slot.1.notify_all();
                }
                Build::Parts(_) => {
                    // Woken by an arrival or a participant's end; the
                    // timeout for a cancel.
                    slot.1
                        .wait_for(&mut build, std::time::Duration::from_millis(5));
                    ec.check_interrupts()?;
                }
                Build::Private | Build::NotYet => break,
            }
        }
        drop(build);
        if let Some((plan, vis)) = self.together {
            self.inner = super::execnodes::build(plan, vis);
        }
        let serial = std::mem::replace(&mut ec.serial_scans, true);
        let r = self.build_own(ec);
        ec.serial_scans = serial;
        r
    }

    /// Reads the inner side into this node's own table (batch 0).
    fn build_own(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        self.read_inner(ec, usize::MAX)?;
        self.matched = vec![false; self.held.nrows];
        Ok(())
    }

    /// Reads the inner side into this node's table (batch 0, the rows of
    /// later batches to their files); false, stopping early, once the
    /// rows held take more than `limit` bytes.
    fn read_inner(&mut self, ec: &mut Ectx<'_>, limit: usize) -> PgResult<bool> {
        while self.inner.next(ec)? {
            ec.tick()?;
            let row = self.inner.row();
            let keyed = Self::key(ec, self.inner_keys, row, &mut self.kb)?;
            if !keyed && !self.keeps_unmatched_inner() {
                continue; // a NULL key never matches; only outer-joined rows are kept
            }
            let mut kept = std::mem::take(&mut self.kept);
            match self.inner_cols {
                Some(cols) => kept.extend(
                    cols.iter()
                        .map(|&c| row.get(c).cloned().unwrap_or(Value::Null)),
                ),
                None => kept.extend_from_slice(row),
            }
            let added = self.add_inner(ec, &mut kept, keyed);
            self.kept = kept;
            added?;
            if self.mem > limit {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Moves to the next batch with rows: loads its inner file and opens
    /// its outer file. False when every batch is done.
    fn next_batch(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        loop {
            self.inner_files[self.cur] = None;
            self.outer_files[self.cur] = None;
            self.cur += 1;
            if self.cur >= self.nbatch {
                return Ok(false);
            }
            self.held.rows.clear();
            self.held.nrows = 0;
            self.held.table.clear();
            self.texts = Texts::default();
            self.held.next.clear();
            self.mem = 0;
            self.grow = true;
            if let Some(mut f) = self.inner_files[self.cur].take() {
                f.rewind()?;
                let mut row = Vec::new();
                while f.read_row(&mut row)? {
                    ec.tick()?;
                    let keyed = match self.inner_cols {
                        Some(cols) => {
                            self.wide.clear();
                            widen(&mut self.wide, &row, cols, self.inner_width);
                            Self::key(ec, self.inner_keys, &self.wide, &mut self.kb)?
                        }
                        None => Self::key(ec, self.inner_keys, &row, &mut self.kb)?,
                    };
                    self.add_inner(ec, &mut row, keyed)?;
                }
            }
            self.matched = vec![false; self.held.nrows];
            if let Some(f) = self.outer_files[self.cur].as_mut() {
                f.rewind()?;
            } else if self.held.nrows == 0 {
                continue;
            }
            self.outer_done = false;
            self.have_outer = false;
            self.tail = 0;
            self.merged = false;
            return Ok(true);
        }
    }

    /// The next outer row of the current batch (into the node's row, or
    /// `orow`); false when the batch's outer rows are done.
    fn next_outer(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.cur == 0 {
            return self.outer.next(ec);
        }
        match self.outer_files[self.cur].as_mut() {
            Some(f) => f.read_row(&mut self.orow),
            None => Ok(false),
        }
    }
}

/// The current outer row: the outer node's in the first batch, else the
/// one read from the batch's file.
fn outer_row<'a>(cur: usize, outer: &'a Node<'_>, orow: &'a [Value]) -> &'a [Value] {
    if cur == 0 {
        outer.row()
    } else {
        orow
    }
}

/// Appends an inner row kept as only `cols` (of `width`) at full width.
fn widen(out: &mut Vec<Value>, kept: &[Value], cols: &[usize], width: usize) {
    let base = out.len();
    out.resize(base + width, Value::Null);
    for (v, &c) in kept.iter().zip(cols) {
        if let Some(slot) = out.get_mut(base + c) {
            *slot = v.clone();
        }
    }
}

/// [`widen`], or the row as it is when every column was kept.
fn widen_opt(out: &mut Vec<Value>, kept: &[Value], cols: Option<&[usize]>, width: usize) {
    match cols {
        Some(cols) => widen(out, kept, cols, width),
        None => out.extend_from_slice(kept),
    }
}

/// Makes a joined row in `out`: the outer part (a row, or NULLs for an
/// unmatched inner row) then the inner part (a kept row widened, or
/// NULLs), or inner part first when `swap`.
fn joined(
    out: &mut Vec<Value>,
    swap: bool,
    outer: (Option<&[Value]>, usize),
    inner: (Option<&[Value]>, Option<&[usize]>, usize),
) {
    out.clear();
    let put_outer = |out: &mut Vec<Value>| match outer.0 {
        Some(r) => out.extend_from_slice(r),
        None => out.extend(std::iter::repeat_n(Value::Null, outer.1)),
    };
    let put_inner = |out: &mut Vec<Value>| match inner.0 {
        Some(k) => widen_opt(out, k, inner.1, inner.2),
        None => out.extend(std::iter::repeat_n(Value::Null, inner.2)),
    };
    if swap {
        put_inner(out);
        put_outer(out);
    } else {
        put_outer(out);
        put_inner(out);
    }
}

/// The end of a chain of inner rows.
const NONE: u32 = u32::MAX;

/// Row `n` of a batch as a chain index.
fn row_index(n: usize) -> PgResult<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&i| i != NONE)
        .ok_or_else(|| pgtypes::error::PgError::internal("hash join batch of 2^32 rows"))
}

fn no_spill() -> pgtypes::error::PgError {
    pgtypes::error::PgError::internal("hash join batches before the build")
}

impl HashJoinNode<'_> {
    /// Joined rows come inner columns first: the node then stands for
    /// itself and the permutation the planner puts above a join it turned
    /// around (`fromclause::swapped_hash_join`), without copying every
    /// row a second time. Only without a join filter (it reads the
    /// outer-first row) and for joins whose rows have both parts.
    pub fn emit_swapped(mut self) -> Self {
        self.swap_out =
            self.qual.is_none() && !matches!(self.kind, JoinKind::Semi | JoinKind::Anti);
        self
    }

    /// See [`HashJoinNode::emit_swapped`].
    pub fn swapped(&self) -> bool {
        self.swap_out
    }
}

impl HashJoinNode<'_> {
    /// A parallel participant's right or full join that has seen its
    /// outer rows of this batch: takes every participant's matches if it
    /// is the last, else leaves the unmatched rows to the last.
    fn merge_matches(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        let (Some(join), Some(tails)) = (self.parallel_id, ec.parallel_joins.as_ref()) else {
            return Ok(());
        };
        if !self.keeps_unmatched_inner() {
            return Ok(());
        }
        let nrows = held(&self.held, &self.shared).nrows;
        if nrows == 0 {
            // The same in every participant: nothing to emit, no one
            // to wait for (a batch may be skipped where it has no rows).
            return Ok(());
        }
        match tails.finish(join, self.cur, &self.matched)? {
            Some(all) => self.matched = all,
            None => self.tail = nrows,
        }
        Ok(())
    }
}

impl ExecNode for HashJoinNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if !self.built {
            self.built = true;
            self.build_table(ec)?;
            // Nothing to join with: an inner or semi join is empty.
            if self.nbatch == 1
                && held(&self.held, &self.shared).nrows == 0
                && matches!(self.kind, JoinKind::Inner | JoinKind::Semi)
            {
                self.outer_done = true;
                self.tail = usize::MAX;
            }
        }
        loop {
            if self.outer_done {
                if !self.merged {
                    self.merged = true;
                    self.merge_matches(ec)?;
                }
                if self.keeps_unmatched_inner() {
                    let h = held(&self.held, &self.shared);
                    while self.tail < h.nrows {
                        let i = self.tail;
                        self.tail += 1;
                        ec.tick()?;
                        if !self.matched[i] {
                            let inner = &h.rows[i * self.stride..(i + 1) * self.stride];
                            joined(
                                &mut self.out,
                                self.swap_out,
                                (None, self.outer_width),
                                (Some(inner), self.inner_cols, self.inner_width),
                            );
                            return Ok(true);
                        }
                    }
                }
                if self.nbatch > 1 && self.next_batch(ec)? {
                    continue;
                }
                return Ok(false);
            }
            if !self.have_outer {
                ec.tick()?;
                if !self.next_outer(ec)? {
                    self.outer_done = true;
                    continue;
                }
                self.have_outer = true;
                self.outer_matched = false;
                self.cand = NONE;
                let row = outer_row(self.cur, &self.outer, &self.orow);
                if Self::key(ec, self.outer_keys, row, &mut self.kb)? {
                    if self.nbatch > 1 {
                        let b = self.batch_of(&self.kb);
                        if b != self.cur {
                            // A later batch's row: it waits in that batch's file.
                            let spill = self.spill.as_ref().ok_or_else(no_spill)?;
                            let row = outer_row(self.cur, &self.outer, &self.orow);
                            Self::file(&mut self.outer_files, spill, b).write_row(row)?;
                            self.have_outer = false;
                            continue;
                        }
                    }
                    let h = held(&self.held, &self.shared);
                    if let Some(&(head, _)) = h.table.get(self.kb.as_slice()) {
                        self.cand = head;
                    }
                }
            }
            if self.cand != NONE {
                let i = self.cand as usize;
                let h = held(&self.held, &self.shared);
                self.cand = h.next[i];
                ec.tick()?;
                let inner = &h.rows[i * self.stride..(i + 1) * self.stride];
                joined(
                    &mut self.out,
                    self.swap_out,
                    (
                        Some(outer_row(self.cur, &self.outer, &self.orow)),
                        self.outer_width,
                    ),
                    (Some(inner), self.inner_cols, self.inner_width),
                );
                if !super::join_qual_passes(self.qual, &self.out, ec)? {
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
                        joined(
                            &mut self.out,
                            self.swap_out,
                            (
                                Some(outer_row(self.cur, &self.outer, &self.orow)),
                                self.outer_width,
                            ),
                            (None, None, self.inner_width),
                        );
                        return Ok(true);
                    }
                    JoinKind::Anti => {
                        self.out.clear();
                        self.out
                            .extend_from_slice(outer_row(self.cur, &self.outer, &self.orow));
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
