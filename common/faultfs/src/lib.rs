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
//! **Power cuts.** With `HOTPAIR_FAULTFS_JOURNAL` and `HOTPAIR_FAULTFS_ROOT`
//! set, every change to a file under the root is journaled first with what
//! it destroys, and every fsync after it ([`journal`]); the harness kills the
//! node and undoes what no fsync covered (`journal::power_cut`). Changes
//! and fsyncs under the root then run one at a time (one lock), so the
//! journal's order is the order the kernel saw.
//!
//! Invariants: the library's own file calls (reading the rules, opening
//! and appending the journal, reading pre-images) bypass it (a per-thread
//! busy flag), so nothing recurses or deadlocks on its own lock; a call with no rules file costs one failed
//! `open` of it; sockets and pipes never match (their `/proc` names are
//! not paths). This crate is test tooling only: no server code depends on
//! it.

#![allow(clippy::missing_safety_doc)]

pub mod journal;

use std::ffi::CStr;
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use journal::Record;

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

/// The journal of the power-cut mode: its file (under the lock) and the
/// root whose files are journaled.
struct Journal {
    file: std::fs::File,
}

struct JournalState {
    root: PathBuf,
    /// Where copies of files a rename replaces go (`<journal>.saved.N`).
    saved_prefix: PathBuf,
    saved: AtomicUsize,
    lock: Mutex<Journal>,
}

fn journal() -> Option<&'static JournalState> {
    static J: OnceLock<Option<JournalState>> = OnceLock::new();
    J.get_or_init(|| {
        let path = PathBuf::from(std::env::var_os("HOTPAIR_FAULTFS_JOURNAL")?);
        let root = PathBuf::from(std::env::var_os("HOTPAIR_FAULTFS_ROOT")?);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .ok()?;
        let mut saved_prefix = path.clone().into_os_string();
        saved_prefix.push(".saved.");
        Some(JournalState {
            root,
            saved_prefix: PathBuf::from(saved_prefix),
            saved: AtomicUsize::new(0),
            lock: Mutex::new(Journal { file }),
        })
    })
    .as_ref()
}

/// The journal, locked, if `path` is under its root (checked before
/// locking: the journal's own appends come back through `write`).
fn journal_for(path: &Path) -> Option<MutexGuard<'static, Journal>> {
    let j = journal()?;
    if !path.starts_with(&j.root) {
        return None;
    }
    Some(j.lock.lock().unwrap_or_else(|e| e.into_inner()))
}

impl Journal {
    fn append(&mut self, r: &Record) {
        // Through the real write (the journal is outside the root).
        let _ = self.file.write_all(&r.encode());
    }
}

/// The path `fd` is open on.
fn fd_path(fd: c_int) -> Option<PathBuf> {
    let p = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    p.is_absolute().then_some(p)
}

/// An absolute form of a path argument.
unsafe fn arg_path(p: *const c_char) -> Option<PathBuf> {
    if p.is_null() {
        return None;
    }
    let s = CStr::from_ptr(p).to_str().ok()?;
    let p = PathBuf::from(s);
    if p.is_absolute() {
        Some(p)
    } else {
        std::env::current_dir().ok().map(|d| d.join(p))
    }
}

/// Journals a write of `len` bytes at `offset` (None: the fd's position,
/// or its end with O_APPEND) to `fd`, if under the root; returns the lock
/// to hold across the write itself.
fn journal_write(fd: c_int, offset: Option<u64>, len: u64) -> Option<MutexGuard<'static, Journal>> {
    journal()?;
    let path = fd_path(fd)?;
    let mut g = journal_for(&path)?;
    let size = file_size(fd);
    let offset = offset.unwrap_or_else(|| {
        // SAFETY: F_GETFL only reads the descriptor's flags.
        let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if fl >= 0 && fl & libc::O_APPEND != 0 {
            size
        } else {
            current_offset(fd)
        }
    });
    let end = (offset + len).min(size);
    let mut old = vec![0u8; end.saturating_sub(offset) as usize];
    if !old.is_empty() {
        // A separate read-only descriptor: `fd` may be write-only.
        if let Ok(f) = std::fs::File::open(&path) {
            let _ = f.read_exact_at(&mut old, offset);
        }
    }
    g.append(&Record::Write {
        path,
        offset,
        old_size: size,
        old,
    });
    Some(g)
}

/// Journals a size change of `fd` to `new_size` (None: growth by
/// fallocate), if under the root.
fn journal_resize(fd: c_int, new_size: Option<u64>) -> Option<MutexGuard<'static, Journal>> {
    journal()?;
    let path = fd_path(fd)?;
    let mut g = journal_for(&path)?;
    let size = file_size(fd);
    let mut tail = Vec::new();
    if let Some(n) = new_size.filter(|&n| n < size) {
        tail = vec![0u8; (size - n) as usize];
        if let Ok(f) = std::fs::File::open(&path) {
            let _ = f.read_exact_at(&mut tail, n);
        }
    }
    g.append(&Record::Resize {
        path,
        old_size: size,
        tail,
    });
    Some(g)
}

/// Runs an fsync of `fd` under the journal's lock and records it after.
fn journal_sync(fd: c_int, run: impl FnOnce() -> c_int) -> c_int {
    let Some(path) = journal().and(fd_path(fd)) else {
        return run();
    };
    match journal_for(&path) {
        Some(mut g) => {
            let rc = run();
            if rc == 0 {
                g.append(&Record::Sync { path });
            }
            rc
        }
        None => run(),
    }
}

thread_local! {
    /// Set while this thread runs the library's own code: a file call made
    /// from there (opening the journal or the rules, reading a pre-image,
    /// appending a record) goes straight to the C library.
    static BUSY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the thread busy until dropped; None if it already is.
struct Busy;

impl Busy {
    fn enter() -> Option<Busy> {
        BUSY.with(|b| {
            if b.get() {
                None
            } else {
                b.set(true);
                Some(Busy)
            }
        })
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        BUSY.with(|b| b.set(false));
    }
}

/// Defines an interposed function: `$check` (with the arguments in scope)
/// gives the errno to fail with, or None; then `$guard` (journaling, held
/// across the real call) runs and the real function is called.
macro_rules! interpose {
    ($name:ident, $cname:literal, ($($arg:ident: $ty:ty),*) -> $ret:ty, $fail:expr, $check:expr) => {
        interpose!($name, $cname, ($($arg: $ty),*) -> $ret, $fail, $check, None::<()>);
    };
    ($name:ident, $cname:literal, ($($arg:ident: $ty:ty),*) -> $ret:ty, $fail:expr, $check:expr, $guard:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            static REAL: AtomicUsize = AtomicUsize::new(0);
            let f = real(&REAL, $cname);
            if f == 0 {
                return $fail(libc::ENOSYS);
            }
            // SAFETY: `f` is the C library's function of this signature.
            let f: unsafe extern "C" fn($($ty),*) -> $ret = std::mem::transmute(f);
            let Some(busy) = Busy::enter() else {
                return f($($arg),*);
            };
            let check: Option<c_int> = $check;
            if let Some(e) = check {
                return $fail(e);
            }
            let _held = $guard;
            let rc = f($($arg),*);
            drop(_held);
            drop(busy);
            rc
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
    fault(fd, Op::Write, Some(current_offset(fd) + count as u64)),
    journal_write(fd, None, count as u64));
interpose!(pwrite, c"pwrite", (fd: c_int, buf: *const c_void, count: size_t, off: off_t) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(off as u64 + count as u64)),
    journal_write(fd, Some(off as u64), count as u64));
interpose!(pwrite64, c"pwrite64", (fd: c_int, buf: *const c_void, count: size_t, off: off64_t) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(off as u64 + count as u64)),
    journal_write(fd, Some(off as u64), count as u64));
interpose!(writev, c"writev", (fd: c_int, iov: *const iovec, n: c_int) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(current_offset(fd) + iov_len(iov, n))),
    journal_write(fd, None, iov_len(iov, n)));
interpose!(pwritev, c"pwritev", (fd: c_int, iov: *const iovec, n: c_int, off: off_t) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(off as u64 + iov_len(iov, n))),
    journal_write(fd, Some(off as u64), iov_len(iov, n)));
interpose!(pwritev64, c"pwritev64", (fd: c_int, iov: *const iovec, n: c_int, off: off64_t) -> ssize_t,
    fail_minus_one::<ssize_t>,
    fault(fd, Op::Write, Some(off as u64 + iov_len(iov, n))),
    journal_write(fd, Some(off as u64), iov_len(iov, n)));
interpose!(fallocate, c"fallocate", (fd: c_int, mode: c_int, off: off_t, len: off_t) -> c_int,
    fail_minus_one::<c_int>,
    fault(fd, Op::Extend, None),
    journal_resize(fd, None));
interpose!(fallocate64, c"fallocate64", (fd: c_int, mode: c_int, off: off64_t, len: off64_t) -> c_int,
    fail_minus_one::<c_int>,
    fault(fd, Op::Extend, None),
    journal_resize(fd, None));
// posix_fallocate returns the error instead of setting errno.
interpose!(posix_fallocate, c"posix_fallocate", (fd: c_int, off: off_t, len: off_t) -> c_int,
    |e: c_int| e,
    fault(fd, Op::Extend, None),
    journal_resize(fd, None));
interpose!(posix_fallocate64, c"posix_fallocate64", (fd: c_int, off: off64_t, len: off64_t) -> c_int,
    |e: c_int| e,
    fault(fd, Op::Extend, None),
    journal_resize(fd, None));
interpose!(ftruncate, c"ftruncate", (fd: c_int, len: off_t) -> c_int,
    fail_minus_one::<c_int>,
    if (len as u64) > file_size(fd) { fault(fd, Op::Extend, None) } else { None },
    journal_resize(fd, Some(len as u64)));
interpose!(ftruncate64, c"ftruncate64", (fd: c_int, len: off64_t) -> c_int,
    fail_minus_one::<c_int>,
    if (len as u64) > file_size(fd) { fault(fd, Op::Extend, None) } else { None },
    journal_resize(fd, Some(len as u64)));

/// fsync and fdatasync: a fault, else the real call under the journal's
/// lock, recorded after it succeeded.
macro_rules! interpose_sync {
    ($name:ident, $cname:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(fd: c_int) -> c_int {
            static REAL: AtomicUsize = AtomicUsize::new(0);
            let f = real(&REAL, $cname);
            if f == 0 {
                return fail_minus_one::<c_int>(libc::ENOSYS);
            }
            // SAFETY: the C library's fsync / fdatasync.
            let f: unsafe extern "C" fn(c_int) -> c_int = std::mem::transmute(f);
            let Some(_busy) = Busy::enter() else {
                return f(fd);
            };
            if let Some(e) = fault(fd, Op::Sync, None) {
                return fail_minus_one::<c_int>(e);
            }
            journal_sync(fd, || f(fd))
        }
    };
}
interpose_sync!(fsync, c"fsync");
interpose_sync!(fdatasync, c"fdatasync");

/// open / open64 / openat / openat64: a file the call creates is
/// journaled (under the lock across the call). The mode is taken as a
/// fixed third argument: on x86-64 and aarch64 a variadic `int` arrives
/// where a fixed one does, and it is only read with O_CREAT.
macro_rules! interpose_open {
    ($name:ident, $cname:literal, ($($arg:ident: $ty:ty),*), $dirfd:expr, $path:ident, $flags:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            static REAL: AtomicUsize = AtomicUsize::new(0);
            let f = real(&REAL, $cname);
            if f == 0 {
                return fail_minus_one::<c_int>(libc::ENOSYS);
            }
            // SAFETY: the C library's open of this (fixed-mode) shape.
            let f: unsafe extern "C" fn($($ty),*) -> c_int = std::mem::transmute(f);
            let Some(_busy) = Busy::enter() else {
                return f($($arg),*);
            };
            let dirfd: Option<c_int> = $dirfd;
            let creating = $flags & libc::O_CREAT != 0 && (dirfd.is_none() || dirfd == Some(libc::AT_FDCWD));
            let target = if creating { arg_path($path) } else { None };
            let guard = target.as_deref().and_then(journal_for);
            match (guard, target) {
                (Some(mut g), Some(p)) => {
                    let existed = p.exists();
                    let truncating = $flags & libc::O_TRUNC != 0 && existed;
                    if truncating {
                        let size = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
                        let mut tail = vec![0u8; size as usize];
                        if let Ok(r) = std::fs::File::open(&p) {
                            let _ = r.read_exact_at(&mut tail, 0);
                        }
                        g.append(&Record::Resize { path: p.clone(), old_size: size, tail });
                    }
                    let fd = f($($arg),*);
                    if fd >= 0 && !existed {
                        g.append(&Record::Create { path: p });
                    }
                    fd
                }
                _ => f($($arg),*),
            }
        }
    };
}
interpose_open!(open, c"open", (path: *const c_char, flags: c_int, mode: libc::c_uint), None, path, flags);
interpose_open!(open64, c"open64", (path: *const c_char, flags: c_int, mode: libc::c_uint), None, path, flags);
interpose_open!(openat, c"openat", (dirfd: c_int, path: *const c_char, flags: c_int, mode: libc::c_uint), Some(dirfd), path, flags);
interpose_open!(openat64, c"openat64", (dirfd: c_int, path: *const c_char, flags: c_int, mode: libc::c_uint), Some(dirfd), path, flags);

/// rename: journaled with a copy of the file it replaces.
#[no_mangle]
pub unsafe extern "C" fn rename(from: *const c_char, to: *const c_char) -> c_int {
    static REAL: AtomicUsize = AtomicUsize::new(0);
    let f = real(&REAL, c"rename");
    if f == 0 {
        return fail_minus_one::<c_int>(libc::ENOSYS);
    }
    // SAFETY: the C library's rename.
    let f: unsafe extern "C" fn(*const c_char, *const c_char) -> c_int = std::mem::transmute(f);
    let Some(_busy) = Busy::enter() else {
        return f(from, to);
    };
    let (Some(pf), Some(pt)) = (arg_path(from), arg_path(to)) else {
        return f(from, to);
    };
    let Some(mut g) = journal_for(&pt) else {
        return f(from, to);
    };
    let saved = match (journal(), pt.exists()) {
        (Some(j), true) => {
            let n = j.saved.fetch_add(1, Ordering::Relaxed);
            let mut s = j.saved_prefix.clone().into_os_string();
            s.push(n.to_string());
            let s = PathBuf::from(s);
            std::fs::copy(&pt, &s).ok().map(|_| s)
        }
        _ => None,
    };
    let rc = f(from, to);
    if rc == 0 {
        g.append(&Record::Rename {
            from: pf,
            to: pt,
            saved,
        });
    }
    rc
}
