//! Idle connections, held by this process rather than by a pgbench with a
//! `\sleep 1s` script: a tokio-postgres connection costs the client a
//! socket and a parked task, so ten thousand of them fit in one process on
//! two cores, and they stay truly idle (a sleeping pgbench client still
//! wakes every second and runs a transaction at the end of its sleep).
//!
//! The "mostly idle" variant of the seed (`\sleep 100ms` then `SELECT 1`)
//! is [`IdlePool::start_mostly_idle`]: every connection loops sleeping
//! 100 ms and running `SELECT 1`, their phases spread evenly over the
//! 100 ms so they do not fire together. The pool counts the statements
//! those loops complete ([`IdlePool::statements_done`]): the loops are
//! closed (a connection sleeps only after its answer), so a server that
//! answers them more slowly is also asked less, and the active clients'
//! tps alone does not say how much work each server did.
//!
//! The pool grows only (the idle workload raises I step by step); growing
//! checks `MemAvailable` every hundred connections and stops with an error
//! below the configured floor, because PostgreSQL's process per connection
//! can exhaust a shared machine long before 10,000.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use tokio::task::JoinHandle;
use tokio_postgres::{Client, NoTls};

use super::sysinfo::meminfo_kib;
use super::target::Endpoint;
use crate::{block_on, runtime};

/// Connections opened at once while growing the pool.
const CONNECT_PARALLELISM: usize = 32;

/// A set of open, idle client connections to one server.
#[derive(Default)]
pub struct IdlePool {
    clients: Vec<Arc<Client>>,
    tasks: Vec<JoinHandle<()>>,
    busy: Option<(Arc<AtomicBool>, Vec<JoinHandle<()>>)>,
    done: Arc<AtomicU64>,
}

impl IdlePool {
    /// An empty pool.
    pub fn new() -> IdlePool {
        IdlePool::default()
    }

    /// Open connections.
    pub fn len(&self) -> usize {
        self.clients.len()
    }

    /// True when no connection is open.
    pub fn is_empty(&self) -> bool {
        self.clients.is_empty()
    }

    /// Opens connections until `n` are open. Errors: a connection failed
    /// (with how many are open), or MemAvailable fell below
    /// `min_avail_mib`.
    pub fn grow_to(&mut self, ep: &Endpoint, n: u32, min_avail_mib: u64) -> Result<(), String> {
        let connstr = ep.connstr();
        while self.clients.len() < n as usize {
            if let Some(avail) = meminfo_kib("MemAvailable") {
                if avail / 1024 < min_avail_mib {
                    return Err(format!(
                        "stopped at {} connections: MemAvailable {} MiB < {} MiB",
                        self.clients.len(),
                        avail / 1024,
                        min_avail_mib
                    ));
                }
            }
            let batch = (n as usize - self.clients.len()).min(100);
            let connstr = connstr.clone();
            let results: Vec<Result<(Client, JoinHandle<()>), String>> = block_on(async move {
                stream::iter(0..batch)
                    .map(|_| {
                        let connstr = connstr.clone();
                        async move {
                            let (client, conn) = tokio_postgres::connect(&connstr, NoTls)
                                .await
                                .map_err(|e| e.to_string())?;
                            let task = tokio::spawn(async move {
                                let _ = conn.await;
                            });
                            Ok((client, task))
                        }
                    })
                    .buffer_unordered(CONNECT_PARALLELISM)
                    .collect()
                    .await
            });
            let mut first_err = None;
            for r in results {
                match r {
                    Ok((c, t)) => {
                        self.clients.push(Arc::new(c));
                        self.tasks.push(t);
                    }
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = first_err {
                return Err(format!(
                    "connection failed with {} open: {e}",
                    self.clients.len()
                ));
            }
        }
        Ok(())
    }

    /// Every connection starts looping `sleep 100ms; SELECT 1`.
    pub fn start_mostly_idle(&mut self) {
        self.stop_mostly_idle();
        let stop = Arc::new(AtomicBool::new(false));
        let n = self.clients.len().max(1) as u64;
        let handles = self
            .clients
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let c = Arc::clone(c);
                let stop = Arc::clone(&stop);
                let done = Arc::clone(&self.done);
                let phase = Duration::from_micros(100_000 * i as u64 / n);
                runtime().spawn(async move {
                    tokio::time::sleep(phase).await;
                    while !stop.load(Ordering::Relaxed) {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        if c.simple_query("SELECT 1").await.is_err() {
                            break;
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        self.busy = Some((stop, handles));
    }

    /// `SELECT 1`s the mostly-idle loops have completed since the pool
    /// was made.
    pub fn statements_done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Stops the mostly-idle loops (waits for each to finish its query).
    pub fn stop_mostly_idle(&mut self) {
        if let Some((stop, handles)) = self.busy.take() {
            stop.store(true, Ordering::Relaxed);
            block_on(async {
                for h in handles {
                    let _ = tokio::time::timeout(Duration::from_secs(30), h).await;
                }
            });
        }
    }

    /// Closes every connection and waits for the sockets to close.
    pub fn close(&mut self) {
        self.stop_mostly_idle();
        self.clients.clear();
        let tasks = std::mem::take(&mut self.tasks);
        block_on(async {
            for t in tasks {
                let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
            }
        });
    }
}

impl Drop for IdlePool {
    fn drop(&mut self) {
        self.close();
    }
}
