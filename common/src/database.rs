//! The node-wide shared state every session holds an `Arc` of: settings,
//! clog, procarray, heap (buffer pool), catalog. OWNER: Q2 assembles it;
//! each part's owner provides its constructor.

use std::sync::Arc;

use crate::clog::Clog;
use crate::config::Config;
use crate::error::PgResult;
use crate::procarray::ProcArray;
use crate::storage::heapam::Heap;

/// Which role this node plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Accepts writes.
    Primary,
    /// Replays WAL; read-only sessions (issue 4).
    Standby,
}

/// Shared state of one node.
pub struct Database {
    /// Server-wide settings.
    pub config: Config,
    /// Primary or standby.
    pub role: Role,
    /// Commit status of every xid.
    pub clog: Clog,
    /// Running transactions and snapshots.
    pub procarray: ProcArray,
    /// Heap pages through the buffer pool.
    pub heap: Heap,
}

impl Database {
    /// Opens (creating if empty) the data directory named by `config`.
    pub fn open(config: Config, role: Role) -> PgResult<Arc<Database>> {
        let _ = (config, role);
        todo!("Q2: assemble clog, procarray, heap, catalog; rebuild indexes")
    }
}
