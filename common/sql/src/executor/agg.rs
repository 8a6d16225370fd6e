//! Aggregation (PostgreSQL's nodeAgg: AGG_HASHED, AGG_PLAIN, AGG_SORTED).
//!
//! Sorted (`Agg { sorted: true }`, EXPLAIN's GroupAggregate): the input
//! arrives ordered by the group keys (the planner reads a NOT NULL
//! index's order for it), so one group is made at a time: rows whose key
//! bytes equal the current group's are fed to it, the first row of
//! another key emits it. Nothing is held but that group, whatever the
//! number of groups; no spilling. The rest of this essay is the hashed
//! form.
//!
//! The whole input is read on the first call: each row's group keys are
//! encoded into bytes that find its group, and the group's accumulators
//! (`functions::Accumulator`) take the aggregate arguments; `agg(DISTINCT
//! x)` keeps a set of seen values per group. Without GROUP BY there is
//! exactly one group, even over no rows (`count(*)` is 0). Output rows are
//! `[key_0 … key_{k-1}, agg_0 … agg_{n-1}, grouping_0 …]`, groups in
//! first-seen order.
//!
//! GROUPING SETS / ROLLUP / CUBE: each input row is grouped once per set
//! (the set's index is part of the group's key bytes); a key absent from
//! the set is NULL in the group's row, an empty set is one group even over
//! no rows, and each `grouping(…)` call is a column after the aggregates
//! (bit set per argument absent from the row's set, first argument
//! highest). `array_agg(DISTINCT x)` keeps one NULL element, as in
//! PostgreSQL; other DISTINCT aggregates skip NULLs.
//!
//! ## Past `work_mem` (PostgreSQL 13's spilling hash aggregation)
//!
//! Groups are counted as they are made (keys, key bytes, accumulators).
//! Once they pass `work_mem` no new group is made: the groups held keep
//! absorbing their rows, and a row of any other group is written, with
//! its grouping set's index, to one of `spill::PARTITIONS` temporary files
//! chosen by a hash of its key (`spill.rs`). When the input ends the
//! groups held are emitted; then each partition is aggregated the same
//! way — spilling again, with a different hash, if it does not fit — so
//! every group is made exactly once and memory stays near `work_mem`.
//! What grows inside one group (DISTINCT sets, `array_agg` /
//! `string_agg` values) is not counted, as PostgreSQL does not split a
//! group either.
//!
//! A parallel aggregation (Finalize over Gather over Partial) is bounded
//! the same way, per participant as in PostgreSQL: each participant
//! aggregates its rows as above; if its groups fit it hands them to the
//! Finalize step, which combines them (`Accumulator::combine`). If they
//! did not, it writes every group of each pass, as it is made, as a
//! partial group (`Accumulator::partial_state`: PostgreSQL's serialfn)
//! to partitions by the key's hash, the same for every participant. The
//! Finalize step then writes the groups handed to it the same way and
//! merges one partition at a time as rows are asked for — its files from
//! every participant together, spilling again with another hash past the
//! budget — so the session holds one partition's groups, and each
//! participant one pass's.

use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::Instant;

use super::execnodes::{build, ExecNode, Node};
use super::spill::{row_bytes, split_tag, KeyMap, KeySet, Partitions, Spill, TempFile, PARTITIONS};
use super::{Ectx, SettingsView, Vis};
use crate::expr::Grouping;
use crate::functions::Accumulator;
use crate::planner::plannodes::{NodeKind, PlanNode};
use pgtypes::error::{PgError, PgResult};
use pgtypes::value::Value;
use storage::keycodec::encode_key_value;

struct Group {
    /// Index of its grouping set (0 without GROUPING SETS).
    set: usize,
    keys: Vec<Value>,
    accs: Vec<Accumulator>,
    seen: Vec<Option<KeySet>>,
}

/// A running aggregation.
pub struct AggNode<'p> {
    input: Node<'p>,
    grouping: &'p Grouping,
    groups: Option<std::vec::IntoIter<Group>>,
    /// Spilled partitions still to aggregate, with their depth.
    pending: Vec<(TempFile, u64)>,
    spill: Option<Spill>,
    out: Vec<Value>,
    /// Sorted input: the group being made, its key bytes, and whether the
    /// input has ended.
    sorted: Option<Sorted>,
    /// A Finalize aggregation: `input` is the session's share of the
    /// partial aggregation's input; workers run copies of it.
    parallel: Option<Parallel<'p>>,
    /// Partial groups still to merge (a parallel aggregation whose
    /// groups did not fit): the files of one partition, with their depth.
    partials: Vec<(Vec<TempFile>, u64)>,
}

/// A participant's share of a parallel aggregation: its groups, or —
/// when they did not fit in its budget — every one of its partial groups
/// written to partitions that line up with every other participant's
/// (`Partitions::into_files` at depth 0).
enum Share {
    Held(Vec<Group>),
    Spilled(Vec<Option<TempFile>>),
}

/// The Gather below a Finalize aggregation (see the module doc), and
/// what [`Parallel::of`] reads from it.
#[derive(Clone, Copy)]
pub struct Parallel<'p> {
    /// The Partial aggregation's input: each participant builds its own.
    pub input: &'p PlanNode,
    /// Workers planned.
    pub workers: usize,
    /// The Gather and the Partial aggregation, for EXPLAIN ANALYZE.
    pub gather: &'p PlanNode,
    /// See `gather`.
    pub partial: &'p PlanNode,
    /// What the statement sees.
    pub vis: &'p Vis,
}

/// The state of a group aggregation over input sorted by its keys.
#[derive(Default)]
struct Sorted {
    cur: Option<Group>,
    key: Vec<u8>,
    kb: Vec<u8>,
    done: bool,
}

impl<'p> Parallel<'p> {
    /// The parts of `gather`, a Gather over a Partial aggregation; None
    /// for any other node.
    pub fn of(gather: &'p PlanNode, vis: &'p Vis) -> Option<Self> {
        let NodeKind::Gather {
            input: partial,
            workers,
        } = &gather.kind
        else {
            return None;
        };
        let NodeKind::Agg { input, .. } = &partial.kind else {
            return None;
        };
        Some(Parallel {
            input,
            workers: *workers,
            vis,
            gather,
            partial,
        })
    }
}

impl<'p> AggNode<'p> {
    /// Reads its input on the first `next` (hashed), or group by group as
    /// it is asked for rows (`sorted`: the input is ordered by the keys).
    pub fn new(input: Node<'p>, grouping: &'p Grouping, sorted: bool) -> Self {
        AggNode {
            input,
            grouping,
            groups: None,
            pending: Vec::new(),
            spill: None,
            out: Vec::new(),
            sorted: (sorted && !grouping.group_by.is_empty() && grouping.sets.is_none())
                .then(Sorted::default),
            parallel: None,
            partials: Vec::new(),
        }
    }

    /// A Finalize aggregation over a Gather (see [`Parallel`]); `input`
    /// is the session's own copy of the partial aggregation's input.
    pub fn parallel(input: Node<'p>, grouping: &'p Grouping, par: Parallel<'p>) -> Self {
        let mut n = AggNode::new(input, grouping, false);
        n.parallel = Some(par);
        n
    }

    /// The temporary-file settings, read when the node started.
    fn spill(&self) -> PgResult<Spill> {
        self.spill
            .clone()
            .ok_or_else(|| PgError::internal("aggregation before its start"))
    }

    /// This participant's share of a parallel aggregation (see [`Share`]):
    /// the groups of its rows if they fit; else the groups of each pass
    /// (the first, then each partition it spilled), as they are made,
    /// written as partial groups, so it holds no more than one pass's.
    fn share(&mut self, ec: &mut Ectx<'_>) -> PgResult<Share> {
        let groups = self.consume(ec, None, 0)?;
        if self.pending.is_empty() {
            return Ok(Share::Held(groups));
        }
        let spill = self.spill()?;
        let mut out = Partitions::new(0);
        let (mut kb, mut row) = (Vec::new(), Vec::new());
        for grp in &groups {
            write_partial(&mut out, &spill, grp, &mut kb, &mut row)?;
        }
        drop(groups);
        while let Some((f, level)) = self.pending.pop() {
            for grp in self.consume(ec, Some(f), level)? {
                write_partial(&mut out, &spill, &grp, &mut kb, &mut row)?;
            }
        }
        Ok(Share::Spilled(out.into_files()?))
    }

    /// Merges the partial groups of one partition (the files each
    /// participant wrote for it, or a partition this merge spilled at
    /// `level`): the groups that fit in the budget are combined and
    /// returned, the partial groups of any other key go to partitions of
    /// the next depth, queued on `partials`.
    fn merge_partials(
        &mut self,
        ec: &mut Ectx<'_>,
        files: Vec<TempFile>,
        level: u64,
    ) -> PgResult<Vec<Group>> {
        let g = self.grouping;
        let spill = self.spill()?;
        let per_group = 64 + g.aggs.len() * 64;
        let mut groups: Vec<Group> = Vec::new();
        let mut index: KeyMap<usize> = KeyMap::default();
        let (mut mem, mut full) = (0usize, false);
        let mut parts = Partitions::new(level);
        let (mut buf, mut kb) = (Vec::new(), Vec::new());
        for mut f in files {
            while f.read_row(&mut buf)? {
                ec.tick()?;
                let grp = read_partial(g, &buf)?;
                group_key(&grp, &mut kb);
                match index.get(&kb) {
                    Some(&i) => combine_group(&mut groups[i], grp)?,
                    None if full => parts.write(&spill, &kb, &buf, None)?,
                    None => {
                        mem += row_bytes(&grp.keys) + 2 * kb.len() + per_group;
                        full = mem > spill.hash_mem;
                        index.insert(kb.clone(), groups.len());
                        groups.push(grp);
                    }
                }
            }
        }
        let mut next = Vec::new();
        parts.finish(&mut next)?;
        self.partials
            .extend(next.into_iter().map(|(f, level)| (vec![f], level)));
        Ok(groups)
    }

    /// The groups of a parallel aggregation: workers and this session
    /// read the one parallel scan's pages as they claim them, each
    /// aggregating what it read; their groups are merged here
    /// (`Accumulator::combine`). Without workers (none allowed, none to
    /// be had, or EXPLAIN ANALYZE measuring this thread) the session
    /// reads every page alone.
    fn consume_parallel(&mut self, ec: &mut Ectx<'_>, par: Parallel<'p>) -> PgResult<Vec<Group>> {
        let allowed = ec
            .settings
            .get_setting("max_parallel_workers_per_gather")
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(par.workers);
        let mut want = par.workers.min(allowed);
        if parallel_rel(par.input).is_none() {
            return self.consume(ec, None, 0);
        }
        if super::execnodes::instrumenting() {
            // Measured on this thread alone: the session is the one
            // participant, its partial groups what Gather passes up.
            let t = Instant::now();
            let groups = self.consume(ec, None, 0)?;
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            super::execnodes::record_run(par.partial, groups.len() as u64, ms);
            super::execnodes::record_run(par.gather, groups.len() as u64, ms);
            return Ok(groups);
        }
        if par.vis.serializable.is_some() {
            want = 0;
        }
        let mut xacts = Vec::new();
        for _ in 0..want {
            match ec.xact.worker() {
                Ok(x) => xacts.push(x),
                Err(_) => break, // no proc slot: fewer workers
            }
        }
        if xacts.is_empty() {
            return self.consume(ec, None, 0);
        }
        // Every table the participants read, locked for them all here.
        let mut tables = Vec::new();
        tables_read(par.input, &mut tables);
        let mut locks = Vec::with_capacity(tables.len());
        for t in &tables {
            locks.push(t.lock.shared());
            t.check_not_dropped()?;
        }
        let blocks = Arc::new(super::scan::ParallelScans::new(ec.db, par.input)?);
        let tails = Arc::new(super::hashjoin::ParallelJoins::new(xacts.len() + 1));
        let stop = AtomicBool::new(false);
        let ws = WorkerSetup {
            settings: WorkerSettings::capture(ec.settings),
            db: ec.db,
            params: ec.params,
            stmt_ts: ec.stmt_ts,
            xact_ts: ec.xact_ts,
            deadline: ec.deadline,
            backend_pid: ec.backend_pid,
            path: ec.path.clone(),
            snapshot: ec.snapshot.clone(),
            plans: ec.query.as_ref().map(|q| q.shared.clone()),
        };
        let grouping = self.grouping;
        std::thread::scope(|sc| {
            // A thread the system will not give is a worker less (its
            // proc slot goes back as its Xact drops).
            let handles: Vec<_> = xacts
                .into_iter()
                .filter_map(|x| {
                    let (ws, stop, blocks) = (&ws, &stop, blocks.clone());
                    let tails = tails.clone();
                    std::thread::Builder::new()
                        .name("parallel worker".into())
                        .spawn_scoped(sc, move || ws.run(x, stop, blocks, tails, par, grouping))
                        .ok()
                })
                .collect();
            tails.set_participants(handles.len() + 1);
            let prev = ec.parallel_scan.replace(blocks.clone());
            let prev_tails = ec.parallel_joins.replace(tails.clone());
            let held = std::mem::replace(&mut ec.locks_held, true);
            let mine = {
                let _leaves = tails.participant();
                self.share(ec)
            };
            ec.parallel_scan = prev;
            ec.parallel_joins = prev_tails;
            ec.locks_held = held;
            if mine.is_err() {
                stop.store(true, AtomicOrdering::Relaxed);
                blocks.finish();
            }
            let theirs: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
            let mut shares = vec![mine?];
            for r in theirs {
                shares.push(r.map_err(|_| PgError::internal("a parallel worker panicked"))??);
            }
            self.merge_shares(shares)
        })
    }

    /// The Finalize step: the groups held by participants are combined
    /// here (each held no more than its budget); if any participant's did
    /// not fit, these are written as partial groups too and every
    /// partition's files are queued on `partials`, to be merged one
    /// partition at a time as rows are asked for.
    fn merge_shares(&mut self, shares: Vec<Share>) -> PgResult<Vec<Group>> {
        let mut groups: Vec<Group> = Vec::new();
        let mut index: KeyMap<usize> = KeyMap::default();
        let mut kb = Vec::new();
        let mut lined_up: Vec<Vec<TempFile>> = (0..PARTITIONS).map(|_| Vec::new()).collect();
        for share in shares {
            let part = match share {
                Share::Held(part) => part,
                Share::Spilled(files) => {
                    for (i, f) in files.into_iter().enumerate() {
                        lined_up[i % PARTITIONS].extend(f);
                    }
                    continue;
                }
            };
            for g in part {
                match index.get(group_key(&g, &mut kb)) {
                    Some(&i) => combine_group(&mut groups[i], g)?,
                    None => {
                        index.insert(kb.clone(), groups.len());
                        groups.push(g);
                    }
                }
            }
        }
        if lined_up.iter().all(Vec::is_empty) {
            return Ok(groups);
        }
        let spill = self.spill()?;
        let mut out = Partitions::new(0);
        let mut row = Vec::new();
        for grp in &groups {
            write_partial(&mut out, &spill, grp, &mut kb, &mut row)?;
        }
        for (i, f) in out.into_files()?.into_iter().enumerate() {
            lined_up[i % PARTITIONS].extend(f);
        }
        self.partials.extend(
            lined_up
                .into_iter()
                .filter(|files| !files.is_empty())
                .map(|files| (files, 1)),
        );
        Ok(Vec::new())
    }

    /// The next group of sorted input: rows are fed to the current group
    /// until one with other key bytes starts the next.
    fn next_sorted(&mut self, ec: &mut Ectx<'_>) -> PgResult<Option<Group>> {
        let g = self.grouping;
        loop {
            let Some(st) = self.sorted.as_mut() else {
                return Ok(None);
            };
            if st.done {
                return Ok(st.cur.take());
            }
            if !self.input.next(ec)? {
                st.done = true;
                continue;
            }
            ec.tick()?;
            let row = self.input.row();
            let p = ec.params;
            st.kb.clear();
            for k in &g.group_by {
                let v = crate::expr::eval_ref(k, row, p, ec)?;
                encode_key_value(&v, &mut st.kb);
            }
            if st.cur.is_some() && st.kb == st.key {
                if let Some(grp) = st.cur.as_mut() {
                    feed(g, grp, row, ec)?;
                }
                continue;
            }
            let mut keys = Vec::with_capacity(g.group_by.len());
            for k in &g.group_by {
                keys.push(crate::expr::eval(k, row, p, ec)?);
            }
            let mut grp = new_group(g, 0, keys);
            feed(g, &mut grp, row, ec)?;
            std::mem::swap(&mut st.key, &mut st.kb);
            if let Some(done) = st.cur.replace(grp) {
                return Ok(Some(done));
            }
        }
    }

    fn new_group(&self, set: usize, keys: Vec<Value>) -> Group {
        new_group(self.grouping, set, keys)
    }

    /// Aggregates the input (`src` None) or a spilled partition at depth
    /// `level`: the groups made, the partitions spilled queued on
    /// `pending`.
    fn consume(
        &mut self,
        ec: &mut Ectx<'_>,
        mut src: Option<TempFile>,
        level: u64,
    ) -> PgResult<Vec<Group>> {
        let g = self.grouping;
        let spill = self.spill()?;
        let mut groups: Vec<Group> = Vec::new();
        let mut index: KeyMap<usize> = KeyMap::default();
        let all: Vec<Vec<usize>>;
        let sets: &[Vec<usize>] = match &g.sets {
            Some(s) => s,
            None => {
                all = vec![(0..g.group_by.len()).collect()];
                &all
            }
        };
        // An empty grouping set is one group, even over no rows.
        if src.is_none() {
            for (si, set) in sets.iter().enumerate() {
                if set.is_empty() {
                    let keys = vec![Value::Null; g.group_by.len()];
                    index.insert((si as u32).to_be_bytes().to_vec(), groups.len());
                    groups.push(self.new_group(si, keys));
                }
            }
        }
        let per_group = 64 + g.aggs.len() * 64;
        let mut mem = 0usize;
        let mut full = false;
        let mut parts = Partitions::new(level);
        let mut buf = Vec::new();
        let mut kb = Vec::new();
        let mut gis = Vec::with_capacity(sets.len());
        let mut vals = Vec::with_capacity(g.group_by.len());
        loop {
            // The row, and for a spilled one the grouping set it is for.
            let (row, only): (&[Value], Option<usize>) = match src.as_mut() {
                None => {
                    if !self.input.next(ec)? {
                        break;
                    }
                    (self.input.row(), None)
                }
                Some(f) => {
                    if !f.read_row(&mut buf)? {
                        break;
                    }
                    let (row, si) = split_tag(&buf)?;
                    (row, Some(si as usize))
                }
            };
            ec.tick()?;
            let p = ec.params;
            vals.clear();
            for k in &g.group_by {
                vals.push(crate::expr::eval(k, row, p, ec)?);
            }
            gis.clear();
            for (si, set) in sets.iter().enumerate() {
                if only.is_some_and(|o| o != si) {
                    continue;
                }
                kb.clear();
                kb.extend_from_slice(&(si as u32).to_be_bytes());
                for &k in set {
                    encode_key_value(&vals[k], &mut kb);
                }
                let gi = match index.get(&kb) {
                    Some(i) => *i,
                    None if full => {
                        // Its group waits for a later pass.
                        parts.write(&spill, &kb, row, Some(si as i32))?;
                        continue;
                    }
                    None => {
                        let mut keys = vec![Value::Null; g.group_by.len()];
                        for &k in set {
                            keys[k] = vals[k].clone();
                        }
                        mem += row_bytes(&keys) + 2 * kb.len() + per_group;
                        full = mem > spill.hash_mem;
                        groups.push(self.new_group(si, keys));
                        index.insert(kb.clone(), groups.len() - 1);
                        groups.len() - 1
                    }
                };
                gis.push(gi);
            }
            for &gi in &gis {
                feed(g, &mut groups[gi], row, ec)?;
            }
        }
        drop(src);
        parts.finish(&mut self.pending)?;
        Ok(groups)
    }
}

impl ExecNode for AggNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.sorted.is_some() {
            return match self.next_sorted(ec)? {
                Some(grp) => self.emit(grp).map(|()| true),
                None => Ok(false),
            };
        }
        if self.groups.is_none() {
            self.spill = Some(Spill::new(ec));
            let groups = match self.parallel {
                Some(par) => self.consume_parallel(ec, par)?,
                None => self.consume(ec, None, 0)?,
            };
            self.groups = Some(groups.into_iter());
        }
        let grp = loop {
            match self.groups.as_mut().and_then(|g| g.next()) {
                Some(grp) => break Some(grp),
                None => {
                    let groups = if let Some((f, level)) = self.pending.pop() {
                        self.consume(ec, Some(f), level)?
                    } else if let Some((files, level)) = self.partials.pop() {
                        self.merge_partials(ec, files, level)?
                    } else {
                        break None;
                    };
                    self.groups = Some(groups.into_iter());
                }
            }
        };
        match grp {
            Some(grp) => self.emit(grp).map(|()| true),
            None => Ok(false),
        }
    }
    fn row(&self) -> &[Value] {
        &self.out
    }
}

impl AggNode<'_> {
    /// Makes `grp`'s output row.
    fn emit(&mut self, grp: Group) -> PgResult<()> {
        self.out.clear();
        self.out.extend(grp.keys);
        for a in &grp.accs {
            self.out.push(a.finish()?);
        }
        // grouping(a, b, …): bit set for each argument not in the
        // row's grouping set, the first argument highest.
        let set = self.grouping.sets.as_ref().map(|s| &s[grp.set]);
        for call in &self.grouping.grouping_calls {
            let mut v = 0i32;
            for k in call {
                let absent = set.is_some_and(|s| !s.contains(k));
                v = (v << 1) | absent as i32;
            }
            self.out.push(Value::Int4(v));
        }
        Ok(())
    }
}

/// A new group of grouping set `set` with these keys.
fn new_group(g: &Grouping, set: usize, keys: Vec<Value>) -> Group {
    Group {
        set,
        keys,
        accs: g.aggs.iter().map(Accumulator::for_call).collect(),
        seen: g
            .aggs
            .iter()
            .map(|a| a.distinct.then(KeySet::default))
            .collect(),
    }
}

/// Feeds one input row to a group's aggregates: FILTER, DISTINCT and the
/// aggregate's ORDER BY keys as each call has them.
fn feed(g: &Grouping, grp: &mut Group, row: &[Value], ec: &mut Ectx<'_>) -> PgResult<()> {
    let p = ec.params;
    for (i, a) in g.aggs.iter().enumerate() {
        if a.is_plain() {
            let v = match &a.arg {
                Some(e) => crate::expr::eval_ref(e, row, p, ec)?,
                None => std::borrow::Cow::Owned(Value::Null),
            };
            grp.accs[i].update(&v)?;
            continue;
        }
        // FILTER, the argument, string_agg's delimiter and the
        // aggregate's ORDER BY keys; None when FILTER rejects it.
        let Some(input) = a.inputs(&mut |e| crate::expr::eval(e, row, p, ec))? else {
            continue;
        };
        if let Some(seen) = &mut grp.seen[i] {
            // array_agg keeps (one) NULL element.
            if input.value.is_null() && a.func != crate::functions::AggFunc::ArrayAgg {
                continue;
            }
            let mut k = Vec::new();
            encode_key_value(&input.value, &mut k);
            if !seen.insert(k) {
                continue;
            }
        }
        grp.accs[i].feed(input)?;
    }
    Ok(())
}

/// Combines `from`, the same group's partial aggregates over other rows,
/// into `into`.
fn combine_group(into: &mut Group, from: Group) -> PgResult<()> {
    for (a, b) in into.accs.iter_mut().zip(from.accs) {
        a.combine(b)?;
    }
    Ok(())
}

/// Writes `grp` as a partial group — `[set, keys…, (rows, state) per
/// aggregate]` (`Accumulator::partial_state`) — to the partition of its
/// key.
fn write_partial(
    parts: &mut Partitions,
    spill: &Spill,
    grp: &Group,
    kb: &mut Vec<u8>,
    row: &mut Vec<Value>,
) -> PgResult<()> {
    row.clear();
    row.push(Value::Int4(grp.set as i32));
    row.extend(grp.keys.iter().cloned());
    for a in &grp.accs {
        row.extend(a.partial_state()?);
    }
    parts.write(spill, group_key(grp, kb), row, None)
}

/// The group [`write_partial`] wrote.
fn read_partial(g: &Grouping, row: &[Value]) -> PgResult<Group> {
    let bad = || PgError::internal("a damaged partial group");
    let nk = g.group_by.len();
    if row.len() != 1 + nk + 2 * g.aggs.len() {
        return Err(bad());
    }
    let set = match row[0] {
        Value::Int4(s) => usize::try_from(s).map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    let mut grp = new_group(g, set, row[1..1 + nk].to_vec());
    for (i, a) in grp.accs.iter_mut().enumerate() {
        let at = 1 + nk + 2 * i;
        a.set_partial_state(&row[at], &row[at + 1])?;
    }
    Ok(grp)
}

/// A group's identity across participants: its grouping set and keys.
fn group_key<'k>(g: &Group, kb: &'k mut Vec<u8>) -> &'k [u8] {
    kb.clear();
    kb.extend_from_slice(&(g.set as u32).to_be_bytes());
    for k in &g.keys {
        encode_key_value(k, kb);
    }
    kb
}

/// The tables `n`'s scans read, each once.
fn tables_read<'p>(n: &'p PlanNode, out: &mut Vec<&'p Arc<engine::catalog::TableDef>>) {
    if let NodeKind::SeqScan { table, .. } | NodeKind::IndexScan { table, .. } = &n.kind {
        if !out.iter().any(|t| Arc::ptr_eq(&t.lock, &table.lock)) {
            out.push(table);
        }
    }
    for c in n.children() {
        tables_read(c, out);
    }
}

/// The table of the one parallel scan in a participant's plan.
pub(super) fn parallel_rel(n: &PlanNode) -> Option<pgtypes::RelFileId> {
    if let NodeKind::SeqScan {
        table,
        parallel: true,
        ..
    } = &n.kind
    {
        return Some(table.rel);
    }
    n.children().into_iter().find_map(parallel_rel)
}

/// The settings a worker's statement context answers with: the session's
/// values of those the executor and the parallel-safe functions read,
/// copied when the workers start (PostgreSQL's workers likewise start
/// with their leader's GUCs).
struct WorkerSettings {
    values: Vec<(&'static str, Option<String>)>,
}

impl WorkerSettings {
    const NAMES: &'static [&'static str] = &[
        "work_mem",
        "hash_mem_multiplier",
        "temp_file_limit",
        "log_temp_files",
        "datestyle",
        "intervalstyle",
        "timezone",
        "extra_float_digits",
        "bytea_output",
        "standard_conforming_strings",
        "client_encoding",
        "lc_monetary",
        "lc_numeric",
        "lc_time",
        "role",
        "session_authorization",
    ];

    fn capture(s: &dyn SettingsView) -> WorkerSettings {
        WorkerSettings {
            values: Self::NAMES.iter().map(|&n| (n, s.get_setting(n))).collect(),
        }
    }
}

impl SettingsView for WorkerSettings {
    fn get_setting(&self, name: &str) -> Option<String> {
        self.values
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.clone())
    }
    fn lock_timeout(&self) -> Option<std::time::Duration> {
        None
    }
}

/// What each worker's statement context is made of (the session's,
/// shared read-only across the workers' threads).
struct WorkerSetup<'a> {
    settings: WorkerSettings,
    db: &'a engine::Engine,
    params: &'a [Value],
    stmt_ts: i64,
    xact_ts: i64,
    deadline: Option<Instant>,
    backend_pid: i32,
    path: Arc<[pgtypes::Oid]>,
    snapshot: Option<Arc<txn::snapshot::Snapshot>>,
    plans: Option<Arc<crate::planner::plannodes::StatementPlans>>,
}

impl WorkerSetup<'_> {
    /// One worker: aggregates the rows of the pages it claims. `stop` is
    /// its cancel flag: the session sets it when its own share failed
    /// (a cancel request, statement_timeout, an error), and the worker
    /// checks it as any statement checks for interrupts. A worker that
    /// fails hands out the remaining pages to nobody, so the session's
    /// own share ends after its current page and the error comes back at
    /// once rather than after a full share.
    fn run(
        &self,
        mut xact: engine::xact::Xact,
        stop: &AtomicBool,
        blocks: Arc<super::scan::ParallelScans>,
        tails: Arc<super::hashjoin::ParallelJoins>,
        par: Parallel<'_>,
        grouping: &Grouping,
    ) -> PgResult<Share> {
        let mut ec = Ectx::new(
            self.db,
            &mut xact,
            stop,
            self.params,
            &self.settings,
            self.stmt_ts,
            self.xact_ts,
            self.deadline,
            self.backend_pid,
        );
        ec.path = self.path.clone();
        ec.snapshot = self.snapshot.clone();
        ec.query = self
            .plans
            .as_ref()
            .map(|p| Box::new(super::subplan::QueryState::new(p.clone(), par.vis)));
        ec.parallel_scan = Some(blocks.clone());
        ec.parallel_joins = Some(tails.clone());
        ec.locks_held = true;
        let _leaves = tails.participant();
        let mut node = AggNode::new(build(par.input, par.vis), grouping, false);
        node.spill = Some(Spill::new(&ec));
        let r = node.share(&mut ec);
        if r.is_err() {
            blocks.finish();
        }
        r
    }
}
