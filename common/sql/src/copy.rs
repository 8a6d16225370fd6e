//! COPY FROM STDIN and COPY TO STDOUT, text and CSV formats (copyfromparse.c,
//! copyto.c).
//!
//! COPY FROM is streaming: CopyData chunks are appended to a carry-over
//! buffer, every complete record is parsed at once (fields split, NULL
//! marker, backslash escapes or CSV quoting, `\.` end marker), converted to
//! the column types and queued in an [`InsertBatch`], which goes to
//! `Heap::multi_insert` every [`crate::executor::BATCH_ROWS`] rows —
//! so memory stays bounded whatever the size of the input. `FREEZE` writes
//! the rows with the frozen xid; it is allowed only into a table created or
//! truncated in the current transaction (55000 otherwise, as PostgreSQL).
//!
//! Errors name the record: `COPY t, line N` (PostgreSQL's CONTEXT line) is
//! put in the error's DETAIL when it has none.

use std::sync::Arc;

use crate::executor::{check_row, conform_row, Ectx, InsertBatch, Vis};
use crate::expr::Expr;
use crate::parser::{CopyFormat, CopyStmt};
use engine::catalog::TableDef;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::value::Value;

/// An open COPY FROM STDIN (the `state` of a [`crate::session::CopyIn`]).
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
    /// The record being parsed and the row built from it, reused from
    /// record to record: a row costs no allocation beyond its values.
    fields: Fields,
    row: Vec<Value>,
    /// Table columns not in the column list (they get their DEFAULT).
    defaulted: Vec<usize>,
    /// Foreign key checks of the rows inserted so far, fired when the
    /// COPY ends (each chunk of data runs with its own context).
    ri_events: Vec<crate::ri_triggers::RiEvent>,
    /// The table has triggers: rows go in one by one through its BEFORE
    /// ROW triggers, AFTER ROW events wait in `trigger_events`, and the
    /// INSERT statement triggers fire at the start and the end.
    triggers: bool,
    /// BEFORE STATEMENT triggers have fired.
    started: bool,
    /// AFTER ROW events of the rows inserted so far.
    trigger_events: Vec<crate::trigger::AfterEvent>,
    /// Their transition-table rows.
    transition_rows: Vec<crate::trigger::TransitionRow>,
}

/// The fields of one record: unescaped bytes back to back, and per field
/// its range there (`None` for NULL). UTF-8 is checked once per field,
/// when the field is read ([`Fields::get`]): checking when the field was
/// split and again to hand out a `&str` would cost two passes over every
/// byte.
#[derive(Debug, Default)]
struct Fields {
    bytes: Vec<u8>,
    ranges: Vec<Option<(usize, usize)>>,
}

impl Fields {
    fn clear(&mut self) {
        self.bytes.clear();
        self.ranges.clear();
    }
    /// Ends the field that started at `start` in `bytes`.
    fn end_field(&mut self, start: usize) {
        self.ranges.push(Some((start, self.bytes.len())));
    }
    /// Field `i` (None for NULL); an error if it is not valid UTF-8.
    fn get(&self, i: usize) -> PgResult<Option<&str>> {
        let Some((s, e)) = self.ranges.get(i).copied().flatten() else {
            return Ok(None);
        };
        let b = self.bytes.get(s..e).unwrap_or_default();
        match std::str::from_utf8(b) {
            Ok(text) => Ok(Some(text)),
            Err(err) => Err(bad_utf8(b.get(err.valid_up_to()).copied().unwrap_or(0))),
        }
    }
    #[cfg(test)]
    fn to_strings(&self) -> PgResult<Vec<Option<String>>> {
        (0..self.ranges.len())
            .map(|i| Ok(self.get(i)?.map(str::to_string)))
            .collect()
    }
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
        let defaulted = (0..table.columns.len())
            .filter(|c| !cols.contains(c))
            .collect();
        // Index entries and foreign key checks need the rows' values after
        // the heap insert; without them a COPY keeps only their encoded form.
        let mut batch = InsertBatch::new(frozen, true);
        let triggers = crate::trigger::has_triggers(&table);
        batch.keep_rows =
            !table.indexes.is_empty() || crate::ri_triggers::has_foreign_keys(&table) || triggers;
        CopyInState {
            triggers,
            started: false,
            trigger_events: Vec::new(),
            transition_rows: Vec::new(),
            table,
            cols,
            opts,
            vis,
            defaults,
            batch,
            pending: Vec::new(),
            line: 0,
            count: 0,
            ri_events: Vec::new(),
            header_pending,
            eof: false,
            failed: false,
            fields: Fields::default(),
            row: Vec::new(),
            defaulted,
        }
    }

    /// Feeds one CopyData chunk.
    pub fn feed(&mut self, ec: &mut Ectx<'_>, data: &[u8]) -> PgResult<()> {
        if self.failed || self.eof {
            return Ok(());
        }
        self.start(ec)?;
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

    /// BEFORE STATEMENT INSERT triggers, once, before the first row.
    fn start(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        if self.triggers && !self.started {
            self.started = true;
            let table = self.table.clone();
            crate::trigger::fire_statement(
                ec,
                engine::pg_trigger::TriggerRel::table(&table),
                engine::pg_trigger::TRIGGER_TYPE_INSERT,
                true,
                &[],
            )?;
        }
        Ok(())
    }

    /// End of input: the last record may lack its newline.
    pub fn finish(&mut self, ec: &mut Ectx<'_>) -> PgResult<u64> {
        self.start(ec)?;
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
        ec.ri_events = std::mem::take(&mut self.ri_events);
        crate::ri_triggers::after_statement(ec)?;
        if self.triggers {
            ec.trigger_events = std::mem::take(&mut self.trigger_events);
            ec.transition_rows = std::mem::take(&mut self.transition_rows);
            crate::trigger::fire_after_rows(ec)?;
            let table = self.table.clone();
            crate::trigger::fire_statement(
                ec,
                engine::pg_trigger::TriggerRel::table(&table),
                engine::pg_trigger::TRIGGER_TYPE_INSERT,
                false,
                &[],
            )?;
        }
        Ok(self.count)
    }

    fn flush(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        let table = self.table.clone();
        // Held while the batch goes in: a rewrite of the table (ALTER
        // COLUMN … TYPE) waits for it, and a batch after the rewrite began
        // fails instead of writing to the file being replaced.
        let _lock = table.lock.shared();
        table.check_not_dropped()?;
        crate::tablerewrite::check_not_rewriting(ec.xact.own().xids, &table)?;
        self.batch
            .flush(ec, &self.vis, &table, &mut |_, _| Ok(()))?;
        self.ri_events.append(&mut ec.ri_events);
        self.trigger_events.append(&mut ec.trigger_events);
        self.transition_rows.append(&mut ec.transition_rows);
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
        let mut fields = std::mem::take(&mut self.fields);
        let mut row = std::mem::take(&mut self.row);
        let res = match self.opts.format {
            CopyFormat::Csv => split_csv(rec, &self.opts, &mut fields),
            _ => split_text(rec, &self.opts, &mut fields),
        }
        .and_then(|()| self.build_row(ec, &fields, &mut row));
        let res = match res {
            Ok(()) if self.triggers => self.before_row(ec, &mut row),
            Ok(()) => Ok(true),
            Err(e) => Err(e),
        };
        let keep = matches!(res, Ok(true));
        if keep {
            self.batch.push_values(&row);
        }
        row.clear();
        self.fields = fields;
        self.row = row;
        res.map_err(|e| self.context(e))?;
        if !keep {
            return Ok(());
        }
        self.count += 1;
        // With triggers, row by row: a BEFORE trigger's queries see the
        // rows inserted before, as in PostgreSQL.
        if self.batch.full() || self.triggers {
            self.flush(ec).map_err(|e| self.context(e))?;
        }
        Ok(())
    }

    /// The row of `fields` into `out` (cleared first): the listed columns
    /// from the fields, the others from their DEFAULT.
    fn build_row(&self, ec: &mut Ectx<'_>, fields: &Fields, out: &mut Vec<Value>) -> PgResult<()> {
        let t = &self.table;
        let nfields = fields.ranges.len();
        if nfields > self.cols.len() {
            return Err(PgError::new(
                sqlstate::BAD_COPY_FILE_FORMAT,
                "extra data after last expected column",
            ));
        }
        if nfields < self.cols.len() {
            let missing = &t.columns[self.cols[nfields]].name;
            return Err(PgError::new(
                sqlstate::BAD_COPY_FILE_FORMAT,
                format!("missing data for column \"{missing}\""),
            ));
        }
        out.clear();
        out.resize(t.columns.len(), Value::Null);
        for (f, &c) in self.cols.iter().enumerate() {
            let col = &t.columns[c];
            out[c] = match fields.get(f)? {
                None => Value::Null,
                Some(s) => Value::from_text(col.ty, s).map_err(|mut e| {
                    if e.detail.is_none() {
                        e.detail = Some(format!(
                            "COPY {}, line {}, column {}: \"{}\"",
                            t.name, self.line, col.name, s
                        ));
                    }
                    e
                })?,
            };
        }
        for &c in &self.defaulted {
            if let Some(d) = &self.defaults[c] {
                let p = ec.params;
                out[c] = crate::expr::eval(d, &[], p, ec)?;
            }
        }
        conform_row(t, out)?;
        if self.triggers {
            // Checked on the row the BEFORE triggers return.
            return Ok(());
        }
        check_row(t, out, ec)
    }

    /// The BEFORE ROW INSERT triggers on `row` (replaced by the row they
    /// return, checked); false if one returned NULL (the row is skipped
    /// and not counted).
    fn before_row(&self, ec: &mut Ectx<'_>, row: &mut Vec<Value>) -> PgResult<bool> {
        let t = &self.table;
        let Some(mut out) = crate::trigger::before_row(
            ec,
            t,
            engine::pg_trigger::TRIGGER_TYPE_INSERT,
            None,
            Some(std::mem::take(row)),
            &[],
        )?
        else {
            return Ok(false);
        };
        conform_row(t, &mut out)?;
        check_row(t, &out, ec)?;
        *row = out;
        Ok(true)
    }
}

/// PostgreSQL's error for a byte that is not valid UTF-8 (`bad`, the first
/// byte of the invalid sequence).
fn bad_utf8(bad: u8) -> PgError {
    PgError::new(
        sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
        format!("invalid byte sequence for encoding \"UTF8\": 0x{bad:02x}"),
    )
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

/// Splits a text-format record into `out` (cleared first); None for the
/// NULL marker.
fn split_text(rec: &[u8], o: &CopyStmt, out: &mut Fields) -> PgResult<()> {
    out.clear();
    let null = o.null.as_bytes();
    let d = o.delimiter;
    let mut i = 0;
    loop {
        // Raw field extent (a backslash escapes the next byte).
        let start = i;
        let mut escaped = false;
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
                    escaped = true;
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
            out.ranges.push(None);
        } else {
            let start = out.bytes.len();
            if escaped {
                unescape_text(raw, &mut out.bytes);
            } else {
                // The scan above found no backslash: nothing to resolve.
                out.bytes.extend_from_slice(raw);
            }
            out.end_field(start);
        }
        if i >= rec.len() {
            break;
        }
        i += 1; // delimiter
    }
    Ok(())
}

/// Appends `raw` with its backslash escapes resolved to `out`.
fn unescape_text(raw: &[u8], out: &mut Vec<u8>) {
    if !raw.contains(&b'\\') {
        out.extend_from_slice(raw);
        return;
    }
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

/// Splits a CSV record into `out` (cleared first); None for an unquoted
/// NULL string.
fn split_csv(rec: &[u8], o: &CopyStmt, out: &mut Fields) -> PgResult<()> {
    let (d, q, e) = (o.delimiter, o.quote, o.escape);
    let null = o.null.as_bytes();
    out.clear();
    let mut i = 0;
    loop {
        let start = out.bytes.len();
        let field = &mut out.bytes;
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
        let is_null = !quoted && raw_start != usize::MAX && &field[start..] == null;
        if is_null {
            out.bytes.truncate(start);
            out.ranges.push(None);
        } else {
            out.end_field(start);
        }
        if i >= rec.len() {
            break;
        }
        i += 1;
    }
    Ok(())
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

    fn split_text_owned(rec: &[u8], o: &CopyStmt) -> PgResult<Vec<Option<String>>> {
        let mut f = Fields::default();
        split_text(rec, o, &mut f).and_then(|()| f.to_strings())
    }

    fn split_csv_owned(rec: &[u8], o: &CopyStmt) -> PgResult<Vec<Option<String>>> {
        let mut f = Fields::default();
        split_csv(rec, o, &mut f).and_then(|()| f.to_strings())
    }
    use crate::parser::{parse_one, Stmt};

    fn opts(sql: &str) -> CopyStmt {
        match parse_one(sql).unwrap() {
            Stmt::Copy(c) => c,
            _ => panic!(),
        }
    }

    #[test]
    fn text_fields() {
        let o = opts("copy t from stdin");
        let f = split_text_owned(b"1\t\\N\ta\\tb\\\\c\\n\t\\101\\x41", &o).unwrap();
        assert_eq!(
            f,
            vec![
                Some("1".into()),
                None,
                Some("a\tb\\c\n".into()),
                Some("AA".into())
            ]
        );
        assert_eq!(
            split_text_owned(b"", &o).unwrap(),
            vec![Some(String::new())]
        );
        assert_eq!(
            split_text_owned(b"a\\\tb\tc", &o).unwrap(),
            vec![Some("a\tb".into()), Some("c".into())]
        );
        assert!(split_text_owned(b"\xff", &o).is_err());
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
        let f = split_csv_owned(b"1,,\"\",\"a,\"\"b\"\"\nc\",x", &o).unwrap();
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
        assert!(split_csv_owned(b"\"abc", &o).is_err());
        let o2 = opts("copy t from stdin with (format csv, escape '\\', null 'NULL')");
        let f = split_csv_owned(b"\"a\\\"b\",NULL,\"NULL\"", &o2).unwrap();
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
                CopyFormat::Csv => split_csv_owned(&out, &o).unwrap(),
                _ => split_text_owned(&out, &o).unwrap(),
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
