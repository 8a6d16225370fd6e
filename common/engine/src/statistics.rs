//! Planner statistics: what `ANALYZE` learned about a table and its
//! columns (PostgreSQL's `pg_statistic` plus `pg_class.reltuples` /
//! `relpages`).
//!
//! The catalog keeps one [`RelationStats`] per analysed table, keyed by the
//! table's OID, beside the table map. It changes only through the catalog
//! change [`crate::catalog::CatalogChange::SetStatistics`], so it is
//! WAL-logged, replayed by a standby exactly like a `CREATE INDEX`, written
//! into `DIR/global/catalog` with the rest of the catalog, and removed with
//! `DROP TABLE`. The planner reads it through
//! [`crate::catalog::CatalogView::statistics`]: one read lock and an `Arc`
//! clone, never a lock held while planning.
//!
//! Invariants:
//!
//! 1. Statistics are estimates. Nothing may rely on them for correctness;
//!    they may be missing (never analysed), stale (rows changed since) or
//!    describe fewer columns than the table has (`ANALYZE t (a)` replaces
//!    only `a`'s entry and keeps the others).
//! 2. Every value in an MCV list or histogram has the column's type as it
//!    was when analysed ([`ColumnStats::ty`]); values are stored as their
//!    PostgreSQL text form and read back with that type's input function.
//! 3. An MCV list is sorted by decreasing frequency; a histogram is sorted
//!    ascending and holds no value of the MCV list.
//!
//! Statistics are not transactional: `ANALYZE` inside a transaction block
//! that rolls back keeps what it gathered (PostgreSQL would roll the
//! `pg_statistic` rows back; for estimates the difference does not matter).
//!
//! Next: `sql::analyze` gathers these; `sql::planner::selfuncs` turns them
//! into selectivities and row estimates.

use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;
use pgtypes::Oid;

use crate::catalog::{esc, type_from_catalog, type_to_catalog, unesc};

/// Table-level estimates (`pg_class.reltuples` / `relpages`).
#[derive(Clone, Debug, PartialEq)]
pub struct TableStats {
    /// Live rows the table held when analysed.
    pub reltuples: f64,
    /// Heap pages (8 KiB blocks) the table had when analysed.
    pub relpages: u32,
}

/// What `ANALYZE` found about one column (one `pg_statistic` row).
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnStats {
    /// Position of the column in the table (0-based; PostgreSQL's attnum
    /// is this plus one).
    pub column: usize,
    /// The column's type when analysed: the type of every value below.
    pub ty: SqlType,
    /// Fraction of rows whose value is NULL.
    pub null_frac: f64,
    /// Average stored width of the non-NULL values, in bytes.
    pub avg_width: i32,
    /// Distinct non-NULL values: a positive count, or minus a fraction of
    /// the row count when the number grows with the table (-1: unique),
    /// or 0 when unknown.
    pub n_distinct: f64,
    /// Most common values with their frequency (fraction of all rows,
    /// NULLs included), most common first.
    pub mcv: Vec<(Value, f64)>,
    /// Equi-depth histogram bounds of the values not in `mcv`, ascending;
    /// empty when fewer than two such values exist.
    pub histogram: Vec<Value>,
    /// Correlation between physical row order and value order (-1 .. 1);
    /// None with fewer than two non-NULL values.
    pub correlation: Option<f64>,
}

/// Everything known about one table.
#[derive(Clone, Debug, PartialEq)]
pub struct RelationStats {
    /// The table's OID.
    pub oid: Oid,
    /// Table-level estimates.
    pub table: TableStats,
    /// Per-column statistics, sorted by column position.
    pub columns: Vec<ColumnStats>,
}

impl RelationStats {
    /// The statistics of the column at `column` (0-based), if analysed.
    pub fn column(&self, column: usize) -> Option<&ColumnStats> {
        self.columns
            .binary_search_by_key(&column, |c| c.column)
            .ok()
            .map(|i| &self.columns[i])
    }

    /// `self` with `newer`'s table estimates and columns; columns `newer`
    /// does not describe keep their old entries (`ANALYZE t (a)`).
    pub fn merged(&self, newer: &RelationStats) -> RelationStats {
        let mut columns = newer.columns.clone();
        for c in &self.columns {
            if newer.column(c.column).is_none() {
                columns.push(c.clone());
            }
        }
        columns.sort_by_key(|c| c.column);
        RelationStats {
            oid: newer.oid,
            table: newer.table.clone(),
            columns,
        }
    }
}

// ---------------------------------------------------------------------------
// Text encoding, shared by the catalog file and the `set_statistics` WAL
// record (the catalog's line format, strings percent-escaped):
//
//   relstats <table oid> <reltuples> <relpages>
//   colstats <column> <type> <null_frac> <avg_width> <n_distinct> <correlation or ->
//   mcv <freq> <value text>        (zero or more, after their colstats)
//   hist <value text>              (zero or more, after the mcv lines)
//   end
//
// Floats are written with Rust's shortest round-trip form, so a decode
// gives back exactly what was encoded.
// ---------------------------------------------------------------------------

/// Appends the lines of `st` (ending with `end`) to `out`.
pub fn encode_stats(out: &mut String, st: &RelationStats) {
    out.push_str(&format!(
        "relstats {} {} {}\n",
        st.oid, st.table.reltuples, st.table.relpages
    ));
    for c in &st.columns {
        let corr = c
            .correlation
            .map(|x| x.to_string())
            .unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "colstats {} {} {} {} {} {}\n",
            c.column,
            type_to_catalog(c.ty),
            c.null_frac,
            c.avg_width,
            c.n_distinct,
            corr
        ));
        for (v, f) in &c.mcv {
            out.push_str(&format!("mcv {} {}\n", f, esc(&stat_text(v))));
        }
        for v in &c.histogram {
            out.push_str(&format!("hist {}\n", esc(&stat_text(v))));
        }
    }
    out.push_str("end\n");
}

/// A value's text in the statistics lines: its output form, except an
/// enum label, kept by OID (a label may be renamed, and the file is read
/// before the enum types are known).
fn stat_text(v: &Value) -> String {
    match v {
        Value::Enum(o) => o.to_string(),
        _ => v.to_text_string(),
    }
}

/// Decodes the lines [`encode_stats`] wrote, `first` being the `relstats`
/// line; consumes `rest` up to and including `end`. Never panics.
pub fn decode_stats(
    first: &str,
    rest: &mut dyn Iterator<Item = &str>,
) -> Result<RelationStats, String> {
    let f: Vec<&str> = first.split(' ').collect();
    let float = |s: &str| s.parse::<f64>().map_err(|_| format!("bad number {s:?}"));
    let mut st = match f.as_slice() {
        ["relstats", oid, tuples, pages] => RelationStats {
            oid: oid.parse().map_err(|_| format!("bad oid {oid:?}"))?,
            table: TableStats {
                reltuples: float(tuples)?,
                relpages: pages.parse().map_err(|_| format!("bad pages {pages:?}"))?,
            },
            columns: Vec::new(),
        },
        _ => return Err(format!("expected relstats, found {first:?}")),
    };
    let value = |ty: SqlType, s: &str| -> Result<Value, String> {
        let text = unesc(s)?;
        if let SqlType::Enum(_) = ty {
            let o = text
                .parse()
                .map_err(|_| format!("bad enum value {text:?}"))?;
            return Ok(Value::Enum(o));
        }
        Value::from_text(ty, &text).map_err(|e| format!("bad statistics value: {}", e.message))
    };
    for line in rest {
        let g: Vec<&str> = line.split(' ').collect();
        match g.as_slice() {
            ["end"] => {
                let sorted = st.columns.windows(2).all(|w| w[0].column < w[1].column);
                if !sorted {
                    return Err("statistics columns out of order".into());
                }
                return Ok(st);
            }
            ["colstats", col, ty, nf, w, nd, corr] => st.columns.push(ColumnStats {
                column: col.parse().map_err(|_| format!("bad column {col:?}"))?,
                ty: type_from_catalog(ty).ok_or_else(|| format!("bad type {ty:?}"))?,
                null_frac: float(nf)?,
                avg_width: w.parse().map_err(|_| format!("bad width {w:?}"))?,
                n_distinct: float(nd)?,
                mcv: Vec::new(),
                histogram: Vec::new(),
                correlation: if *corr == "-" {
                    None
                } else {
                    Some(float(corr)?)
                },
            }),
            ["mcv", freq, v] => {
                let c = st.columns.last_mut().ok_or("mcv outside colstats")?;
                let v = value(c.ty, v)?;
                c.mcv.push((v, float(freq)?));
            }
            ["hist", v] => {
                let c = st.columns.last_mut().ok_or("hist outside colstats")?;
                let v = value(c.ty, v)?;
                c.histogram.push(v);
            }
            _ => return Err(format!("unrecognized statistics line {line:?}")),
        }
    }
    Err("statistics without end".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RelationStats {
        RelationStats {
            oid: 16384,
            table: TableStats {
                reltuples: 1000.0,
                relpages: 6,
            },
            columns: vec![
                ColumnStats {
                    column: 0,
                    ty: SqlType::Int4,
                    null_frac: 0.0,
                    avg_width: 4,
                    n_distinct: -1.0,
                    mcv: Vec::new(),
                    histogram: vec![Value::Int4(1), Value::Int4(500), Value::Int4(1000)],
                    correlation: Some(1.0),
                },
                ColumnStats {
                    column: 2,
                    ty: SqlType::Varchar(Some(10)),
                    null_frac: 0.125,
                    avg_width: 3,
                    n_distinct: 2.0,
                    mcv: vec![(Value::text("a b"), 0.5), (Value::text(""), 0.375)],
                    histogram: Vec::new(),
                    correlation: None,
                },
            ],
        }
    }

    #[test]
    fn encoding_round_trips() {
        let st = sample();
        let mut out = String::new();
        encode_stats(&mut out, &st);
        let mut lines = out.lines();
        let first = lines.next().unwrap();
        assert_eq!(decode_stats(first, &mut lines).unwrap(), st);
        assert!(lines.next().is_none(), "end consumed");
    }

    #[test]
    fn bad_input_is_an_error() {
        for bad in [
            "relstats x 1 1\nend\n",
            "relstats 1 1 1\nmcv 0.5 a\nend\n",
            "relstats 1 1 1\ncolstats 0 int4 0 4 1 -\nmcv 0.5 notanint\nend\n",
            "relstats 1 1 1\ncolstats 0 int4 0 4 1 -\n",
            "relstats 1 1 1\ncolstats 1 int4 0 4 1 -\ncolstats 0 int4 0 4 1 -\nend\n",
        ] {
            let mut lines = bad.lines();
            let first = lines.next().unwrap();
            assert!(decode_stats(first, &mut lines).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn merge_keeps_other_columns() {
        let old = sample();
        let mut newer = sample();
        newer.table.reltuples = 2000.0;
        newer.columns.remove(0);
        newer.columns[0].n_distinct = 3.0;
        let m = old.merged(&newer);
        assert_eq!(m.table.reltuples, 2000.0);
        assert_eq!(m.columns.len(), 2);
        assert_eq!(m.column(0), old.column(0));
        assert_eq!(m.column(2).map(|c| c.n_distinct), Some(3.0));
        assert!(m.column(1).is_none());
    }
}
