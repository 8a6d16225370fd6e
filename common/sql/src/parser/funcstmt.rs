//! CREATE [OR REPLACE] FUNCTION / PROCEDURE, DROP FUNCTION / PROCEDURE,
//! DO and CALL as the parser's keyword pre-dispatch reads them (sqlparser
//! 0.52 lacks SETOF, TABLE (…) results, DO and PostgreSQL's option
//! order); `crate::functioncmds` runs them.
//!
//! Types are kept as the text written (resolved when the statement runs,
//! so a cached parse never holds a stale enum OID); a function body and a
//! DO block are the string literal's value (plain or dollar-quoted).

use super::{Cur, Tok};
use pgtypes::error::{sqlstate, PgError, PgResult};

/// A parameter's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgMode {
    /// IN (the default).
    In,
    /// OUT.
    Out,
    /// INOUT.
    InOut,
    /// VARIADIC.
    Variadic,
}

/// One parameter as written.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgDef {
    /// The mode.
    pub mode: ArgMode,
    /// The name, if any.
    pub name: Option<String>,
    /// The type's text.
    pub ty: String,
    /// DEFAULT (or `=`) expression's text.
    pub default: Option<String>,
}

/// RETURNS as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Returns {
    /// `RETURNS [SETOF] type`.
    Type {
        /// SETOF.
        setof: bool,
        /// The type's text.
        ty: String,
    },
    /// `RETURNS TABLE (name type, …)`.
    Table(Vec<(String, String)>),
}

/// CREATE [OR REPLACE] FUNCTION | PROCEDURE.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateFunction {
    /// OR REPLACE.
    pub or_replace: bool,
    /// PROCEDURE rather than FUNCTION.
    pub procedure: bool,
    /// The schema it is created in, when qualified.
    pub schema: Option<String>,
    /// The name.
    pub name: String,
    /// The parameters.
    pub args: Vec<ArgDef>,
    /// RETURNS, if given.
    pub returns: Option<Returns>,
    /// LANGUAGE (lower-cased).
    pub language: Option<String>,
    /// IMMUTABLE (`i`), STABLE (`s`) or VOLATILE (`v`).
    pub volatility: Option<u8>,
    /// STRICT / RETURNS NULL ON NULL INPUT (true), CALLED ON NULL INPUT.
    pub strict: Option<bool>,
    /// SECURITY DEFINER.
    pub security_definer: bool,
    /// SET clauses, in order.
    pub config: Vec<FuncSet>,
    /// AS 'body'.
    pub body: Option<String>,
}

/// A SET / RESET clause of CREATE / ALTER FUNCTION (proconfig).
#[derive(Debug, Clone, PartialEq)]
pub enum FuncSet {
    /// SET name = value | TO value: the value as PostgreSQL flattens it
    /// (list items joined by `, `; None: DEFAULT, which removes it).
    Set(String, Option<String>),
    /// SET name FROM CURRENT: the session's value when the statement runs.
    FromCurrent(String),
    /// RESET name.
    Reset(String),
    /// RESET ALL.
    ResetAll,
}

/// `name = value | TO value | FROM CURRENT` after SET (PostgreSQL's
/// `set_rest_more` with `flatten_set_variable_args`): string constants and
/// names as text, a list joined by `, `, each item of a list setting
/// (search_path) quoted as an identifier when it needs it.
fn set_clause(c: &mut Cur<'_>) -> PgResult<FuncSet> {
    let mut name = c.one_ident()?;
    while c.eat_punct('.') {
        name = format!("{name}.{}", c.one_ident()?);
    }
    if c.eat_word("from") {
        c.expect_word("current")?;
        return Ok(FuncSet::FromCurrent(name));
    }
    if !c.eat_punct('=') {
        c.expect_word("to")?;
    }
    if c.eat_word("default") {
        return Ok(FuncSet::Set(name, None));
    }
    let list_quote = matches!(name.as_str(), "search_path" | "temp_tablespaces");
    let mut items = Vec::new();
    loop {
        let neg = c.eat_punct('-');
        let item = match c.peek().cloned() {
            Some(Tok::Str(s)) | Some(Tok::Ident(s)) | Some(Tok::Word(s)) => {
                c.pos += 1;
                if list_quote {
                    quote_ident(&s)
                } else {
                    s
                }
            }
            Some(Tok::Num(n)) => {
                c.pos += 1;
                if neg {
                    format!("-{n}")
                } else {
                    n
                }
            }
            _ => return Err(c.error_here()),
        };
        items.push(item);
        if !c.eat_punct(',') {
            break;
        }
    }
    Ok(FuncSet::Set(name, Some(items.join(", "))))
}

/// PostgreSQL's `quote_identifier`: as is when it needs no quotes.
fn quote_ident(s: &str) -> String {
    let plain = s
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// A function named in DROP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuncRef {
    /// The schema, when qualified.
    pub schema: Option<String>,
    /// The name.
    pub name: String,
    /// The argument types' text (None: no list given).
    pub args: Option<Vec<String>>,
}

/// A statement of this module.
#[derive(Debug, Clone, PartialEq)]
pub enum FuncStmt {
    /// CREATE FUNCTION / PROCEDURE.
    Create(CreateFunction),
    /// DROP FUNCTION / PROCEDURE [IF EXISTS] f[(types)], … [CASCADE | RESTRICT].
    Drop {
        /// PROCEDURE.
        procedure: bool,
        /// IF EXISTS.
        if_exists: bool,
        /// The functions.
        items: Vec<FuncRef>,
        /// CASCADE (drops the triggers that use them).
        cascade: bool,
    },
    /// DO [LANGUAGE l] 'code'.
    Do {
        /// The block's source.
        body: String,
        /// LANGUAGE (default plpgsql).
        language: String,
    },
    /// ALTER FUNCTION | PROCEDURE | ROUTINE f[(types)] action.
    Alter {
        /// PROCEDURE (None: ROUTINE, either kind).
        procedure: Option<bool>,
        /// The function.
        item: FuncRef,
        /// What changes.
        action: AlterFunction,
    },
    /// CALL p(args): the call's text after CALL, run as a function call.
    Call {
        /// The procedure.
        name: String,
        /// The argument list's text (between the parentheses).
        args: String,
    },
}

impl FuncStmt {
    /// The command tag.
    pub fn tag(&self) -> &'static str {
        match self {
            FuncStmt::Create(c) if c.procedure => "CREATE PROCEDURE",
            FuncStmt::Create(_) => "CREATE FUNCTION",
            FuncStmt::Drop {
                procedure: true, ..
            } => "DROP PROCEDURE",
            FuncStmt::Drop { .. } => "DROP FUNCTION",
            FuncStmt::Alter {
                procedure: Some(true),
                ..
            } => "ALTER PROCEDURE",
            FuncStmt::Alter {
                procedure: Some(false),
                ..
            } => "ALTER FUNCTION",
            FuncStmt::Alter { .. } => "ALTER ROUTINE",
            FuncStmt::Do { .. } => "DO",
            FuncStmt::Call { .. } => "CALL",
        }
    }
}

/// True if the statement is one of this module's.
pub(crate) fn is_function_statement(c: &Cur<'_>) -> bool {
    let w = |i| c.peek_word_at(i);
    match w(0) {
        Some("create") => {
            matches!(w(1), Some("function" | "procedure"))
                || (w(1) == Some("or")
                    && w(2) == Some("replace")
                    && matches!(w(3), Some("function" | "procedure")))
        }
        Some("drop") => matches!(w(1), Some("function" | "procedure")),
        Some("do") | Some("call") => true,
        Some("alter") => matches!(w(1), Some("function" | "procedure" | "routine")),
        _ => false,
    }
}

fn redundant() -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, "conflicting or redundant options")
}

fn once<T>(slot: &mut Option<T>, v: T) -> PgResult<()> {
    if slot.is_some() {
        return Err(redundant());
    }
    *slot = Some(v);
    Ok(())
}

/// Parses one of this module's statements.
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<FuncStmt> {
    match c.peek_word() {
        Some("do") => {
            c.pos += 1;
            let mut language = None;
            let mut body = None;
            while !c.at_end() {
                if c.eat_word("language") {
                    once(&mut language, lang_name(c)?)?;
                } else {
                    once(&mut body, c.string()?)?;
                }
            }
            let Some(body) = body else {
                return Err(PgError::syntax("no inline code specified"));
            };
            Ok(FuncStmt::Do {
                body,
                language: language.unwrap_or_else(|| "plpgsql".into()),
            })
        }
        Some("call") => {
            c.pos += 1;
            let name = c.relation_name()?;
            let open = c.pos;
            if !c.eat_punct('(') {
                return Err(c.error_here());
            }
            let close = skip_to_close(c)?;
            let args = c.text_between(open + 1, close).to_string();
            c.pos = close + 1;
            c.expect_end()?;
            Ok(FuncStmt::Call { name, args })
        }
        Some("drop") => {
            c.pos += 1;
            let procedure = c.eat_word("procedure");
            if !procedure {
                c.expect_word("function")?;
            }
            let if_exists = c.eat_if_exists()?;
            let mut items = Vec::new();
            loop {
                items.push(func_ref(c)?);
                if !c.eat_punct(',') {
                    break;
                }
            }
            let cascade = c.eat_word("cascade");
            if !cascade {
                let _ = c.eat_word("restrict");
            }
            c.expect_end()?;
            Ok(FuncStmt::Drop {
                procedure,
                if_exists,
                items,
                cascade,
            })
        }
        Some("alter") => alter(c),
        _ => create(c).map(FuncStmt::Create),
    }
}

/// What ALTER FUNCTION changes.
#[derive(Clone, Debug, PartialEq)]
pub enum AlterFunction {
    /// RENAME TO name.
    Rename(String),
    /// OWNER TO role.
    Owner(String),
    /// SET SCHEMA schema.
    SetSchema(String),
    /// Options: volatility (`i`, `s`, `v`), strictness and security,
    /// each if given, and SET / RESET clauses.
    Options {
        /// IMMUTABLE / STABLE / VOLATILE.
        volatility: Option<u8>,
        /// STRICT / RETURNS NULL ON NULL INPUT (true), CALLED ON NULL
        /// INPUT (false).
        strict: Option<bool>,
        /// SECURITY DEFINER (true) / INVOKER (false).
        security: Option<bool>,
        /// SET / RESET clauses, in order.
        config: Vec<FuncSet>,
    },
}

/// `name [(types)]` of DROP and ALTER FUNCTION (OUT arguments left out).
/// `name` or `schema.name`.
fn qualified_name(c: &mut Cur<'_>) -> PgResult<(Option<String>, String)> {
    let mut parts = vec![c.one_ident()?];
    while c.eat_punct('.') {
        parts.push(c.one_ident()?);
    }
    match parts.as_slice() {
        [n] => Ok((None, n.clone())),
        [s, n] => Ok((Some(s.clone()), n.clone())),
        _ => Err(PgError::syntax(
            "improper qualified name (too many dotted names)",
        )),
    }
}

pub(super) fn func_ref(c: &mut Cur<'_>) -> PgResult<FuncRef> {
    let (schema, name) = qualified_name(c)?;
    let args = if c.eat_punct('(') {
        let mut v = Vec::new();
        if !c.eat_punct(')') {
            loop {
                let a = arg_def(c)?;
                if a.mode != ArgMode::Out {
                    v.push(a.ty);
                }
                if c.eat_punct(')') {
                    break;
                }
                if !c.eat_punct(',') {
                    return Err(c.error_here());
                }
            }
        }
        Some(v)
    } else {
        None
    };
    Ok(FuncRef { schema, name, args })
}

/// ALTER FUNCTION | PROCEDURE | ROUTINE f[(types)] {RENAME TO n | OWNER TO
/// r | option …} (PostgreSQL's `AlterFunctionStmt`, `RenameStmt`,
/// `AlterOwnerStmt`).
fn alter(c: &mut Cur<'_>) -> PgResult<FuncStmt> {
    c.pos += 1;
    let procedure = match c.peek_word() {
        Some("function") => Some(false),
        Some("procedure") => Some(true),
        _ => None,
    };
    c.pos += 1;
    let item = func_ref(c)?;
    let action = if c.eat_word("rename") {
        c.expect_word("to")?;
        AlterFunction::Rename(c.one_ident()?)
    } else if c.eat_word("owner") {
        c.expect_word("to")?;
        AlterFunction::Owner(c.one_ident()?)
    } else if c.peek_word() == Some("set") && c.peek_word_at(1) == Some("schema") {
        c.pos += 2;
        let schema = c.one_ident()?;
        c.expect_end()?;
        AlterFunction::SetSchema(schema)
    } else {
        let mut volatility = None;
        let mut strict = None;
        let mut security = None;
        let mut config = Vec::new();
        let mut any = false;
        while !c.at_end() {
            any = true;
            if c.eat_word("immutable") {
                once(&mut volatility, b'i')?;
            } else if c.eat_word("stable") {
                once(&mut volatility, b's')?;
            } else if c.eat_word("volatile") {
                once(&mut volatility, b'v')?;
            } else if c.eat_word("strict") {
                once(&mut strict, true)?;
            } else if c.eat_word("called") {
                c.expect_word("on")?;
                c.expect_word("null")?;
                c.expect_word("input")?;
                once(&mut strict, false)?;
            } else if c.eat_word("returns") {
                c.expect_word("null")?;
                c.expect_word("on")?;
                c.expect_word("null")?;
                c.expect_word("input")?;
                once(&mut strict, true)?;
            } else if c.eat_word("restrict") {
            } else if c.peek_word() == Some("security")
                || c.peek_word() == Some("external") && c.peek_word_at(1) == Some("security")
            {
                if c.eat_word("external") {
                    c.expect_word("security")?;
                } else {
                    c.pos += 1;
                }
                if c.eat_word("definer") {
                    once(&mut security, true)?;
                } else {
                    c.expect_word("invoker")?;
                    once(&mut security, false)?;
                }
            } else if c.peek_word() == Some("set") && c.peek_word_at(1) != Some("schema") {
                c.pos += 1;
                config.push(set_clause(c)?);
            } else if c.eat_word("reset") {
                if c.eat_word("all") {
                    config.push(FuncSet::ResetAll);
                } else {
                    let mut name = c.one_ident()?;
                    while c.eat_punct('.') {
                        name = format!("{name}.{}", c.one_ident()?);
                    }
                    config.push(FuncSet::Reset(name));
                }
            } else if matches!(
                c.peek_word(),
                Some("external" | "set" | "depends" | "no" | "support")
            ) {
                return Err(PgError::unsupported(format!(
                    "ALTER FUNCTION … {} is not supported",
                    c.peek_word().unwrap_or("").to_uppercase()
                )));
            } else if c.eat_word("leakproof") || c.eat_word("not") && c.eat_word("leakproof") {
            } else if c.eat_word("parallel") || c.eat_word("cost") || c.eat_word("rows") {
                c.pos += 1;
            } else {
                return Err(c.error_here());
            }
        }
        if !any {
            return Err(c.error_here());
        }
        AlterFunction::Options {
            volatility,
            strict,
            security,
            config,
        }
    };
    c.expect_end()?;
    Ok(FuncStmt::Alter {
        procedure,
        item,
        action,
    })
}

/// The index of the `)` closing the `(` just eaten.
pub(super) fn skip_to_close(c: &Cur<'_>) -> PgResult<usize> {
    let mut depth = 1usize;
    let mut i = c.pos;
    while let Some(t) = c.toks.get(i) {
        match t.tok {
            Tok::Punct('(') | Tok::Punct('[') => depth += 1,
            Tok::Punct(')') | Tok::Punct(']') => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Err(PgError::syntax("syntax error at end of input"))
}

fn lang_name(c: &mut Cur<'_>) -> PgResult<String> {
    match c.peek().cloned() {
        Some(Tok::Str(s)) => {
            c.pos += 1;
            Ok(s.to_lowercase())
        }
        _ => Ok(c.one_ident()?.to_lowercase()),
    }
}

/// Words that end a type in a parameter list.
fn ends_arg_type(t: &Tok) -> bool {
    matches!(t, Tok::Punct(',' | ')' | '=')) || matches!(t, Tok::Word(w) if w == "default")
}

/// Words that end RETURNS' type.
fn ends_return_type(t: &Tok) -> bool {
    matches!(t, Tok::Str(_) | Tok::Punct(';'))
        || matches!(t, Tok::Word(w) if matches!(w.as_str(),
            "language" | "as" | "immutable" | "stable" | "volatile" | "strict" | "called"
            | "returns" | "security" | "external" | "parallel" | "cost" | "rows" | "set"
            | "leakproof" | "not" | "window" | "support" | "transform" | "return" | "begin"))
}

/// A type's text: tokens up to `end` at parenthesis depth 0.
fn type_text(c: &mut Cur<'_>, end: fn(&Tok) -> bool) -> PgResult<String> {
    let start = c.pos;
    let mut depth = 0usize;
    while let Some(t) = c.peek() {
        match t {
            Tok::Punct('(') | Tok::Punct('[') => depth += 1,
            Tok::Punct(')') | Tok::Punct(']') if depth > 0 => depth -= 1,
            t if depth == 0 && end(t) => break,
            _ => {}
        }
        c.pos += 1;
    }
    if c.pos == start {
        return Err(c.error_here());
    }
    Ok(c.text_between(start, c.pos).to_string())
}

/// `[mode] [name] type [DEFAULT expr | = expr]`.
fn arg_def(c: &mut Cur<'_>) -> PgResult<ArgDef> {
    let mode = match c.peek_word() {
        Some("in") if c.peek_word_at(1) != Some("out") => {
            c.pos += 1;
            ArgMode::In
        }
        Some("in") => {
            c.pos += 2;
            ArgMode::InOut
        }
        Some("out") => {
            c.pos += 1;
            ArgMode::Out
        }
        Some("inout") => {
            c.pos += 1;
            ArgMode::InOut
        }
        Some("variadic") => {
            c.pos += 1;
            ArgMode::Variadic
        }
        _ => ArgMode::In,
    };
    // A name comes first when another word or identifier follows it
    // before the type ends (`a int`, `"A" text`); `double precision`,
    // `character varying` are types.
    let is_name = match (c.peek(), c.toks.get(c.pos + 1).map(|t| &t.tok)) {
        (Some(Tok::Word(w)), Some(Tok::Word(n)))
            if !matches!(
                (w.as_str(), n.as_str()),
                ("double", "precision")
                    | ("character", "varying")
                    | ("bit", "varying")
                    | ("timestamp", _)
                    | ("time", _)
            ) && n != "default" =>
        {
            true
        }
        (Some(Tok::Ident(_)), Some(Tok::Word(n))) if n != "default" => true,
        (Some(Tok::Word(_) | Tok::Ident(_)), Some(Tok::Ident(_))) => true,
        _ => false,
    };
    let name = if is_name { Some(c.one_ident()?) } else { None };
    let ty = type_text(c, ends_arg_type)?;
    let default = if c.eat_word("default") || c.eat_punct('=') {
        let start = c.pos;
        let mut depth = 0usize;
        while let Some(t) = c.peek() {
            match t {
                Tok::Punct('(') | Tok::Punct('[') => depth += 1,
                Tok::Punct(')') | Tok::Punct(']') if depth > 0 => depth -= 1,
                Tok::Punct(',' | ')') if depth == 0 => break,
                _ => {}
            }
            c.pos += 1;
        }
        if c.pos == start {
            return Err(c.error_here());
        }
        Some(c.text_between(start, c.pos).to_string())
    } else {
        None
    };
    Ok(ArgDef {
        mode,
        name,
        ty,
        default,
    })
}

fn create(c: &mut Cur<'_>) -> PgResult<CreateFunction> {
    c.expect_word("create")?;
    let or_replace = if c.eat_word("or") {
        c.expect_word("replace")?;
        true
    } else {
        false
    };
    let procedure = c.eat_word("procedure");
    if !procedure {
        c.expect_word("function")?;
    }
    let (schema, name) = qualified_name(c)?;
    if !c.eat_punct('(') {
        return Err(c.error_here());
    }
    let mut args = Vec::new();
    if !c.eat_punct(')') {
        loop {
            args.push(arg_def(c)?);
            if c.eat_punct(')') {
                break;
            }
            if !c.eat_punct(',') {
                return Err(c.error_here());
            }
        }
    }
    let mut f = CreateFunction {
        or_replace,
        procedure,
        schema,
        name,
        args,
        returns: None,
        language: None,
        volatility: None,
        strict: None,
        security_definer: false,
        config: Vec::new(),
        body: None,
    };
    while !c.at_end() {
        if c.eat_punct(';') {
            continue;
        }
        let w = c.peek_word().unwrap_or("").to_string();
        match w.as_str() {
            "returns" if c.peek_word_at(1) == Some("null") => {
                c.pos += 2;
                c.expect_word("on")?;
                c.expect_word("null")?;
                c.expect_word("input")?;
                once(&mut f.strict, true)?;
            }
            "returns" => {
                c.pos += 1;
                let r = if c.eat_word("table") {
                    if !c.eat_punct('(') {
                        return Err(c.error_here());
                    }
                    let mut cols = Vec::new();
                    loop {
                        let n = c.one_ident()?;
                        let t = type_text(c, ends_arg_type)?;
                        cols.push((n, t));
                        if c.eat_punct(')') {
                            break;
                        }
                        if !c.eat_punct(',') {
                            return Err(c.error_here());
                        }
                    }
                    Returns::Table(cols)
                } else {
                    let setof = c.eat_word("setof");
                    Returns::Type {
                        setof,
                        ty: type_text(c, ends_return_type)?,
                    }
                };
                once(&mut f.returns, r)?;
            }
            "language" => {
                c.pos += 1;
                once(&mut f.language, lang_name(c)?)?;
            }
            "immutable" | "stable" | "volatile" => {
                c.pos += 1;
                once(&mut f.volatility, w.as_bytes()[0])?;
            }
            "strict" => {
                c.pos += 1;
                once(&mut f.strict, true)?;
            }
            "called" => {
                c.pos += 1;
                c.expect_word("on")?;
                c.expect_word("null")?;
                c.expect_word("input")?;
                once(&mut f.strict, false)?;
            }
            "security" | "external" => {
                if c.eat_word("external") {
                    c.expect_word("security")?;
                } else {
                    c.pos += 1;
                }
                if c.eat_word("definer") {
                    f.security_definer = true;
                } else {
                    c.expect_word("invoker")?;
                    f.security_definer = false;
                }
            }
            "set" => {
                c.pos += 1;
                f.config.push(set_clause(c)?);
            }
            "not" => {
                c.pos += 1;
                c.expect_word("leakproof")?;
            }
            "leakproof" => c.pos += 1,
            "parallel" => {
                c.pos += 1;
                if !(c.eat_word("safe") || c.eat_word("restricted") || c.eat_word("unsafe")) {
                    return Err(c.error_here());
                }
            }
            "cost" | "rows" => {
                c.pos += 1;
                match c.peek() {
                    Some(Tok::Num(_)) => c.pos += 1,
                    _ => return Err(c.error_here()),
                }
            }
            "as" => {
                c.pos += 1;
                let body = c.string()?;
                if c.eat_punct(',') {
                    return Err(PgError::new(
                        sqlstate::INVALID_FUNCTION_DEFINITION,
                        "only one AS item needed for language",
                    ));
                }
                once(&mut f.body, body)?;
            }
            "return" | "begin" => {
                return Err(PgError::unsupported(
                    "SQL-standard function bodies are not supported",
                ))
            }
            _ => return Err(c.error_here()),
        }
    }
    Ok(f)
}
