//! The null server: what pgbench's round trip costs a server that does
//! nothing, on this host.
//!
//! `bench select --floor` runs, beside hotpair and PostgreSQL at every
//! point, a child of this binary (`bench --null-server PORT[:DIR]`) that
//! speaks just enough of the PostgreSQL protocol for pgbench and answers
//! every statement with a canned result, one thread per connection and
//! blocking reads — PostgreSQL's process-per-connection shape with none of
//! its work. Its CPU per transaction is the part of any server's cost that
//! belongs to the host (the socket calls, the TCP loopback delivery, the
//! switch between the client's thread and the server's, waking a halted
//! virtual CPU), so a target stated as a fraction of PostgreSQL's CPU can
//! be read against it: when the null server alone spends more than half of
//! PostgreSQL's CPU, no server can spend half.
//!
//! What it answers (results are never looked at by pgbench's select-only
//! script, only counted):
//! * SSL / GSS encryption requests: `N`; the start-up packet:
//!   AuthenticationOk, a few ParameterStatus, BackendKeyData,
//!   ReadyForQuery.
//! * A simple query: one row `(1, NULL, 0)` of three `int4` columns —
//!   what pgbench's start-up queries read (the branch count: scale 1; the
//!   partition probe: not partitioned).
//! * The extended protocol: ParseComplete, BindComplete, CloseComplete;
//!   Describe of a portal or statement: one `int4` column `abalance`;
//!   Execute: one row `0` and `SELECT 1`; Sync: ReadyForQuery; Flush
//!   sends what is buffered.
//!
//! Only the select-only script's answers are right; the null server is a
//! measuring device, not a database.

use std::io::{self, BufRead, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::cgroup::{self, Group};
use super::target::Endpoint;

/// The child side (`bench --null-server PORT[:DIR]`): listens on
/// 127.0.0.1:PORT (and `DIR/.s.PGSQL.PORT`), prints `ready`, serves until
/// its standard input closes.
pub fn serve(spec: &str) -> Result<(), String> {
    let socket = listen(spec)?;
    println!("ready");
    io::stdout().flush().map_err(|e| e.to_string())?;
    // The parent holds our standard input: its end is ours.
    let mut line = String::new();
    while io::stdin().lock().read_line(&mut line).is_ok_and(|n| n > 0) {
        line.clear();
    }
    if let Some(path) = socket {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Binds the listeners of `PORT[:DIR]` and serves them from threads of
/// their own; returns the Unix socket's path, if any.
fn listen(spec: &str) -> Result<Option<PathBuf>, String> {
    let (port, dir) = match spec.split_once(':') {
        Some((p, d)) => (p, Some(PathBuf::from(d))),
        None => (spec, None),
    };
    let port: u16 = port
        .parse()
        .map_err(|e| format!("--null-server {spec}: port: {e}"))?;
    let tcp = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("--null-server: bind 127.0.0.1:{port}: {e}"))?;
    std::thread::spawn(move || {
        for s in tcp.incoming().flatten() {
            // PostgreSQL and hotpair both set TCP_NODELAY.
            let _ = s.set_nodelay(true);
            spawn_session::<TcpStream>(s);
        }
    });
    let socket = dir.map(|d| d.join(format!(".s.PGSQL.{port}")));
    if let Some(path) = &socket {
        let _ = std::fs::remove_file(path);
        let unix = UnixListener::bind(path)
            .map_err(|e| format!("--null-server: bind {}: {e}", path.display()))?;
        std::thread::spawn(move || {
            for s in unix.incoming().flatten() {
                spawn_session::<UnixStream>(s);
            }
        });
    }
    Ok(socket)
}

fn spawn_session<S: Read + Write + Send + 'static>(s: S) {
    // Small stacks: a point of 1,024 clients is 1,024 threads.
    let _ = std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            let _ = session(s);
        });
}

/// Protocol codes of the start-up packets.
const SSL_REQUEST: u32 = 80_877_103;
const GSS_REQUEST: u32 = 80_877_104;
const CANCEL_REQUEST: u32 = 80_877_102;

/// One connection: reads what the client sent, answers every complete
/// message, sends the answers when nothing complete is left, reads again.
fn session<S: Read + Write>(mut s: S) -> io::Result<()> {
    let mut input: Vec<u8> = Vec::with_capacity(8192);
    let mut out: Vec<u8> = Vec::with_capacity(8192);
    let mut started = false;
    let mut chunk = [0u8; 8192];
    loop {
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        input.extend_from_slice(&chunk[..n]);
        let mut at = 0;
        loop {
            let rest = &input[at..];
            if !started {
                let Some(len) = rest.get(..4).map(be_u32) else {
                    break;
                };
                let len = len as usize;
                if len < 8 || rest.len() < len {
                    if len < 8 {
                        return Ok(());
                    }
                    break;
                }
                let code = be_u32(&rest[4..8]);
                at += len;
                match code {
                    SSL_REQUEST | GSS_REQUEST => out.push(b'N'),
                    CANCEL_REQUEST => return Ok(()),
                    _ => {
                        started = true;
                        startup_reply(&mut out);
                    }
                }
                continue;
            }
            if rest.len() < 5 {
                break;
            }
            let len = be_u32(&rest[1..5]) as usize;
            if len < 4 {
                return Ok(());
            }
            if rest.len() < len + 1 {
                break;
            }
            let (kind, body) = (rest[0], &rest[5..len + 1]);
            at += len + 1;
            match kind {
                b'Q' => {
                    row_description(&mut out, &["n", "partstrat", "count"]);
                    message(&mut out, b'D', |b| {
                        b.extend_from_slice(&3u16.to_be_bytes());
                        field(b, Some(b"1"));
                        field(b, None);
                        field(b, Some(b"0"));
                    });
                    message(&mut out, b'C', |b| b.extend_from_slice(b"SELECT 1\0"));
                    ready_for_query(&mut out);
                }
                b'P' => message(&mut out, b'1', |_| {}),
                b'B' => message(&mut out, b'2', |_| {}),
                b'C' => message(&mut out, b'3', |_| {}),
                b'D' => {
                    if body.first() == Some(&b'S') {
                        message(&mut out, b't', |b| b.extend_from_slice(&0u16.to_be_bytes()));
                    }
                    row_description(&mut out, &["abalance"]);
                }
                b'E' => {
                    message(&mut out, b'D', |b| {
                        b.extend_from_slice(&1u16.to_be_bytes());
                        field(b, Some(b"0"));
                    });
                    message(&mut out, b'C', |b| b.extend_from_slice(b"SELECT 1\0"));
                }
                b'S' => ready_for_query(&mut out),
                b'H' => {
                    s.write_all(&out)?;
                    out.clear();
                }
                b'X' => return Ok(()),
                _ => {}
            }
        }
        input.drain(..at);
        if !out.is_empty() {
            s.write_all(&out)?;
            out.clear();
        }
    }
}

fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Appends message `kind` whose body `body` writes.
fn message(out: &mut Vec<u8>, kind: u8, body: impl FnOnce(&mut Vec<u8>)) {
    out.push(kind);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    body(out);
    let len = (out.len() - at) as u32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn field(b: &mut Vec<u8>, v: Option<&[u8]>) {
    match v {
        Some(v) => {
            b.extend_from_slice(&(v.len() as i32).to_be_bytes());
            b.extend_from_slice(v);
        }
        None => b.extend_from_slice(&(-1i32).to_be_bytes()),
    }
}

/// RowDescription of `int4` columns named `names`, text format.
fn row_description(out: &mut Vec<u8>, names: &[&str]) {
    message(out, b'T', |b| {
        b.extend_from_slice(&(names.len() as u16).to_be_bytes());
        for name in names {
            b.extend_from_slice(name.as_bytes());
            b.push(0);
            b.extend_from_slice(&0u32.to_be_bytes()); // table
            b.extend_from_slice(&0u16.to_be_bytes()); // column
            b.extend_from_slice(&23u32.to_be_bytes()); // int4
            b.extend_from_slice(&4i16.to_be_bytes()); // length
            b.extend_from_slice(&(-1i32).to_be_bytes()); // typmod
            b.extend_from_slice(&0u16.to_be_bytes()); // text
        }
    });
}

fn ready_for_query(out: &mut Vec<u8>) {
    message(out, b'Z', |b| b.push(b'I'));
}

fn startup_reply(out: &mut Vec<u8>) {
    message(out, b'R', |b| b.extend_from_slice(&0u32.to_be_bytes()));
    for (name, value) in [
        ("server_version", "15.0 (null server)"),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
    ] {
        message(out, b'S', |b| {
            b.extend_from_slice(name.as_bytes());
            b.push(0);
            b.extend_from_slice(value.as_bytes());
            b.push(0);
        });
    }
    message(out, b'K', |b| b.extend_from_slice(&[0; 8]));
    ready_for_query(out);
}

/// The parent side: a running null server, stopped when dropped.
pub struct NullServer {
    child: Child,
    endpoint: Endpoint,
    group: Option<Group>,
}

impl NullServer {
    /// Starts `bench --null-server` on a free port, with a Unix socket in
    /// `socket_dir`, in its own cgroup when the bench has them.
    pub fn start(socket_dir: &Path) -> Result<NullServer, String> {
        let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
        let port = crate::utils::free_port();
        std::fs::create_dir_all(socket_dir)
            .map_err(|e| format!("mkdir {}: {e}", socket_dir.display()))?;
        let mut child = Command::new(exe)
            .arg("--null-server")
            .arg(format!("{port}:{}", socket_dir.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("start the null server: {e}"))?;
        let mut line = String::new();
        let ready = child
            .stdout
            .take()
            .map(|o| io::BufReader::new(o).read_line(&mut line));
        if !matches!(ready, Some(Ok(n)) if n > 0) || line.trim() != "ready" {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the null server did not start ({:?})", line.trim()));
        }
        let group = cgroup::group("null").and_then(|g| g.attach(child.id()).ok().map(|()| g));
        Ok(NullServer {
            child,
            endpoint: Endpoint {
                host: "127.0.0.1".into(),
                port,
                socket_dir: Some(socket_dir.display().to_string()),
            },
            group,
        })
    }

    /// Where pgbench connects.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// CPU the null server has used so far, µs (its cgroup, else /proc:
    /// one process, whose exited threads' time stays in its own).
    pub fn cpu_usec(&self) -> Option<u64> {
        match &self.group {
            Some(g) => g.usage_usec(),
            None => super::sysinfo::cpu_secs(self.child.id(), false).map(|s| (s * 1e6) as u64),
        }
    }
}

impl Drop for NullServer {
    fn drop(&mut self) {
        // Closing its standard input ends it; kill in case it hangs.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pgbench's select-only script runs against the null server, over
    /// TCP and through its Unix socket.
    #[test]
    fn pgbench_runs_against_the_null_server() {
        let Some(pgbench) = super::super::pgbench::pgbench_path() else {
            eprintln!("skipped: no pgbench");
            return;
        };
        let (port, dir) = (crate::utils::free_port(), tempfile::tempdir().unwrap());
        let socket = listen(&format!("{port}:{}", dir.path().display())).unwrap();
        assert!(socket.is_some_and(|p| p.exists()));
        for host in ["127.0.0.1".to_string(), dir.path().display().to_string()] {
            let out = Command::new(&pgbench)
                .args([
                    "-n", "-S", "-M", "prepared", "-c", "2", "-t", "50", "-U", "postgres",
                ])
                .args(["-h", &host, "-p", &port.to_string(), "postgres"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                text.contains("number of transactions actually processed: 100/100"),
                "{text}"
            );
        }
    }
}
