//! Randomized differential testing: small random schemas, data and
//! queries, run on hotpair and on PostgreSQL 15, results compared.
//!
//! Everything comes from one seeded generator ([`Rng`], splitmix64), so a
//! seed names a whole run: the same seed gives the same tables, rows and
//! queries on every machine. A round is
//!
//! ```text
//! Schema::generate   2–4 tables dRtN (int / text / numeric(6,2) / bool
//!                    columns from small domains: duplicates and equal join
//!                    keys are common, ~20% NULLs, some tables empty)
//!   → CREATE + INSERT on both servers
//! Generator::query   × N, each a Query { sql, ordered, tables }
//!   → run on both → Outcome (rows as text, or SQLSTATE) → compare
//! ```
//!
//! ## What is compared
//!
//! Column names and rows are compared, rows as text, as the simple query
//! protocol returns them.
//! A query whose ORDER BY lists every output column has one correct row
//! order (rows that tie are identical), so its rows are compared in order;
//! any other result is compared as a sorted multiset. LIMIT / OFFSET only
//! ever appear with such a total ORDER BY. Errors compare by SQLSTATE. The
//! generator avoids floating point (numeric instead) and anything whose
//! result depends on the plan.
//!
//! ## Features
//!
//! What a query may contain is a set of [`Feature`]s. The default set is
//! what hotpair's single-table engine answers (filters, expressions,
//! aggregates, GROUP BY / HAVING, DISTINCT, ORDER BY, LIMIT / OFFSET);
//! joins, subqueries and set operations are generated only when asked for
//! (`HOTPAIR_DIFF_FEATURES=joins,subqueries,setops`, see the test).
//!
//! ## Reduction
//!
//! A mismatch is reduced before it is printed: clauses and output columns
//! of the query are dropped ([`Query::simpler`]), only the tables the query
//! names are kept, and rows are removed one at a time (on both servers),
//! each step kept only while the mismatch persists. The result is a self-contained SQL script —
//! CREATE TABLE, INSERT, the query — to paste into psql on either server.
//!
//! Where to go next: `tests/036_sql_differential.rs` (the test and its
//! environment variables), docs/architecture/testing.md.

use std::fmt::Write as _;

/// A small deterministic random generator (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    /// One element of `items` (non-empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A column type the generator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `int`
    Int,
    /// `text`
    Text,
    /// `numeric(6,2)`
    Num,
    /// `bool`
    Bool,
}

impl Ty {
    /// The type as written in CREATE TABLE.
    pub fn sql(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Text => "text",
            Ty::Num => "numeric(6,2)",
            Ty::Bool => "bool",
        }
    }

    const ALL: [Ty; 4] = [Ty::Int, Ty::Text, Ty::Num, Ty::Bool];
}

/// A random constant of type `ty` (never NULL), as a SQL literal.
fn constant(rng: &mut Rng, ty: Ty) -> String {
    match ty {
        Ty::Int => rng.range(-2, 6).to_string(),
        Ty::Text => format!(
            "'{}'",
            rng.pick(&["a", "b", "c", "ab", "B", "", "a b", "ba"])
        ),
        Ty::Num => rng
            .pick(&["0.00", "1.50", "-0.25", "3.00", "2.75", "10.10", "-4.00"])
            .to_string(),
        Ty::Bool => rng.pick(&["true", "false"]).to_string(),
    }
}

/// A random value for a row: a constant or, one time in five, NULL.
fn value(rng: &mut Rng, ty: Ty) -> String {
    if rng.chance(20) {
        "NULL".to_string()
    } else {
        constant(rng, ty)
    }
}

/// One generated table.
#[derive(Clone, Debug)]
pub struct Table {
    /// Its name (`dRtN`: round R, table N).
    pub name: String,
    /// Columns `c0…`, with their types.
    pub cols: Vec<(String, Ty)>,
    /// Rows, each value a SQL literal.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// `CREATE TABLE …;`
    pub fn create_sql(&self) -> String {
        let cols: Vec<String> = self
            .cols
            .iter()
            .map(|(n, t)| format!("{n} {}", t.sql()))
            .collect();
        format!("CREATE TABLE {} ({});", self.name, cols.join(", "))
    }

    /// `INSERT INTO … VALUES …;` for `rows`, or `None` when there are none.
    pub fn insert_sql(&self, rows: &[Vec<String>]) -> Option<String> {
        if rows.is_empty() {
            return None;
        }
        let values: Vec<String> = rows.iter().map(|r| format!("({})", r.join(", "))).collect();
        Some(format!(
            "INSERT INTO {} VALUES {};",
            self.name,
            values.join(", ")
        ))
    }
}

/// The tables of one round.
#[derive(Clone, Debug)]
pub struct Schema {
    /// 2–4 tables.
    pub tables: Vec<Table>,
}

impl Schema {
    /// Tables `d{round}t0…` with random columns and rows: 2–5 columns (the
    /// first always int, so every table has a join key), 0–12 rows (a
    /// table is empty one time in eight), whole-row duplicates now and then.
    pub fn generate(rng: &mut Rng, round: usize) -> Schema {
        let n = rng.range(2, 4) as usize;
        let mut tables = Vec::new();
        for t in 0..n {
            let ncols = rng.range(2, 5) as usize;
            let mut cols = vec![("c0".to_string(), Ty::Int)];
            for c in 1..ncols {
                cols.push((format!("c{c}"), *rng.pick(&Ty::ALL)));
            }
            let nrows = if rng.chance(12) {
                0
            } else {
                rng.range(1, 12) as usize
            };
            let mut rows: Vec<Vec<String>> = Vec::new();
            for _ in 0..nrows {
                if !rows.is_empty() && rng.chance(15) {
                    let dup = rows[rng.below(rows.len())].clone();
                    rows.push(dup);
                } else {
                    rows.push(cols.iter().map(|(_, ty)| value(rng, *ty)).collect());
                }
            }
            tables.push(Table {
                name: format!("d{round}t{t}"),
                cols,
                rows,
            });
        }
        Schema { tables }
    }
}

/// A kind of SQL a query may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Joins of two or three tables: INNER, LEFT, RIGHT, FULL, CROSS, comma.
    Joins,
    /// IN / NOT IN / EXISTS / scalar subqueries and derived tables.
    Subqueries,
    /// UNION / INTERSECT / EXCEPT, with and without ALL.
    SetOps,
    /// Window functions in the output: ranks, offsets, frame values and
    /// aggregates over ROWS, RANGE and GROUPS frames, with and without
    /// PARTITION BY.
    Windows,
}

impl Feature {
    /// Every kind.
    pub const ALL: [Feature; 4] = [
        Feature::Joins,
        Feature::Subqueries,
        Feature::SetOps,
        Feature::Windows,
    ];

    /// Parses a comma-separated list (`joins,subqueries,setops`; `all`).
    pub fn parse_list(text: &str) -> Result<Vec<Feature>, String> {
        let mut out = Vec::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "joins" => out.push(Feature::Joins),
                "subqueries" => out.push(Feature::Subqueries),
                "setops" => out.push(Feature::SetOps),
                "windows" => out.push(Feature::Windows),
                "all" => out.extend(Feature::ALL),
                other => {
                    return Err(format!(
                        "unknown feature {other:?} (joins, subqueries, setops, windows, all)"
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// One generated query.
#[derive(Clone, Debug)]
pub struct Query {
    /// The statement.
    pub sql: String,
    /// True when its ORDER BY fixes the row order (compare in order).
    pub ordered: bool,
    /// Indexes of the schema's tables it reads.
    pub tables: Vec<usize>,
    /// The parts of a plain SELECT, for reduction (`None` for set
    /// operations).
    pub shape: Option<Select>,
}

impl Query {
    fn from_select(shape: Select, tables: Vec<usize>) -> Query {
        Query {
            sql: shape.render(),
            ordered: shape.is_ordered(),
            tables,
            shape: Some(shape),
        }
    }

    /// Queries one step simpler than this one (a clause or an output
    /// column less), for reducing a failing case.
    pub fn simpler(&self) -> Vec<Query> {
        let Some(shape) = &self.shape else {
            return Vec::new();
        };
        shape
            .simpler()
            .into_iter()
            .map(|s| Query::from_select(s, self.tables.clone()))
            .collect()
    }
}

/// How a SELECT is ordered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Order {
    /// No ORDER BY.
    None,
    /// `ORDER BY 1, 2, …` over every output column, with these suffixes
    /// (` DESC`, ` NULLS FIRST`, …): one correct row order.
    Total(Vec<&'static str>),
    /// `ORDER BY 1` only: compared as a multiset.
    First(&'static str),
}

/// The parts of a generated SELECT.
#[derive(Clone, Debug)]
pub struct Select {
    /// `SELECT DISTINCT`.
    pub distinct: bool,
    /// The output expressions.
    pub items: Vec<String>,
    /// `FROM …` (with its joins).
    pub from: String,
    /// The WHERE condition.
    pub where_: Option<String>,
    /// The GROUP BY keys.
    pub group_by: Option<String>,
    /// The HAVING condition.
    pub having: Option<String>,
    /// The ORDER BY.
    pub order: Order,
    /// ` LIMIT n` and maybe ` OFFSET m` (only with a total order).
    pub limit: Option<String>,
}

impl Select {
    /// The statement text.
    pub fn render(&self) -> String {
        let mut sql = String::from("SELECT ");
        if self.distinct {
            sql.push_str("DISTINCT ");
        }
        sql.push_str(&self.items.join(", "));
        sql.push(' ');
        sql.push_str(&self.from);
        if let Some(w) = &self.where_ {
            write!(sql, " WHERE {w}").expect("write to String");
        }
        if let Some(g) = &self.group_by {
            write!(sql, " GROUP BY {g}").expect("write to String");
        }
        if let Some(h) = &self.having {
            write!(sql, " HAVING {h}").expect("write to String");
        }
        match &self.order {
            Order::None => {}
            Order::Total(suffixes) => {
                let keys: Vec<String> = suffixes
                    .iter()
                    .enumerate()
                    .map(|(i, s)| format!("{}{s}", i + 1))
                    .collect();
                write!(sql, " ORDER BY {}", keys.join(", ")).expect("write to String");
            }
            Order::First(s) => write!(sql, " ORDER BY 1{s}").expect("write to String"),
        }
        if let Some(l) = &self.limit {
            sql.push_str(l);
        }
        sql
    }

    /// Whether the row order is fixed (compare in order).
    pub fn is_ordered(&self) -> bool {
        matches!(self.order, Order::Total(_))
    }

    /// Every variant with one part removed.
    fn simpler(&self) -> Vec<Select> {
        let mut out = Vec::new();
        let mut with = |f: &dyn Fn(&mut Select)| {
            let mut s = self.clone();
            f(&mut s);
            out.push(s);
        };
        if self.where_.is_some() {
            with(&|s| s.where_ = None);
        }
        if self.having.is_some() {
            with(&|s| s.having = None);
        }
        if self.limit.is_some() {
            with(&|s| s.limit = None);
        }
        if self.distinct {
            with(&|s| s.distinct = false);
        }
        if self.order != Order::None && self.limit.is_none() {
            with(&|s| s.order = Order::None);
        }
        for i in 0..self.items.len() {
            if self.items.len() > 1 {
                with(&|s| {
                    s.items.remove(i);
                    if let Order::Total(suffixes) = &mut s.order {
                        suffixes.remove(i);
                    }
                });
            }
        }
        out
    }
}

/// A typed expression.
#[derive(Clone, Debug)]
struct Expr {
    sql: String,
    ty: Ty,
}

/// The columns in scope: (qualified name, type).
type Scope = Vec<(String, Ty)>;

/// Makes queries over one schema.
pub struct Generator<'a> {
    schema: &'a Schema,
    features: &'a [Feature],
}

impl<'a> Generator<'a> {
    /// A generator for `schema` that may use `features` beyond the basics.
    pub fn new(schema: &'a Schema, features: &'a [Feature]) -> Generator<'a> {
        Generator { schema, features }
    }

    fn has(&self, f: Feature) -> bool {
        self.features.contains(&f)
    }

    /// A random query.
    pub fn query(&self, rng: &mut Rng) -> Query {
        if self.has(Feature::SetOps) && rng.chance(25) {
            return self.set_op(rng);
        }
        self.select(rng, true)
    }

    /// `FROM` with one table, or (with joins) two or three; returns the
    /// clause, the scope and the tables used.
    fn gen_from(&self, rng: &mut Rng) -> (String, Scope, Vec<usize>) {
        let n = self.schema.tables.len();
        let first = rng.below(n);
        let mut scope = Scope::new();
        let mut used = vec![first];
        let add = |scope: &mut Scope, t: usize, alias: &str| {
            for (c, ty) in &self.schema.tables[t].cols {
                scope.push((format!("{alias}.{c}"), *ty));
            }
        };
        let t0 = &self.schema.tables[first];
        let mut from;
        if self.has(Feature::Subqueries) && rng.chance(15) {
            // A derived table: a filtered projection of all columns.
            let inner_scope: Scope = t0
                .cols
                .iter()
                .map(|(c, ty)| (format!("i.{c}"), *ty))
                .collect();
            let cols: Vec<String> = t0.cols.iter().map(|(c, _)| format!("i.{c}")).collect();
            let filter = self.predicate(rng, &inner_scope, 1);
            from = format!(
                "FROM (SELECT {} FROM {} AS i WHERE {filter}) AS a",
                cols.join(", "),
                t0.name
            );
        } else {
            from = format!("FROM {} AS a", t0.name);
        }
        add(&mut scope, first, "a");
        if self.has(Feature::Joins) && rng.chance(60) {
            let joins = if rng.chance(25) { 2 } else { 1 };
            // After a comma, a later ON sees only the items after it
            // (`a, b JOIN c ON …` joins b and c first).
            let mut on_from = 0;
            for alias in ["b", "c"].iter().take(joins) {
                let t = rng.below(n);
                used.push(t);
                let right = &self.schema.tables[t];
                let kind = *rng.pick(&[
                    "JOIN",
                    "LEFT JOIN",
                    "RIGHT JOIN",
                    "FULL JOIN",
                    "CROSS JOIN",
                    ",",
                ]);
                // An equality between columns of one type; c0 (int) is on
                // both sides, so there always is one.
                let right_cols: Vec<&(String, Ty)> = right
                    .cols
                    .iter()
                    .filter(|(_, ty)| scope[on_from..].iter().any(|(_, t)| t == ty))
                    .collect();
                let (rname, rty) = (*rng.pick(&right_cols)).clone();
                let left_cols: Vec<&(String, Ty)> =
                    scope[on_from..].iter().filter(|(_, t)| *t == rty).collect();
                let lname = rng.pick(&left_cols).0.clone();
                let on = format!("{lname} = {alias}.{rname}");
                match kind {
                    "CROSS JOIN" => write!(from, " CROSS JOIN {} AS {alias}", right.name),
                    "," => write!(from, ", {} AS {alias}", right.name),
                    _ => {
                        // PostgreSQL runs a FULL JOIN only on hashable or
                        // mergeable conditions: extra conditions elsewhere.
                        let extra = if kind != "FULL JOIN" && rng.chance(20) {
                            let mut s: Scope = scope[on_from..].to_vec();
                            add(&mut s, t, alias);
                            format!(" AND {}", self.predicate(rng, &s, 0))
                        } else {
                            String::new()
                        };
                        write!(from, " {kind} {} AS {alias} ON {on}{extra}", right.name)
                    }
                }
                .expect("write to String");
                if kind == "," {
                    on_from = scope.len();
                }
                add(&mut scope, t, alias);
            }
        }
        used.sort_unstable();
        used.dedup();
        (from, scope, used)
    }

    /// A SELECT; `top` allows ORDER BY / LIMIT.
    fn select(&self, rng: &mut Rng, top: bool) -> Query {
        let (from, scope, mut used) = self.gen_from(rng);
        let mut shape = Select {
            distinct: false,
            items: Vec::new(),
            from,
            where_: None,
            group_by: None,
            having: None,
            order: Order::None,
            limit: None,
        };
        let mode = rng.below(10);
        if mode < 5 {
            // Plain projection, maybe DISTINCT.
            shape.distinct = rng.chance(20);
            for _ in 0..rng.range(1, 3) {
                shape.items.push(self.expr(rng, &scope, 2).sql);
            }
            if rng.chance(4) {
                // 22012 exactly when a row reaches the output (a column
                // operand, so no server folds it before the scan).
                let x = self.expr_of(rng, &scope, 1, Ty::Int).sql;
                shape.items.push(format!("({x} / 0)"));
            }
            if self.has(Feature::Subqueries) && rng.chance(15) {
                let (e, t) = self.scalar_subquery(rng, &scope);
                used.extend(t);
                shape.items.push(e.sql);
            }
            if self.has(Feature::Windows) && rng.chance(40) {
                // One window that reads positions at most (see `window`).
                let mut positional = rng.chance(50);
                for _ in 0..rng.range(1, 2) {
                    shape.items.push(self.window(rng, &scope, positional));
                    positional = false;
                }
            }
        } else if mode < 7 {
            // Aggregates over the whole input.
            for _ in 0..rng.range(1, 3) {
                shape.items.push(self.aggregate(rng, &scope).sql);
            }
        } else {
            // GROUP BY one or two columns.
            let keys: Vec<String> = (0..rng.range(1, 2))
                .map(|_| rng.pick(&scope).0.clone())
                .collect();
            shape.items.extend(keys.iter().cloned());
            for _ in 0..rng.range(1, 2) {
                shape.items.push(self.aggregate(rng, &scope).sql);
            }
            shape.group_by = Some(keys.join(", "));
            if rng.chance(30) {
                let agg = self.aggregate_of(rng, &scope, Some(Ty::Int));
                shape.having = Some(format!(
                    "{} {} {}",
                    agg.sql,
                    rng.pick(&["=", "<>", "<", ">", ">="]),
                    rng.range(0, 4)
                ));
            }
        }
        if rng.chance(65) {
            shape.where_ = Some(if self.has(Feature::Subqueries) && rng.chance(40) {
                let (p, t) = self.subquery_predicate(rng, &scope);
                used.extend(t);
                p
            } else {
                self.predicate(rng, &scope, 2)
            });
        }
        if top && rng.chance(55) {
            // ORDER BY every output column: a total order.
            shape.order = Order::Total((0..shape.items.len()).map(|_| order_suffix(rng)).collect());
            if rng.chance(40) {
                let mut limit = format!(" LIMIT {}", rng.range(0, 5));
                if rng.chance(40) {
                    write!(limit, " OFFSET {}", rng.range(0, 3)).expect("write to String");
                }
                shape.limit = Some(limit);
            }
        } else if top && rng.chance(15) {
            // An ORDER BY on part of the output: compared as a multiset.
            shape.order = Order::First(order_suffix(rng));
        }
        used.sort_unstable();
        used.dedup();
        Query::from_select(shape, used)
    }

    /// Two single-table SELECTs of the same column types combined.
    fn set_op(&self, rng: &mut Rng) -> Query {
        let n = self.schema.tables.len();
        let (l, r) = (rng.below(n), rng.below(n));
        let width = rng.range(1, 2) as usize;
        let lt = &self.schema.tables[l];
        let rt = &self.schema.tables[r];
        let mut lcols = Vec::new();
        let mut rcols = Vec::new();
        for _ in 0..width {
            let (lc, ty) = rng.pick(&lt.cols).clone();
            lcols.push(format!("a.{lc}"));
            let matching: Vec<&(String, Ty)> = rt.cols.iter().filter(|(_, t)| *t == ty).collect();
            rcols.push(match matching.is_empty() {
                true => format!("{}::{}", constant(rng, ty), ty.sql()),
                false => format!("a.{}", rng.pick(&matching).0),
            });
        }
        let side = |rng: &mut Rng, t: &Table, cols: &[String]| {
            let scope: Scope = t
                .cols
                .iter()
                .map(|(c, ty)| (format!("a.{c}"), *ty))
                .collect();
            let mut s = format!("SELECT {} FROM {} AS a", cols.join(", "), t.name);
            if rng.chance(50) {
                write!(s, " WHERE {}", self.predicate(rng, &scope, 1)).expect("write to String");
            }
            s
        };
        let op = *rng.pick(&[
            "UNION",
            "UNION ALL",
            "INTERSECT",
            "INTERSECT ALL",
            "EXCEPT",
            "EXCEPT ALL",
        ]);
        let mut sql = format!("{} {op} {}", side(rng, lt, &lcols), side(rng, rt, &rcols));
        let mut ordered = false;
        if rng.chance(50) {
            let keys: Vec<String> = (1..=width)
                .map(|i| format!("{i}{}", order_suffix(rng)))
                .collect();
            write!(sql, " ORDER BY {}", keys.join(", ")).expect("write to String");
            ordered = true;
            if rng.chance(40) {
                write!(sql, " LIMIT {}", rng.range(0, 4)).expect("write to String");
            }
        }
        let mut tables = vec![l, r];
        tables.sort_unstable();
        tables.dedup();
        Query {
            sql,
            ordered,
            tables,
            shape: None,
        }
    }

    /// An expression over `scope`, nested up to `depth`.
    fn expr(&self, rng: &mut Rng, scope: &Scope, depth: u32) -> Expr {
        let (c, ty) = rng.pick(scope).clone();
        let col = Expr { sql: c, ty };
        if depth == 0 || rng.chance(45) {
            return col;
        }
        let inner = self.expr_of(rng, scope, depth - 1, ty);
        let e = &inner.sql;
        let sql = match ty {
            Ty::Int => match rng.below(12) {
                9 => match col_of(rng, scope, Ty::Text) {
                    Some(t) => format!("length({t})"),
                    None => format!("greatest({e}, {})", rng.range(0, 3)),
                },
                10 => match col_of(rng, scope, Ty::Num) {
                    Some(n) => format!("{n}::int"),
                    None => format!("least({e}, {})", rng.range(0, 3)),
                },
                11 => format!(
                    "CASE {e} WHEN {} THEN {} ELSE {} END",
                    rng.range(0, 3),
                    rng.range(0, 9),
                    rng.range(0, 9)
                ),
                8 => format!("({e} / {})", rng.pick(&[2, 3, -2])),
                0 => format!("({e} + {})", rng.range(0, 3)),
                1 => format!("({e} * {})", rng.range(0, 3)),
                2 => format!("({e} - {})", rng.range(0, 3)),
                3 => format!("({e} % {})", rng.range(2, 4)),
                4 => format!("abs({e})"),
                5 => format!("coalesce({e}, {})", rng.range(-1, 9)),
                6 => format!("(-{e})"),
                _ => format!(
                    "CASE WHEN {} THEN {e} ELSE {} END",
                    self.predicate(rng, scope, 0),
                    rng.range(0, 5)
                ),
            },
            Ty::Text => match rng.below(8) {
                6 => match col_of(rng, scope, Ty::Int) {
                    Some(i) => format!("({i}::text || {e})"),
                    None => format!("({e} || {e})"),
                },
                7 => match col_of(rng, scope, Ty::Num) {
                    Some(n) => format!("CAST({n} AS text)"),
                    None => format!("upper({e})"),
                },
                0 => format!("upper({e})"),
                1 => format!("lower({e})"),
                2 => format!("({e} || 'x')"),
                3 => format!("coalesce({e}, 'z')"),
                4 => format!("substring({e} from 1 for 1)"),
                _ => format!("nullif({e}, 'a')"),
            },
            Ty::Num => match rng.below(8) {
                6 => match col_of(rng, scope, Ty::Int) {
                    Some(i) => format!("({i} + {e})"),
                    None => format!("({e} - 1)"),
                },
                7 => match col_of(rng, scope, Ty::Int) {
                    Some(i) => format!("({i} * 1.5)"),
                    None => format!("({e} * 1.5)"),
                },
                5 => format!("({e} / {})", rng.pick(&["4", "3", "0.5"])),
                0 => format!("({e} + 1.25)"),
                1 => format!("({e} * 2)"),
                2 => format!("round({e}, 1)"),
                3 => format!("abs({e})"),
                _ => format!("coalesce({e}, 0.50)"),
            },
            Ty::Bool => match rng.below(3) {
                0 => format!("(NOT {e})"),
                1 => format!("({e} IS TRUE)"),
                _ => format!("coalesce({e}, false)"),
            },
        };
        Expr { sql, ty }
    }

    /// An expression of type `ty` (a column of it if there is one, else a
    /// constant).
    fn expr_of(&self, rng: &mut Rng, scope: &Scope, depth: u32, ty: Ty) -> Expr {
        let of_type: Scope = scope.iter().filter(|(_, t)| *t == ty).cloned().collect();
        if of_type.is_empty() {
            return Expr {
                sql: constant(rng, ty),
                ty,
            };
        }
        let e = self.expr(rng, &of_type, depth);
        if e.ty == ty {
            e
        } else {
            Expr {
                sql: rng.pick(&of_type).0.clone(),
                ty,
            }
        }
    }

    /// A boolean condition over `scope`.
    fn predicate(&self, rng: &mut Rng, scope: &Scope, depth: u32) -> String {
        if depth > 0 && rng.chance(35) {
            let l = self.predicate(rng, scope, depth - 1);
            let r = self.predicate(rng, scope, depth - 1);
            return match rng.below(3) {
                0 => format!("({l} AND {r})"),
                1 => format!("({l} OR {r})"),
                _ => format!("NOT ({l})"),
            };
        }
        let e = self.expr(rng, scope, 1);
        let x = &e.sql;
        match (e.ty, rng.below(10)) {
            (_, 0) => format!("{x} IS NULL"),
            (_, 1) => format!("{x} IS NOT NULL"),
            (Ty::Bool, 2) => format!("{x} IS FALSE"),
            (Ty::Bool, 3) => format!("{x} IS UNKNOWN"),
            (Ty::Bool, 4) => format!("{x} IS NOT TRUE"),
            (Ty::Bool, 5) => format!("{x} = {}", constant(rng, Ty::Bool)),
            (Ty::Bool, _) => x.clone(),
            (Ty::Text, 2) => format!(
                "{x} {} '{}'",
                rng.pick(&["LIKE", "ILIKE", "NOT LIKE", "NOT ILIKE"]),
                rng.pick(&["a%", "%b", "_", "%", "a_", "%A%"])
            ),
            (ty, 3) => {
                let list: Vec<String> = (0..rng.range(1, 3)).map(|_| constant(rng, ty)).collect();
                let not = if rng.chance(30) { "NOT " } else { "" };
                format!("{x} {not}IN ({})", list.join(", "))
            }
            (Ty::Int | Ty::Num, 4) => format!(
                "{x} {}BETWEEN {} AND {}",
                if rng.chance(30) { "NOT " } else { "" },
                constant(rng, e.ty),
                constant(rng, e.ty)
            ),
            // Parenthesized: hotpair's parser lets `x IS DISTINCT FROM y AND
            // z` take `y AND z` as the right operand (sql/operators_ext.sql).
            (ty, 5) => format!(
                "({x} IS {}DISTINCT FROM {})",
                if rng.chance(50) { "NOT " } else { "" },
                if rng.chance(50) {
                    constant(rng, ty)
                } else {
                    self.expr_of(rng, scope, 0, ty).sql
                }
            ),
            (Ty::Int, 6) => match col_of(rng, scope, Ty::Num) {
                // Across int and numeric.
                Some(n) => format!("{x} {} {n}", rng.pick(&["=", "<", ">="])),
                None => format!("{x} = {}", constant(rng, Ty::Int)),
            },
            (ty, _) => {
                let op = rng.pick(&["=", "<>", "<", "<=", ">", ">="]);
                let rhs = if rng.chance(30) {
                    self.expr_of(rng, scope, 0, ty).sql
                } else {
                    constant(rng, ty)
                };
                format!("{x} {op} {rhs}")
            }
        }
    }

    /// An aggregate call over `scope`.
    fn aggregate(&self, rng: &mut Rng, scope: &Scope) -> Expr {
        self.aggregate_of(rng, scope, None)
    }

    /// An aggregate call; with `want`, one returning that type (count for
    /// Int).
    fn aggregate_of(&self, rng: &mut Rng, scope: &Scope, want: Option<Ty>) -> Expr {
        if want == Some(Ty::Int) || rng.chance(20) {
            return match rng.below(3) {
                0 => Expr {
                    sql: "count(*)".into(),
                    ty: Ty::Int,
                },
                1 => {
                    let (c, _) = rng.pick(scope).clone();
                    Expr {
                        sql: format!("count({c})"),
                        ty: Ty::Int,
                    }
                }
                _ => {
                    let (c, _) = rng.pick(scope).clone();
                    Expr {
                        sql: format!("count(DISTINCT {c})"),
                        ty: Ty::Int,
                    }
                }
            };
        }
        let e = self.expr(rng, scope, 1);
        let sql = match e.ty {
            Ty::Int | Ty::Num => match rng.below(5) {
                0 => format!("sum({})", e.sql),
                1 => format!("avg({})", e.sql),
                2 => format!("min({})", e.sql),
                3 => format!("max({})", e.sql),
                _ => format!("sum(DISTINCT {})", e.sql),
            },
            Ty::Text => format!("{}({})", rng.pick(&["min", "max"]), e.sql),
            Ty::Bool => format!("{}({})", rng.pick(&["bool_and", "bool_or"]), e.sql),
        };
        // sum(int) is bigint, avg is numeric: the exact type does not matter
        // here, only that it is not used where a specific one is needed.
        Expr { sql, ty: e.ty }
    }

    /// A window function call with its OVER clause. Its answer must not
    /// depend on how rows that tie in the window's ORDER BY are ordered:
    /// with `positional`, a function that reads positions (row_number,
    /// lag, first_value, ROWS frames …) over an ORDER BY of every column
    /// in scope, where only identical rows tie (so a query has one such
    /// window at most: two would pair their values across identical rows
    /// in either way); else one that peers share (ranks, RANGE and GROUPS
    /// frames) over any ORDER BY.
    fn window(&self, rng: &mut Rng, scope: &Scope, positional: bool) -> String {
        let mut over = Vec::new();
        if rng.chance(50) {
            over.push(format!("PARTITION BY {}", rng.pick(scope).0));
        }
        let keys: Vec<(String, Ty)> = if positional {
            scope.clone()
        } else {
            (0..rng.below(3)).map(|_| rng.pick(scope).clone()).collect()
        };
        // RANGE with an offset: one numeric key.
        let range_key = (!positional && keys.len() == 1 && matches!(keys[0].1, Ty::Int | Ty::Num))
            .then(|| keys[0].1);
        if !keys.is_empty() {
            let order: Vec<String> = keys
                .iter()
                .map(|(c, _)| format!("{c}{}", order_suffix(rng)))
                .collect();
            over.push(format!("ORDER BY {}", order.join(", ")));
        }
        let n = rng.range(0, 3);
        let m = rng.range(0, 3);
        let frame = if keys.is_empty() {
            // Without ORDER BY every row is a peer of every other.
            String::new()
        } else if positional {
            rng.pick(&[
                String::new(),
                format!(" ROWS BETWEEN {n} PRECEDING AND {m} FOLLOWING"),
                " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW".into(),
                format!(" ROWS BETWEEN CURRENT ROW AND {m} FOLLOWING"),
                format!(" ROWS BETWEEN {m} FOLLOWING AND UNBOUNDED FOLLOWING"),
                format!(" ROWS {n} PRECEDING"),
            ])
            .clone()
        } else {
            let mut frames = vec![
                String::new(),
                " RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING".into(),
                format!(" GROUPS BETWEEN {n} PRECEDING AND {m} FOLLOWING"),
                format!(" GROUPS BETWEEN CURRENT ROW AND {m} FOLLOWING"),
            ];
            match range_key {
                Some(Ty::Int) => {
                    frames.push(format!(" RANGE BETWEEN {n} PRECEDING AND {m} FOLLOWING"))
                }
                Some(_) => {
                    frames.push(format!(" RANGE BETWEEN 1.5 PRECEDING AND {m}.25 FOLLOWING"))
                }
                None => {}
            }
            rng.pick(&frames).clone()
        };
        let arg = self.expr(rng, scope, 1);
        let agg = match arg.ty {
            Ty::Int | Ty::Num => format!(
                "{}({})",
                rng.pick(&["sum", "min", "max", "avg", "count"]),
                arg.sql
            ),
            Ty::Text => format!("{}({})", rng.pick(&["min", "max", "count"]), arg.sql),
            Ty::Bool => format!("{}({})", rng.pick(&["bool_and", "bool_or"]), arg.sql),
        };
        let func = if positional {
            match rng.below(9) {
                0 => "row_number()".into(),
                1 => format!("ntile({})", rng.range(1, 4)),
                2 => format!("lag({})", arg.sql),
                3 => format!("lead({}, {})", arg.sql, rng.range(0, 3)),
                4 => match arg.ty {
                    Ty::Int => format!("lag({}, {}, -1)", arg.sql, rng.range(1, 3)),
                    _ => format!("lead({}, 2)", arg.sql),
                },
                5 => format!("first_value({})", arg.sql),
                6 => format!("last_value({})", arg.sql),
                7 => format!("nth_value({}, {})", arg.sql, rng.range(1, 3)),
                _ => agg,
            }
        } else {
            match rng.below(6) {
                0 => "rank()".into(),
                1 => "dense_rank()".into(),
                2 => "percent_rank()".into(),
                3 => "cume_dist()".into(),
                4 => "count(*)".into(),
                _ => agg,
            }
        };
        // Ranks ignore the frame; PostgreSQL accepts it all the same.
        format!("{func} OVER ({}{frame})", over.join(" "))
    }

    /// A subquery condition: IN / NOT IN / EXISTS / NOT EXISTS / compared
    /// with a scalar subquery. Returns it and the tables it reads.
    fn subquery_predicate(&self, rng: &mut Rng, scope: &Scope) -> (String, Vec<usize>) {
        let t = rng.below(self.schema.tables.len());
        let inner = &self.schema.tables[t];
        let inner_scope: Scope = inner
            .cols
            .iter()
            .map(|(c, ty)| (format!("s.{c}"), *ty))
            .collect();
        let (outer_col, ty) = rng.pick(scope).clone();
        let matching: Vec<&(String, Ty)> = inner_scope.iter().filter(|(_, t)| *t == ty).collect();
        let filter = if rng.chance(50) {
            format!(" WHERE {}", self.predicate(rng, &inner_scope, 1))
        } else {
            String::new()
        };
        let sql = match (matching.is_empty(), rng.below(4)) {
            (false, 0) => format!(
                "{outer_col} IN (SELECT {} FROM {} AS s{filter})",
                rng.pick(&matching).0,
                inner.name
            ),
            (false, 1) => format!(
                "{outer_col} NOT IN (SELECT {} FROM {} AS s{filter})",
                rng.pick(&matching).0,
                inner.name
            ),
            (false, 2) => {
                let agg = if ty == Ty::Bool {
                    "bool_or"
                } else {
                    *rng.pick(&["min", "max"])
                };
                format!(
                    "{outer_col} {} (SELECT {agg}({}) FROM {} AS s{filter})",
                    rng.pick(&["=", "<", ">="]),
                    rng.pick(&matching).0,
                    inner.name
                )
            }
            (false, _) => format!(
                "{}EXISTS (SELECT 1 FROM {} AS s WHERE s.{} = {outer_col})",
                if rng.chance(50) { "NOT " } else { "" },
                inner.name,
                rng.pick(&matching).0.trim_start_matches("s.")
            ),
            (true, _) => format!("EXISTS (SELECT 1 FROM {} AS s{filter})", inner.name),
        };
        (sql, vec![t])
    }

    /// A scalar subquery for the select list, correlated half the time.
    fn scalar_subquery(&self, rng: &mut Rng, scope: &Scope) -> (Expr, Vec<usize>) {
        let t = rng.below(self.schema.tables.len());
        let inner = &self.schema.tables[t];
        let (outer_col, ty) = rng.pick(scope).clone();
        let correlated = inner
            .cols
            .iter()
            .filter(|(_, t)| *t == ty)
            .map(|(c, _)| c.clone())
            .next()
            .filter(|_| rng.chance(50));
        let filter = match correlated {
            Some(c) => format!(" WHERE s.{c} = {outer_col}"),
            None => String::new(),
        };
        (
            Expr {
                sql: format!("(SELECT count(*) FROM {} AS s{filter})", inner.name),
                ty: Ty::Int,
            },
            vec![t],
        )
    }
}

/// A column of type `ty` from `scope`, if there is one.
fn col_of(rng: &mut Rng, scope: &Scope, ty: Ty) -> Option<String> {
    let cols: Vec<&String> = scope
        .iter()
        .filter(|(_, t)| *t == ty)
        .map(|(c, _)| c)
        .collect();
    if cols.is_empty() {
        None
    } else {
        Some(rng.pick(&cols).to_string())
    }
}

/// ` DESC`, ` NULLS FIRST`, … or nothing.
fn order_suffix(rng: &mut Rng) -> &'static str {
    const SUFFIXES: [&str; 6] = [
        "",
        "",
        " DESC",
        " NULLS FIRST",
        " DESC NULLS LAST",
        " ASC NULLS LAST",
    ];
    SUFFIXES[rng.below(SUFFIXES.len())]
}

/// What a server answered to a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Column names, then rows, each value as text (`None` for NULL).
    Rows(Vec<String>, Vec<Vec<Option<String>>>),
    /// An error: SQLSTATE and message.
    Error(String, String),
}

impl Outcome {
    /// The rows sorted (for a multiset comparison); errors unchanged.
    pub fn sorted(&self) -> Outcome {
        match self {
            Outcome::Rows(c, r) => {
                let mut r = r.clone();
                r.sort();
                Outcome::Rows(c.clone(), r)
            }
            e => e.clone(),
        }
    }

    /// Whether `self` (hotpair) agrees with `reference` (PostgreSQL):
    /// equal column names and rows (in order when `ordered`), or errors
    /// with one SQLSTATE.
    pub fn agrees(&self, reference: &Outcome, ordered: bool) -> bool {
        match (self, reference) {
            (Outcome::Error(a, _), Outcome::Error(b, _)) => a == b,
            (Outcome::Rows(..), Outcome::Rows(..)) if ordered => self == reference,
            (Outcome::Rows(..), Outcome::Rows(..)) => self.sorted() == reference.sorted(),
            _ => false,
        }
    }

    /// psql-like text: a header and rows as `a|b` lines (NULL empty), or
    /// the error.
    pub fn render(&self) -> String {
        match self {
            Outcome::Rows(columns, rows) => {
                let mut s = columns.join("|");
                s.push('\n');
                for r in rows {
                    let vals: Vec<&str> = r.iter().map(|v| v.as_deref().unwrap_or("")).collect();
                    s.push_str(&vals.join("|"));
                    s.push('\n');
                }
                s.push_str(&format!("({} rows)", rows.len()));
                s
            }
            Outcome::Error(code, msg) => format!("ERROR {code}: {msg}"),
        }
    }
}

/// A self-contained script reproducing a query over `tables` (with their
/// current rows).
pub fn script(tables: &[&Table], rows: &[Vec<Vec<String>>], query: &str) -> String {
    let mut s = String::new();
    for (t, r) in tables.iter().zip(rows) {
        s.push_str(&t.create_sql());
        s.push('\n');
        if let Some(ins) = t.insert_sql(r) {
            s.push_str(&ins);
            s.push('\n');
        }
    }
    s.push_str(query);
    s.push_str(";\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_queries() {
        let gen = |seed| {
            let mut rng = Rng::new(seed);
            let schema = Schema::generate(&mut rng, 0);
            let g = Generator::new(&schema, &Feature::ALL);
            (0..50).map(|_| g.query(&mut rng).sql).collect::<Vec<_>>()
        };
        assert_eq!(gen(7), gen(7));
        assert_ne!(gen(7), gen(8));
    }

    #[test]
    fn outcomes_compare_as_multisets_unless_ordered() {
        let a = Outcome::Rows(vec!["x".into()], vec![vec![Some("1".into())], vec![None]]);
        let b = Outcome::Rows(vec!["x".into()], vec![vec![None], vec![Some("1".into())]]);
        let c = Outcome::Rows(vec!["y".into()], vec![vec![None], vec![Some("1".into())]]);
        assert!(!a.agrees(&c, false));
        assert!(a.agrees(&b, false));
        assert!(!a.agrees(&b, true));
        let e1 = Outcome::Error("22012".into(), "x".into());
        let e2 = Outcome::Error("22012".into(), "y".into());
        assert!(e1.agrees(&e2, true));
        assert!(!a.agrees(&e1, false));
    }

    #[test]
    fn features_parse() {
        assert_eq!(
            Feature::parse_list("joins, setops").unwrap(),
            vec![Feature::Joins, Feature::SetOps]
        );
        assert_eq!(Feature::parse_list("all").unwrap().len(), 4);
        assert!(Feature::parse_list("lateral").is_err());
    }
}
