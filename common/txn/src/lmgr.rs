//! # Transaction-lock waits and deadlock detection (lmgr.c, deadlock.c)
//!
//! A writer that finds a row locked or updated by a running transaction
//! waits for that transaction to end (XactLockTableWait), then re-checks the
//! row. hotpair has no general lock table: the only lock a session waits on
//! is "transaction X is running", so each waiting session has exactly one
//! outgoing edge in the **wait-for graph**: *me → the proc running X*.
//!
//! ```text
//!   waits[me] = { xid: X, holder: P, holder_xid: top xid of P when seen }
//!   me ──waits for X──► P ──waits for Y──► Q ──► … ──► me   = deadlock
//! ```
//!
//! Because every node has out-degree at most one, a cycle through `me` is
//! found by following edges from `me`; an edge counts only while its holder
//! still runs the transaction recorded with it (a stale edge is not a
//! dependency). As in PostgreSQL the check runs once, after a waiter has
//! slept `deadlock_timeout`; the session that finds the cycle gets 40P01 and
//! removes its own edge at once (under the same mutex), so the other members
//! of the cycle do not also fail.
//!
//! ## Wakeups
//!
//! Each proc has a condition variable. The completion path
//! ([`crate::procarray::ProcArray::end_transaction`], subtransaction abort,
//! PREPARE moving a transaction to a dummy proc) calls
//! [`LockManager::wake_waiters_of`] *after* releasing ProcArrayLock; it
//! notifies every waiter whose edge points at that proc. Waiters re-check
//! "still running?" in a loop, so spurious wakeups are harmless.
//!
//! No lost wakeups: a waiter registers (and bumps `num_waiting`) and checks
//! the running state while holding the lmgr mutex, and sleeps by atomically
//! releasing it; a completer changes the running state first and takes the
//! mutex afterwards. The `num_waiting` shortcut lets commits skip the mutex
//! when nobody waits: the waiter's increment is ordered before its
//! ProcArrayLock acquisition, and the completer's check after its release.
//!
//! ## Giving up
//!
//! Besides a cancel request (57014) and a deadlock (40P01), a wait ends on
//! its own when a [`WaitLimits`] deadline passes: the statement's
//! `statement_timeout` (57014 "canceling statement due to statement
//! timeout") or `lock_timeout`, which as in PostgreSQL counts from the
//! start of each wait, not of the statement (55P03 "canceling statement due
//! to lock timeout").
//!
//! Lock order: the lmgr mutex is taken *before* ProcArrayLock (a waiter
//! checks the procarray under it), and never while holding ProcArrayLock.
//!
//! Waiting blocks an OS thread: inside a multi-thread tokio runtime the wait
//! runs in `block_in_place` ([`pgtypes::blocking::run_blocking`]) so the worker's other tasks
//! move to another thread.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::procarray::ProcArray;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::ProcNumber;
use pgtypes::TransactionId;

/// How often a waiter re-checks its cancel flag when nobody wakes it.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// One edge of the wait-for graph.
#[derive(Clone, Copy, Debug)]
struct WaitEdge {
    /// The xid waited for (top-level or sub).
    xid: TransactionId,
    /// The proc running it when last checked.
    holder: ProcNumber,
    /// That proc's top-level xid then; the edge is stale once it changes.
    holder_xid: TransactionId,
}

/// Waits on transactions, with a wait-for graph for deadlock detection.
pub struct LockManager {
    /// `waits[proc]`: what that proc is waiting for.
    waits: Mutex<Vec<Option<WaitEdge>>>,
    /// One condition variable per proc, used with `waits`.
    wakeups: Box<[Condvar]>,
    /// Number of registered waiters; completers skip the mutex when 0.
    num_waiting: AtomicUsize,
}

impl LockManager {
    /// A lock manager for `max_procs` procs.
    pub fn new(max_procs: usize) -> LockManager {
        LockManager {
            waits: Mutex::new(vec![None; max_procs]),
            wakeups: (0..max_procs).map(|_| Condvar::new()).collect(),
            num_waiting: AtomicUsize::new(0),
        }
    }

    /// Wakes every session waiting on a transaction of proc `holder` (it
    /// completed, rolled back a subtransaction, or moved to a dummy proc).
    pub fn wake_waiters_of(&self, holder: ProcNumber) {
        if self.num_waiting.load(Ordering::SeqCst) == 0 {
            return;
        }
        let waits = self.waits.lock();
        for (i, w) in waits.iter().enumerate() {
            if matches!(w, Some(e) if e.holder == holder) {
                self.wakeups[i].notify_one();
            }
        }
    }

    /// Wakes `p` if it is waiting, so it notices its cancel flag at once
    /// (called by a cancel request handler).
    pub fn interrupt(&self, p: ProcNumber) {
        let _waits = self.waits.lock();
        if let Some(c) = self.wakeups.get(p.0 as usize) {
            c.notify_one();
        }
    }

    /// Every wait in progress: (waiter, xid waited for, the proc running
    /// it when last checked) — pg_locks' ungranted rows.
    pub fn waits(&self) -> Vec<(ProcNumber, TransactionId, ProcNumber)> {
        self.waits
            .lock()
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.map(|e| (ProcNumber(i as u32), e.xid, e.holder)))
            .collect()
    }

    /// The proc `p` is waiting for, if any (monitoring, tests).
    pub fn waiting_for(&self, p: ProcNumber) -> Option<TransactionId> {
        self.waits
            .lock()
            .get(p.0 as usize)
            .copied()
            .flatten()
            .map(|e| e.xid)
    }

    /// XactLockTableWait: blocks session `me` until `xid` no longer runs.
    /// After `deadlock_timeout` it checks once for a cycle through `me`
    /// (40P01 "deadlock detected"); `cancel` ends the wait with 57014, and
    /// `limits` with a timeout error.
    pub fn wait_for_xid(
        &self,
        procs: &ProcArray,
        me: ProcNumber,
        xid: TransactionId,
        deadlock_timeout: Duration,
        cancel: &AtomicBool,
        limits: WaitLimits,
    ) -> PgResult<()> {
        let Some(slot) = self.wakeups.get(me.0 as usize) else {
            return Err(PgError::internal("invalid proc number"));
        };
        let start = Instant::now();
        let deadline = start + deadlock_timeout;
        let lock_deadline = limits.lock_timeout.map(|t| start + t);
        let mut checked = false;
        let mut waits = self.waits.lock();
        self.num_waiting.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            if cancel.load(Ordering::Relaxed) {
                break Err(PgError::query_canceled());
            }
            let edge = match procs.holder_of(xid) {
                None => break Ok(()),
                // Waiting on ourselves would never end (PostgreSQL would
                // self-deadlock); our own rows are never waited for.
                Some((holder, _)) if holder == me => break Ok(()),
                Some((holder, holder_xid)) => WaitEdge {
                    xid,
                    holder,
                    holder_xid,
                },
            };
            waits[me.0 as usize] = Some(edge);
            let now = Instant::now();
            if let Some(e) = limits.expired(now, lock_deadline) {
                break Err(e);
            }
            if !checked && now >= deadline {
                checked = true;
                if let Some(detail) = self.find_cycle(procs, &waits, me) {
                    break Err(
                        PgError::new(sqlstate::DEADLOCK_DETECTED, "deadlock detected")
                            .with_detail(detail)
                            .with_hint("See server log for query details."),
                    );
                }
            }
            let mut wake_at = now + CANCEL_POLL;
            if !checked {
                wake_at = wake_at.min(deadline);
            }
            for d in [limits.statement, lock_deadline].into_iter().flatten() {
                wake_at = wake_at.min(d);
            }
            slot.wait_until(&mut waits, wake_at);
        };
        waits[me.0 as usize] = None;
        self.num_waiting.fetch_sub(1, Ordering::SeqCst);
        if let Err(e) = &result {
            if e.code == sqlstate::DEADLOCK_DETECTED {
                tracing::info!(
                    "process {} detected deadlock while waiting for transaction {xid}",
                    procs.pid(me)
                );
            }
        }
        result
    }

    /// Follows edges from `me`; returns the DETAIL text when they lead back.
    fn find_cycle(
        &self,
        procs: &ProcArray,
        waits: &[Option<WaitEdge>],
        me: ProcNumber,
    ) -> Option<String> {
        let mut chain: Vec<(ProcNumber, WaitEdge)> = Vec::new();
        let mut cur = me;
        for _ in 0..waits.len() {
            let edge = waits.get(cur.0 as usize).copied().flatten()?;
            // A stale edge (holder finished or moved on) is no dependency.
            if procs.proc_xid(edge.holder) != edge.holder_xid {
                return None;
            }
            chain.push((cur, edge));
            if edge.holder == me {
                let lines: Vec<String> = chain
                    .iter()
                    .map(|(w, e)| {
                        format!(
                            "Process {} waits for ShareLock on transaction {}; blocked by process {}.",
                            procs.pid(*w),
                            e.xid,
                            procs.pid(e.holder)
                        )
                    })
                    .collect();
                return Some(lines.join("\n"));
            }
            if chain.iter().any(|(w, _)| *w == edge.holder) {
                // A cycle not through us: someone else's to break.
                return None;
            }
            cur = edge.holder;
        }
        None
    }
}

/// When a lock wait gives up by itself (see "Giving up" above).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitLimits {
    /// The statement's `statement_timeout` deadline.
    pub statement: Option<Instant>,
    /// `lock_timeout`: the longest one wait may last.
    pub lock_timeout: Option<Duration>,
}

impl WaitLimits {
    /// No timeout: only a cancel or a deadlock ends the wait early.
    pub const NONE: WaitLimits = WaitLimits {
        statement: None,
        lock_timeout: None,
    };

    /// The error for a deadline passed at `now` (the statement's first).
    fn expired(&self, now: Instant, lock_deadline: Option<Instant>) -> Option<PgError> {
        if self.statement.is_some_and(|d| now >= d) {
            return Some(PgError::statement_timeout());
        }
        if lock_deadline.is_some_and(|d| now >= d) {
            return Some(PgError::new(
                sqlstate::LOCK_NOT_AVAILABLE,
                "canceling statement due to lock timeout",
            ));
        }
        None
    }
}
