//! How a node serves its clients: the server crate's postmaster and
//! session loop over SQL sessions of this node ([`Sessions`], the
//! [`BackendFactory`]), with the ParameterStatus set PostgreSQL reports.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::node::Node;
use engine::Role;
use pgtypes::error::PgResult;
use server::{self, BackendFactory, ReplicationHandler};
use sql::session::Session;

/// Makes a SQL [`Session`] for each new connection to a node.
#[derive(Clone)]
pub struct Sessions {
    node: Arc<Node>,
}

impl Sessions {
    /// The factory of `node`'s sessions.
    pub fn new(node: Arc<Node>) -> Sessions {
        Sessions { node }
    }
}

/// Serves SQL clients of `node` on `listener` until `shutdown` completes;
/// `replication=true` connections go to `replication` (a walsender).
pub async fn serve(
    node: Arc<Node>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    replication: Option<Arc<dyn ReplicationHandler>>,
) -> std::io::Result<()> {
    server::serve_replicated(Sessions::new(node), listener, shutdown, replication).await
}

/// Settings reported to every client (PostgreSQL's GUC_REPORT set).
const REPORTED: &[&str] = &[
    "server_version",
    "server_encoding",
    "client_encoding",
    "DateStyle",
    "integer_datetimes",
    "standard_conforming_strings",
    "TimeZone",
    "IntervalStyle",
    "is_superuser",
];

impl BackendFactory for Sessions {
    type Backend = Session;

    fn connect(&self, params: &[(String, String)]) -> PgResult<Session> {
        Session::new(self.node.clone(), params)
    }

    fn parameter_statuses(&self, params: &[(String, String)]) -> Vec<(String, String)> {
        let startup = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let mut out: Vec<(String, String)> = REPORTED
            .iter()
            .map(|name| {
                // Session-settable values the client sent win over the
                // server's; server-fixed ones never come from the client.
                let client = match *name {
                    "client_encoding" | "DateStyle" | "TimeZone" | "IntervalStyle" => startup(name),
                    _ => None,
                };
                let value = client
                    .unwrap_or_else(|| self.node.config.get(name).unwrap_or_default().to_string());
                (name.to_string(), value)
            })
            .collect();
        out.push((
            "application_name".into(),
            startup("application_name").unwrap_or_default(),
        ));
        out.push((
            "session_authorization".into(),
            startup("user").unwrap_or_default(),
        ));
        let standby = if self.node.role() == Role::Standby {
            "on"
        } else {
            "off"
        };
        out.push(("in_hot_standby".into(), standby.into()));
        out
    }

    fn max_message_size(&self) -> usize {
        self.node.config.max_message_size()
    }
}
