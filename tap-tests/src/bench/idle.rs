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
//!
//! [`RawIdleSet`] is for the many-connections workload, where a
//! tokio-postgres client per connection is too heavy and a single source
//! address too few: each connection is a bare socket that sends a startup
//! packet and reads up to ReadyForQuery — a real session on the server —
//! then is never touched again. The sockets are spread over several
//! loopback source addresses (127.0.0.2, 127.0.0.3, …), one opening task
//! each, because one source address to one server port has only the
//! ephemeral port range (`net.ipv4.ip_local_port_range`, about 28,000) of
//! distinct connections.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// Idle sessions held as bare sockets (see the module essay).
#[derive(Default)]
pub struct RawIdleSet {
    streams: Vec<tokio::net::TcpStream>,
}

/// How opening a [`RawIdleSet`] went.
#[derive(Clone, Debug, Default)]
pub struct OpenReport {
    /// Sessions that reached ReadyForQuery.
    pub opened: usize,
    /// Wall time from the first connect to the last ReadyForQuery.
    pub elapsed: Duration,
    /// Why it stopped short of the count asked for.
    pub stopped: Option<String>,
    /// The source addresses used.
    pub sources: Vec<Ipv4Addr>,
}

impl OpenReport {
    /// Accepted and started sessions per second.
    pub fn rate(&self) -> f64 {
        self.opened as f64 / self.elapsed.as_secs_f64().max(1e-6)
    }
}

/// What a server's answer to a startup packet holds so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartupScan {
    /// ReadyForQuery arrived: the session is open.
    Ready,
    /// An ErrorResponse arrived: its message.
    Refused(String),
    /// Neither yet: read more.
    Incomplete,
}

/// Scans the backend messages in `buf` (authentication, parameter
/// statuses, key data…) for ReadyForQuery or an ErrorResponse.
pub fn scan_startup(buf: &[u8]) -> StartupScan {
    let mut at = 0;
    while let Some(header) = buf.get(at..at + 5) {
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        let Some(body) = buf.get(at + 5..at + 1 + len.max(4)) else {
            return StartupScan::Incomplete;
        };
        match header[0] {
            b'Z' => return StartupScan::Ready,
            b'E' => {
                let m = crate::raw::BackendMessage {
                    tag: b'E',
                    body: body.to_vec(),
                };
                let f = m.error_fields().unwrap_or_default();
                return StartupScan::Refused(format!("{} {}: {}", f.severity, f.code, f.message));
            }
            _ => at += 1 + len.max(4),
        }
    }
    StartupScan::Incomplete
}

/// One session from `src`: connect, startup packet, read to ReadyForQuery.
async fn open_one(
    src: Ipv4Addr,
    dst: SocketAddr,
    packet: &[u8],
) -> Result<tokio::net::TcpStream, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let sock = tokio::net::TcpSocket::new_v4().map_err(|e| format!("socket: {e}"))?;
    // The port is chosen at connect (by the whole 4-tuple), not at bind:
    // a bind to port 0 searches the bound ports of the address, which
    // grows with every session held from it.
    {
        use std::os::fd::AsRawFd;
        let one: libc::c_int = 1;
        // SAFETY: a valid socket and a c_int option value.
        unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::IPPROTO_IP,
                libc::IP_BIND_ADDRESS_NO_PORT,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    sock.bind(SocketAddr::new(src.into(), 0))
        .map_err(|e| format!("bind {src}: {e}"))?;
    let mut stream = sock
        .connect(dst)
        .await
        .map_err(|e| format!("connect from {src}: {e}"))?;
    stream
        .write_all(packet)
        .await
        .map_err(|e| format!("send startup: {e}"))?;
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 512];
    loop {
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|e| format!("read startup answer: {e}"))?;
        if n == 0 {
            return Err("server closed the connection during startup".into());
        }
        buf.extend_from_slice(&chunk[..n]);
        match scan_startup(&buf) {
            StartupScan::Ready => return Ok(stream),
            StartupScan::Refused(e) => return Err(e),
            StartupScan::Incomplete => {}
        }
    }
}

impl RawIdleSet {
    /// Sessions held.
    pub fn len(&self) -> usize {
        self.streams.len()
    }

    /// True when none is held.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// Opens up to `n` sessions to `ep` from `sources` loopback addresses
    /// (127.0.0.2 on), `parallel` connects in flight per address. Stops
    /// early at the first refused or failed connection, or when
    /// MemAvailable falls below `min_avail_mib`; what was opened stays open.
    pub fn open(
        ep: &Endpoint,
        n: usize,
        sources: usize,
        parallel: usize,
        min_avail_mib: u64,
    ) -> (RawIdleSet, OpenReport) {
        Self::open_from(ep, n, 0, sources, parallel, min_avail_mib)
    }

    /// [`RawIdleSet::open`] from the source addresses 127.0.0.(2 +
    /// `first`) on: processes that share the work use disjoint ones.
    pub fn open_from(
        ep: &Endpoint,
        n: usize,
        first: usize,
        sources: usize,
        parallel: usize,
        min_avail_mib: u64,
    ) -> (RawIdleSet, OpenReport) {
        let first = first.min(249);
        let sources: Vec<Ipv4Addr> = (first..(first + sources.max(1)).min(250))
            .map(|i| Ipv4Addr::new(127, 0, 0, 2 + i as u8))
            .collect();
        let mut report = OpenReport {
            sources: sources.clone(),
            ..OpenReport::default()
        };
        let dst = match ep.host.parse::<Ipv4Addr>() {
            Ok(ip) => SocketAddr::new(ip.into(), ep.port),
            Err(e) => {
                report.stopped = Some(format!("host {} is not an IPv4 address: {e}", ep.host));
                return (RawIdleSet::default(), report);
            }
        };
        let packet = Arc::new(crate::raw::startup(
            crate::raw::PROTOCOL_3_0,
            &[("user", "postgres"), ("database", "postgres")],
        ));
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicUsize::new(0));
        let why: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
        let start = Instant::now();
        let per_source = n.div_ceil(sources.len());
        let streams = block_on(async {
            // The memory guard: PostgreSQL forks a backend per session.
            let guard = {
                let (stop, opened, why) = (stop.clone(), opened.clone(), why.clone());
                tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        if let Some(avail) = meminfo_kib("MemAvailable") {
                            if avail / 1024 < min_avail_mib {
                                why.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(
                                    format!(
                                        "stopped at {} sessions: MemAvailable {} MiB < {} MiB",
                                        opened.load(Ordering::Relaxed),
                                        avail / 1024,
                                        min_avail_mib
                                    ),
                                );
                                stop.store(true, Ordering::Relaxed);
                            }
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                })
            };
            let tasks: Vec<_> = sources
                .iter()
                .enumerate()
                .map(|(i, &src)| {
                    let count = per_source.min(n.saturating_sub(i * per_source));
                    let (stop, opened, why, packet) =
                        (stop.clone(), opened.clone(), why.clone(), packet.clone());
                    tokio::spawn(async move {
                        let results = stream::iter(0..count)
                            .map(|_| {
                                let (stop, packet) = (stop.clone(), packet.clone());
                                async move {
                                    if stop.load(Ordering::Relaxed) {
                                        return None;
                                    }
                                    let r = tokio::time::timeout(
                                        Duration::from_secs(60),
                                        open_one(src, dst, &packet),
                                    )
                                    .await
                                    .unwrap_or_else(|_| Err("no ReadyForQuery in 60 s".into()));
                                    Some(r)
                                }
                            })
                            .buffer_unordered(parallel.max(1));
                        futures_util::pin_mut!(results);
                        let mut mine = Vec::with_capacity(count);
                        while let Some(r) = results.next().await {
                            match r {
                                Some(Ok(s)) => {
                                    mine.push(s);
                                    opened.fetch_add(1, Ordering::Relaxed);
                                }
                                Some(Err(e)) => {
                                    why.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(
                                        format!(
                                            "stopped at about {} sessions: {e}",
                                            opened.load(Ordering::Relaxed)
                                        ),
                                    );
                                    stop.store(true, Ordering::Relaxed);
                                }
                                None => {}
                            }
                        }
                        mine
                    })
                })
                .collect();
            let mut all = Vec::with_capacity(n);
            for t in tasks {
                if let Ok(mine) = t.await {
                    all.extend(mine);
                }
            }
            stop.store(true, Ordering::Relaxed);
            let _ = guard.await;
            all
        });
        report.elapsed = start.elapsed();
        report.opened = streams.len();
        report.stopped = why.lock().unwrap_or_else(|e| e.into_inner()).take();
        (RawIdleSet { streams }, report)
    }

    /// Closes every session (inside the runtime: the sockets are
    /// registered with its reactor).
    pub fn close(&mut self) {
        let streams = std::mem::take(&mut self.streams);
        let _guard = runtime().enter();
        drop(streams);
    }
}

impl Drop for RawIdleSet {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod raw_tests {
    use super::*;

    fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
        crate::raw::message(tag, body)
    }

    #[test]
    fn scans_startup_answers() {
        let mut buf = msg(b'R', &0i32.to_be_bytes());
        buf.extend(msg(b'S', b"server_version\x0015.4\x00"));
        assert_eq!(scan_startup(&buf), StartupScan::Incomplete);
        buf.extend(msg(b'K', &[0; 8]));
        let ready = msg(b'Z', b"I");
        buf.extend(&ready[..3]);
        assert_eq!(scan_startup(&buf), StartupScan::Incomplete);
        buf.extend(&ready[3..]);
        assert_eq!(scan_startup(&buf), StartupScan::Ready);
    }

    #[test]
    fn scans_a_refusal() {
        let buf = msg(
            b'E',
            b"SFATAL\x00C53300\x00Msorry, too many clients already\x00\x00",
        );
        assert_eq!(
            scan_startup(&buf),
            StartupScan::Refused("FATAL 53300: sorry, too many clients already".into())
        );
        // A length word below 4 cannot loop for ever.
        assert_eq!(scan_startup(&[b'N', 0, 0, 0, 0]), StartupScan::Incomplete);
    }
}
