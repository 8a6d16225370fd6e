//! `ANALYZE`: samples a table and computes the planner statistics
//! ([`engine::statistics`]) PostgreSQL's `compute_scalar_stats` computes —
//! null fraction, average width, distinct count, most common values,
//! histogram and correlation — then stores them through a WAL-logged
//! catalog change, so a standby plans with the same numbers.
//!
//! The sample is a reservoir of `300 × default_statistics_target` rows
//! over one scan of the table as the statement's snapshot sees it (the
//! scan also counts every live row, which gives `reltuples` exactly). A
//! table no bigger than the reservoir is sampled whole, and then the
//! results equal PostgreSQL's for the same rows: the arithmetic below
//! follows analyze.c step by step (distinct-count estimator of Haas and
//! Stokes, the MCV cut-off of `analyze_mcv_list`, equi-depth histogram
//! bounds over the values left out of the MCV list, correlation between
//! physical and value order). A bigger table gets a uniform sample from a
//! fixed-seed generator, so repeated runs over the same rows agree.
//!
//! Invariant: nothing here changes a row or takes a lock stronger than a
//! scan's; the statistics are estimates and may be stale the moment they
//! are stored.
//!
//! Next: `planner::selfuncs` reads the statistics back as selectivities.

use std::cmp::Ordering;
use std::ops::ControlFlow;

use engine::catalog::TableDef;
use engine::statistics::{ColumnStats, RelationStats, TableStats};
use pgtypes::error::PgResult;
use pgtypes::sqltype::SqlType;
use pgtypes::value::{cmp_for_sort, Value};

use crate::executor::{Ectx, Vis};

/// Rows sampled per unit of `default_statistics_target` (PostgreSQL's 300).
const ROWS_PER_TARGET: usize = 300;

/// Samples `table` and computes statistics for the columns at `columns`
/// (all when empty) with `target` MCV entries / histogram bins at most.
pub fn analyze_table(
    ec: &mut Ectx<'_>,
    vis: &Vis,
    table: &TableDef,
    columns: &[usize],
    target: usize,
) -> PgResult<RelationStats> {
    let target = target.clamp(1, 10_000);
    let cap = ROWS_PER_TARGET * target;
    let types = table.types();
    let mut sample: Vec<Vec<Value>> = Vec::new();
    let mut seen: u64 = 0;
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let db = ec.db;
    let cx = vis.cx(db);
    let mut row = Vec::with_capacity(types.len());
    db.heap().scan(table.rel, &cx, &mut |_tid, data| {
        ec.tick()?;
        table.decode_into(data, &types, &mut row, db.heap())?;
        seen += 1;
        if sample.len() < cap {
            sample.push(row.clone());
        } else {
            // Algorithm R: row `seen` replaces a random slot with
            // probability cap / seen. Sample order stays physical order
            // for the rows kept in place, as PostgreSQL's sort by TID.
            let j = rng.below(seen);
            if (j as usize) < cap {
                sample[j as usize] = row.clone();
            }
        }
        Ok(ControlFlow::Continue(()))
    })?;
    let totalrows = seen as f64;
    // An empty table gets its row count but no column statistics, as in
    // PostgreSQL.
    if sample.is_empty() {
        return Ok(RelationStats {
            oid: table.oid,
            table: TableStats {
                reltuples: 0.0,
                relpages: db.heap().nblocks(table.rel)?,
            },
            columns: Vec::new(),
        });
    }
    let wanted: Vec<usize> = if columns.is_empty() {
        (0..types.len()).collect()
    } else {
        let mut c = columns.to_vec();
        c.sort_unstable();
        c.dedup();
        c
    };
    let mut out = Vec::with_capacity(wanted.len());
    for c in wanted {
        let Some(&ty) = types.get(c) else { continue };
        let values: Vec<&Value> = sample.iter().filter_map(|r| r.get(c)).collect();
        out.push(column_stats(c, ty, &values, totalrows, target));
    }
    Ok(RelationStats {
        oid: table.oid,
        table: TableStats {
            reltuples: totalrows,
            relpages: db.heap().nblocks(table.rel)?,
        },
        columns: out,
    })
}

/// A small deterministic generator for reservoir sampling.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Stored width of a non-NULL value, as PostgreSQL counts it (a short
/// varlena's one-byte header included).
fn value_width(v: &Value) -> usize {
    match v {
        Value::Bool(_) => 1,
        Value::Int2(_) => 2,
        Value::Int4(_) | Value::Date(_) => 4,
        Value::Int8(_) | Value::Float8(_) | Value::Timestamp(_) | Value::TimestampTz(_) => 8,
        Value::Interval(_) => 16,
        other => {
            let n = other.to_text_string().len();
            n + if n < 127 { 1 } else { 4 }
        }
    }
}

/// One column's statistics over `values` (the sample, NULLs included), for
/// a table of `totalrows` rows.
pub fn column_stats(
    column: usize,
    ty: SqlType,
    values: &[&Value],
    totalrows: f64,
    target: usize,
) -> ColumnStats {
    let samplerows = values.len();
    // Non-NULL values with their position among the non-NULL ones
    // (PostgreSQL's tupno).
    let mut nonnull: Vec<(&Value, usize)> = values
        .iter()
        .filter(|v| !v.is_null())
        .enumerate()
        .map(|(i, v)| (*v, i))
        .collect();
    let null_cnt = samplerows - nonnull.len();
    let mut st = ColumnStats {
        column,
        ty,
        null_frac: 0.0,
        avg_width: 0,
        n_distinct: 0.0,
        mcv: Vec::new(),
        histogram: Vec::new(),
        correlation: None,
    };
    if samplerows == 0 {
        return st;
    }
    st.null_frac = null_cnt as f64 / samplerows as f64;
    if nonnull.is_empty() {
        // All NULL: PostgreSQL stores stadistinct 0 ("unknown").
        return st;
    }
    let total_width: usize = nonnull.iter().map(|(v, _)| value_width(v)).sum();
    st.avg_width = (total_width as f64 / nonnull.len() as f64) as i32;

    // Sort by value, ties by position (compare_scalars).
    nonnull.sort_by(|a, b| match cmp_for_sort(a.0, b.0) {
        Ordering::Equal => a.1.cmp(&b.1),
        o => o,
    });
    let values_cnt = nonnull.len();

    // Runs of equal values: distinct count, values seen more than once
    // (tracked, most frequent first, ties in value order), correlation.
    let mut ndistinct = 0usize;
    let mut nmultiple = 0usize;
    let mut track: Vec<(usize, usize)> = Vec::new(); // (count, index of first)
    let mut corr_xysum = 0.0f64;
    let mut i = 0;
    while i < values_cnt {
        let mut j = i + 1;
        while j < values_cnt && cmp_for_sort(nonnull[j].0, nonnull[i].0) == Ordering::Equal {
            j += 1;
        }
        for (k, (_, tupno)) in nonnull.iter().enumerate().take(j).skip(i) {
            corr_xysum += (k as f64) * (*tupno as f64);
        }
        let dups = j - i;
        ndistinct += 1;
        if dups > 1 {
            nmultiple += 1;
            // Insert keeping counts descending; an equal count goes after
            // the entries already there (PostgreSQL's insertion loop).
            let pos = track
                .iter()
                .position(|(c, _)| dups > *c)
                .unwrap_or(track.len());
            if pos < target {
                track.insert(pos, (dups, i));
                track.truncate(target);
            }
        }
        i = j;
    }
    let track_cnt = track.len();

    // Distinct count.
    let stanullfrac = st.null_frac;
    let mut stadistinct = if nmultiple == 0 {
        -(1.0 - stanullfrac)
    } else if nmultiple == ndistinct {
        ndistinct as f64
    } else {
        let f1 = (ndistinct - nmultiple) as f64;
        let d = f1 + nmultiple as f64;
        let n = (samplerows - null_cnt) as f64;
        let big_n = totalrows * (1.0 - stanullfrac);
        let mut est = if big_n > 0.0 {
            (n * d) / ((n - f1) + f1 * n / big_n)
        } else {
            0.0
        };
        if est < d {
            est = d;
        }
        if est > big_n {
            est = big_n;
        }
        (est + 0.5).floor()
    };
    if stadistinct > 0.1 * totalrows {
        stadistinct = -(stadistinct / totalrows);
    }
    st.n_distinct = stadistinct;

    // Most common values.
    let mut num_mcv = target;
    if track_cnt == ndistinct && stadistinct > 0.0 && track_cnt <= num_mcv {
        num_mcv = track_cnt;
    } else {
        num_mcv = num_mcv.min(track_cnt);
        if num_mcv > 0 {
            let counts: Vec<usize> = track.iter().map(|(c, _)| *c).collect();
            num_mcv = mcv_cutoff(
                &counts,
                num_mcv,
                stadistinct,
                stanullfrac,
                samplerows,
                totalrows,
            );
        }
    }
    st.mcv = track[..num_mcv]
        .iter()
        .map(|(c, first)| (nonnull[*first].0.clone(), *c as f64 / samplerows as f64))
        .collect();

    // Histogram over the values outside the MCV list.
    let mut num_hist = ndistinct.saturating_sub(num_mcv);
    if num_hist > target {
        num_hist = target + 1;
    }
    if num_hist >= 2 {
        let in_mcv = |v: &Value| {
            st.mcv
                .iter()
                .any(|(m, _)| cmp_for_sort(m, v) == Ordering::Equal)
        };
        let rest: Vec<&Value> = nonnull
            .iter()
            .map(|(v, _)| *v)
            .filter(|v| !in_mcv(v))
            .collect();
        let nvals = rest.len();
        if nvals >= 1 {
            let delta = (nvals - 1) / (num_hist - 1);
            let deltafrac = (nvals - 1) % (num_hist - 1);
            let (mut pos, mut posfrac) = (0usize, 0usize);
            for _ in 0..num_hist {
                if let Some(v) = rest.get(pos) {
                    st.histogram.push((*v).clone());
                }
                pos += delta;
                posfrac += deltafrac;
                if posfrac >= num_hist - 1 {
                    pos += 1;
                    posfrac -= num_hist - 1;
                }
            }
        }
    }

    // Correlation between value order and physical order.
    if values_cnt > 1 {
        let n = values_cnt as f64;
        let corr_xsum = (n - 1.0) * n / 2.0;
        let corr_x2sum = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
        let denom = n * corr_x2sum - corr_xsum * corr_xsum;
        if denom != 0.0 {
            st.correlation = Some((n * corr_xysum - corr_xsum * corr_xsum) / denom);
        }
    }
    st
}

/// PostgreSQL's `analyze_mcv_list`: how many of the most common values
/// (counts descending) are common enough to keep, each significantly more
/// frequent than the average of the values not kept.
fn mcv_cutoff(
    counts: &[usize],
    mut num_mcv: usize,
    stadistinct: f64,
    stanullfrac: f64,
    samplerows: usize,
    totalrows: f64,
) -> usize {
    if samplerows as f64 == totalrows || totalrows <= 1.0 {
        return num_mcv;
    }
    let ndistinct_table = if stadistinct < 0.0 {
        -stadistinct * totalrows
    } else {
        stadistinct
    };
    let mut sumcount: f64 = counts[..num_mcv - 1].iter().map(|c| *c as f64).sum();
    while num_mcv > 0 {
        let mut selec = (1.0 - sumcount / samplerows as f64 - stanullfrac).clamp(0.0, 1.0);
        let otherdistinct = ndistinct_table - (num_mcv as f64 - 1.0);
        if otherdistinct > 1.0 {
            selec /= otherdistinct;
        }
        let big_n = totalrows;
        let n = samplerows as f64;
        let last = counts[num_mcv - 1] as f64;
        let k = big_n * last / n;
        let variance = n * k * (big_n - k) * (big_n - n) / (big_n * big_n * (big_n - 1.0));
        let stddev = variance.max(0.0).sqrt();
        if last > selec * n + 2.0 * stddev + 0.5 {
            break;
        }
        num_mcv -= 1;
        if num_mcv == 0 {
            break;
        }
        sumcount -= counts[num_mcv - 1] as f64;
    }
    num_mcv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[Option<i32>]) -> Vec<Value> {
        v.iter()
            .map(|x| x.map(Value::Int4).unwrap_or(Value::Null))
            .collect()
    }

    #[test]
    fn unique_column_is_minus_one() {
        let vals = ints(&(1..=100).map(Some).collect::<Vec<_>>());
        let refs: Vec<&Value> = vals.iter().collect();
        let st = column_stats(0, SqlType::Int4, &refs, 100.0, 100);
        assert_eq!(st.n_distinct, -1.0);
        assert!(st.mcv.is_empty());
        assert_eq!(st.histogram.len(), 100);
        assert_eq!(st.correlation, Some(1.0));
    }

    #[test]
    fn repeated_values_become_mcvs() {
        // 1 ×3, 2 ×2, 3 ×1, NULL ×2 over 8 rows.
        let vals = ints(&[
            Some(1),
            Some(2),
            Some(1),
            None,
            Some(3),
            Some(1),
            Some(2),
            None,
        ]);
        let refs: Vec<&Value> = vals.iter().collect();
        let st = column_stats(0, SqlType::Int4, &refs, 8.0, 100);
        assert_eq!(st.null_frac, 0.25);
        assert_eq!(
            st.mcv,
            vec![(Value::Int4(1), 3.0 / 8.0), (Value::Int4(2), 2.0 / 8.0)]
        );
        // Haas–Stokes: 3 distinct of 8 rows, more than 10 %: -3/8.
        assert_eq!(st.n_distinct, -0.375);
        assert!(st.histogram.is_empty(), "one value left: no histogram");
    }

    #[test]
    fn all_null_column() {
        let vals = ints(&[None, None]);
        let refs: Vec<&Value> = vals.iter().collect();
        let st = column_stats(0, SqlType::Int4, &refs, 2.0, 100);
        assert_eq!(st.null_frac, 1.0);
        assert_eq!(st.n_distinct, 0.0);
        assert_eq!(st.correlation, None);
    }
}
