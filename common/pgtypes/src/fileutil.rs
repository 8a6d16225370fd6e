//! Durable file operations shared by every owner of a small state file
//! (control file, two-phase state files, replication slots, catalog).
//!
//! A file that must survive a crash whole is written with [`write_atomic`]:
//! a temp file beside it, written and fsynced, renamed over the target,
//! then the directory fsynced so the rename itself is durable. A reader
//! therefore sees the old contents or the new, never a torn mix.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use crate::error::{sqlstate, PgError};

/// PostgreSQL's wording for a failed file operation:
/// `could not {what} "{path}": {error}` with SQLSTATE 58030.
pub fn io_error(what: &str, path: &Path, e: io::Error) -> PgError {
    PgError::new(
        sqlstate::IO_ERROR,
        format!("could not {what} \"{}\": {e}", path.display()),
    )
}

/// PostgreSQL's PANIC: logs `message` at that severity (the server log
/// prints `PANIC:`) and aborts the process at once — no shutdown
/// checkpoint, no clean exit — so that the next start runs crash recovery
/// from the last checkpoint. For a failure after which the process can no
/// longer tell what is on disk: a failed fsync of WAL or data (the kernel
/// may have dropped the dirty pages and will report success to a retry —
/// "fsyncgate", PostgreSQL's `data_sync_retry = off`), a failed WAL write.
///
/// Without a log subscriber (an in-process test, a tool) the line goes to
/// stderr instead, so an abort never happens silently.
pub fn panic_abort(message: &str) -> ! {
    if tracing::dispatcher::has_been_set() {
        tracing::error!(panic = true, "{message}");
    } else {
        // Not eprintln!: a test harness captures that, and the capture
        // dies with the process.
        let _ = io::stderr().write_all(format!("PANIC:  {message}\n").as_bytes());
    }
    std::process::abort()
}

/// A failed fsync of a data file, `pg_xact` or a data directory: PANIC
/// (see [`panic_abort`]) with PostgreSQL's `could not fsync file "…": …`.
pub fn data_sync_failed(path: &Path, e: &io::Error) -> ! {
    panic_abort(&format!("could not fsync file \"{}\": {e}", path.display()))
}

/// fsyncs a directory, so that a create, rename or unlink in it is durable.
pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Writes `bytes` to `path` atomically: `path` with extension `tmp`,
/// written and (with `fsync`) synced, renamed over `path`, then (with
/// `fsync`) the directory synced.
pub fn write_atomic(path: &Path, bytes: &[u8], fsync: bool) -> Result<(), PgError> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = fs::File::create(&tmp).map_err(|e| io_error("create file", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| io_error("write file", &tmp, e))?;
        if fsync {
            f.sync_all().map_err(|e| io_error("fsync file", &tmp, e))?;
        }
    }
    fs::rename(&tmp, path).map_err(|e| io_error("rename file", &tmp, e))?;
    if fsync {
        if let Some(dir) = path.parent() {
            fsync_dir(dir).map_err(|e| io_error("fsync directory", dir, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_whole_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("state");
        write_atomic(&p, b"first", true).expect("write");
        write_atomic(&p, b"second", true).expect("rewrite");
        assert_eq!(fs::read(&p).expect("read"), b"second");
        assert!(!p.with_extension("tmp").exists(), "temp file renamed away");
    }
}
