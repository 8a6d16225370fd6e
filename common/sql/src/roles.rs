//! Roles: `CREATE ROLE` / `CREATE USER`, `ALTER ROLE` / `ALTER USER`,
//! `DROP ROLE` / `DROP USER` (PostgreSQL's `user.c`), the password
//! verifiers they store (`crypt.c`'s `encrypt_password`), and the rows of
//! `pg_authid`, `pg_roles`, `pg_hba_file_rules` and `pg_ident_file_mappings`.
//!
//! Statements are parsed here by hand (the parser's keyword pre-dispatch
//! sends `CREATE|ALTER|DROP ROLE|USER` to [`parse`]) with PostgreSQL's
//! option grammar, and executed as one catalog change each
//! ([`engine::catalog::CatalogChange`]): WAL-logged, replayed by
//! standbys, effective at once (not transactional).
//!
//! Passwords: a password that already is a verifier (`SCRAM-SHA-256$…`
//! or `md5` + 32 hex digits, what pg_dump and tools send) is stored as
//! is; any other is turned into a verifier of the session's
//! `password_encryption` (`scram-sha-256` with `scram_iterations`, or
//! `md5`). The password text itself is never stored nor logged; a
//! statement carrying one is logged by its kind only.
//!
//! Privileges: creating or altering roles needs SUPERUSER or CREATEROLE;
//! anything about SUPERUSER, REPLICATION or BYPASSRLS roles needs
//! SUPERUSER; a role may change its own password.

use std::sync::Arc;

use engine::catalog::{CatalogChange, RoleSpec, BOOTSTRAP_SUPERUSER_OID};
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::value::Value;

use crate::parser::{Cur, Tok};

/// One role attribute clause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoleOption {
    /// SUPERUSER / NOSUPERUSER.
    Superuser(bool),
    /// CREATEDB / NOCREATEDB.
    CreateDb(bool),
    /// CREATEROLE / NOCREATEROLE.
    CreateRole(bool),
    /// INHERIT / NOINHERIT.
    Inherit(bool),
    /// LOGIN / NOLOGIN.
    Login(bool),
    /// REPLICATION / NOREPLICATION.
    Replication(bool),
    /// BYPASSRLS / NOBYPASSRLS.
    BypassRls(bool),
    /// CONNECTION LIMIT n.
    ConnectionLimit(i32),
    /// [ENCRYPTED] PASSWORD 'x' | PASSWORD NULL.
    Password(Option<String>),
    /// VALID UNTIL 'timestamp'.
    ValidUntil(String),
}

/// A role statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoleStmt {
    /// CREATE ROLE / USER (USER: LOGIN by default).
    Create {
        /// Role name.
        name: String,
        /// Options in order.
        options: Vec<RoleOption>,
        /// Written as CREATE USER.
        user: bool,
    },
    /// ALTER ROLE name [WITH] options.
    Alter {
        /// Role name (`current_user` / `session_user` resolved at run time).
        name: String,
        /// Options.
        options: Vec<RoleOption>,
    },
    /// ALTER ROLE name RENAME TO new.
    Rename {
        /// Old name.
        name: String,
        /// New name.
        to: String,
    },
    /// DROP ROLE [IF EXISTS] name, ….
    Drop {
        /// IF EXISTS.
        if_exists: bool,
        /// Names.
        names: Vec<String>,
    },
    /// DROP OWNED BY role, … [CASCADE | RESTRICT] (run by the session).
    DropOwned {
        /// The roles (`current_user` / `session_user` resolved at run time).
        roles: Vec<String>,
        /// CASCADE.
        cascade: bool,
    },
    /// REASSIGN OWNED BY role, … TO role (run by the session).
    ReassignOwned {
        /// The old owners.
        roles: Vec<String>,
        /// The new owner.
        to: String,
    },
}

impl RoleStmt {
    /// The command tag.
    pub fn tag(&self) -> &'static str {
        match self {
            RoleStmt::Create { .. } => "CREATE ROLE",
            RoleStmt::Alter { .. } | RoleStmt::Rename { .. } => "ALTER ROLE",
            RoleStmt::Drop { .. } => "DROP ROLE",
            RoleStmt::DropOwned { .. } => "DROP OWNED",
            RoleStmt::ReassignOwned { .. } => "REASSIGN OWNED",
        }
    }
}

/// True if the statement starting with these words is a role statement.
pub fn is_role_statement(first: &str, second: Option<&str>, third: Option<&str>) -> bool {
    if matches!(first, "drop" | "reassign") && second == Some("owned") {
        return true;
    }
    matches!(first, "create" | "alter" | "drop")
        && matches!(second, Some("role" | "user"))
        && !(second == Some("user") && third == Some("mapping"))
}

fn conflicting() -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, "conflicting or redundant options")
}

fn role_name(c: &mut Cur<'_>) -> PgResult<String> {
    // current_user / session_user / current_role are keywords here.
    c.one_ident()
}

fn int_literal(c: &mut Cur<'_>) -> PgResult<i32> {
    let neg = c.eat_punct('-');
    match c.peek().cloned() {
        Some(Tok::Num(n)) => {
            c.pos += 1;
            let v: i32 = n.parse().map_err(|_| c.error_here())?;
            Ok(if neg { -v } else { v })
        }
        _ => Err(c.error_here()),
    }
}

fn parse_options(c: &mut Cur<'_>) -> PgResult<Vec<RoleOption>> {
    let _ = c.eat_word("with");
    let mut out: Vec<RoleOption> = Vec::new();
    while !c.at_end() {
        let w = c
            .peek_word()
            .map(str::to_string)
            .ok_or_else(|| c.error_here())?;
        c.pos += 1;
        let opt = match w.as_str() {
            "superuser" => RoleOption::Superuser(true),
            "nosuperuser" => RoleOption::Superuser(false),
            "createdb" => RoleOption::CreateDb(true),
            "nocreatedb" => RoleOption::CreateDb(false),
            "createrole" => RoleOption::CreateRole(true),
            "nocreaterole" => RoleOption::CreateRole(false),
            "inherit" => RoleOption::Inherit(true),
            "noinherit" => RoleOption::Inherit(false),
            "login" => RoleOption::Login(true),
            "nologin" => RoleOption::Login(false),
            "replication" => RoleOption::Replication(true),
            "noreplication" => RoleOption::Replication(false),
            "bypassrls" => RoleOption::BypassRls(true),
            "nobypassrls" => RoleOption::BypassRls(false),
            "connection" => {
                c.expect_word("limit")?;
                RoleOption::ConnectionLimit(int_literal(c)?)
            }
            "encrypted" | "password" => {
                if w == "encrypted" {
                    c.expect_word("password")?;
                }
                if c.eat_word("null") {
                    RoleOption::Password(None)
                } else {
                    RoleOption::Password(Some(c.string()?))
                }
            }
            "unencrypted" => {
                return Err(PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "UNENCRYPTED PASSWORD is no longer supported",
                )
                .with_hint("Remove UNENCRYPTED to store the password in encrypted form instead."))
            }
            "valid" => {
                c.expect_word("until")?;
                RoleOption::ValidUntil(c.string()?)
            }
            "sysid" => {
                int_literal(c)?;
                continue;
            }
            "in" | "role" | "admin" | "user" => {
                return Err(PgError::unsupported(
                    "role membership (IN ROLE, ROLE, ADMIN) is not supported yet",
                ))
            }
            other => {
                c.pos -= 1;
                let mut e = c.error_here();
                e.message = format!("unrecognized role option \"{other}\"");
                return Err(e);
            }
        };
        let same = out
            .iter()
            .any(|o| std::mem::discriminant(o) == std::mem::discriminant(&opt));
        if same {
            return Err(conflicting());
        }
        out.push(opt);
    }
    Ok(out)
}

/// Parses a role statement (see [`is_role_statement`]).
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<RoleStmt> {
    let verb = c.peek_word().unwrap_or("").to_string();
    c.pos += 1;
    if c.eat_word("owned") {
        c.expect_word("by")?;
        let mut roles = vec![role_name(c)?];
        while c.eat_punct(',') {
            roles.push(role_name(c)?);
        }
        if verb == "reassign" {
            c.expect_word("to")?;
            let to = role_name(c)?;
            c.expect_end()?;
            return Ok(RoleStmt::ReassignOwned { roles, to });
        }
        let cascade = c.eat_word("cascade");
        if !cascade {
            c.eat_word("restrict");
        }
        c.expect_end()?;
        return Ok(RoleStmt::DropOwned { roles, cascade });
    }
    let user = c.peek_word() == Some("user");
    c.pos += 1;
    match verb.as_str() {
        "create" => {
            let name = role_name(c)?;
            let options = parse_options(c)?;
            Ok(RoleStmt::Create {
                name,
                options,
                user,
            })
        }
        "alter" => {
            let name = role_name(c)?;
            if c.eat_word("rename") {
                c.expect_word("to")?;
                let to = role_name(c)?;
                c.expect_end()?;
                return Ok(RoleStmt::Rename { name, to });
            }
            if matches!(c.peek_word(), Some("set" | "reset" | "in")) {
                return Err(PgError::unsupported(
                    "ALTER ROLE … SET / RESET is not supported yet",
                ));
            }
            let options = parse_options(c)?;
            Ok(RoleStmt::Alter { name, options })
        }
        _ => {
            let if_exists = if c.eat_word("if") {
                c.expect_word("exists")?;
                true
            } else {
                false
            };
            let mut names = vec![role_name(c)?];
            while c.eat_punct(',') {
                names.push(role_name(c)?);
            }
            c.expect_end()?;
            Ok(RoleStmt::Drop { if_exists, names })
        }
    }
}

/// The session facts role statements need.
pub struct RoleContext<'a> {
    /// The engine (catalog, settings).
    pub db: &'a Engine,
    /// The session's role name.
    pub session_user: &'a str,
    /// `password_encryption`.
    pub password_encryption: &'a str,
    /// `scram_iterations`.
    pub scram_iterations: u32,
}

/// What a password option stores: a verifier (kept as given when it is
/// one already), or None (PASSWORD NULL, or an empty password with a
/// notice).
pub fn encrypt_password(
    password: &str,
    role: &str,
    method: &str,
    iterations: u32,
) -> Option<String> {
    if password.is_empty() {
        return None;
    }
    if protocol_is_verifier(password) {
        return Some(password.to_string());
    }
    Some(if method == "md5" {
        server::auth_verifiers::md5_verifier(password, role)
    } else {
        server::auth_verifiers::scram_verifier(password, iterations)
    })
}

fn protocol_is_verifier(p: &str) -> bool {
    server::auth_verifiers::is_verifier(p)
}

fn is_reserved(name: &str) -> Option<PgError> {
    if name.starts_with("pg_") {
        return Some(
            PgError::new(
                sqlstate::RESERVED_NAME,
                format!("role name \"{name}\" is reserved"),
            )
            .with_detail("Role names starting with \"pg_\" are reserved."),
        );
    }
    if matches!(name, "public" | "none") {
        return Some(PgError::new(
            sqlstate::RESERVED_NAME,
            format!("role name \"{name}\" is reserved"),
        ));
    }
    None
}

fn denied(message: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, message.into())
}

fn resolve(name: &str, cx: &RoleContext<'_>) -> String {
    match name {
        "current_user" | "session_user" | "current_role" => cx.session_user.to_string(),
        n => n.to_string(),
    }
}

/// Applies options to a role row; `notices` gets PostgreSQL's notices.
fn apply_options(
    r: &mut RoleSpec,
    options: &[RoleOption],
    cx: &RoleContext<'_>,
    notices: &mut Vec<PgError>,
) -> PgResult<()> {
    for o in options {
        match o {
            RoleOption::Superuser(b) => r.superuser = *b,
            RoleOption::CreateDb(b) => r.createdb = *b,
            RoleOption::CreateRole(b) => r.createrole = *b,
            RoleOption::Inherit(b) => r.inherit = *b,
            RoleOption::Login(b) => r.login = *b,
            RoleOption::Replication(b) => r.replication = *b,
            RoleOption::BypassRls(b) => r.bypassrls = *b,
            RoleOption::ConnectionLimit(n) => {
                if *n < -1 {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("invalid connection limit: {n}"),
                    ));
                }
                r.connlimit = *n;
            }
            RoleOption::Password(p) => {
                r.password = match p {
                    None => None,
                    Some(p) => {
                        let v = encrypt_password(
                            p,
                            &r.name,
                            cx.password_encryption,
                            cx.scram_iterations,
                        );
                        if v.is_none() {
                            notices.push(PgError::notice(
                                sqlstate::SUCCESSFUL_COMPLETION,
                                "empty string is not a valid password, clearing password",
                            ));
                        }
                        v
                    }
                }
            }
            RoleOption::ValidUntil(t) => {
                r.valid_until = Some(pgtypes::datetime::parse_timestamp(t, true)?);
            }
        }
    }
    Ok(())
}

fn touches_super_attributes(options: &[RoleOption]) -> bool {
    options.iter().any(|o| {
        matches!(
            o,
            RoleOption::Superuser(_) | RoleOption::Replication(_) | RoleOption::BypassRls(_)
        )
    })
}

/// Runs a role statement; returns the command tag and notices.
pub fn execute(stmt: &RoleStmt, cx: &RoleContext<'_>) -> PgResult<(String, Vec<PgError>)> {
    let catalog = cx.db.catalog();
    let me = catalog.role(cx.session_user);
    // A node without roles (made before they existed) treats every
    // session as the superuser it used to be.
    let (am_super, am_createrole) = match &me {
        Some(r) => (r.superuser, r.createrole || r.superuser),
        None => (catalog.roles().is_empty(), catalog.roles().is_empty()),
    };
    let mut notices = Vec::new();
    match stmt {
        RoleStmt::Create {
            name,
            options,
            user,
        } => {
            if let Some(e) = is_reserved(name) {
                return Err(e);
            }
            if !am_createrole {
                return Err(denied("permission denied to create role"));
            }
            for o in options {
                match o {
                    RoleOption::Superuser(true) if !am_super => {
                        return Err(denied("must be superuser to create superusers"))
                    }
                    RoleOption::Replication(true) if !am_super => {
                        return Err(denied("must be superuser to create replication users"))
                    }
                    RoleOption::BypassRls(true) if !am_super => {
                        return Err(denied("must be superuser to create bypassrls users"))
                    }
                    _ => {}
                }
            }
            if catalog.role(name).is_some() {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_OBJECT,
                    format!("role \"{name}\" already exists"),
                ));
            }
            let mut r = RoleSpec::new(catalog.allocate_oid(), name);
            r.login = *user;
            apply_options(&mut r, options, cx, &mut notices)?;
            catalog.apply_catalog_change(&CatalogChange::CreateRole(r))?;
        }
        RoleStmt::Alter { name, options } => {
            let name = resolve(name, cx);
            let old = catalog
                .role(&name)
                .ok_or_else(|| engine::catalog::undefined_role(&name))?;
            let only_own_password = name == cx.session_user
                && options.iter().all(|o| matches!(o, RoleOption::Password(_)));
            if (old.superuser || touches_super_attributes(options)) && !am_super {
                return Err(denied(if old.superuser {
                    "must be superuser to alter superuser roles or change superuser attribute"
                } else {
                    "must be superuser to alter replication roles or change replication attribute"
                }));
            }
            if !am_createrole && !only_own_password {
                return Err(denied("permission denied"));
            }
            let mut r = (*old).clone();
            apply_options(&mut r, options, cx, &mut notices)?;
            catalog.apply_catalog_change(&CatalogChange::AlterRole {
                old_name: name.clone(),
                spec: r,
            })?;
        }
        RoleStmt::Rename { name, to } => {
            let name = resolve(name, cx);
            let old = catalog
                .role(&name)
                .ok_or_else(|| engine::catalog::undefined_role(&name))?;
            if name == cx.session_user {
                return Err(PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "session user cannot be renamed",
                ));
            }
            if let Some(e) = is_reserved(to) {
                return Err(e);
            }
            if catalog.role(to).is_some() {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_OBJECT,
                    format!("role \"{to}\" already exists"),
                ));
            }
            if old.superuser && !am_super {
                return Err(denied("must be superuser to rename superusers"));
            }
            if !am_createrole {
                return Err(denied("permission denied to rename role"));
            }
            let mut r = (*old).clone();
            r.name = to.clone();
            // An md5 verifier is salted with the name: it no longer works.
            if r.password.as_deref().is_some_and(|p| p.starts_with("md5")) {
                r.password = None;
                notices.push(PgError::notice(
                    sqlstate::SUCCESSFUL_COMPLETION,
                    "MD5 password cleared because of role rename",
                ));
            }
            catalog.apply_catalog_change(&CatalogChange::AlterRole {
                old_name: name,
                spec: r,
            })?;
        }
        RoleStmt::DropOwned { .. } | RoleStmt::ReassignOwned { .. } => {
            return Err(PgError::internal(
                "DROP OWNED / REASSIGN OWNED run in the session",
            ));
        }
        RoleStmt::Drop { if_exists, names } => {
            if !am_createrole {
                return Err(denied("permission denied to drop role"));
            }
            for name in names {
                let Some(r) = catalog.role(name) else {
                    if *if_exists {
                        notices.push(PgError::notice(
                            sqlstate::SUCCESSFUL_COMPLETION,
                            format!("role \"{name}\" does not exist, skipping"),
                        ));
                        continue;
                    }
                    return Err(engine::catalog::undefined_role(name));
                };
                if name == cx.session_user {
                    return Err(PgError::new(
                        sqlstate::OBJECT_IN_USE,
                        "current user cannot be dropped",
                    ));
                }
                if r.oid == BOOTSTRAP_SUPERUSER_OID {
                    return Err(PgError::new(
                        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!(
                            "cannot drop role {name} because it is required by the database system"
                        ),
                    ));
                }
                if r.superuser && !am_super {
                    return Err(denied("must be superuser to drop superusers"));
                }
                catalog.apply_catalog_change(&CatalogChange::DropRole { name: name.clone() })?;
            }
        }
    }
    Ok((stmt.tag().to_string(), notices))
}

fn text(s: &str) -> Value {
    Value::Text(Arc::from(s))
}

fn opt_ts(t: Option<i64>) -> Value {
    t.map(Value::TimestampTz).unwrap_or(Value::Null)
}

/// Every role, PostgreSQL 15's predefined ones (NOLOGIN, never stored)
/// included, by OID.
pub fn all_roles(e: &Engine) -> Vec<Arc<RoleSpec>> {
    let mut v = e.catalog().roles();
    v.extend(
        engine::acl::PREDEFINED_ROLES
            .iter()
            .map(|(o, n)| Arc::new(RoleSpec::new(*o, n))),
    );
    v.sort_by_key(|r| r.oid);
    v
}

/// `pg_auth_members` rows: (roleid, member, grantor, admin_option).
pub fn pg_auth_members(e: &Engine) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for r in e.catalog().roles() {
        for g in &r.member_of {
            rows.push(vec![
                Value::Oid(g.role),
                Value::Oid(r.oid),
                Value::Oid(g.grantor),
                Value::Bool(g.admin),
            ]);
        }
    }
    rows
}

/// `pg_authid` rows (PostgreSQL 15's columns).
pub fn pg_authid(e: &Engine) -> Vec<Vec<Value>> {
    all_roles(e)
        .iter()
        .map(|r| {
            vec![
                Value::Oid(r.oid),
                text(&r.name),
                Value::Bool(r.superuser),
                Value::Bool(r.inherit),
                Value::Bool(r.createrole),
                Value::Bool(r.createdb),
                Value::Bool(r.login),
                Value::Bool(r.replication),
                Value::Bool(r.bypassrls),
                Value::Int4(r.connlimit),
                r.password.as_deref().map(text).unwrap_or(Value::Null),
                opt_ts(r.valid_until),
            ]
        })
        .collect()
}

/// `pg_roles` rows: the password always shown as `********`.
pub fn pg_roles(e: &Engine) -> Vec<Vec<Value>> {
    all_roles(e)
        .iter()
        .map(|r| {
            vec![
                text(&r.name),
                Value::Bool(r.superuser),
                Value::Bool(r.inherit),
                Value::Bool(r.createrole),
                Value::Bool(r.createdb),
                Value::Bool(r.login),
                Value::Bool(r.replication),
                Value::Int4(r.connlimit),
                text("********"),
                opt_ts(r.valid_until),
                Value::Bool(r.bypassrls),
                Value::Null,
                Value::Oid(r.oid),
            ]
        })
        .collect()
}

fn array(items: &[String]) -> Value {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| {
            if s.is_empty() || s.contains([',', '"', '{', '}', ' ', '\\']) {
                format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
            } else {
                s.clone()
            }
        })
        .collect();
    text(&format!("{{{}}}", quoted.join(",")))
}

/// The authentication file a path setting names, as it is now on disk
/// (None if it cannot be read: the views show no rows).
fn read_conf_file(e: &Engine, setting: &str, default_name: &str) -> Option<String> {
    std::fs::read_to_string(e.config().file_path(setting, default_name)).ok()
}

/// `pg_hba_file_rules` rows: the file as it is now on disk (not the rules
/// in force, as PostgreSQL), one row per line, faulty ones with `error`.
pub fn pg_hba_file_rules(e: &Engine) -> Vec<Vec<Value>> {
    let Some(content) = read_conf_file(e, "hba_file", "pg_hba.conf") else {
        return Vec::new();
    };
    server::hba::parse_rows(&content)
        .into_iter()
        .map(|row| match row {
            Ok(l) => {
                let (address, netmask) = match &l.address_shown {
                    Some((a, m)) => (text(a), m.as_deref().map(text).unwrap_or(Value::Null)),
                    None => (Value::Null, Value::Null),
                };
                vec![
                    Value::Int4(l.line_number as i32),
                    text(l.conn_type.name()),
                    array(&l.databases.iter().map(|t| t.shown()).collect::<Vec<_>>()),
                    array(&l.users.iter().map(|t| t.shown()).collect::<Vec<_>>()),
                    address,
                    netmask,
                    text(l.method.name()),
                    if l.options.is_empty() {
                        Value::Null
                    } else {
                        array(&l.options)
                    },
                    Value::Null,
                ]
            }
            Err(err) => vec![
                Value::Int4(err.line_number as i32),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                text(&err.message),
            ],
        })
        .collect()
}

/// `pg_ident_file_mappings` rows: the file as it is now on disk, one row
/// per line, faulty ones with only `line_number` and `error`.
pub fn pg_ident_file_mappings(e: &Engine) -> Vec<Vec<Value>> {
    let Some(content) = read_conf_file(e, "ident_file", "pg_ident.conf") else {
        return Vec::new();
    };
    server::ident::parse_rows(&content)
        .into_iter()
        .map(|row| match row {
            Ok(l) => vec![
                Value::Int4(l.line_number as i32),
                text(&l.map_name),
                text(&l.sys_name),
                text(&l.pg_username),
                Value::Null,
            ],
            Err(err) => vec![
                Value::Int4(err.line_number as i32),
                Value::Null,
                Value::Null,
                Value::Null,
                text(&err.message),
            ],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(sql: &str) -> PgResult<RoleStmt> {
        match crate::parser::parse_one(sql)? {
            crate::parser::Stmt::Role(r) => Ok(r),
            other => panic!("not a role statement: {other:?}"),
        }
    }

    #[test]
    fn parses_postgres_grammar() {
        assert_eq!(
            p("CREATE USER alice WITH PASSWORD 'x' CONNECTION LIMIT 3 VALID UNTIL '2030-01-01'")
                .unwrap(),
            RoleStmt::Create {
                name: "alice".into(),
                options: vec![
                    RoleOption::Password(Some("x".into())),
                    RoleOption::ConnectionLimit(3),
                    RoleOption::ValidUntil("2030-01-01".into()),
                ],
                user: true,
            }
        );
        assert_eq!(
            p("create role \"Bob\" superuser nologin encrypted password null").unwrap(),
            RoleStmt::Create {
                name: "Bob".into(),
                options: vec![
                    RoleOption::Superuser(true),
                    RoleOption::Login(false),
                    RoleOption::Password(None),
                ],
                user: false,
            }
        );
        assert_eq!(
            p("ALTER ROLE a RENAME TO b").unwrap(),
            RoleStmt::Rename {
                name: "a".into(),
                to: "b".into()
            }
        );
        assert_eq!(
            p("DROP USER IF EXISTS a, b").unwrap(),
            RoleStmt::Drop {
                if_exists: true,
                names: vec!["a".into(), "b".into()]
            }
        );
        assert_eq!(
            p("CREATE ROLE a LOGIN NOLOGIN").unwrap_err().code,
            sqlstate::SYNTAX_ERROR
        );
        assert_eq!(
            p("CREATE ROLE a FOO").unwrap_err().code,
            sqlstate::SYNTAX_ERROR
        );
    }

    #[test]
    fn verifiers_not_passwords() {
        let v = encrypt_password("secret", "a", "scram-sha-256", 4096).unwrap();
        assert!(v.starts_with("SCRAM-SHA-256$4096:"));
        assert_eq!(encrypt_password(&v, "a", "md5", 4096).unwrap(), v);
        let m = encrypt_password("secret", "a", "md5", 4096).unwrap();
        assert!(m.starts_with("md5") && m.len() == 35);
        assert_eq!(encrypt_password("", "a", "md5", 4096), None);
    }
}
