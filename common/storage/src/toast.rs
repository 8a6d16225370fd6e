//! TOAST (PostgreSQL's heaptoast.c / toast_internals.c): rows larger than a
//! page. When an encoded row would make a tuple larger than
//! [`TOAST_TUPLE_THRESHOLD`], [`Toaster::form_tuple`] replaces its largest
//! variable-length fields (text-likes, bytea, arrays) by TOAST datums:
//!
//! 1. largest first, a field is compressed in line
//!    (`default_toast_compression`; lz4 is the one method implemented);
//! 2. if the row is still too big, largest first, fields move out of line
//!    into the table's TOAST relation, leaving a 38-byte pointer.
//!
//! ```text
//! inline datum    | 1 | method | varint rawsize | compressed bytes      |
//! pointer datum   | 2 | method | rawsize u64 | extsize u64 | toastrel u32
//!                 | first chunk: block u32, offset u16 | value id u64  |
//! chunk tuple     | value id u64 | seq u32 | next chunk: block u32,
//!                 | offset u16 (block u32::MAX: last) | ≤ 1982 bytes    |
//! ```
//!
//! The TOAST relation of table file `r` is file `r | 0x8000_0000`
//! ([`toast_rel`]): derived, so the catalog keeps nothing; it is created
//! (WAL-logged) the first time a value goes out of line, and TRUNCATE /
//! DROP / VACUUM of the table do the same to it (heapam). Chunks are
//! ordinary heap tuples written with [`Heap::insert`] by the row's own
//! transaction and command, so WAL, redo, the standby, crash recovery and
//! MVCC treat them exactly like the row: a crash or abort in the middle of
//! a toasted insert leaves chunks of a transaction that never committed,
//! invisible and removed by the TOAST relation's next VACUUM. Chunks are
//! inserted last to first so each knows its successor's address; readers
//! follow the chain from the pointer (no index is needed) and check the
//! value id and sequence number of every chunk.
//!
//! Chunks are read with SnapshotAny: the row that holds the pointer was
//! visible, and a chunk is deleted only by the transaction that deletes or
//! updates away its row (same xid, so it dies for everyone at the same
//! moment as the row version): [`delete_external`] on DELETE, and on an
//! UPDATE for each pointer the new version does not keep. An UPDATE that
//! leaves a toasted column alone passes the old pointer to the new version
//! (`reuse`), writing nothing. Columns in an index are never moved out of
//! line (their keys are decoded again when pruning removes a version), as
//! PostgreSQL's btree never holds an out-of-line value.

use std::sync::atomic::{AtomicU64, Ordering};

use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::value::Value;
use pgtypes::{BlockNumber, CommandId, ItemPointer, RelFileId, TransactionId};

use crate::heapam::{Heap, TmResult};
use crate::heapam_visibility::VisibilityContext;
use crate::htup;
use crate::rowcodec::{encode_row, encode_row_toasted, varint_size, NoToast, ToastFetch};

/// A tuple (header included) larger than this is toasted: PostgreSQL's
/// TOAST_TUPLE_THRESHOLD for 8 KiB pages (four tuples a page).
pub const TOAST_TUPLE_THRESHOLD: usize = 2032;
/// Bytes of a value in one chunk: as PostgreSQL's TOAST_MAX_CHUNK_SIZE,
/// the most that lets four chunk tuples fill a page (hotpair's tuple and
/// chunk headers are larger, so 1982 rather than 1996).
pub const TOAST_MAX_CHUNK_SIZE: usize = 1982;
/// Largest value accepted (PostgreSQL's 1 GB varlena limit).
pub const MAX_VALUE_SIZE: usize = (1 << 30) - 1;
/// Fields no longer than this are left alone (PostgreSQL tries only
/// attributes longer than a pointer).
const MIN_TOAST_FIELD: usize = 64;

const TOAST_BIT: u32 = 0x8000_0000;
const KIND_INLINE: u8 = 1;
const KIND_EXTERNAL: u8 = 2;
const METHOD_NONE: u8 = 0;
const METHOD_LZ4: u8 = 1;
const POINTER_LEN: usize = 2 + 8 + 8 + 4 + 4 + 2 + 8;
const CHUNK_HEADER: usize = 8 + 4 + 4 + 2;

/// The TOAST relation of table file `rel`.
pub fn toast_rel(rel: RelFileId) -> RelFileId {
    RelFileId(rel.0 | TOAST_BIT)
}

/// True for a TOAST relation's file number.
pub fn is_toast_rel(rel: RelFileId) -> bool {
    rel.0 & TOAST_BIT != 0
}

/// `default_toast_compression`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToastCompression {
    /// lz4 (lz4_flex's block format).
    #[default]
    Lz4,
}

impl ToastCompression {
    /// Parses the setting; `pglz` is PostgreSQL's default but is not
    /// implemented here.
    pub fn parse(s: &str) -> Option<ToastCompression> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lz4" => Some(ToastCompression::Lz4),
            _ => None,
        }
    }
}

fn corrupt(what: &str) -> PgError {
    PgError::new(
        sqlstate::DATA_CORRUPTED,
        format!("invalid TOAST data: {what}"),
    )
}

fn get<const N: usize>(b: &[u8], at: usize) -> PgResult<[u8; N]> {
    b.get(at..at + N)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| corrupt("truncated"))
}

fn read_varint(b: &[u8]) -> PgResult<(usize, usize)> {
    let mut v: u64 = 0;
    for (i, &x) in b.iter().enumerate().take(10) {
        v |= ((x & 0x7f) as u64) << (7 * i);
        if x & 0x80 == 0 {
            return Ok((v as usize, i + 1));
        }
    }
    Err(corrupt("bad length"))
}

fn put_varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn decompress(method: u8, stored: Vec<u8>, rawsize: usize) -> PgResult<Vec<u8>> {
    if rawsize > MAX_VALUE_SIZE {
        return Err(corrupt("value too large"));
    }
    match method {
        METHOD_NONE if stored.len() == rawsize => Ok(stored),
        METHOD_LZ4 => {
            let out = lz4_flex::block::decompress(&stored, rawsize)
                .map_err(|_| corrupt("compressed data is corrupted"))?;
            if out.len() != rawsize {
                return Err(corrupt("compressed data has the wrong size"));
            }
            Ok(out)
        }
        _ => Err(corrupt("unknown compression method")),
    }
}

/// An out-of-line value's pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToastPointer {
    /// How the stored bytes are compressed.
    pub method: u8,
    /// Size of the value.
    pub rawsize: u64,
    /// Bytes stored in chunks.
    pub extsize: u64,
    /// The TOAST relation.
    pub rel: RelFileId,
    /// The first chunk.
    pub first: ItemPointer,
    /// Identifies the value's chunks.
    pub value_id: u64,
}

impl ToastPointer {
    /// Parses a pointer datum; None for an inline datum.
    pub fn parse(datum: &[u8]) -> PgResult<Option<ToastPointer>> {
        match datum.first() {
            Some(&KIND_INLINE) => return Ok(None),
            Some(&KIND_EXTERNAL) if datum.len() == POINTER_LEN => {}
            _ => return Err(corrupt("bad datum")),
        }
        Ok(Some(ToastPointer {
            method: datum[1],
            rawsize: u64::from_le_bytes(get(datum, 2)?),
            extsize: u64::from_le_bytes(get(datum, 10)?),
            rel: RelFileId(u32::from_le_bytes(get(datum, 18)?)),
            first: ItemPointer {
                block: BlockNumber(u32::from_le_bytes(get(datum, 22)?)),
                offset: u16::from_le_bytes(get(datum, 26)?),
            },
            value_id: u64::from_le_bytes(get(datum, 28)?),
        }))
    }

    fn encode(&self) -> Vec<u8> {
        let mut d = Vec::with_capacity(POINTER_LEN);
        d.push(KIND_EXTERNAL);
        d.push(self.method);
        d.extend_from_slice(&self.rawsize.to_le_bytes());
        d.extend_from_slice(&self.extsize.to_le_bytes());
        d.extend_from_slice(&self.rel.0.to_le_bytes());
        d.extend_from_slice(&self.first.block.0.to_le_bytes());
        d.extend_from_slice(&self.first.offset.to_le_bytes());
        d.extend_from_slice(&self.value_id.to_le_bytes());
        d
    }
}

/// The bytes of an inline (compressed) datum; a pointer is an error here.
pub fn detoast_inline(datum: &[u8]) -> PgResult<Vec<u8>> {
    match datum.first() {
        Some(&KIND_INLINE) => {
            let method = *datum.get(1).ok_or_else(|| corrupt("truncated"))?;
            let (rawsize, n) = read_varint(&datum[2..])?;
            decompress(method, datum[2 + n..].to_vec(), rawsize)
        }
        Some(&KIND_EXTERNAL) => Err(PgError::internal(
            "out-of-line TOAST value where none can be fetched",
        )),
        _ => Err(corrupt("bad datum")),
    }
}

/// The stored size of a TOAST datum (what pg_column_size reports): the
/// compressed bytes of an inline datum, the chunk bytes of a pointer.
pub fn stored_size(datum: &[u8]) -> PgResult<usize> {
    Ok(match ToastPointer::parse(datum)? {
        Some(p) => p.extsize as usize,
        None => datum.len(),
    })
}

/// The chunk at `tid`: (payload, next chunk) after checking its identity.
fn read_chunk(
    heap: &Heap,
    p: &ToastPointer,
    tid: ItemPointer,
    seq: u32,
    out: &mut Vec<u8>,
) -> PgResult<Option<ItemPointer>> {
    let r = heap.fetch_any(p.rel, tid, |_, data| -> PgResult<Option<ItemPointer>> {
        if data.len() < CHUNK_HEADER
            || u64::from_le_bytes(get(data, 0)?) != p.value_id
            || u32::from_le_bytes(get(data, 8)?) != seq
        {
            return Err(corrupt(&format!(
                "missing chunk number {seq} for toast value {} in base/{}",
                p.value_id, p.rel
            )));
        }
        out.extend_from_slice(&data[CHUNK_HEADER..]);
        let block = u32::from_le_bytes(get(data, 12)?);
        let offset = u16::from_le_bytes(get(data, 16)?);
        Ok((block != u32::MAX).then_some(ItemPointer {
            block: BlockNumber(block),
            offset,
        }))
    })?;
    r.unwrap_or_else(|| {
        Err(corrupt(&format!(
            "missing chunk number {seq} for toast value {} in base/{}",
            p.value_id, p.rel
        )))
    })
}

impl ToastFetch for Heap {
    fn detoast(&self, datum: &[u8]) -> PgResult<Vec<u8>> {
        let Some(p) = ToastPointer::parse(datum)? else {
            return detoast_inline(datum);
        };
        if p.extsize as usize > MAX_VALUE_SIZE {
            return Err(corrupt("value too large"));
        }
        let mut out = Vec::with_capacity(p.extsize as usize);
        let mut tid = Some(p.first);
        let mut seq = 0u32;
        while let Some(t) = tid {
            tid = read_chunk(self, &p, t, seq, &mut out)?;
            seq += 1;
            if out.len() > p.extsize as usize {
                return Err(corrupt("chunks longer than the value"));
            }
        }
        if out.len() != p.extsize as usize {
            return Err(corrupt("chunks shorter than the value"));
        }
        decompress(p.method, out, p.rawsize as usize)
    }
}

/// Marks the chunks of an out-of-line value deleted by `xid` (the row that
/// held its last pointer is being deleted or updated away). A pointer
/// datum only; inline datums have nothing to delete.
pub fn delete_external(
    heap: &Heap,
    datum: &[u8],
    xid: TransactionId,
    cx: &VisibilityContext<'_>,
) -> PgResult<()> {
    for_each_chunk(heap, datum, &mut |p, t| {
        match heap.delete(p.rel, t, xid, cx)? {
            TmResult::Ok | TmResult::SelfModified => {}
            other => tracing::debug!(
                "TOAST chunk {t} of value {} not deleted: {other:?}",
                p.value_id
            ),
        }
        Ok(())
    })
}

/// Calls `f` with each chunk of an external datum, in chain order
/// (checking each as it goes); nothing for an inline datum.
fn for_each_chunk(
    heap: &Heap,
    datum: &[u8],
    f: &mut dyn FnMut(&ToastPointer, ItemPointer) -> PgResult<()>,
) -> PgResult<()> {
    let Some(p) = ToastPointer::parse(datum)? else {
        return Ok(());
    };
    let mut tid = Some(p.first);
    let mut seq = 0u32;
    let mut scratch = Vec::new();
    while let Some(t) = tid {
        scratch.clear();
        tid = read_chunk(heap, &p, t, seq, &mut scratch)?;
        seq += 1;
        f(&p, t)?;
    }
    Ok(())
}

/// Kills the chunks this command just wrote for a row version that was not
/// stored after all (an UPDATE that found the row changed under it).
pub fn kill_own_external(
    heap: &Heap,
    datum: &[u8],
    xid: TransactionId,
    cid: CommandId,
) -> PgResult<()> {
    for_each_chunk(heap, datum, &mut |p, t| {
        heap.kill_own_insert(p.rel, t, xid, cid)
    })
}

/// Identifies a value's chunks (checked on read; unique within a process
/// run, and a run's ids start from the clock so runs differ too).
fn next_value_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    if NEXT.load(Ordering::Relaxed) == 0 {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            | 1;
        let _ = NEXT.compare_exchange(0, seed, Ordering::Relaxed, Ordering::Relaxed);
    }
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The raw bytes of a toastable value (text, bytea, array_send form).
fn raw_bytes(v: &Value) -> Option<std::borrow::Cow<'_, [u8]>> {
    match v {
        Value::Text(s) => Some(std::borrow::Cow::Borrowed(s.as_bytes())),
        Value::Bytea(b) => Some(std::borrow::Cow::Borrowed(b)),
        Value::Json(s) => Some(std::borrow::Cow::Borrowed(s.as_bytes())),
        Value::Jsonb(j) => Some(std::borrow::Cow::Owned(j.to_text().into_bytes())),
        Value::Array(_) => {
            let mut b = bytes::BytesMut::new();
            v.write_binary(&mut b);
            Some(std::borrow::Cow::Owned(b.to_vec()))
        }
        _ => None,
    }
}

/// Where the toaster writes: the table, the inserting transaction and
/// command, the compression method.
pub struct Toaster<'a> {
    /// The heap.
    pub heap: &'a Heap,
    /// The table's relation file.
    pub rel: RelFileId,
    /// The writing transaction.
    pub xid: TransactionId,
    /// Its current command.
    pub cid: CommandId,
    /// `default_toast_compression`.
    pub compression: ToastCompression,
}

/// What [`Toaster::form_tuple`] did.
#[derive(Debug, Default)]
pub struct Formed {
    /// Pointer datums written for this row (new chunks).
    pub written: Vec<Vec<u8>>,
}

struct Field<'v> {
    col: usize,
    raw: std::borrow::Cow<'v, [u8]>,
    /// The field's size as encoded now.
    cur: usize,
    tried: bool,
    /// Compressed bytes, when compression paid off.
    compressed: Option<Vec<u8>>,
    external: bool,
}

impl Toaster<'_> {
    /// Encodes `values` into `out` (cleared first), toasting when the tuple
    /// would exceed [`TOAST_TUPLE_THRESHOLD`]. `reuse`: pointer datums of
    /// an old version for columns the new version keeps unchanged (they
    /// are stored as they are). `keep_inline(col)`: never move out of
    /// line (indexed columns).
    pub fn form_tuple(
        &self,
        values: &[Value],
        reuse: &[(usize, Vec<u8>)],
        keep_inline: &dyn Fn(usize) -> bool,
        out: &mut Vec<u8>,
    ) -> PgResult<Formed> {
        out.clear();
        let mut formed = Formed::default();
        encode_row(values, out);
        if reuse.is_empty() && htup::HEADER_SIZE + out.len() <= TOAST_TUPLE_THRESHOLD {
            return Ok(formed);
        }
        let mut datums: Vec<Option<Vec<u8>>> = vec![None; values.len()];
        // The toast bitmap is added once anything is toasted.
        let mut size = htup::HEADER_SIZE + out.len() + values.len().div_ceil(8);
        let mut fields: Vec<Field<'_>> = Vec::new();
        for (col, v) in values.iter().enumerate() {
            let Some(raw) = raw_bytes(v) else { continue };
            if raw.len() > MAX_VALUE_SIZE {
                return Err(PgError::new(
                    "54000",
                    format!(
                        "invalid memory alloc request size {}",
                        raw.len() + varint_size(raw.len())
                    ),
                ));
            }
            let cur = varint_size(raw.len()) + raw.len();
            if let Some((_, d)) = reuse.iter().find(|(c, _)| *c == col) {
                size = size - cur + varint_size(d.len()) + d.len();
                datums[col] = Some(d.clone());
                continue;
            }
            if raw.len() > MIN_TOAST_FIELD {
                fields.push(Field {
                    col,
                    raw,
                    cur,
                    tried: false,
                    compressed: None,
                    external: false,
                });
            }
        }
        // 1. Compress, largest first.
        while size > TOAST_TUPLE_THRESHOLD {
            let Some(f) = fields
                .iter_mut()
                .filter(|f| !f.tried)
                .max_by_key(|f| f.raw.len())
            else {
                break;
            };
            f.tried = true;
            let c = match self.compression {
                ToastCompression::Lz4 => lz4_flex::block::compress(&f.raw),
            };
            let mut d = Vec::with_capacity(c.len() + 12);
            d.push(KIND_INLINE);
            d.push(METHOD_LZ4);
            put_varint(&mut d, f.raw.len());
            d.extend_from_slice(&c);
            let new = varint_size(d.len()) + d.len();
            if new < f.cur {
                size = size - f.cur + new;
                f.cur = new;
                f.compressed = Some(c);
                datums[f.col] = Some(d);
            }
        }
        // 2. Move out of line, largest first.
        while size > TOAST_TUPLE_THRESHOLD {
            let Some(f) = fields
                .iter_mut()
                .filter(|f| !f.external && !keep_inline(f.col) && f.cur > POINTER_LEN + 1)
                .max_by_key(|f| f.cur)
            else {
                break;
            };
            f.external = true;
            let (method, stored): (u8, &[u8]) = match &f.compressed {
                Some(c) => (METHOD_LZ4, c),
                None => (METHOD_NONE, &f.raw),
            };
            let d = self.write_external(method, stored, f.raw.len())?;
            size = size - f.cur + 1 + d.len();
            f.cur = 1 + d.len();
            formed.written.push(d.clone());
            datums[f.col] = Some(d);
        }
        out.clear();
        encode_row_toasted(values, &datums, out);
        Ok(formed)
    }

    /// Stores `stored` in chunks, last to first; returns the pointer datum.
    fn write_external(&self, method: u8, stored: &[u8], rawsize: usize) -> PgResult<Vec<u8>> {
        let trel = toast_rel(self.rel);
        if is_toast_rel(self.rel) {
            return Err(PgError::internal("a TOAST relation has no TOAST relation"));
        }
        self.heap.ensure_relation(trel)?;
        let value_id = next_value_id();
        let nchunks = stored.len().div_ceil(TOAST_MAX_CHUNK_SIZE);
        let mut next: Option<ItemPointer> = None;
        let mut buf = Vec::with_capacity(CHUNK_HEADER + TOAST_MAX_CHUNK_SIZE);
        for seq in (0..nchunks).rev() {
            let start = seq * TOAST_MAX_CHUNK_SIZE;
            let end = (start + TOAST_MAX_CHUNK_SIZE).min(stored.len());
            buf.clear();
            buf.extend_from_slice(&value_id.to_le_bytes());
            buf.extend_from_slice(&(seq as u32).to_le_bytes());
            let (b, o) = match next {
                Some(t) => (t.block.0, t.offset),
                None => (u32::MAX, 0),
            };
            buf.extend_from_slice(&b.to_le_bytes());
            buf.extend_from_slice(&o.to_le_bytes());
            buf.extend_from_slice(&stored[start..end]);
            next = Some(self.heap.insert(trel, &buf, self.xid, self.cid)?);
        }
        let first = next.ok_or_else(|| PgError::internal("empty out-of-line value"))?;
        Ok(ToastPointer {
            method,
            rawsize: rawsize as u64,
            extsize: stored.len() as u64,
            rel: trel,
            first,
            value_id,
        }
        .encode())
    }
}

/// The pointer datums of `old` that `new` does not keep (their chunks go
/// when the old version goes).
pub fn dropped_pointers(
    old: &[(usize, Vec<u8>)],
    new_data_toasted: &[(usize, Vec<u8>)],
) -> Vec<Vec<u8>> {
    old.iter()
        .filter(|(_, d)| d.first() == Some(&KIND_EXTERNAL))
        .filter(|(_, d)| !new_data_toasted.iter().any(|(_, n)| n == d))
        .map(|(_, d)| d.clone())
        .collect()
}

/// True for a pointer datum (an out-of-line value).
pub fn is_pointer(datum: &[u8]) -> bool {
    datum.first() == Some(&KIND_EXTERNAL)
}

/// Inline (compressed) datums decode without a heap; external ones are an
/// error (see [`NoToast`]).
impl ToastFetch for NoToast {
    fn detoast(&self, datum: &[u8]) -> PgResult<Vec<u8>> {
        detoast_inline(datum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hio::space_for;

    #[test]
    fn four_chunks_fill_a_page() {
        let room = 8192 - crate::bufpage::HEADER_SIZE;
        let chunk = htup::HEADER_SIZE + CHUNK_HEADER + TOAST_MAX_CHUNK_SIZE;
        assert!(4 * space_for(chunk) <= room);
        assert!(4 * space_for(chunk + 8) > room);
    }

    #[test]
    fn pointer_round_trip() {
        let p = ToastPointer {
            method: METHOD_LZ4,
            rawsize: 10,
            extsize: 5,
            rel: RelFileId(7 | TOAST_BIT),
            first: ItemPointer {
                block: BlockNumber(3),
                offset: 2,
            },
            value_id: 99,
        };
        let d = p.encode();
        assert_eq!(d.len(), POINTER_LEN);
        assert_eq!(ToastPointer::parse(&d).unwrap(), Some(p));
        assert!(ToastPointer::parse(&d[..10]).is_err());
    }

    #[test]
    fn corrupt_inline_datums_are_errors() {
        assert!(detoast_inline(&[]).is_err());
        assert!(detoast_inline(&[KIND_INLINE, METHOD_LZ4, 0xff]).is_err());
        assert!(detoast_inline(&[KIND_INLINE, METHOD_LZ4, 10, 1, 2]).is_err());
        assert!(detoast_inline(&[KIND_INLINE, 9, 0]).is_err());
    }

    mod with_heap {
        use super::*;
        use crate::heapam_visibility::OwnXact;
        use crate::hio::ExtensionMode;
        use crate::rowcodec::{decode_row, toasted_fields};
        use crate::xloginsert::XLog;
        use pgtypes::sqltype::SqlType;
        use pgtypes::ForkNumber;
        use std::sync::Arc;
        use txn::clog::{Clog, XidStatus};
        use txn::procarray::{Finished, ProcArray};

        const REL: RelFileId = RelFileId(16384);

        /// Hex digits from a small LCG: compresses poorly, like md5 output.
        fn noise(n: usize, seed: u64) -> String {
            let mut x = seed;
            (0..n)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    b"0123456789abcdef"[(x >> 60) as usize] as char
                })
                .collect()
        }

        struct Env {
            _dir: tempfile::TempDir,
            heap: Heap,
            clog: Clog,
            pa: ProcArray,
        }

        fn env() -> Env {
            let dir = tempfile::tempdir().unwrap();
            let heap = Heap::open(
                dir.path(),
                256,
                ExtensionMode::Bulk,
                Arc::new(XLog::with_settings(true, true)),
            )
            .unwrap();
            let clog = Clog::open(dir.path()).unwrap();
            let pa = ProcArray::new(16, TransactionId::FIRST_NORMAL);
            heap.create_relation(REL).unwrap();
            Env {
                _dir: dir,
                heap,
                clog,
                pa,
            }
        }

        fn toaster(e: &Env, xid: TransactionId) -> Toaster<'_> {
            Toaster {
                heap: &e.heap,
                rel: REL,
                xid,
                cid: CommandId(0),
                compression: ToastCompression::Lz4,
            }
        }

        const TYPES: [SqlType; 3] = [SqlType::Int4, SqlType::Text, SqlType::Bytea];

        #[test]
        fn big_values_round_trip_and_chunks_die_with_the_row() {
            let e = env();
            let p = e.pa.connect(16).unwrap();
            let xid = e.pa.assign_xid(p);
            let big = noise(300_000, 7);
            let row = vec![
                Value::Int4(1),
                Value::text(&big),
                Value::Bytea(Arc::from(&b"\x00small"[..])),
            ];
            let mut data = Vec::new();
            let formed = toaster(&e, xid)
                .form_tuple(&row, &[], &|_| false, &mut data)
                .unwrap();
            assert_eq!(formed.written.len(), 1, "the text went out of line");
            assert!(htup::HEADER_SIZE + data.len() <= TOAST_TUPLE_THRESHOLD);
            assert!(
                e.heap.nblocks(toast_rel(REL)).unwrap() > 30,
                "chunks stored"
            );
            assert_eq!(
                decode_row(&data, &TYPES, &e.heap).unwrap(),
                row,
                "detoasted"
            );
            assert!(
                decode_row(&data, &TYPES, &crate::rowcodec::NoToast).is_err(),
                "a pointer needs the heap"
            );

            // An unchanged column passes its pointer on; nothing is written.
            let old = toasted_fields(&data, &TYPES).unwrap();
            let mut data2 = Vec::new();
            let f2 = toaster(&e, xid)
                .form_tuple(&row, &old, &|_| false, &mut data2)
                .unwrap();
            assert!(f2.written.is_empty(), "pointer reused");
            assert_eq!(data2, data);
            assert!(dropped_pointers(&old, &old).is_empty());

            // Indexed columns are compressed at most, never moved out.
            let mut data3 = Vec::new();
            let f3 = toaster(&e, xid)
                .form_tuple(&row, &[], &|c| c == 1, &mut data3)
                .unwrap();
            assert!(f3.written.is_empty(), "indexed column stays in line");
            assert_eq!(
                decode_row(&data3, &TYPES, &crate::rowcodec::NoToast).unwrap(),
                row
            );

            e.clog.set_status(xid, &[], XidStatus::Committed);
            e.pa.end_transaction(Finished::Proc(p), xid);

            // A deleter marks every chunk of the value.
            let xid2 = e.pa.assign_xid(p);
            let snap = (*e.pa.get_snapshot(p, &mut None)).clone();
            let own = [xid2];
            let cx = VisibilityContext {
                snapshot: &snap,
                own: OwnXact {
                    xids: &own,
                    curcid: CommandId(0),
                },
                clog: &e.clog,
                procarray: &e.pa,
                serializable: None,
            };
            let ptr = ToastPointer::parse(&formed.written[0]).unwrap().unwrap();
            delete_external(&e.heap, &formed.written[0], xid2, &cx).unwrap();
            let h = e
                .heap
                .fetch_any(ptr.rel, ptr.first, |h, _| *h)
                .unwrap()
                .unwrap();
            assert_eq!(h.xmax, xid2, "first chunk deleted by the row's deleter");
            assert_eq!(
                decode_row(&data, &TYPES, &e.heap).unwrap(),
                row,
                "still readable"
            );
        }

        #[test]
        fn compressible_values_stay_in_line() {
            let e = env();
            let row = vec![
                Value::Int4(1),
                Value::text(&"ab".repeat(50_000)),
                Value::Null,
            ];
            let mut data = Vec::new();
            let formed = toaster(&e, TransactionId(10))
                .form_tuple(&row, &[], &|_| false, &mut data)
                .unwrap();
            assert!(formed.written.is_empty());
            assert!(data.len() < 2_000, "compressed to {} bytes", data.len());
            assert!(
                !e.heap.smgr().exists(toast_rel(REL), ForkNumber::Main),
                "no TOAST relation"
            );
            assert_eq!(
                decode_row(&data, &TYPES, &crate::rowcodec::NoToast).unwrap(),
                row
            );
        }

        #[test]
        fn a_wrong_chunk_is_corruption_not_a_panic() {
            let e = env();
            let row = vec![Value::Int4(1), Value::text(&noise(20_000, 3)), Value::Null];
            let mut data = Vec::new();
            let formed = toaster(&e, TransactionId(10))
                .form_tuple(&row, &[], &|_| false, &mut data)
                .unwrap();
            let mut p = ToastPointer::parse(&formed.written[0]).unwrap().unwrap();
            p.value_id ^= 1;
            let err = e.heap.detoast(&p.encode()).unwrap_err();
            assert_eq!(err.code, sqlstate::DATA_CORRUPTED);
            p.value_id ^= 1;
            p.extsize += 1;
            assert!(e.heap.detoast(&p.encode()).is_err(), "short chain");
        }
    }
}
