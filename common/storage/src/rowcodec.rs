//! Heap tuple data: the encoding of a row's column values (the part of a heap
//! tuple after its header), PostgreSQL's `heap_form_tuple` /
//! `heap_deform_tuple` in hotpair's own compact format.
//!
//! ```text
//! +--------+----------------+-----------------------------------------+
//! | natts  | null bitmap    | fields of the non-NULL columns, in order |
//! | u16 LE | ceil(natts/8) B| (no alignment padding)                  |
//! +--------+----------------+-----------------------------------------+
//! bitmap: bit (i % 8) of byte (i / 8) set = column i is NULL
//! natts bit 15 set: a second bitmap of the same size follows the null
//!         bitmap; its bit i set = field i is a TOAST datum (varint length
//!         + the datum of [`crate::toast`]: compressed inline or a pointer
//!         to chunks in the table's TOAST relation)
//! fields: bool 1 B; int2 2 B; int4/oid 4 B; int8/float8/timestamp(tz)/
//!         pg_lsn/xid8 8 B (little-endian);
//!         text-like: varint length + UTF-8 bytes;
//!         numeric: scale u8 + zigzag varint of the i128 mantissa;
//!         pg_snapshot: varint xmin, xmax, count, xips; void: nothing;
//!         date 4 B; interval: months 4 B, days 4 B, µs 8 B;
//!         arrays: varint length + array_send bytes;
//!         inet/cidr: family (4 or 6) 1 B, bits 1 B, 4 or 16 address bytes
//! ```
//!
//! Invariants: the encoder writes what each [`Value`]'s variant is; the
//! decoder reads what the column *types* say, so values must have been cast
//! to their column types before encoding (the executor does this with
//! `cast_assign`). A row with more attributes than the reader's columns
//! (written under a newer, uncommitted or rolled-back, definition) has the
//! extra ones ignored. A row with fewer attributes than the table has columns
//! (a column added later) decodes the missing ones as NULL, as PostgreSQL
//! does without a default. Decoding validates every length and UTF-8 and
//! returns XX001 on corruption; it never panics (property-tested).
//!
//! A sequential scan decodes every row with the same column mask, so it
//! builds a [`RowLayout`] once: per column up to the last needed one, an
//! op that decodes it by its type or skips its bytes, runs of fixed-width
//! skips merged into one jump. [`decode_row_layout`] runs those ops on a
//! row whose covered columns are all stored, non-NULL and not toasted (a
//! look at the header's bitmap bytes) and hands any other row to
//! [`decode_row_needed`]; either way the result is `decode_row_needed`'s.

use std::sync::Arc;

use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::numeric::Numeric;
use pgtypes::sqltype::SqlType;
use pgtypes::value::{PgSnapshot, Value};

/// natts bit: the row has TOAST datums (a toast bitmap follows).
pub const HAS_TOASTED: u16 = 0x8000;

/// How a decoder reads a TOAST datum's bytes back: the heap (which can
/// fetch out-of-line chunks), or [`NoToast`] where none can occur.
pub trait ToastFetch {
    /// The raw (decompressed, reassembled) bytes of a TOAST datum.
    fn detoast(&self, datum: &[u8]) -> PgResult<Vec<u8>>;
}

/// A [`ToastFetch`] for rows that cannot hold out-of-line values: inline
/// compressed datums still decode, pointers are an error.
pub struct NoToast;

/// A decoding failure inside the reader: what was wrong, made an XX001
/// [`PgError`] only when it leaves the module (a small error keeps the
/// per-field `Result` small on the hot path).
#[derive(Debug)]
struct Bad(&'static str);

impl From<Bad> for PgError {
    fn from(b: Bad) -> PgError {
        corrupt(b.0)
    }
}

fn corrupt(what: &str) -> PgError {
    PgError::new(
        sqlstate::DATA_CORRUPTED,
        format!("invalid tuple data: {what}"),
    )
}

fn put_varint(out: &mut Vec<u8>, mut v: u128) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn zigzag(v: i128) -> u128 {
    ((v << 1) ^ (v >> 127)) as u128
}

fn unzigzag(v: u128) -> i128 {
    ((v >> 1) as i128) ^ -((v & 1) as i128)
}

/// Appends the encoding of a row. Values must already have their column's
/// type (the executor casts with [`pgtypes::value::cast_assign`] first).
pub fn encode_row(values: &[Value], out: &mut Vec<u8>) {
    let n = values.len().min((HAS_TOASTED - 1) as usize);
    out.extend_from_slice(&(n as u16).to_le_bytes());
    let bm_start = out.len();
    out.resize(bm_start + n.div_ceil(8), 0);
    for (i, v) in values[..n].iter().enumerate() {
        match v {
            Value::Null => out[bm_start + i / 8] |= 1 << (i % 8),
            Value::Bool(b) => out.push(*b as u8),
            Value::Int2(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Int4(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Oid(x) | Value::Xid(x) | Value::Enum(x) => {
                out.extend_from_slice(&x.to_le_bytes())
            }
            Value::Int8(x) | Value::Timestamp(x) | Value::TimestampTz(x) => {
                out.extend_from_slice(&x.to_le_bytes())
            }
            Value::PgLsn(x) | Value::Xid8(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Float8(f) => out.extend_from_slice(&f.to_le_bytes()),
            Value::Numeric(num) => {
                out.push(num.scale() as u8);
                put_varint(out, zigzag(num.mantissa()));
            }
            Value::Text(s) => {
                put_varint(out, s.len() as u128);
                out.extend_from_slice(s.as_bytes());
            }
            Value::Bytea(b) => {
                put_varint(out, b.len() as u128);
                out.extend_from_slice(b);
            }
            Value::Json(s) => {
                put_varint(out, s.len() as u128);
                out.extend_from_slice(s.as_bytes());
            }
            Value::Jsonb(j) => {
                // The canonical text: re-parsed on read.
                let t = j.to_text();
                put_varint(out, t.len() as u128);
                out.extend_from_slice(t.as_bytes());
            }
            Value::Uuid(u) => out.extend_from_slice(u),
            Value::Inet(a) | Value::Cidr(a) => a.write_stored(out),
            Value::Snapshot(s) => {
                put_varint(out, s.xmin as u128);
                put_varint(out, s.xmax as u128);
                put_varint(out, s.xip.len() as u128);
                for x in &s.xip {
                    put_varint(out, *x as u128);
                }
            }
            Value::Void => {}
            Value::Date(d) => out.extend_from_slice(&d.to_le_bytes()),
            Value::Interval(iv) => {
                out.extend_from_slice(&iv.months.to_le_bytes());
                out.extend_from_slice(&iv.days.to_le_bytes());
                out.extend_from_slice(&iv.micros.to_le_bytes());
            }
            Value::Array(_) => {
                // array_send's form, length-prefixed: decoded with the
                // column's element type and validated like client input.
                let mut b = bytes::BytesMut::new();
                v.write_binary(&mut b);
                put_varint(out, b.len() as u128);
                out.extend_from_slice(&b);
            }
        }
    }
}

/// As [`encode_row`], with some fields replaced by TOAST datums
/// (`toasted[i]` = Some(datum)): the row gets a toast bitmap.
pub fn encode_row_toasted(values: &[Value], toasted: &[Option<Vec<u8>>], out: &mut Vec<u8>) {
    if toasted.iter().all(Option::is_none) {
        return encode_row(values, out);
    }
    let n = values.len().min((HAS_TOASTED - 1) as usize);
    out.extend_from_slice(&((n as u16) | HAS_TOASTED).to_le_bytes());
    let bm_start = out.len();
    let bm_len = n.div_ceil(8);
    out.resize(bm_start + 2 * bm_len, 0);
    let mut one = Vec::new();
    for (i, v) in values[..n].iter().enumerate() {
        if v.is_null() {
            out[bm_start + i / 8] |= 1 << (i % 8);
            continue;
        }
        if let Some(Some(d)) = toasted.get(i) {
            out[bm_start + bm_len + i / 8] |= 1 << (i % 8);
            put_varint(out, d.len() as u128);
            out.extend_from_slice(d);
            continue;
        }
        // One field: encode it as a one-column row and keep its body.
        one.clear();
        encode_row(std::slice::from_ref(v), &mut one);
        out.extend_from_slice(&one[3..]);
    }
}

/// The length prefix a field of `n` bytes takes.
pub fn varint_size(mut n: usize) -> usize {
    let mut k = 1;
    while n >= 0x80 {
        n >>= 7;
        k += 1;
    }
    k
}

/// A bounds-checked reader over tuple bytes.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], Bad> {
        let end = self.pos.checked_add(n).ok_or(Bad("length overflow"))?;
        let s = self.b.get(self.pos..end).ok_or(Bad("truncated"))?;
        self.pos = end;
        Ok(s)
    }
    /// The unread bytes.
    fn rest(&self) -> &'a [u8] {
        self.b.get(self.pos..).unwrap_or(&[])
    }
    /// The next `N` bytes, as an array (one bounds check; `pos` is at
    /// most the slice's length, so `pos + N` cannot overflow).
    #[inline]
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], Bad> {
        let end = self.pos + N;
        let a: [u8; N] = self
            .b
            .get(self.pos..end)
            .and_then(|s| s.try_into().ok())
            .ok_or(Bad("truncated"))?;
        self.pos = end;
        Ok(a)
    }
    /// The next byte.
    #[inline]
    fn byte(&mut self) -> Result<u8, Bad> {
        let b = *self.b.get(self.pos).ok_or(Bad("truncated"))?;
        self.pos += 1;
        Ok(b)
    }
    /// A varint: the first nine bytes (63 bits, every length and nearly
    /// every numeric mantissa) accumulate in a u64, the rest in a u128.
    #[inline]
    fn varint(&mut self) -> Result<u128, Bad> {
        // One byte (a length under 128): the common case.
        match self.b.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                return Ok(b as u128);
            }
            None => return Err(Bad("truncated")),
            _ => {}
        }
        // Up to nine bytes (63 bits) from one bounds-checked slice.
        let rest = self.b.get(self.pos..).unwrap_or(&[]);
        let chunk = rest.get(..9).unwrap_or(rest);
        let mut v: u64 = 0;
        for (i, &b) in chunk.iter().enumerate() {
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(v as u128);
            }
        }
        if chunk.len() < 9 {
            return Err(Bad("truncated"));
        }
        self.varint_wide()
    }
    /// [`Self::varint`] past nine bytes (a mantissa wider than 63 bits):
    /// read again byte by byte from the start.
    #[cold]
    fn varint_wide(&mut self) -> Result<u128, Bad> {
        let mut v: u64 = 0;
        let mut shift = 0u32;
        while shift < 63 {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v as u128);
            }
            shift += 7;
        }
        let mut v = v as u128;
        loop {
            let b = self.byte()?;
            if shift >= 128 || (shift == 126 && b > 0x03) {
                return Err(Bad("varint too long"));
            }
            v |= ((b & 0x7f) as u128) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
        }
    }
    fn varint_u64(&mut self) -> Result<u64, Bad> {
        u64::try_from(self.varint()?).map_err(|_| Bad("value too large"))
    }
    fn varint_len(&mut self) -> Result<usize, Bad> {
        let v = self.varint()?;
        if v > (self.b.len() - self.pos) as u128 {
            return Err(Bad("length beyond tuple"));
        }
        Ok(v as usize)
    }

    /// Reads one non-NULL field of type `ty`.
    fn field(&mut self, ty: SqlType) -> Result<Value, Bad> {
        Ok(match ty {
            SqlType::Bool => {
                let [b] = self.arr::<1>()?;
                if b > 1 {
                    return Err(Bad("bad bool"));
                }
                Value::Bool(b == 1)
            }
            SqlType::Int2 => Value::Int2(i16::from_le_bytes(self.arr()?)),
            SqlType::Int4 => Value::Int4(i32::from_le_bytes(self.arr()?)),
            SqlType::Oid | SqlType::Reg(_) => Value::Oid(u32::from_le_bytes(self.arr()?)),
            SqlType::Enum(_) => Value::Enum(u32::from_le_bytes(self.arr()?)),
            SqlType::Int8 => Value::Int8(i64::from_le_bytes(self.arr()?)),
            SqlType::Timestamp => Value::Timestamp(i64::from_le_bytes(self.arr()?)),
            SqlType::TimestampTz => Value::TimestampTz(i64::from_le_bytes(self.arr()?)),
            SqlType::PgLsn => Value::PgLsn(u64::from_le_bytes(self.arr()?)),
            SqlType::Xid8 => Value::Xid8(u64::from_le_bytes(self.arr()?)),
            SqlType::Xid => Value::Xid(u32::from_le_bytes(self.arr()?)),
            SqlType::Float8 => Value::Float8(f64::from_le_bytes(self.arr()?)),
            SqlType::Numeric(_) => {
                let [scale] = self.arr::<1>()?;
                let m = unzigzag(self.varint()?);
                Value::Numeric(Numeric::new(m, scale as u16).map_err(|_| Bad("bad numeric scale"))?)
            }
            SqlType::Text
            | SqlType::Varchar(_)
            | SqlType::Char(_)
            | SqlType::Name
            | SqlType::Refcursor
            | SqlType::InternalChar
            | SqlType::Unknown => {
                let n = self.varint_len()?;
                let s = std::str::from_utf8(self.take(n)?).map_err(|_| Bad("invalid UTF-8"))?;
                Value::Text(Arc::from(s))
            }
            SqlType::Bytea => {
                let n = self.varint_len()?;
                Value::Bytea(Arc::from(self.take(n)?))
            }
            SqlType::Json | SqlType::Jsonb => {
                let n = self.varint_len()?;
                value_from_raw(ty, self.take(n)?.to_vec())?
            }
            SqlType::Uuid => Value::Uuid(self.arr()?),
            SqlType::Inet | SqlType::Cidr => {
                let (a, n) =
                    pgtypes::inet::Inet::read_stored(self.rest()).ok_or(Bad("bad inet"))?;
                self.take(n)?;
                if ty == SqlType::Inet {
                    Value::Inet(a)
                } else {
                    Value::Cidr(a)
                }
            }
            SqlType::Snapshot => {
                let xmin = self.varint_u64()?;
                let xmax = self.varint_u64()?;
                let n = self.varint_len()?;
                let mut xip = Vec::with_capacity(n);
                for _ in 0..n {
                    xip.push(self.varint_u64()?);
                }
                Value::Snapshot(Arc::new(PgSnapshot { xmin, xmax, xip }))
            }
            SqlType::Void | SqlType::Trigger => Value::Void,
            SqlType::Record => return Err(Bad("record column")),
            SqlType::Date => Value::Date(i32::from_le_bytes(self.arr()?)),
            SqlType::Interval => {
                let months = i32::from_le_bytes(self.arr()?);
                let days = i32::from_le_bytes(self.arr()?);
                let micros = i64::from_le_bytes(self.arr()?);
                Value::Interval(pgtypes::interval::Interval::new(months, days, micros))
            }
            SqlType::Array(_) => {
                let n = self.varint_len()?;
                Value::from_binary(ty, self.take(n)?).map_err(|_| Bad("bad array"))?
            }
        })
    }

    /// Reads one non-NULL text-like field into `slot`, reusing the text
    /// it holds when that is of the same length and not shared (a char(n)
    /// column's values all are: a scan then allocates nothing for it).
    fn text_into(&mut self, slot: &mut Value) -> Result<(), Bad> {
        let n = self.varint_len()?;
        let s = std::str::from_utf8(self.take(n)?).map_err(|_| Bad("invalid UTF-8"))?;
        if let Value::Text(a) = slot {
            if a.len() == n {
                if let Some(m) = Arc::get_mut(a) {
                    // SAFETY: the whole of `m` is overwritten with `s`,
                    // valid UTF-8 of the same length, so `m` stays a str.
                    unsafe { m.as_bytes_mut() }.copy_from_slice(s.as_bytes());
                    return Ok(());
                }
            }
        }
        *slot = Value::Text(Arc::from(s));
        Ok(())
    }

    /// Reads one TOAST datum (length-prefixed).
    fn datum(&mut self) -> Result<&'a [u8], Bad> {
        let n = self.varint_len()?;
        self.take(n)
    }

    /// Reads one non-NULL field that may be a TOAST datum.
    fn field_t(&mut self, ty: SqlType, toasted: bool, toast: &dyn ToastFetch) -> PgResult<Value> {
        if !toasted {
            return Ok(self.field(ty)?);
        }
        let raw = toast.detoast(self.datum()?)?;
        Ok(value_from_raw(ty, raw)?)
    }

    /// Skips one non-NULL field of type `ty`.
    fn skip(&mut self, ty: SqlType) -> Result<(), Bad> {
        match ty {
            SqlType::Bool => self.take(1).map(drop),
            SqlType::Int2 => self.take(2).map(drop),
            SqlType::Int4 | SqlType::Oid | SqlType::Xid | SqlType::Reg(_) | SqlType::Enum(_) => {
                self.take(4).map(drop)
            }
            SqlType::Int8
            | SqlType::Timestamp
            | SqlType::TimestampTz
            | SqlType::PgLsn
            | SqlType::Xid8
            | SqlType::Float8 => self.take(8).map(drop),
            SqlType::Numeric(_) => {
                self.take(1)?;
                self.varint().map(drop)
            }
            SqlType::Text
            | SqlType::Varchar(_)
            | SqlType::Char(_)
            | SqlType::Name
            | SqlType::Refcursor
            | SqlType::InternalChar
            | SqlType::Unknown
            | SqlType::Bytea
            | SqlType::Json
            | SqlType::Jsonb => {
                let n = self.varint_len()?;
                self.take(n).map(drop)
            }
            SqlType::Uuid => self.take(16).map(drop),
            _ => self.field(ty).map(drop),
        }
    }
}

/// Whether values of `ty` are stored as text (`Value::Text`).
fn is_text(ty: SqlType) -> bool {
    ty.is_text_like() || ty == SqlType::Unknown
}

/// A detoasted variable-length field as a value of `ty`.
fn value_from_raw(ty: SqlType, raw: Vec<u8>) -> Result<Value, Bad> {
    Ok(match ty {
        SqlType::Text
        | SqlType::Varchar(_)
        | SqlType::Char(_)
        | SqlType::Name
        | SqlType::Refcursor
        | SqlType::InternalChar
        | SqlType::Unknown => {
            let s = String::from_utf8(raw).map_err(|_| Bad("invalid UTF-8"))?;
            Value::Text(Arc::from(s))
        }
        SqlType::Bytea => Value::Bytea(Arc::from(raw)),
        SqlType::Json => {
            let s = String::from_utf8(raw).map_err(|_| Bad("invalid UTF-8"))?;
            Value::Json(Arc::from(s))
        }
        SqlType::Jsonb => {
            let s = std::str::from_utf8(&raw).map_err(|_| Bad("invalid UTF-8"))?;
            Value::Jsonb(Arc::new(
                pgtypes::json::parse_jsonb(s).map_err(|_| Bad("bad jsonb"))?,
            ))
        }
        SqlType::Array(_) => Value::from_binary(ty, &raw).map_err(|_| Bad("bad array"))?,
        _ => return Err(Bad("TOAST datum in a fixed-size column")),
    })
}

/// A row's header: attribute count, null bitmap, toast bitmap (empty when
/// nothing is toasted).
struct Header<'a> {
    natts: usize,
    nulls: &'a [u8],
    toasted: &'a [u8],
}

/// Reads the header: (header, reader positioned at the fields).
fn header_t<'a>(data: &'a [u8]) -> Result<(Header<'a>, Reader<'a>), Bad> {
    let mut r = Reader { b: data, pos: 0 };
    let word = u16::from_le_bytes(r.arr()?);
    let natts = (word & !HAS_TOASTED) as usize;
    let nulls = r.take(natts.div_ceil(8))?;
    let toasted = if word & HAS_TOASTED != 0 {
        r.take(natts.div_ceil(8))?
    } else {
        &[]
    };
    Ok((
        Header {
            natts,
            nulls,
            toasted,
        },
        r,
    ))
}

/// The TOAST datums of a row: (column, datum bytes). Empty for a row
/// without any (the common case costs a header read).
pub fn toasted_fields(data: &[u8], types: &[SqlType]) -> PgResult<Vec<(usize, Vec<u8>)>> {
    let (h, mut r) = header_t(data)?;
    let mut out = Vec::new();
    if h.toasted.is_empty() {
        return Ok(out);
    }
    if h.natts > types.len() {
        return Err(corrupt("more attributes than columns"));
    }
    for (i, &ty) in types[..h.natts].iter().enumerate() {
        if is_null(h.nulls, i) {
            continue;
        }
        if is_null(h.toasted, i) {
            out.push((i, r.datum()?.to_vec()));
        } else {
            r.skip(ty)?;
        }
    }
    Ok(out)
}

fn is_null(bitmap: &[u8], i: usize) -> bool {
    bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
}

/// How many attributes the row stores: columns added to the table after
/// it was written are not among them (their value is the column's
/// "missing value", PostgreSQL's attmissingval, or NULL).
pub fn stored_natts(data: &[u8]) -> PgResult<usize> {
    Ok(header_t(data)?.0.natts)
}

/// Decodes a whole row for columns of `types`. Rows shorter than `types`
/// (columns added later) yield NULL for the missing columns. Corrupted data
/// is XX001, never a panic.
/// TOAST datums are read back through `toast`.
pub fn decode_row(data: &[u8], types: &[SqlType], toast: &dyn ToastFetch) -> PgResult<Vec<Value>> {
    let mut out = Vec::with_capacity(types.len());
    decode_row_into(data, types, &mut out, toast)?;
    Ok(out)
}

/// As [`decode_row`], reusing `out` (cleared first).
pub fn decode_row_into(
    data: &[u8],
    types: &[SqlType],
    out: &mut Vec<Value>,
    toast: &dyn ToastFetch,
) -> PgResult<()> {
    decode_row_needed(data, types, None, out, toast)
}

/// As [`decode_row_into`], decoding only the columns `needed` marks (None:
/// all; a column past its end counts as needed): the others are skipped
/// unread (not detoasted) and are NULL. With a mask, `out` is reused as it
/// is when it already has one value per column — the caller keeps it for
/// rows of the same table and mask, so the columns not needed stay NULL
/// and are never written — and the fields after the last needed one are
/// not read at all.
pub fn decode_row_needed(
    data: &[u8],
    types: &[SqlType],
    needed: Option<&[bool]>,
    out: &mut Vec<Value>,
    toast: &dyn ToastFetch,
) -> PgResult<()> {
    let Some(mask) = needed else {
        return decode_all(data, types, out, toast);
    };
    let (h, mut r) = header_t(data)?;
    if out.len() != types.len() {
        out.clear();
        // Each NULL made in place (`resize` clones its value per slot).
        out.resize_with(types.len(), || Value::Null);
    }
    let end = if mask.len() < types.len() {
        types.len()
    } else {
        mask.iter().rposition(|&b| b).map_or(0, |l| l + 1)
    };
    for (i, (&ty, slot)) in types.iter().zip(out.iter_mut()).enumerate().take(end) {
        let present = i < h.natts && !is_null(h.nulls, i);
        if mask.get(i) != Some(&false) {
            if !present {
                *slot = Value::Null;
            } else if is_null(h.toasted, i) {
                *slot = r.field_t(ty, true, toast)?;
            } else if is_text(ty) {
                r.text_into(slot)?;
            } else {
                *slot = r.field(ty)?;
            }
        } else if present {
            if is_null(h.toasted, i) {
                r.datum()?;
            } else {
                r.skip(ty)?;
            }
        }
    }
    Ok(())
}

/// A decode plan for rows of one table read with one column mask, built
/// once per scan ([`RowLayout::new`]) and used by [`decode_row_layout`].
///
/// It holds one op per column up to the last needed one (every column
/// without a mask): a needed column is decoded by its type (int4, int8,
/// date, float8, numeric and text-like columns have their own ops, the
/// rest read through the general field reader); a column not needed is
/// skipped by its stored size, and a run of fixed-width columns not needed
/// (bool, int2/4/8, oid, date, float8, timestamp, uuid, interval, …)
/// becomes one jump over their summed widths. The ops assume every column
/// they cover is stored and non-NULL and nothing is toasted, so that each
/// field starts where the previous ended; [`decode_row_layout`] checks
/// this per row from the header and otherwise uses [`decode_row_needed`].
///
/// Invariant: `decode_row_layout(data, &RowLayout::new(types, needed), out,
/// toast)` leaves `out` and returns exactly what `decode_row_needed(data,
/// types, needed, out, toast)` would (property-tested).
#[derive(Clone, Debug)]
pub struct RowLayout {
    types: Vec<SqlType>,
    needed: Option<Vec<bool>>,
    /// The columns the ops cover: up to the last needed one.
    end: usize,
    ops: Vec<Op>,
}

/// One step of a [`RowLayout`]: `usize` fields are column indexes
/// (`Skip`'s is a byte count).
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Fixed-width fields not needed: this many bytes.
    Skip(usize),
    /// A varint-length field not needed (text, bytea, json).
    SkipVar,
    /// A numeric not needed: scale byte + varint.
    SkipNumeric,
    /// Any other field not needed, skipped as [`Reader::skip`] does.
    SkipField(SqlType),
    Int4(usize),
    Int8(usize),
    Date(usize),
    Float8(usize),
    Numeric(usize),
    /// A text-like column, read into its slot as [`Reader::text_into`].
    Text(usize),
    /// Any other needed column, read as [`Reader::field`].
    Field(usize, SqlType),
}

/// The stored width of a field of `ty` when it is fixed and reading it
/// can fail only by running out of bytes (so skipping it is a jump).
fn fixed_width(ty: SqlType) -> Option<usize> {
    Some(match ty {
        SqlType::Bool => 1,
        SqlType::Int2 => 2,
        SqlType::Int4
        | SqlType::Oid
        | SqlType::Xid
        | SqlType::Reg(_)
        | SqlType::Enum(_)
        | SqlType::Date => 4,
        SqlType::Int8
        | SqlType::Timestamp
        | SqlType::TimestampTz
        | SqlType::PgLsn
        | SqlType::Xid8
        | SqlType::Float8 => 8,
        SqlType::Uuid | SqlType::Interval => 16,
        SqlType::Void | SqlType::Trigger => 0,
        _ => return None,
    })
}

/// Stores `v` as a `Value::$var` in `slot`: in place when the slot holds
/// one already (a scan's reused row), without dropping the old value or
/// building the new one on the stack first.
macro_rules! put {
    ($slot:expr, $var:ident, $v:expr) => {{
        let v = $v;
        match &mut $slot {
            Value::$var(x) => *x = v,
            s => *s = Value::$var(v),
        }
    }};
}

impl RowLayout {
    /// The plan for rows of columns `types` decoded with mask `needed`
    /// (as [`decode_row_needed`] takes them).
    pub fn new(types: &[SqlType], needed: Option<&[bool]>) -> RowLayout {
        let end = match needed {
            Some(mask) if mask.len() >= types.len() => {
                mask.iter().rposition(|&b| b).map_or(0, |l| l + 1)
            }
            _ => types.len(),
        };
        let mut ops: Vec<Op> = Vec::new();
        for (i, &ty) in types.iter().enumerate().take(end) {
            let op = if needed.and_then(|m| m.get(i)) != Some(&false) {
                match ty {
                    SqlType::Int4 => Op::Int4(i),
                    SqlType::Int8 => Op::Int8(i),
                    SqlType::Date => Op::Date(i),
                    SqlType::Float8 => Op::Float8(i),
                    SqlType::Numeric(_) => Op::Numeric(i),
                    // Without a mask every column is read with `field`, as
                    // `decode_all` does (the same value as `text_into`).
                    _ if is_text(ty) && needed.is_some() => Op::Text(i),
                    _ => Op::Field(i, ty),
                }
            } else if let Some(w) = fixed_width(ty) {
                if let Some(Op::Skip(n)) = ops.last_mut() {
                    *n += w;
                    continue;
                }
                Op::Skip(w)
            } else if is_text(ty) || matches!(ty, SqlType::Bytea | SqlType::Json | SqlType::Jsonb) {
                Op::SkipVar
            } else if let SqlType::Numeric(_) = ty {
                Op::SkipNumeric
            } else {
                Op::SkipField(ty)
            };
            ops.push(op);
        }
        RowLayout {
            types: types.to_vec(),
            needed: needed.map(<[bool]>::to_vec),
            end,
            ops,
        }
    }

    /// The ops over the fields (at `r`) of a row whose covered columns are
    /// all stored, non-NULL and not toasted; `out` has one slot per column.
    #[inline]
    fn run(&self, r: &mut Reader<'_>, out: &mut [Value]) -> Result<(), Bad> {
        for op in &self.ops {
            match *op {
                Op::Skip(n) => {
                    r.take(n)?;
                }
                Op::SkipVar => {
                    let n = r.varint_len()?;
                    r.take(n)?;
                }
                Op::SkipNumeric => {
                    r.byte()?;
                    r.varint()?;
                }
                Op::SkipField(ty) => r.skip(ty)?,
                Op::Int4(c) => put!(out[c], Int4, i32::from_le_bytes(r.arr()?)),
                Op::Int8(c) => put!(out[c], Int8, i64::from_le_bytes(r.arr()?)),
                Op::Date(c) => put!(out[c], Date, i32::from_le_bytes(r.arr()?)),
                Op::Float8(c) => put!(out[c], Float8, f64::from_le_bytes(r.arr()?)),
                Op::Numeric(c) => {
                    let scale = r.byte()?;
                    let m = unzigzag(r.varint()?);
                    let v = Numeric::new(m, scale as u16).map_err(|_| Bad("bad numeric scale"))?;
                    put!(out[c], Numeric, v)
                }
                Op::Text(c) => r.text_into(&mut out[c])?,
                Op::Field(c, ty) => out[c] = r.field(ty)?,
            }
        }
        Ok(())
    }
}

/// As [`decode_row_needed`] with the types and mask `layout` was built
/// from, and the same result in every case (values, untouched slots,
/// errors): a row whose header shows every column the layout covers
/// stored and non-NULL and no TOAST datum — checked from the header's
/// bytes — runs the layout's ops; any other row, and any row the ops find
/// corrupt, goes through [`decode_row_needed`].
pub fn decode_row_layout(
    data: &[u8],
    layout: &RowLayout,
    out: &mut Vec<Value>,
    toast: &dyn ToastFetch,
) -> PgResult<()> {
    if fast_path(data, layout, out).is_none() {
        decode_row_needed(data, &layout.types, layout.needed.as_deref(), out, toast)?;
    }
    Ok(())
}

/// [`decode_row_layout`]'s ops: None when the row needs the general path
/// (NULLs, TOAST, missing columns) or they failed (the general path then
/// finds the same error).
#[inline]
fn fast_path(data: &[u8], layout: &RowLayout, out: &mut Vec<Value>) -> Option<()> {
    let word = u16::from_le_bytes(data.get(..2)?.try_into().ok()?);
    if word & HAS_TOASTED != 0 {
        return None;
    }
    let natts = word as usize;
    let end = layout.end;
    if natts < end {
        return None;
    }
    let bm_end = 2 + natts.div_ceil(8);
    let nulls = data.get(2..bm_end)?;
    // No NULL among the covered columns: their bitmap bits are all clear.
    let (full, bits) = (end / 8, end % 8);
    if nulls.get(..full)?.iter().any(|&b| b != 0) {
        return None;
    }
    if bits != 0 && nulls.get(full)? & ((1u8 << bits) - 1) != 0 {
        return None;
    }
    let ncols = layout.types.len();
    if out.len() != ncols {
        out.clear();
        out.resize_with(ncols, || Value::Null);
    }
    let mut r = Reader {
        b: data,
        pos: bm_end,
    };
    layout.run(&mut r, out).ok()?;
    // Without a mask, a row of exactly the table's attributes must end
    // with its last field (decode_all's "trailing bytes").
    if layout.needed.is_none() && natts == ncols && r.pos != data.len() {
        return None;
    }
    Some(())
}

/// Every column (see [`decode_row_into`]).
fn decode_all(
    data: &[u8],
    types: &[SqlType],
    out: &mut Vec<Value>,
    toast: &dyn ToastFetch,
) -> PgResult<()> {
    out.clear();
    let (h, mut r) = header_t(data)?;
    for (i, &ty) in types.iter().enumerate() {
        if i >= h.natts || is_null(h.nulls, i) {
            out.push(Value::Null);
        } else if is_null(h.toasted, i) {
            out.push(r.field_t(ty, true, toast)?);
        } else {
            out.push(r.field(ty)?);
        }
    }
    // More attributes than `types`: a row written under a newer definition
    // of the table (an ALTER TABLE … ADD COLUMN not yet committed, or
    // rolled back) read with an older one; the extra ones are ignored, as
    // PostgreSQL's heap_deform_tuple does.
    if h.natts <= types.len() && r.pos != data.len() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(())
}

/// Decodes only column `idx` (a WHERE on one column need not decode the
/// rest, nor detoast any other column).
pub fn decode_column(
    data: &[u8],
    types: &[SqlType],
    idx: usize,
    toast: &dyn ToastFetch,
) -> PgResult<Value> {
    let (h, mut r) = header_t(data)?;
    let ty = *types
        .get(idx)
        .ok_or_else(|| PgError::internal("decode_column: column index out of range"))?;
    if idx >= h.natts || is_null(h.nulls, idx) {
        return Ok(Value::Null);
    }
    for (i, &t) in types[..idx].iter().enumerate() {
        if !is_null(h.nulls, i) {
            if is_null(h.toasted, i) {
                r.datum()?;
            } else {
                r.skip(t)?;
            }
        }
    }
    r.field_t(ty, is_null(h.toasted, idx), toast)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all_types() -> Vec<SqlType> {
        vec![
            SqlType::Bool,
            SqlType::Int2,
            SqlType::Int4,
            SqlType::Int8,
            SqlType::Float8,
            SqlType::NUMERIC,
            SqlType::Text,
            SqlType::Varchar(Some(10)),
            SqlType::Char(3),
            SqlType::Timestamp,
            SqlType::TimestampTz,
            SqlType::PgLsn,
            SqlType::Oid,
            SqlType::Xid8,
            SqlType::Xid,
            SqlType::Snapshot,
            SqlType::Json,
            SqlType::Jsonb,
            SqlType::Uuid,
            SqlType::Inet,
            SqlType::Cidr,
        ]
    }

    fn arb_value(ty: SqlType) -> BoxedStrategy<Value> {
        let v: BoxedStrategy<Value> = match ty {
            SqlType::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
            SqlType::Int2 => any::<i16>().prop_map(Value::Int2).boxed(),
            SqlType::Int4 => any::<i32>().prop_map(Value::Int4).boxed(),
            SqlType::Int8 => any::<i64>().prop_map(Value::Int8).boxed(),
            SqlType::Float8 => any::<f64>()
                .prop_filter("nan", |f| !f.is_nan())
                .prop_map(Value::Float8)
                .boxed(),
            SqlType::Numeric(_) => (any::<i128>(), 0u16..=38)
                .prop_map(|(m, s)| Value::Numeric(Numeric::new(m, s).unwrap()))
                .boxed(),
            SqlType::Timestamp => any::<i64>().prop_map(Value::Timestamp).boxed(),
            SqlType::TimestampTz => any::<i64>().prop_map(Value::TimestampTz).boxed(),
            SqlType::PgLsn => any::<u64>().prop_map(Value::PgLsn).boxed(),
            SqlType::Oid => any::<u32>().prop_map(Value::Oid).boxed(),
            SqlType::Xid8 => any::<u64>().prop_map(Value::Xid8).boxed(),
            SqlType::Xid => any::<u32>().prop_map(Value::Xid).boxed(),
            SqlType::Uuid => any::<[u8; 16]>().prop_map(Value::Uuid).boxed(),
            SqlType::Date => any::<i32>().prop_map(Value::Date).boxed(),
            SqlType::Interval => (any::<i32>(), any::<i32>(), any::<i64>())
                .prop_map(|(m, d, us)| Value::Interval(pgtypes::interval::Interval::new(m, d, us)))
                .boxed(),
            SqlType::Inet | SqlType::Cidr => (any::<bool>(), any::<[u8; 16]>(), 0u8..=128)
                .prop_map(move |(v6, mut addr, bits)| {
                    if !v6 {
                        addr[4..].fill(0);
                    }
                    let bits = if v6 { bits } else { bits % 33 };
                    let a = pgtypes::inet::Inet { v6, bits, addr };
                    if ty == SqlType::Inet {
                        Value::Inet(a)
                    } else {
                        Value::Cidr(a.network())
                    }
                })
                .boxed(),
            SqlType::Json | SqlType::Jsonb => proptest::sample::select(vec![
                "null",
                "[1, \"a\", {\"k\": [true, null]}]",
                "{\"bb\": 1.50, \"a\": {}}",
                "\"\\u00e9\\n\"",
                "-12e-3",
            ])
            .prop_map(move |t| Value::from_text(ty, t).unwrap())
            .boxed(),
            SqlType::Snapshot => (
                any::<u64>(),
                any::<u64>(),
                proptest::collection::vec(any::<u64>(), 0..4),
            )
                .prop_map(|(a, b, x)| {
                    Value::Snapshot(Arc::new(PgSnapshot {
                        xmin: a,
                        xmax: b,
                        xip: x,
                    }))
                })
                .boxed(),
            _ => ".{0,20}"
                .prop_map(|s: String| Value::Text(Arc::from(s)))
                .boxed(),
        };
        prop_oneof![1 => Just(Value::Null), 5 => v].boxed()
    }

    fn arb_row() -> impl Strategy<Value = (Vec<SqlType>, Vec<Value>)> {
        proptest::collection::vec(proptest::sample::select(all_types()), 0..12).prop_flat_map(
            |types| {
                let vals: Vec<_> = types.iter().map(|t| arb_value(*t)).collect();
                (Just(types), vals)
            },
        )
    }

    /// Types for the layout tests: every type of [`all_types`], the
    /// fixed-width ones a layout skips by width, and the ones it decodes
    /// with their own ops, more often.
    fn layout_types() -> Vec<SqlType> {
        let mut t = all_types();
        t.extend([
            SqlType::Date,
            SqlType::Interval,
            SqlType::Int4,
            SqlType::Int8,
            SqlType::Date,
            SqlType::NUMERIC,
            SqlType::Char(1),
            SqlType::Text,
        ]);
        t
    }

    /// A row (its values' types) and the types it is read with: the same,
    /// or fewer (a row written under a newer definition) or more (columns
    /// added since it was written).
    fn arb_layout_row() -> impl Strategy<Value = (Vec<SqlType>, Vec<Value>)> {
        (
            proptest::collection::vec(proptest::sample::select(layout_types()), 0..18),
            0usize..4,
            0usize..3,
            proptest::collection::vec(proptest::sample::select(layout_types()), 0..3),
        )
            .prop_flat_map(|(types, shape, cut, extra)| {
                let vals: Vec<_> = types
                    .iter()
                    .map(|&t| {
                        if shape == 0 {
                            arb_value(t)
                        } else {
                            // Mostly rows without NULLs (the fast path).
                            arb_value(t)
                                .prop_map(move |v| if v.is_null() { fill(t) } else { v })
                                .boxed()
                        }
                    })
                    .collect();
                let mut read = types.clone();
                match shape {
                    1 => read.truncate(types.len().saturating_sub(cut)),
                    2 => read.extend(extra),
                    _ => {}
                }
                (Just(read), vals)
            })
    }

    /// A non-NULL value of `ty` (any will do).
    fn fill(ty: SqlType) -> Value {
        match ty {
            SqlType::Bool => Value::Bool(true),
            SqlType::Int2 => Value::Int2(7),
            SqlType::Int4 => Value::Int4(70000),
            SqlType::Int8 => Value::Int8(-7),
            SqlType::Float8 => Value::Float8(0.5),
            SqlType::Numeric(_) => Value::Numeric(Numeric::new(-12345, 2).unwrap()),
            SqlType::Timestamp => Value::Timestamp(1),
            SqlType::TimestampTz => Value::TimestampTz(2),
            SqlType::PgLsn => Value::PgLsn(3),
            SqlType::Oid => Value::Oid(4),
            SqlType::Xid8 => Value::Xid8(5),
            SqlType::Xid => Value::Xid(6),
            SqlType::Uuid => Value::Uuid([9; 16]),
            SqlType::Date => Value::Date(-1),
            SqlType::Interval => Value::Interval(pgtypes::interval::Interval::new(1, 2, 3)),
            SqlType::Snapshot => Value::Snapshot(Arc::new(PgSnapshot {
                xmin: 1,
                xmax: 9,
                xip: vec![3, 4],
            })),
            SqlType::Json | SqlType::Jsonb => Value::from_text(ty, "[1]").unwrap(),
            SqlType::Inet | SqlType::Cidr => {
                let a = pgtypes::inet::Inet {
                    v6: false,
                    bits: 32,
                    addr: [0; 16],
                };
                if ty == SqlType::Inet {
                    Value::Inet(a)
                } else {
                    Value::Cidr(a)
                }
            }
            _ => Value::text("abc"),
        }
    }

    fn arb_mask() -> impl Strategy<Value = Option<Vec<bool>>> {
        prop_oneof![
            1 => Just(None),
            6 => proptest::collection::vec(any::<bool>(), 0..20).prop_map(Some),
        ]
    }

    /// `decode_row_needed` and `decode_row_layout` on the same bytes from
    /// the same `out`: the same result and the same `out`.
    fn same_as_needed(data: &[u8], types: &[SqlType], mask: Option<&[bool]>, start: &[Value]) {
        let layout = RowLayout::new(types, mask);
        let (mut a, mut b) = (start.to_vec(), start.to_vec());
        let ra = decode_row_needed(data, types, mask, &mut a, &NoToast);
        let rb = decode_row_layout(data, &layout, &mut b, &NoToast);
        assert_eq!(ra, rb, "result of {data:?} as {types:?} with {mask:?}");
        if ra.is_ok() {
            assert_eq!(a, b, "row of {data:?} as {types:?} with {mask:?}");
        }
    }

    proptest! {
        #[test]
        fn layout_decodes_as_needed((types, values) in arb_layout_row(), mask in arb_mask(),
                                    (_, prev) in arb_layout_row()) {
            let mut buf = Vec::new();
            encode_row(&values, &mut buf);
            // From a fresh buffer, and from one left by another row read
            // with the same mask (the scan's reuse; text slots reused).
            same_as_needed(&buf, &types, mask.as_deref(), &[]);
            let mut start = Vec::new();
            let mut pbuf = Vec::new();
            encode_row(&prev, &mut pbuf);
            if decode_row_needed(&pbuf, &types, mask.as_deref(), &mut start, &NoToast).is_ok() {
                same_as_needed(&buf, &types, mask.as_deref(), &start);
            }
            let mut again = Vec::new();
            encode_row(&values, &mut again);
            same_as_needed(&again, &types, mask.as_deref(), &start);
        }

        #[test]
        fn layout_on_damaged_rows_is_as_needed((types, values) in arb_layout_row(),
                                               mask in arb_mask(),
                                               cut in any::<prop::sample::Index>(),
                                               at in any::<prop::sample::Index>(),
                                               byte in any::<u8>()) {
            let mut buf = Vec::new();
            encode_row(&values, &mut buf);
            // Truncated: never a panic, and when the layout's columns are
            // cut short, an error.
            let n = cut.index(buf.len());
            same_as_needed(&buf[..n], &types, mask.as_deref(), &[]);
            if n < 2 {
                let layout = RowLayout::new(&types, mask.as_deref());
                prop_assert!(decode_row_layout(&buf[..n], &layout, &mut Vec::new(), &NoToast).is_err());
            }
            // One byte changed.
            if !buf.is_empty() {
                let i = at.index(buf.len());
                buf[i] = byte;
                same_as_needed(&buf, &types, mask.as_deref(), &[]);
            }
        }

        #[test]
        fn layout_on_random_bytes_is_as_needed(data in proptest::collection::vec(any::<u8>(), 0..64),
                                               types in proptest::collection::vec(proptest::sample::select(layout_types()), 0..8),
                                               mask in arb_mask()) {
            same_as_needed(&data, &types, mask.as_deref(), &[]);
        }

        #[test]
        fn round_trip((types, values) in arb_row()) {
            let mut buf = Vec::new();
            encode_row(&values, &mut buf);
            let back = decode_row(&buf, &types, &NoToast).unwrap();
            prop_assert_eq!(&back, &values);
            for (i, v) in values.iter().enumerate() {
                prop_assert_eq!(&decode_column(&buf, &types, i, &NoToast).unwrap(), v);
            }
        }

        #[test]
        fn needed_columns_decode_the_rest_null((types, values) in arb_row(),
                                               mask in proptest::collection::vec(any::<bool>(), 0..14)) {
            let mut buf = Vec::new();
            encode_row(&values, &mut buf);
            let mut out = Vec::new();
            decode_row_needed(&buf, &types, Some(&mask), &mut out, &NoToast).unwrap();
            prop_assert_eq!(out.len(), values.len());
            for (i, (got, v)) in out.iter().zip(&values).enumerate() {
                // A column past the mask's end counts as needed.
                if mask.get(i) == Some(&false) {
                    prop_assert_eq!(got, &Value::Null);
                } else {
                    prop_assert_eq!(got, v);
                }
            }
        }

        #[test]
        fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64),
                                    types in proptest::collection::vec(proptest::sample::select(all_types()), 0..8)) {
            let _ = decode_row(&data, &types, &NoToast);
            for i in 0..types.len() {
                let _ = decode_column(&data, &types, i, &NoToast);
            }
        }

        #[test]
        fn truncation_is_an_error((types, values) in arb_row(), cut in any::<prop::sample::Index>()) {
            let mut buf = Vec::new();
            encode_row(&values, &mut buf);
            let n = cut.index(buf.len());
            // Any strict prefix either fails or (never) decodes to the same row.
            if let Ok(v) = decode_row(&buf[..n], &types, &NoToast) { prop_assert_ne!(v, values); }
        }
    }

    #[test]
    fn layout_takes_the_fast_path_without_nulls() {
        // lineitem's shape: ints, numerics, chars, dates, texts.
        let types = [
            SqlType::Int8,
            SqlType::Int4,
            SqlType::Int4,
            SqlType::Int4,
            SqlType::NUMERIC,
            SqlType::NUMERIC,
            SqlType::NUMERIC,
            SqlType::NUMERIC,
            SqlType::Char(1),
            SqlType::Char(1),
            SqlType::Date,
            SqlType::Date,
            SqlType::Date,
            SqlType::Char(25),
            SqlType::Char(10),
            SqlType::Varchar(Some(44)),
        ];
        let mut values: Vec<Value> = types.iter().map(|&t| fill(t)).collect();
        let mut buf = Vec::new();
        encode_row(&values, &mut buf);
        let mut mask = [false; 16];
        for c in [4, 5, 6, 10] {
            mask[c] = true;
        }
        let layout = RowLayout::new(&types, Some(&mask));
        // Columns 0..=3 are one 20-byte jump.
        assert!(matches!(layout.ops[0], Op::Skip(20)));
        assert_eq!(layout.end, 11);
        let mut out = Vec::new();
        assert!(fast_path(&buf, &layout, &mut out).is_some());
        assert_eq!(out[5], values[5]);
        assert_eq!(out[10], values[10]);
        assert_eq!(out[0], Value::Null);
        // A NULL among the covered columns: the general path, same row.
        values[2] = Value::Null;
        buf.clear();
        encode_row(&values, &mut buf);
        assert!(fast_path(&buf, &layout, &mut out).is_none());
        decode_row_layout(&buf, &layout, &mut out, &NoToast).unwrap();
        assert_eq!(out[10], values[10]);
        // …but not past them.
        values[2] = fill(SqlType::Int4);
        values[12] = Value::Null;
        buf.clear();
        encode_row(&values, &mut buf);
        assert!(fast_path(&buf, &layout, &mut out).is_some());
        // Without a mask: every column.
        let all = RowLayout::new(&types, None);
        assert!(fast_path(&buf, &all, &mut out).is_none());
        values[12] = fill(SqlType::Date);
        buf.clear();
        encode_row(&values, &mut buf);
        assert!(fast_path(&buf, &all, &mut out).is_some());
        assert_eq!(out, values);
        // Trailing bytes: an error, as decode_row's.
        buf.push(0);
        assert!(decode_row_layout(&buf, &all, &mut out, &NoToast).is_err());
    }

    #[test]
    fn reused_text_is_overwritten_only_when_unshared() {
        let types = [SqlType::Int4, SqlType::Char(4), SqlType::Text];
        let row = |i: i32, a: &str, b: &str| {
            let mut out = Vec::new();
            encode_row(
                &[
                    Value::Int4(i),
                    Value::Text(Arc::from(a)),
                    Value::Text(Arc::from(b)),
                ],
                &mut out,
            );
            out
        };
        let mask = [true, true, true];
        let mut out = Vec::new();
        decode_row_needed(
            &row(1, "abcd", "x"),
            &types,
            Some(&mask),
            &mut out,
            &NoToast,
        )
        .unwrap();
        let kept = out[1].clone(); // shared: must not change under the reader
        decode_row_needed(
            &row(2, "wxyz", "yy"),
            &types,
            Some(&mask),
            &mut out,
            &NoToast,
        )
        .unwrap();
        assert_eq!(kept, Value::Text(Arc::from("abcd")));
        assert_eq!(out[1], Value::Text(Arc::from("wxyz")));
        drop(kept);
        decode_row_needed(
            &row(3, "pqrs", "zz"),
            &types,
            Some(&mask),
            &mut out,
            &NoToast,
        )
        .unwrap();
        assert_eq!(
            out,
            [
                Value::Int4(3),
                Value::Text(Arc::from("pqrs")),
                Value::Text(Arc::from("zz"))
            ]
        );
        assert!(
            decode_row_needed(&row(4, "é", "é"), &types, Some(&mask), &mut out, &NoToast).is_ok()
        );
        assert_eq!(out[2], Value::Text(Arc::from("é")));
    }

    #[test]
    fn added_columns_decode_as_null() {
        let mut buf = Vec::new();
        encode_row(&[Value::Int4(1), Value::text("x")], &mut buf);
        let v = decode_row(
            &buf,
            &[SqlType::Int4, SqlType::Text, SqlType::Int8],
            &NoToast,
        )
        .unwrap();
        assert_eq!(v, vec![Value::Int4(1), Value::text("x"), Value::Null]);
        // A row wider than the definition reading it: the extra
        // attributes are ignored (heap_deform_tuple).
        assert_eq!(
            decode_row(&buf, &[SqlType::Int4], &NoToast).unwrap(),
            vec![Value::Int4(1)]
        );
        assert_eq!(stored_natts(&buf).unwrap(), 2);
    }

    #[test]
    fn pgbench_row_is_compact() {
        // pgbench_accounts (aid int, bid int, abalance int, filler char(84))
        let mut buf = Vec::new();
        let filler: String = " ".repeat(84);
        encode_row(
            &[
                Value::Int4(1),
                Value::Int4(1),
                Value::Int4(0),
                Value::text(&filler),
            ],
            &mut buf,
        );
        assert_eq!(buf.len(), 2 + 1 + 12 + 1 + 84);
    }
}
