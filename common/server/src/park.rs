//! Parked sockets: idle client connections held outside the process's
//! descriptor table.
//!
//! A process may hold no more descriptors than its `RLIMIT_NOFILE`, and
//! where the hard limit cannot be raised (a container without
//! `CAP_SYS_RESOURCE`) that caps the node's connections however little an
//! idle session costs. io_uring's *direct descriptors* are the way past
//! it: a ring has a table of files of its own, each ring's as large as the
//! limit, and a socket in it is held by the kernel, not by a descriptor.
//! So a session that has been idle a while, when the node holds many
//! sockets, *parks* its socket:
//!
//! ```text
//!   park:   register the socket in a free slot of a ring's table
//!           submit  POLL_ADD(slot, POLLIN|POLLRDHUP)
//!           close the descriptor          (the ring holds the socket)
//!   client speaks or hangs up (or a recall cancels the poll):
//!           the reaper thread submits FIXED_FD_INSTALL(slot) — at most
//!           INSTALL_BUDGET at a time, the rest queued —
//!           then clears the slot and wakes the session with the new
//!           descriptor
//! ```
//!
//! The install follows every poll completion, however the poll ended —
//! readable, hung up, cancelled — so the socket always comes back as a
//! descriptor and nothing is stranded in a slot. It is not linked to the
//! poll but submitted by the reaper under a budget: when every client of
//! 100,000 parked sessions hangs up at once, the descriptors come back as
//! fast as their sessions end, not all at once into a table that has room
//! for a fifth of them (data files, WAL and new connections need room too).
//! The session then goes on with a new descriptor number for the same
//! socket (its options and its file status flags, `O_NONBLOCK` among
//! them, belong to the socket).
//!
//! Each ring has a reaper thread blocked in `io_uring_enter` for its
//! completions; a parked session costs its task and a slot, no thread and
//! no descriptor. Rings are made on first need, so a node that never
//! parks has none.
//!
//! Invariants:
//! * A slot holds a socket only between a park and the completion of that
//!   park's install; the reaper clears it before anyone may reuse it.
//! * Every park ends in exactly one install completion, which either hands
//!   the descriptor to the waiting session or, when the session is gone,
//!   closes it.
//! * At most [`INSTALL_BUDGET`] installs are submitted or completed and
//!   not yet taken by their session; each taken, closed or failed one
//!   lets the next queued install go.
//! * [`Lot::parked`] counts the parks whose socket has not yet been taken
//!   back or closed.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Poll, Waker};

use io_uring::{opcode, squeue, types, IoUring};
use parking_lot::{Mutex, RwLock};
use tracing::{debug, warn};

/// Rings at most: with the usual limits far more slots than sessions.
const MAX_RINGS: usize = 64;
/// Submission queue entries per ring (two per park, one per recall).
const SQ_ENTRIES: u32 = 256;
/// Completion queue entries per ring; beyond it the kernel keeps
/// completions aside (IORING_FEAT_NODROP) until the reaper drains.
const CQ_ENTRIES: u32 = 4096;

/// Descriptors brought back and not yet taken by their sessions, at
/// most (see the module essay).
pub const INSTALL_BUDGET: usize = 256;

const POLL: u64 = 1;
const INSTALL: u64 = 2;
const CANCEL: u64 = 3;

/// The process's parking lot, or None where io_uring (or its
/// FIXED_FD_INSTALL, Linux 6.8) is not available.
pub fn lot() -> Option<&'static Lot> {
    static LOT: OnceLock<Option<Lot>> = OnceLock::new();
    LOT.get_or_init(|| {
        let per_ring = u32::try_from(descriptor_limit().clamp(64, 1 << 20)).unwrap_or(1 << 20);
        match Lot::new(per_ring) {
            Ok(l) => Some(l),
            Err(e) => {
                debug!("idle sessions cannot park their sockets: {e}");
                None
            }
        }
    })
    .as_ref()
}

/// The soft `RLIMIT_NOFILE`: descriptors this process may hold, and the
/// size of one ring's table.
pub fn descriptor_limit() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 1024;
    }
    usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX)
}

/// Rings of parked sockets.
pub struct Lot {
    rings: RwLock<Vec<Arc<Ring>>>,
    grow: Mutex<()>,
    per_ring: u32,
    parked: AtomicUsize,
    installs: Mutex<Installs>,
}

/// Installs under the budget, and those waiting for room.
#[derive(Default)]
struct Installs {
    /// Submitted, or completed and not yet taken.
    running: usize,
    waiting: std::collections::VecDeque<(Arc<Ring>, u32, u32)>,
}

struct Ring {
    uring: IoUring,
    /// Held while pushing and submitting: one submission queue writer.
    sq: Mutex<()>,
    slots: Box<[Mutex<Slot>]>,
    free: Mutex<Vec<u32>>,
}

#[derive(Default)]
struct Slot {
    /// Bumped at every park, so a late cancel cannot match the next one.
    generation: u32,
    state: State,
}

#[derive(Default)]
enum State {
    #[default]
    Free,
    /// Parked; the session's waker, once it has polled.
    Waiting(Option<Waker>),
    /// The install completed: the socket's new descriptor.
    Ready(io::Result<OwnedFd>),
    /// The session went away while parked: close the socket when it
    /// comes back.
    Abandoned,
}

fn user_data(generation: u32, slot: u32, kind: u64) -> u64 {
    (u64::from(generation) << 32) | (u64::from(slot) << 4) | kind
}

impl Lot {
    /// A lot whose rings hold `per_ring` sockets each, after checking
    /// that the kernel has what parking needs (so that it says so once,
    /// here). Rings are made on first need.
    fn new(per_ring: u32) -> io::Result<Lot> {
        let probe_ring = IoUring::new(2)?;
        let mut probe = io_uring::Probe::new();
        probe_ring.submitter().register_probe(&mut probe)?;
        for code in [
            opcode::PollAdd::CODE,
            opcode::FixedFdInstall::CODE,
            opcode::AsyncCancel::CODE,
        ] {
            if !probe.is_supported(code) {
                return Err(io::Error::other(format!(
                    "io_uring opcode {code} is not supported by this kernel"
                )));
            }
        }
        Ok(Lot {
            rings: RwLock::new(Vec::new()),
            grow: Mutex::new(()),
            per_ring,
            parked: AtomicUsize::new(0),
            installs: Mutex::new(Installs::default()),
        })
    }

    /// Makes a ring and its reaper.
    fn start(&'static self) -> io::Result<Arc<Ring>> {
        let ring = Arc::new(Ring::new(self.per_ring)?);
        let mut rings = self.rings.write();
        let k = rings.len();
        let reaper = ring.clone();
        std::thread::Builder::new()
            .name(format!("park-{k}"))
            .stack_size(64 * 1024)
            .spawn(move || reaper.reap(self))?;
        rings.push(ring.clone());
        Ok(ring)
    }

    /// Sockets parked now.
    pub fn parked(&self) -> usize {
        self.parked.load(Ordering::Relaxed)
    }

    /// A free slot, making a ring when all are taken.
    fn take_slot(&'static self) -> io::Result<(Arc<Ring>, u32)> {
        let take = |rings: &[Arc<Ring>]| {
            rings
                .iter()
                .find_map(|r| r.free.lock().pop().map(|s| (r.clone(), s)))
        };
        if let Some(found) = take(&self.rings.read()) {
            return Ok(found);
        }
        let _grow = self.grow.lock();
        if let Some(found) = take(&self.rings.read()) {
            return Ok(found);
        }
        if self.rings.read().len() >= MAX_RINGS {
            return Err(io::Error::other("every parking slot is taken"));
        }
        let ring = self.start()?;
        let slot = ring.free.lock().pop();
        slot.map(|s| (ring, s))
            .ok_or_else(|| io::Error::other("a new parking ring has no slot"))
    }

    /// Parks `socket` until it is readable or hung up. On failure the
    /// socket comes back untouched with the error.
    pub fn park(&'static self, socket: OwnedFd) -> Result<Parked, (OwnedFd, io::Error)> {
        let (ring, slot) = match self.take_slot() {
            Ok(s) => s,
            Err(e) => return Err((socket, e)),
        };
        let give_back = |ring: &Ring| ring.free.lock().push(slot);
        if let Err(e) = ring
            .uring
            .submitter()
            .register_files_update(slot, &[socket.as_raw_fd()])
        {
            give_back(&ring);
            return Err((socket, e));
        }
        let generation = {
            let mut s = ring.slots[slot as usize].lock();
            s.generation = s.generation.wrapping_add(1);
            s.state = State::Waiting(None);
            s.generation
        };
        let events = (libc::POLLIN | libc::POLLRDHUP) as u32;
        let entries = [opcode::PollAdd::new(types::Fixed(slot), events)
            .build()
            .user_data(user_data(generation, slot, POLL))];
        if let Err(e) = ring.submit(&entries) {
            // Nothing was queued: take the socket out of the table again
            // (the descriptor still holds it).
            let _ = ring.uring.submitter().register_files_update(slot, &[-1]);
            ring.slots[slot as usize].lock().state = State::Free;
            give_back(&ring);
            return Err((socket, e));
        }
        self.parked.fetch_add(1, Ordering::Relaxed);
        drop(socket);
        Ok(Parked {
            lot: self,
            ring,
            slot,
            generation,
            done: false,
        })
    }

    /// A finished park's slot is free again, and its install no longer
    /// counts against the budget.
    fn release(&self, ring: &Ring, slot: u32) {
        ring.free.lock().push(slot);
        self.parked.fetch_sub(1, Ordering::Relaxed);
        self.install_done();
    }

    /// Brings the socket in `slot` back as a descriptor: now if the budget
    /// has room, else when it does.
    fn request_install(&self, ring: &Arc<Ring>, slot: u32, generation: u32) {
        {
            let mut i = self.installs.lock();
            if i.running >= INSTALL_BUDGET {
                i.waiting.push_back((ring.clone(), slot, generation));
                return;
            }
            i.running += 1;
        }
        ring.install(self, slot, generation);
    }

    /// An install's descriptor was taken, closed, or never made: the next
    /// waiting install may go.
    fn install_done(&self) {
        let next = {
            let mut i = self.installs.lock();
            i.running = i.running.saturating_sub(1);
            if i.running < INSTALL_BUDGET {
                let next = i.waiting.pop_front();
                if next.is_some() {
                    i.running += 1;
                }
                next
            } else {
                None
            }
        };
        if let Some((ring, slot, generation)) = next {
            ring.install(self, slot, generation);
        }
    }
}

impl Ring {
    fn new(slots: u32) -> io::Result<Ring> {
        let uring = IoUring::builder()
            .setup_cqsize(CQ_ENTRIES)
            .build(SQ_ENTRIES)?;
        uring.submitter().register_files_sparse(slots)?;
        Ok(Ring {
            uring,
            sq: Mutex::new(()),
            slots: (0..slots).map(|_| Mutex::new(Slot::default())).collect(),
            free: Mutex::new((0..slots).rev().collect()),
        })
    }

    /// Queues `entries` together and submits them.
    fn submit(&self, entries: &[squeue::Entry]) -> io::Result<()> {
        let _one_writer = self.sq.lock();
        {
            // SAFETY: the `sq` lock makes this the only submission queue
            // view; the entries reference no memory (fixed slots, no
            // buffers).
            let mut sq = unsafe { self.uring.submission_shared() };
            if sq.capacity() - sq.len() < entries.len() {
                return Err(io::Error::other("parking ring submission queue is full"));
            }
            for e in entries {
                // SAFETY: as above.
                if unsafe { sq.push(e) }.is_err() {
                    return Err(io::Error::other("parking ring submission queue is full"));
                }
            }
        }
        loop {
            match self.uring.submitter().submit() {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Submits the install of `slot` (counted against the budget). If it
    /// cannot be submitted the socket is dropped with the slot and the
    /// session told.
    fn install(&self, lot: &Lot, slot: u32, generation: u32) {
        let entry = opcode::FixedFdInstall::new(types::Fixed(slot), 0)
            .build()
            .user_data(user_data(generation, slot, INSTALL));
        if let Err(e) = self.submit(&[entry]) {
            warn!("could not bring back a parked socket: {e}");
            self.finish(lot, slot, generation, Err(e));
        }
    }

    /// The reaper: waits for completions and finishes parks.
    fn reap(self: &Arc<Self>, lot: &'static Lot) {
        loop {
            match self.uring.submitter().submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    warn!("parking ring wait failed: {e}");
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                }
            }
            // SAFETY: this thread is the ring's only completion reader.
            let done: Vec<(u64, i32)> = unsafe { self.uring.completion_shared() }
                .map(|c| (c.user_data(), c.result()))
                .collect();
            for (ud, res) in done {
                self.complete(lot, ud, res);
            }
        }
    }

    fn complete(self: &Arc<Self>, lot: &'static Lot, ud: u64, res: i32) {
        let kind = ud & 0xf;
        let slot = ((ud >> 4) & 0x0fff_ffff) as u32;
        let generation = (ud >> 32) as u32;
        match kind {
            POLL => {
                if res < 0 && res != -libc::ECANCELED {
                    debug!(
                        "parked socket poll ended: {}",
                        io::Error::from_raw_os_error(-res)
                    );
                }
                lot.request_install(self, slot, generation);
            }
            INSTALL => {
                let got = if res >= 0 {
                    // SAFETY: the install made this descriptor for us.
                    Ok(unsafe { OwnedFd::from_raw_fd(res) })
                } else {
                    Err(io::Error::from_raw_os_error(-res))
                };
                self.finish(lot, slot, generation, got);
            }
            _ => {}
        }
    }

    /// The end of a park: the table lets go of the socket (from here the
    /// new descriptor, if any, is its only holder) and the session gets
    /// the descriptor — or, if it is gone, the descriptor is closed.
    fn finish(&self, lot: &Lot, slot: u32, generation: u32, got: io::Result<OwnedFd>) {
        let _ = self.uring.submitter().register_files_update(slot, &[-1]);
        let Some(cell) = self.slots.get(slot as usize) else {
            lot.install_done();
            return;
        };
        let mut s = cell.lock();
        if s.generation != generation {
            drop(s);
            lot.install_done();
            return;
        }
        match std::mem::take(&mut s.state) {
            State::Waiting(waker) => {
                s.state = State::Ready(got);
                drop(s);
                if let Some(w) = waker {
                    w.wake();
                }
            }
            State::Abandoned => {
                drop(s);
                drop(got);
                lot.release(self, slot);
            }
            other => {
                s.state = other;
                drop(s);
                lot.install_done();
            }
        }
    }
}

/// One parked socket; its session waits on [`Parked::wait`].
pub struct Parked {
    lot: &'static Lot,
    ring: Arc<Ring>,
    slot: u32,
    generation: u32,
    /// The socket was taken back.
    done: bool,
}

impl Parked {
    /// Waits until the socket is readable or hung up (or recalled), and
    /// returns its new descriptor. Cancel-safe: dropping the future
    /// leaves the socket parked.
    pub async fn wait(&mut self) -> io::Result<OwnedFd> {
        std::future::poll_fn(|cx| {
            if self.done {
                return Poll::Ready(Err(io::Error::other("parked socket already taken back")));
            }
            let mut s = self.ring.slots[self.slot as usize].lock();
            match &mut s.state {
                State::Waiting(w) => {
                    match w {
                        Some(w) if w.will_wake(cx.waker()) => {}
                        _ => *w = Some(cx.waker().clone()),
                    }
                    Poll::Pending
                }
                State::Ready(_) => {
                    let State::Ready(got) = std::mem::take(&mut s.state) else {
                        unreachable!("matched Ready above")
                    };
                    drop(s);
                    self.done = true;
                    self.lot.release(&self.ring, self.slot);
                    Poll::Ready(got)
                }
                State::Free | State::Abandoned => {
                    Poll::Ready(Err(io::Error::other("parking slot lost its socket")))
                }
            }
        })
        .await
    }

    /// Takes the socket back now, without waiting for the client.
    pub async fn recall(mut self) -> io::Result<OwnedFd> {
        self.cancel();
        self.wait().await
    }

    fn cancel(&self) {
        let cancel = opcode::AsyncCancel::new(user_data(self.generation, self.slot, POLL))
            .build()
            .user_data(user_data(self.generation, self.slot, CANCEL));
        if let Err(e) = self.ring.submit(&[cancel]) {
            warn!("could not recall a parked socket: {e}");
        }
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut s = self.ring.slots[self.slot as usize].lock();
        match std::mem::take(&mut s.state) {
            State::Ready(got) => {
                drop(s);
                drop(got);
                self.lot.release(&self.ring, self.slot);
            }
            _ => {
                s.state = State::Abandoned;
                drop(s);
                self.cancel();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::time::Duration;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, s)
    }

    fn the_lot() -> &'static Lot {
        lot().expect("io_uring with FIXED_FD_INSTALL (Linux 6.8) is needed to park sockets")
    }

    fn wait_parked(lot: &Lot, n: usize) {
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while lot.parked() > n {
            assert!(
                std::time::Instant::now() < until,
                "parked stays {}",
                lot.parked()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[tokio::test]
    async fn a_parked_socket_comes_back_when_the_client_speaks() {
        let lot = the_lot();
        let (mut client, server) = pair();
        let before = server.as_raw_fd();
        let mut parked = lot.park(server.into()).map_err(|(_, e)| e).unwrap();
        // The descriptor is closed: the number is free for the next open.
        assert_eq!(unsafe { libc::fcntl(before, libc::F_GETFD) }, -1);
        client.write_all(b"hello").unwrap();
        let fd = parked.wait().await.unwrap();
        let mut back = TcpStream::from(fd);
        let mut buf = [0u8; 5];
        back.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"hello");
        back.write_all(b"world").unwrap();
        client.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"world");
    }

    #[tokio::test]
    async fn a_recalled_socket_comes_back_without_input() {
        let lot = the_lot();
        let (mut client, server) = pair();
        let parked = lot.park(server.into()).map_err(|(_, e)| e).unwrap();
        let fd = tokio::time::timeout(Duration::from_secs(10), parked.recall())
            .await
            .expect("recall returns")
            .unwrap();
        let mut back = TcpStream::from(fd);
        back.write_all(b"bye").unwrap();
        let mut buf = [0u8; 3];
        client.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"bye");
    }

    #[tokio::test]
    async fn a_hangup_wakes_the_parked_session() {
        let lot = the_lot();
        let (client, server) = pair();
        let mut parked = lot.park(server.into()).map_err(|(_, e)| e).unwrap();
        drop(client);
        let fd = parked.wait().await.unwrap();
        let mut back = TcpStream::from(fd);
        let mut buf = [0u8; 1];
        assert_eq!(back.read(&mut buf).unwrap(), 0, "end of file");
    }

    /// A lot of its own with small rings (leaked: reapers run for
    /// the process's life).
    fn small_lot(per_ring: u32) -> &'static Lot {
        Box::leak(Box::new(Lot::new(per_ring).unwrap()))
    }

    #[test]
    fn an_abandoned_socket_is_closed() {
        let lot = small_lot(4);
        let (mut client, server) = pair();
        let parked = lot.park(server.into()).map_err(|(_, e)| e).unwrap();
        assert_eq!(lot.parked(), 1);
        drop(parked);
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut buf = [0u8; 1];
        assert_eq!(client.read(&mut buf).unwrap(), 0, "the server side closed");
        wait_parked(lot, 0);
        assert_eq!(
            lot.rings.read()[0].free.lock().len(),
            4,
            "the slot is free again"
        );
    }

    #[tokio::test]
    async fn more_sockets_than_one_ring_holds() {
        // Parking past a ring's table makes another ring.
        let lot = small_lot(4);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let mut clients = Vec::new();
        let mut parks = Vec::new();
        for _ in 0..10 {
            clients.push(TcpStream::connect(addr).unwrap());
            let (s, _) = l.accept().unwrap();
            parks.push(lot.park(s.into()).map_err(|(_, e)| e).unwrap());
        }
        assert_eq!(lot.parked(), 10);
        assert_eq!(lot.rings.read().len(), 3);
        // Each comes back to its own client's byte.
        for (i, c) in clients.iter_mut().enumerate() {
            c.write_all(&[i as u8]).unwrap();
        }
        for (i, p) in parks.iter_mut().enumerate() {
            let mut back = TcpStream::from(p.wait().await.unwrap());
            let mut b = [0u8; 1];
            back.read_exact(&mut b).unwrap();
            assert_eq!(b[0], i as u8);
        }
        assert_eq!(lot.parked(), 0);
    }

    #[tokio::test]
    async fn a_mass_hangup_brings_sockets_back_within_the_budget() {
        let n = INSTALL_BUDGET + 100;
        let lot = small_lot(2 * n as u32);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let mut clients = Vec::new();
        let mut parks = Vec::new();
        for _ in 0..n {
            clients.push(TcpStream::connect(addr).unwrap());
            let (s, _) = l.accept().unwrap();
            parks.push(lot.park(s.into()).map_err(|(_, e)| e).unwrap());
        }
        drop(clients);
        // Nobody takes a descriptor yet: the budget's worth come back,
        // the rest wait for room.
        let until = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let (running, waiting) = {
                let i = lot.installs.lock();
                (i.running, i.waiting.len())
            };
            assert!(running <= INSTALL_BUDGET, "{running} installs at once");
            if running == INSTALL_BUDGET && waiting == n - INSTALL_BUDGET {
                break;
            }
            assert!(
                std::time::Instant::now() < until,
                "{running} running, {waiting} waiting"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // As sessions take theirs, the others come back.
        for p in &mut parks {
            let mut back = TcpStream::from(p.wait().await.unwrap());
            let mut b = [0u8; 1];
            assert_eq!(back.read(&mut b).unwrap(), 0, "the client hung up");
        }
        assert_eq!(lot.parked(), 0);
        let i = lot.installs.lock();
        assert_eq!((i.running, i.waiting.len()), (0, 0));
    }
}
