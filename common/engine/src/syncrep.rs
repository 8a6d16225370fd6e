//! # Synchronous replication (syncrep.c): commits that wait for standbys
//!
//! With `synchronous_standby_names` set, a commit whose
//! `synchronous_commit` is `remote_write`, `on` or `remote_apply` is
//! reported only once enough synchronous standbys have written, flushed or
//! replayed WAL up to the commit record's end. The session does not block
//! its thread: it registers in a queue and awaits a one-shot signal, as
//! PostgreSQL's backend sleeps on its latch in SyncRepWaitForLSN.
//!
//! ```text
//!  session: commit record flushed ──▶ SyncRep::wait(end, mode)
//!             released[mode] ≥ end ? ── yes ─▶ done (no queue)
//!             no ─▶ queue[mode] ∋ (end, id) ─▶ await ◀─┐
//!  walsender: standby reply 'r' ─▶ WalSndStat positions │
//!             SyncRep::release(walsenders)              │
//!               sync standbys' write/flush/apply        │
//!               released[mode] = max(…, that)           │
//!               wake queue[mode] entries ≤ released ────┘
//!  reload: names empty ─▶ wake everyone (nothing to wait for)
//! ```
//!
//! ## Which standbys count (SyncRepGetCandidateStandbys)
//!
//! A walsender is a *candidate* while it streams (state `streaming`), its
//! `application_name` is listed (priority > 0, [`SyncStandbyNames::priority`])
//! and its standby has reported a flush position. `FIRST n`: the `n`
//! candidates of highest priority (lowest number; ties in connection
//! order) are `sync`, the other listed ones `potential`, and the released
//! position is the oldest of theirs. `ANY n`: all candidates are `quorum`
//! and the released position is the `n`-th newest. Fewer candidates than
//! `n`: nothing is released, commits keep waiting — also while a standby
//! reconnects; its first reply after that releases them.
//!
//! ## Invariants and locks
//!
//! * `released[mode]` only grows; a waiter is queued only if its LSN is
//!   beyond it, checked under the same lock the releaser holds, so no
//!   wake-up is lost.
//! * The queue lock is a leaf: the releaser computes positions from the
//!   walsenders' atomics before taking it.
//! * `defined` is read without the lock on every synchronous commit: with
//!   no names configured a commit pays one relaxed load and nothing else.
//!   It is written under the queue lock, so a waiter either sees it clear
//!   or is woken by the reload that cleared it.
//! * A waiter that stops waiting (cancel, session end) removes its entry
//!   when its [`SyncRepWait`] is dropped.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use pgtypes::syncrep_gram::{SyncRepMethod, SyncStandbyNames};
use storage::xloginsert::SynchronousCommit;
use tokio::sync::oneshot;
use wal::Lsn;

use crate::replication::{WalSndStat, WalSndState};

/// What a waiting commit needs the standbys to have done
/// (SYNC_REP_WAIT_WRITE / FLUSH / APPLY).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncRepMode {
    /// `remote_write`.
    Write = 0,
    /// `on`.
    Flush = 1,
    /// `remote_apply`.
    Apply = 2,
}

impl SyncRepMode {
    /// The mode a commit at `level` waits in (None: no standby wait).
    pub fn for_level(level: SynchronousCommit) -> Option<SyncRepMode> {
        match level {
            SynchronousCommit::Off | SynchronousCommit::Local => None,
            SynchronousCommit::RemoteWrite => Some(SyncRepMode::Write),
            SynchronousCommit::On => Some(SyncRepMode::Flush),
            SynchronousCommit::RemoteApply => Some(SyncRepMode::Apply),
        }
    }
}

/// A walsender's place in synchronous replication, as
/// `pg_stat_replication` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncState {
    /// `sync_priority` (0: not listed).
    pub priority: u32,
    /// `sync_state`: `async`, `potential`, `sync` or `quorum`.
    pub state: &'static str,
}

#[derive(Default)]
struct Queues {
    released: [Lsn; 3],
    waiters: [BTreeMap<(Lsn, u64), oneshot::Sender<()>>; 3],
    next_id: u64,
}

/// The node's synchronous-replication state (WalSndCtl's queues and
/// positions, and the parsed `synchronous_standby_names`).
pub struct SyncRep {
    /// The setting's text (what `SHOW` prints) and its parse.
    names: RwLock<(String, Option<Arc<SyncStandbyNames>>)>,
    defined: AtomicBool,
    queues: Arc<Mutex<Queues>>,
}

impl std::fmt::Debug for SyncRep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncRep")
            .field("names", &*self.names.read())
            .finish()
    }
}

impl Default for SyncRep {
    fn default() -> Self {
        SyncRep::new()
    }
}

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncRepOutcome {
    /// The standbys confirmed (or synchronous replication was turned off).
    Released,
    /// The session was cancelled (or is being terminated) while waiting.
    Cancelled,
}

/// One queued commit; dropping it leaves the queue.
pub struct SyncRepWait {
    queues: Arc<Mutex<Queues>>,
    mode: SyncRepMode,
    key: (Lsn, u64),
    rx: oneshot::Receiver<()>,
}

/// How often a waiting commit looks at its cancel flag (a CancelRequest
/// only sets the flag).
const CANCEL_POLL: Duration = Duration::from_millis(20);

impl SyncRepWait {
    /// Waits until released, or until `cancel` is set.
    pub async fn wait(mut self, cancel: Arc<AtomicBool>) -> SyncRepOutcome {
        let mut tick = tokio::time::interval(CANCEL_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = &mut self.rx => return SyncRepOutcome::Released,
                _ = tick.tick() => {
                    if cancel.load(Ordering::SeqCst) {
                        return SyncRepOutcome::Cancelled;
                    }
                }
            }
        }
    }
}

impl Drop for SyncRepWait {
    fn drop(&mut self) {
        self.queues.lock().waiters[self.mode as usize].remove(&self.key);
    }
}

impl SyncRep {
    /// No synchronous standbys yet.
    pub fn new() -> SyncRep {
        SyncRep {
            names: RwLock::new((String::new(), None)),
            defined: AtomicBool::new(false),
            queues: Arc::new(Mutex::new(Queues::default())),
        }
    }

    /// The configured names (None: none).
    pub fn names(&self) -> Option<Arc<SyncStandbyNames>> {
        self.names.read().1.clone()
    }

    /// The setting as last installed (`SHOW synchronous_standby_names`).
    pub fn names_text(&self) -> String {
        self.names.read().0.clone()
    }

    /// True when `synchronous_standby_names` names standbys.
    pub fn defined(&self) -> bool {
        self.defined.load(Ordering::Relaxed)
    }

    /// Installs a new `synchronous_standby_names` (start-up, reload). With
    /// none, every waiting commit is released at once
    /// (SyncRepUpdateSyncStandbysDefined); otherwise the caller releases
    /// what the standbys already confirmed ([`SyncRep::release`]).
    pub fn set_names(&self, text: &str, names: Option<SyncStandbyNames>) {
        let defined = names.is_some();
        *self.names.write() = (text.to_string(), names.map(Arc::new));
        let mut q = self.queues.lock();
        self.defined.store(defined, Ordering::Relaxed);
        if !defined {
            for queue in q.waiters.iter_mut() {
                for (_, tx) in std::mem::take(queue) {
                    let _ = tx.send(());
                }
            }
        }
    }

    /// SyncRepWaitForLSN's check and enqueue: None if a commit ending at
    /// `lsn` need not wait in `mode` (no synchronous standbys, or already
    /// confirmed); otherwise the queued wait.
    pub fn wait(&self, lsn: Lsn, mode: SyncRepMode) -> Option<SyncRepWait> {
        if !self.defined() {
            return None;
        }
        let mut q = self.queues.lock();
        if !self.defined.load(Ordering::Relaxed) || q.released[mode as usize] >= lsn {
            return None;
        }
        let id = q.next_id;
        q.next_id += 1;
        let (tx, rx) = oneshot::channel();
        q.waiters[mode as usize].insert((lsn, id), tx);
        Some(SyncRepWait {
            queues: self.queues.clone(),
            mode,
            key: (lsn, id),
            rx,
        })
    }

    /// Number of commits waiting (all modes).
    pub fn waiting(&self) -> usize {
        self.queues.lock().waiters.iter().map(|w| w.len()).sum()
    }

    fn priority(names: &SyncStandbyNames, s: &WalSndStat) -> u32 {
        match s.state() {
            WalSndState::Startup | WalSndState::Backup => 0,
            _ => names.priority(&s.application_name),
        }
    }

    /// SyncRepGetCandidateStandbys: indexes of the synchronous standbys
    /// among `senders` (FIRST: the `num_sync` of highest priority; ANY: all
    /// candidates).
    fn sync_standbys(names: &SyncStandbyNames, senders: &[Arc<WalSndStat>]) -> Vec<usize> {
        let mut cands: Vec<(u32, usize)> = senders
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                matches!(s.state(), WalSndState::Streaming | WalSndState::Stopping)
                    && s.flush_lsn.load(Ordering::Relaxed).is_valid()
            })
            .map(|(i, s)| (SyncRep::priority(names, s), i))
            .filter(|(p, _)| *p > 0)
            .collect();
        if names.method == SyncRepMethod::Priority && cands.len() > names.num_sync {
            cands.sort();
            cands.truncate(names.num_sync);
        }
        cands.into_iter().map(|(_, i)| i).collect()
    }

    /// `sync_priority` and `sync_state` of each of `senders`.
    pub fn states(&self, senders: &[Arc<WalSndStat>]) -> Vec<SyncState> {
        let Some(names) = self.names() else {
            return senders
                .iter()
                .map(|_| SyncState {
                    priority: 0,
                    state: "async",
                })
                .collect();
        };
        let sync = SyncRep::sync_standbys(&names, senders);
        senders
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let priority = SyncRep::priority(&names, s);
                let state = if priority == 0 {
                    "async"
                } else if sync.contains(&i) {
                    match names.method {
                        SyncRepMethod::Priority => "sync",
                        SyncRepMethod::Quorum => "quorum",
                    }
                } else {
                    "potential"
                };
                SyncState { priority, state }
            })
            .collect()
    }

    /// SyncRepReleaseWaiters: after a standby reply, the positions the
    /// synchronous standbys confirmed release the commits waiting for
    /// them. Nothing happens while fewer than `num_sync` standbys qualify.
    pub fn release(&self, senders: &[Arc<WalSndStat>]) {
        if !self.defined() {
            return;
        }
        let Some(names) = self.names() else {
            return;
        };
        let sync = SyncRep::sync_standbys(&names, senders);
        if sync.len() < names.num_sync || sync.is_empty() {
            return;
        }
        let mut pos = [Lsn::INVALID; 3];
        for (m, p) in pos.iter_mut().enumerate() {
            let mut v: Vec<Lsn> = sync
                .iter()
                .map(|&i| {
                    let s = &senders[i];
                    match m {
                        0 => s.write_lsn.load(Ordering::Relaxed),
                        1 => s.flush_lsn.load(Ordering::Relaxed),
                        _ => s.replay_lsn.load(Ordering::Relaxed),
                    }
                })
                .collect();
            *p = match names.method {
                // SyncRepGetOldestSyncRecPtr
                SyncRepMethod::Priority => v.iter().copied().min().unwrap_or(Lsn::INVALID),
                // SyncRepGetNthLatestSyncRecPtr
                SyncRepMethod::Quorum => {
                    v.sort_by(|a, b| b.cmp(a));
                    v.get(names.num_sync - 1).copied().unwrap_or(Lsn::INVALID)
                }
            };
        }
        let mut q = self.queues.lock();
        for (m, p) in pos.into_iter().enumerate() {
            if p > q.released[m] {
                q.released[m] = p;
            }
            let upto = q.released[m];
            while let Some(entry) = q.waiters[m].first_entry() {
                if entry.key().0 > upto {
                    break;
                }
                let _ = entry.remove().send(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgtypes::syncrep_gram::parse_sync_standby_names;

    fn sender(name: &str, flush: u64) -> Arc<WalSndStat> {
        let s = Arc::new(WalSndStat::new(1, name, "127.0.0.1"));
        s.set_state(WalSndState::Streaming);
        s.write_lsn.store(Lsn(flush), Ordering::Relaxed);
        s.flush_lsn.store(Lsn(flush), Ordering::Relaxed);
        s.replay_lsn.store(Lsn(flush), Ordering::Relaxed);
        s
    }

    fn rep(names: &str) -> SyncRep {
        let r = SyncRep::new();
        r.set_names(names, parse_sync_standby_names(names).unwrap());
        r
    }

    #[test]
    fn first_and_any_states() {
        let s = vec![sender("b", 10), sender("a", 20), sender("c", 30)];
        let st = |r: &SyncRep| {
            r.states(&s)
                .iter()
                .map(|x| (x.priority, x.state))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            st(&rep("FIRST 1 (a, b)")),
            vec![(2, "potential"), (1, "sync"), (0, "async")]
        );
        assert_eq!(
            st(&rep("ANY 2 (a, b)")),
            vec![(1, "quorum"), (1, "quorum"), (0, "async")]
        );
        assert_eq!(
            st(&rep("*")),
            vec![(1, "sync"), (1, "potential"), (1, "potential")]
        );
        assert_eq!(st(&SyncRep::new())[0], (0, "async"));
    }

    #[tokio::test]
    async fn release_by_priority_and_quorum() {
        let r = rep("FIRST 1 (a, b)");
        let s = vec![sender("a", 100), sender("b", 500)];
        assert!(r.wait(Lsn(50), SyncRepMode::Flush).is_some());
        r.release(&s);
        assert!(r.wait(Lsn(100), SyncRepMode::Flush).is_none(), "released");
        let w = r.wait(Lsn(200), SyncRepMode::Flush).unwrap();
        assert_eq!(r.waiting(), 1);
        s[0].flush_lsn.store(Lsn(300), Ordering::Relaxed);
        r.release(&s);
        let out = w.wait(Arc::new(AtomicBool::new(false))).await;
        assert_eq!(out, SyncRepOutcome::Released);
        assert_eq!(r.waiting(), 0);

        let q = rep("ANY 2 (a, b, c)");
        let s = vec![sender("a", 100), sender("b", 500), sender("c", 300)];
        q.release(&s);
        assert!(q.wait(Lsn(300), SyncRepMode::Apply).is_none(), "2nd newest");
        assert!(q.wait(Lsn(301), SyncRepMode::Apply).is_some());
    }

    #[tokio::test]
    async fn cancel_and_turning_off_release() {
        let r = rep("a");
        let w = r.wait(Lsn(10), SyncRepMode::Write).unwrap();
        let out = w.wait(Arc::new(AtomicBool::new(true))).await;
        assert_eq!(out, SyncRepOutcome::Cancelled);
        assert_eq!(r.waiting(), 0, "a cancelled wait leaves the queue");
        let w = r.wait(Lsn(10), SyncRepMode::Write).unwrap();
        r.set_names("", None);
        let out = w.wait(Arc::new(AtomicBool::new(false))).await;
        assert_eq!(out, SyncRepOutcome::Released);
        assert!(r.wait(Lsn(10), SyncRepMode::Write).is_none());
    }
}
