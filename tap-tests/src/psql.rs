//! Real psql, as a one-shot command and as a long-lived process fed on stdin.
//!
//! [`PsqlSession`] is what PostgreSQL's 021_row_visibility.pl builds with
//! `IPC::Run::start(['psql', '-XA', '-f', '-', ...])`: one psql process for
//! the whole test, SQL written to its stdin, its stdout read until a pattern
//! shows up (`send_query_and_wait`). Output is psql's own — headers, `(1 row)`
//! footers, command tags like `UPDATE 1` — so a test also checks that hotpair
//! gives psql what it needs to print exactly what it prints for PostgreSQL.
//!
//! Two threads copy psql's stdout and stderr into buffers guarded by one
//! mutex and condvar; waiters re-check their pattern on every chunk. After a
//! match the stdout buffer is cleared (as the Perl does with
//! `$$psql{stdout} = ''`), so the next wait sees only new output.
//!
//! Patterns are plain text, not regexes (no regex crate in the workspace):
//! a `&str` matches as a substring, [`line`] matches one whole line
//! (Perl's `qr/^UPDATE 1$/m`), and any `Fn(&str) -> bool` is a pattern.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::utils::timeout_default;

/// Something psql's output is waited for.
pub trait Pattern {
    /// True if `output` contains the pattern.
    fn matches(&self, output: &str) -> bool;
    /// How to show the pattern in a failure message.
    fn describe(&self) -> String;
}

impl Pattern for &str {
    fn matches(&self, output: &str) -> bool {
        output.contains(*self)
    }
    fn describe(&self) -> String {
        format!("{self:?}")
    }
}

impl Pattern for String {
    fn matches(&self, output: &str) -> bool {
        output.contains(self.as_str())
    }
    fn describe(&self) -> String {
        format!("{self:?}")
    }
}

/// A pattern matching one whole line of output (`qr/^text$/m`).
pub struct Line(pub String);

/// `line("UPDATE 1")`: a whole output line equal to the text.
pub fn line(text: &str) -> Line {
    Line(text.to_string())
}

impl Pattern for Line {
    fn matches(&self, output: &str) -> bool {
        output.lines().any(|l| l == self.0)
    }
    fn describe(&self) -> String {
        format!("a line equal to {:?}", self.0)
    }
}

impl<F: Fn(&str) -> bool> Pattern for F {
    fn matches(&self, output: &str) -> bool {
        self(output)
    }
    fn describe(&self) -> String {
        "a predicate on the output".to_string()
    }
}

/// What the reader threads have collected.
#[derive(Default)]
struct Streams {
    stdout: String,
    stderr: String,
    stdout_closed: bool,
    stderr_closed: bool,
}

/// A real `psql -XA -f -` process held open for a test.
pub struct PsqlSession {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    shared: Arc<(Mutex<Streams>, Condvar)>,
    banner_seq: u64,
}

impl PsqlSession {
    /// Starts `psql` with `args` (connection options included) reading
    /// commands from stdin. `name` labels failure messages.
    pub fn start(name: &str, args: &[String]) -> PsqlSession {
        let mut child = Command::new("psql")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("PGAPPNAME", "tap-tests psql")
            .env_remove("PGOPTIONS")
            .spawn()
            .unwrap_or_else(|e| panic!("psql session on {name}: could not start psql: {e}"));
        let shared = Arc::new((Mutex::new(Streams::default()), Condvar::new()));
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        pump(stdout, Arc::clone(&shared), false);
        pump(stderr, Arc::clone(&shared), true);
        let stdin = child.stdin.take();
        PsqlSession {
            name: name.to_string(),
            child,
            stdin,
            shared,
            banner_seq: 0,
        }
    }

    /// Writes `sql` and a newline to psql's stdin without waiting for output
    /// (for a statement that will block; collect with [`wait_for`](Self::wait_for)).
    pub fn send(&mut self, sql: &str) {
        let stdin = match self.stdin.as_mut() {
            Some(s) => s,
            None => panic!("psql session on {}: stdin already closed", self.name),
        };
        let written = stdin
            .write_all(sql.as_bytes())
            .and_then(|_| stdin.write_all(b"\n"))
            .and_then(|_| stdin.flush());
        if let Err(e) = written {
            let (out, err) = self.snapshot();
            panic!(
                "psql session on {}: could not write to psql ({e}); it may have died\nstdout: >>{out}<<\nstderr: >>{err}<<",
                self.name
            );
        }
    }

    /// Sends `sql`, then reads stdout until `until` matches; returns (and
    /// clears) everything read — 021_row_visibility.pl's
    /// `send_query_and_wait`. Panics on timeout or psql exit, showing the
    /// stream contents and the pattern.
    pub fn query_until(&mut self, sql: &str, until: impl Pattern) -> String {
        self.send(sql);
        self.wait_for(until)
    }

    /// Reads stdout until `until` matches; returns and clears it.
    pub fn wait_for(&mut self, until: impl Pattern) -> String {
        let deadline = Instant::now() + timeout_default();
        let (lock, cond) = &*self.shared;
        let mut streams = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if until.matches(&streams.stdout) {
                return std::mem::take(&mut streams.stdout);
            }
            let why = if streams.stdout_closed {
                Some("psql exited")
            } else if Instant::now() >= deadline {
                Some("timed out")
            } else {
                None
            };
            if let Some(why) = why {
                panic!(
                    "psql session on {}: aborting wait: {why}\nstream contents: >>{}<<\nstderr: >>{}<<\npattern searched for: {}",
                    self.name,
                    streams.stdout,
                    streams.stderr,
                    until.describe()
                );
            }
            let left = deadline.saturating_duration_since(Instant::now());
            streams = cond
                .wait_timeout(streams, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Runs `sql` and returns its complete stdout (without the trailing
    /// newline), using `\echo` / `\warn` banners to know where the output of
    /// this statement ends, as BackgroundPsql.pm's `query` does. Errors show
    /// up in [`take_stderr`](Self::take_stderr), not here.
    pub fn query(&mut self, sql: &str) -> String {
        self.banner_seq += 1;
        let banner = format!(
            "tap_tests_banner_{}_{}",
            std::process::id(),
            self.banner_seq
        );
        self.send(&format!("{sql}\n\\echo {banner}\n\\warn {banner}"));
        let out = self.wait_for(line(&banner));
        self.wait_stderr_banner(&banner);
        let body = out
            .rsplit_once(&format!("{banner}\n"))
            .map(|(b, _)| b)
            .unwrap_or(&out);
        body.strip_suffix('\n').unwrap_or(body).to_string()
    }

    /// Like [`query`](Self::query), panicking if psql printed anything on
    /// stderr (an ERROR) — `query_safe`.
    pub fn query_safe(&mut self, sql: &str) -> String {
        let out = self.query(sql);
        let err = self.take_stderr();
        if !err.is_empty() {
            panic!(
                "psql session on {}: query failed: {sql}\nstderr: {err}\nstdout: {out}",
                self.name
            );
        }
        out
    }

    /// Sends SIGINT to psql, which sends a CancelRequest for the
    /// statement it runs (as Ctrl-C does).
    pub fn interrupt(&self) {
        let status = Command::new("kill")
            .arg("-INT")
            .arg(self.child.id().to_string())
            .status();
        assert!(
            matches!(status, Ok(s) if s.success()),
            "psql session on {}: could not send SIGINT: {status:?}",
            self.name
        );
    }

    /// Returns and clears what psql has written on stderr so far.
    pub fn take_stderr(&mut self) -> String {
        let (lock, _) = &*self.shared;
        let mut streams = lock.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut streams.stderr)
    }

    /// Waits for the `\warn` banner on stderr and removes it, keeping what
    /// came before (the statement's errors).
    fn wait_stderr_banner(&mut self, banner: &str) {
        let deadline = Instant::now() + timeout_default();
        let (lock, cond) = &*self.shared;
        let mut streams = lock.lock().unwrap_or_else(|e| e.into_inner());
        let marker = format!("{banner}\n");
        loop {
            if let Some(at) = streams.stderr.find(&marker) {
                streams.stderr.replace_range(at..at + marker.len(), "");
                return;
            }
            if streams.stderr_closed || Instant::now() >= deadline {
                panic!(
                    "psql session on {}: no stderr banner {banner}\nstderr: >>{}<<",
                    self.name, streams.stderr
                );
            }
            let left = deadline.saturating_duration_since(Instant::now());
            streams = cond
                .wait_timeout(streams, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Everything buffered and not yet consumed: (stdout, stderr).
    fn snapshot(&self) -> (String, String) {
        let (lock, _) = &*self.shared;
        let streams = lock.lock().unwrap_or_else(|e| e.into_inner());
        (streams.stdout.clone(), streams.stderr.clone())
    }

    /// Sends `\q`, closes stdin and waits for psql to exit; returns its exit
    /// code.
    pub fn quit(mut self) -> i32 {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"\\q\n");
        }
        let deadline = Instant::now() + timeout_default();
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.code().unwrap_or(-1),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(crate::utils::POLL_INTERVAL)
                }
                _ => panic!("psql session on {}: psql did not exit after \\q", self.name),
            }
        }
    }
}

impl Drop for PsqlSession {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Copies one of psql's output streams into the shared buffer.
fn pump(
    mut stream: impl Read + Send + 'static,
    shared: Arc<(Mutex<Streams>, Condvar)>,
    is_stderr: bool,
) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            let n = stream.read(&mut buf).unwrap_or(0);
            let (lock, cond) = &*shared;
            let mut streams = lock.lock().unwrap_or_else(|e| e.into_inner());
            if n == 0 {
                if is_stderr {
                    streams.stderr_closed = true;
                } else {
                    streams.stdout_closed = true;
                }
                cond.notify_all();
                return;
            }
            // psql on Windows would print \r\n; normalise as the Perl does.
            let text = String::from_utf8_lossy(&buf[..n]).replace("\r\n", "\n");
            if is_stderr {
                streams.stderr.push_str(&text);
            } else {
                streams.stdout.push_str(&text);
            }
            cond.notify_all();
        }
    });
}

/// Result of a one-shot psql (or pgbench) run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PsqlOutput {
    /// Exit status (0 ok, 1 fatal client error, 2 bad connection, 3 script error with ON_ERROR_STOP).
    pub status: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `psql args…` with `stdin` fed to it; waits for it to exit (up to the
/// default timeout, killing it after).
pub fn run_psql(args: &[String], stdin: &str, cwd: Option<&Path>) -> PsqlOutput {
    run_program("psql", args, stdin, cwd)
}

/// Runs `program args…` (psql, pgbench) with `stdin` fed to it; waits for it
/// to exit (up to the default timeout, killing it after).
pub fn run_program(program: &str, args: &[String], stdin: &str, cwd: Option<&Path>) -> PsqlOutput {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("PGOPTIONS");
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("could not start psql: {e}"));
    let mut input = child.stdin.take().expect("piped stdin");
    let text = stdin.to_string();
    // Write from a thread: a large script could fill the pipe while psql
    // blocks writing output we are not reading yet.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let out = wait_output(child, args);
    let _ = writer.join();
    out
}

fn wait_output(mut child: Child, args: &[String]) -> PsqlOutput {
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + timeout_default();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(crate::utils::POLL_INTERVAL)
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "psql {args:?} did not finish within {:?}",
                    timeout_default()
                );
            }
        }
    };
    let stdout = String::from_utf8_lossy(&out_thread.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_thread.join().unwrap_or_default()).into_owned();
    PsqlOutput {
        status: status.code().unwrap_or(-1),
        stdout,
        stderr,
    }
}
