//! The protocol soak (issue 21 item 7): a live primary and hot standby
//! driven for a while by many connections speaking mutated protocol —
//! valid conversations (startup, simple and extended queries, COPY,
//! transactions) with bytes flipped, inserted, deleted, duplicated,
//! truncated and length fields rewritten — while a client commits rows to a
//! ledger. At the end both nodes must still serve, the standby must have
//! caught up, and the ledger (every acknowledged commit) and the table
//! checksum must be equal on both. A server panic fails it too (the
//! harness checks each log when a node is dropped).
//!
//! The suite runs a short form (`091_protocol_soak`); the `soak` binary
//! runs it for minutes (`cargo run -p tap-tests --bin soak -- --minutes
//! 10`). Everything random comes from `--seed`, printed, so a failing run
//! can be replayed (timing still differs: the interleaving is the
//! kernel's).

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::raw;
use crate::Node;

/// What a soak is asked to do.
#[derive(Clone, Copy, Debug)]
pub struct SoakOptions {
    /// How long the mutated traffic runs.
    pub duration: Duration,
    /// Connections at a time (threads each running one after another).
    pub threads: usize,
    /// Seed of everything random.
    pub seed: u64,
}

/// What a soak did.
#[derive(Debug, Default)]
pub struct SoakReport {
    /// Mutated conversations run, over both nodes.
    pub conversations: u64,
    /// Bytes of mutated traffic sent.
    pub bytes_sent: u64,
    /// Backend messages read back.
    pub messages_read: u64,
    /// ErrorResponses among them.
    pub errors_read: u64,
    /// Statements the server completed for the mutated traffic
    /// (CommandComplete messages).
    pub statements_completed: u64,
    /// Ledger rows committed (all present on both nodes at the end).
    pub ledger_commits: u64,
}

/// xorshift64*: small, seedable, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The statements a conversation draws from (all quick; the startup
/// packet also sets a statement_timeout in case a mutation makes one
/// slow).
const QUERIES: &[&str] = &[
    "SELECT 1",
    "SELECT id, v FROM ledger WHERE id = 3",
    "SELECT count(*) FROM ledger",
    "SELECT repeat('x', 1000), now(), current_user",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "INSERT INTO scratch VALUES (7, 'seven')",
    "UPDATE scratch SET v = v || 'x' WHERE id = 7",
    "DELETE FROM scratch WHERE id > 100",
    "SELECT pg_sleep(0.01)",
    "SHOW transaction_isolation",
    "SELECT '{1,2,3}'::int[], '2024-01-01'::date + 1, 1.5::numeric * 2",
    "SAVEPOINT s; RELEASE s",
    "SELECT a.id FROM ledger a JOIN ledger b ON a.id = b.id WHERE a.id < 5",
];

/// One valid conversation, as the bytes a client would send.
fn conversation(rng: &mut Rng) -> (Vec<u8>, usize) {
    let mut out = raw::startup(
        raw::PROTOCOL_3_0,
        &[
            ("user", "postgres"),
            ("database", "postgres"),
            ("options", "-c statement_timeout=2s"),
        ],
    );
    let startup_len = out.len();
    for _ in 0..1 + rng.below(6) {
        let q = QUERIES[rng.below(QUERIES.len())];
        match rng.below(4) {
            0 | 1 => out.extend(raw::query(q.as_bytes())),
            2 => {
                out.extend(raw::parse("", q, &[]));
                out.extend(raw::bind("", "", &[]));
                out.extend(raw::message(b'D', b"P\0"));
                out.extend(raw::execute(""));
                out.extend(raw::sync());
            }
            _ => {
                out.extend(raw::query(b"COPY scratch FROM STDIN"));
                out.extend(raw::message(b'd', b"8\teight\n9\tnine\n"));
                out.extend(raw::message(b'c', &[]));
            }
        }
    }
    out.extend(raw::terminate());
    (out, startup_len)
}

/// One to three mutations of `bytes`; mostly after the startup packet, so
/// the message decoder and the statements see them.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, startup_len: usize) {
    for _ in 0..1 + rng.below(3) {
        if bytes.is_empty() {
            return;
        }
        let from = if rng.below(5) == 0 {
            0
        } else {
            startup_len.min(bytes.len() - 1)
        };
        let at = from + rng.below(bytes.len() - from);
        match rng.below(7) {
            0 => bytes[at] ^= 1 << rng.below(8),
            1 => bytes[at] = [0u8, 0xff, b'\'', b'$', b'(', b';'][rng.below(6)],
            2 => {
                let n = 1 + rng.below(16);
                let junk = raw::pseudo_random_bytes(rng.next(), n);
                bytes.splice(at..at, junk);
            }
            3 => {
                let end = (at + 1 + rng.below(32)).min(bytes.len());
                bytes.drain(at..end);
            }
            4 => {
                let end = (at + 1 + rng.below(64)).min(bytes.len());
                let chunk = bytes[at..end].to_vec();
                bytes.splice(at..at, chunk);
            }
            5 => bytes.truncate(at),
            _ => {
                // A length field: the four bytes after a tag-looking
                // position, rewritten as something a decoder must bound.
                let v: i32 =
                    [-1, 0, 3, i32::MAX, 1 << 30, (rng.next() as i32) & 0xffff][rng.below(6)];
                let end = (at + 4).min(bytes.len());
                let be = v.to_be_bytes();
                bytes[at..end].copy_from_slice(&be[..end - at]);
            }
        }
    }
}

/// Sends `bytes` in random pieces, half-closes, and reads whatever comes
/// back until the server closes. Err if the server neither closes nor
/// answers for `limit`: a hang on bad input.
fn converse(
    port: u16,
    bytes: &[u8],
    rng: &mut Rng,
    limit: Duration,
    report: &Counters,
) -> Result<(), String> {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        // Refused: max_connections reached by the other threads, or the
        // node is gone (the final checks tell).
        return Ok(());
    };
    let _ = s.set_nodelay(true);
    let _ = s.set_read_timeout(Some(limit));
    let mut sent = 0;
    while sent < bytes.len() {
        let n = (1 + rng.below(512)).min(bytes.len() - sent);
        if s.write_all(&bytes[sent..sent + n]).is_err() {
            break;
        }
        sent += n;
    }
    report.bytes.fetch_add(sent as u64, Ordering::Relaxed);
    let _ = s.shutdown(Shutdown::Write);
    // Count messages by their framing; a server that closes mid-message
    // is fine.
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(format!(
                    "the server neither answered nor closed within {limit:?} after {sent} bytes"
                ));
            }
            Err(_) => break,
        }
    }
    let mut at = 0;
    while at + 5 <= buf.len() {
        let tag = buf[at];
        let len = i32::from_be_bytes([buf[at + 1], buf[at + 2], buf[at + 3], buf[at + 4]]);
        if len < 4 {
            break;
        }
        report.messages.fetch_add(1, Ordering::Relaxed);
        match tag {
            b'E' => report.errors.fetch_add(1, Ordering::Relaxed),
            b'C' => report.completed.fetch_add(1, Ordering::Relaxed),
            _ => 0,
        };
        at += 1 + len as usize;
    }
    Ok(())
}

#[derive(Default)]
struct Counters {
    conversations: AtomicU64,
    bytes: AtomicU64,
    messages: AtomicU64,
    errors: AtomicU64,
    completed: AtomicU64,
}

const CHECKSUM: &str =
    "SELECT count(*), md5(string_agg(id::text || ':' || v, ',' ORDER BY id)) FROM ledger";

/// Runs the soak against a fresh pair; panics (with the seed) if a node
/// stops serving, hangs on a connection, or the nodes differ at the end.
pub fn run(opts: SoakOptions) -> SoakReport {
    eprintln!(
        "# soak: {} threads for {:?}, seed {}",
        opts.threads, opts.duration, opts.seed
    );
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("max_connections = 200");
    primary.start();
    primary.safe_sql("CREATE TABLE ledger (id bigint PRIMARY KEY, v text)");
    primary.safe_sql("CREATE TABLE scratch (id int, v text)");
    let standby = Node::standby_of(&primary, "standby");
    let ports = [primary.port(), standby.port()];

    let counters = Counters::default();
    let stop = AtomicBool::new(false);
    let mut acked: Vec<i64> = Vec::new();
    let deadline = Instant::now() + opts.duration;
    let hang_limit = Duration::from_secs(60);
    let failure: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    std::thread::scope(|scope| {
        for t in 0..opts.threads {
            let (counters, stop, failure) = (&counters, &stop, &failure);
            let seed = opts.seed ^ ((t as u64 + 1) << 32);
            scope.spawn(move || {
                let mut rng = Rng::new(seed);
                while !stop.load(Ordering::Relaxed) {
                    let (mut bytes, startup_len) = conversation(&mut rng);
                    mutate(&mut rng, &mut bytes, startup_len);
                    let port = ports[rng.below(2)];
                    counters.conversations.fetch_add(1, Ordering::Relaxed);
                    if let Err(e) = converse(port, &bytes, &mut rng, hang_limit, counters) {
                        *failure.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some(format!("port {port}: {e}; input {bytes:?}"));
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            });
        }
        // The ledger: acknowledged commits, on this thread, until the
        // deadline; the servers must keep answering throughout.
        let mut id = 0i64;
        while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
            id += 1;
            primary.safe_sql(&format!("INSERT INTO ledger VALUES ({id}, md5('{id}'))"));
            acked.push(id);
            if id % 50 == 0 {
                assert_eq!(standby.safe_sql("SELECT 1"), "1", "the standby serves");
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    if let Some(f) = failure.lock().unwrap_or_else(|e| e.into_inner()).take() {
        panic!("soak seed {}: {f}", opts.seed);
    }

    // Both serve, the standby caught up, the ledger whole and equal.
    assert_eq!(primary.safe_sql("SELECT 1"), "1");
    assert_eq!(standby.safe_sql("SELECT 1"), "1");
    primary.wait_for_replay(&standby);
    let want_sum: i64 = acked.iter().sum();
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql("SELECT count(*), coalesce(sum(id), 0) FROM ledger"),
            format!("{}|{want_sum}", acked.len()),
            "soak seed {}: every acknowledged commit on {}",
            opts.seed,
            node.name()
        );
    }
    assert_eq!(
        standby.safe_sql(CHECKSUM),
        primary.safe_sql(CHECKSUM),
        "soak seed {}: the ledger's checksum",
        opts.seed
    );
    assert_eq!(
        standby.safe_sql("SELECT count(*) FROM scratch"),
        primary.safe_sql("SELECT count(*) FROM scratch"),
        "soak seed {}: the scratch table the mutated traffic wrote",
        opts.seed
    );
    standby.stop("fast");
    primary.stop("fast");
    SoakReport {
        conversations: counters.conversations.load(Ordering::Relaxed),
        bytes_sent: counters.bytes.load(Ordering::Relaxed),
        messages_read: counters.messages.load(Ordering::Relaxed),
        errors_read: counters.errors.load(Ordering::Relaxed),
        statements_completed: counters.completed.load(Ordering::Relaxed),
        ledger_commits: acked.len() as u64,
    }
}
