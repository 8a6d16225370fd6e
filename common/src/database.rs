//! The node-wide shared state every session holds an `Arc` of: settings,
//! clog, procarray, heap (buffer pool), catalog and the parse cache.
//!
//! [`Database::open`] assembles it from a data directory:
//!
//! ```text
//!  DIR/ (created if empty)
//!   ├── base/         relation files (smgr)
//!   ├── global/       catalog, next_xid
//!   └── pg_xact/      clog segments
//! ```
//!
//! then loads the catalog and rebuilds every in-memory index from the heap,
//! noting the largest xid found in any tuple header: the procarray's
//! `next_xid` starts past it (and past the value saved by the last
//! checkpoint in `global/next_xid`), so xids are never reused across a
//! restart. WAL replaces this bookkeeping in issue 3.

use std::path::Path;
use std::sync::Arc;

use crate::clog::Clog;
use crate::config::Config;
use crate::error::{sqlstate, PgError, PgResult};
use crate::procarray::ProcArray;
use crate::sql::catalog::Catalog;
use crate::sql::parser::ParseCache;
use crate::storage::heapam::Heap;
use crate::storage::hio::ExtensionMode;
use crate::types::TransactionId;

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
    /// Tables and indexes.
    pub catalog: Catalog,
    /// Parsed statements by query text.
    pub parse_cache: ParseCache,
}

/// Texts kept by the parse cache.
const PARSE_CACHE_SIZE: usize = 4096;

fn io_err(what: &str, p: &Path, e: std::io::Error) -> PgError {
    PgError::new(
        sqlstate::IO_ERROR,
        format!("could not {what} \"{}\": {e}", p.display()),
    )
}

impl Database {
    /// Opens (creating if empty) the data directory named by `config`.
    pub fn open(config: Config, role: Role) -> PgResult<Arc<Database>> {
        let dir = config.data_dir.clone();
        for sub in ["", "base", "global", "pg_xact"] {
            let p = dir.join(sub);
            std::fs::create_dir_all(&p).map_err(|e| io_err("create directory", &p, e))?;
        }
        let clog = Clog::open(&dir)?;
        let mode = ExtensionMode::parse(config.get("relation_extension").unwrap_or("bulk"))
            .unwrap_or_default();
        let heap = Heap::open(&dir, config.shared_buffers_pages(), mode)?;
        let catalog = Catalog::open(&dir)?;
        let saved_next = read_next_xid(&dir)?;
        let max_procs = config.max_connections() + config.max_prepared_transactions() + 8;
        // The procarray needs next_xid before the heap is scanned; build the
        // database with a provisional one and advance it after the rebuild.
        let next = TransactionId(saved_next.max(TransactionId::FIRST_NORMAL.0));
        let db = Database {
            procarray: ProcArray::new(max_procs, next),
            config,
            role,
            clog,
            heap,
            catalog,
            parse_cache: ParseCache::new(PARSE_CACHE_SIZE),
        };
        let max_seen = crate::sql::ddl::rebuild_all_indexes(&db)?;
        if max_seen + 1 > db.procarray.next_xid().0 {
            db.procarray.advance_next_xid(TransactionId(max_seen + 1));
        }
        tracing::debug!(
            tables = db.catalog.tables().len(),
            next_xid = db.procarray.next_xid().0,
            "database opened"
        );
        Ok(Arc::new(db))
    }

    /// CHECKPOINT (and clean shutdown): writes dirty heap pages and clog
    /// pages to disk and records next_xid.
    pub fn checkpoint(&self) -> PgResult<()> {
        self.heap.checkpoint()?;
        self.clog.flush()?;
        write_next_xid(&self.config.data_dir, self.procarray.next_xid().0)
    }

    /// VACUUM's index part: removes index entries whose heap version is
    /// dead to every snapshot (`tables` empty: all tables).
    pub fn vacuum_indexes(&self, tables: &[String]) -> PgResult<()> {
        let list = if tables.is_empty() {
            self.catalog.tables()
        } else {
            tables
                .iter()
                .map(|t| self.catalog.table(t))
                .collect::<PgResult<Vec<_>>>()?
        };
        let horizon = self.procarray.oldest_xmin();
        for t in list {
            let _lock = t.lock.shared();
            if t.check_not_dropped().is_err() {
                continue;
            }
            for ix in t.indexes.list() {
                let mut entries: Vec<(Vec<u8>, crate::types::ItemPointer)> = Vec::new();
                ix.index.range(
                    std::ops::Bound::Unbounded,
                    std::ops::Bound::Unbounded,
                    &mut |k, tid| {
                        entries.push((k.to_vec(), tid));
                        std::ops::ControlFlow::Continue(())
                    },
                );
                for (k, tid) in entries {
                    if crate::sql::executor::dead_to_all(self, t.rel, tid, horizon)? {
                        ix.index.remove(&k, tid);
                    }
                }
            }
        }
        Ok(())
    }
}

fn read_next_xid(dir: &Path) -> PgResult<u64> {
    let p = dir.join("global").join("next_xid");
    match std::fs::read_to_string(&p) {
        Ok(s) => s.trim().parse::<u64>().map_err(|_| {
            PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!("invalid contents in file \"{}\"", p.display()),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(io_err("read file", &p, e)),
    }
}

fn write_next_xid(dir: &Path, next: u64) -> PgResult<()> {
    use std::io::Write;
    let p = dir.join("global").join("next_xid");
    let tmp = dir.join("global").join("next_xid.tmp");
    {
        let mut f = std::fs::File::create(&tmp).map_err(|e| io_err("create file", &tmp, e))?;
        f.write_all(format!("{next}\n").as_bytes())
            .map_err(|e| io_err("write file", &tmp, e))?;
        f.sync_all().map_err(|e| io_err("fsync file", &tmp, e))?;
    }
    std::fs::rename(&tmp, &p).map_err(|e| io_err("rename file", &tmp, e))?;
    Ok(())
}
