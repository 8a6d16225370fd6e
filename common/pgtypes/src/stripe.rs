//! Per-thread stripes for counters bumped from many threads on hot paths
//! (the IO counters, the horizon counters): each thread gets a number once,
//! round-robin, so threads spread over the stripes and each bumps a cache
//! line other threads rarely touch.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static MINE: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// This thread's stripe among `n` (stable for the thread's life).
pub fn thread_stripe(n: usize) -> usize {
    MINE.with(|m| {
        let mut v = m.get();
        if v == usize::MAX {
            v = NEXT.fetch_add(1, Ordering::Relaxed);
            m.set(v);
        }
        v % n.max(1)
    })
}
