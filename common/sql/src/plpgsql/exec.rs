//! The PL/pgSQL interpreter (PostgreSQL's `pl_exec.c`): walks a
//! [`Compiled`] tree, keeping the variables in an array of slots and
//! running every expression and embedded statement through `crate::spi`.

use std::sync::Arc;

use super::gram::{
    condition_code, valid_sqlstate, Block, CallArg, Compiled, Cond, Direction, Fast, IntoClause,
    Level, PExpr, ParamRef, Query, Raise, SlotType, Stmt, StmtKind, Targets,
};
use crate::executor::Ectx;
use crate::parser::cursorstmt::{FetchDirection, FETCH_ALL};
use crate::portalcmds::{Cursor, Declared, Portals};
use crate::spi::{self, SnapshotMode, SpiResult};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::{cast_assign, Value};
use server::backend::FieldDescription;

/// A row held by a record variable.
#[derive(Debug)]
struct Row {
    names: Vec<String>,
    types: Vec<SqlType>,
    vals: Vec<Value>,
}

/// A variable's value.
#[derive(Clone, Debug)]
enum Var {
    Scalar(Value, SqlType),
    /// None: not assigned yet.
    Record(Option<Arc<Row>>),
}

/// How a statement list ended.
enum Flow {
    Normal,
    Exit(Option<String>),
    Continue(Option<String>),
    Return(Value),
}

struct Exec<'c> {
    c: &'c Compiled,
    vars: Vec<Var>,
    row_count: u64,
    /// The innermost statement running (CONTEXT).
    err_stmt: Option<(u32, &'static str)>,
    /// Errors being handled, innermost last (`RAISE;`, GET STACKED).
    caught: Vec<PgError>,
    /// RETURN NEXT / RETURN QUERY rows.
    set_rows: Vec<Vec<Value>>,
    /// Where OPEN puts cursors outside a session (a session's own list
    /// otherwise, `Ectx::portals`).
    local: Portals,
    /// A row trigger's NEW (0) and OLD (1) that the event has not: their
    /// fields read as NULL, the whole record is NULL.
    absent: [bool; 2],
}

/// Runs `c` with `args` (the parameters' values, already of their types):
/// the result value (the first column of the result row).
pub fn run(ec: &mut Ectx<'_>, c: &Compiled, args: &[Value]) -> PgResult<Value> {
    let rows = run_rows(ec, c, args)?;
    Ok(rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or(Value::Null))
}

/// Runs `c` with `args`: its result rows. A set-returning function's
/// RETURN NEXT / RETURN QUERY rows (materialised, as PostgreSQL's
/// tuplestore); else one row, the OUT parameters' values or the RETURN
/// value.
pub fn run_rows(ec: &mut Ectx<'_>, c: &Compiled, args: &[Value]) -> PgResult<Vec<Vec<Value>>> {
    let mut x = Exec::start(c, args);
    let flow = x.block(ec, &c.body).map_err(|e| x.with_context(e))?;
    let value = match flow {
        Flow::Return(v) => v,
        Flow::Normal if c.ret == SqlType::Void || c.retset || !c.out.is_empty() => Value::Null,
        Flow::Normal => {
            return Err(PgError::new(
                sqlstate::NO_RETURN_STATEMENT,
                "control reached end of function without RETURN",
            )
            .with_context(format!("PL/pgSQL function {}", c.name)))
        }
        Flow::Exit(_) => {
            return Err(x.with_context(PgError::syntax(
                "EXIT cannot be used outside a loop, unless it has a label",
            )))
        }
        Flow::Continue(_) => {
            return Err(x.with_context(PgError::syntax("CONTINUE cannot be used outside a loop")))
        }
    };
    if c.retset {
        return Ok(std::mem::take(&mut x.set_rows));
    }
    if c.ret == SqlType::Void {
        return Ok(vec![vec![Value::Void]]);
    }
    if !c.out.is_empty() {
        return Ok(vec![x.out_row()]);
    }
    Ok(vec![vec![value]])
}

/// A value converted to `to` as PL/pgSQL assigns: an assignment cast,
/// else through the text form.
fn coerce(v: Value, to: SqlType) -> PgResult<Value> {
    if v.is_null() || to == SqlType::Unknown || v.sql_type() == to {
        return Ok(v);
    }
    if let Value::Text(s) = &v {
        // PL/pgSQL converts text through the target type's input function.
        return Value::from_text(to, s);
    }
    match cast_assign(&v, to) {
        Ok(x) => Ok(x),
        Err(e) => match Value::from_text(to, &v.to_text_string()) {
            Ok(x) => Ok(x),
            Err(_) => Err(e),
        },
    }
}

/// The text RAISE prints for a value.
fn raise_text(v: &Value) -> String {
    if v.is_null() {
        "<NULL>".to_string()
    } else {
        v.to_text_string()
    }
}

/// A SQLSTATE as the `&'static str` errors carry: PostgreSQL's constants
/// for the names we know, otherwise interned once per distinct code.
fn static_code(code: &str) -> &'static str {
    if let Some((_, c)) = super::gram::CONDITIONS.iter().find(|(_, c)| *c == code) {
        return c;
    }
    static INTERNED: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut v = INTERNED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = v.iter().find(|c| **c == code) {
        return c;
    }
    let c: &'static str = Box::leak(code.to_string().into_boxed_str());
    v.push(c);
    c
}

/// True if handler condition `c` catches an error with SQLSTATE `code`.
fn catches(c: &Cond, code: &str) -> bool {
    match c {
        // OTHERS lets cancel, statement_timeout and ASSERT through.
        Cond::Others => code != sqlstate::QUERY_CANCELED && code != sqlstate::ASSERT_FAILURE,
        Cond::Code(s) if s.ends_with("000") => code.get(..2) == s.get(..2),
        Cond::Code(s) => s == code,
    }
}

impl<'c> Exec<'c> {
    /// The interpreter at the start of a call: parameters in their slots
    /// (`args`), every other variable NULL or unassigned, FOUND false.
    fn start(c: &'c Compiled, args: &[Value]) -> Exec<'c> {
        let mut vars = Vec::with_capacity(c.slots.len());
        for (i, s) in c.slots.iter().enumerate() {
            vars.push(match &s.ty {
                SlotType::Record => Var::Record(None),
                SlotType::Scalar(t) => Var::Scalar(
                    args.get(i)
                        .cloned()
                        .filter(|_| i < c.nargs)
                        .unwrap_or(Value::Null),
                    *t,
                ),
                SlotType::Dynamic => Var::Scalar(Value::Null, SqlType::Unknown),
            });
        }
        vars[c.found] = Var::Scalar(Value::Bool(false), SqlType::Bool);
        Exec {
            c,
            vars,
            row_count: 0,
            err_stmt: None,
            caught: Vec::new(),
            set_rows: Vec::new(),
            local: Portals::default(),
            absent: [false; 2],
        }
    }

    fn with_context(&self, e: PgError) -> PgError {
        match self.err_stmt {
            Some((line, what)) => e.with_context(format!(
                "PL/pgSQL function {} line {line} at {what}",
                self.c.name
            )),
            None => e.with_context(format!("PL/pgSQL function {}", self.c.name)),
        }
    }

    fn slot_name(&self, slot: usize) -> &str {
        self.c.slots.get(slot).map_or("", |s| s.name.as_str())
    }

    /// The value and type of a parameter reference.
    fn param_value(&self, p: &ParamRef) -> PgResult<(Value, SqlType)> {
        match (&self.vars[p.slot], &p.field) {
            (Var::Scalar(v, t), None) => Ok((v.clone(), *t)),
            (Var::Scalar(..), Some(f)) => Err(PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("missing FROM-clause entry for table \"{}\"", f),
            )),
            (Var::Record(None), _) => Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("record \"{}\" is not assigned yet", self.slot_name(p.slot)),
            )
            .with_detail("The tuple structure of a not-yet-assigned record is indeterminate.")),
            (Var::Record(Some(row)), Some(f)) => match row.names.iter().position(|n| n == f) {
                Some(i) => Ok((row.vals[i].clone(), row.types[i])),
                None => Err(PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("record \"{}\" has no field \"{f}\"", self.slot_name(p.slot)),
                )),
            },
            // The whole row: its record text form (`(a,b)`), as
            // record_out prints it.
            (Var::Record(Some(_)), None) if self.absent.get(p.slot) == Some(&true) => {
                Ok((Value::Null, SqlType::Record))
            }
            (Var::Record(Some(row)), None) => {
                Ok((crate::fmgr::record_value(&row.vals), SqlType::Record))
            }
        }
    }

    fn params(&self, e: &PExpr) -> PgResult<(Vec<Value>, Vec<SqlType>)> {
        let mut vals = Vec::with_capacity(e.params.len());
        let mut types = Vec::with_capacity(e.params.len());
        for p in &e.params {
            let (v, t) = self.param_value(p)?;
            vals.push(v);
            types.push(t);
        }
        Ok((vals, types))
    }

    /// Evaluates an expression: one row, one column.
    fn eval(&mut self, ec: &mut Ectx<'_>, e: &PExpr) -> PgResult<(Value, SqlType)> {
        match &e.fast {
            Fast::Param => return self.param_value(&e.params[0]),
            Fast::Const(v) => return Ok((v.clone(), v.sql_type())),
            Fast::No => {}
        }
        let (vals, types) = self.params(e)?;
        let mode = if e.simple {
            SnapshotMode::Caller
        } else {
            self.c.mode
        };
        let r = spi::execute(ec, &e.sql, &vals, &types, mode, Some(2))?;
        if r.columns.len() != 1 {
            return Err(PgError::syntax(format!(
                "query \"{}\" returned {} columns",
                e.sql,
                r.columns.len()
            )));
        }
        if r.rows.len() > 1 {
            return Err(PgError::new(
                sqlstate::CARDINALITY_VIOLATION,
                format!("query \"{}\" returned more than one row", e.sql),
            ));
        }
        let ty = r.columns[0].ty;
        let v = r
            .rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null);
        Ok((v, ty))
    }

    fn eval_bool(&mut self, ec: &mut Ectx<'_>, e: &PExpr) -> PgResult<bool> {
        let (v, _) = self.eval(ec, e)?;
        match coerce(v, SqlType::Bool)? {
            Value::Bool(b) => Ok(b),
            _ => Ok(false),
        }
    }

    fn eval_int(&mut self, ec: &mut Ectx<'_>, e: &PExpr, what: &str) -> PgResult<i32> {
        let (v, _) = self.eval(ec, e)?;
        match coerce(v, SqlType::Int4)? {
            Value::Int4(i) => Ok(i),
            _ => Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                format!("{what} of FOR loop cannot be null"),
            )),
        }
    }

    fn eval_text(&mut self, ec: &mut Ectx<'_>, e: &PExpr) -> PgResult<Option<String>> {
        let (v, _) = self.eval(ec, e)?;
        Ok((!v.is_null()).then(|| v.to_text_string()))
    }

    fn set_found(&mut self, found: bool) {
        self.vars[self.c.found] = Var::Scalar(Value::Bool(found), SqlType::Bool);
    }

    /// Stores `v` into `slot` (or its field).
    fn assign(&mut self, slot: usize, field: Option<&str>, v: Value) -> PgResult<()> {
        let def = &self.c.slots[slot];
        match (&def.ty, field) {
            (SlotType::Scalar(t), _) => {
                let v = coerce(v, *t)?;
                if def.not_null && v.is_null() {
                    return Err(PgError::new(
                        sqlstate::NULL_VALUE_NOT_ALLOWED,
                        format!(
                            "null value cannot be assigned to variable \"{}\" declared NOT NULL",
                            def.name
                        ),
                    ));
                }
                self.vars[slot] = Var::Scalar(v, *t);
            }
            (SlotType::Dynamic, _) => {
                let t = v.sql_type();
                self.vars[slot] = Var::Scalar(v, t);
            }
            (SlotType::Record, Some(f)) => {
                let Var::Record(Some(row)) = &self.vars[slot] else {
                    return Err(PgError::new(
                        sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                        format!("record \"{}\" is not assigned yet", def.name),
                    ));
                };
                let Some(i) = row.names.iter().position(|n| n == f) else {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("record \"{}\" has no field \"{f}\"", def.name),
                    ));
                };
                let v = coerce(v, row.types[i])?;
                let mut vals = row.vals.clone();
                vals[i] = v;
                let new = Row {
                    names: row.names.clone(),
                    types: row.types.clone(),
                    vals,
                };
                self.vars[slot] = Var::Record(Some(Arc::new(new)));
            }
            (SlotType::Record, None) => {
                return Err(PgError::unsupported(
                    "assigning a single value to a record variable is not supported",
                ))
            }
        }
        Ok(())
    }

    /// The result column types: the OUT / TABLE columns', else the
    /// result type.
    fn result_types(&self) -> Vec<SqlType> {
        if self.c.out.is_empty() {
            vec![self.c.ret]
        } else {
            self.c.out.iter().map(|s| self.slot_type(*s)).collect()
        }
    }

    fn slot_type(&self, slot: usize) -> SqlType {
        match &self.c.slots[slot].ty {
            SlotType::Scalar(t) => *t,
            _ => SqlType::Unknown,
        }
    }

    /// The OUT parameters' current values.
    fn out_row(&self) -> Vec<Value> {
        self.c
            .out
            .iter()
            .map(|s| match &self.vars[*s] {
                Var::Scalar(v, _) => v.clone(),
                Var::Record(_) => Value::Null,
            })
            .collect()
    }

    /// The row RETURN NEXT adds: the OUT parameters' values (no
    /// expression), a record variable's fields, or the expression's value.
    fn return_next_row(&mut self, ec: &mut Ectx<'_>, e: Option<&PExpr>) -> PgResult<Vec<Value>> {
        let types = self.result_types();
        let Some(e) = e else {
            if self.c.out.is_empty() {
                return Err(PgError::syntax("RETURN NEXT must have a parameter"));
            }
            return Ok(self.out_row());
        };
        if !self.c.out.is_empty() {
            return Err(PgError::syntax(
                "RETURN NEXT cannot have a parameter in function with OUT parameters",
            ));
        }
        if let (Fast::Param, [p]) = (&e.fast, e.params.as_slice()) {
            if p.field.is_none() {
                if let Var::Record(r) = &self.vars[p.slot] {
                    let Some(row) = r.clone() else {
                        return Err(PgError::new(
                            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                            format!(
                                "record \"{}\" is not assigned yet",
                                self.c.slots[p.slot].name
                            ),
                        ));
                    };
                    if row.vals.len() != types.len() {
                        return Err(PgError::new(
                            sqlstate::DATATYPE_MISMATCH,
                            "wrong record type supplied in RETURN NEXT",
                        ));
                    }
                    return row
                        .vals
                        .iter()
                        .zip(&types)
                        .map(|(v, t)| coerce(v.clone(), *t))
                        .collect();
                }
            }
        }
        let (v, _) = self.eval(ec, e)?;
        Ok(vec![coerce(v, self.c.ret)?])
    }

    /// Puts a row (None: no row, so NULLs) into INTO / FOR targets.
    fn assign_row(
        &mut self,
        targets: &Targets,
        cols: &[FieldDescription],
        row: Option<&[Value]>,
    ) -> PgResult<()> {
        match targets {
            Targets::Record(s) if self.rowtype(*s).is_some() => {
                let vals = row.map(|r| r.to_vec());
                self.assign_rowtype(*s, vals)?;
            }
            Targets::Record(s) => {
                let r = Row {
                    names: cols.iter().map(|c| c.name.clone()).collect(),
                    types: cols.iter().map(|c| c.ty).collect(),
                    vals: match row {
                        Some(r) => r.to_vec(),
                        None => vec![Value::Null; cols.len()],
                    },
                };
                self.vars[*s] = Var::Record(Some(Arc::new(r)));
            }
            Targets::Scalars(slots) => {
                for (i, s) in slots.iter().enumerate() {
                    let v = row.and_then(|r| r.get(i)).cloned().unwrap_or(Value::Null);
                    self.assign(*s, None, v)?;
                }
            }
        }
        Ok(())
    }

    fn init_decl(&mut self, ec: &mut Ectx<'_>, slot: usize) -> PgResult<()> {
        let def = &self.c.slots[slot];
        match &def.ty {
            SlotType::Record => self.vars[slot] = self.empty_record(ec, slot)?,
            SlotType::Scalar(t) => {
                let t = *t;
                match def.default.clone() {
                    Some(e) => {
                        let (v, _) = self.eval(ec, &e)?;
                        self.assign(slot, None, v)?;
                    }
                    None => self.vars[slot] = Var::Scalar(Value::Null, t),
                }
            }
            SlotType::Dynamic => self.vars[slot] = Var::Scalar(Value::Null, SqlType::Unknown),
        }
        Ok(())
    }

    fn block(&mut self, ec: &mut Ectx<'_>, b: &Block) -> PgResult<Flow> {
        for &s in &b.decls {
            self.init_decl(ec, s)?;
        }
        let flow = if b.handlers.is_empty() {
            self.stmts(ec, &b.body)?
        } else {
            let depth = ec.xact.begin_internal()?;
            match self.stmts(ec, &b.body) {
                Ok(f) => {
                    ec.xact.release_internal(depth);
                    f
                }
                Err(e) => {
                    ec.xact.rollback_internal(depth);
                    let Some(h) = b
                        .handlers
                        .iter()
                        .find(|h| h.conds.iter().any(|c| catches(c, e.code)))
                    else {
                        return Err(e);
                    };
                    self.vars[h.sqlstate] = Var::Scalar(Value::text(e.code), SqlType::Text);
                    self.vars[h.sqlerrm] = Var::Scalar(Value::text(&e.message), SqlType::Text);
                    self.caught.push(e);
                    let r = self.stmts(ec, &h.body);
                    self.caught.pop();
                    r?
                }
            }
        };
        Ok(match flow {
            Flow::Exit(Some(l)) if b.label.as_deref() == Some(l.as_str()) => Flow::Normal,
            f => f,
        })
    }

    fn stmts(&mut self, ec: &mut Ectx<'_>, list: &[Stmt]) -> PgResult<Flow> {
        for s in list {
            let saved = self.err_stmt.replace((s.line, s.kind.name()));
            let f = self.stmt(ec, s)?;
            self.err_stmt = saved;
            if !matches!(f, Flow::Normal) {
                return Ok(f);
            }
        }
        Ok(Flow::Normal)
    }

    /// One iteration's end: Some(flow) leaves the loop with it.
    /// The portal name a cursor variable holds: 22004 while it is NULL.
    fn portal_name(&self, cursor: usize) -> PgResult<String> {
        let slot = self.c.cursors[cursor].slot;
        match &self.vars[slot] {
            Var::Scalar(v, _) if !v.is_null() => Ok(v.to_text_string()),
            _ => Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                format!("cursor variable \"{}\" is null", self.c.slots[slot].name),
            )),
        }
    }

    /// OPEN: runs the cursor's query (a bound cursor's with its arguments
    /// assigned to its parameters) and keeps the result under the
    /// variable's portal name, a new `<unnamed portal N>` for a NULL one.
    /// Returns the portal's name.
    fn open_cursor(
        &mut self,
        ec: &mut Ectx<'_>,
        cursor: usize,
        args: &[PExpr],
        query: Option<&Query>,
        no_scroll: bool,
    ) -> PgResult<String> {
        let def = &self.c.cursors[cursor];
        let slot = def.slot;
        let portals = self.portals(ec);
        let name = match &self.vars[slot] {
            Var::Scalar(v, _) if !v.is_null() => v.to_text_string(),
            _ => {
                let n = portals.lock().unnamed_name();
                self.assign(slot, None, Value::Text(Arc::from(n.as_str())))?;
                n
            }
        };
        if portals.lock().iter().any(|c| c.name == name) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_CURSOR,
                format!("cursor \"{name}\" already in use"),
            ));
        }
        let c = self.c;
        let def = &c.cursors[cursor];
        for (a, s) in args.iter().zip(&def.args) {
            let (v, _) = self.eval(ec, a)?;
            self.assign(*s, None, v)?;
        }
        let Some(q) = query.or(def.query.as_ref()) else {
            return Err(PgError::internal("OPEN without a query"));
        };
        let r = self.run_query(ec, q)?;
        let statement = match q {
            Query::Static(e) => e.text.clone(),
            Query::Dynamic { query, .. } => query.text.clone(),
        };
        let declared = Declared {
            name: name.clone(),
            statement,
            holdable: false,
            binary: false,
            scroll: Some(!no_scroll),
            creation_time: ec.stmt_ts,
            depth: ec.xact.nesting_depth(),
            reads: Vec::new(),
        };
        portals
            .lock()
            .push(Cursor::materialized(declared, r.columns, r.rows));
        Ok(name)
    }

    /// The cursors OPEN adds to: the session's, so a cursor outlives the
    /// call that opened it (until CLOSE or the transaction's end) and a
    /// `refcursor` returned to the caller can be fetched with SQL FETCH.
    fn portals(&self, ec: &Ectx<'_>) -> Portals {
        ec.portals.clone().unwrap_or_else(|| self.local.clone())
    }

    /// FETCH / MOVE on the open cursor `name` (PostgreSQL's portal
    /// fetch): the rows it processed and, for FETCH, the last row.
    fn fetch(
        &self,
        ec: &mut Ectx<'_>,
        name: &str,
        dir: FetchDirection,
        count: i64,
        fetch: bool,
    ) -> PgResult<(u64, Option<Vec<Value>>, Vec<FieldDescription>)> {
        let portals = self.portals(ec);
        let mut row = None;
        let mut keep = |r: &[Value]| {
            row = Some(r.to_vec());
            Ok(())
        };
        let dest = fetch.then_some(&mut keep as _);
        let (n, columns) = crate::portalcmds::fetch_named(ec, &portals, name, dir, count, dest)?;
        Ok((n, row, columns))
    }

    /// A FETCH / MOVE count.
    fn eval_count(&mut self, ec: &mut Ectx<'_>, e: &PExpr) -> PgResult<i64> {
        let (v, _) = self.eval(ec, e)?;
        match coerce(v, SqlType::Int8)? {
            Value::Int8(n) => Ok(n),
            _ => Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                "cursor position must not be null",
            )),
        }
    }

    fn after_iteration(label: &Option<String>, f: Flow) -> Option<Flow> {
        match f {
            Flow::Normal => None,
            Flow::Continue(None) => None,
            Flow::Continue(Some(l)) if label.as_deref() == Some(l.as_str()) => None,
            Flow::Exit(None) => Some(Flow::Normal),
            Flow::Exit(Some(l)) if label.as_deref() == Some(l.as_str()) => Some(Flow::Normal),
            f => Some(f),
        }
    }

    /// Runs an embedded statement with the function's snapshot rule.
    fn run_sql(
        &mut self,
        ec: &mut Ectx<'_>,
        e: &PExpr,
        limit: Option<usize>,
    ) -> PgResult<SpiResult> {
        let (vals, types) = self.params(e)?;
        spi::execute(ec, &e.sql, &vals, &types, self.c.mode, limit)
            .map_err(|err| err.with_context(format!("SQL statement \"{}\"", e.text)))
    }

    /// CALL: runs the procedure, then stores each OUT / INOUT result in
    /// the variable given for that parameter (by name, else by
    /// position); an output parameter given anything but a variable is
    /// refused before the call, as PostgreSQL does.
    fn call(&mut self, ec: &mut Ectx<'_>, e: &PExpr, args: &[CallArg]) -> PgResult<()> {
        let (vals, types) = self.params(e)?;
        let oid = spi::call_target(ec, &e.sql, &types)?;
        let mut targets = Vec::new();
        if let Some(oid) = oid {
            let def = crate::fmgr::lookup(ec, oid)?;
            let positional = args.iter().take_while(|a| a.name.is_none()).count();
            let params = def.spec.all_params();
            let called = params.iter().filter(|p| p.0 != b't');
            for (pos, (mode, name, _, _)) in called.enumerate() {
                if !matches!(mode, b'o' | b'b') {
                    continue;
                }
                let given = args
                    .iter()
                    .find(|a| a.name.as_deref() == Some(*name))
                    .or_else(|| args.get(pos).filter(|_| pos < positional));
                match given {
                    Some(CallArg {
                        target: Some(slot), ..
                    }) => targets.push(Some(*slot)),
                    Some(_) => {
                        return Err(PgError::syntax(format!(
                            "procedure parameter \"{name}\" is an output parameter but corresponding argument is not writable"
                        )))
                    }
                    None => targets.push(None),
                }
            }
        }
        let r = spi::call(ec, &e.sql, &vals, &types, self.c.mode)?;
        if let Some(row) = r.rows.into_iter().next() {
            for (slot, v) in targets.into_iter().zip(row) {
                if let Some(slot) = slot {
                    self.assign(slot, None, v)?;
                }
            }
        }
        Ok(())
    }

    fn run_query(&mut self, ec: &mut Ectx<'_>, q: &Query) -> PgResult<SpiResult> {
        match q {
            Query::Static(e) => self.run_sql(ec, e, None),
            Query::Dynamic { query, using } => self.run_dynamic(ec, query, using, None),
        }
    }

    fn run_dynamic(
        &mut self,
        ec: &mut Ectx<'_>,
        query: &PExpr,
        using: &[PExpr],
        limit: Option<usize>,
    ) -> PgResult<SpiResult> {
        let Some(text) = self.eval_text(ec, query)? else {
            return Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                "query string argument of EXECUTE is null",
            ));
        };
        let mut vals = Vec::with_capacity(using.len());
        let mut types = Vec::with_capacity(using.len());
        for u in using {
            let (v, t) = self.eval(ec, u)?;
            vals.push(v);
            types.push(t);
        }
        // A CALL run by EXECUTE is atomic, as in PostgreSQL.
        let nonatomic = std::mem::replace(&mut ec.nonatomic, false);
        let r = spi::execute(ec, &text, &vals, &types, self.c.mode, limit);
        ec.nonatomic = nonatomic;
        r.map_err(|err| err.with_context(format!("SQL statement \"{text}\"")))
    }

    fn into(&mut self, into: &IntoClause, r: &SpiResult) -> PgResult<()> {
        if into.strict {
            if r.rows.is_empty() {
                return Err(PgError::new(
                    sqlstate::NO_DATA_FOUND,
                    "query returned no rows",
                ));
            }
            if r.rows.len() > 1 {
                return Err(PgError::new(
                    sqlstate::TOO_MANY_ROWS,
                    "query returned more than one row",
                )
                .with_hint("Make sure the query returns a single row, or use LIMIT 1."));
            }
        }
        let row = r.rows.first().map(Vec::as_slice);
        self.assign_row(&into.targets, &r.columns, row)
    }

    fn raise(&mut self, ec: &mut Ectx<'_>, r: &Raise) -> PgResult<Flow> {
        if r.reraise {
            return match self.caught.last() {
                Some(e) => Err(e.clone()),
                None => Err(PgError::new(
                    "0Z002",
                    "RAISE without parameters cannot be used outside an exception handler",
                )),
            };
        }
        if r.level == Level::Debug {
            return Ok(Flow::Normal);
        }
        let mut message = match &r.fmt {
            Some(fmt) => {
                let mut vals = Vec::with_capacity(r.args.len());
                for a in &r.args {
                    let (v, _) = self.eval(ec, a)?;
                    vals.push(v);
                }
                let mut out = String::with_capacity(fmt.len());
                let mut it = vals.iter();
                let mut chars = fmt.chars().peekable();
                while let Some(c) = chars.next() {
                    if c == '%' {
                        if chars.peek() == Some(&'%') {
                            chars.next();
                            out.push('%');
                        } else if let Some(v) = it.next() {
                            out.push_str(&raise_text(v));
                        }
                    } else {
                        out.push(c);
                    }
                }
                Some(out)
            }
            None => None,
        };
        let mut code = r.code.clone();
        let mut detail = None;
        let mut hint = None;
        for (opt, e) in &r.options {
            let Some(v) = self.eval_text(ec, e)? else {
                return Err(PgError::new(
                    sqlstate::NULL_VALUE_NOT_ALLOWED,
                    "RAISE statement option cannot be null",
                ));
            };
            match opt.as_str() {
                "message" => {
                    if message.is_some() {
                        return Err(PgError::syntax("RAISE option already specified: MESSAGE"));
                    }
                    message = Some(v);
                }
                "detail" => detail = Some(v),
                "hint" => hint = Some(v),
                "errcode" => {
                    let c = if valid_sqlstate(&v) {
                        v
                    } else {
                        match condition_code(&v) {
                            Some(c) => c.to_string(),
                            None => {
                                return Err(PgError::new(
                                    sqlstate::UNDEFINED_OBJECT,
                                    format!("unrecognized exception condition \"{v}\""),
                                ))
                            }
                        }
                    };
                    code = Some(c);
                }
                _ => {}
            }
        }
        let message = message.or_else(|| r.condname.clone()).unwrap_or_else(|| {
            code.clone()
                .unwrap_or_else(|| sqlstate::RAISE_EXCEPTION.to_string())
        });
        let mut e = match r.level {
            Level::Exception => PgError::new(
                static_code(code.as_deref().unwrap_or(sqlstate::RAISE_EXCEPTION)),
                message,
            ),
            Level::Warning => {
                PgError::warning(static_code(code.as_deref().unwrap_or("01000")), message)
            }
            _ => PgError::notice(static_code(code.as_deref().unwrap_or("00000")), message),
        };
        e.detail = detail;
        e.hint = hint;
        if r.level == Level::Exception {
            return Err(e);
        }
        ec.notices.push(e);
        Ok(Flow::Normal)
    }

    fn stmt(&mut self, ec: &mut Ectx<'_>, s: &Stmt) -> PgResult<Flow> {
        match &s.kind {
            StmtKind::Block(b) => self.block(ec, b),
            StmtKind::Null => Ok(Flow::Normal),
            StmtKind::Assign {
                slot,
                field: None,
                expr,
            } if self.c.slots[*slot].ty == SlotType::Record => {
                self.assign_record(ec, *slot, expr)?;
                Ok(Flow::Normal)
            }
            StmtKind::Assign { slot, field, expr } => {
                let (v, _) = self.eval(ec, expr)?;
                self.assign(*slot, field.as_deref(), v)?;
                Ok(Flow::Normal)
            }
            StmtKind::If { arms, otherwise } => {
                for (c, body) in arms {
                    if self.eval_bool(ec, c)? {
                        return self.stmts(ec, body);
                    }
                }
                self.stmts(ec, otherwise)
            }
            StmtKind::Case {
                subject,
                arms,
                otherwise,
            } => {
                if let Some((slot, e)) = subject {
                    let (v, t) = self.eval(ec, e)?;
                    self.vars[*slot] = Var::Scalar(v, t);
                }
                for (c, body) in arms {
                    if self.eval_bool(ec, c)? {
                        return self.stmts(ec, body);
                    }
                }
                match otherwise {
                    Some(body) => self.stmts(ec, body),
                    None => Err(PgError::new(sqlstate::CASE_NOT_FOUND, "case not found")
                        .with_hint("CASE statement is missing ELSE part.")),
                }
            }
            StmtKind::Loop { label, body } => loop {
                ec.check_interrupts()?;
                let f = self.stmts(ec, body)?;
                if let Some(f) = Self::after_iteration(label, f) {
                    return Ok(f);
                }
            },
            StmtKind::While { label, cond, body } => {
                loop {
                    ec.check_interrupts()?;
                    if !self.eval_bool(ec, cond)? {
                        break;
                    }
                    let f = self.stmts(ec, body)?;
                    if let Some(f) = Self::after_iteration(label, f) {
                        return Ok(f);
                    }
                }
                Ok(Flow::Normal)
            }
            StmtKind::ForInt {
                label,
                var,
                reverse,
                from,
                to,
                step,
                body,
            } => {
                let lo = self.eval_int(ec, from, "lower bound")?;
                let hi = self.eval_int(ec, to, "upper bound")?;
                let step = match step {
                    Some(e) => {
                        let s = self.eval_int(ec, e, "BY value")?;
                        if s <= 0 {
                            return Err(PgError::new(
                                sqlstate::INVALID_PARAMETER_VALUE,
                                "BY value of FOR loop must be greater than zero",
                            ));
                        }
                        s
                    }
                    None => 1,
                };
                let mut i = i64::from(lo);
                let (hi, step) = (i64::from(hi), i64::from(step));
                let mut found = false;
                let mut out = Flow::Normal;
                loop {
                    if (*reverse && i < hi) || (!*reverse && i > hi) {
                        break;
                    }
                    ec.check_interrupts()?;
                    found = true;
                    self.vars[*var] = Var::Scalar(Value::Int4(i as i32), SqlType::Int4);
                    let f = self.stmts(ec, body)?;
                    if let Some(f) = Self::after_iteration(label, f) {
                        out = f;
                        break;
                    }
                    i = if *reverse { i - step } else { i + step };
                    if i < i64::from(i32::MIN) || i > i64::from(i32::MAX) {
                        break;
                    }
                }
                self.set_found(found);
                Ok(out)
            }
            StmtKind::ForQuery {
                label,
                targets,
                query,
                body,
            } => {
                let r = self.run_query(ec, query)?;
                let mut out = Flow::Normal;
                let found = !r.rows.is_empty();
                for row in &r.rows {
                    ec.check_interrupts()?;
                    self.assign_row(targets, &r.columns, Some(row))?;
                    let f = self.stmts(ec, body)?;
                    if let Some(f) = Self::after_iteration(label, f) {
                        out = f;
                        break;
                    }
                }
                self.set_found(found);
                Ok(out)
            }
            StmtKind::ForEach {
                label,
                var,
                slice,
                array,
                body,
            } => self.foreach(ec, label, *var, *slice, array, body),
            StmtKind::Open {
                cursor,
                args,
                query,
                no_scroll,
            } => {
                self.open_cursor(ec, *cursor, args, query.as_ref(), *no_scroll)?;
                Ok(Flow::Normal)
            }
            StmtKind::Fetch { cursor, dir, into } => {
                let name = self.portal_name(*cursor)?;
                let step = match dir {
                    Direction::Absolute(e) | Direction::Relative(e) => self.eval_count(ec, e)?,
                    Direction::Forward(Some(e)) | Direction::Backward(Some(e)) => {
                        self.eval_count(ec, e)?
                    }
                    _ => 0,
                };
                let (fd, count) = match dir {
                    Direction::Next => (FetchDirection::Forward, 1),
                    Direction::Prior => (FetchDirection::Backward, 1),
                    Direction::First => (FetchDirection::Absolute, 1),
                    Direction::Last => (FetchDirection::Absolute, -1),
                    Direction::Absolute(_) => (FetchDirection::Absolute, step),
                    Direction::Relative(_) => (FetchDirection::Relative, step),
                    Direction::Forward(Some(_)) => (FetchDirection::Forward, step),
                    Direction::Forward(None) => (FetchDirection::Forward, FETCH_ALL),
                    Direction::Backward(Some(_)) => (FetchDirection::Backward, step),
                    Direction::Backward(None) => (FetchDirection::Backward, FETCH_ALL),
                };
                let (processed, row, columns) = self.fetch(ec, &name, fd, count, into.is_some())?;
                if let Some(targets) = into {
                    self.assign_row(targets, &columns, row.as_deref())?;
                }
                self.row_count = processed as u64;
                self.set_found(processed > 0);
                Ok(Flow::Normal)
            }
            StmtKind::Close(cursor) => {
                let name = self.portal_name(*cursor)?;
                if !self.portals(ec).lock().close(&name) {
                    return Err(crate::portalcmds::no_such_cursor(&name));
                }
                Ok(Flow::Normal)
            }
            StmtKind::ForCursor {
                label,
                rec,
                cursor,
                args,
                body,
            } => {
                let no_scroll = self.c.cursors[*cursor].no_scroll;
                let name = self.open_cursor(ec, *cursor, args, None, no_scroll)?;
                let mut out = Flow::Normal;
                let mut found = false;
                let targets = Targets::Record(*rec);
                loop {
                    ec.check_interrupts()?;
                    let (n, row, columns) =
                        match self.fetch(ec, &name, FetchDirection::Forward, 1, true) {
                            Ok(r) => r,
                            // The body closed it.
                            Err(e) if e.code == sqlstate::INVALID_CURSOR_NAME => break,
                            Err(e) => return Err(e),
                        };
                    if n == 0 {
                        break;
                    }
                    found = true;
                    self.assign_row(&targets, &columns, row.as_deref())?;
                    let f = self.stmts(ec, body)?;
                    if let Some(f) = Self::after_iteration(label, f) {
                        out = f;
                        break;
                    }
                }
                // The loop closes its cursor.
                self.portals(ec).lock().close(&name);
                self.set_found(found);
                Ok(out)
            }
            StmtKind::Exit { cont, label, cond } => {
                if let Some(c) = cond {
                    if !self.eval_bool(ec, c)? {
                        return Ok(Flow::Normal);
                    }
                }
                Ok(if *cont {
                    Flow::Continue(label.clone())
                } else {
                    Flow::Exit(label.clone())
                })
            }
            StmtKind::Return(e) => {
                if self.c.ret == SqlType::Trigger {
                    return self.trigger_return(ec, e.as_ref());
                }
                if e.is_some() && !self.c.out.is_empty() && !self.c.retset {
                    return Err(PgError::syntax(
                        "RETURN cannot have a parameter in function with OUT parameters",
                    ));
                }
                let v = match e {
                    Some(e) if self.c.ret != SqlType::Void && !self.c.retset => {
                        let (v, _) = self.eval(ec, e)?;
                        coerce(v, self.c.ret)?
                    }
                    Some(_) if self.c.ret == SqlType::Void && !self.c.retset => {
                        return Err(PgError::syntax(
                            "RETURN cannot have a parameter in function returning void",
                        ))
                    }
                    _ => Value::Null,
                };
                Ok(Flow::Return(v))
            }
            StmtKind::ReturnNext(e) => {
                if !self.c.retset {
                    return Err(PgError::syntax(
                        "cannot use RETURN NEXT in a non-SETOF function",
                    ));
                }
                let row = self.return_next_row(ec, e.as_ref())?;
                self.set_rows.push(row);
                Ok(Flow::Normal)
            }
            StmtKind::ReturnQuery(q) => {
                if !self.c.retset {
                    return Err(PgError::syntax(
                        "cannot use RETURN QUERY in a non-SETOF function",
                    ));
                }
                let r = self.run_query(ec, q)?;
                self.row_count = r.processed;
                self.set_found(r.processed > 0);
                let types = self.result_types();
                if r.columns.len() != types.len() {
                    let e = PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        "structure of query does not match function result type",
                    )
                    .with_detail(format!(
                        "Number of returned columns ({}) does not match expected column count ({}).",
                        r.columns.len(),
                        types.len()
                    ));
                    // (PostgreSQL finds it running the query.)
                    return Err(match q {
                        Query::Static(e_) => {
                            e.with_context(format!("SQL statement \"{}\"", e_.sql))
                        }
                        Query::Dynamic { .. } => e,
                    });
                }
                for row in r.rows {
                    ec.check_interrupts()?;
                    let row = row
                        .into_iter()
                        .zip(&types)
                        .map(|(v, t)| coerce(v, *t))
                        .collect::<PgResult<Vec<Value>>>()?;
                    self.set_rows.push(row);
                }
                Ok(Flow::Normal)
            }
            StmtKind::Raise(r) => self.raise(ec, r),
            StmtKind::Perform(e) => {
                let r = self.run_sql(ec, e, None)?;
                self.row_count = r.processed;
                self.set_found(r.processed > 0);
                Ok(Flow::Normal)
            }
            StmtKind::Sql { sql, into } => {
                let r = self.run_sql(ec, sql, into.as_ref().map(|_| 2))?;
                self.row_count = r.processed;
                match into {
                    Some(i) => {
                        self.set_found(!r.rows.is_empty());
                        self.into(i, &r)?;
                    }
                    None => {
                        if !r.dml && !r.columns.is_empty() {
                            return Err(PgError::syntax("query has no destination for result data")
                                .with_hint("If you want to discard the results of a SELECT, use PERFORM instead."));
                        }
                        self.set_found(r.processed > 0);
                    }
                }
                Ok(Flow::Normal)
            }
            StmtKind::Call { sql, args } => {
                self.call(ec, sql, args)?;
                Ok(Flow::Normal)
            }
            StmtKind::EndTransaction { commit, chain } => {
                spi::end_transaction(ec, *commit, *chain)?;
                Ok(Flow::Normal)
            }
            StmtKind::Execute { query, into, using } => {
                let r = self.run_dynamic(ec, query, using, into.as_ref().map(|_| 2))?;
                self.row_count = r.processed;
                if let Some(i) = into {
                    self.into(i, &r)?;
                }
                Ok(Flow::Normal)
            }
            StmtKind::GetDiag { stacked, items } => {
                for (slot, item) in items {
                    let v = if *stacked {
                        let Some(e) = self.caught.last() else {
                            return Err(PgError::new(
                                "0Z002",
                                "GET STACKED DIAGNOSTICS cannot be used outside an exception handler",
                            ));
                        };
                        Value::text(match item.as_str() {
                            "returned_sqlstate" => e.code,
                            "message_text" => e.message.as_str(),
                            "pg_exception_detail" => e.detail.as_deref().unwrap_or(""),
                            "pg_exception_hint" => e.hint.as_deref().unwrap_or(""),
                            "pg_exception_context" => e.context().unwrap_or(""),
                            _ => "",
                        })
                    } else if item == "row_count" {
                        Value::Int8(self.row_count as i64)
                    } else {
                        Value::text(&format!(
                            "PL/pgSQL function {} line {} at GET DIAGNOSTICS",
                            self.c.name, s.line
                        ))
                    };
                    self.assign(*slot, None, v)?;
                }
                Ok(Flow::Normal)
            }
            StmtKind::Assert { cond, msg } => {
                if self.eval_bool(ec, cond)? {
                    return Ok(Flow::Normal);
                }
                let m = match msg {
                    Some(m) => self
                        .eval_text(ec, m)?
                        .unwrap_or_else(|| "assertion failed".to_string()),
                    None => "assertion failed".to_string(),
                };
                Err(PgError::new(sqlstate::ASSERT_FAILURE, m))
            }
        }
    }
}

/// Runs trigger function `c` (`crate::trigger`): `args` are the values of
/// [`super::gram::TRIGGER_VARS`] (NEW and OLD's places ignored), NEW and
/// OLD rows have the table's column `names` and `types` (`row_level`:
/// a missing one is a NULL row, else unassigned). Returns the row
/// the function returned (None: NULL).
#[allow(clippy::too_many_arguments)]
pub fn run_trigger(
    ec: &mut Ectx<'_>,
    c: &Compiled,
    args: &[Value],
    names: &[String],
    types: &[SqlType],
    new: Option<Vec<Value>>,
    old: Option<Vec<Value>>,
    row_level: bool,
) -> PgResult<Option<Vec<Value>>> {
    // NEW in a DELETE trigger, OLD in an INSERT one: a NULL row of the
    // table's shape (its fields read as NULL; returning it returns NULL).
    // A statement-level trigger has neither (not assigned).
    let absent = [new.is_none(), old.is_none()];
    let rec = |vals: Option<Vec<Value>>| {
        if !row_level {
            return Var::Record(None);
        }
        Var::Record(Some(Arc::new(Row {
            names: names.to_vec(),
            types: types.to_vec(),
            vals: vals.unwrap_or_else(|| vec![Value::Null; names.len()]),
        })))
    };
    let mut x = Exec::start(c, args);
    x.vars[0] = rec(new);
    x.vars[1] = rec(old);
    x.absent = absent.map(|a| a && row_level);
    let flow = x.block(ec, &c.body).map_err(|e| x.with_context(e))?;
    match flow {
        // trigger_return's mark: the record in that slot.
        Flow::Return(Value::Int4(slot)) => match x.vars.get(slot as usize) {
            _ if absent.get(slot as usize) == Some(&true) => Ok(None),
            Some(Var::Record(Some(r))) => Ok(Some(r.vals.clone())),
            _ => Ok(None),
        },
        Flow::Return(_) => Ok(None),
        Flow::Normal => Err(PgError::new(
            sqlstate::NO_RETURN_STATEMENT,
            "control reached end of trigger procedure without RETURN",
        )
        .with_context(format!("PL/pgSQL function {}", c.name))),
        Flow::Exit(_) => Err(x.with_context(PgError::syntax(
            "EXIT cannot be used outside a loop, unless it has a label",
        ))),
        Flow::Continue(_) => {
            Err(x.with_context(PgError::syntax("CONTINUE cannot be used outside a loop")))
        }
    }
}

impl Exec<'_> {
    /// RETURN in a trigger function: NULL, or a record variable (NEW,
    /// OLD or a declared record) — returned as the mark
    /// `Value::Int4(slot)` that [`run_trigger`] reads the row from.
    fn trigger_return(&mut self, ec: &mut Ectx<'_>, e: Option<&PExpr>) -> PgResult<Flow> {
        let Some(e) = e else {
            return Ok(Flow::Return(Value::Null));
        };
        if let (Fast::Param, [p]) = (&e.fast, e.params.as_slice()) {
            if p.field.is_none() && self.c.slots[p.slot].ty == SlotType::Record {
                return Ok(Flow::Return(Value::Int4(
                    i32::try_from(p.slot).unwrap_or(i32::MAX),
                )));
            }
        }
        let (v, _) = self.eval(ec, e)?;
        if v.is_null() {
            return Ok(Flow::Return(Value::Null));
        }
        Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            "returned row structure does not match the structure of the triggering table",
        ))
    }
}

impl Exec<'_> {
    /// The table of a `%ROWTYPE` variable.
    fn rowtype(&self, slot: usize) -> Option<&str> {
        self.c
            .rowtypes
            .iter()
            .find(|(s, _)| *s == slot)
            .map(|(_, t)| t.as_str())
    }

    /// A record variable at its block's start: unassigned, or for
    /// `table%ROWTYPE` a row of the table's columns, all NULL.
    fn empty_record(&mut self, ec: &mut Ectx<'_>, slot: usize) -> PgResult<Var> {
        let Some(table) = self.rowtype(slot) else {
            return Ok(Var::Record(None));
        };
        let r = spi::execute(
            ec,
            &format!("SELECT * FROM {table} LIMIT 0"),
            &[],
            &[],
            SnapshotMode::Caller,
            Some(1),
        )?;
        Ok(Var::Record(Some(Arc::new(Row {
            names: r.columns.iter().map(|c| c.name.clone()).collect(),
            types: r.columns.iter().map(|c| c.ty).collect(),
            vals: vec![Value::Null; r.columns.len()],
        }))))
    }

    /// Stores `vals` (None: NULLs) into `%ROWTYPE` variable `slot` by
    /// position, converted to its fields' types; missing trailing values
    /// are NULL (PostgreSQL's `exec_move_row`).
    fn assign_rowtype(&mut self, slot: usize, vals: Option<Vec<Value>>) -> PgResult<()> {
        let Var::Record(Some(row)) = &self.vars[slot] else {
            return Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("record \"{}\" is not assigned yet", self.slot_name(slot)),
            ));
        };
        let mut it = vals.unwrap_or_default().into_iter();
        let vals = row
            .types
            .iter()
            .map(|t| coerce(it.next().unwrap_or(Value::Null), *t))
            .collect::<PgResult<Vec<Value>>>()?;
        let new = Row {
            names: row.names.clone(),
            types: row.types.clone(),
            vals,
        };
        self.vars[slot] = Var::Record(Some(Arc::new(new)));
        Ok(())
    }

    /// `rec := expr` for a whole record: another record variable's row
    /// (by position into a `%ROWTYPE` variable), or NULL.
    fn assign_record(&mut self, ec: &mut Ectx<'_>, slot: usize, e: &PExpr) -> PgResult<()> {
        if let (Fast::Param, [p]) = (&e.fast, e.params.as_slice()) {
            if p.field.is_none() && self.c.slots[p.slot].ty == SlotType::Record {
                // An unassigned record copies as NULL (PostgreSQL assigns
                // it without complaint).
                let src = match &self.vars[p.slot] {
                    Var::Record(r) => r.clone(),
                    Var::Scalar(..) => None,
                };
                if self.rowtype(slot).is_some() {
                    return self.assign_rowtype(slot, src.map(|r| r.vals.clone()));
                }
                self.vars[slot] = Var::Record(src);
                return Ok(());
            }
        }
        let (v, _) = self.eval(ec, e)?;
        if !v.is_null() && self.rowtype(slot).is_some() {
            // A %ROWTYPE variable reads a scalar as a record literal.
            let text = v.to_text_string();
            if !text.starts_with('(') {
                return Err(PgError::new(
                    sqlstate::INVALID_TEXT_REPRESENTATION,
                    format!("malformed record literal: \"{text}\""),
                )
                .with_detail("Missing left parenthesis."));
            }
        }
        if !v.is_null() {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                "cannot assign non-composite value to a record variable",
            ));
        }
        if self.rowtype(slot).is_some() {
            return self.assign_rowtype(slot, None);
        }
        self.vars[slot] = Var::Record(None);
        Ok(())
    }

    /// FOREACH var [SLICE n] IN ARRAY expr (`exec_stmt_foreach_a`): each
    /// element, or with SLICE n each sub-array of the last n dimensions (in
    /// order, with their lower bounds).
    fn foreach(
        &mut self,
        ec: &mut Ectx<'_>,
        label: &Option<String>,
        var: usize,
        slice: u32,
        array: &PExpr,
        body: &[Stmt],
    ) -> PgResult<Flow> {
        let (v, t) = self.eval(ec, array)?;
        if v.is_null() {
            return Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                "FOREACH expression must not be null",
            ));
        }
        let Value::Array(arr) = v else {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "FOREACH expression must yield an array, not type {}",
                    t.pg_name()
                ),
            ));
        };
        let ndim = arr.ndims() as u32;
        if slice > ndim {
            return Err(PgError::new(
                sqlstate::ARRAY_SUBSCRIPT_ERROR,
                format!("slice dimension ({slice}) is out of the valid range 0..{ndim}"),
            ));
        }
        let var_is_array = matches!(self.c.slots[var].ty, SlotType::Scalar(SqlType::Array(_)));
        if slice > 0 && !var_is_array {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                "FOREACH ... SLICE loop variable must be of an array type",
            ));
        }
        if slice == 0 && var_is_array {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                "FOREACH loop variable must not be of an array type",
            ));
        }
        let items: Vec<Value> = if slice == 0 {
            arr.items.clone()
        } else {
            let dims = arr.dims();
            let kept = &dims[dims.len() - slice as usize..];
            let width: usize = kept.iter().map(|d| d.len as usize).product();
            arr.items
                .chunks(width.max(1))
                .map(|part| {
                    Value::Array(std::sync::Arc::new(pgtypes::array::ArrayValue::with_dims(
                        arr.elem,
                        kept,
                        part.to_vec(),
                    )))
                })
                .collect()
        };
        let mut found = false;
        let mut out = Flow::Normal;
        for item in items {
            ec.check_interrupts()?;
            found = true;
            self.assign(var, None, item)?;
            let f = self.stmts(ec, body)?;
            if let Some(f) = Self::after_iteration(label, f) {
                out = f;
                break;
            }
        }
        self.set_found(found);
        Ok(out)
    }
}
