//! Client authentication for a node (PostgreSQL's `ClientAuthentication`
//! plus the role checks of `InitPostgres`): which pg_hba.conf line a
//! connection matches, which exchange it must pass, and what stops it
//! afterwards.
//!
//! ```text
//!  startup packet ─▶ HbaRules::find (first match) ── none ─▶ 28000 no pg_hba.conf entry
//!                        │ reject ─▶ 28000 pg_hba.conf rejects connection
//!                        │ trust ─▶ role must exist ─▶ 28000 role "x" does not exist
//!                        │ password / md5 / scram-sha-256
//!                        ▼
//!      AuthRequest { method, secret: role's verifier (None: unknown role,
//!                    mock exchange), failure_detail (expired), after:
//!                    NOLOGIN 28000 / no REPLICATION 42501 }
//! ```
//!
//! `peer` and `cert` lines with `map=NAME` compare the authenticated name
//! (OS user, certificate CN) with the role through pg_ident.conf's map
//! (`ident_file`, default `DIR/pg_ident.conf`, [`server::ident`]),
//! loaded and reloaded with the rules (one swap for both files, so a
//! connection never pairs new rules with old maps); a faulty file keeps the old maps
//! (at start-up: none).
//!
//! The rules are loaded at start-up from `hba_file` (default
//! `DIR/pg_hba.conf`) and replaced whole on reload (SIGHUP or
//! `pg_reload_conf()`); a file with a faulty line keeps the old rules and
//! logs every faulty line with PostgreSQL's words. A data directory
//! without the file (made before authentication existed, or an in-process
//! test node) lets every client in, as before, with a warning at start-up.
//!
//! Roles come from the catalog ([`engine::catalog::Catalog::role`]), which
//! a standby replays like any catalog change: a role created on the
//! primary logs in on the standby with its password.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::RwLock;

use engine::catalog::{CatalogChange, RoleSpec, BOOTSTRAP_SUPERUSER_OID};
use pgtypes::config::Config;
use pgtypes::error::{sqlstate, PgError, PgResult};
use server::backend::{AuthMethod, AuthRequest, ConnectionInfo};
use server::hba::{ClientCert, ConnectionFacts, HbaMethod, HbaRules};
use server::ident::{IdentMaps, UsermapFailure};

use crate::node::Node;

/// The pg_hba.conf path a configuration names.
pub fn hba_path(config: &Config) -> PathBuf {
    config.file_path("hba_file", "pg_hba.conf")
}

/// The pg_ident.conf path a configuration names.
pub fn ident_path(config: &Config) -> PathBuf {
    config.file_path("ident_file", "pg_ident.conf")
}

/// What one connection authenticates against: the rules (None: no file,
/// everyone is trusted) and the user name maps, read together.
#[derive(Default)]
pub struct AuthFiles {
    pub rules: Option<Arc<HbaRules>>,
    pub ident: Arc<IdentMaps>,
}

/// The node's loaded pg_hba.conf and pg_ident.conf. A reload reads both
/// files, then replaces them in one swap: a connection sees either the
/// old pair or the new one, never new rules naming a map the old
/// pg_ident.conf lacks (PostgreSQL's postmaster loads both before it
/// forks another backend).
#[derive(Default)]
pub struct HbaState {
    files: RwLock<Arc<AuthFiles>>,
}

impl HbaState {
    /// Loads the files at start-up: an absent pg_hba.conf is "trust
    /// everyone" (warned), a faulty one is an error (PostgreSQL refuses
    /// to start).
    pub fn load(config: &Config) -> PgResult<HbaState> {
        let path = hba_path(config);
        let rules = match HbaRules::load(&path) {
            Ok(Ok(r)) => Some(Arc::new(r)),
            Ok(Err(errors)) => {
                log_errors(&path, &errors);
                return Err(PgError::new(
                    sqlstate::CONFIG_FILE_ERROR,
                    "could not load pg_hba.conf",
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::warn!(
                    "no client authentication file \"{}\": every connection is trusted",
                    path.display()
                );
                None
            }
            Err(e) => {
                return Err(PgError::new(
                    sqlstate::CONFIG_FILE_ERROR,
                    format!("could not open file \"{}\": {e}", path.display()),
                ))
            }
        };
        // A missing or faulty pg_ident.conf is no reason not to start
        // (as in PostgreSQL): only connections that need a map fail.
        let ident = read_ident(&ident_path(config))
            .map(Arc::new)
            .unwrap_or_default();
        Ok(HbaState {
            files: RwLock::new(Arc::new(AuthFiles { rules, ident })),
        })
    }

    /// Re-reads both files; a file with any error keeps its old contents
    /// (logged with the lines at fault). Returns whether pg_hba.conf and
    /// pg_ident.conf were replaced.
    pub fn reload(&self, config: &Config) -> (bool, bool) {
        let rules = reread_hba(&hba_path(config));
        let ident = read_ident(&ident_path(config)).map(Arc::new);
        if ident.is_none() {
            tracing::info!("pg_ident.conf was not reloaded");
        }
        let replaced = (rules.is_some(), ident.is_some());
        let mut files = self.files.write();
        let old = files.clone();
        *files = Arc::new(AuthFiles {
            rules: rules.map(Some).unwrap_or_else(|| old.rules.clone()),
            ident: ident.unwrap_or_else(|| old.ident.clone()),
        });
        replaced
    }

    /// The current rules and maps, as one snapshot.
    pub fn current(&self) -> Arc<AuthFiles> {
        self.files.read().clone()
    }
}

/// pg_hba.conf's new rules for a reload, or None (the reasons logged).
fn reread_hba(path: &std::path::Path) -> Option<Arc<HbaRules>> {
    match HbaRules::load(path) {
        Ok(Ok(r)) => Some(Arc::new(r)),
        Ok(Err(errors)) => {
            log_errors(path, &errors);
            tracing::info!("pg_hba.conf was not reloaded");
            None
        }
        Err(e) => {
            tracing::info!(
                "could not open configuration file \"{}\": {e}",
                path.display()
            );
            tracing::info!("pg_hba.conf was not reloaded");
            None
        }
    }
}

/// pg_ident.conf's maps, or None (the reasons logged as PostgreSQL
/// words them).
fn read_ident(path: &std::path::Path) -> Option<IdentMaps> {
    match IdentMaps::load(path) {
        Ok(Ok(m)) => Some(m),
        Ok(Err(errors)) => {
            for e in &errors {
                if e.message == "missing entry at end of line" {
                    tracing::info!(
                        "missing entry in file \"{}\" at end of line {}",
                        path.display(),
                        e.line_number
                    );
                } else if e.message.starts_with("invalid regular expression") {
                    tracing::info!("{}", e.message);
                } else {
                    tracing::info!(
                        "{}\nCONTEXT:  line {} of configuration file \"{}\"",
                        e.message,
                        e.line_number,
                        path.display()
                    );
                }
            }
            None
        }
        Err(e) => {
            tracing::info!("could not open usermap file \"{}\": {e}", path.display());
            None
        }
    }
}

fn log_errors(path: &std::path::Path, errors: &[server::hba::HbaError]) {
    for e in errors {
        tracing::info!(
            "{}\nCONTEXT:  line {} of configuration file \"{}\"",
            e.message,
            e.line_number,
            path.display()
        );
    }
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// PostgreSQL's `check_usermap`: whether `authn` (the OS user, the
/// certificate's CN) may be role `user` — the same name without a map,
/// else a line of map `map` says so — logging the reason when not.
fn usermap_ok(ident: &IdentMaps, map: Option<&str>, user: &str, authn: &str) -> bool {
    let Some(map) = map.filter(|m| !m.is_empty()) else {
        if authn == user {
            return true;
        }
        tracing::info!(
            "provided user name ({user}) and authenticated user name ({authn}) do not match"
        );
        return false;
    };
    match ident.check(map, user, authn) {
        Ok(()) => true,
        Err(UsermapFailure::NoMatch) => {
            tracing::info!(
                "no match in usermap \"{map}\" for user \"{user}\" authenticated as \"{authn}\""
            );
            false
        }
        Err(UsermapFailure::NoSubexpression { regex, pg_username }) => {
            tracing::info!(
                "regular expression \"{regex}\" has no subexpressions as requested by backreference in \"{pg_username}\""
            );
            false
        }
    }
}

/// Decides how the connection must authenticate (see the module doc).
pub fn authentication(
    node: &Node,
    params: &[(String, String)],
    conn: ConnectionInfo,
) -> PgResult<AuthRequest> {
    let files = node.hba().current();
    let Some(rules) = files.rules.as_deref() else {
        return Ok(AuthRequest::trust());
    };
    let user = param(params, "user").unwrap_or("");
    if user.is_empty() {
        return Err(PgError::new(
            sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
            "no PostgreSQL user name specified in startup packet",
        ));
    }
    let database = param(params, "database")
        .filter(|d| !d.is_empty())
        .unwrap_or(user);
    // Physical replication (replication=true …) matches only `replication`
    // lines; replication=database is a logical walsender, which matches
    // ordinary database lines.
    let replication = server::is_replication_request(params)
        && !param(params, "replication").is_some_and(|v| v.eq_ignore_ascii_case("database"));
    let facts = ConnectionFacts {
        peer: conn.peer.map(|p| p.ip()),
        ssl: conn.ssl,
        user,
        database,
        replication,
    };
    let catalog = node.catalog();
    // `+group`: the role is the group or a member of it, directly or not.
    let member = |role: &str, group: &str| {
        role == group
            || match (catalog.role(role), catalog.role(group)) {
                (Some(r), Some(g)) => catalog.member_closure(r.oid, false).contains(&g.oid),
                _ => false,
            }
    };
    let host = conn
        .peer
        .map(|p| p.ip().to_string())
        .unwrap_or_else(|| "[local]".into());
    let ssl = if conn.ssl {
        "SSL encryption"
    } else {
        "no encryption"
    };
    let Some(line) = rules.find(&facts, &member) else {
        let message = if replication {
            format!("no pg_hba.conf entry for replication connection from host \"{host}\", user \"{user}\", {ssl}")
        } else {
            format!(
                "no pg_hba.conf entry for host \"{host}\", user \"{user}\", database \"{database}\", {ssl}"
            )
        };
        return Err(PgError::new(
            sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
            message,
        ));
    };
    // clientcert / cert: a certificate checked against ssl_ca_file (the
    // handshake already refused one that does not chain to it).
    let client_cn = conn.ssl_info.as_ref().and_then(|i| {
        i.client_dn.as_ref()?;
        Some(i.client_cn.clone().unwrap_or_default())
    });
    let mut cn_mismatch = None;
    if line.clientcert != ClientCert::Off {
        if !conn.verifies_clients {
            return Err(PgError::new(
                sqlstate::CONFIG_FILE_ERROR,
                "client certificates can only be checked if a root certificate store is available",
            ));
        }
        let Some(cn) = &client_cn else {
            return Err(PgError::new(
                sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
                "connection requires a valid client certificate",
            ));
        };
        if line.clientcert == ClientCert::VerifyFull
            && (cn.is_empty() || !usermap_ok(&files.ident, line.map.as_deref(), user, cn))
        {
            cn_mismatch = Some(cn.clone());
        }
    }
    if line.method == HbaMethod::Cert {
        if let Some(cn) = cn_mismatch.take() {
            if cn.is_empty() {
                tracing::info!("certificate authentication failed for user \"{user}\": client certificate contains no user name");
            }
            tracing::info!(
                "certificate authentication failed for user \"{user}\"\nDETAIL:  Connection matched pg_hba.conf line {}: \"{}\"",
                line.line_number,
                line.raw
            );
            return Err(PgError::new(
                sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
                format!("certificate authentication failed for user \"{user}\""),
            ));
        }
    }
    let cn_failure = cn_mismatch.map(|_| {
        format!("certificate validation (clientcert=verify-full) failed for user \"{user}\": CN mismatch")
    });
    let role = catalog.role(user);
    let method = match line.method {
        // The OS user at the other end of the Unix socket must be the
        // role asked for, or be mapped to it by the line's `map=`.
        HbaMethod::Peer if conn.peer.is_none() => {
            let os_user = conn.peer_uid.and_then(server::stream::os_user_name);
            let ok = match os_user.as_deref() {
                Some(os) => usermap_ok(&files.ident, line.map.as_deref(), user, os),
                None => {
                    tracing::info!("could not look up local user ID {:?}", conn.peer_uid);
                    false
                }
            };
            if !ok {
                return Err(PgError::new(
                    sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
                    format!("Peer authentication failed for user \"{user}\""),
                ));
            }
            AuthMethod::Trust
        }
        HbaMethod::Reject | HbaMethod::Peer => {
            let message = if replication {
                format!("pg_hba.conf rejects replication connection for host \"{host}\", user \"{user}\", {ssl}")
            } else {
                format!("pg_hba.conf rejects connection for host \"{host}\", user \"{user}\", database \"{database}\", {ssl}")
            };
            return Err(PgError::new(
                sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
                message,
            ));
        }
        HbaMethod::Trust | HbaMethod::Cert => AuthMethod::Trust,
        HbaMethod::Password => AuthMethod::Password,
        HbaMethod::Md5 => AuthMethod::Md5,
        HbaMethod::ScramSha256 => AuthMethod::ScramSha256,
    };
    let Some(role) = role else {
        if method == AuthMethod::Trust {
            return Err(PgError::new(
                sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
                format!("role \"{user}\" does not exist"),
            ));
        }
        return Ok(AuthRequest {
            method,
            secret: None,
            failure_detail: Some(format!("Role \"{user}\" does not exist.")),
            after: None,
            hba_line: Some(format!(
                "pg_hba.conf line {}: \"{}\"",
                line.line_number, line.raw
            )),
        });
    };
    let expired = role
        .valid_until
        .is_some_and(|t| t < pgtypes::datetime::now_usecs());
    let after = if !role.login {
        Some(PgError::new(
            sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
            format!("role \"{user}\" is not permitted to log in"),
        ))
    } else if replication && !role.replication && !role.superuser {
        Some(PgError::new(
            sqlstate::INSUFFICIENT_PRIVILEGE,
            "must be superuser or replication role to start walsender",
        ))
    } else {
        None
    };
    Ok(AuthRequest {
        method,
        secret: role.password.clone(),
        failure_detail: cn_failure
            .or_else(|| expired.then(|| format!("User \"{user}\" has an expired password."))),
        after,
        hba_line: Some(format!(
            "pg_hba.conf line {}: \"{}\"",
            line.line_number, line.raw
        )),
    })
}

/// The superuser `primary` creates in a new cluster.
#[derive(Clone, Debug)]
pub struct Bootstrap {
    /// Its name (initdb's `-U`; default `postgres`).
    pub user: String,
    /// Its password (`--pwfile`), stored as a verifier.
    pub password: Option<String>,
}

impl Default for Bootstrap {
    fn default() -> Bootstrap {
        Bootstrap {
            user: "postgres".into(),
            password: None,
        }
    }
}

/// Creates the bootstrap superuser when the catalog has no role yet (a new
/// cluster, or one made before roles existed). WAL-logged like any role,
/// so standbys made from this primary have it.
pub fn ensure_bootstrap_superuser(node: &Node, boot: &Bootstrap) -> PgResult<()> {
    let catalog = node.catalog();
    if !catalog.roles().is_empty() {
        return Ok(());
    }
    let mut r = RoleSpec::new(BOOTSTRAP_SUPERUSER_OID, &boot.user);
    r.superuser = true;
    r.createrole = true;
    r.createdb = true;
    r.login = true;
    r.replication = true;
    r.bypassrls = true;
    if let Some(pw) = &boot.password {
        let iterations = node
            .config()
            .int("scram_iterations")
            .clamp(1, i32::MAX as i64) as u32;
        r.password = Some(if node.config().get("password_encryption") == Some("md5") {
            protocol::md5::md5_verifier(pw, &boot.user)
        } else {
            protocol::scram::Verifier::new(pw, iterations).to_string()
        });
    }
    catalog.apply_catalog_change(&CatalogChange::CreateRole(r))?;
    tracing::info!("bootstrap superuser \"{}\" created", boot.user);
    Ok(())
}

/// Reloads the configuration ([`Node::reload`]) on SIGHUP and on
/// `pg_reload_conf()` until the node is dropped (the task holds a weak
/// reference).
pub fn spawn_reload_task(node: &Arc<Node>) -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hup = signal(SignalKind::hangup())?;
    let weak = Arc::downgrade(node);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = hup.recv() => {}
                _ = server::reload::requested() => {}
            }
            let Some(node) = weak.upgrade() else { return };
            tokio::task::block_in_place(|| node.reload());
        }
    });
    Ok(())
}
