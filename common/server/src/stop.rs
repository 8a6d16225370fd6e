//! The server's stop signal as a session waits for it: one flag for the
//! whole server, one waker slot per session.
//!
//! A session waits for two things at once whenever it waits on its socket
//! (every read, and every write the client is slow to take): the client, and
//! the server shutting down, which must reach an idle session promptly so it
//! can send FATAL 57P01 and close. The obvious tool, a `tokio::sync::watch`
//! receiver's `changed()`, puts a waiter into the channel's one `Notify` — a
//! mutex-protected list shared by every connection of the node — each time
//! the future is created or polled, and takes it out again when the future
//! drops: a lock on a cache line that every session writes, taken several
//! times per statement (the read, the write, each wake-up in between).
//!
//! Here each session owns an [`AtomicWaker`] and registers it on the
//! session's own cache line (a compare-and-swap; the waker is cloned only
//! when the task's waker changed, which for one task it does not). The
//! shared state is read-only until shutdown: the `stopped` flag, loaded
//! after every registration, and the list of sessions' slots, locked only
//! when a session starts or ends and once by [`Stop::stop`].
//!
//! ```text
//!   serve ── Stop::subscribe ──▶ StopWatch (in the session's Wire)
//!   shutdown: Stop::stop ── stopped = true ── wake every slot
//!   session poll: register waker, then load `stopped`   (no lost wake-up)
//! ```
//!
//! One session can also be stopped alone: `pg_terminate_backend()` calls
//! the session's [`StopWatch::terminator`], which sets the session's own
//! `terminated` flag and its cancel flag (a running statement stops at its
//! next interrupt check) and wakes its slot; from then on the session sees
//! the same thing as at server shutdown and ends with FATAL 57P01. The
//! same ordering argument holds for the session's flag.
//!
//! Why no wake-up is lost: a session registers its waker before it loads the
//! flag, and `stop` stores the flag before it wakes the slots. A session
//! that loads `false` has registered before the store, so the wake that
//! follows the store finds its waker (`AtomicWaker` hands a concurrent wake
//! to a registration in progress).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Poll;

use futures_util::task::AtomicWaker;
use parking_lot::Mutex;

/// The server-wide stop signal (one per `serve` loop).
#[derive(Default)]
pub(crate) struct Stop {
    stopped: AtomicBool,
    /// Bumped by [`Stop::nudge`].
    nudges: AtomicU64,
    next_id: AtomicU64,
    sessions: Mutex<HashMap<u64, Arc<AtomicWaker>>>,
}

impl Stop {
    /// A signal not yet given.
    pub(crate) fn new() -> Arc<Stop> {
        Arc::new(Stop::default())
    }

    /// Gives the signal: every subscribed session's wait completes, and so
    /// does every later one at its first poll.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        for w in self.sessions.lock().values() {
            w.wake();
        }
    }

    /// Wakes every session waiting in [`StopWatch::wait_or_nudge`]
    /// without stopping anything: idle sessions look again at what they
    /// wait for (parking became due, [`crate::park`]).
    pub(crate) fn nudge(&self) {
        self.nudges.fetch_add(1, Ordering::SeqCst);
        for w in self.sessions.lock().values() {
            w.wake();
        }
    }

    /// A session's handle on the signal, unsubscribed when dropped.
    pub(crate) fn subscribe(self: &Arc<Self>) -> StopWatch {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let waker = Arc::new(AtomicWaker::new());
        self.sessions.lock().insert(id, Arc::clone(&waker));
        StopWatch {
            stop: Arc::clone(self),
            id,
            waker,
            terminated: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// One session's subscription to a [`Stop`].
pub(crate) struct StopWatch {
    stop: Arc<Stop>,
    id: u64,
    waker: Arc<AtomicWaker>,
    /// Set by this session's [`StopWatch::terminator`] alone.
    terminated: Arc<AtomicBool>,
}

impl StopWatch {
    /// True once the signal has been given or the session was terminated
    /// (two atomic loads).
    pub(crate) fn is_stopped(&self) -> bool {
        self.stop.stopped.load(Ordering::SeqCst) || self.terminated.load(Ordering::SeqCst)
    }

    /// What ends this session alone (`pg_terminate_backend()`): sets the
    /// session's flag, then `cancel` (so a running statement stops at its
    /// next check), then wakes the session wherever it waits on its
    /// socket.
    pub(crate) fn terminator(&self, cancel: Arc<AtomicBool>) -> Arc<dyn Fn() + Send + Sync> {
        let terminated = Arc::clone(&self.terminated);
        let waker = Arc::clone(&self.waker);
        Arc::new(move || {
            terminated.store(true, Ordering::SeqCst);
            cancel.store(true, Ordering::SeqCst);
            waker.wake();
        })
    }

    /// Completes when the signal is given. Cheap to create and to drop, so
    /// it can sit in a `select!` beside every socket wait.
    pub(crate) fn wait(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx| {
            // Register first, then look: see the module doc.
            self.waker.register(cx.waker());
            if self.is_stopped() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

impl StopWatch {
    /// [`StopWatch::wait`] that also completes at the next
    /// [`Stop::nudge`]; the caller tells the two apart with
    /// [`StopWatch::is_stopped`].
    pub(crate) fn wait_or_nudge(&self) -> impl Future<Output = ()> + '_ {
        let seen = self.stop.nudges.load(Ordering::SeqCst);
        std::future::poll_fn(move |cx| {
            self.waker.register(cx.waker());
            if self.is_stopped() || self.stop.nudges.load(Ordering::SeqCst) != seen {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

impl Drop for StopWatch {
    fn drop(&mut self) {
        self.stop.sessions.lock().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stop_reaches_waiting_and_late_sessions() {
        let stop = Stop::new();
        let early = stop.subscribe();
        let waiting = tokio::spawn(async move {
            early.wait().await;
            early.is_stopped()
        });
        // Let the waiter park on its slot first (no timing involved: the
        // outcome is the same whichever runs first).
        tokio::task::yield_now().await;
        assert!(!stop.subscribe().is_stopped());
        stop.stop();
        assert!(waiting.await.unwrap());
        let late = stop.subscribe();
        assert!(late.is_stopped());
        late.wait().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn terminator_stops_one_session() {
        let stop = Stop::new();
        let victim = stop.subscribe();
        let other = stop.subscribe();
        let cancel = Arc::new(AtomicBool::new(false));
        let kill = victim.terminator(Arc::clone(&cancel));
        let waiting = tokio::spawn(async move {
            victim.wait().await;
            victim.is_stopped()
        });
        tokio::task::yield_now().await;
        kill();
        assert!(waiting.await.unwrap(), "terminated session woken");
        assert!(cancel.load(Ordering::SeqCst), "running statement cancelled");
        assert!(!other.is_stopped(), "other sessions not stopped");
    }

    #[test]
    fn dropped_watch_unsubscribes() {
        let stop = Stop::new();
        let a = stop.subscribe();
        let b = stop.subscribe();
        assert_eq!(stop.sessions.lock().len(), 2);
        drop(a);
        drop(b);
        assert!(stop.sessions.lock().is_empty());
    }
}
