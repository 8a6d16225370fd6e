//! Row estimates from `ANALYZE`'s statistics (PostgreSQL's selfuncs.c and
//! clausesel.c, in miniature): what fraction of a table's rows a condition
//! keeps, and how many rows an equi-join gives.
//!
//! The planner asks two questions:
//!
//! - [`clauselist_selectivity`]: the fraction of rows a list of conjuncts
//!   keeps. `col = const` reads the most common values, then spreads what
//!   they leave over the other distinct values; `<`, `<=`, `>`, `>=`
//!   read the histogram (the values below or above the constant, with
//!   linear interpolation inside the bucket) plus the MCVs on that side;
//!   `IS [NOT] NULL` reads the null fraction; `IN (…)` adds equalities;
//!   AND multiplies, OR adds less the overlap, NOT subtracts. A lower and
//!   an upper bound on one column are one range (`lo + hi - 1`), not two
//!   independent conditions.
//! - [`eqjoin_selectivity`]: `a = b` across two inputs keeps `1 /
//!   max(nd(a), nd(b))` of the cross product (each value of the side with
//!   fewer distinct values meets its match once).
//!
//! Without statistics (a table never analysed, an expression rather than
//! a column) every answer is PostgreSQL's default: 0.005 for an equality,
//! 1/3 for an inequality, 200 distinct values, a primary or unique key
//! unique. Invariant: every selectivity lies in `[0, 1]` and no estimate
//! is below one row — statistics are guesses, never a reason to be wrong
//! (`engine::statistics`).

use std::cmp::Ordering;
use std::sync::Arc;

use crate::functions::Func;
use engine::catalog::{CatalogView, TableDef};
use engine::statistics::{ColumnStats, RelationStats};
use pgtypes::value::{cmp_sql, Value};

use crate::expr::{BinOp, Expr, UnaryOp};

/// PostgreSQL's DEFAULT_EQ_SEL.
pub const DEFAULT_EQ_SEL: f64 = 0.005;
/// PostgreSQL's DEFAULT_INEQ_SEL.
pub const DEFAULT_INEQ_SEL: f64 = 1.0 / 3.0;
/// PostgreSQL's DEFAULT_RANGE_INEQ_SEL (a range whose ends are unknown).
pub const DEFAULT_RANGE_INEQ_SEL: f64 = 0.005;
/// PostgreSQL's DEFAULT_MATCH_SEL (LIKE with no fixed prefix).
pub const DEFAULT_MATCH_SEL: f64 = 0.005;
/// PostgreSQL's DEFAULT_NUM_DISTINCT.
pub const DEFAULT_NUM_DISTINCT: f64 = 200.0;
/// Rows of a table never analysed (PostgreSQL measures the file; hotpair's
/// planner sees only the catalog).
pub const DEFAULT_TABLE_ROWS: f64 = 1000.0;

/// What the estimates know about one column of the row being estimated.
#[derive(Clone, Copy)]
pub struct ColRef<'a> {
    /// `ANALYZE`'s statistics of the column, if gathered.
    pub stats: Option<&'a ColumnStats>,
    /// Rows of the table the column belongs to.
    pub table_rows: f64,
    /// A single-column primary or unique key.
    pub unique: bool,
}

/// The statistics behind a row's columns: `col(i)` describes column `i`
/// of the expressions estimated (None: not a table column).
pub trait ColumnSource {
    /// Column `i`.
    fn col(&self, i: usize) -> Option<ColRef<'_>>;
}

/// One table's columns, numbered from 0 as in its scan's row.
pub struct TableColumns {
    /// The table.
    pub table: Arc<TableDef>,
    /// Its statistics, if analysed.
    pub stats: Option<Arc<RelationStats>>,
    /// Columns that are a unique key alone (a unique index, no predicate).
    unique: Vec<usize>,
    /// Its heap's pages now (None: unknown).
    cur_pages: Option<u32>,
}

impl TableColumns {
    /// The table with what the catalog knows of it.
    pub fn new(catalog: &CatalogView<'_>, table: Arc<TableDef>) -> TableColumns {
        let stats = catalog.statistics(table.oid);
        let cur_pages = catalog.catalog().relation_pages(table.rel);
        let unique = table
            .indexes
            .list()
            .iter()
            .filter(|ix| ix.spec.unique && ix.spec.predicate.is_none())
            .filter_map(|ix| match ix.spec.columns.as_slice() {
                [c] => Some(*c),
                _ => None,
            })
            .collect();
        TableColumns {
            table,
            stats,
            unique,
            cur_pages,
        }
    }

    /// Estimated rows of the whole table.
    pub fn rows(&self) -> f64 {
        match self.cur_pages {
            Some(pages) => estimate_rows(
                self.stats.as_deref(),
                pages,
                self.avg_width()
                    .unwrap_or_else(|| declared_width(&self.table)),
            ),
            None => table_rows(self.stats.as_deref()),
        }
    }

    /// Pages of the table: now, else by its statistics (0: unknown).
    pub fn pages(&self) -> u32 {
        match self.cur_pages {
            Some(p) if self.stats.is_none() => p.max(NEVER_ANALYSED_PAGES),
            Some(p) => p,
            None => self.stats.as_ref().map_or(0, |s| s.table.relpages),
        }
    }

    /// Average width in bytes of the columns `keep` selects, by the
    /// statistics where gathered, by type otherwise.
    pub fn width_of(&self, keep: &dyn Fn(usize) -> bool) -> u32 {
        let stats = self.stats.as_ref();
        self.table
            .columns
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(i, c)| match stats.and_then(|s| s.column(i)) {
                Some(cs) => cs.avg_width.max(0) as u32,
                None => super::costsize::type_width(c.ty),
            })
            .sum()
    }

    /// Average row width in bytes, with the statistics' widths where
    /// gathered (None without statistics).
    pub fn avg_width(&self) -> Option<u32> {
        let stats = self.stats.as_ref()?;
        Some(
            self.table
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| match stats.column(i) {
                    Some(cs) => cs.avg_width.max(0) as u32,
                    None => super::costsize::type_width(c.ty),
                })
                .sum(),
        )
    }

    /// Column `c` of the table.
    pub fn column(&self, c: usize) -> Option<ColRef<'_>> {
        if c >= self.table.columns.len() {
            return None;
        }
        Some(ColRef {
            stats: self.stats.as_ref().and_then(|s| s.column(c)),
            table_rows: self.rows(),
            unique: self.unique.contains(&c),
        })
    }
}

impl ColumnSource for TableColumns {
    fn col(&self, i: usize) -> Option<ColRef<'_>> {
        self.column(i)
    }
}

/// No column known: every estimate is a default.
pub struct NoColumns;

impl ColumnSource for NoColumns {
    fn col(&self, _: usize) -> Option<ColRef<'_>> {
        None
    }
}

/// Pages a never-analysed table is assumed to have at least (PostgreSQL's
/// estimate_rel_size: a table empty when planned may not stay so).
const NEVER_ANALYSED_PAGES: u32 = 10;

/// Bytes of a page for tuples, and of one tuple beyond its data (header
/// and line pointer), for the density of a table without statistics.
const PAGE_SPACE: f64 = 8192.0 - 24.0;
const TUPLE_OVERHEAD: f64 = 24.0 + 4.0;

/// The declared width of a table's row (each column's type width).
fn declared_width(table: &TableDef) -> u32 {
    table
        .columns
        .iter()
        .map(|c| super::costsize::type_width(c.ty))
        .sum()
}

/// PostgreSQL's estimate_rel_size: the rows a table holds now, from its
/// current `pages` — analysed, the analysed rows scaled up by the pages
/// it gained since; else at the density its row width gives, a
/// never-analysed table counting at least [`NEVER_ANALYSED_PAGES`] pages.
///
/// Unlike PostgreSQL, an analysed table is never scaled *down*: its file
/// is shorter on a standby (replay extends it only to the pages WAL
/// touches, not by the primary's bulk extension), and the two nodes must
/// plan alike from the same rows.
pub fn estimate_rows(stats: Option<&RelationStats>, pages: u32, width: u32) -> f64 {
    let density = match stats {
        Some(s) if s.table.relpages > 0 => {
            let grown = (pages as f64 / s.table.relpages as f64).max(1.0);
            return (s.table.reltuples.max(0.0) * grown).round().max(1.0);
        }
        // Analysed while empty: it has rows now only if it grew.
        Some(_) if pages == 0 => return 1.0,
        // Whole rows a page holds (PostgreSQL divides integers here).
        _ => (PAGE_SPACE / (width as f64 + TUPLE_OVERHEAD)).floor(),
    };
    let pages = if stats.is_none() {
        pages.max(NEVER_ANALYSED_PAGES)
    } else {
        pages
    };
    (density * pages as f64).round().max(1.0)
}

/// Rows of a table by its statistics alone (its size unknown: at least
/// one; a table analysed empty is taken as small, not as certainly empty).
pub fn table_rows(stats: Option<&RelationStats>) -> f64 {
    match stats {
        Some(s) => s.table.reltuples.max(1.0),
        None => DEFAULT_TABLE_ROWS,
    }
}

/// Distinct values of a column (at least one).
pub fn ndistinct(c: &ColRef<'_>) -> f64 {
    if c.unique {
        return c.table_rows.max(1.0);
    }
    let nd = match c.stats {
        Some(s) if s.n_distinct > 0.0 => s.n_distinct,
        Some(s) if s.n_distinct < 0.0 => -s.n_distinct * c.table_rows,
        _ => DEFAULT_NUM_DISTINCT.min(c.table_rows),
    };
    nd.max(1.0)
}

fn clamp(s: f64) -> f64 {
    if s.is_nan() {
        DEFAULT_INEQ_SEL
    } else {
        s.clamp(0.0, 1.0)
    }
}

/// The column an operand reads, looking through casts and char(n)'s
/// trailing-space strip (`bpchar_col = 'x'` binds as a text comparison).
pub(super) fn column_of(e: &Expr) -> Option<usize> {
    match e {
        Expr::Column(i) => Some(*i),
        Expr::Cast { arg, .. } => column_of(arg),
        Expr::Func {
            func: Func::BpcharStrip,
            args,
        } => args.first().and_then(column_of),
        _ => None,
    }
}

/// A statistics value against a plan-time value: texts without their
/// trailing spaces (char(n) values are stored padded, compared stripped;
/// for other text columns the difference is below an estimate's noise).
fn cmp_stat(stat: &Value, v: &Value) -> Option<Ordering> {
    match (stat, v) {
        (Value::Text(a), Value::Text(b)) => {
            Some(a.trim_end_matches(' ').cmp(b.trim_end_matches(' ')))
        }
        _ => cmp_sql(stat, v),
    }
}

/// The null fraction of the column an operand reads, if analysed.
fn null_frac(e: &Expr, cols: &dyn ColumnSource) -> Option<f64> {
    column_of(e)
        .and_then(|i| cols.col(i))
        .and_then(|c| c.stats.map(|s| s.null_frac))
}

/// A value known at plan time (a constant, possibly cast).
fn const_of(e: &Expr) -> Option<&Value> {
    match e {
        Expr::Const(v) => Some(v),
        Expr::Cast { arg, .. } => const_of(arg),
        _ => None,
    }
}

/// Whether an operand is known once per execution (a constant, a
/// parameter, an outer value): an equality with it is `col = const` for
/// estimation, though its value is unknown.
fn pseudo_const(e: &Expr) -> bool {
    match e {
        Expr::Const(_) | Expr::Param(_) | Expr::ExecParam(_) => true,
        Expr::Cast { arg, .. } => pseudo_const(arg),
        Expr::Unary { arg, .. } => pseudo_const(arg),
        Expr::Binary { left, right, .. } => pseudo_const(left) && pseudo_const(right),
        Expr::Func { args, .. } => args.iter().all(pseudo_const),
        _ => false,
    }
}

/// `col = v` (v None: a value unknown at plan time).
pub fn eq_selectivity(c: &ColRef<'_>, v: Option<&Value>) -> f64 {
    if let Some(v) = v {
        if v.is_null() {
            return 0.0;
        }
    }
    if c.unique {
        return 1.0 / c.table_rows.max(1.0);
    }
    let Some(s) = c.stats else {
        return DEFAULT_EQ_SEL.max(1.0 / c.table_rows.max(1.0));
    };
    if let Some(v) = v {
        for (m, f) in &s.mcv {
            if cmp_stat(m, v) == Some(Ordering::Equal) {
                return *f;
            }
        }
    }
    let nd = ndistinct(c);
    let mcv_sum: f64 = s.mcv.iter().map(|(_, f)| f).sum();
    let other = nd - s.mcv.len() as f64;
    if v.is_none() {
        // Unknown value: the average frequency.
        return clamp((1.0 - s.null_frac) / nd);
    }
    if other <= 0.0 {
        // Every value is in the MCV list, and this one is not.
        return 0.0;
    }
    clamp((1.0 - mcv_sum - s.null_frac) / other)
}

fn to_f64(v: &Value) -> Option<f64> {
    Some(match v {
        Value::Int2(n) => *n as f64,
        Value::Int4(n) => *n as f64,
        Value::Int8(n) => *n as f64,
        Value::Float8(x) => *x,
        Value::Numeric(n) => n.to_f64(),
        Value::Date(d) => *d as f64,
        Value::Timestamp(t) | Value::TimestampTz(t) => *t as f64,
        Value::Oid(o) => *o as f64,
        _ => return None,
    })
}

/// Fraction of the non-NULL, non-MCV values below `v` (`inclusive`: `<=`),
/// from the histogram; None without one.
fn histogram_below(hist: &[Value], v: &Value) -> Option<f64> {
    if hist.len() < 2 {
        return None;
    }
    let n = hist.len();
    let cmp = |h: &Value| cmp_stat(h, v);
    if cmp(&hist[0])? != Ordering::Less {
        return Some(0.0);
    }
    if cmp(&hist[n - 1])? == Ordering::Less {
        return Some(1.0);
    }
    // The last bound below v.
    let (mut lo, mut hi) = (0, n - 1);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if cmp(&hist[mid])? == Ordering::Less {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let within = match (to_f64(&hist[lo]), to_f64(&hist[hi]), to_f64(v)) {
        (Some(a), Some(b), Some(x)) if b > a => ((x - a) / (b - a)).clamp(0.0, 1.0),
        _ => 0.5,
    };
    Some((lo as f64 + within) / (n - 1) as f64)
}

/// `col < v` (`lt`) or `col > v`; `or_equal` adds `=`.
fn ineq_selectivity(c: &ColRef<'_>, v: &Value, lt: bool, or_equal: bool) -> f64 {
    if v.is_null() {
        return 0.0;
    }
    let Some(s) = c.stats else {
        return DEFAULT_INEQ_SEL;
    };
    let mut mcv_part = 0.0;
    let mut mcv_sum = 0.0;
    for (m, f) in &s.mcv {
        mcv_sum += f;
        let Some(o) = cmp_stat(m, v) else {
            return DEFAULT_INEQ_SEL;
        };
        let hit = match o {
            Ordering::Less => lt,
            Ordering::Greater => !lt,
            Ordering::Equal => or_equal,
        };
        if hit {
            mcv_part += f;
        }
    }
    let rest = (1.0 - mcv_sum - s.null_frac).max(0.0);
    let hist_part = match histogram_below(&s.histogram, v) {
        Some(below) => {
            if lt {
                below
            } else {
                1.0 - below
            }
        }
        None if s.mcv.is_empty() => return DEFAULT_INEQ_SEL,
        None => 0.0,
    };
    clamp(mcv_part + rest * hist_part)
}

/// The fraction of rows `e` keeps.
pub fn clause_selectivity(e: &Expr, cols: &dyn ColumnSource) -> f64 {
    match e {
        Expr::Const(Value::Bool(b)) => {
            if *b {
                1.0
            } else {
                0.0
            }
        }
        Expr::Const(v) if v.is_null() => 0.0,
        Expr::Binary {
            op: BinOp::And,
            left,
            right,
        } => conjunct_selectivity(left.conjuncts().into_iter().chain(right.conjuncts()), cols),
        Expr::Binary {
            op: BinOp::Or,
            left,
            right,
        } => {
            let (a, b) = (
                clause_selectivity(left, cols),
                clause_selectivity(right, cols),
            );
            clamp(a + b - a * b)
        }
        Expr::Unary {
            op: UnaryOp::Not,
            arg,
        } => clamp(1.0 - clause_selectivity(arg, cols)),
        Expr::Binary { op, left, right } => binary_selectivity(*op, left, right, cols),
        Expr::IsNull { arg, negated } => match (null_frac(arg, cols), negated) {
            (Some(f), false) => f,
            (Some(f), true) => 1.0 - f,
            (None, false) => DEFAULT_EQ_SEL,
            (None, true) => 1.0 - DEFAULT_EQ_SEL,
        },
        Expr::InList { arg, list, negated } => {
            let col = column_of(arg).and_then(|i| cols.col(i));
            let mut s = 0.0;
            for item in list {
                s += match &col {
                    Some(c) if pseudo_const(item) => eq_selectivity(c, const_of(item)),
                    _ => DEFAULT_EQ_SEL,
                };
            }
            let s = clamp(s);
            if *negated {
                1.0 - s
            } else {
                s
            }
        }
        Expr::Between {
            arg,
            low,
            high,
            negated,
        } => {
            let lo = binary_selectivity(BinOp::GtEq, arg, low, cols);
            let hi = binary_selectivity(BinOp::LtEq, arg, high, cols);
            let s = range_selectivity(lo, hi, null_frac(arg, cols).unwrap_or(0.0));
            if *negated {
                1.0 - s
            } else {
                s
            }
        }
        Expr::Like {
            arg,
            pattern,
            negated,
            case_insensitive,
        } => {
            let col = column_of(arg).and_then(|i| cols.col(i));
            let s = match const_of(pattern) {
                Some(Value::Text(p)) => col
                    .and_then(|c| like_stats_selectivity(&c, p, *case_insensitive))
                    .unwrap_or_else(|| like_selectivity(p)),
                _ => DEFAULT_MATCH_SEL,
            };
            if *negated {
                1.0 - s
            } else {
                s
            }
        }
        Expr::IsBool { .. } => 0.5,
        Expr::Column(i) => match cols.col(*i) {
            Some(c) => eq_selectivity(&c, Some(&Value::Bool(true))),
            None => 0.5,
        },
        _ => DEFAULT_INEQ_SEL,
    }
}

/// A LIKE pattern against the column's statistics (PostgreSQL's
/// patternsel with histogram_selectivity): the most common values it
/// matches, plus the share of histogram bounds it matches spread over the
/// rest. None without a histogram of at least ten bounds.
fn like_stats_selectivity(c: &ColRef<'_>, p: &str, ci: bool) -> Option<f64> {
    let s = c.stats?;
    if s.histogram.len() < 10 {
        return None;
    }
    let matches = |v: &Value| match v {
        Value::Text(t) => crate::expr::like_match(t.trim_end_matches(' '), p, ci).unwrap_or(false),
        _ => false,
    };
    let mcv_sum: f64 = s.mcv.iter().map(|(_, f)| f).sum();
    let mcv_hit: f64 = s
        .mcv
        .iter()
        .filter(|(v, _)| matches(v))
        .map(|(_, f)| f)
        .sum();
    let n = s.histogram.len() as f64;
    let hits = s.histogram.iter().filter(|v| matches(v)).count() as f64;
    // A pattern no bound matches may still match a few rows.
    let hist = (hits / n).max(1.0 / (n * 10.0));
    Some(clamp(mcv_hit + hist * (1.0 - mcv_sum - s.null_frac)))
}

/// A LIKE pattern's selectivity: its fixed prefix behaves as a range,
/// each further fixed character narrows it (PostgreSQL's
/// `like_selectivity`, without the histogram scan).
fn like_selectivity(p: &str) -> f64 {
    let mut sel: f64 = 1.0;
    let mut fixed_prefix = true;
    let mut chars = p.chars();
    let mut any = false;
    while let Some(ch) = chars.next() {
        match ch {
            '%' => {
                fixed_prefix = false;
                any = true;
            }
            '_' => sel *= 0.9,
            '\\' => {
                chars.next();
                sel *= if fixed_prefix { 0.2 } else { 0.9 };
            }
            _ => sel *= if fixed_prefix { 0.2 } else { 0.9 },
        }
    }
    if !any && fixed_prefix {
        return DEFAULT_EQ_SEL;
    }
    clamp(sel.max(1e-4))
}

/// `lo` (`col >= …`) and `hi` (`col <= …`) of one range over a column
/// with `null_frac` NULLs (which both bounds exclude, so `lo + hi - 1`
/// took them off twice).
fn range_selectivity(lo: f64, hi: f64, null_frac: f64) -> f64 {
    if lo == DEFAULT_INEQ_SEL || hi == DEFAULT_INEQ_SEL {
        return DEFAULT_RANGE_INEQ_SEL;
    }
    let s = lo + hi - 1.0 + null_frac;
    if s <= 0.0 {
        if s < -0.01 {
            // Bounds that cross: nothing, but not certainly nothing.
            1e-4
        } else {
            // Within rounding of empty: a thin slice.
            1e-4f64.max(s.abs())
        }
    } else {
        clamp(s)
    }
}

fn binary_selectivity(op: BinOp, left: &Expr, right: &Expr, cols: &dyn ColumnSource) -> f64 {
    // Normalise to `col op value`.
    let (col, val, op) = match (column_of(left), column_of(right)) {
        (Some(c), None) if pseudo_const(right) => (c, right, op),
        (None, Some(c)) if pseudo_const(left) => (c, left, commute(op)),
        (Some(a), Some(b)) if op == BinOp::Eq => {
            // Two columns of one row: as a join clause.
            return match (cols.col(a), cols.col(b)) {
                (Some(x), Some(y)) => 1.0 / ndistinct(&x).max(ndistinct(&y)),
                _ => DEFAULT_EQ_SEL,
            };
        }
        _ => {
            return match op {
                BinOp::Eq | BinOp::IsNotDistinctFrom => DEFAULT_EQ_SEL,
                BinOp::NotEq | BinOp::IsDistinctFrom => 1.0 - DEFAULT_EQ_SEL,
                _ => DEFAULT_INEQ_SEL,
            }
        }
    };
    let Some(c) = cols.col(col) else {
        return match op {
            BinOp::Eq | BinOp::IsNotDistinctFrom => DEFAULT_EQ_SEL,
            BinOp::NotEq | BinOp::IsDistinctFrom => 1.0 - DEFAULT_EQ_SEL,
            _ => DEFAULT_INEQ_SEL,
        };
    };
    let v = const_of(val);
    let null_frac = c.stats.map(|s| s.null_frac).unwrap_or(0.0);
    match op {
        BinOp::Eq | BinOp::IsNotDistinctFrom => eq_selectivity(&c, v),
        BinOp::NotEq | BinOp::IsDistinctFrom => clamp(1.0 - eq_selectivity(&c, v) - null_frac),
        BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq => match v {
            Some(v) => ineq_selectivity(
                &c,
                v,
                matches!(op, BinOp::Lt | BinOp::LtEq),
                matches!(op, BinOp::LtEq | BinOp::GtEq),
            ),
            None => DEFAULT_INEQ_SEL,
        },
        _ => DEFAULT_INEQ_SEL,
    }
}

/// `a op b` as `b op' a`.
fn commute(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::LtEq => BinOp::GtEq,
        BinOp::Gt => BinOp::Lt,
        BinOp::GtEq => BinOp::LtEq,
        o => o,
    }
}

/// The side of a range a conjunct bounds: (column, is upper bound).
fn range_bound(e: &Expr) -> Option<(usize, bool)> {
    let Expr::Binary { op, left, right } = e else {
        return None;
    };
    let (col, op) = match (column_of(left), column_of(right)) {
        (Some(c), None) if pseudo_const(right) => (c, *op),
        (None, Some(c)) if pseudo_const(left) => (c, commute(*op)),
        _ => return None,
    };
    match op {
        BinOp::Lt | BinOp::LtEq => Some((col, true)),
        BinOp::Gt | BinOp::GtEq => Some((col, false)),
        _ => None,
    }
}

/// The fraction of rows every conjunct of `quals` keeps: the product,
/// with a lower and an upper bound on one column taken as one range.
pub fn clauselist_selectivity(quals: &[Expr], cols: &dyn ColumnSource) -> f64 {
    conjunct_selectivity(quals.iter().flat_map(|q| q.conjuncts()), cols)
}

/// [`clauselist_selectivity`] of conjuncts (no AND among them).
fn conjunct_selectivity<'e>(flat: impl Iterator<Item = &'e Expr>, cols: &dyn ColumnSource) -> f64 {
    let mut s = 1.0;
    // (column, lower bound selectivity, upper bound selectivity)
    let mut ranges: Vec<(usize, Option<f64>, Option<f64>)> = Vec::new();
    for q in flat {
        let qs = clause_selectivity(q, cols);
        match range_bound(q) {
            Some((c, upper)) => {
                let at = match ranges.iter().position(|r| r.0 == c) {
                    Some(i) => i,
                    None => {
                        ranges.push((c, None, None));
                        ranges.len() - 1
                    }
                };
                let slot = if upper {
                    &mut ranges[at].2
                } else {
                    &mut ranges[at].1
                };
                // Two bounds on one side: the tighter one.
                *slot = Some(slot.map_or(qs, |old: f64| old.min(qs)));
            }
            None => s *= qs,
        }
    }
    for (c, lo, hi) in ranges {
        let nf = cols
            .col(c)
            .and_then(|c| c.stats.map(|s| s.null_frac))
            .unwrap_or(0.0);
        s *= match (lo, hi) {
            (Some(l), Some(h)) => range_selectivity(l, h, nf),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => 1.0,
        };
    }
    clamp(s)
}

/// `a = b` with `a` and `b` over two different inputs: the fraction of
/// the cross product it keeps.
pub fn eqjoin_selectivity(a: &Expr, b: &Expr, cols: &dyn ColumnSource) -> f64 {
    let nd = |e: &Expr| {
        column_of(e)
            .and_then(|i| cols.col(i))
            .map(|c| ndistinct(&c))
    };
    let nf = |e: &Expr| null_frac(e, cols).unwrap_or(0.0);
    let (na, nb) = (nd(a), nd(b));
    let s = match (na, nb) {
        (Some(x), Some(y)) => 1.0 / x.max(y),
        (Some(x), None) | (None, Some(x)) => 1.0 / x.max(DEFAULT_NUM_DISTINCT),
        (None, None) => DEFAULT_EQ_SEL,
    };
    clamp(s * (1.0 - nf(a)) * (1.0 - nf(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgtypes::sqltype::SqlType;

    struct One(ColumnStats, f64);
    impl ColumnSource for One {
        fn col(&self, i: usize) -> Option<ColRef<'_>> {
            (i == 0).then_some(ColRef {
                stats: Some(&self.0),
                table_rows: self.1,
                unique: false,
            })
        }
    }

    fn stats() -> One {
        One(
            ColumnStats {
                column: 0,
                ty: SqlType::Int4,
                null_frac: 0.1,
                avg_width: 4,
                n_distinct: 100.0,
                mcv: vec![(Value::Int4(7), 0.3)],
                histogram: (0..=10).map(|i| Value::Int4(i * 10)).collect(),
                correlation: None,
            },
            10_000.0,
        )
    }

    fn cmp(op: BinOp, v: i32) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(Expr::Column(0)),
            right: Box::new(Expr::Const(Value::Int4(v))),
        }
    }

    #[test]
    fn equality_reads_the_mcv_list_then_spreads_the_rest() {
        let s = stats();
        assert_eq!(clause_selectivity(&cmp(BinOp::Eq, 7), &s), 0.3);
        // (1 - 0.3 - 0.1) / 99
        let other = clause_selectivity(&cmp(BinOp::Eq, 8), &s);
        assert!((other - 0.6 / 99.0).abs() < 1e-12);
        assert_eq!(
            clause_selectivity(&cmp(BinOp::Eq, 7), &NoColumns),
            DEFAULT_EQ_SEL
        );
    }

    #[test]
    fn ranges_read_the_histogram_and_pair_their_bounds() {
        let s = stats();
        // Below 50: half the histogram of the 0.6 left, plus the MCV 7.
        let lt = clause_selectivity(&cmp(BinOp::Lt, 50), &s);
        assert!((lt - (0.3 + 0.6 * 0.5)).abs() < 1e-9, "{lt}");
        let gt = clause_selectivity(&cmp(BinOp::Gt, 50), &s);
        assert!((gt - 0.3).abs() < 1e-9, "{gt}");
        // 20 <= x <= 40 is a fifth of the histogram, not (lo * hi).
        let both = clauselist_selectivity(&[cmp(BinOp::GtEq, 20), cmp(BinOp::LtEq, 40)], &s);
        assert!((both - 0.6 * 0.2).abs() < 1e-9, "{both}");
        // Outside the histogram.
        assert_eq!(clause_selectivity(&cmp(BinOp::Gt, 1000), &s), 0.0);
    }

    #[test]
    fn every_selectivity_is_a_fraction() {
        let s = stats();
        let exprs = [
            cmp(BinOp::NotEq, 7),
            Expr::Binary {
                op: BinOp::Or,
                left: Box::new(cmp(BinOp::Eq, 7)),
                right: Box::new(cmp(BinOp::Lt, 1000)),
            },
            clause_not(cmp(BinOp::Eq, 7)),
            Expr::Const(Value::Null),
            cmp(BinOp::Lt, i32::MIN),
        ];
        for e in &exprs {
            let x = clause_selectivity(e, &s);
            assert!((0.0..=1.0).contains(&x), "{e:?}: {x}");
        }
        let j = eqjoin_selectivity(&Expr::Column(0), &Expr::Column(0), &s);
        assert!((j - 0.81 / 100.0).abs() < 1e-12, "{j}");
    }

    fn clause_not(e: Expr) -> Expr {
        Expr::Unary {
            op: UnaryOp::Not,
            arg: Box::new(e),
        }
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;
    use engine::statistics::TableStats;

    fn analysed(reltuples: f64, relpages: u32) -> RelationStats {
        RelationStats {
            oid: 1,
            table: TableStats {
                reltuples,
                relpages,
            },
            columns: Vec::new(),
        }
    }

    /// estimate_rel_size: never analysed, by the row width over at least
    /// ten pages; analysed, at the analysed density over today's pages.
    #[test]
    fn rows_follow_the_table_size() {
        // 36-byte rows: (8192 - 24) / (36 + 28) = 127 whole rows a page.
        assert_eq!(estimate_rows(None, 0, 36), 1270.0, "empty: ten pages");
        assert_eq!(estimate_rows(None, 3, 36), 1270.0);
        assert_eq!(
            estimate_rows(None, 1000, 36),
            127_000.0,
            "big, never analysed"
        );
        let s = analysed(5000.0, 50);
        assert_eq!(estimate_rows(Some(&s), 50, 36), 5000.0, "as analysed");
        assert_eq!(estimate_rows(Some(&s), 200, 36), 20000.0, "grown fourfold");
        assert_eq!(
            estimate_rows(Some(&s), 8, 36),
            5000.0,
            "a standby's shorter file"
        );
        let empty = analysed(0.0, 0);
        assert_eq!(estimate_rows(Some(&empty), 0, 36), 1.0, "still empty");
        assert_eq!(estimate_rows(Some(&empty), 10, 36), 1270.0, "filled since");
    }
}
