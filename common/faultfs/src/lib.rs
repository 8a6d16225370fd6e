//! # faultfs — file-system faults injected into a live node (LD_PRELOAD)
//!
//! The fault-injection tests (tap-tests `083_disk_faults`) start a node
//! with `LD_PRELOAD=libfaultfs.so` and `HOTPAIR_FAULTFS=<rules file>`.
//! This library then stands in front of the C library's write, extension
//! and sync calls (`write`, `pwrite`, `pwritev`, `fallocate`,
//! `posix_fallocate`, `ftruncate`, `fsync`, `fdatasync`, with their `64`
//! twins) and makes a call fail, with the errno a rule names, when the
//! file it is about matches the rule. Everything else goes to the real
//! function (found with `dlsym(RTLD_NEXT, …)`).
//!
//! The rules file is read again at every call that could match, so a test
//! changes faults while the node runs by rewriting it (write a temp file
//! and rename it over, so the node never reads half a file); an absent or
//! empty file means no faults. One rule per line:
//!
//! ```text
//! fsync  EIO    /pg_wal/     fsync / fdatasync of a matching file fails
//! write  ENOSPC /pg_wal/     any write to a matching file fails
//! extend ENOSPC /base/       a write ending past the file's size, an
//!                            fallocate, or an ftruncate that grows fails
//! ```
//!
//! The third word is a substring of the file's path (as
//! `/proc/self/fd/N` names it). Errnos: `EIO`, `ENOSPC`, `EDQUOT`,
//! `EROFS`. Lines starting with `#` are comments.
//!
//! Invariants: nothing here writes (no logging), so a rule can never
//! recurse into itself; a call with no rules file costs one failed
//! `open` of it; sockets and pipes never match (their `/proc` names are
//! not paths). This crate is test tooling only: no server code depends on
//! it.

#![allow(clippy::missing_safety_doc)]

use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};

use libc::{c_char, c_int, c_void, iovec, off64_t, off_t, size_t, ssize_t};

/// What a call does to its file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    /// Writes inside the current size.
    Write,
    /// Writes or allocates past the current size.
    Extend,
    /// fsync / fdatasync.
    Sync,
}

/// The errno of the first rule that matches `op` on `fd`, if any.
fn fault(fd: c_int, op: Op, end: Option<u64>) -> Option<c_int> {
    let rules_path = std::env::var_os("HOTPAIR_FAULTFS")?;
    let rules = std::fs::read_to_string(rules_path).ok()?;
    if rules.trim().is_empty() {
        return None;
    }
    let path = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let path = path.to_str()?;
    if !path.starts_with('/') {
        return None;
    }
    let op = match (op, end) {
        (Op::Write, Some(end)) if end > file_size(fd) => Op::Extend,
        _ => op,
    };
    for line in rules.lines() {
        let mut w = line.split_whitespace();
        let (Some(kind), Some(errno), Some(pat)) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        if kind.starts_with('#') || !path.contains(pat) {
            continue;
        }
        let hit = match kind {
            "fsync" => op == Op::Sync,
            "write" => op == Op::Write || op == Op::Extend,
            "extend" => op == Op::Extend,
            _ => false,
        };
        if hit {
            return Some(match errno {
                "ENOSPC" => libc::ENOSPC,
                "EDQUOT" => libc::EDQUOT,
                "EROFS" => libc::EROFS,
                _ => libc::EIO,
            });
        }
    }
    None
}

/// The file's size (0 if it cannot be had).
fn file_size(fd: c_int) -> u64 {
    // SAFETY: fstat writes into the zeroed struct we own.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) == 0 {
            st.st_size as u64
        } else {
            0
        }
    }
}

/// The current offset of `fd` (for plain `write`).
fn current_offset(fd: c_int) -> u64 {
    // SAFETY: lseek with SEEK_CUR and offset 0 only reads the offset.
    let off = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
    if off < 0 {
        0
    } else {
        off as u64
    }
}

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno.
    unsafe { *libc::__errno_location() = e };
}

/// The next definition of `name` after this library (the C library's).
fn real(cache: &AtomicUsize, name: &CStr) -> usize {
    let p = cache.load(Ordering::Relaxed);
    if p != 0 {
        return p;
    }
    // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr() as *const c_char) } as usize;
    cache.store(p, Ordering::Relaxed);
    p
}

/// Defines an interposed function: `$check` (with the arguments in scope)
/// gives the errno to fail with, or None to call the real one.
macro_rules! interpose {
    ($name:ident, $cname:literal, ($($arg:ident: $ty:ty),*) -> $ret:ty, $fail:expr, $check:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            static REAL: AtomicUsize = AtomicUsize::new(0);
            let check: Option<c_int> = $check;
            if let Some(e) = check {
                return $fail(e);
            }
            let f = real(&REAL, $cname);
            if f == 0 {
                return $fail(libc::ENOSYS);
            }
            // SAFETY: `f` is the C library's function of this signature.
            let f: unsafe extern "C" fn($($ty),*) -> $ret = std::mem::transmute(f);
            f($($arg),*)
        }
    };
}

fn fail_minus_one<T: From<i8>>(e: c_int) -> T {
    set_errno(e);
    T::from(-1)
}

fn iov_len(iov: *const iovec, n: c_int) -> u64 {
    if iov.is_null() || n <= 0 {
        return 0;
    }
    // SAFETY: the caller passes `n` valid iovecs.
    let v = unsafe { std::slice::from_raw_parts(iov, n as usize) };
    v.iter().map(|i| i.iov_len as u64).sum()
}

interpose!(write, c"write", (fd: c_int, buf: *const c_void, count: size_t) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(current_offset(fd) + count as u64)));
interpose!(pwrite, c"pwrite", (fd: c_int, buf: *const c_void, count: size_t, off: off_t) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(off as u64 + count as u64)));
interpose!(pwrite64, c"pwrite64", (fd: c_int, buf: *const c_void, count: size_t, off: off64_t) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(off as u64 + count as u64)));
interpose!(writev, c"writev", (fd: c_int, iov: *const iovec, n: c_int) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(current_offset(fd) + iov_len(iov, n))));
interpose!(pwritev, c"pwritev", (fd: c_int, iov: *const iovec, n: c_int, off: off_t) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(off as u64 + iov_len(iov, n))));
interpose!(pwritev64, c"pwritev64", (fd: c_int, iov: *const iovec, n: c_int, off: off64_t) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(off as u64 + iov_len(iov, n))));
interpose!(fallocate, c"fallocate", (fd: c_int, mode: c_int, off: off_t, len: off_t) -> c_int,
    fail_minus_one::<c_int>,
    fault(fd, Op::Extend, None));
interpose!(fallocate64, c"fallocate64", (fd: c_int, mode: c_int, off: off64_t, len: off64_t) -> c_int,
    fail_minus_one::<c_int>,
    fault(fd, Op::Extend, None));
// posix_fallocate returns the error instead of setting errno.
interpose!(posix_fallocate, c"posix_fallocate", (fd: c_int, off: off_t, len: off_t) -> c_int,
    |e: c_int| e,
    fault(fd, Op::Extend, None));
interpose!(posix_fallocate64, c"posix_fallocate64", (fd: c_int, off: off64_t, len: off64_t) -> c_int,
    |e: c_int| e,
    fault(fd, Op::Extend, None));
interpose!(ftruncate, c"ftruncate", (fd: c_int, len: off_t) -> c_int,
    fail_minus_one::<c_int>,
    if (len as u64) > file_size(fd) { fault(fd, Op::Extend, None) } else { None });
interpose!(ftruncate64, c"ftruncate64", (fd: c_int, len: off64_t) -> c_int,
    fail_minus_one::<c_int>,
    if (len as u64) > file_size(fd) { fault(fd, Op::Extend, None) } else { None });
interpose!(fsync, c"fsync", (fd: c_int) -> c_int,
    fail_minus_one::<c_int>,
    fault(fd, Op::Sync, None));
interpose!(fdatasync, c"fdatasync", (fd: c_int) -> c_int,
    fail_minus_one::<c_int>,
    fault(fd, Op::Sync, None));
