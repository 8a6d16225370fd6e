//! Query cancellation (PostgreSQL's `processCancelRequest`): every session
//! gets a (pid, secret key) pair, sent to its client in BackendKeyData. A
//! CancelRequest arriving on a new connection with a matching pair sets that
//! session's cancel flag; the executor polls the flag and raises 57014.
//!
//! The registry is one mutex-protected map, touched only at connect,
//! disconnect and cancel — never per query. Keys are random (SipHash of a
//! per-process random seed and a counter) so that another client cannot
//! guess them; a wrong key is ignored silently, as PostgreSQL does.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// The sessions that can be cancelled, by pid.
pub struct CancelRegistry {
    sessions: Mutex<HashMap<i32, Entry>>,
    next_pid: AtomicI32,
    seed: RandomState,
    counter: AtomicU64,
}

struct Entry {
    key: i32,
    flag: Arc<AtomicBool>,
}

/// A registered session; unregisters on drop.
pub struct CancelKey {
    registry: Arc<CancelRegistry>,
    /// The pid sent in BackendKeyData.
    pub pid: i32,
    /// The secret key sent in BackendKeyData.
    pub key: i32,
}

impl Drop for CancelKey {
    fn drop(&mut self) {
        self.registry.sessions.lock().remove(&self.pid);
    }
}

impl Default for CancelRegistry {
    fn default() -> Self {
        CancelRegistry::new()
    }
}

impl CancelRegistry {
    /// An empty registry.
    pub fn new() -> CancelRegistry {
        CancelRegistry {
            sessions: Mutex::new(HashMap::new()),
            // Start above the range of small numbers so pids look like pids.
            next_pid: AtomicI32::new(10_000),
            seed: RandomState::new(),
            counter: AtomicU64::new(0),
        }
    }

    fn random_key(&self) -> i32 {
        let mut h = self.seed.build_hasher();
        h.write_u64(self.counter.fetch_add(1, Ordering::Relaxed));
        h.finish() as i32
    }

    /// Registers a session's cancel flag under a fresh (pid, key).
    pub fn register(self: &Arc<Self>, flag: Arc<AtomicBool>) -> CancelKey {
        let key = self.random_key();
        let mut sessions = self.sessions.lock();
        let pid = loop {
            let pid = self.next_pid.fetch_add(1, Ordering::Relaxed);
            if pid <= 0 {
                // Wrapped around after 2^31 connections: start over.
                self.next_pid.store(10_000, Ordering::Relaxed);
                continue;
            }
            if !sessions.contains_key(&pid) {
                break pid;
            }
        };
        sessions.insert(pid, Entry { key, flag });
        CancelKey {
            registry: self.clone(),
            pid,
            key,
        }
    }

    /// Handles a CancelRequest: true if (pid, key) matched a session.
    pub fn cancel(&self, pid: i32, key: i32) -> bool {
        match self.sessions.lock().get(&pid) {
            Some(e) if e.key == key => {
                e.flag.store(true, Ordering::SeqCst);
                true
            }
            _ => false,
        }
    }

    /// Sets every session's flag (fast shutdown).
    pub fn cancel_all(&self) {
        for e in self.sessions.lock().values() {
            e.flag.store(true, Ordering::SeqCst);
        }
    }

    /// Number of registered sessions.
    pub fn len(&self) -> usize {
        self.sessions.lock().len()
    }

    /// True when no session is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_needs_the_right_key() {
        let r = Arc::new(CancelRegistry::new());
        let flag = Arc::new(AtomicBool::new(false));
        let k = r.register(flag.clone());
        assert!(!r.cancel(k.pid, k.key.wrapping_add(1)), "wrong key ignored");
        assert!(!flag.load(Ordering::SeqCst));
        assert!(r.cancel(k.pid, k.key), "right key cancels");
        assert!(flag.load(Ordering::SeqCst));
        let pid = k.pid;
        let key = k.key;
        drop(k);
        assert!(!r.cancel(pid, key), "gone after drop");
        assert!(r.is_empty());
    }

    #[test]
    fn pids_are_distinct_and_keys_vary() {
        let r = Arc::new(CancelRegistry::new());
        let a = r.register(Arc::new(AtomicBool::new(false)));
        let b = r.register(Arc::new(AtomicBool::new(false)));
        assert_ne!(a.pid, b.pid);
        assert_ne!(a.key, b.key);
    }
}
