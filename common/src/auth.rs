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

use crate::node::Node;

/// The pg_hba.conf path a configuration names.
pub fn hba_path(config: &Config) -> PathBuf {
    match config.get("hba_file").filter(|s| !s.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                p
            } else {
                config.data_dir.join(p)
            }
        }
        None => config.data_dir.join("pg_hba.conf"),
    }
}

/// The node's loaded rules (None: no file, everyone is trusted).
#[derive(Default)]
pub struct HbaState {
    rules: RwLock<Option<Arc<HbaRules>>>,
}

impl HbaState {
    /// Loads the file at start-up: absent is "trust everyone" (warned),
    /// faulty is an error (PostgreSQL refuses to start).
    pub fn load(config: &Config) -> PgResult<HbaState> {
        let path = hba_path(config);
        let state = HbaState::default();
        match HbaRules::load(&path) {
            Ok(Ok(r)) => *state.rules.write() = Some(Arc::new(r)),
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
            }
            Err(e) => {
                return Err(PgError::new(
                    sqlstate::CONFIG_FILE_ERROR,
                    format!("could not open file \"{}\": {e}", path.display()),
                ))
            }
        }
        Ok(state)
    }

    /// Re-reads the file; on any error the old rules stay. Returns true
    /// if the rules were replaced.
    pub fn reload(&self, config: &Config) -> bool {
        let path = hba_path(config);
        match HbaRules::load(&path) {
            Ok(Ok(r)) => {
                *self.rules.write() = Some(Arc::new(r));
                true
            }
            Ok(Err(errors)) => {
                log_errors(&path, &errors);
                tracing::info!("pg_hba.conf was not reloaded");
                false
            }
            Err(e) => {
                tracing::info!(
                    "could not open configuration file \"{}\": {e}",
                    path.display()
                );
                tracing::info!("pg_hba.conf was not reloaded");
                false
            }
        }
    }

    /// The current rules.
    pub fn rules(&self) -> Option<Arc<HbaRules>> {
        self.rules.read().clone()
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

/// Decides how the connection must authenticate (see the module doc).
pub fn authentication(
    node: &Node,
    params: &[(String, String)],
    conn: ConnectionInfo,
) -> PgResult<AuthRequest> {
    let Some(rules) = node.hba().rules() else {
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
        if line.clientcert == ClientCert::VerifyFull && cn != user {
            cn_mismatch = Some(cn.clone());
        }
    }
    if line.method == HbaMethod::Cert {
        if let Some(cn) = cn_mismatch.take() {
            if cn.is_empty() {
                tracing::info!("certificate authentication failed for user \"{user}\": client certificate contains no user name");
            } else {
                tracing::info!(
                    "provided user name ({user}) and authenticated user name ({cn}) do not match"
                );
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
        // role asked for (no user name maps).
        HbaMethod::Peer if conn.peer.is_none() => {
            let os_user = conn.peer_uid.and_then(server::stream::os_user_name);
            if os_user.as_deref() != Some(user) {
                tracing::info!(
                    "provided user name ({user}) and authenticated user name ({}) do not match",
                    os_user.as_deref().unwrap_or("?")
                );
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
