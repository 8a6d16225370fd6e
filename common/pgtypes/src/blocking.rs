//! The one way to wait or run long from code that may be on a tokio worker.
//!
//! A session is a task on a multi-threaded runtime; a lock wait, a WAL
//! flush or a long scan on that worker would stall every other task queued
//! behind it (and, on the worker that owns it, the I/O driver). Every such
//! call goes through [`run_blocking`], which hands the worker's queue to
//! another thread for the duration (`block_in_place`) and runs the call
//! directly anywhere else (tests on a current-thread runtime, plain
//! threads such as the checkpointer or the startup process).

/// Runs `f`, which may block or run long, without stalling a tokio
/// multi-thread runtime: inside one, via `block_in_place` (the worker's
/// other tasks move elsewhere); otherwise directly.
pub fn run_blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}
