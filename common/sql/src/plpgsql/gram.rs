//! The PL/pgSQL parser (PostgreSQL's `pl_gram.y` and `pl_comp.c`): a body's
//! text to a [`Compiled`] tree with every variable resolved to a slot.
//!
//! Tokens come from the SQL pre-dispatch lexer (`parser::lex_spans`), with
//! byte ranges, so embedded SQL is cut out of the body as written and its
//! variable references are rewritten to `$n` ([`PExpr`]). A range
//! `a..b` lexes as one number-like token, so FOR's integer range is
//! split on the text. Line numbers count from the body's first line, as
//! PostgreSQL's CONTEXT lines do.

use engine::pg_proc::FunctionSpec;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;

use crate::parser::{lex_spans, Tok};
use crate::spi::SnapshotMode;

/// A slot's kind.
#[derive(Clone, Debug, PartialEq)]
pub enum SlotType {
    /// A scalar of this type.
    Scalar(SqlType),
    /// `record`: takes the shape of the row assigned to it.
    Record,
    /// A hidden scalar whose type is whatever was stored (CASE's subject).
    Dynamic,
}

/// A variable.
#[derive(Clone, Debug)]
pub struct SlotDef {
    /// Its name (empty for an unnamed parameter).
    pub name: String,
    /// Its kind.
    pub ty: SlotType,
    /// CONSTANT.
    pub constant: bool,
    /// NOT NULL.
    pub not_null: bool,
    /// DEFAULT / `:=` initializer.
    pub default: Option<PExpr>,
}

/// A parameter of an embedded statement: a slot, or one field of a
/// record slot.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamRef {
    /// The slot.
    pub slot: usize,
    /// `rec.field`.
    pub field: Option<String>,
}

/// How an expression can be evaluated without SQL.
#[derive(Clone, Debug)]
pub enum Fast {
    /// It cannot.
    No,
    /// It is its only parameter.
    Param,
    /// It is this literal.
    Const(Value),
}

/// An expression or embedded statement as SQL text over parameters.
#[derive(Clone, Debug)]
pub struct PExpr {
    /// The SQL to run (`SELECT …` for an expression), variables as `$n`.
    pub sql: String,
    /// `$n` reads `params[n - 1]`.
    pub params: Vec<ParamRef>,
    /// The text as written (messages).
    pub text: String,
    /// No sub-SELECT: evaluated under the current snapshot.
    pub simple: bool,
    /// A shortcut.
    pub fast: Fast,
}

/// Where INTO / a FOR over a query puts a row.
#[derive(Clone, Debug)]
pub enum Targets {
    /// One record variable.
    Record(usize),
    /// Scalar variables, one per column.
    Scalars(Vec<usize>),
}

/// INTO [STRICT] targets.
#[derive(Clone, Debug)]
pub struct IntoClause {
    /// STRICT.
    pub strict: bool,
    /// The targets.
    pub targets: Targets,
}

/// A query a FOR loop or RETURN QUERY runs.
#[derive(Clone, Debug)]
pub enum Query {
    /// Written in the body.
    Static(PExpr),
    /// EXECUTE text [USING args].
    Dynamic {
        /// The expression giving the query text.
        query: PExpr,
        /// USING's arguments ($1 … of the query).
        using: Vec<PExpr>,
    },
}

/// A cursor variable: `c [[NO] SCROLL] CURSOR [(args)] FOR query` (bound)
/// or `c refcursor` (unbound). The variable itself is a text slot holding
/// the name of its portal (a bound cursor's starts as its own name).
#[derive(Clone, Debug)]
pub struct CursorDef {
    /// The variable.
    pub slot: usize,
    /// Bound: its arguments' slots (visible in its query only).
    pub args: Vec<usize>,
    /// Bound: its query.
    pub query: Option<Query>,
    /// NO SCROLL: backward fetches fail.
    pub no_scroll: bool,
}

/// Where FETCH / MOVE goes.
#[derive(Clone, Debug)]
pub enum Direction {
    /// NEXT (the default).
    Next,
    /// PRIOR.
    Prior,
    /// FIRST.
    First,
    /// LAST.
    Last,
    /// ABSOLUTE n.
    Absolute(PExpr),
    /// RELATIVE n.
    Relative(PExpr),
    /// FORWARD [n | ALL] (None: ALL).
    Forward(Option<PExpr>),
    /// BACKWARD [n | ALL] (None: ALL).
    Backward(Option<PExpr>),
}

/// A RAISE level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// DEBUG / LOG (not sent at the default client_min_messages).
    Debug,
    /// INFO.
    Info,
    /// NOTICE.
    Notice,
    /// WARNING.
    Warning,
    /// EXCEPTION.
    Exception,
}

/// RAISE.
#[derive(Clone, Debug)]
pub struct Raise {
    /// The level.
    pub level: Level,
    /// `RAISE;` in a handler: the error being handled again.
    pub reraise: bool,
    /// A condition name or SQLSTATE given instead of a format.
    pub code: Option<String>,
    /// The condition name as written (the default message).
    pub condname: Option<String>,
    /// The format string.
    pub fmt: Option<String>,
    /// Its arguments.
    pub args: Vec<PExpr>,
    /// USING option = expr.
    pub options: Vec<(String, PExpr)>,
}

/// An exception condition.
#[derive(Clone, Debug)]
pub enum Cond {
    /// OTHERS.
    Others,
    /// A SQLSTATE; one ending in `000` is a class.
    Code(String),
}

/// WHEN … THEN of an EXCEPTION clause.
#[derive(Clone, Debug)]
pub struct Handler {
    /// The conditions (OR).
    pub conds: Vec<Cond>,
    /// The statements.
    pub body: Vec<Stmt>,
    /// SQLSTATE's slot.
    pub sqlstate: usize,
    /// SQLERRM's slot.
    pub sqlerrm: usize,
}

/// A block.
#[derive(Clone, Debug)]
pub struct Block {
    /// `<<label>>`.
    pub label: Option<String>,
    /// Slots DECLAREd here, initialized at each entry.
    pub decls: Vec<usize>,
    /// The statements.
    pub body: Vec<Stmt>,
    /// EXCEPTION handlers (non-empty: the block runs in a subtransaction).
    pub handlers: Vec<Handler>,
}

/// A statement with its line.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// Its line in the body (1-based).
    pub line: u32,
    /// What it does.
    pub kind: StmtKind,
}

/// The statements.
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// A nested block.
    Block(Block),
    /// `target := expr`.
    Assign {
        /// The variable.
        slot: usize,
        /// `rec.field := …`.
        field: Option<String>,
        /// The value.
        expr: PExpr,
    },
    /// IF / ELSIF / ELSE.
    If {
        /// Conditions and their statements.
        arms: Vec<(PExpr, Vec<Stmt>)>,
        /// ELSE.
        otherwise: Vec<Stmt>,
    },
    /// CASE.
    Case {
        /// The simple form's subject and its hidden slot.
        subject: Option<(usize, PExpr)>,
        /// WHEN conditions (the simple form: `subject IN (list)`).
        arms: Vec<(PExpr, Vec<Stmt>)>,
        /// ELSE (None: 20000 when nothing matched).
        otherwise: Option<Vec<Stmt>>,
    },
    /// LOOP.
    Loop {
        /// Its label.
        label: Option<String>,
        /// The statements.
        body: Vec<Stmt>,
    },
    /// WHILE.
    While {
        /// Its label.
        label: Option<String>,
        /// The condition.
        cond: PExpr,
        /// The statements.
        body: Vec<Stmt>,
    },
    /// FOR i IN [REVERSE] a..b [BY s].
    ForInt {
        /// Its label.
        label: Option<String>,
        /// The loop variable (integer).
        var: usize,
        /// REVERSE.
        reverse: bool,
        /// Lower bound (upper with REVERSE: the first value).
        from: PExpr,
        /// The last value.
        to: PExpr,
        /// BY.
        step: Option<PExpr>,
        /// The statements.
        body: Vec<Stmt>,
    },
    /// FOR target IN query / EXECUTE.
    ForQuery {
        /// Its label.
        label: Option<String>,
        /// Where each row goes.
        targets: Targets,
        /// The query.
        query: Query,
        /// The statements.
        body: Vec<Stmt>,
    },
    /// FOREACH var [SLICE n] IN ARRAY expr.
    ForEach {
        /// Its label.
        label: Option<String>,
        /// The loop variable (declared before).
        var: usize,
        /// SLICE (0: one element at a time).
        slice: u32,
        /// The array.
        array: PExpr,
        /// The statements.
        body: Vec<Stmt>,
    },
    /// EXIT / CONTINUE.
    Exit {
        /// CONTINUE.
        cont: bool,
        /// The loop (or block) named.
        label: Option<String>,
        /// WHEN.
        cond: Option<PExpr>,
    },
    /// RETURN [expr].
    Return(Option<PExpr>),
    /// RETURN NEXT [expr].
    ReturnNext(Option<PExpr>),
    /// RETURN QUERY.
    ReturnQuery(Query),
    /// RAISE.
    Raise(Box<Raise>),
    /// PERFORM query.
    Perform(PExpr),
    /// An SQL statement, with INTO.
    Sql {
        /// The statement (INTO cut out).
        sql: PExpr,
        /// INTO.
        into: Option<IntoClause>,
    },
    /// EXECUTE.
    Execute {
        /// The query text's expression.
        query: PExpr,
        /// INTO.
        into: Option<IntoClause>,
        /// USING.
        using: Vec<PExpr>,
    },
    /// GET [STACKED] DIAGNOSTICS.
    GetDiag {
        /// STACKED.
        stacked: bool,
        /// Target slot and item name.
        items: Vec<(usize, String)>,
    },
    /// ASSERT.
    Assert {
        /// The condition.
        cond: PExpr,
        /// The message.
        msg: Option<PExpr>,
    },
    /// OPEN cursor [(args)] | OPEN refcursor FOR query.
    Open {
        /// Index into [`Compiled::cursors`].
        cursor: usize,
        /// A bound cursor's argument values.
        args: Vec<PExpr>,
        /// An unbound cursor's query.
        query: Option<Query>,
        /// OPEN … SCROLL / NO SCROLL of an unbound cursor.
        no_scroll: bool,
    },
    /// FETCH … INTO / MOVE.
    Fetch {
        /// Index into [`Compiled::cursors`].
        cursor: usize,
        /// The direction.
        dir: Direction,
        /// FETCH's targets (None: MOVE).
        into: Option<Targets>,
    },
    /// CLOSE.
    Close(usize),
    /// FOR rec IN cursor [(args)] LOOP.
    ForCursor {
        /// Its label.
        label: Option<String>,
        /// The loop's record variable (declared by the loop).
        rec: usize,
        /// Index into [`Compiled::cursors`].
        cursor: usize,
        /// The cursor's argument values.
        args: Vec<PExpr>,
        /// The statements.
        body: Vec<Stmt>,
    },
    /// CALL procedure(args): its OUT and INOUT results go back into the
    /// variables given for them.
    Call {
        /// The call as a query (`crate::spi::call_query`).
        sql: PExpr,
        /// Each argument as written: its name in named notation, and the
        /// scalar variable it is if it is one alone (writable).
        args: Vec<CallArg>,
    },
    /// COMMIT / ROLLBACK [AND [NO] CHAIN] (procedures and DO blocks).
    EndTransaction {
        /// COMMIT (else ROLLBACK).
        commit: bool,
        /// AND CHAIN.
        chain: bool,
    },
    /// NULL.
    Null,
}

/// One argument of a PL/pgSQL CALL.
#[derive(Clone, Debug)]
pub struct CallArg {
    /// `name => value`.
    pub name: Option<String>,
    /// The variable the argument is, if it is only that.
    pub target: Option<usize>,
}

impl StmtKind {
    /// The statement's name in CONTEXT lines (`plpgsql_stmt_typename`).
    pub fn name(&self) -> &'static str {
        match self {
            StmtKind::Block(_) => "statement block",
            StmtKind::Assign { .. } => "assignment",
            StmtKind::If { .. } => "IF",
            StmtKind::Case { .. } => "CASE",
            StmtKind::Loop { .. } => "LOOP",
            StmtKind::While { .. } => "WHILE",
            StmtKind::ForInt { .. } => "FOR with integer loop variable",
            StmtKind::ForQuery {
                query: Query::Static(_),
                ..
            } => "FOR over SELECT rows",
            StmtKind::ForQuery { .. } => "FOR over EXECUTE statement",
            StmtKind::ForEach { .. } => "FOREACH over array",
            StmtKind::Exit { cont: false, .. } => "EXIT",
            StmtKind::Exit { .. } => "CONTINUE",
            StmtKind::Return(_) => "RETURN",
            StmtKind::ReturnNext(_) => "RETURN NEXT",
            StmtKind::ReturnQuery(_) => "RETURN QUERY",
            StmtKind::Raise(_) => "RAISE",
            StmtKind::Perform(_) => "PERFORM",
            StmtKind::Sql { .. } => "SQL statement",
            StmtKind::Execute { .. } => "EXECUTE",
            StmtKind::GetDiag { .. } => "GET DIAGNOSTICS",
            StmtKind::Assert { .. } => "ASSERT",
            StmtKind::Open { .. } => "OPEN",
            StmtKind::Fetch { into: Some(_), .. } => "FETCH",
            StmtKind::Fetch { .. } => "MOVE",
            StmtKind::Close(_) => "CLOSE",
            StmtKind::ForCursor { .. } => "FOR over cursor",
            StmtKind::Null => "NULL",
            StmtKind::Call { .. } => "CALL",
            StmtKind::EndTransaction { commit: true, .. } => "COMMIT",
            StmtKind::EndTransaction { .. } => "ROLLBACK",
        }
    }
}

/// A compiled function or DO block.
#[derive(Debug)]
pub struct Compiled {
    /// `f(integer)` or `inline_code_block` (CONTEXT lines).
    pub name: String,
    /// Every variable.
    pub slots: Vec<SlotDef>,
    /// Parameters: slots `0..nargs`.
    pub nargs: usize,
    /// FOUND's slot.
    pub found: usize,
    /// The result type (`Void` for DO and procedures).
    pub ret: SqlType,
    /// SETOF.
    pub retset: bool,
    /// The OUT / TABLE columns' slots (after the parameters'), empty for
    /// a function without.
    pub out: Vec<usize>,
    /// How embedded statements take snapshots.
    pub mode: SnapshotMode,
    /// The outermost block.
    pub body: Block,
    /// `table%ROWTYPE` variables: the slot and the table as written
    /// (the row's shape is read from the catalog when the block starts).
    pub rowtypes: Vec<(usize, String)>,
    /// The cursor variables.
    pub cursors: Vec<CursorDef>,
}

struct Scope {
    label: Option<String>,
    names: Vec<(String, usize)>,
}

struct Parser<'s> {
    src: &'s str,
    toks: Vec<(Tok, usize, usize)>,
    pos: usize,
    slots: Vec<SlotDef>,
    scopes: Vec<Scope>,
    fname: String,
    /// Parameters are slots `0..nargs`.
    nargs: usize,
    /// `%ROWTYPE` declarations seen.
    rowtypes: Vec<(usize, String)>,
    /// The table of the `%ROWTYPE` type [`Parser::type_until`] just read.
    pending_rowtype: Option<String>,
    /// The cursor variables declared so far.
    cursors: Vec<CursorDef>,
}

/// The variables of a trigger function, slots `0..` in this order: NEW
/// and OLD (records), then the TG_ scalars (PostgreSQL's
/// `plpgsql_compile` for trigger functions).
pub const TRIGGER_VARS: &[(&str, Option<SqlType>)] = &[
    ("new", None),
    ("old", None),
    ("tg_name", Some(SqlType::Name)),
    ("tg_when", Some(SqlType::Text)),
    ("tg_level", Some(SqlType::Text)),
    ("tg_op", Some(SqlType::Text)),
    ("tg_relid", Some(SqlType::Oid)),
    ("tg_relname", Some(SqlType::Name)),
    ("tg_table_name", Some(SqlType::Name)),
    ("tg_table_schema", Some(SqlType::Name)),
    ("tg_nargs", Some(SqlType::Int4)),
    (
        "tg_argv",
        Some(SqlType::Array(pgtypes::sqltype::ArrayElem::Text)),
    ),
];

/// [`TRIGGER_VARS`] as slots and names (a trigger function has no
/// parameters of its own).
fn trigger_slots(slots: &mut Vec<SlotDef>, names: &mut Vec<(String, usize)>) {
    for (name, ty) in TRIGGER_VARS {
        names.push((name.to_string(), slots.len()));
        slots.push(SlotDef {
            name: name.to_string(),
            ty: ty.map_or(SlotType::Record, SlotType::Scalar),
            constant: false,
            not_null: false,
            default: None,
        });
    }
}

/// Compiles a function's body.
pub fn compile(spec: &FunctionSpec) -> PgResult<Compiled> {
    // OUT / TABLE columns are variables after the parameters; an INOUT
    // one is its parameter's slot.
    let inout: Vec<Option<usize>> = (0..spec.out.len()).map(|k| spec.inout_arg(k)).collect();
    let params = spec.args.iter().map(|a| (a.name.as_str(), a.ty)).chain(
        spec.out
            .iter()
            .zip(&inout)
            .filter(|(_, i)| i.is_none())
            .map(|((n, t), _)| (n.as_str(), *t)),
    );
    let mut slots: Vec<SlotDef> = params
        .clone()
        .map(|(name, ty)| SlotDef {
            name: name.to_string(),
            ty: SlotType::Scalar(ty),
            constant: false,
            not_null: false,
            default: None,
        })
        .collect();
    let mut names: Vec<(String, usize)> = params
        .enumerate()
        .filter(|(_, (n, _))| !n.is_empty())
        .map(|(i, (n, _))| (n.to_string(), i))
        .collect();
    if spec.ret == SqlType::Trigger {
        trigger_slots(&mut slots, &mut names);
    }
    let mut next = spec.args.len();
    let out = inout
        .iter()
        .map(|i| {
            i.unwrap_or_else(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    let mut c = compile_with(
        &spec.body,
        &spec.name,
        spec.signature(),
        slots,
        names,
        spec.ret,
        spec.retset,
        crate::fmgr::snapshot_mode(spec),
    )?;
    c.out = out;
    Ok(c)
}

/// Compiles a DO block.
pub fn compile_inline(body: &str) -> PgResult<Compiled> {
    compile_with(
        body,
        "inline_code_block",
        "inline_code_block".into(),
        Vec::new(),
        Vec::new(),
        SqlType::Void,
        false,
        SnapshotMode::Fresh,
    )
}

#[allow(clippy::too_many_arguments)]
fn compile_with(
    body: &str,
    fname: &str,
    name: String,
    slots: Vec<SlotDef>,
    names: Vec<(String, usize)>,
    ret: SqlType,
    retset: bool,
    mode: SnapshotMode,
) -> PgResult<Compiled> {
    let nargs = slots.len();
    let toks = lex_spans(body).map_err(|e| {
        PgError::syntax(e.into_fields().message).with_context(format!(
            "compilation of PL/pgSQL function \"{fname}\" near line 1"
        ))
    })?;
    let mut p = Parser {
        src: body,
        toks,
        pos: 0,
        slots,
        scopes: vec![Scope {
            label: Some(fname.to_string()),
            names,
        }],
        fname: fname.to_string(),
        nargs,
        rowtypes: Vec::new(),
        pending_rowtype: None,
        cursors: Vec::new(),
    };
    let found = p.new_slot("found", SlotType::Scalar(SqlType::Bool));
    let r = (|| {
        let label = p.label()?;
        if !matches!(p.peek_word(), Some("declare" | "begin")) {
            return Err(p.error_here());
        }
        let b = p.block(label)?;
        p.eat_punct(';');
        if p.pos < p.toks.len() {
            return Err(p.error_here());
        }
        Ok(b)
    })();
    let body = r.map_err(|e| {
        if e.context.is_some() {
            e
        } else {
            let line = p.line_at(p.pos.min(p.toks.len().saturating_sub(1)));
            e.with_context(format!(
                "compilation of PL/pgSQL function \"{}\" near line {line}",
                p.fname
            ))
        }
    })?;
    Ok(Compiled {
        name,
        slots: p.slots,
        nargs,
        found,
        ret,
        retset,
        out: Vec::new(),
        mode,
        body,
        rowtypes: p.rowtypes,
        cursors: p.cursors,
    })
}

/// PostgreSQL's exception condition names (`plerrcodes.h`): every named
/// code of PostgreSQL 15's `errcodes.txt`, in its order.
pub const CONDITIONS: &[(&str, &str)] = &[
    ("successful_completion", "00000"),
    ("warning", "01000"),
    ("dynamic_result_sets_returned", "0100C"),
    ("implicit_zero_bit_padding", "01008"),
    ("null_value_eliminated_in_set_function", "01003"),
    ("privilege_not_granted", "01007"),
    ("privilege_not_revoked", "01006"),
    ("string_data_right_truncation", "01004"),
    ("deprecated_feature", "01P01"),
    ("no_data", "02000"),
    ("no_additional_dynamic_result_sets_returned", "02001"),
    ("sql_statement_not_yet_complete", "03000"),
    ("connection_exception", "08000"),
    ("connection_does_not_exist", "08003"),
    ("connection_failure", "08006"),
    ("sqlclient_unable_to_establish_sqlconnection", "08001"),
    ("sqlserver_rejected_establishment_of_sqlconnection", "08004"),
    ("transaction_resolution_unknown", "08007"),
    ("protocol_violation", "08P01"),
    ("triggered_action_exception", "09000"),
    ("feature_not_supported", "0A000"),
    ("invalid_transaction_initiation", "0B000"),
    ("locator_exception", "0F000"),
    ("invalid_locator_specification", "0F001"),
    ("invalid_grantor", "0L000"),
    ("invalid_grant_operation", "0LP01"),
    ("invalid_role_specification", "0P000"),
    ("diagnostics_exception", "0Z000"),
    (
        "stacked_diagnostics_accessed_without_active_handler",
        "0Z002",
    ),
    ("case_not_found", "20000"),
    ("cardinality_violation", "21000"),
    ("data_exception", "22000"),
    ("array_subscript_error", "2202E"),
    ("character_not_in_repertoire", "22021"),
    ("datetime_field_overflow", "22008"),
    ("division_by_zero", "22012"),
    ("error_in_assignment", "22005"),
    ("escape_character_conflict", "2200B"),
    ("indicator_overflow", "22022"),
    ("interval_field_overflow", "22015"),
    ("invalid_argument_for_logarithm", "2201E"),
    ("invalid_argument_for_ntile_function", "22014"),
    ("invalid_argument_for_nth_value_function", "22016"),
    ("invalid_argument_for_power_function", "2201F"),
    ("invalid_argument_for_width_bucket_function", "2201G"),
    ("invalid_character_value_for_cast", "22018"),
    ("invalid_datetime_format", "22007"),
    ("invalid_escape_character", "22019"),
    ("invalid_escape_octet", "2200D"),
    ("invalid_escape_sequence", "22025"),
    ("nonstandard_use_of_escape_character", "22P06"),
    ("invalid_indicator_parameter_value", "22010"),
    ("invalid_parameter_value", "22023"),
    ("invalid_preceding_or_following_size", "22013"),
    ("invalid_regular_expression", "2201B"),
    ("invalid_row_count_in_limit_clause", "2201W"),
    ("invalid_row_count_in_result_offset_clause", "2201X"),
    ("invalid_tablesample_argument", "2202H"),
    ("invalid_tablesample_repeat", "2202G"),
    ("invalid_time_zone_displacement_value", "22009"),
    ("invalid_use_of_escape_character", "2200C"),
    ("most_specific_type_mismatch", "2200G"),
    ("null_value_not_allowed", "22004"),
    ("null_value_no_indicator_parameter", "22002"),
    ("numeric_value_out_of_range", "22003"),
    ("sequence_generator_limit_exceeded", "2200H"),
    ("string_data_length_mismatch", "22026"),
    ("string_data_right_truncation", "22001"),
    ("substring_error", "22011"),
    ("trim_error", "22027"),
    ("unterminated_c_string", "22024"),
    ("zero_length_character_string", "2200F"),
    ("floating_point_exception", "22P01"),
    ("invalid_text_representation", "22P02"),
    ("invalid_binary_representation", "22P03"),
    ("bad_copy_file_format", "22P04"),
    ("untranslatable_character", "22P05"),
    ("not_an_xml_document", "2200L"),
    ("invalid_xml_document", "2200M"),
    ("invalid_xml_content", "2200N"),
    ("invalid_xml_comment", "2200S"),
    ("invalid_xml_processing_instruction", "2200T"),
    ("duplicate_json_object_key_value", "22030"),
    ("invalid_argument_for_sql_json_datetime_function", "22031"),
    ("invalid_json_text", "22032"),
    ("invalid_sql_json_subscript", "22033"),
    ("more_than_one_sql_json_item", "22034"),
    ("no_sql_json_item", "22035"),
    ("non_numeric_sql_json_item", "22036"),
    ("non_unique_keys_in_a_json_object", "22037"),
    ("singleton_sql_json_item_required", "22038"),
    ("sql_json_array_not_found", "22039"),
    ("sql_json_member_not_found", "2203A"),
    ("sql_json_number_not_found", "2203B"),
    ("sql_json_object_not_found", "2203C"),
    ("too_many_json_array_elements", "2203D"),
    ("too_many_json_object_members", "2203E"),
    ("sql_json_scalar_required", "2203F"),
    ("sql_json_item_cannot_be_cast_to_target_type", "2203G"),
    ("integrity_constraint_violation", "23000"),
    ("restrict_violation", "23001"),
    ("not_null_violation", "23502"),
    ("foreign_key_violation", "23503"),
    ("unique_violation", "23505"),
    ("check_violation", "23514"),
    ("exclusion_violation", "23P01"),
    ("invalid_cursor_state", "24000"),
    ("invalid_transaction_state", "25000"),
    ("active_sql_transaction", "25001"),
    ("branch_transaction_already_active", "25002"),
    ("held_cursor_requires_same_isolation_level", "25008"),
    ("inappropriate_access_mode_for_branch_transaction", "25003"),
    (
        "inappropriate_isolation_level_for_branch_transaction",
        "25004",
    ),
    ("no_active_sql_transaction_for_branch_transaction", "25005"),
    ("read_only_sql_transaction", "25006"),
    ("schema_and_data_statement_mixing_not_supported", "25007"),
    ("no_active_sql_transaction", "25P01"),
    ("in_failed_sql_transaction", "25P02"),
    ("idle_in_transaction_session_timeout", "25P03"),
    ("invalid_sql_statement_name", "26000"),
    ("triggered_data_change_violation", "27000"),
    ("invalid_authorization_specification", "28000"),
    ("invalid_password", "28P01"),
    ("dependent_privilege_descriptors_still_exist", "2B000"),
    ("dependent_objects_still_exist", "2BP01"),
    ("invalid_transaction_termination", "2D000"),
    ("sql_routine_exception", "2F000"),
    ("function_executed_no_return_statement", "2F005"),
    ("modifying_sql_data_not_permitted", "2F002"),
    ("prohibited_sql_statement_attempted", "2F003"),
    ("reading_sql_data_not_permitted", "2F004"),
    ("invalid_cursor_name", "34000"),
    ("external_routine_exception", "38000"),
    ("containing_sql_not_permitted", "38001"),
    ("modifying_sql_data_not_permitted", "38002"),
    ("prohibited_sql_statement_attempted", "38003"),
    ("reading_sql_data_not_permitted", "38004"),
    ("external_routine_invocation_exception", "39000"),
    ("invalid_sqlstate_returned", "39001"),
    ("null_value_not_allowed", "39004"),
    ("trigger_protocol_violated", "39P01"),
    ("srf_protocol_violated", "39P02"),
    ("event_trigger_protocol_violated", "39P03"),
    ("savepoint_exception", "3B000"),
    ("invalid_savepoint_specification", "3B001"),
    ("invalid_catalog_name", "3D000"),
    ("invalid_schema_name", "3F000"),
    ("transaction_rollback", "40000"),
    ("transaction_integrity_constraint_violation", "40002"),
    ("serialization_failure", "40001"),
    ("statement_completion_unknown", "40003"),
    ("deadlock_detected", "40P01"),
    ("syntax_error_or_access_rule_violation", "42000"),
    ("syntax_error", "42601"),
    ("insufficient_privilege", "42501"),
    ("cannot_coerce", "42846"),
    ("grouping_error", "42803"),
    ("windowing_error", "42P20"),
    ("invalid_recursion", "42P19"),
    ("invalid_foreign_key", "42830"),
    ("invalid_name", "42602"),
    ("name_too_long", "42622"),
    ("reserved_name", "42939"),
    ("datatype_mismatch", "42804"),
    ("indeterminate_datatype", "42P18"),
    ("collation_mismatch", "42P21"),
    ("indeterminate_collation", "42P22"),
    ("wrong_object_type", "42809"),
    ("generated_always", "428C9"),
    ("undefined_column", "42703"),
    ("undefined_function", "42883"),
    ("undefined_table", "42P01"),
    ("undefined_parameter", "42P02"),
    ("undefined_object", "42704"),
    ("duplicate_column", "42701"),
    ("duplicate_cursor", "42P03"),
    ("duplicate_database", "42P04"),
    ("duplicate_function", "42723"),
    ("duplicate_prepared_statement", "42P05"),
    ("duplicate_schema", "42P06"),
    ("duplicate_table", "42P07"),
    ("duplicate_alias", "42712"),
    ("duplicate_object", "42710"),
    ("ambiguous_column", "42702"),
    ("ambiguous_function", "42725"),
    ("ambiguous_parameter", "42P08"),
    ("ambiguous_alias", "42P09"),
    ("invalid_column_reference", "42P10"),
    ("invalid_column_definition", "42611"),
    ("invalid_cursor_definition", "42P11"),
    ("invalid_database_definition", "42P12"),
    ("invalid_function_definition", "42P13"),
    ("invalid_prepared_statement_definition", "42P14"),
    ("invalid_schema_definition", "42P15"),
    ("invalid_table_definition", "42P16"),
    ("invalid_object_definition", "42P17"),
    ("with_check_option_violation", "44000"),
    ("insufficient_resources", "53000"),
    ("disk_full", "53100"),
    ("out_of_memory", "53200"),
    ("too_many_connections", "53300"),
    ("configuration_limit_exceeded", "53400"),
    ("program_limit_exceeded", "54000"),
    ("statement_too_complex", "54001"),
    ("too_many_columns", "54011"),
    ("too_many_arguments", "54023"),
    ("object_not_in_prerequisite_state", "55000"),
    ("object_in_use", "55006"),
    ("cant_change_runtime_param", "55P02"),
    ("lock_not_available", "55P03"),
    ("unsafe_new_enum_value_usage", "55P04"),
    ("operator_intervention", "57000"),
    ("query_canceled", "57014"),
    ("admin_shutdown", "57P01"),
    ("crash_shutdown", "57P02"),
    ("cannot_connect_now", "57P03"),
    ("database_dropped", "57P04"),
    ("idle_session_timeout", "57P05"),
    ("system_error", "58000"),
    ("io_error", "58030"),
    ("undefined_file", "58P01"),
    ("duplicate_file", "58P02"),
    ("snapshot_too_old", "72000"),
    ("config_file_error", "F0000"),
    ("lock_file_exists", "F0001"),
    ("fdw_error", "HV000"),
    ("fdw_column_name_not_found", "HV005"),
    ("fdw_dynamic_parameter_value_needed", "HV002"),
    ("fdw_function_sequence_error", "HV010"),
    ("fdw_inconsistent_descriptor_information", "HV021"),
    ("fdw_invalid_attribute_value", "HV024"),
    ("fdw_invalid_column_name", "HV007"),
    ("fdw_invalid_column_number", "HV008"),
    ("fdw_invalid_data_type", "HV004"),
    ("fdw_invalid_data_type_descriptors", "HV006"),
    ("fdw_invalid_descriptor_field_identifier", "HV091"),
    ("fdw_invalid_handle", "HV00B"),
    ("fdw_invalid_option_index", "HV00C"),
    ("fdw_invalid_option_name", "HV00D"),
    ("fdw_invalid_string_length_or_buffer_length", "HV090"),
    ("fdw_invalid_string_format", "HV00A"),
    ("fdw_invalid_use_of_null_pointer", "HV009"),
    ("fdw_too_many_handles", "HV014"),
    ("fdw_out_of_memory", "HV001"),
    ("fdw_no_schemas", "HV00P"),
    ("fdw_option_name_not_found", "HV00J"),
    ("fdw_reply_handle", "HV00K"),
    ("fdw_schema_not_found", "HV00Q"),
    ("fdw_table_not_found", "HV00R"),
    ("fdw_unable_to_create_execution", "HV00L"),
    ("fdw_unable_to_create_reply", "HV00M"),
    ("fdw_unable_to_establish_connection", "HV00N"),
    ("plpgsql_error", "P0000"),
    ("raise_exception", "P0001"),
    ("no_data_found", "P0002"),
    ("too_many_rows", "P0003"),
    ("assert_failure", "P0004"),
    ("internal_error", "XX000"),
    ("data_corrupted", "XX001"),
    ("index_corrupted", "XX002"),
];

/// The SQLSTATE of a condition name.
pub fn condition_code(name: &str) -> Option<&'static str> {
    CONDITIONS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

/// True for a well-formed SQLSTATE (five digits or upper-case letters).
pub fn valid_sqlstate(s: &str) -> bool {
    s.len() == 5
        && s.bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
}

impl<'s> Parser<'s> {
    fn new_slot(&mut self, name: &str, ty: SlotType) -> usize {
        self.slots.push(SlotDef {
            name: name.to_string(),
            ty,
            constant: false,
            not_null: false,
            default: None,
        });
        let i = self.slots.len() - 1;
        if let Some(s) = self.scopes.last_mut() {
            s.names.push((name.to_string(), i));
        }
        i
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    fn tok_at(&self, i: usize) -> Option<&Tok> {
        self.toks.get(i).map(|t| &t.0)
    }
    fn peek_word(&self) -> Option<&str> {
        match self.peek() {
            Some(Tok::Word(w)) => Some(w.as_str()),
            _ => None,
        }
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if self.peek_word() == Some(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_word(&mut self, w: &str) -> PgResult<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }
    fn expect_punct(&mut self, c: char) -> PgResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }
    fn ident(&mut self) -> PgResult<String> {
        match self.peek().cloned() {
            Some(Tok::Word(w) | Tok::Ident(w)) => {
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.error_here()),
        }
    }
    fn line_at(&self, i: usize) -> u32 {
        let at = self.toks.get(i).map_or(self.src.len(), |t| t.1);
        1 + self.src.get(..at).unwrap_or("").matches('\n').count() as u32
    }
    fn error_here(&self) -> PgError {
        match self.toks.get(self.pos) {
            Some(t) => PgError::syntax(format!(
                "syntax error at or near \"{}\"",
                self.src.get(t.1..t.2).unwrap_or("")
            )),
            None => PgError::syntax("syntax error at end of input"),
        }
    }
    fn text(&self, a: usize, b: usize) -> &'s str {
        if a >= b {
            return "";
        }
        let (Some(x), Some(y)) = (self.toks.get(a), self.toks.get(b - 1)) else {
            return "";
        };
        self.src.get(x.1..y.2).unwrap_or("")
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        for s in self.scopes.iter().rev() {
            if let Some((_, i)) = s.names.iter().rev().find(|(n, _)| n == name) {
                return Some(*i);
            }
        }
        None
    }
    fn lookup_in(&self, label: &str, name: &str) -> Option<usize> {
        for s in self.scopes.iter().rev() {
            if s.label.as_deref() == Some(label) {
                if let Some((_, i)) = s.names.iter().rev().find(|(n, _)| n == name) {
                    return Some(*i);
                }
            }
        }
        None
    }

    /// `<<label>>` if one comes next.
    fn label(&mut self) -> PgResult<Option<String>> {
        if self.peek() == Some(&Tok::Punct('<'))
            && self.tok_at(self.pos + 1) == Some(&Tok::Punct('<'))
        {
            self.pos += 2;
            let l = self.ident()?;
            self.expect_punct('>')?;
            self.expect_punct('>')?;
            return Ok(Some(l));
        }
        Ok(None)
    }

    /// The token range from here to the first stop at depth 0 (a word in
    /// `stops`, or `;`); the stop is not consumed.
    fn scan(&mut self, stops: &[&str]) -> (usize, usize) {
        let start = self.pos;
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            match t {
                Tok::Punct('(' | '[') => depth += 1,
                Tok::Punct(')' | ']') => depth -= 1,
                Tok::Word(w) if w == "case" => depth += 1,
                Tok::Word(w) if w == "end" && depth > 0 => depth -= 1,
                Tok::Punct(';') if depth <= 0 => break,
                Tok::Punct(',') if depth <= 0 && stops.contains(&",") => break,
                Tok::Word(w) if depth <= 0 && stops.contains(&w.as_str()) => break,
                _ => {}
            }
            self.pos += 1;
        }
        (start, self.pos)
    }

    /// An expression from tokens `a..b` as `SELECT …`.
    fn expr(&self, a: usize, b: usize) -> PgResult<PExpr> {
        if a >= b {
            return Err(self.error_here());
        }
        self.sql_text(self.text(a, b), true)
    }

    /// `text` (an expression if `select`, else a statement) with its
    /// variable references rewritten.
    fn sql_text(&self, text: &str, select: bool) -> PgResult<PExpr> {
        let toks = lex_spans(text)?;
        let mut params: Vec<ParamRef> = Vec::new();
        let mut out = String::with_capacity(text.len() + 16);
        if select {
            out.push_str("SELECT ");
        }
        let mut last = 0;
        let mut i = 0;
        let param = |r: ParamRef, params: &mut Vec<ParamRef>| -> usize {
            match params.iter().position(|p| *p == r) {
                Some(k) => k + 1,
                None => {
                    params.push(r);
                    params.len()
                }
            }
        };
        let mut simple = true;
        while i < toks.len() {
            let (tok, start, end) = &toks[i];
            let next = toks.get(i + 1).map(|t| &t.0);
            let prev = i.checked_sub(1).and_then(|j| toks.get(j)).map(|t| &t.0);
            if matches!(tok, Tok::Word(w) if w == "select") {
                simple = false;
            }
            // `$n`: the n-th parameter of the function.
            if *tok == Tok::Punct('$') {
                if let Some(Tok::Num(n)) = next {
                    if let Ok(k) = n.parse::<usize>() {
                        if k >= 1 && toks[i + 1].1 == *end {
                            let slot = k - 1;
                            if slot >= self.nargs {
                                return Err(PgError::new(
                                    sqlstate::UNDEFINED_PARAMETER,
                                    format!("there is no parameter ${k}"),
                                ));
                            }
                            let n = param(ParamRef { slot, field: None }, &mut params);
                            out.push_str(text.get(last..*start).unwrap_or(""));
                            out.push_str(&format!("${n}"));
                            last = toks[i + 1].2;
                            i += 2;
                            continue;
                        }
                    }
                }
            }
            let name = match tok {
                Tok::Word(w) | Tok::Ident(w) => w,
                _ => {
                    i += 1;
                    continue;
                }
            };
            let named_arg = matches!(
                (next, toks.get(i + 2).map(|t| &t.0)),
                (Some(Tok::Punct('=')), Some(Tok::Punct('>')))
                    | (Some(Tok::Punct(':')), Some(Tok::Punct('=')))
            );
            if prev == Some(&Tok::Punct('.'))
                || matches!(prev, Some(Tok::Word(w)) if w == "as")
                || next == Some(&Tok::Punct('('))
                || named_arg
            {
                i += 1;
                continue;
            }
            if next == Some(&Tok::Punct('.')) {
                if let Some(Tok::Word(f) | Tok::Ident(f)) = toks.get(i + 2).map(|t| &t.0) {
                    let found = match self.lookup(name) {
                        Some(s) if self.slots[s].ty == SlotType::Record => Some(ParamRef {
                            slot: s,
                            field: Some(f.clone()),
                        }),
                        _ => self
                            .lookup_in(name, f)
                            .map(|slot| ParamRef { slot, field: None }),
                    };
                    if let Some(r) = found {
                        let n = param(r, &mut params);
                        out.push_str(text.get(last..*start).unwrap_or(""));
                        out.push_str(&format!("${n}"));
                        last = toks[i + 2].2;
                        i += 3;
                        continue;
                    }
                }
                i += 1;
                continue;
            }
            if let Some(slot) = self.lookup(name) {
                let n = param(ParamRef { slot, field: None }, &mut params);
                out.push_str(text.get(last..*start).unwrap_or(""));
                out.push_str(&format!("${n}"));
                last = *end;
            }
            i += 1;
        }
        out.push_str(text.get(last..).unwrap_or(""));
        let fast = if !select {
            Fast::No
        } else if params.len() == 1
            && (toks.len() == 1 || (toks.len() == 2 && toks[0].0 == Tok::Punct('$')))
        {
            Fast::Param
        } else if toks.len() == 1 {
            match &toks[0].0 {
                Tok::Num(n) => match n.parse::<i64>() {
                    Ok(v) => match i32::try_from(v) {
                        Ok(v) => Fast::Const(Value::Int4(v)),
                        Err(_) => Fast::Const(Value::Int8(v)),
                    },
                    Err(_) => Fast::No,
                },
                Tok::Str(s) => Fast::Const(Value::text(s)),
                Tok::Word(w) if w == "true" => Fast::Const(Value::Bool(true)),
                Tok::Word(w) if w == "false" => Fast::Const(Value::Bool(false)),
                _ => Fast::No,
            }
        } else {
            Fast::No
        };
        Ok(PExpr {
            sql: out,
            params,
            text: text.trim().to_string(),
            simple,
            fast,
        })
    }

    /// A type's text up to a stop at depth 0.
    fn type_until(&mut self, stops: &[&str]) -> PgResult<SlotType> {
        let start = self.pos;
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            match t {
                // A cursor's parameter list: `(a int, b numeric(6, 2))`.
                Tok::Punct(',') if depth == 0 && stops.contains(&",") => break,
                Tok::Punct(')') if depth == 0 && stops.contains(&")") => break,
                Tok::Punct('(' | '[') => depth += 1,
                Tok::Punct(')' | ']') => depth -= 1,
                Tok::Punct(';' | ':' | '=') if depth <= 0 => break,
                Tok::Word(w) if depth <= 0 && stops.contains(&w.as_str()) => break,
                _ => {}
            }
            self.pos += 1;
        }
        let text = self.text(start, self.pos);
        if text.is_empty() {
            return Err(self.error_here());
        }
        let lower = text.to_ascii_lowercase();
        if lower == "record" {
            return Ok(SlotType::Record);
        }
        if let Some(var) = lower.strip_suffix("%type") {
            return match self.lookup(var.trim()) {
                Some(s) => Ok(self.slots[s].ty.clone()),
                None => Err(PgError::unsupported(format!(
                    "%TYPE of \"{}\" is not supported",
                    var.trim()
                ))),
            };
        }
        if lower.ends_with("%rowtype") {
            let table = text[..text.len() - "%rowtype".len()].trim();
            if table.is_empty() {
                return Err(self.error_here());
            }
            self.pending_rowtype = Some(table.to_string());
            return Ok(SlotType::Record);
        }
        Ok(SlotType::Scalar(crate::parser::parse_type_text(text)?))
    }

    fn block(&mut self, label: Option<String>) -> PgResult<Block> {
        self.scopes.push(Scope {
            label: label.clone(),
            names: Vec::new(),
        });
        let r = self.block_inner(label);
        self.scopes.pop();
        r
    }

    fn block_inner(&mut self, label: Option<String>) -> PgResult<Block> {
        let mut decls = Vec::new();
        if self.eat_word("declare") {
            while !matches!(self.peek_word(), Some("begin")) {
                if self.peek().is_none() {
                    return Err(self.error_here());
                }
                if self.label()?.is_some() {
                    // A label in DECLARE belongs to the block's BEGIN.
                    return Err(self.error_here());
                }
                let name = self.ident()?;
                if self.eat_word("alias") {
                    self.expect_word("for")?;
                    let target = if self.eat_punct('$') {
                        match self.peek().cloned() {
                            Some(Tok::Num(n)) => {
                                self.pos += 1;
                                n.parse::<usize>()
                                    .ok()
                                    .filter(|k| *k >= 1 && *k <= self.slots.len())
                                    .map(|k| k - 1)
                            }
                            _ => None,
                        }
                    } else {
                        let n = self.ident()?;
                        self.lookup(&n)
                    };
                    let Some(t) = target else {
                        return Err(self.error_here());
                    };
                    self.expect_punct(';')?;
                    if let Some(s) = self.scopes.last_mut() {
                        s.names.push((name, t));
                    }
                    continue;
                }
                let constant = self.eat_word("constant");
                if let Some(slot) = self.cursor_decl(&name)? {
                    decls.push(slot);
                    continue;
                }
                let ty = self.type_until(&["default", "not", "collate"])?;
                if self.eat_word("collate") {
                    self.ident()?;
                }
                let not_null = if self.eat_word("not") {
                    self.expect_word("null")?;
                    true
                } else {
                    false
                };
                let default = if self.eat_word("default")
                    || (self.peek() == Some(&Tok::Punct(':')) && {
                        self.pos += 1;
                        self.expect_punct('=')?;
                        true
                    })
                    || self.eat_punct('=')
                {
                    let (a, b) = self.scan(&[]);
                    Some(self.expr(a, b)?)
                } else {
                    None
                };
                self.expect_punct(';')?;
                if not_null && default.is_none() {
                    return Err(PgError::syntax(format!(
                        "variable \"{name}\" must have a default value, since it's declared NOT NULL"
                    )));
                }
                let slot = self.new_slot(&name, ty);
                if let Some(t) = self.pending_rowtype.take() {
                    self.rowtypes.push((slot, t));
                }
                self.slots[slot].constant = constant;
                self.slots[slot].not_null = not_null;
                self.slots[slot].default = default;
                decls.push(slot);
            }
        }
        self.expect_word("begin")?;
        let body = self.stmts(&["end", "exception"])?;
        let mut handlers = Vec::new();
        if self.eat_word("exception") {
            while self.eat_word("when") {
                let mut conds = Vec::new();
                loop {
                    let w = self.ident()?;
                    let c = if w == "others" {
                        Cond::Others
                    } else if w == "sqlstate" {
                        let code = match self.peek().cloned() {
                            Some(Tok::Str(s)) => {
                                self.pos += 1;
                                s
                            }
                            _ => return Err(self.error_here()),
                        };
                        if !valid_sqlstate(&code) {
                            return Err(PgError::syntax("invalid SQLSTATE code"));
                        }
                        Cond::Code(code)
                    } else {
                        match condition_code(&w) {
                            Some(c) => Cond::Code(c.to_string()),
                            None => {
                                return Err(PgError::new(
                                    sqlstate::UNDEFINED_OBJECT,
                                    format!("unrecognized exception condition \"{w}\""),
                                ))
                            }
                        }
                    };
                    conds.push(c);
                    if !self.eat_word("or") {
                        break;
                    }
                }
                self.expect_word("then")?;
                self.scopes.push(Scope {
                    label: None,
                    names: Vec::new(),
                });
                let sqlstate = self.new_slot("sqlstate", SlotType::Scalar(SqlType::Text));
                let sqlerrm = self.new_slot("sqlerrm", SlotType::Scalar(SqlType::Text));
                let body = self.stmts(&["when", "end"]);
                self.scopes.pop();
                handlers.push(Handler {
                    conds,
                    body: body?,
                    sqlstate,
                    sqlerrm,
                });
            }
            if handlers.is_empty() {
                return Err(self.error_here());
            }
        }
        self.expect_word("end")?;
        if let Some(Tok::Word(w) | Tok::Ident(w)) = self.peek().cloned() {
            if label.as_deref() == Some(w.as_str()) {
                self.pos += 1;
            } else if label.is_some() || self.peek() != Some(&Tok::Punct(';')) {
                return Err(PgError::syntax(format!(
                    "end label \"{w}\" differs from block's label \"{}\"",
                    label.clone().unwrap_or_default()
                )));
            }
        }
        Ok(Block {
            label,
            decls,
            body,
            handlers,
        })
    }

    /// Statements up to one starting with a word of `ends`.
    fn stmts(&mut self, ends: &[&str]) -> PgResult<Vec<Stmt>> {
        let mut v = Vec::new();
        loop {
            match self.peek_word() {
                Some(w) if ends.contains(&w) => return Ok(v),
                _ => {}
            }
            if self.peek().is_none() {
                return Err(self.error_here());
            }
            v.push(self.stmt()?);
        }
    }

    fn end_loop(&mut self, label: &Option<String>) -> PgResult<()> {
        self.expect_word("end")?;
        self.expect_word("loop")?;
        if let Some(Tok::Word(w) | Tok::Ident(w)) = self.peek().cloned() {
            if label.as_deref() != Some(w.as_str()) {
                return Err(PgError::syntax(format!(
                    "end label \"{w}\" differs from block's label \"{}\"",
                    label.clone().unwrap_or_default()
                )));
            }
            self.pos += 1;
        }
        self.expect_punct(';')
    }

    fn stmt(&mut self) -> PgResult<Stmt> {
        let line = self.line_at(self.pos);
        let label = self.label()?;
        let w = match self.peek().cloned() {
            Some(Tok::Word(w)) => w,
            Some(Tok::Ident(_)) => String::new(),
            _ => return Err(self.error_here()),
        };
        if label.is_some()
            && !matches!(
                w.as_str(),
                "declare" | "begin" | "loop" | "while" | "for" | "foreach"
            )
        {
            return Err(self.error_here());
        }
        let kind = match w.as_str() {
            "declare" | "begin" => {
                let b = self.block(label)?;
                self.expect_punct(';')?;
                StmtKind::Block(b)
            }
            "if" => {
                self.pos += 1;
                let mut arms = Vec::new();
                let (a, b) = self.scan(&["then"]);
                let c = self.expr(a, b)?;
                self.expect_word("then")?;
                let body = self.stmts(&["elsif", "elseif", "else", "end"])?;
                arms.push((c, body));
                let mut otherwise = Vec::new();
                loop {
                    if self.eat_word("elsif") || self.eat_word("elseif") {
                        let (a, b) = self.scan(&["then"]);
                        let c = self.expr(a, b)?;
                        self.expect_word("then")?;
                        let body = self.stmts(&["elsif", "elseif", "else", "end"])?;
                        arms.push((c, body));
                    } else if self.eat_word("else") {
                        otherwise = self.stmts(&["end"])?;
                    } else {
                        break;
                    }
                }
                self.expect_word("end")?;
                self.expect_word("if")?;
                self.expect_punct(';')?;
                StmtKind::If { arms, otherwise }
            }
            "case" => {
                self.pos += 1;
                let subject = if self.peek_word() == Some("when") {
                    None
                } else {
                    let (a, b) = self.scan(&["when"]);
                    let e = self.expr(a, b)?;
                    let slot = self.slots.len();
                    self.slots.push(SlotDef {
                        name: format!("__case {slot}"),
                        ty: SlotType::Dynamic,
                        constant: false,
                        not_null: false,
                        default: None,
                    });
                    Some((slot, e))
                };
                let mut arms = Vec::new();
                while self.eat_word("when") {
                    let (a, b) = self.scan(&["then"]);
                    if a >= b {
                        return Err(self.error_here());
                    }
                    let cond = match &subject {
                        None => self.expr(a, b)?,
                        Some((slot, _)) => {
                            let name = format!("__case {slot}");
                            if let Some(s) = self.scopes.last_mut() {
                                s.names.push((name.clone(), *slot));
                            }
                            let e = self
                                .sql_text(&format!("\"{name}\" IN ({})", self.text(a, b)), true);
                            if let Some(s) = self.scopes.last_mut() {
                                s.names.pop();
                            }
                            e?
                        }
                    };
                    self.expect_word("then")?;
                    let body = self.stmts(&["when", "else", "end"])?;
                    arms.push((cond, body));
                }
                if arms.is_empty() {
                    return Err(self.error_here());
                }
                let otherwise = if self.eat_word("else") {
                    Some(self.stmts(&["end"])?)
                } else {
                    None
                };
                self.expect_word("end")?;
                self.expect_word("case")?;
                self.expect_punct(';')?;
                StmtKind::Case {
                    subject,
                    arms,
                    otherwise,
                }
            }
            "loop" => {
                self.pos += 1;
                let body = self.stmts(&["end"])?;
                self.end_loop(&label)?;
                StmtKind::Loop { label, body }
            }
            "while" => {
                self.pos += 1;
                let (a, b) = self.scan(&["loop"]);
                let cond = self.expr(a, b)?;
                self.expect_word("loop")?;
                let body = self.stmts(&["end"])?;
                self.end_loop(&label)?;
                StmtKind::While { label, cond, body }
            }
            "for" => {
                self.pos += 1;
                self.for_loop(label)?
            }
            "foreach" => {
                self.pos += 1;
                self.foreach_loop(label)?
            }
            "exit" | "continue" => {
                self.pos += 1;
                let mut target = None;
                if let Some(Tok::Word(l) | Tok::Ident(l)) = self.peek().cloned() {
                    if l != "when" {
                        self.pos += 1;
                        target = Some(l);
                    }
                }
                let cond = if self.eat_word("when") {
                    let (a, b) = self.scan(&[]);
                    Some(self.expr(a, b)?)
                } else {
                    None
                };
                self.expect_punct(';')?;
                StmtKind::Exit {
                    cont: w == "continue",
                    label: target,
                    cond,
                }
            }
            "return" => {
                self.pos += 1;
                if self.eat_word("next") {
                    let (a, b) = self.scan(&[]);
                    self.expect_punct(';')?;
                    StmtKind::ReturnNext(if a < b { Some(self.expr(a, b)?) } else { None })
                } else if self.eat_word("query") {
                    let q = self.query_source(&[])?;
                    self.expect_punct(';')?;
                    StmtKind::ReturnQuery(q)
                } else {
                    let (a, b) = self.scan(&[]);
                    self.expect_punct(';')?;
                    StmtKind::Return(if a < b { Some(self.expr(a, b)?) } else { None })
                }
            }
            "raise" => {
                self.pos += 1;
                StmtKind::Raise(Box::new(self.raise()?))
            }
            "perform" => {
                self.pos += 1;
                let (a, b) = self.scan(&[]);
                if a >= b {
                    return Err(self.error_here());
                }
                self.expect_punct(';')?;
                let mut e = self.sql_text(&format!("SELECT {}", self.text(a, b)), false)?;
                e.text = format!("SELECT {}", self.text(a, b));
                StmtKind::Perform(e)
            }
            "execute" => {
                self.pos += 1;
                let (a, b) = self.scan(&["into", "using"]);
                let query = self.expr(a, b)?;
                let mut into = None;
                let mut using = Vec::new();
                loop {
                    if self.eat_word("into") {
                        into = Some(self.parse_into()?);
                    } else if self.eat_word("using") {
                        using = self.expr_list(&["into"])?;
                    } else {
                        break;
                    }
                }
                self.expect_punct(';')?;
                StmtKind::Execute { query, into, using }
            }
            "get" => {
                self.pos += 1;
                let stacked = self.eat_word("stacked");
                if !stacked {
                    self.eat_word("current");
                }
                self.expect_word("diagnostics")?;
                let mut items = Vec::new();
                loop {
                    let n = self.ident()?;
                    let Some(slot) = self.lookup(&n) else {
                        return Err(PgError::syntax(format!("\"{n}\" is not a known variable")));
                    };
                    if !self.eat_punct('=') {
                        self.expect_punct(':')?;
                        self.expect_punct('=')?;
                    }
                    let item = self.ident()?;
                    let ok = if stacked {
                        matches!(
                            item.as_str(),
                            "returned_sqlstate"
                                | "message_text"
                                | "pg_exception_detail"
                                | "pg_exception_hint"
                                | "pg_exception_context"
                                | "column_name"
                                | "constraint_name"
                                | "pg_datatype_name"
                                | "table_name"
                                | "schema_name"
                        )
                    } else {
                        matches!(item.as_str(), "row_count" | "pg_context")
                    };
                    if !ok {
                        return Err(PgError::syntax(format!(
                            "diagnostics item {} is not allowed in GET {} DIAGNOSTICS",
                            item.to_uppercase(),
                            if stacked { "STACKED" } else { "CURRENT" }
                        )));
                    }
                    items.push((slot, item));
                    if !self.eat_punct(',') {
                        break;
                    }
                }
                self.expect_punct(';')?;
                StmtKind::GetDiag { stacked, items }
            }
            "null" => {
                self.pos += 1;
                self.expect_punct(';')?;
                StmtKind::Null
            }
            "assert" => {
                self.pos += 1;
                let (a, b) = self.scan(&[","]);
                let cond = self.expr(a, b)?;
                let msg = if self.eat_punct(',') {
                    let (a, b) = self.scan(&[]);
                    Some(self.expr(a, b)?)
                } else {
                    None
                };
                self.expect_punct(';')?;
                StmtKind::Assert { cond, msg }
            }
            "open" => {
                self.pos += 1;
                self.open_stmt()?
            }
            "fetch" | "move" => {
                self.pos += 1;
                self.fetch_stmt(w == "fetch")?
            }
            "close" => {
                self.pos += 1;
                let c = self.cursor_ref()?;
                self.expect_punct(';')?;
                StmtKind::Close(c)
            }
            "commit" | "rollback" => {
                self.pos += 1;
                let commit = w == "commit";
                let mut chain = false;
                if self.eat_word("and") {
                    chain = !self.eat_word("no");
                    self.expect_word("chain")?;
                }
                self.expect_punct(';')?;
                StmtKind::EndTransaction { commit, chain }
            }
            "call" => {
                self.pos += 1;
                self.call_stmt()?
            }
            "select" | "insert" | "update" | "delete" | "with" | "values" | "table" | "merge"
            | "create" | "drop" | "alter" | "truncate" | "lock" | "grant" | "revoke"
            | "comment" | "analyze" | "vacuum" | "set" | "reset" | "show" | "notify" | "listen"
            | "copy" | "explain" | "savepoint" | "release" | "do" => self.sql_stmt()?,
            _ => self.assignment()?,
        };
        Ok(Stmt { line, kind })
    }

    fn assignment(&mut self) -> PgResult<StmtKind> {
        let at = self.pos;
        let name = self.ident()?;
        let Some(mut slot) = self.lookup(&name) else {
            self.pos = at;
            return Err(self.error_here());
        };
        let mut field = None;
        if self.eat_punct('.') {
            let f = self.ident()?;
            if self.slots[slot].ty == SlotType::Record {
                field = Some(f);
            } else if let Some(s) = self.lookup_in(&name, &f) {
                slot = s;
            } else {
                return Err(self.error_here());
            }
        }
        let assigns = self.eat_punct('=') || (self.eat_punct(':') && self.eat_punct('='));
        if !assigns {
            return Err(self.error_here());
        }
        if self.slots[slot].constant {
            return Err(PgError::syntax(format!(
                "variable \"{}\" is declared CONSTANT",
                self.slots[slot].name
            )));
        }
        let (a, b) = self.scan(&[]);
        let expr = self.expr(a, b)?;
        self.expect_punct(';')?;
        Ok(StmtKind::Assign { slot, field, expr })
    }

    /// An embedded SQL statement up to `;`, with its INTO clause cut out.
    fn sql_stmt(&mut self) -> PgResult<StmtKind> {
        let a = self.pos;
        let (_, b) = self.scan(&[]);
        self.expect_punct(';')?;
        let first = self.peek_word_at(a);
        let mut into_at = None;
        let mut depth = 0i32;
        let mut seen_returning = false;
        for i in a..b {
            match self.tok_at(i) {
                Some(Tok::Punct('(')) => depth += 1,
                Some(Tok::Punct(')')) => depth -= 1,
                Some(Tok::Word(w)) if depth == 0 && w == "returning" => seen_returning = true,
                Some(Tok::Word(w)) if depth == 0 && w == "into" => {
                    let dml = matches!(first, Some("insert" | "update" | "delete" | "merge"));
                    if !dml || seen_returning {
                        into_at = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(i) = into_at else {
            let sql = self.sql_text(self.text(a, b), false)?;
            return Ok(StmtKind::Sql { sql, into: None });
        };
        let save = self.pos;
        self.pos = i + 1;
        let into = self.parse_into()?;
        let after = self.pos;
        self.pos = save;
        let text = format!("{} {}", self.text(a, i), self.text(after, b));
        let sql = self.sql_text(&text, false)?;
        Ok(StmtKind::Sql {
            sql,
            into: Some(into),
        })
    }

    /// `CALL name(args);` after CALL.
    fn call_stmt(&mut self) -> PgResult<StmtKind> {
        let a = self.pos;
        let (_, b) = self.scan(&[]);
        let open = (a..b).find(|&i| self.tok_at(i) == Some(&Tok::Punct('(')));
        let (Some(open), Some(Tok::Punct(')'))) = (open, self.tok_at(b.wrapping_sub(1))) else {
            return Err(self.error_here());
        };
        self.expect_punct(';')?;
        let name = self.text(a, open);
        let close = b - 1;
        // Each argument's token range, split at the commas outside brackets.
        let mut items = Vec::new();
        let (mut depth, mut start) = (0i32, open + 1);
        for i in open + 1..close {
            match self.tok_at(i) {
                Some(Tok::Punct('(' | '[')) => depth += 1,
                Some(Tok::Punct(')' | ']')) => depth -= 1,
                Some(Tok::Punct(',')) if depth == 0 => {
                    items.push((start, i));
                    start = i + 1;
                }
                _ => {}
            }
        }
        if start < close {
            items.push((start, close));
        }
        let mut args = Vec::with_capacity(items.len());
        for (s, e) in items {
            let named = match (self.tok_at(s), self.tok_at(s + 1), self.tok_at(s + 2)) {
                (
                    Some(Tok::Word(n) | Tok::Ident(n)),
                    Some(Tok::Punct('=' | ':')),
                    Some(Tok::Punct('>' | '=')),
                ) => Some(n.clone()),
                _ => None,
            };
            let v = if named.is_some() { s + 3 } else { s };
            let target = match self.tok_at(v) {
                Some(Tok::Word(n) | Tok::Ident(n)) if v + 1 == e => self
                    .lookup(n)
                    .filter(|&slot| self.slots[slot].ty != SlotType::Record),
                _ => None,
            };
            args.push(CallArg {
                name: named,
                target,
            });
        }
        let text = crate::spi::call_query(name, self.text(open + 1, close));
        let sql = self.sql_text(&text, false)?;
        Ok(StmtKind::Call { sql, args })
    }

    fn peek_word_at(&self, i: usize) -> Option<&str> {
        match self.tok_at(i) {
            Some(Tok::Word(w)) => Some(w.as_str()),
            _ => None,
        }
    }

    /// `[STRICT] target [, target]…` after INTO.
    fn parse_into(&mut self) -> PgResult<IntoClause> {
        let strict = self.eat_word("strict");
        let mut slots = Vec::new();
        loop {
            let n = self.ident()?;
            let Some(s) = self.lookup(&n) else {
                return Err(PgError::syntax(format!("\"{n}\" is not a known variable")));
            };
            slots.push(s);
            if !self.eat_punct(',') {
                break;
            }
        }
        let targets = match slots.as_slice() {
            [s] if self.slots[*s].ty == SlotType::Record => Targets::Record(*s),
            _ => {
                if slots.iter().any(|s| self.slots[*s].ty == SlotType::Record) {
                    return Err(PgError::syntax(
                        "record variable cannot be part of multiple-item INTO list",
                    ));
                }
                Targets::Scalars(slots)
            }
        };
        Ok(IntoClause { strict, targets })
    }

    /// Comma-separated expressions up to `;` or a word of `stops`.
    fn expr_list(&mut self, stops: &[&str]) -> PgResult<Vec<PExpr>> {
        let mut v = Vec::new();
        let mut s: Vec<&str> = stops.to_vec();
        s.push(",");
        loop {
            let (a, b) = self.scan(&s);
            v.push(self.expr(a, b)?);
            if !self.eat_punct(',') {
                return Ok(v);
            }
        }
    }

    /// A query (to `;` or a word of `stops`) or EXECUTE expr [USING …].
    fn query_source(&mut self, stops: &[&str]) -> PgResult<Query> {
        if self.eat_word("execute") {
            let mut s: Vec<&str> = stops.to_vec();
            s.push("using");
            let (a, b) = self.scan(&s);
            let query = self.expr(a, b)?;
            let using = if self.eat_word("using") {
                self.expr_list(stops)?
            } else {
                Vec::new()
            };
            return Ok(Query::Dynamic { query, using });
        }
        let (a, b) = self.scan(stops);
        if a >= b {
            return Err(self.error_here());
        }
        Ok(Query::Static(self.sql_text(self.text(a, b), false)?))
    }

    /// A cursor declaration after its name, if one comes (`[NO] SCROLL
    /// CURSOR [(args)] FOR | IS query;` or `refcursor;`): its variable's
    /// slot, the `;` consumed.
    fn cursor_decl(&mut self, name: &str) -> PgResult<Option<usize>> {
        if self.eat_word("refcursor") {
            self.expect_punct(';')?;
            let slot = self.new_slot(name, SlotType::Scalar(SqlType::Refcursor));
            self.cursors.push(CursorDef {
                slot,
                args: Vec::new(),
                query: None,
                no_scroll: false,
            });
            return Ok(Some(slot));
        }
        let start = self.pos;
        let no_scroll = self.scroll_option();
        if !self.eat_word("cursor") {
            self.pos = start;
            return Ok(None);
        }
        // The arguments are variables of the cursor's query only.
        self.scopes.push(Scope {
            label: None,
            names: Vec::new(),
        });
        let r = (|| {
            let mut args = Vec::new();
            if self.eat_punct('(') {
                loop {
                    let arg = self.ident()?;
                    let ty = self.type_until(&[",", ")"])?;
                    args.push(self.new_slot(&arg, ty));
                    if self.eat_punct(')') {
                        break;
                    }
                    self.expect_punct(',')?;
                }
            }
            if !self.eat_word("for") {
                self.expect_word("is")?;
            }
            let (a, b) = self.scan(&[]);
            if a >= b {
                return Err(self.error_here());
            }
            let query = Query::Static(self.sql_text(self.text(a, b), false)?);
            Ok((args, query))
        })();
        self.scopes.pop();
        let (args, query) = r?;
        self.expect_punct(';')?;
        let slot = self.new_slot(name, SlotType::Scalar(SqlType::Text));
        // A bound cursor's portal is named after its variable.
        let quoted = format!("'{}'", name.replace('\'', "''"));
        self.slots[slot].default = Some(self.sql_text(&quoted, true)?);
        self.cursors.push(CursorDef {
            slot,
            args,
            query: Some(query),
            no_scroll,
        });
        Ok(Some(slot))
    }

    /// `[NO] SCROLL`, if it comes: true for NO SCROLL.
    fn scroll_option(&mut self) -> bool {
        let no = self.peek_word() == Some("no")
            && matches!(self.tok_at(self.pos + 1), Some(Tok::Word(w)) if w == "scroll");
        if no {
            self.pos += 2;
        } else {
            self.eat_word("scroll");
        }
        no
    }

    /// The cursor variable the next identifier names, if it is one (not
    /// consumed).
    fn cursor_named_here(&self) -> Option<usize> {
        let n = match self.peek()? {
            Tok::Word(w) | Tok::Ident(w) => w,
            _ => return None,
        };
        let slot = self.lookup(n)?;
        self.cursors.iter().position(|c| c.slot == slot)
    }

    /// A cursor variable's name: its index in `cursors`.
    fn cursor_ref(&mut self) -> PgResult<usize> {
        let at = self.pos;
        let n = self.ident()?;
        match self.lookup(&n) {
            None => Err(PgError::syntax(format!("\"{n}\" is not a known variable"))),
            Some(slot) => match self.cursors.iter().position(|c| c.slot == slot) {
                Some(c) => Ok(c),
                // A refcursor parameter (or other refcursor variable) is
                // an unbound cursor.
                None if self.slots[slot].ty == SlotType::Scalar(SqlType::Refcursor) => {
                    self.cursors.push(CursorDef {
                        slot,
                        args: Vec::new(),
                        query: None,
                        no_scroll: false,
                    });
                    Ok(self.cursors.len() - 1)
                }
                None => {
                    self.pos = at;
                    Err(self.error_here())
                }
            },
        }
    }

    /// `(expr, …)` after a bound cursor's name, checked against its
    /// parameter count; empty when none is given.
    fn cursor_args(&mut self, cursor: usize) -> PgResult<Vec<PExpr>> {
        let want = self.cursors[cursor].args.len();
        let name = self.slots[self.cursors[cursor].slot].name.clone();
        let mut args = Vec::new();
        if self.eat_punct('(') {
            loop {
                let start = self.pos;
                let mut depth = 0i32;
                while let Some(t) = self.peek() {
                    match t {
                        Tok::Punct('(' | '[') => depth += 1,
                        Tok::Punct(')') if depth == 0 => break,
                        Tok::Punct(')' | ']') => depth -= 1,
                        Tok::Punct(',') if depth == 0 => break,
                        Tok::Punct(';') => break,
                        _ => {}
                    }
                    self.pos += 1;
                }
                args.push(self.expr(start, self.pos)?);
                if self.eat_punct(')') {
                    break;
                }
                self.expect_punct(',')?;
            }
        }
        if self.cursors[cursor].query.is_some() && args.len() != want {
            let what = if args.len() < want {
                "not enough"
            } else {
                "too many"
            };
            return Err(PgError::syntax(format!(
                "{what} arguments for cursor \"{name}\""
            )));
        }
        if self.cursors[cursor].query.is_none() && !args.is_empty() {
            return Err(self.error_here());
        }
        Ok(args)
    }

    /// OPEN, its keyword consumed.
    fn open_stmt(&mut self) -> PgResult<StmtKind> {
        let cursor = self.cursor_ref()?;
        if self.cursors[cursor].query.is_some() {
            let args = self.cursor_args(cursor)?;
            self.expect_punct(';')?;
            return Ok(StmtKind::Open {
                cursor,
                args,
                query: None,
                no_scroll: self.cursors[cursor].no_scroll,
            });
        }
        let no_scroll = self.scroll_option();
        self.expect_word("for")?;
        let query = self.query_source(&[])?;
        self.expect_punct(';')?;
        Ok(StmtKind::Open {
            cursor,
            args: Vec::new(),
            query: Some(query),
            no_scroll,
        })
    }

    /// FETCH / MOVE, the keyword consumed.
    fn fetch_stmt(&mut self, fetch: bool) -> PgResult<StmtKind> {
        let count = |p: &mut Self| -> PgResult<PExpr> {
            let (a, b) = p.scan(&["from", "in"]);
            p.expr(a, b)
        };
        let dir = match self.peek_word() {
            Some("next") => Some(Direction::Next),
            Some("prior") => Some(Direction::Prior),
            Some("first") => Some(Direction::First),
            Some("last") => Some(Direction::Last),
            Some("absolute") => {
                self.pos += 1;
                Some(Direction::Absolute(count(self)?))
            }
            Some("relative") => {
                self.pos += 1;
                Some(Direction::Relative(count(self)?))
            }
            Some(w @ ("forward" | "backward")) => {
                let forward = w == "forward";
                self.pos += 1;
                let n = if self.eat_word("all") {
                    None
                } else if matches!(self.peek_word(), Some("from" | "in")) {
                    Some(self.sql_text("1", true)?)
                } else {
                    Some(count(self)?)
                };
                Some(if forward {
                    Direction::Forward(n)
                } else {
                    Direction::Backward(n)
                })
            }
            _ => None,
        };
        let dir = match dir {
            Some(d) => {
                if matches!(
                    d,
                    Direction::Next | Direction::Prior | Direction::First | Direction::Last
                ) {
                    self.pos += 1;
                }
                if !self.eat_word("from") {
                    self.expect_word("in")?;
                }
                d
            }
            None => {
                // FROM / IN may also come without a direction.
                if !self.eat_word("from") {
                    self.eat_word("in");
                }
                Direction::Next
            }
        };
        let cursor = self.cursor_ref()?;
        let into = if fetch {
            self.expect_word("into")?;
            let i = self.parse_into()?;
            if i.strict {
                return Err(self.error_here());
            }
            if matches!(dir, Direction::Forward(None) | Direction::Backward(None)) {
                return Err(PgError::syntax(
                    "FETCH statement cannot return multiple rows",
                ));
            }
            Some(i.targets)
        } else {
            None
        };
        self.expect_punct(';')?;
        Ok(StmtKind::Fetch { cursor, dir, into })
    }

    /// `FOR rec IN cursor [(args)] LOOP … END LOOP`, after `IN`; `rec` is
    /// declared by the loop as a record.
    fn for_cursor(&mut self, label: Option<String>, rec: &str, _c: usize) -> PgResult<StmtKind> {
        let cursor = self.cursor_ref()?;
        if self.cursors[cursor].query.is_none() {
            return Err(PgError::syntax(
                "cursor FOR loop must use a bound cursor variable",
            ));
        }
        let args = self.cursor_args(cursor)?;
        self.expect_word("loop")?;
        let (rec, body) = self.loop_with_var(&label, rec, SlotType::Record)?;
        Ok(StmtKind::ForCursor {
            label,
            rec,
            cursor,
            args,
            body,
        })
    }

    /// A loop's body up to `END LOOP [label]`, in a scope of its own
    /// where the loop declares variable `name`: its slot and the body.
    fn loop_with_var(
        &mut self,
        label: &Option<String>,
        name: &str,
        ty: SlotType,
    ) -> PgResult<(usize, Vec<Stmt>)> {
        self.scopes.push(Scope {
            label: label.clone(),
            names: Vec::new(),
        });
        let var = self.new_slot(name, ty);
        let body = self.stmts(&["end"]);
        self.scopes.pop();
        let body = body?;
        self.end_loop(label)?;
        Ok((var, body))
    }

    fn for_loop(&mut self, label: Option<String>) -> PgResult<StmtKind> {
        let mut names = vec![self.ident()?];
        while self.eat_punct(',') {
            names.push(self.ident()?);
        }
        self.expect_word("in")?;
        if let (1, Some(c)) = (names.len(), self.cursor_named_here()) {
            return self.for_cursor(label, &names[0], c);
        }
        let is_query = matches!(
            self.peek_word(),
            Some("select" | "with" | "values" | "table" | "execute")
        ) || (self.peek() == Some(&Tok::Punct('('))
            && matches!(
                self.peek_word_at(self.pos + 1),
                Some("select" | "with" | "values")
            ));
        if is_query {
            let query = self.query_source(&["loop"])?;
            self.expect_word("loop")?;
            let mut slots = Vec::new();
            for n in &names {
                let Some(s) = self.lookup(n) else {
                    return Err(PgError::syntax(
                        "loop variable of loop over rows must be a record variable or list of scalar variables",
                    ));
                };
                slots.push(s);
            }
            let targets = match slots.as_slice() {
                [s] if self.slots[*s].ty == SlotType::Record => Targets::Record(*s),
                _ => Targets::Scalars(slots),
            };
            let body = self.stmts(&["end"])?;
            self.end_loop(&label)?;
            return Ok(StmtKind::ForQuery {
                label,
                targets,
                query,
                body,
            });
        }
        if names.len() != 1 {
            return Err(PgError::syntax(
                "integer FOR loop must have only one target variable",
            ));
        }
        let reverse = self.eat_word("reverse");
        let (a, b) = self.scan(&["loop"]);
        let text = self.text(a, b);
        let Some(dots) = find_range_dots(text) else {
            return Err(self.error_here());
        };
        let lower = &text[..dots];
        let rest = &text[dots + 2..];
        let (upper, step) = match find_word(rest, "by")? {
            Some((s, e)) => (&rest[..s], Some(&rest[e..])),
            None => (rest, None),
        };
        if lower.trim().is_empty() || upper.trim().is_empty() {
            return Err(self.error_here());
        }
        let from = self.sql_text(lower, true)?;
        let to = self.sql_text(upper, true)?;
        let step = match step {
            Some(s) if s.trim().is_empty() => return Err(self.error_here()),
            Some(s) => Some(self.sql_text(s, true)?),
            None => None,
        };
        self.expect_word("loop")?;
        let (var, body) = self.loop_with_var(&label, &names[0], SlotType::Scalar(SqlType::Int4))?;
        Ok(StmtKind::ForInt {
            label,
            var,
            reverse,
            from,
            to,
            step,
            body,
        })
    }

    /// `FOREACH var [SLICE n] IN ARRAY expr LOOP … END LOOP` after FOREACH.
    fn foreach_loop(&mut self, label: Option<String>) -> PgResult<StmtKind> {
        let at = self.pos;
        let name = self.ident()?;
        let Some(var) = self.lookup(&name) else {
            self.pos = at;
            return Err(self.error_here());
        };
        if self.slots[var].ty == SlotType::Record {
            return Err(PgError::unsupported(
                "FOREACH over an array of records is not supported",
            ));
        }
        let slice = if self.eat_word("slice") {
            match self.peek().cloned() {
                Some(Tok::Num(n)) => {
                    self.pos += 1;
                    n.parse::<u32>().map_err(|_| self.error_here())?
                }
                _ => return Err(self.error_here()),
            }
        } else {
            0
        };
        self.expect_word("in")?;
        self.expect_word("array")?;
        let (a, b) = self.scan(&["loop"]);
        let array = self.expr(a, b)?;
        self.expect_word("loop")?;
        let body = self.stmts(&["end"])?;
        self.end_loop(&label)?;
        Ok(StmtKind::ForEach {
            label,
            var,
            slice,
            array,
            body,
        })
    }

    fn raise(&mut self) -> PgResult<Raise> {
        let mut r = Raise {
            level: Level::Exception,
            reraise: false,
            code: None,
            condname: None,
            fmt: None,
            args: Vec::new(),
            options: Vec::new(),
        };
        if self.eat_punct(';') {
            r.reraise = true;
            return Ok(r);
        }
        let level = match self.peek_word() {
            Some("debug" | "log") => Some(Level::Debug),
            Some("info") => Some(Level::Info),
            Some("notice") => Some(Level::Notice),
            Some("warning") => Some(Level::Warning),
            Some("exception") => Some(Level::Exception),
            _ => None,
        };
        if let Some(l) = level {
            self.pos += 1;
            r.level = l;
        }
        match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.pos += 1;
                let want = count_placeholders(&s);
                r.fmt = Some(s);
                while self.eat_punct(',') {
                    let (a, b) = self.scan(&["using", ","]);
                    r.args.push(self.expr(a, b)?);
                }
                if r.args.len() < want {
                    return Err(PgError::syntax("too few parameters specified for RAISE"));
                }
                if r.args.len() > want {
                    return Err(PgError::syntax("too many parameters specified for RAISE"));
                }
            }
            Some(Tok::Word(w)) if w == "sqlstate" => {
                self.pos += 1;
                let code = match self.peek().cloned() {
                    Some(Tok::Str(s)) => {
                        self.pos += 1;
                        s
                    }
                    _ => return Err(self.error_here()),
                };
                if !valid_sqlstate(&code) {
                    return Err(PgError::syntax("invalid SQLSTATE code"));
                }
                r.condname = Some(code.clone());
                r.code = Some(code);
            }
            Some(Tok::Word(w)) if w != "using" => {
                self.pos += 1;
                let Some(c) = condition_code(&w) else {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("unrecognized exception condition \"{w}\""),
                    ));
                };
                r.code = Some(c.to_string());
                r.condname = Some(w);
            }
            _ => {}
        }
        if self.eat_word("using") {
            loop {
                let opt = self.ident()?;
                if !matches!(
                    opt.as_str(),
                    "message"
                        | "detail"
                        | "hint"
                        | "errcode"
                        | "column"
                        | "constraint"
                        | "datatype"
                        | "table"
                        | "schema"
                ) {
                    return Err(PgError::syntax(format!(
                        "unrecognized RAISE statement option \"{opt}\""
                    )));
                }
                if !self.eat_punct('=') {
                    self.expect_punct(':')?;
                    self.expect_punct('=')?;
                }
                let (a, b) = self.scan(&[","]);
                let e = self.expr(a, b)?;
                if r.options.iter().any(|(o, _)| *o == opt) {
                    return Err(PgError::syntax(format!(
                        "RAISE option already specified: {}",
                        opt.to_uppercase()
                    )));
                }
                r.options.push((opt, e));
                if !self.eat_punct(',') {
                    break;
                }
            }
        }
        self.expect_punct(';')?;
        Ok(r)
    }
}

/// The `%` placeholders of a RAISE format (`%%` is a literal `%`).
pub fn count_placeholders(fmt: &str) -> usize {
    let b = fmt.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if b.get(i + 1) == Some(&b'%') {
                i += 2;
                continue;
            }
            n += 1;
        }
        i += 1;
    }
    n
}

/// The byte offset of the first `..` outside quotes and parentheses.
fn find_range_dots(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    while i + 1 < b.len() {
        match b[i] {
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
            }
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'.' if depth == 0 && b[i + 1] == b'.' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The byte range of the word `w` at depth 0 in `text`.
fn find_word(text: &str, w: &str) -> PgResult<Option<(usize, usize)>> {
    let toks = lex_spans(text)?;
    let mut depth = 0i32;
    for (t, s, e) in toks {
        match t {
            Tok::Punct('(' | '[') => depth += 1,
            Tok::Punct(')' | ']') => depth -= 1,
            Tok::Word(x) if depth == 0 && x == w => return Ok(Some((s, e))),
            _ => {}
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(body: &str) -> PgResult<Compiled> {
        compile_inline(body)
    }

    #[test]
    fn compiles_the_seed_function_shape() {
        let x = c("BEGIN FOR x in 1..10 LOOP EXECUTE 'SELECT 1'; END LOOP; RETURN; END;").unwrap();
        assert_eq!(x.body.body.len(), 2);
        let StmtKind::ForInt { from, to, .. } = &x.body.body[0].kind else {
            panic!("not a FOR");
        };
        assert_eq!(from.sql, "SELECT 1");
        assert_eq!(to.sql, "SELECT 10");
    }

    #[test]
    fn rewrites_variables() {
        let x = c("DECLARE a int := 1; r record; BEGIN a := a + r.f + length('a'); END").unwrap();
        let StmtKind::Assign { expr, .. } = &x.body.body[0].kind else {
            panic!("not an assignment");
        };
        assert_eq!(expr.sql, "SELECT $1 + $2 + length('a')");
        assert_eq!(expr.params.len(), 2);
        assert_eq!(expr.params[1].field.as_deref(), Some("f"));
    }

    #[test]
    fn syntax_errors_carry_the_line() {
        let e = c("BEGIN\n  LOP\nEND").unwrap_err();
        assert_eq!(e.code, sqlstate::SYNTAX_ERROR);
        assert!(e.context().unwrap_or("").ends_with("near line 2"));
        assert!(c("BEGIN RAISE NOTICE '% %', 1; END").is_err());
        assert!(c("BEGIN IF true THEN NULL; END").is_err());
        assert!(c("").is_err());
        assert!(c("BEGIN $$").is_err());
    }

    #[test]
    fn rowtype_and_foreach() {
        let x = c("DECLARE r public.t%ROWTYPE; a int[]; v int;
                   BEGIN <<l>> FOREACH v SLICE 0 IN ARRAY a LOOP r.id := v; END LOOP l; END")
        .unwrap();
        assert_eq!(x.rowtypes, vec![(1, "public.t".to_string())]);
        assert_eq!(x.slots[1].ty, SlotType::Record);
        let StmtKind::ForEach { var, slice, .. } = &x.body.body[0].kind else {
            panic!("not a FOREACH");
        };
        assert_eq!((*var, *slice), (3, 0));
        assert!(c("DECLARE v int; BEGIN FOREACH w IN ARRAY '{}' LOOP END LOOP; END").is_err());
        assert!(c("DECLARE v int; BEGIN FOREACH v IN '{}' LOOP END LOOP; END").is_err());
    }

    #[test]
    fn ranges_split_on_text() {
        assert_eq!(find_range_dots("1..p_loop"), Some(1));
        assert_eq!(find_range_dots("f('..')..3"), Some(7));
        assert_eq!(count_placeholders("a % b %% c %"), 2);
    }
}
