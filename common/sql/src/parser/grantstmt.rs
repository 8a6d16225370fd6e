//! `GRANT` / `REVOKE` of privileges on objects and of role membership
//! (PostgreSQL's GrantStmt and GrantRoleStmt) and `ALTER DEFAULT
//! PRIVILEGES`, parsed by hand: sqlparser 0.52 has neither column lists
//! nor role grants. Executed by `crate::aclchk`.

use super::{Cur, Tok};
use pgtypes::error::{PgError, PgResult};

/// What a GRANT / REVOKE names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantTarget {
    /// `[TABLE] t, …` (tables and views).
    Tables(Vec<Vec<String>>),
    /// `ALL TABLES IN SCHEMA s, …`.
    AllTablesIn(Vec<String>),
    /// `SEQUENCE q, …`.
    Sequences(Vec<Vec<String>>),
    /// `ALL SEQUENCES IN SCHEMA s, …`.
    AllSequencesIn(Vec<String>),
    /// `SCHEMA s, …`.
    Schemas(Vec<String>),
    /// `DATABASE d, …`.
    Databases(Vec<String>),
    /// `FUNCTION | PROCEDURE | ROUTINE f[(types)], …`: the kind word
    /// (`function`, `procedure`, `routine`) and the functions.
    Functions(String, Vec<super::funcstmt::FuncRef>),
    /// `ALL FUNCTIONS | PROCEDURES | ROUTINES IN SCHEMA s, …`: the kind
    /// word (singular) and the schemas.
    AllFunctionsIn(String, Vec<String>),
    /// ALTER DEFAULT PRIVILEGES' `TABLES` (`r`), `SEQUENCES` (`S`),
    /// `FUNCTIONS` / `ROUTINES` (`f`), `TYPES` (`T`), `SCHEMAS` (`n`).
    Defaults(char),
}

/// One privilege as written, with its column list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivName {
    /// The privilege word, lower case (`all` for ALL [PRIVILEGES]).
    pub name: String,
    /// `(col, …)`, empty for none.
    pub columns: Vec<String>,
}

/// A parsed GRANT or REVOKE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantStmt {
    /// Privileges on objects.
    Objects {
        /// GRANT (true) or REVOKE.
        grant: bool,
        /// WITH GRANT OPTION / REVOKE GRANT OPTION FOR.
        option: bool,
        /// The privileges.
        privileges: Vec<PrivName>,
        /// The objects.
        target: GrantTarget,
        /// Role names, `public`, `current_user` …
        grantees: Vec<String>,
        /// REVOKE … CASCADE.
        cascade: bool,
    },
    /// `ALTER DEFAULT PRIVILEGES [FOR ROLE r, …] [IN SCHEMA s, …]
    /// GRANT | REVOKE … ON TABLES | SEQUENCES | FUNCTIONS | TYPES | SCHEMAS`.
    Default {
        /// FOR ROLE (empty: the current user).
        roles: Vec<String>,
        /// IN SCHEMA (empty: every schema).
        schemas: Vec<String>,
        /// pg_default_acl.defaclobjtype: `r`, `S`, `f`, `T` or `n`.
        objtype: char,
        /// The GRANT or REVOKE (its target unused).
        action: Box<GrantStmt>,
    },
    /// Role membership.
    Roles {
        /// GRANT (true) or REVOKE.
        grant: bool,
        /// WITH ADMIN OPTION / REVOKE ADMIN OPTION FOR.
        admin: bool,
        /// The roles granted.
        roles: Vec<String>,
        /// The members.
        grantees: Vec<String>,
    },
}

impl GrantStmt {
    /// The command tag.
    pub fn tag(&self) -> &'static str {
        match self {
            GrantStmt::Objects { grant: true, .. } => "GRANT",
            GrantStmt::Objects { grant: false, .. } => "REVOKE",
            GrantStmt::Roles { grant: true, .. } => "GRANT ROLE",
            GrantStmt::Roles { grant: false, .. } => "REVOKE ROLE",
            GrantStmt::Default { .. } => "ALTER DEFAULT PRIVILEGES",
        }
    }
}

/// True if the statement is a GRANT or REVOKE, or ALTER DEFAULT
/// PRIVILEGES.
pub(crate) fn is_grant_statement(c: &Cur<'_>) -> bool {
    matches!(c.peek_word(), Some("grant" | "revoke"))
        || (c.peek_word() == Some("alter")
            && c.peek_word_at(1) == Some("default")
            && c.peek_word_at(2) == Some("privileges"))
}

/// `ALTER DEFAULT PRIVILEGES …` ([`is_grant_statement`] said it is one).
fn parse_default(c: &mut Cur<'_>) -> PgResult<GrantStmt> {
    c.pos += 3;
    let mut roles = Vec::new();
    let mut schemas = Vec::new();
    loop {
        if c.eat_word("for") {
            if !c.eat_word("role") {
                c.expect_word("user")?;
            }
            roles.extend(name_list(c)?);
        } else if c.eat_word("in") {
            c.expect_word("schema")?;
            schemas.extend(name_list(c)?);
        } else {
            break;
        }
    }
    if !matches!(c.peek_word(), Some("grant" | "revoke")) {
        return Err(c.error_here());
    }
    let action = parse_action(c, true)?;
    let GrantStmt::Objects {
        target: GrantTarget::Defaults(objtype),
        ..
    } = &action
    else {
        return Err(PgError::syntax("ALTER DEFAULT PRIVILEGES needs TABLES, SEQUENCES, FUNCTIONS, ROUTINES, TYPES or SCHEMAS"));
    };
    Ok(GrantStmt::Default {
        roles,
        schemas,
        objtype: *objtype,
        action: Box::new(action),
    })
}

/// A role specification: a name, PUBLIC, CURRENT_USER … (`GROUP` noise
/// word allowed).
fn grantee(c: &mut Cur<'_>) -> PgResult<String> {
    if c.peek_word() == Some("group") && c.peek_word_at(1).is_some() {
        c.pos += 1;
    }
    c.one_ident()
}

fn name_list(c: &mut Cur<'_>) -> PgResult<Vec<String>> {
    let mut v = vec![c.one_ident()?];
    while c.eat_punct(',') {
        v.push(c.one_ident()?);
    }
    Ok(v)
}

fn qualified_list(c: &mut Cur<'_>) -> PgResult<Vec<Vec<String>>> {
    let mut v = Vec::new();
    loop {
        let mut parts = vec![c.one_ident()?];
        while c.eat_punct('.') {
            parts.push(c.one_ident()?);
        }
        v.push(parts);
        if !c.eat_punct(',') {
            return Ok(v);
        }
    }
}

/// Parses a [`GrantStmt`] ([`is_grant_statement`] said it is one).
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<GrantStmt> {
    if c.peek_word() == Some("alter") {
        return parse_default(c);
    }
    parse_action(c, false)
}

/// GRANT / REVOKE (`defaults`: in ALTER DEFAULT PRIVILEGES, where the
/// target is a kind of object).
fn parse_action(c: &mut Cur<'_>, defaults: bool) -> PgResult<GrantStmt> {
    let grant = c.peek_word() == Some("grant");
    c.pos += 1;
    let mut option = false;
    if !grant
        && matches!(c.peek_word(), Some("grant" | "admin"))
        && c.peek_word_at(1) == Some("option")
        && c.peek_word_at(2) == Some("for")
    {
        option = true;
        c.pos += 3;
    }
    // The list: privileges (with column lists) or role names.
    let mut privileges = Vec::new();
    loop {
        let name = match c.peek() {
            Some(Tok::Word(w)) => w.clone(),
            Some(Tok::Ident(w)) => w.clone(),
            _ => return Err(c.error_here()),
        };
        c.pos += 1;
        let mut name = name;
        if name == "all" {
            let _ = c.eat_word("privileges");
        } else if name == "temp" {
            name = "temporary".into();
        }
        let mut columns = Vec::new();
        if c.eat_punct('(') {
            columns = name_list(c)?;
            if !c.eat_punct(')') {
                return Err(c.error_here());
            }
        }
        privileges.push(PrivName { name, columns });
        if !c.eat_punct(',') {
            break;
        }
    }
    if !c.eat_word("on") {
        // GRANT role, … TO member, … [WITH ADMIN OPTION] [GRANTED BY r].
        c.expect_word(if grant { "to" } else { "from" })?;
        let mut grantees = vec![grantee(c)?];
        while c.eat_punct(',') {
            grantees.push(grantee(c)?);
        }
        let mut admin = option;
        if grant && c.eat_word("with") {
            c.expect_word("admin")?;
            c.expect_word("option")?;
            admin = true;
        }
        eat_granted_by(c)?;
        if !grant && !c.eat_word("cascade") {
            let _ = c.eat_word("restrict");
        }
        c.expect_end()?;
        if privileges.iter().any(|p| !p.columns.is_empty()) {
            return Err(PgError::syntax(
                "column names cannot be included in GRANT/REVOKE ROLE",
            ));
        }
        return Ok(GrantStmt::Roles {
            grant,
            admin,
            roles: privileges.into_iter().map(|p| p.name).collect(),
            grantees,
        });
    }
    let target = match c.peek_word() {
        Some(w) if defaults => {
            let kind = match w {
                "tables" => 'r',
                "sequences" => 'S',
                "functions" | "routines" => 'f',
                "types" => 'T',
                "schemas" => 'n',
                _ => return Err(c.error_here()),
            };
            c.pos += 1;
            GrantTarget::Defaults(kind)
        }
        Some("all") if matches!(c.peek_word_at(1), Some("tables" | "sequences")) => {
            let tables = c.peek_word_at(1) == Some("tables");
            c.pos += 2;
            c.expect_word("in")?;
            c.expect_word("schema")?;
            let names = name_list(c)?;
            if tables {
                GrantTarget::AllTablesIn(names)
            } else {
                GrantTarget::AllSequencesIn(names)
            }
        }
        Some("sequence") => {
            c.pos += 1;
            GrantTarget::Sequences(qualified_list(c)?)
        }
        Some("schema") => {
            c.pos += 1;
            GrantTarget::Schemas(name_list(c)?)
        }
        Some("database") => {
            c.pos += 1;
            GrantTarget::Databases(name_list(c)?)
        }
        Some("all")
            if matches!(
                c.peek_word_at(1),
                Some("functions" | "procedures" | "routines")
            ) =>
        {
            let word = c
                .peek_word_at(1)
                .unwrap_or("functions")
                .trim_end_matches('s')
                .to_string();
            c.pos += 2;
            c.expect_word("in")?;
            c.expect_word("schema")?;
            GrantTarget::AllFunctionsIn(word, name_list(c)?)
        }
        Some(w @ ("function" | "procedure" | "routine")) => {
            let word = w.to_string();
            c.pos += 1;
            let mut items = vec![super::funcstmt::func_ref(c)?];
            while c.eat_punct(',') {
                items.push(super::funcstmt::func_ref(c)?);
            }
            GrantTarget::Functions(word, items)
        }
        Some(w @ ("language" | "type" | "domain" | "tablespace" | "foreign" | "large")) => {
            return Err(PgError::unsupported(format!(
                "GRANT / REVOKE on {} is not supported",
                w.to_uppercase()
            )))
        }
        _ => {
            let _ = c.eat_word("table");
            GrantTarget::Tables(qualified_list(c)?)
        }
    };
    c.expect_word(if grant { "to" } else { "from" })?;
    let mut grantees = vec![grantee(c)?];
    while c.eat_punct(',') {
        grantees.push(grantee(c)?);
    }
    if grant && c.eat_word("with") {
        c.expect_word("grant")?;
        c.expect_word("option")?;
        option = true;
    }
    eat_granted_by(c)?;
    let mut cascade = false;
    if !grant {
        if c.eat_word("cascade") {
            cascade = true;
        } else {
            let _ = c.eat_word("restrict");
        }
    }
    c.expect_end()?;
    Ok(GrantStmt::Objects {
        grant,
        option,
        privileges,
        target,
        grantees,
        cascade,
    })
}

/// `GRANTED BY role`: accepted, and (as PostgreSQL 15 for a role other
/// than the current user) refused.
fn eat_granted_by(c: &mut Cur<'_>) -> PgResult<()> {
    if c.eat_word("granted") {
        c.expect_word("by")?;
        let who = grantee(c)?;
        if !matches!(
            who.as_str(),
            "current_user" | "current_role" | "session_user"
        ) {
            return Err(PgError::unsupported("grantor must be current user"));
        }
    }
    Ok(())
}
