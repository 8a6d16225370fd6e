//! A TCP proxy that misbehaves on purpose: the network between a standby
//! and its primary in the replication fault tests (issue 21 item 5).
//!
//! [`FaultProxy::start`] listens on a free port and forwards every
//! connection to a target port, one thread per direction reading and one
//! writing. What happens to the bytes is the proxy's [`Mode`], which a test
//! changes while traffic flows:
//!
//! | mode | what the peers see |
//! |---|---|
//! | [`Mode::Pass`] | a plain link |
//! | [`Mode::Delay`] | every chunk arrives `d` late, in order (a long path) |
//! | [`Mode::Throttle`] | at most `n` bytes per second each way (a thin pipe) |
//! | [`Mode::BlackHole`] | nothing more, ever, on the live connections — no FIN, no RST, the sockets stay open and the senders' buffers fill — and new connections are accepted and never answered (a dead path) |
//!
//! Two actions end the live connections: [`FaultProxy::reset_all`] with
//! an RST to both peers (a middlebox dropping state, a peer rebooted),
//! [`FaultProxy::close_all`] with a FIN (an orderly close mid-stream).
//! A connection black-holed stays dead after the mode changes back; new
//! connections get the new mode. Nothing here sleeps for a test's sake:
//! the waits are the faults themselves (a delay, a rate), and polls of a
//! stop flag every 50 ms.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the proxy does to the bytes (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Forward as is.
    Pass,
    /// Forward each chunk this much later.
    Delay(Duration),
    /// Forward at most this many bytes per second in each direction.
    Throttle(u64),
    /// Forward nothing, keep the sockets open.
    BlackHole,
}

/// How often a blocked pump looks at its stop flag.
const POLL: Duration = Duration::from_millis(50);

/// One proxied connection: both sockets (clones of the pumps') and the
/// flag that stops its pumps.
struct Conn {
    client: TcpStream,
    server: TcpStream,
    stop: Arc<AtomicBool>,
}

struct State {
    mode: Mutex<Mode>,
    conns: Mutex<Vec<Conn>>,
    accepted: AtomicUsize,
}

impl State {
    fn mode(&self) -> Mode {
        *self.mode.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running proxy (it lives as long as the test process; the threads of
/// a connection end with it).
pub struct FaultProxy {
    port: u16,
    state: Arc<State>,
}

impl FaultProxy {
    /// A proxy on a free local port to `127.0.0.1:target`, in
    /// [`Mode::Pass`].
    pub fn start(target: u16) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let state = Arc::new(State {
            mode: Mutex::new(Mode::Pass),
            conns: Mutex::new(Vec::new()),
            accepted: AtomicUsize::new(0),
        });
        let st = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                st.accepted.fetch_add(1, Ordering::SeqCst);
                if st.mode() == Mode::BlackHole {
                    // Accepted, never answered, never closed.
                    std::thread::spawn(move || {
                        let _keep = client;
                        loop {
                            std::thread::park();
                        }
                    });
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let stop = Arc::new(AtomicBool::new(false));
                let (Ok(c1), Ok(c2), Ok(s1), Ok(s2)) = (
                    client.try_clone(),
                    client.try_clone(),
                    server.try_clone(),
                    server.try_clone(),
                ) else {
                    continue;
                };
                pump(c1, s1, st.clone(), stop.clone());
                pump(s2, c2, st.clone(), stop.clone());
                st.conns
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(Conn {
                        client,
                        server,
                        stop,
                    });
            }
        });
        FaultProxy { port, state }
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Changes what happens to bytes read from now on.
    pub fn set_mode(&self, mode: Mode) {
        *self.state.mode.lock().unwrap_or_else(|e| e.into_inner()) = mode;
    }

    /// Connections accepted so far (a reconnect shows as one more).
    pub fn accepted(&self) -> usize {
        self.state.accepted.load(Ordering::SeqCst)
    }

    /// Ends every live connection with an RST to both peers.
    pub fn reset_all(&self) {
        for c in self.take_conns() {
            // First, so no pump passes an end-of-file on as a FIN.
            c.stop.store(true, Ordering::SeqCst);
            for s in [&c.client, &c.server] {
                set_linger_zero(s);
                // Wakes the reader blocked on it without sending anything;
                // the RST goes out when the last descriptor closes.
                let _ = s.shutdown(Shutdown::Read);
            }
        }
    }

    /// Ends every live connection with a FIN to both peers.
    pub fn close_all(&self) {
        for c in self.take_conns() {
            c.stop.store(true, Ordering::SeqCst);
            let _ = c.client.shutdown(Shutdown::Both);
            let _ = c.server.shutdown(Shutdown::Both);
        }
    }

    fn take_conns(&self) -> Vec<Conn> {
        std::mem::take(&mut *self.state.conns.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// SO_LINGER {on, 0}: the close that follows sends an RST.
fn set_linger_zero(s: &TcpStream) {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `l` is a live linger struct and the length is its size.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// Forwards `from` to `to` on two threads: a reader that stamps each chunk
/// with the time it may leave (and stops reading for good in a black
/// hole), and a writer that sends chunks at their time and within the
/// rate. Either ends when a socket does or `stop` is set.
fn pump(mut from: TcpStream, mut to: TcpStream, st: Arc<State>, stop: Arc<AtomicBool>) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let reader_stop = stop.clone();
    let reader_state = st.clone();
    // Set when this direction went into a black hole: its end, later, is
    // not passed on (a dead path delivers no FIN).
    let holed = Arc::new(AtomicBool::new(false));
    let reader_holed = holed.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            if reader_stop.load(Ordering::SeqCst) {
                return;
            }
            let mode = reader_state.mode();
            if mode == Mode::BlackHole {
                reader_holed.store(true, Ordering::SeqCst);
                black_hole(&from, &reader_stop);
                return;
            }
            // A throttled pipe moves small chunks, so the rate holds
            // within a tenth of a second.
            let max = match mode {
                Mode::Throttle(rate) => ((rate / 10) as usize).clamp(1, buf.len()),
                _ => buf.len(),
            };
            let n = match from.read(&mut buf[..max]) {
                // The peer's end: the writer passes it on.
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            // The mode may have changed while the read blocked.
            let due = match reader_state.mode() {
                Mode::BlackHole => {
                    reader_holed.store(true, Ordering::SeqCst);
                    black_hole(&from, &reader_stop);
                    return;
                }
                Mode::Delay(d) => Instant::now() + d,
                _ => Instant::now(),
            };
            if tx.send((due, buf[..n].to_vec())).is_err() {
                return;
            }
        }
    });
    std::thread::spawn(move || loop {
        let (due, chunk) = match rx.recv_timeout(POLL) {
            Ok(c) => c,
            Err(RecvTimeoutError::Timeout) if !stop.load(Ordering::SeqCst) => continue,
            Err(_) => {
                // The reader saw its peer's end: pass it on, unless the
                // proxy ended the connection (reset_all / close_all do
                // their own) or black-holed this direction.
                if !stop.load(Ordering::SeqCst) && !holed.load(Ordering::SeqCst) {
                    let _ = to.shutdown(Shutdown::Write);
                }
                return;
            }
        };
        while Instant::now() < due {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep((due - Instant::now()).min(POLL));
        }
        if let Mode::Throttle(rate) = st.mode() {
            let secs = chunk.len() as f64 / rate.max(1) as f64;
            std::thread::sleep(Duration::from_secs_f64(secs));
        }
        if stop.load(Ordering::SeqCst) || to.write_all(&chunk).is_err() {
            stop.store(true, Ordering::SeqCst);
            return;
        }
    });
}

/// A black-holed direction: read nothing more (so the sender's buffers
/// fill), keep the socket, until the peer closes it or the connection is
/// ended by the proxy.
fn black_hole(from: &TcpStream, stop: &AtomicBool) {
    let _ = from.set_read_timeout(Some(POLL));
    let mut one = [0u8; 1];
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(POLL);
        if from.peek(&mut one).is_ok_and(|n| n == 0) {
            return;
        }
    }
}
