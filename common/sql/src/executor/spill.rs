//! Temporary files for work that outgrows `work_mem` (PostgreSQL's
//! buffile.c and fd.c temporary files as tuplesort, the hash join and hash
//! aggregation use them).
//!
//! A node that holds rows (Sort, the hashed side of a hash join, hash
//! aggregation) counts what it holds with [`row_bytes`] and, past
//! [`Spill::work_mem`], writes rows to a [`TempFile`] instead: sorted runs
//! merged later, hash join batches, aggregation partitions.
//!
//! ## Files
//!
//! `base/pgsql_tmp/pgsql_tmpPID.N` under the data directory, PostgreSQL's
//! names. A file exists from its first flush to its [`Drop`], which
//! removes it: a node dropped at the end of its query, on an error or a
//! cancel takes its files with it. A crash leaves them; the node's start-up
//! removes the directory (`engine::Engine::open`, PostgreSQL's
//! RemovePgTempFiles). While a file is being written no descriptor is held:
//! each flush of its buffer opens, appends and closes, so a hash join with
//! a thousand batches does not run out of descriptors. A file being read
//! holds one.
//!
//! ## Limits and logging
//!
//! `temp_file_limit` (kB, -1 none) bounds the bytes of temporary files a
//! session holds at once: the flush that would pass it fails with 53400
//! `temporary file size exceeds temp_file_limit (NkB)`. `log_temp_files`
//! (kB, -1 off) logs each removed file at least that big, as PostgreSQL:
//! `temporary file: path "base/pgsql_tmp/pgsql_tmp123.0", size 81920`.
//!
//! ## Row format
//!
//! Self-describing, since plan nodes carry no column types: per row a u32
//! length, the value count (u16), a type tag per value, then the values in
//! the heap's row encoding (`storage::rowcodec`, which the types decode).
//! Only this process reads the files back.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::Ectx;
use pgtypes::config::parse_kilobytes;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::hash::hash_key;
use pgtypes::sqltype::{ArrayElem, SqlType};
use pgtypes::value::Value;
use storage::rowcodec::{decode_row_into, encode_row, NoToast};

use engine::TEMP_DIR;

/// Numbers the files of this process (PostgreSQL numbers per backend).
static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

/// Temporary files held open for writing, process-wide: under
/// [`max_open_writers`] a file being written keeps its descriptor between
/// flushes; past it each flush opens, appends and closes.
static OPEN_WRITERS: AtomicU64 = AtomicU64::new(0);

/// A quarter of the process's descriptor limit (the rest is for client
/// connections and data files), at most 1,024 — PostgreSQL's
/// max_files_per_process is 1,000.
fn max_open_writers() -> u64 {
    static MAX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        let soft = std::fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|l| {
                l.lines()
                    .find(|l| l.starts_with("Max open files"))
                    .and_then(|l| {
                        l.split_whitespace()
                            .nth(3)
                            .and_then(|v| v.parse::<u64>().ok())
                    })
            })
            .unwrap_or(1024);
        (soft / 4).clamp(16, 1024)
    })
}

/// Bytes of temporary files a session holds now (`temp_file_limit`).
#[derive(Debug, Default)]
pub struct TempUsage(AtomicU64);

/// What a node that may spill needs: its memory budget and where and how
/// to write temporary files. Read from the session's settings when the
/// node starts.
#[derive(Clone)]
pub struct Spill {
    /// `work_mem` in bytes.
    pub work_mem: usize,
    /// What a hash table may hold: `work_mem` × `hash_mem_multiplier`
    /// (PostgreSQL 13's hash_mem; 2 by default since 15), in bytes.
    pub hash_mem: usize,
    shared: Arc<SpillShared>,
}

struct SpillShared {
    dir: PathBuf,
    pid: i32,
    limit_kb: Option<u64>,
    log_min: Option<u64>,
    usage: Arc<TempUsage>,
}

fn setting_kb(ec: &Ectx<'_>, name: &str) -> Option<i64> {
    ec.settings
        .get_setting(name)
        .and_then(|v| parse_kilobytes(&v))
}

impl Spill {
    /// The statement's settings: `work_mem` (64kB at least, as
    /// PostgreSQL's minimum), `temp_file_limit`, `log_temp_files`.
    pub fn new(ec: &Ectx<'_>) -> Spill {
        let work_mem = setting_kb(ec, "work_mem").unwrap_or(4096).max(64) as usize * 1024;
        let multiplier = ec
            .settings
            .get_setting("hash_mem_multiplier")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|m| m.is_finite() && *m >= 1.0)
            .unwrap_or(2.0);
        let hash_mem = (work_mem as f64 * multiplier).min((usize::MAX / 4) as f64) as usize;
        let limit_kb = setting_kb(ec, "temp_file_limit")
            .filter(|&k| k >= 0)
            .map(|k| k as u64);
        let log_min = setting_kb(ec, "log_temp_files")
            .filter(|&k| k >= 0)
            .map(|k| k as u64 * 1024);
        Spill {
            work_mem,
            hash_mem,
            shared: Arc::new(SpillShared {
                dir: ec.db.config().data_dir.join(TEMP_DIR),
                pid: ec.backend_pid,
                limit_kb,
                log_min,
                usage: ec.temp_usage.clone().unwrap_or_default(),
            }),
        }
    }

    /// A new, empty temporary file (created on its first flush).
    pub fn file(&self) -> TempFile {
        self.file_buffered(FLUSH_AT)
    }

    /// As [`Spill::file`], writing through a buffer of `flush_at` bytes
    /// (a hash join's many batch files take small ones).
    pub fn file_buffered(&self, flush_at: usize) -> TempFile {
        let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
        let name = format!("pgsql_tmp{}.{n}", self.shared.pid);
        TempFile {
            path: self.shared.dir.join(&name),
            name,
            shared: self.shared.clone(),
            buf: Vec::new(),
            flush_at: flush_at.max(256),
            size: 0,
            created: false,
            writer: None,
            reader: None,
            at_end: false,
        }
    }
}

/// One temporary file of rows: written, then read back from the start
/// ([`TempFile::rewind`]); removed when dropped.
pub struct TempFile {
    path: PathBuf,
    name: String,
    shared: Arc<SpillShared>,
    buf: Vec<u8>,
    flush_at: usize,
    size: u64,
    created: bool,
    /// The descriptor kept between flushes (see [`OPEN_WRITERS`]).
    writer: Option<File>,
    reader: Option<TempReader>,
    /// Read to its end (or never written).
    at_end: bool,
}

/// How much a write buffer holds before it goes to the file.
const FLUSH_AT: usize = 8192;

fn io_error(what: &str, path: &std::path::Path, e: std::io::Error) -> PgError {
    let full = storage::is_disk_full(&e);
    let err = pgtypes::fileutil::io_error(what, path, e);
    if full {
        PgError::new(sqlstate::DISK_FULL, err.into_fields().message)
            .with_hint("Check free disk space.")
    } else {
        err
    }
}

impl TempFile {
    /// Appends a row.
    pub fn write_row(&mut self, row: &[Value]) -> PgResult<()> {
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        encode_spilled(row, &mut self.buf);
        let len = (self.buf.len() - start - 4) as u32;
        self.buf[start..start + 4].copy_from_slice(&len.to_le_bytes());
        if self.buf.len() >= self.flush_at {
            self.flush()?;
        }
        Ok(())
    }

    /// True if no row was written.
    pub fn is_empty(&self) -> bool {
        self.size == 0 && self.buf.is_empty()
    }

    /// Where the next row written starts, in bytes from the file's start.
    fn position(&self) -> u64 {
        self.size + self.buf.len() as u64
    }

    fn flush(&mut self) -> PgResult<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let n = self.buf.len() as u64;
        let sh = &self.shared;
        let used = sh.usage.0.fetch_add(n, Ordering::Relaxed) + n;
        self.size += n; // counted (and given back on drop) even if the write fails
        if let Some(kb) = sh.limit_kb {
            if used > kb * 1024 {
                return Err(PgError::new(
                    sqlstate::CONFIGURATION_LIMIT_EXCEEDED,
                    format!("temporary file size exceeds temp_file_limit ({kb}kB)"),
                ));
            }
        }
        if !self.created {
            std::fs::create_dir_all(&sh.dir)
                .map_err(|e| io_error("create directory", &sh.dir, e))?;
        }
        let path = &self.path;
        match &mut self.writer {
            Some(f) => f
                .write_all(&self.buf)
                .map_err(|e| io_error("write to file", path, e))?,
            None => {
                let mut f = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| io_error("create temporary file", path, e))?;
                self.created = true;
                f.write_all(&self.buf)
                    .map_err(|e| io_error("write to file", path, e))?;
                if OPEN_WRITERS.fetch_add(1, Ordering::Relaxed) < max_open_writers() {
                    self.writer = Some(f);
                } else {
                    OPEN_WRITERS.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
        self.buf.clear();
        Ok(())
    }

    fn close_writer(&mut self) {
        if self.writer.take().is_some() {
            OPEN_WRITERS.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Ends writing; reading starts at the first row. The write buffer is
    /// freed and the file is opened at the first read, so a sort's many
    /// runs waiting to be merged hold no memory.
    pub fn rewind(&mut self) -> PgResult<()> {
        self.flush()?;
        self.close_writer();
        self.buf = Vec::new();
        self.reader = None;
        self.at_end = !self.created;
        Ok(())
    }

    /// The next row into `out`; false at the end.
    pub fn read_row(&mut self, out: &mut Vec<Value>) -> PgResult<bool> {
        if self.at_end {
            return Ok(false);
        }
        let r = match &mut self.reader {
            Some(r) => r,
            None => self.reader.insert(self.open_reader()?),
        };
        if r.read_row(out)? {
            return Ok(true);
        }
        self.at_end = true;
        self.reader = None;
        Ok(false)
    }

    /// A reader of its own from the first row (a written file read by
    /// several cursors at once; `TupleStore`).
    fn open_reader(&self) -> PgResult<TempReader> {
        let f =
            File::open(&self.path).map_err(|e| io_error("open temporary file", &self.path, e))?;
        Ok(TempReader {
            file: BufReader::with_capacity(FLUSH_AT, f),
            path: self.path.clone(),
            data: Vec::new(),
        })
    }
}

/// Reads the rows of a [`TempFile`] from the first.
struct TempReader {
    file: BufReader<File>,
    path: PathBuf,
    data: Vec<u8>,
}

impl TempReader {
    /// Reads on from byte `at` (a row's start).
    fn seek(&mut self, at: u64) -> PgResult<()> {
        use std::io::{Seek, SeekFrom};
        self.file
            .seek(SeekFrom::Start(at))
            .map(drop)
            .map_err(|e| io_error("seek in file", &self.path, e))
    }

    fn read_row(&mut self, out: &mut Vec<Value>) -> PgResult<bool> {
        let mut len = [0u8; 4];
        match self.file.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
            Err(e) => return Err(io_error("read from file", &self.path, e)),
        }
        self.data.resize(u32::from_le_bytes(len) as usize, 0);
        self.file
            .read_exact(&mut self.data)
            .map_err(|e| io_error("read from file", &self.path, e))?;
        decode_spilled(&self.data, out)?;
        Ok(true)
    }
}

/// How many files one pass of a hash aggregation, DISTINCT or SetOp
/// spreads the rows it could not hold over.
pub const PARTITIONS: usize = 16;

/// The partition files of one pass at depth `level`: a row goes to the
/// file its key's hash (seeded by the next depth) picks, with an optional
/// tag (a grouping set, a SetOp side) as an extra last value.
pub struct Partitions {
    files: Vec<Option<TempFile>>,
    level: u64,
    row: Vec<Value>,
}

impl Partitions {
    /// None yet, for a pass at depth `level`.
    pub fn new(level: u64) -> Partitions {
        Partitions {
            files: (0..PARTITIONS).map(|_| None).collect(),
            level,
            row: Vec::new(),
        }
    }

    /// Writes `row` (and `tag`) to the partition of `key`.
    pub fn write(
        &mut self,
        spill: &Spill,
        key: &[u8],
        row: &[Value],
        tag: Option<i32>,
    ) -> PgResult<()> {
        let p = (hash_key(key, self.level + 1) % PARTITIONS as u64) as usize;
        let f = self.files[p].get_or_insert_with(|| spill.file());
        match tag {
            None => f.write_row(row),
            Some(t) => {
                self.row.clear();
                self.row.extend_from_slice(row);
                self.row.push(Value::Int4(t));
                f.write_row(&self.row)
            }
        }
    }

    /// True if a row was written.
    pub fn any(&self) -> bool {
        self.files.iter().any(Option::is_some)
    }

    /// Ends the pass: each written partition, ready to read, goes on
    /// `pending` with its depth.
    pub fn finish(self, pending: &mut Vec<(TempFile, u64)>) -> PgResult<()> {
        for mut f in self.files.into_iter().flatten() {
            f.rewind()?;
            pending.push((f, self.level + 1));
        }
        Ok(())
    }

    /// Ends the pass keeping each partition in its place, ready to read
    /// (None: nothing written to it): partitions of passes at the same
    /// depth hold the same keys place by place.
    pub fn into_files(self) -> PgResult<Vec<Option<TempFile>>> {
        let mut files = self.files;
        for f in files.iter_mut().flatten() {
            f.rewind()?;
        }
        Ok(files)
    }
}

/// A row read back from a partition written with a tag: the row and the tag.
pub fn split_tag(row: &[Value]) -> PgResult<(&[Value], i32)> {
    match row.split_last() {
        Some((Value::Int4(t), rest)) => Ok((rest, *t)),
        _ => Err(PgError::internal("spilled row without its tag")),
    }
}

/// Rows kept to be read again, by one or several cursors: in memory up to
/// `work_mem`, then all of them in a temporary file (PostgreSQL's
/// tuplestore, under a Material node, a CTE, a work table, a window's
/// partition). Cursors ([`StoreCursor`]) read it in order; a
/// [`StoreReader`] reads any row by its index.
#[derive(Default)]
pub struct TupleStore {
    spill: Option<Spill>,
    rows: Vec<Vec<Value>>,
    mem: usize,
    file: Option<TempFile>,
    /// Once spilled: the index and file offset of the first row of each
    /// block of about [`BLOCK_BYTES`] (a [`StoreReader`] seeks to them).
    blocks: Vec<(usize, u64)>,
    len: usize,
}

/// The bytes of file a [`StoreReader`] reads and decodes at once.
const BLOCK_BYTES: u64 = 8192;

/// Blocks a [`StoreReader`] keeps decoded: enough for each window function
/// of a node to read near its frame's start, its end and the current row.
const CACHED_BLOCKS: usize = 8;

impl TupleStore {
    /// An empty store that spills past the statement's `work_mem`.
    pub fn new(ec: &Ectx<'_>) -> TupleStore {
        TupleStore {
            spill: Some(Spill::new(ec)),
            ..TupleStore::default()
        }
    }

    /// Every row of `node`, stored.
    pub fn collect(
        node: &mut super::execnodes::Node<'_>,
        ec: &mut Ectx<'_>,
    ) -> PgResult<TupleStore> {
        let mut store = TupleStore::new(ec);
        while node.next(ec)? {
            ec.tick()?;
            store.push(node.row())?;
        }
        store.finish()?;
        Ok(store)
    }

    /// Adds a row (before [`TupleStore::finish`]).
    pub fn push(&mut self, row: &[Value]) -> PgResult<()> {
        self.len += 1;
        if let Some(f) = &mut self.file {
            return write_marked(f, &mut self.blocks, self.len - 1, row);
        }
        self.mem += row_bytes(row);
        self.rows.push(row.to_vec());
        if let Some(spill) = self.spill.as_ref().filter(|s| self.mem > s.work_mem) {
            let mut f = spill.file();
            for (i, r) in self.rows.drain(..).enumerate() {
                write_marked(&mut f, &mut self.blocks, i, &r)?;
            }
            self.rows = Vec::new();
            self.mem = 0;
            self.file = Some(f);
        }
        Ok(())
    }

    /// Ends writing: cursors may read.
    pub fn finish(&mut self) -> PgResult<()> {
        match &mut self.file {
            Some(f) => f.rewind(),
            None => Ok(()),
        }
    }

    /// How many rows it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Empties it for writing again (its temporary file, if any, goes),
    /// keeping its settings.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.mem = 0;
        self.file = None;
        self.blocks.clear();
        self.len = 0;
    }

    /// True once its rows went to a temporary file.
    pub fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// True when it holds no row.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A cursor before the first row.
    pub fn cursor(&self) -> StoreCursor {
        StoreCursor {
            next: 0,
            reader: None,
            row: Vec::new(),
        }
    }
}

/// A position in a [`TupleStore`].
pub struct StoreCursor {
    /// Index of the row the next call returns.
    next: usize,
    reader: Option<TempReader>,
    row: Vec<Value>,
}

impl StoreCursor {
    /// Advances to the next row of `store`; false at the end.
    pub fn advance(&mut self, store: &TupleStore) -> PgResult<bool> {
        if self.next >= store.len {
            return Ok(false);
        }
        if let Some(f) = &store.file {
            let r = match &mut self.reader {
                Some(r) => r,
                None => self.reader.insert(f.open_reader()?),
            };
            if !r.read_row(&mut self.row)? {
                return Err(PgError::new(
                    sqlstate::DATA_CORRUPTED,
                    "temporary file ended early",
                ));
            }
        }
        self.next += 1;
        Ok(true)
    }

    /// The current row's index (after [`StoreCursor::advance`] said true).
    pub fn index(&self) -> usize {
        self.next.saturating_sub(1)
    }

    /// The current row.
    pub fn row<'a>(&'a self, store: &'a TupleStore) -> &'a [Value] {
        if store.file.is_some() {
            &self.row
        } else {
            store.rows.get(self.index()).map_or(&[], |r| r)
        }
    }
}

/// Writes row `index` to `f`, starting a new block in `blocks` when the
/// last one has its [`BLOCK_BYTES`].
fn write_marked(
    f: &mut TempFile,
    blocks: &mut Vec<(usize, u64)>,
    index: usize,
    row: &[Value],
) -> PgResult<()> {
    let at = f.position();
    if blocks
        .last()
        .is_none_or(|&(_, start)| at - start >= BLOCK_BYTES)
    {
        blocks.push((index, at));
    }
    f.write_row(row)
}

/// Reads the rows of a [`TupleStore`] by index, in any order (a window's
/// frames and offsets). In memory that is an index; once spilled it
/// decodes the block of file holding the row and keeps the last
/// [`CACHED_BLOCKS`] decoded, so reads near each other (a frame sliding
/// forward, a row and its neighbours) cost one read of the file per block.
#[derive(Default)]
pub struct StoreReader {
    reader: Option<TempReader>,
    /// Decoded blocks, the one read last first: the index of the block's
    /// first row and its rows.
    cached: Vec<(usize, Vec<Vec<Value>>)>,
}

impl StoreReader {
    /// Forgets what it read (the store was cleared and written again).
    pub fn reset(&mut self) {
        self.reader = None;
        self.cached.clear();
    }

    /// Row `i` of `store` (which must be finished); an error past its end.
    pub fn get<'a>(&'a mut self, store: &'a TupleStore, i: usize) -> PgResult<&'a [Value]> {
        if i >= store.len {
            return Err(PgError::internal("tuplestore row out of range"));
        }
        let Some(file) = &store.file else {
            return Ok(&store.rows[i]);
        };
        let hit = self
            .cached
            .iter()
            .position(|(first, rows)| (*first..*first + rows.len()).contains(&i));
        let slot = match hit {
            Some(k) => k,
            None => {
                let b = store.blocks.partition_point(|&(first, _)| first <= i) - 1;
                let (first, at) = store.blocks[b];
                let end = store.blocks.get(b + 1).map_or(store.len, |&(n, _)| n);
                let r = match &mut self.reader {
                    Some(r) => r,
                    None => self.reader.insert(file.open_reader()?),
                };
                r.seek(at)?;
                let mut rows = match self.cached.len() {
                    n if n >= CACHED_BLOCKS => {
                        self.cached.pop().map(|(_, v)| v).unwrap_or_default()
                    }
                    _ => Vec::new(),
                };
                rows.resize_with(end - first, Vec::new);
                for row in rows.iter_mut() {
                    if !r.read_row(row)? {
                        return Err(PgError::new(
                            sqlstate::DATA_CORRUPTED,
                            "temporary file ended early",
                        ));
                    }
                }
                self.cached.push((first, rows));
                self.cached.len() - 1
            }
        };
        if slot != 0 {
            self.cached[..=slot].rotate_right(1);
        }
        let (first, rows) = &self.cached[0];
        Ok(&rows[i - first])
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.close_writer();
        let sh = &self.shared;
        sh.usage.0.fetch_sub(self.size, Ordering::Relaxed);
        if !self.created {
            return;
        }
        self.reader = None;
        let _ = std::fs::remove_file(&self.path);
        if sh.log_min.is_some_and(|m| self.size >= m) {
            tracing::info!(
                "temporary file: path \"{TEMP_DIR}/{}\", size {}",
                self.name,
                self.size
            );
        }
    }
}

// Type tags: an OID of a built-in type, or an enum (by type OID) or an
// array of one.
const TAG_OID: u8 = 0;
const TAG_ENUM: u8 = 1;
const TAG_ENUM_ARRAY: u8 = 2;

fn encode_spilled(row: &[Value], out: &mut Vec<u8>) {
    out.extend_from_slice(&(row.len() as u16).to_le_bytes());
    for v in row {
        let (tag, oid) = match v.sql_type() {
            SqlType::Enum(t) => (TAG_ENUM, t),
            SqlType::Array(ArrayElem::Enum(t)) => (TAG_ENUM_ARRAY, t),
            t => (TAG_OID, t.oid()),
        };
        out.push(tag);
        out.extend_from_slice(&oid.to_le_bytes());
    }
    encode_row(row, out);
}

fn corrupt() -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, "invalid temporary file data")
}

fn decode_spilled(data: &[u8], out: &mut Vec<Value>) -> PgResult<()> {
    let n = u16::from_le_bytes(
        data.get(..2)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(corrupt)?,
    ) as usize;
    let tags = data.get(2..2 + 5 * n).ok_or_else(corrupt)?;
    let mut types = Vec::with_capacity(n);
    for t in tags.chunks_exact(5) {
        let oid = u32::from_le_bytes([t[1], t[2], t[3], t[4]]);
        types.push(match t[0] {
            TAG_ENUM => SqlType::Enum(oid),
            TAG_ENUM_ARRAY => SqlType::Array(ArrayElem::Enum(oid)),
            _ => SqlType::from_oid(oid).ok_or_else(corrupt)?,
        });
    }
    decode_row_into(&data[2 + 5 * n..], &types, out, &NoToast)
}

/// About how many bytes a row held in memory takes: the row's vector, its
/// values and what they point to.
pub fn row_bytes(row: &[Value]) -> usize {
    std::mem::size_of::<Vec<Value>>() + row.iter().map(value_bytes).sum::<usize>()
}

fn value_bytes(v: &Value) -> usize {
    const ARC: usize = 16;
    std::mem::size_of::<Value>()
        + match v {
            Value::Text(s) | Value::Json(s) => ARC + s.len(),
            Value::Bytea(b) => ARC + b.len(),
            Value::Array(a) => ARC + 48 + a.items.iter().map(value_bytes).sum::<usize>(),
            Value::Jsonb(_) => ARC + 128,
            Value::Snapshot(s) => ARC + 32 + 4 * s.xip.len(),
            _ => 0,
        }
}

/// Encoded key bytes as the executor's hash tables hold them. Equality
/// compares a short key (most are one integer or date: 5–9 bytes) with a
/// few word loads instead of a call to memcmp, which was a sixth of TPC-H
/// Q13's time (a hash join's probe and an aggregation's group lookup),
/// most of it the cache miss of following each key's pointer.
/// Keys of up to [`INLINE_KEY`] bytes are held inline: a probe compares
/// bytes in the table's own memory, not behind a pointer.
#[derive(Clone, Debug)]
enum Key {
    Inline { len: u8, b: [u8; INLINE_KEY] },
    Heap(Box<[u8]>),
}

/// The longest key held inline (the enum stays 24 bytes).
const INLINE_KEY: usize = 22;

impl Key {
    fn new(k: Vec<u8>) -> Key {
        if k.len() <= INLINE_KEY {
            Key::from_slice(&k)
        } else {
            Key::Heap(k.into_boxed_slice())
        }
    }

    fn from_slice(k: &[u8]) -> Key {
        if k.len() <= INLINE_KEY {
            let mut b = [0u8; INLINE_KEY];
            b[..k.len()].copy_from_slice(k);
            Key::Inline {
                len: k.len() as u8,
                b,
            }
        } else {
            Key::Heap(k.into())
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Key::Inline { len, b } => &b[..*len as usize],
            Key::Heap(h) => h,
        }
    }
}

/// A borrowed [`Key`]: what lookups take.
#[repr(transparent)]
struct KeyRef([u8]);

impl KeyRef {
    fn new(b: &[u8]) -> &KeyRef {
        // SAFETY: KeyRef is a repr(transparent) wrapper of [u8], so the
        // pointer cast keeps the slice's layout and metadata (the pattern
        // of std's Path over OsStr).
        unsafe { &*(b as *const [u8] as *const KeyRef) }
    }
}

impl std::borrow::Borrow<KeyRef> for Key {
    fn borrow(&self) -> &KeyRef {
        KeyRef::new(self.bytes())
    }
}

impl std::hash::Hash for KeyRef {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write(&self.0);
    }
}

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write(self.bytes());
    }
}

impl PartialEq for KeyRef {
    fn eq(&self, other: &KeyRef) -> bool {
        key_eq(&self.0, &other.0)
    }
}
impl Eq for KeyRef {}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        key_eq(self.bytes(), other.bytes())
    }
}
impl Eq for Key {}

/// `a == b`, two overlapping word loads for keys of 4 to 16 bytes.
#[inline]
fn key_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    #[inline]
    fn w8(s: &[u8], i: usize) -> u64 {
        let mut x = [0u8; 8];
        x.copy_from_slice(&s[i..i + 8]);
        u64::from_ne_bytes(x)
    }
    #[inline]
    fn w4(s: &[u8], i: usize) -> u32 {
        let mut x = [0u8; 4];
        x.copy_from_slice(&s[i..i + 4]);
        u32::from_ne_bytes(x)
    }
    match n {
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
}

use pgtypes::hash::KeyBuild;

/// A hash map keyed by encoded key bytes ([`pgtypes::hash::KeyHasher`], [`key_eq`]).
#[derive(Clone, Debug)]
pub struct KeyMap<V>(std::collections::HashMap<Key, V, KeyBuild>);

impl<V> Default for KeyMap<V> {
    fn default() -> Self {
        KeyMap(std::collections::HashMap::default())
    }
}

impl<V> KeyMap<V> {
    /// The value under `k`.
    #[inline]
    pub fn get(&self, k: &[u8]) -> Option<&V> {
        self.0.get(KeyRef::new(k))
    }
    /// The value under `k`, to change.
    #[inline]
    pub fn get_mut(&mut self, k: &[u8]) -> Option<&mut V> {
        self.0.get_mut(KeyRef::new(k))
    }
    /// Sets `k`'s value; the one it had.
    pub fn insert(&mut self, k: Vec<u8>, v: V) -> Option<V> {
        self.0.insert(Key::new(k), v)
    }
    /// [`KeyMap::insert`] of borrowed bytes (a short key is never
    /// allocated).
    pub fn insert_slice(&mut self, k: &[u8], v: V) -> Option<V> {
        self.0.insert(Key::from_slice(k), v)
    }
    /// Empties it.
    pub fn clear(&mut self) {
        self.0.clear()
    }
    /// Every (key bytes, value).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> {
        self.0.iter().map(|(k, v)| (k.bytes(), v))
    }
    /// Every (key bytes, value), emptying it.
    pub fn into_entries(self) -> impl Iterator<Item = (Vec<u8>, V)> {
        self.0.into_iter().map(|(k, v)| (k.bytes().to_vec(), v))
    }
}

/// A hash set of encoded key bytes ([`pgtypes::hash::KeyHasher`], [`key_eq`]).
#[derive(Clone, Debug, Default)]
pub struct KeySet(std::collections::HashSet<Key, KeyBuild>);

impl KeySet {
    /// `k` is in the set.
    #[inline]
    pub fn contains(&self, k: &[u8]) -> bool {
        self.0.contains(KeyRef::new(k))
    }
    /// Adds `k`; false if it was there.
    pub fn insert(&mut self, k: Vec<u8>) -> bool {
        self.0.insert(Key::new(k))
    }
    /// Empties it.
    pub fn clear(&mut self) {
        self.0.clear()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_equality_at_every_short_length() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).collect();
            assert!(key_eq(&a, &a.clone()));
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x80;
                assert!(!key_eq(&a, &b), "length {n}, byte {i}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!key_eq(&a, &longer));
        }
        let mut m = KeyMap::default();
        m.insert(vec![1, 2, 3, 4, 5], 7);
        assert_eq!(m.get(&[1, 2, 3, 4, 5]), Some(&7));
        assert_eq!(m.get(&[1, 2, 3, 4, 6]), None);
        // Held inline and on the heap, read back whole.
        for n in [0usize, 5, 22, 23, 64] {
            let k: Vec<u8> = (0..n).map(|i| i as u8 ^ 0x5a).collect();
            m.insert(k.clone(), n as i32);
            assert_eq!(m.get(&k), Some(&(n as i32)), "length {n}");
            assert!(m.iter().any(|(b, v)| b == k.as_slice() && *v == n as i32));
        }
        let mut s = KeySet::default();
        assert!(s.insert(vec![9; 12]));
        assert!(!s.insert(vec![9; 12]));
        assert!(s.contains(&[9; 12]));
    }

    #[test]
    fn rows_round_trip_through_the_encoding() {
        let rows = vec![
            vec![
                Value::Int4(7),
                Value::Null,
                Value::Text("héllo".into()),
                Value::Int8(-1),
                Value::Float8(1.5),
                Value::Bool(true),
            ],
            vec![
                Value::Numeric(pgtypes::numeric::Numeric::new(12345, 2).unwrap()),
                Value::Date(100),
                Value::Interval(pgtypes::interval::Interval {
                    months: 1,
                    days: 2,
                    micros: 3,
                }),
                Value::Bytea(Arc::from(&b"\x00\x01"[..])),
                Value::Uuid([9; 16]),
                Value::Oid(42),
            ],
            vec![],
        ];
        for row in rows {
            let mut b = Vec::new();
            encode_spilled(&row, &mut b);
            let mut out = Vec::new();
            decode_spilled(&b, &mut out).unwrap();
            assert_eq!(format!("{row:?}"), format!("{out:?}"));
        }
    }

    #[test]
    fn damaged_data_is_an_error_not_a_panic() {
        let mut b = Vec::new();
        encode_spilled(&[Value::Text("abc".into()), Value::Int4(1)], &mut b);
        for cut in 0..b.len() {
            let _ = decode_spilled(&b[..cut], &mut Vec::new());
        }
        assert!(decode_spilled(&[], &mut Vec::new()).is_err());
    }

    fn store_in(dir: &std::path::Path, work_mem: usize) -> TupleStore {
        TupleStore {
            spill: Some(Spill {
                work_mem,
                hash_mem: work_mem,
                shared: Arc::new(SpillShared {
                    dir: dir.to_path_buf(),
                    pid: 1,
                    limit_kb: None,
                    log_min: None,
                    usage: Arc::default(),
                }),
            }),
            ..TupleStore::default()
        }
    }

    #[test]
    fn a_store_reads_any_row_by_index_in_memory_and_spilled() {
        let dir = tempfile::tempdir().unwrap();
        let row = |i: usize| {
            vec![
                Value::Int8(i as i64),
                Value::Text("x".repeat(i % 300).into()),
            ]
        };
        let n = 3000;
        for work_mem in [64 * 1024, 1 << 30] {
            let mut store = store_in(dir.path(), work_mem);
            for i in 0..n {
                store.push(&row(i)).unwrap();
            }
            store.finish().unwrap();
            assert_eq!(store.spilled(), work_mem < 1 << 20);
            if store.spilled() {
                assert!(store.blocks.len() > CACHED_BLOCKS, "several blocks");
            }
            let mut r = StoreReader::default();
            // Forward, backward, jumping between far blocks, and back.
            let order = (0..n)
                .chain((0..n).rev())
                .chain((0..n).map(|i| (i * 7919) % n))
                .chain([0, n - 1, 1, n - 2]);
            for i in order {
                assert_eq!(r.get(&store, i).unwrap(), row(i).as_slice(), "row {i}");
            }
            assert!(r.get(&store, n).is_err(), "past the end");
            // Cleared and written again: the reader starts over.
            store.clear();
            r.reset();
            store.push(&row(5)).unwrap();
            store.finish().unwrap();
            assert_eq!(r.get(&store, 0).unwrap(), row(5).as_slice());
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "files removed"
        );
    }
}
