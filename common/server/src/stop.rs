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

    /// A session's handle on the signal, unsubscribed when dropped.
    pub(crate) fn subscribe(self: &Arc<Self>) -> StopWatch {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let waker = Arc::new(AtomicWaker::new());
        self.sessions.lock().insert(id, Arc::clone(&waker));
        StopWatch {
            stop: Arc::clone(self),
            id,
            waker,
        }
    }
}

/// One session's subscription to a [`Stop`].
pub(crate) struct StopWatch {
    stop: Arc<Stop>,
    id: u64,
    waker: Arc<AtomicWaker>,
}

impl StopWatch {
    /// True once the signal has been given (one atomic load).
    pub(crate) fn is_stopped(&self) -> bool {
        self.stop.stopped.load(Ordering::SeqCst)
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
