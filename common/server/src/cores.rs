//! Per-core session runtimes: each core's thread owns an event loop and
//! serves its sessions' statements inline, as PostgreSQL's backends each
//! own their socket.
//!
//! Why not one multi-threaded runtime for every session: tokio's
//! multi-thread scheduler has one I/O driver, owned at any moment by one
//! worker. When two clients' queries arrive, both wake-ups pass through that
//! worker, which wakes a sibling (a futex and a cross-CPU wake-up) for the
//! second: on the critical path of every other round trip at low client
//! counts. Here each core is a runtime of its own with one worker and its own
//! epoll, so a client's answer wakes the very thread that serves it.
//!
//! ```text
//!   service runtime: accept ──▶ place (fewest sessions) ──▶ core k
//!                    balancer (every tick) ──▶ core.move_to = j
//!   core 0  [worker + epoll]  sessions a, c, …  ─┐ at an idle point a
//!   core 1  [worker + epoll]  sessions b, d, …  ◀┘ session moves itself
//! ```
//!
//! ## Calls that wait
//!
//! Each core is a multi-thread runtime with **one** worker, not a
//! current-thread runtime, for one reason: `block_in_place` works on it. A
//! call that may wait on another session, a WAL flush or the clock (a held
//! row or relation lock, a commit's flush, a synchronous-replication wait,
//! `pg_sleep`, a long scan, DDL, COPY) goes through
//! [`pgtypes::blocking::run_blocking`], which hands the core's worker (its
//! queue and its epoll) to a thread of the core's blocking pool for the
//! duration and blocks the calling thread. The other sessions of the core go
//! on being served — including the one holding the awaited lock, which must
//! read its client's COMMIT — so sessions sharing a core cannot deadlock
//! through it. A write whose row lock is free runs inline and never hands
//! off; only the wait itself does.
//!
//! ## Balancing
//!
//! Sessions are placed on the core with the fewest sessions at accept, and
//! moved while they run: each session adds the time it spends on its
//! messages to its core's busy counter, and counts itself active once per
//! balancing tick. The balancer ([`SessionCores::balance`], on the service
//! runtime) compares the cores' busy time over the tick; when the busiest
//! core has at least two active sessions and the gap to the least busy one
//! is larger than one of its average sessions (moving one narrows it), it
//! asks the busy core to give one up. The next session of that core to
//! reach an idle point (its ReadyForQuery written, nothing buffered)
//! claims the request and moves: its socket leaves the core's epoll
//! (`into_std`) and joins the target's, and the session continues there as
//! a new task with all its state. The tick after a move is skipped, so the
//! measurement settles before the next decision.
//!
//! Invariants:
//! * A session is counted on exactly one core ([`Seat`]), from placement to
//!   its end, moves included.
//! * A runtime is never dropped inside async code: [`SessionCores`] shuts
//!   its runtimes down in the background when the last handle goes.

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use tokio::runtime::{Handle, Runtime};

/// No move requested.
const NO_MOVE: usize = usize::MAX;

/// One core's runtime and its counters (written by its own sessions, read
/// by the balancer: padded so cores do not share cache lines).
struct Core {
    runtime: Option<Runtime>,
    handle: Handle,
    counters: CachePadded<Counters>,
}

#[derive(Default)]
struct Counters {
    /// Sessions placed here and not ended or moved away.
    sessions: AtomicUsize,
    /// Sessions that ran something during the current tick.
    active: AtomicUsize,
    /// Nanoseconds sessions spent on messages (since start).
    busy_ns: AtomicU64,
    /// Sessions that moved in (since start).
    moved_in: AtomicU64,
    /// The core one session should move to (`NO_MOVE`: none).
    move_to: AtomicUsize,
}

/// What one core reports ([`SessionCores::stats`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreStats {
    /// The core's number (0-based).
    pub core: usize,
    /// Sessions on it now.
    pub sessions: usize,
    /// Time its sessions spent on messages since start, in microseconds.
    pub busy_usec: u64,
    /// Sessions that moved to it since start.
    pub moved_in: u64,
}

/// The balancer's knobs.
#[derive(Clone, Copy, Debug)]
pub struct Balance {
    /// How often the balancer compares the cores.
    pub tick: Duration,
    /// The smallest busy-time gap, as a fraction of the tick, worth a move.
    pub min_gap: f64,
}

impl Default for Balance {
    fn default() -> Balance {
        Balance {
            tick: Duration::from_millis(100),
            min_gap: 0.10,
        }
    }
}

/// The node's session runtimes, one per core.
pub struct SessionCores {
    cores: Vec<Core>,
    /// Bumped every balancing tick; a session counts itself active once per
    /// epoch.
    epoch: AtomicU64,
    balance: Balance,
}

impl SessionCores {
    /// `n` session runtimes (0: one per CPU), each one worker thread named
    /// `core-K` with its own event loop and timers.
    pub fn new(n: usize, balance: Balance) -> io::Result<Arc<SessionCores>> {
        let n = match n {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let mut cores = Vec::with_capacity(n);
        for k in 0..n {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name(format!("core-{k}"))
                .enable_all()
                .build()?;
            let counters = CachePadded::new(Counters::default());
            counters.move_to.store(NO_MOVE, Ordering::Relaxed);
            cores.push(Core {
                handle: runtime.handle().clone(),
                runtime: Some(runtime),
                counters,
            });
        }
        Ok(Arc::new(SessionCores {
            cores,
            epoch: AtomicU64::new(0),
            balance,
        }))
    }

    /// A seat for a new session on the core with the fewest sessions.
    pub fn place(self: &Arc<Self>) -> Seat {
        let core = (0..self.cores.len())
            .min_by_key(|&k| self.counters(k).sessions.load(Ordering::Relaxed))
            .unwrap_or(0);
        self.counters(core).sessions.fetch_add(1, Ordering::Relaxed);
        Seat {
            cores: self.clone(),
            core,
            epoch: u64::MAX,
        }
    }

    /// Runs `fut` as a task on core `core` (a [`Seat::core`]).
    pub fn spawn<F>(&self, core: usize, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        drop(self.cores[core].handle.spawn(fut));
    }

    fn counters(&self, core: usize) -> &Counters {
        &self.cores[core].counters
    }

    /// Each core's counters.
    pub fn stats(&self) -> Vec<CoreStats> {
        self.cores
            .iter()
            .enumerate()
            .map(|(core, c)| CoreStats {
                core,
                sessions: c.counters.sessions.load(Ordering::Relaxed),
                busy_usec: c.counters.busy_ns.load(Ordering::Relaxed) / 1000,
                moved_in: c.counters.moved_in.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// The balancer: every tick, compares the cores and asks the busiest
    /// to give up a session when that narrows the gap. Runs until dropped.
    pub async fn balance(self: Arc<Self>) {
        if self.cores.len() < 2 {
            return std::future::pending().await;
        }
        let mut last: Vec<u64> = self.busy_now();
        let mut at = Instant::now();
        let mut settle = false;
        let mut tick = tokio::time::interval(self.balance.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let now = self.busy_now();
            let elapsed = at.elapsed().as_nanos().max(1) as f64;
            at = Instant::now();
            let busy: Vec<u64> = now.iter().zip(&last).map(|(n, l)| n - l).collect();
            last = now;
            self.epoch.fetch_add(1, Ordering::Relaxed);
            let active: Vec<usize> = self
                .cores
                .iter()
                .map(|c| c.counters.active.swap(0, Ordering::Relaxed))
                .collect();
            if std::mem::take(&mut settle) {
                continue;
            }
            if let Some((from, to)) = pick_move(&busy, &active, elapsed, self.balance.min_gap) {
                self.counters(from).move_to.store(to, Ordering::Relaxed);
                settle = true;
            }
        }
    }

    fn busy_now(&self) -> Vec<u64> {
        self.cores
            .iter()
            .map(|c| c.counters.busy_ns.load(Ordering::Relaxed))
            .collect()
    }
}

/// The move that narrows the busy gap most, if any: from the busiest core
/// (with at least two active sessions) to the least busy, when the gap is
/// at least `min_gap` of the tick and larger than one average session of
/// the busy core.
fn pick_move(
    busy: &[u64],
    active: &[usize],
    elapsed_ns: f64,
    min_gap: f64,
) -> Option<(usize, usize)> {
    let from = (0..busy.len()).max_by_key(|&k| busy[k])?;
    let to = (0..busy.len()).min_by_key(|&k| busy[k])?;
    if from == to || active[from] < 2 {
        return None;
    }
    let gap = (busy[from] - busy[to]) as f64;
    let per_session = busy[from] as f64 / active[from] as f64;
    (gap >= min_gap * elapsed_ns && gap > per_session).then_some((from, to))
}

impl Drop for SessionCores {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which tokio forbids inside async code
        // (the last handle may go there); nothing is left to wait for.
        for c in &mut self.cores {
            if let Some(rt) = c.runtime.take() {
                rt.shutdown_background();
            }
        }
    }
}

/// One session's place on a core: counted there until dropped.
pub struct Seat {
    cores: Arc<SessionCores>,
    core: usize,
    /// The balancing epoch the session last counted itself active in.
    epoch: u64,
}

impl Seat {
    /// The core the session is on.
    pub fn core(&self) -> usize {
        self.core
    }

    /// The session spent `busy` on a message: counted on its core, and
    /// the session counted active for this tick.
    #[inline]
    pub fn ran(&mut self, busy: Duration) {
        let c = self.cores.counters(self.core);
        c.busy_ns
            .fetch_add(busy.as_nanos() as u64, Ordering::Relaxed);
        let e = self.cores.epoch.load(Ordering::Relaxed);
        if e != self.epoch {
            self.epoch = e;
            c.active.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// If the balancer asked this core to give up a session, claims that
    /// request: the seat is now counted on the returned core, where the
    /// session must continue.
    #[inline]
    pub fn claim_move(&mut self) -> Option<usize> {
        let c = self.cores.counters(self.core);
        let to = c.move_to.load(Ordering::Relaxed);
        if to == NO_MOVE
            || c.move_to
                .compare_exchange(to, NO_MOVE, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return None;
        }
        c.sessions.fetch_sub(1, Ordering::Relaxed);
        let t = self.cores.counters(to);
        t.sessions.fetch_add(1, Ordering::Relaxed);
        t.moved_in.fetch_add(1, Ordering::Relaxed);
        self.core = to;
        Some(to)
    }

    /// The runtimes this seat belongs to.
    pub fn cores(&self) -> &Arc<SessionCores> {
        &self.cores
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.cores
            .counters(self.core)
            .sessions
            .fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_fills_the_emptiest_core() {
        let cores = SessionCores::new(2, Balance::default()).unwrap();
        let a = cores.place();
        let b = cores.place();
        let c = cores.place();
        assert_eq!((a.core(), b.core(), c.core()), (0, 1, 0));
        drop(b);
        assert_eq!(cores.place().core(), 1, "the freed core takes the next");
        drop(a);
        drop(c);
        assert!(cores.stats().iter().all(|s| s.sessions == 0));
    }

    #[test]
    fn moves_only_when_they_narrow_the_gap() {
        let tick = 100e6;
        // One busy session alone: moving it would only move the load.
        assert_eq!(pick_move(&[90_000_000, 0], &[1, 0], tick, 0.1), None);
        // Two busy sessions on core 0, core 1 idle: move one.
        assert_eq!(
            pick_move(&[90_000_000, 0], &[2, 0], tick, 0.1),
            Some((0, 1))
        );
        assert_eq!(
            pick_move(&[0, 80_000_000], &[0, 3], tick, 0.1),
            Some((1, 0))
        );
        // Balanced enough: a move would widen the gap again.
        assert_eq!(
            pick_move(&[60_000_000, 40_000_000], &[3, 2], tick, 0.1),
            None
        );
        // Light load: not worth it.
        assert_eq!(pick_move(&[5_000_000, 0], &[5, 0], tick, 0.1), None);
    }

    #[test]
    fn a_claimed_move_reseats_the_session() {
        let cores = SessionCores::new(2, Balance::default()).unwrap();
        let mut a = cores.place();
        assert_eq!(a.claim_move(), None, "nothing asked");
        cores.counters(0).move_to.store(1, Ordering::Relaxed);
        let mut b = cores.place();
        assert_eq!(b.core(), 1);
        assert_eq!(a.claim_move(), Some(1));
        assert_eq!(a.claim_move(), None, "one request, one move");
        assert_eq!(b.claim_move(), None);
        let s = cores.stats();
        assert_eq!((s[0].sessions, s[1].sessions, s[1].moved_in), (0, 2, 1));
        drop(a);
        drop(b);
        assert!(cores.stats().iter().all(|s| s.sessions == 0));
    }
}
