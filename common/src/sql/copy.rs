//! COPY FROM STDIN and COPY TO STDOUT, text and CSV formats (copyfromparse.c,
//! copyto.c).
//!
//! COPY FROM is streaming: CopyData chunks are appended to a carry-over
//! buffer, every complete record is parsed at once (fields split, NULL
//! marker, backslash escapes or CSV quoting, `\.` end marker), converted to
//! the column types and queued in an [`InsertBatch`], which goes to
//! `Heap::multi_insert` every [`crate::sql::executor::BATCH_ROWS`] rows —
//! so memory stays bounded whatever the size of the input. `FREEZE` writes
//! the rows with the frozen xid; it is allowed only into a table created or
//! truncated in the current transaction (55000 otherwise, as PostgreSQL).
//!
//! Errors name the record: `COPY t, line N` (PostgreSQL's CONTEXT line) is
//! put in the error's DETAIL when it has none.

use std::sync::Arc;

use crate::error::{sqlstate, PgError, PgResult};
use crate::sql::catalog::TableDef;
use crate::sql::executor::{check_not_null, conform_row, Ectx, InsertBatch, Vis};
use crate::sql::expr::Expr;
use crate::sql::parser::{CopyFormat, CopyStmt};
use crate::sql::value::Value;

/// An open COPY FROM STDIN (the `state` of a [`crate::sql::session::CopyIn`]).
pub struct CopyInState {
    /// Target table.
    pub table: Arc<TableDef>,
    /// Table column of each input field.
    pub cols: Vec<usize>,
    /// Options.
    pub opts: CopyStmt,
    /// The statement's view.
    pub vis: Vis,
    /// DEFAULT per table column (for columns not in the list).
    pub defaults: Vec<Option<Expr>>,
    /// Rows waiting for insertion.
    pub batch: InsertBatch,
    /// Bytes of an incomplete record.
    pending: Vec<u8>,
    /// Records seen (for messages).
    line: u64,
    /// Rows inserted or queued.
    pub count: u64,
    header_pending: bool,
    /// `\.` seen: ignore the rest.
    eof: bool,
    /// An error was raised: ignore further data.
    pub failed: bool,
}

impl CopyInState {
    /// A new COPY into `table`.
    pub fn new(
        table: Arc<TableDef>,
        cols: Vec<usize>,
        opts: CopyStmt,
        vis: Vis,
        defaults: Vec<Option<Expr>>,
        frozen: bool,
    ) -> CopyInState {
        let header_pending = opts.header;
        CopyInState {
            table,
            cols,
            opts,
            vis,
            defaults,
            batch: InsertBatch::new(frozen, true),
            pending: Vec::new(),
            line: 0,
            count: 0,
            header_pending,
            eof: false,
            failed: false,
        }
    }

    /// Feeds one CopyData chunk.
    pub fn feed(&mut self, ec: &mut Ectx<'_>, data: &[u8]) -> PgResult<()> {
        if self.failed || self.eof {
            return Ok(());
        }
        self.pending.extend_from_slice(data);
        // Records are parsed in place: the buffer is taken out of `self` for
        // the loop (no copy per record) and put back, minus what was
        // consumed, whatever the outcome.
        let pending = std::mem::take(&mut self.pending);
        let mut start = 0;
        let mut res = Ok(());
        while let Some(end) = self.record_end(&pending, start) {
            let mut rec = &pending[start..end];
            if rec.last() == Some(&b'\r') {
                rec = &rec[..rec.len() - 1];
            }
            start = end + 1;
            res = self.process_record(ec, rec);
            if res.is_err() || self.eof {
                break;
            }
        }
        self.pending = pending;
        self.pending.drain(..start);
        res
    }

    /// End of input: the last record may lack its newline.
    pub fn finish(&mut self, ec: &mut Ectx<'_>) -> PgResult<u64> {
        if !self.eof && !self.pending.is_empty() {
            let mut rec = std::mem::take(&mut self.pending);
            if rec.last() == Some(&b'\r') {
                rec.pop();
            }
            if self.opts.format == CopyFormat::Csv
                && csv_open_quote(&rec, self.opts.quote, self.opts.escape)
            {
                return Err(self.context(PgError::new(
                    sqlstate::BAD_COPY_FILE_FORMAT,
                    "unterminated CSV quoted field",
                )));
            }
            self.process_record(ec, &rec)?;
        }
        self.flush(ec)?;
        Ok(self.count)
    }

    fn flush(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        let table = self.table.clone();
        self.batch
            .flush(ec, &self.vis, &table, &mut |_, _| Ok(()))?;
        Ok(())
    }

    /// Index in `pending` of the newline ending the record that starts at
    /// `start`.
    fn record_end(&self, pending: &[u8], start: usize) -> Option<usize> {
        let b = &pending[start..];
        match self.opts.format {
            CopyFormat::Csv => {
                let (q, e) = (self.opts.quote, self.opts.escape);
                let mut in_quote = false;
                let mut i = 0;
                while i < b.len() {
                    let c = b[i];
                    if in_quote {
                        if c == e && e != q && b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        if c == q {
                            if e == q && b.get(i + 1) == Some(&q) {
                                i += 2;
                                continue;
                            }
                            in_quote = false;
                        }
                    } else if c == q {
                        in_quote = true;
                    } else if c == b'\n' {
                        return Some(start + i);
                    }
                    i += 1;
                }
                None
            }
            _ => find_byte(b, b'\n', b'\n').map(|p| start + p),
        }
    }

    fn context(&self, mut e: PgError) -> PgError {
        if e.detail.is_none() {
            e.detail = Some(format!("COPY {}, line {}", self.table.name, self.line));
        }
        e
    }

    fn process_record(&mut self, ec: &mut Ectx<'_>, rec: &[u8]) -> PgResult<()> {
        self.line += 1;
        if self.header_pending {
            self.header_pending = false;
            return Ok(());
        }
        if rec == b"\\." {
            self.eof = true;
            return Ok(());
        }
        ec.tick()?;
        let fields = match self.opts.format {
            CopyFormat::Csv => split_csv(rec, &self.opts),
            _ => split_text(rec, &self.opts),
        }
        .map_err(|e| self.context(e))?;
        let row = self.build_row(ec, fields).map_err(|e| self.context(e))?;
        self.batch.push(row);
        self.count += 1;
        if self.batch.full() {
            self.flush(ec).map_err(|e| self.context(e))?;
        }
        Ok(())
    }

    fn build_row(&self, ec: &mut Ectx<'_>, fields: Vec<Option<String>>) -> PgResult<Vec<Value>> {
        let t = &self.table;
        if fields.len() > self.cols.len() {
            return Err(PgError::new(
                sqlstate::BAD_COPY_FILE_FORMAT,
                "extra data after last expected column",
            ));
        }
        if fields.len() < self.cols.len() {
            let missing = &t.columns[self.cols[fields.len()]].name;
            return Err(PgError::new(
                sqlstate::BAD_COPY_FILE_FORMAT,
                format!("missing data for column \"{missing}\""),
            ));
        }
        let mut row: Vec<Option<Value>> = vec![None; t.columns.len()];
        for (f, &c) in fields.into_iter().zip(&self.cols) {
            let col = &t.columns[c];
            row[c] = Some(match f {
                None => Value::Null,
                Some(s) => Value::from_text(col.ty, &s).map_err(|mut e| {
                    if e.detail.is_none() {
                        e.detail = Some(format!(
                            "COPY {}, line {}, column {}: \"{}\"",
                            t.name, self.line, col.name, s
                        ));
                    }
                    e
                })?,
            });
        }
        let mut out = Vec::with_capacity(row.len());
        for (c, v) in row.into_iter().enumerate() {
            out.push(match v {
                Some(v) => v,
                None => match &self.defaults[c] {
                    Some(d) => {
                        let p = ec.params;
                        crate::sql::expr::eval(d, &[], p, ec)?
                    }
                    None => Value::Null,
                },
            });
        }
        conform_row(t, &mut out)?;
        check_not_null(t, &out)?;
        Ok(out)
    }
}

fn utf8(b: Vec<u8>) -> PgResult<String> {
    String::from_utf8(b).map_err(|e| {
        let bad = e
            .as_bytes()
            .get(e.utf8_error().valid_up_to())
            .copied()
            .unwrap_or(0);
        PgError::new(
            sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
            format!("invalid byte sequence for encoding \"UTF8\": 0x{bad:02x}"),
        )
    })
}

/// The index of the first byte of `hay` equal to `a` or `b`, eight bytes
/// at a time (COPY spends most of its parsing time looking for the next
/// newline, delimiter or backslash; the workspace has no memchr).
fn find_byte(hay: &[u8], a: u8, b: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let (ma, mb) = (LO * u64::from(a), LO * u64::from(b));
    let mut i = 0;
    while i + 8 <= hay.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&hay[i..i + 8]);
        let x = u64::from_le_bytes(w);
        let (xa, xb) = (x ^ ma, x ^ mb);
        // A zero byte in xa or xb is a match (the classic has-zero test;
        // exact for the lowest matching byte, which is all we use).
        let z = (xa.wrapping_sub(LO) & !xa | xb.wrapping_sub(LO) & !xb) & HI;
        if z != 0 {
            return Some(i + (z.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    hay[i..]
        .iter()
        .position(|&c| c == a || c == b)
        .map(|p| i + p)
}

/// Splits a text-format record; None for the NULL marker.
fn split_text(rec: &[u8], o: &CopyStmt) -> PgResult<Vec<Option<String>>> {
    let mut out = Vec::new();
    let null = o.null.as_bytes();
    let d = o.delimiter;
    let mut i = 0;
    loop {
        // Raw field extent (a backslash escapes the next byte).
        let start = i;
        loop {
            match find_byte(&rec[i..], d, b'\\') {
                None => {
                    i = rec.len();
                    break;
                }
                Some(p) => {
                    i += p;
                    if rec[i] == d {
                        break;
                    }
                    i += 2; // the backslash and the byte it escapes
                    if i >= rec.len() {
                        i = rec.len();
                        break;
                    }
                }
            }
        }
        let end = i;
        let raw = &rec[start..end];
        if raw == null {
            out.push(None);
        } else {
            out.push(Some(utf8(unescape_text(raw))?));
        }
        if i >= rec.len() {
            break;
        }
        i += 1; // delimiter
    }
    Ok(out)
}

fn unescape_text(raw: &[u8]) -> Vec<u8> {
    if !raw.contains(&b'\\') {
        return raw.to_vec();
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' || i + 1 >= raw.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let n = raw[i + 1];
        i += 2;
        match n {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(n - b'0');
                let mut k = 0;
                while k < 2 && i < raw.len() && (b'0'..=b'7').contains(&raw[i]) {
                    v = v * 8 + u32::from(raw[i] - b'0');
                    i += 1;
                    k += 1;
                }
                out.push((v & 0xff) as u8);
            }
            b'x' if i < raw.len() && raw[i].is_ascii_hexdigit() => {
                let mut v = 0u32;
                let mut k = 0;
                while k < 2 && i < raw.len() && raw[i].is_ascii_hexdigit() {
                    v = v * 16 + (raw[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    out
}

fn csv_open_quote(rec: &[u8], q: u8, e: u8) -> bool {
    let mut in_quote = false;
    let mut i = 0;
    while i < rec.len() {
        let c = rec[i];
        if in_quote {
            if c == e && e != q && rec.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            if c == q {
                if e == q && rec.get(i + 1) == Some(&q) {
                    i += 2;
                    continue;
                }
                in_quote = false;
            }
        } else if c == q {
            in_quote = true;
        }
        i += 1;
    }
    in_quote
}

/// Splits a CSV record; None for an unquoted NULL string.
fn split_csv(rec: &[u8], o: &CopyStmt) -> PgResult<Vec<Option<String>>> {
    let (d, q, e) = (o.delimiter, o.quote, o.escape);
    let null = o.null.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let mut field = Vec::new();
        let mut quoted = false;
        let mut raw_start = i;
        loop {
            if i >= rec.len() || rec[i] == d {
                break;
            }
            if rec[i] == q {
                quoted = true;
                i += 1;
                loop {
                    if i >= rec.len() {
                        return Err(PgError::new(
                            sqlstate::BAD_COPY_FILE_FORMAT,
                            "unterminated CSV quoted field",
                        ));
                    }
                    let c = rec[i];
                    // An escape before a quote (a doubled quote when they
                    // are the same character) is a literal quote.
                    if c == e && rec.get(i + 1) == Some(&q) {
                        field.push(q);
                        i += 2;
                        continue;
                    }
                    if c == q {
                        i += 1;
                        break;
                    }
                    field.push(c);
                    i += 1;
                }
                raw_start = usize::MAX;
            } else {
                field.push(rec[i]);
                i += 1;
            }
        }
        let is_null = !quoted && raw_start != usize::MAX && field == null;
        out.push(if is_null { None } else { Some(utf8(field)?) });
        if i >= rec.len() {
            break;
        }
        i += 1;
    }
    Ok(out)
}

/// Formats one row for COPY TO (with its newline).
pub fn format_row(vals: &[Value], o: &CopyStmt, out: &mut Vec<u8>) {
    out.clear();
    for (i, v) in vals.iter().enumerate() {
        if i > 0 {
            out.push(o.delimiter);
        }
        if v.is_null() {
            out.extend_from_slice(o.null.as_bytes());
            continue;
        }
        let s = v.to_text_string();
        format_field(s.as_bytes(), o, out);
    }
    out.push(b'\n');
}

/// Formats the header line for COPY TO … HEADER.
pub fn format_header(names: &[String], o: &CopyStmt, out: &mut Vec<u8>) {
    out.clear();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push(o.delimiter);
        }
        format_field(n.as_bytes(), o, out);
    }
    out.push(b'\n');
}

fn format_field(s: &[u8], o: &CopyStmt, out: &mut Vec<u8>) {
    match o.format {
        CopyFormat::Csv => {
            let needs = s.is_empty() && o.null.is_empty()
                || s == o.null.as_bytes()
                || s.iter()
                    .any(|&c| c == o.delimiter || c == o.quote || c == b'\n' || c == b'\r')
                || s.first() == Some(&b'\\') && s == b"\\.";
            if needs {
                out.push(o.quote);
                for &c in s {
                    if c == o.quote || c == o.escape {
                        out.push(o.escape);
                    }
                    out.push(c);
                }
                out.push(o.quote);
            } else {
                out.extend_from_slice(s);
            }
        }
        _ => {
            for &c in s {
                match c {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    8 => out.extend_from_slice(b"\\b"),
                    12 => out.extend_from_slice(b"\\f"),
                    11 => out.extend_from_slice(b"\\v"),
                    c if c == o.delimiter => {
                        out.push(b'\\');
                        out.push(c);
                    }
                    c => out.push(c),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parser::{parse_one, Stmt};

    fn opts(sql: &str) -> CopyStmt {
        match parse_one(sql).unwrap() {
            Stmt::Copy(c) => c,
            _ => panic!(),
        }
    }

    #[test]
    fn text_fields() {
        let o = opts("copy t from stdin");
        let f = split_text(b"1\t\\N\ta\\tb\\\\c\\n\t\\101\\x41", &o).unwrap();
        assert_eq!(
            f,
            vec![
                Some("1".into()),
                None,
                Some("a\tb\\c\n".into()),
                Some("AA".into())
            ]
        );
        assert_eq!(split_text(b"", &o).unwrap(), vec![Some(String::new())]);
        assert_eq!(
            split_text(b"a\\\tb\tc", &o).unwrap(),
            vec![Some("a\tb".into()), Some("c".into())]
        );
        assert!(split_text(b"\xff", &o).is_err());
    }

    #[test]
    fn find_byte_matches_a_plain_search() {
        let hay: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        for a in [0u8, 1, 9, 10, 92, 128, 200, 255] {
            for b in [10u8, 92, 0x80] {
                for from in 0..20 {
                    let want = hay[from..].iter().position(|&c| c == a || c == b);
                    assert_eq!(find_byte(&hay[from..], a, b), want, "{a} {b} {from}");
                }
            }
        }
        assert_eq!(find_byte(b"", 1, 2), None);
        assert_eq!(find_byte(b"abcdefgh\\", b'\t', b'\\'), Some(8));
    }

    #[test]
    fn csv_fields() {
        let o = opts("copy t from stdin csv");
        let f = split_csv(b"1,,\"\",\"a,\"\"b\"\"\nc\",x", &o).unwrap();
        assert_eq!(
            f,
            vec![
                Some("1".into()),
                None,
                Some(String::new()),
                Some("a,\"b\"\nc".into()),
                Some("x".into())
            ]
        );
        assert!(split_csv(b"\"abc", &o).is_err());
        let o2 = opts("copy t from stdin with (format csv, escape '\\', null 'NULL')");
        let f = split_csv(b"\"a\\\"b\",NULL,\"NULL\"", &o2).unwrap();
        assert_eq!(f, vec![Some("a\"b".into()), None, Some("NULL".into())]);
    }

    #[test]
    fn output_round_trips_through_input() {
        for sql in ["copy t to stdout", "copy t to stdout csv"] {
            let o = opts(sql);
            let vals = vec![
                Value::text("a\tb,\"c\"\nd\\e"),
                Value::Null,
                Value::text(""),
                Value::Int4(5),
            ];
            let mut out = Vec::new();
            format_row(&vals, &o, &mut out);
            assert_eq!(out.last(), Some(&b'\n'));
            out.pop();
            let parsed = match o.format {
                CopyFormat::Csv => split_csv(&out, &o).unwrap(),
                _ => split_text(&out, &o).unwrap(),
            };
            assert_eq!(
                parsed,
                vec![
                    Some("a\tb,\"c\"\nd\\e".to_string()),
                    None,
                    Some(String::new()),
                    Some("5".to_string())
                ],
                "{sql}"
            );
        }
    }
}
