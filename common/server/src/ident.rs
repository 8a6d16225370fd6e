//! `pg_ident.conf`: user name maps (PostgreSQL's `hba.c`, its ident
//! part: `parse_ident_line`, `check_usermap`).
//!
//! A pg_hba.conf line with `map=NAME` (`peer` and `cert` methods) lets a
//! client whose authenticated name — the OS user of a Unix-socket peer,
//! the CN of a client certificate — differs from the role it asks for in,
//! when a line of the map says so:
//!
//! ```text
//!   # MAPNAME   SYSTEM-USERNAME     PG-USERNAME
//!   admins      alice               postgres        exact names
//!   corp        /^(.*)@corp\.com$   \1              regex; \1 is its capture
//! ```
//!
//! * Same tokenizer as pg_hba.conf (`#` comments, `\` continuations,
//!   double quotes); each field is one word (`multiple values in ident
//!   field`), fewer than three is `missing entry at end of line`, more are
//!   ignored, as by PostgreSQL 15.
//! * A system user starting with `/` is a regular expression (the rest of
//!   the word), searched for in the authenticated name (anchor it with
//!   `^…$`); a `\1` in the PG user is replaced by the first capture.
//!   Without `/` both names must be equal. The first line of the map that
//!   matches lets the connection in.
//! * Regular expressions are the `regex` crate's, not PostgreSQL's ARE:
//!   the usual syntax is the same, back-references and a few ARE escapes
//!   are not, and a bad expression's message differs after `invalid
//!   regular expression "…": `.
//!
//! Like pg_hba.conf, a file with any faulty line is rejected whole: at
//! start-up the maps are empty (PostgreSQL starts anyway; only connections
//! that need a map fail), at reload the old maps stay.

use std::path::Path;

use regex::Regex;

use crate::hba::{tokenize, Token};

/// The system-user field of a line.
#[derive(Clone, Debug)]
pub enum SystemUser {
    /// A name, compared as is.
    Name(String),
    /// A regular expression (the word without its `/`).
    Regex(Regex),
}

/// One valid line.
#[derive(Clone, Debug)]
pub struct IdentLine {
    /// 1-based line number.
    pub line_number: usize,
    /// The map it belongs to.
    pub map_name: String,
    /// The system user as written (`/…` for a regex).
    pub sys_name: String,
    /// The compiled system-user field.
    pub system_user: SystemUser,
    /// The PostgreSQL role (may contain `\1`).
    pub pg_username: String,
}

/// A faulty line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdentError {
    /// 1-based line number.
    pub line_number: usize,
    /// PostgreSQL's message (`missing entry at end of line` …).
    pub message: String,
}

/// Every line of the file, valid or not (pg_ident_file_mappings).
pub type IdentFileRows = Vec<Result<IdentLine, IdentError>>;

/// A parsed pg_ident.conf.
#[derive(Clone, Debug, Default)]
pub struct IdentMaps {
    /// The valid lines, in file order.
    pub lines: Vec<IdentLine>,
}

/// Why [`IdentMaps::check`] refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsermapFailure {
    /// No line of the map matched (PostgreSQL's `no match in usermap`).
    NoMatch,
    /// A matching regex line wants `\1` but the expression has no capture.
    NoSubexpression {
        /// The expression (without `/`).
        regex: String,
        /// The PG user field.
        pg_username: String,
    },
}

impl IdentMaps {
    /// Parses `text`; any faulty line makes the whole file invalid.
    pub fn parse(text: &str) -> Result<IdentMaps, Vec<IdentError>> {
        crate::hba::all_or_errors(parse_rows(text)).map(|lines| IdentMaps { lines })
    }

    /// Reads and parses the file at `path`. The outer error is an I/O one.
    pub fn load(path: &Path) -> std::io::Result<Result<IdentMaps, Vec<IdentError>>> {
        Ok(IdentMaps::parse(&std::fs::read_to_string(path)?))
    }

    /// Whether map `map` lets `system_user` (the authenticated name) in
    /// as role `pg_user` (PostgreSQL's `check_usermap` with a map name).
    pub fn check(&self, map: &str, pg_user: &str, system_user: &str) -> Result<(), UsermapFailure> {
        for l in self.lines.iter().filter(|l| l.map_name == map) {
            match &l.system_user {
                SystemUser::Name(n) => {
                    if n == system_user && l.pg_username == pg_user {
                        return Ok(());
                    }
                }
                SystemUser::Regex(re) => {
                    let Some(caps) = re.captures(system_user) else {
                        continue;
                    };
                    let role = if l.pg_username.contains("\\1") {
                        let Some(m) = caps.get(1) else {
                            return Err(UsermapFailure::NoSubexpression {
                                regex: l.sys_name[1..].to_string(),
                                pg_username: l.pg_username.clone(),
                            });
                        };
                        l.pg_username.replacen("\\1", m.as_str(), 1)
                    } else {
                        l.pg_username.clone()
                    };
                    if role == pg_user {
                        return Ok(());
                    }
                }
            }
        }
        Err(UsermapFailure::NoMatch)
    }
}

/// Every line, parsed or with its error.
pub fn parse_rows(text: &str) -> IdentFileRows {
    tokenize(text)
        .into_iter()
        .map(|(n, _raw, fields)| {
            parse_line(n, &fields).map_err(|message| IdentError {
                line_number: n,
                message,
            })
        })
        .collect()
}

fn field(fields: &[Vec<Token>], i: usize) -> Result<&Token, String> {
    match fields.get(i).map(|f| f.as_slice()) {
        None => Err("missing entry at end of line".into()),
        Some([t]) => Ok(t),
        Some(_) => Err("multiple values in ident field".into()),
    }
}

fn parse_line(n: usize, fields: &[Vec<Token>]) -> Result<IdentLine, String> {
    let map_name = field(fields, 0)?.text.clone();
    let sys_name = field(fields, 1)?.text.clone();
    let pg_username = field(fields, 2)?.text.clone();
    let system_user = match sys_name.strip_prefix('/') {
        Some(re) => SystemUser::Regex(Regex::new(re).map_err(|e| {
            let why = match e {
                regex::Error::Syntax(s) => s
                    .lines()
                    .rev()
                    .find(|l| l.starts_with("error: "))
                    .map(|l| l.trim_start_matches("error: ").to_string())
                    .unwrap_or(s),
                other => other.to_string(),
            };
            format!("invalid regular expression \"{re}\": {why}")
        })?),
        None => SystemUser::Name(sys_name.clone()),
    };
    Ok(IdentLine {
        line_number: n,
        map_name,
        sys_name,
        system_user,
        pg_username,
    })
}

/// The file `primary` writes on an empty data directory: initdb's copy of
/// `pg_ident.conf.sample`, no maps.
pub fn initial_file() -> &'static str {
    "# PostgreSQL User Name Maps
# =========================
#
# Refer to the PostgreSQL documentation, chapter \"Client
# Authentication\" for a complete description.  A short synopsis
# follows.
#
# This file controls PostgreSQL user name mapping.  It maps external
# user names to their corresponding PostgreSQL user names.  Records
# are of the form:
#
# MAPNAME  SYSTEM-USERNAME  PG-USERNAME
#
# (The uppercase quantities must be replaced by actual values.)
#
# MAPNAME is the (otherwise freely chosen) map name that was used in
# pg_hba.conf.  SYSTEM-USERNAME is the detected user name of the
# client.  PG-USERNAME is the requested PostgreSQL user name.  The
# existence of a record specifies that SYSTEM-USERNAME may connect as
# PG-USERNAME.
#
# If SYSTEM-USERNAME starts with a slash (/), it will be treated as a
# regular expression.  Optionally this can contain a capture (a
# parenthesized subexpression).  The substring matching the capture
# will be substituted for \\1 (backslash-one) if present in
# PG-USERNAME.
#
# Multiple maps may be specified in this file and used by pg_hba.conf.
#
# No map names are defined in the default configuration.  If all
# system user names and PostgreSQL user names are the same, you don't
# need anything in this file.
#
# This file is read on server startup and when the postmaster receives
# a SIGHUP signal.  If you edit the file on a running system, you have
# to SIGHUP the postmaster for the changes to take effect.  You can
# use \"pg_ctl reload\" to do that.

# Put your actual configuration here
# ----------------------------------

# MAPNAME       SYSTEM-USERNAME         PG-USERNAME
"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_postgres_lines_and_errors() {
        let rows = parse_rows(
            "m1 alice bob\nm1 /^(.*)@example$ \\1\nm2 \"a b\" \"c d\" extra\n\
             bad onlytwo\nm3 /( x\nm4 a,b c\n# comment\n",
        );
        let ok: Vec<_> = rows.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(ok.len(), 3);
        assert_eq!(ok[1].sys_name, "/^(.*)@example$");
        assert_eq!(
            (ok[2].sys_name.as_str(), ok[2].pg_username.as_str()),
            ("a b", "c d")
        );
        let errs: Vec<_> = rows.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!(errs[0].line_number, 4);
        assert_eq!(errs[0].message, "missing entry at end of line");
        assert!(errs[1]
            .message
            .starts_with("invalid regular expression \"(\": "));
        assert_eq!(errs[2].message, "multiple values in ident field");
        assert!(IdentMaps::parse("m1 alice bob\nbad x\n").is_err());
    }

    #[test]
    fn maps_names_and_regexes() {
        let maps =
            IdentMaps::parse("m alice bob\nm /^(.*)@example$ \\1\nm /^x(.*)$ fixed\nn /^y$ \\1\n")
                .unwrap();
        assert_eq!(maps.check("m", "bob", "alice"), Ok(()));
        assert_eq!(
            maps.check("m", "alice", "alice"),
            Err(UsermapFailure::NoMatch)
        );
        assert_eq!(maps.check("m", "carol", "carol@example"), Ok(()));
        assert_eq!(maps.check("m", "fixed", "xyz"), Ok(()));
        assert_eq!(
            maps.check("other", "bob", "alice"),
            Err(UsermapFailure::NoMatch)
        );
        assert!(matches!(
            maps.check("n", "y", "y"),
            Err(UsermapFailure::NoSubexpression { .. })
        ));
    }
}
