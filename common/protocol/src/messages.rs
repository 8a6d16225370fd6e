//! The messages of the PostgreSQL v3 protocol, in both directions, and their
//! byte layout (PostgreSQL's "Message Formats" chapter, `pqformat.c`).
//!
//! Every message but the startup packet is `Byte1 type, Int32 length, body`,
//! where the length counts itself but not the type byte. The startup packet
//! (and SSLRequest, GSSENCRequest, CancelRequest, which share its framing) has
//! no type byte: `Int32 length, Int32 code, body`.
//!
//! Two representations exist on purpose:
//! * [`FrontendMessage`] / [`BackendMessage`]: owned values, used by the
//!   client, by tests and for everything that is not per-row.
//! * the `write_*` functions ([`begin_message`], [`finish_message`],
//!   [`write_error`], [`DataRowWriter`]): the server's hot path. They append
//!   straight to the connection's output buffer and allocate nothing per call,
//!   so encoding a DataRow costs only the bytes it adds to the buffer.
//!
//! Decoding works on one complete message body (the codec has already split
//! the frame off), so a malformed body can never read past its own message:
//! errors in a body are [`PgError`]s (08P01, or 22021 for invalid UTF-8) that
//! leave the connection usable, as in PostgreSQL.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use pgtypes::error::{sqlstate, PgError, PgResult, Severity};
use pgtypes::Oid;

/// Protocol version 3.0 as sent in the startup packet.
pub const PROTOCOL_VERSION_3: i32 = 196608;
/// The "protocol version" of an SSLRequest.
pub const SSL_REQUEST_CODE: i32 = 80877103;
/// The "protocol version" of a GSSENCRequest.
pub const GSSENC_REQUEST_CODE: i32 = 80877104;
/// The "protocol version" of a CancelRequest.
pub const CANCEL_REQUEST_CODE: i32 = 80877102;
/// 54000 program_limit_exceeded (not in the shared sqlstate table).
const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
/// PostgreSQL's MAX_STARTUP_PACKET_LENGTH.
pub const MAX_STARTUP_PACKET_LENGTH: usize = 10000;

/// Describe / Close target: a prepared statement or a portal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `S`: a prepared statement.
    Statement,
    /// `P`: a portal.
    Portal,
}

impl Target {
    fn byte(self) -> u8 {
        match self {
            Target::Statement => b'S',
            Target::Portal => b'P',
        }
    }
    fn from_byte(b: u8) -> PgResult<Target> {
        match b {
            b'S' => Ok(Target::Statement),
            b'P' => Ok(Target::Portal),
            _ => Err(protocol_violation(format!(
                "invalid DESCRIBE/CLOSE message subtype {b}"
            ))),
        }
    }
}

/// A Bind message, kept as its body: the session reads each part where it
/// lies instead of copying names, format codes and parameters into lists of
/// their own (three allocations per prepared statement's execution, and a
/// reference count per parameter). [`Bind::decode`] checks the whole layout
/// once, so the accessors cannot fail.
#[derive(Clone, PartialEq)]
pub struct Bind {
    body: Bytes,
    portal: std::ops::Range<usize>,
    statement: std::ops::Range<usize>,
    /// Offset and count of the parameter format codes.
    param_formats: (usize, usize),
    /// Offset and count of the parameters (`Int32 length, bytes` each).
    params: (usize, usize),
    /// Offset and count of the result format codes.
    result_formats: (usize, usize),
}

impl Bind {
    /// A Bind of `statement` as portal `portal` (what a client sends).
    pub fn new(
        portal: &str,
        statement: &str,
        param_formats: &[i16],
        params: &[Option<&[u8]>],
        result_formats: &[i16],
    ) -> PgResult<Bind> {
        let mut buf = BytesMut::new();
        put_cstr(&mut buf, portal);
        put_cstr(&mut buf, statement);
        put_count(&mut buf, param_formats.len())?;
        for f in param_formats {
            buf.put_i16(*f);
        }
        put_count(&mut buf, params.len())?;
        for p in params {
            put_field(&mut buf, *p)?;
        }
        put_count(&mut buf, result_formats.len())?;
        for f in result_formats {
            buf.put_i16(*f);
        }
        Bind::decode(buf.freeze())
    }

    /// Checks a Bind body: names NUL-terminated UTF-8, counts and lengths
    /// within the body (PostgreSQL's `exec_bind_message` reads the same
    /// layout).
    fn decode(body: Bytes) -> PgResult<Bind> {
        let mut r = Reader::new(&body);
        let at = |r: &Reader| body.len() - r.remaining();
        let start = at(&r);
        let portal = r.cstr()?;
        let portal = start..start + portal.len();
        let start = at(&r);
        let statement = r.cstr()?;
        let statement = start..start + statement.len();
        let nf = r.count(2)?;
        let param_formats = (at(&r), nf);
        r.bytes(nf * 2)?;
        let np = r.count(4)?;
        let params = (at(&r), np);
        for _ in 0..np {
            let len = r.i32()?;
            if len < -1 {
                return Err(protocol_violation(format!(
                    "invalid parameter length {len}"
                )));
            }
            if len > 0 {
                r.bytes(len as usize)?;
            }
        }
        let nr = r.count(2)?;
        let result_formats = (at(&r), nr);
        r.bytes(nr * 2)?;
        r.end()?;
        Ok(Bind {
            body,
            portal,
            statement,
            param_formats,
            params,
            result_formats,
        })
    }

    fn str_at(&self, range: &std::ops::Range<usize>) -> &str {
        // Checked to be UTF-8 by `decode`; a short name re-checks in a few
        // instructions, and nothing here can panic.
        self.body
            .get(range.clone())
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default()
    }

    /// The portal's name ("" = unnamed).
    pub fn portal(&self) -> &str {
        self.str_at(&self.portal)
    }

    /// The statement's name ("" = unnamed).
    pub fn statement(&self) -> &str {
        self.str_at(&self.statement)
    }

    /// Parameter format codes (0 text, 1 binary): none, one for all, or
    /// one each.
    pub fn param_formats(&self) -> Codes<'_> {
        self.codes(self.param_formats)
    }

    /// Result column format codes: none, one for all, or one each.
    pub fn result_formats(&self) -> Codes<'_> {
        self.codes(self.result_formats)
    }

    fn codes(&self, (at, n): (usize, usize)) -> Codes<'_> {
        Codes(self.body.get(at..at + 2 * n).unwrap_or_default())
    }

    /// The parameter values, `None` for NULL.
    pub fn params(&self) -> Params<'_> {
        let (at, n) = self.params;
        Params {
            rest: self.body.get(at..).unwrap_or_default(),
            left: n,
        }
    }
}

impl std::fmt::Debug for Bind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bind")
            .field("portal", &self.portal())
            .field("statement", &self.statement())
            .field("param_formats", &self.param_formats().to_vec())
            .field("params", &self.params().collect::<Vec<_>>())
            .field("result_formats", &self.result_formats().to_vec())
            .finish()
    }
}

/// Format codes as a Bind message holds them (big-endian `Int16`s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Codes<'a>(&'a [u8]);

impl Codes<'_> {
    /// How many codes.
    pub fn len(&self) -> usize {
        self.0.len() / 2
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `i`th code (0 past the end).
    pub fn get(&self, i: usize) -> i16 {
        match self.0.get(2 * i..2 * i + 2) {
            Some(b) => i16::from_be_bytes([b[0], b[1]]),
            None => 0,
        }
    }

    /// The codes in order.
    pub fn iter(&self) -> impl Iterator<Item = i16> + '_ {
        self.0
            .chunks_exact(2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
    }

    /// The format of parameter or column `i` under PostgreSQL's rule: no
    /// codes, all text (0); one, for all; else one each.
    pub fn format_of(&self, i: usize) -> i16 {
        format_code(self.len(), i, |k| self.get(k))
    }

    /// The codes as a list.
    pub fn to_vec(&self) -> Vec<i16> {
        self.iter().collect()
    }
}

/// PostgreSQL's rule for the format of parameter or column `i` of a list
/// of `count` format codes, the `k`th being `code(k)`: none, all text
/// (0); one, for every column; else one each (0 past the end). The one
/// copy of the rule, for codes in a message ([`Codes::format_of`]) and in
/// a list.
pub fn format_code(count: usize, i: usize, code: impl Fn(usize) -> i16) -> i16 {
    match count {
        0 => 0,
        1 => code(0),
        _ if i < count => code(i),
        _ => 0,
    }
}

/// The parameters of a Bind message, in order.
#[derive(Clone, Debug)]
pub struct Params<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> Iterator for Params<'a> {
    type Item = Option<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 || self.rest.len() < 4 {
            return None;
        }
        self.left -= 1;
        let len = i32::from_be_bytes([self.rest[0], self.rest[1], self.rest[2], self.rest[3]]);
        let (value, rest) = if len < 0 {
            (None, &self.rest[4..])
        } else {
            let end = (4 + len as usize).min(self.rest.len());
            (Some(&self.rest[4..end]), &self.rest[end..])
        };
        self.rest = rest;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Params<'_> {}

/// A message from client to server.
#[derive(Clone, Debug, PartialEq)]
pub enum FrontendMessage {
    /// The startup packet (protocol 3.0) with its `name=value` parameters
    /// (user, database, application_name, replication, options …).
    Startup {
        /// Parameters in the order sent.
        params: Vec<(String, String)>,
    },
    /// Asks for TLS; hotpair answers `N`.
    SslRequest,
    /// Asks for GSSAPI encryption; hotpair answers `N`.
    GssEncRequest,
    /// Cancels the query running in the session with this key.
    CancelRequest {
        /// BackendKeyData process id.
        pid: i32,
        /// BackendKeyData secret key.
        key: i32,
    },
    /// `Q`: a simple query string (may hold several statements).
    Query(String),
    /// `P`: prepare a statement.
    Parse {
        /// Statement name ("" = unnamed).
        name: String,
        /// The SQL text.
        query: String,
        /// Parameter type OIDs (0 = let the server infer).
        param_types: Vec<Oid>,
    },
    /// `B`: bind parameters to a statement, making a portal.
    Bind(Bind),
    /// `D`: describe a statement or portal.
    Describe {
        /// Statement or portal.
        target: Target,
        /// Its name.
        name: String,
    },
    /// `E`: run a portal.
    Execute {
        /// Portal name.
        portal: String,
        /// Maximum rows to return (0 = all).
        max_rows: i32,
    },
    /// `C`: close a statement or portal.
    Close {
        /// Statement or portal.
        target: Target,
        /// Its name.
        name: String,
    },
    /// `S`: end of an extended-query batch.
    Sync,
    /// `H`: send what is buffered.
    Flush,
    /// `d`: COPY data.
    CopyData(Bytes),
    /// `c`: end of COPY data.
    CopyDone,
    /// `f`: the client aborts a COPY FROM STDIN.
    CopyFail(String),
    /// `X`: the client is leaving.
    Terminate,
    /// `p`: a password (or SASL) response, raw body.
    PasswordMessage(Bytes),
}

/// One column of a RowDescription as it travels on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// Column name.
    pub name: String,
    /// Table OID or 0.
    pub table_oid: Oid,
    /// Column number or 0.
    pub column_id: i16,
    /// Type OID.
    pub type_oid: Oid,
    /// Type length (-1 variable).
    pub type_len: i16,
    /// Type modifier (-1 none).
    pub type_mod: i32,
    /// 0 text, 1 binary.
    pub format: i16,
}

/// The fields of an ErrorResponse or NoticeResponse as received: `(code
/// byte, value)` pairs in the order sent (`S` severity, `C` SQLSTATE, `M`
/// message, `D` detail, `H` hint, …).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ErrorFields {
    /// The fields in the order sent.
    pub fields: Vec<(u8, String)>,
}

impl ErrorFields {
    /// The value of field `code`, if present.
    pub fn get(&self, code: u8) -> Option<&str> {
        self.fields
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, v)| v.as_str())
    }
    /// The SQLSTATE (`C`), "" if missing.
    pub fn code(&self) -> &str {
        self.get(b'C').unwrap_or("")
    }
    /// The primary message (`M`), "" if missing.
    pub fn message(&self) -> &str {
        self.get(b'M').unwrap_or("")
    }
    /// The severity (`V`, else `S`), "" if missing.
    pub fn severity(&self) -> &str {
        self.get(b'V').or_else(|| self.get(b'S')).unwrap_or("")
    }
    /// The DETAIL line (`D`).
    pub fn detail(&self) -> Option<&str> {
        self.get(b'D')
    }
    /// The HINT line (`H`).
    pub fn hint(&self) -> Option<&str> {
        self.get(b'H')
    }
    /// The cursor position (`P`), 1-based characters into the query.
    pub fn position(&self) -> Option<u32> {
        self.get(b'P').and_then(|p| p.parse().ok())
    }
}

impl From<&PgError> for ErrorFields {
    fn from(e: &PgError) -> ErrorFields {
        let mut fields = vec![
            (b'S', e.severity.as_str().to_string()),
            (b'V', e.severity.as_str().to_string()),
            (b'C', e.code.to_string()),
            (b'M', e.message.clone()),
        ];
        if let Some(d) = &e.detail {
            fields.push((b'D', d.clone()));
        }
        if let Some(h) = &e.hint {
            fields.push((b'H', h.clone()));
        }
        if let Some(p) = e.position {
            fields.push((b'P', p.to_string()));
        }
        if let Some(c) = e.context() {
            fields.push((b'W', c.to_string()));
        }
        ErrorFields { fields }
    }
}

impl std::fmt::Display for ErrorFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} ({})",
            self.severity(),
            self.message(),
            self.code()
        )?;
        if let Some(d) = self.detail() {
            write!(f, " DETAIL: {d}")?;
        }
        Ok(())
    }
}

/// A message from server to client.
#[derive(Clone, Debug, PartialEq)]
pub enum BackendMessage {
    /// `R` 0: authentication succeeded.
    AuthenticationOk,
    /// `R` 3: send a cleartext password.
    AuthenticationCleartextPassword,
    /// `R` 5: send an MD5-hashed password, salted with these 4 bytes.
    AuthenticationMD5Password {
        /// The salt.
        salt: [u8; 4],
    },
    /// `R` 10: start a SASL exchange with one of these mechanisms.
    AuthenticationSASL {
        /// Mechanism names (`SCRAM-SHA-256`, `SCRAM-SHA-256-PLUS`).
        mechanisms: Vec<String>,
    },
    /// `R` 11: a SASL challenge (SCRAM's server-first-message).
    AuthenticationSASLContinue(Bytes),
    /// `R` 12: the SASL outcome (SCRAM's server-final-message).
    AuthenticationSASLFinal(Bytes),
    /// `S`: a run-time parameter's value.
    ParameterStatus {
        /// Parameter name.
        name: String,
        /// Its value.
        value: String,
    },
    /// `K`: the key a CancelRequest must quote.
    BackendKeyData {
        /// Process (session) id.
        pid: i32,
        /// Secret key.
        key: i32,
    },
    /// `Z`: ready for a new query; `I`, `T` or `E`.
    ReadyForQuery(u8),
    /// `T`: the columns of the rows that follow.
    RowDescription(Vec<FieldInfo>),
    /// `D`: one row; `None` is NULL.
    DataRow(Vec<Option<Bytes>>),
    /// `C`: a command finished with this tag.
    CommandComplete(String),
    /// `I`: the query string was empty.
    EmptyQueryResponse,
    /// `E`: an error.
    ErrorResponse(ErrorFields),
    /// `N`: a notice or warning.
    NoticeResponse(ErrorFields),
    /// `1`
    ParseComplete,
    /// `2`
    BindComplete,
    /// `3`
    CloseComplete,
    /// `n`: the statement or portal returns no rows.
    NoData,
    /// `t`: parameter type OIDs of a statement.
    ParameterDescription(Vec<Oid>),
    /// `s`: Execute stopped at its row limit; the portal can continue.
    PortalSuspended,
    /// `G`: send COPY data.
    CopyInResponse {
        /// 0 text, 1 binary.
        format: i8,
        /// Per-column formats.
        column_formats: Vec<i16>,
    },
    /// `H`: COPY data follows.
    CopyOutResponse {
        /// 0 text, 1 binary.
        format: i8,
        /// Per-column formats.
        column_formats: Vec<i16>,
    },
    /// `W`: COPY in both directions (replication).
    CopyBothResponse {
        /// 0 text, 1 binary.
        format: i8,
        /// Per-column formats.
        column_formats: Vec<i16>,
    },
    /// `d`: COPY data.
    CopyData(Bytes),
    /// `c`: end of COPY data.
    CopyDone,
}

// ---------------------------------------------------------------------------
// Errors while reading a message body.

fn protocol_violation(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::PROTOCOL_VIOLATION, msg)
}

fn insufficient() -> PgError {
    protocol_violation("insufficient data left in message")
}

/// The error PostgreSQL raises for bytes that are not UTF-8:
/// `invalid byte sequence for encoding "UTF8": 0xc3 0x28`.
pub fn invalid_utf8_error(bytes: &[u8], err: &std::str::Utf8Error) -> PgError {
    let start = err.valid_up_to();
    let len = err.error_len().unwrap_or(bytes.len() - start).clamp(1, 4);
    let mut shown = String::new();
    for (i, b) in bytes.iter().skip(start).take(len.max(2)).enumerate() {
        if i > 0 {
            shown.push(' ');
        }
        shown.push_str(&format!("0x{b:02x}"));
    }
    PgError::new(
        sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
        format!("invalid byte sequence for encoding \"UTF8\": {shown}"),
    )
}

/// A cursor over one message body; every read is bounds-checked.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len()
    }
    pub(crate) fn u8(&mut self) -> PgResult<u8> {
        if self.buf.is_empty() {
            return Err(insufficient());
        }
        Ok(self.buf.get_u8())
    }
    pub(crate) fn i16(&mut self) -> PgResult<i16> {
        if self.buf.len() < 2 {
            return Err(insufficient());
        }
        Ok(self.buf.get_i16())
    }
    pub(crate) fn i32(&mut self) -> PgResult<i32> {
        if self.buf.len() < 4 {
            return Err(insufficient());
        }
        Ok(self.buf.get_i32())
    }
    pub(crate) fn bytes(&mut self, n: usize) -> PgResult<&'a [u8]> {
        if self.buf.len() < n {
            return Err(insufficient());
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }
    /// A NUL-terminated string, checked to be UTF-8.
    pub(crate) fn cstr(&mut self) -> PgResult<&'a str> {
        let pos = self
            .buf
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| protocol_violation("invalid string in message"))?;
        let (head, tail) = self.buf.split_at(pos);
        self.buf = &tail[1..];
        std::str::from_utf8(head).map_err(|e| invalid_utf8_error(head, &e))
    }
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }
    /// PostgreSQL's `pq_getmsgend`: the body must be fully consumed.
    pub(crate) fn end(&self) -> PgResult<()> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(protocol_violation("invalid message format"))
        }
    }
    /// A count (Int16) that must not be negative, capped by what is left
    /// (each element takes at least `min_elem` bytes), so a lying count never
    /// makes us allocate more than the message holds.
    fn count(&mut self, min_elem: usize) -> PgResult<usize> {
        let n = self.i16()?;
        if n < 0 {
            return Err(protocol_violation("invalid message format"));
        }
        let n = n as usize;
        if n.saturating_mul(min_elem) > self.buf.len() {
            return Err(insufficient());
        }
        Ok(n)
    }
}

// ---------------------------------------------------------------------------
// Frontend messages: decode (server side) and encode (client side).

impl FrontendMessage {
    /// Decodes a startup-phase packet body (after the length word; `code`
    /// already read). Unsupported protocol versions are reported by the codec.
    pub(crate) fn decode_startup(code: i32, body: &[u8]) -> PgResult<FrontendMessage> {
        let mut r = Reader::new(body);
        match code {
            SSL_REQUEST_CODE => Ok(FrontendMessage::SslRequest),
            GSSENC_REQUEST_CODE => Ok(FrontendMessage::GssEncRequest),
            CANCEL_REQUEST_CODE => {
                let pid = r.i32()?;
                let key = r.i32()?;
                Ok(FrontendMessage::CancelRequest { pid, key })
            }
            _ => {
                // name\0value\0 … \0; PostgreSQL also accepts a missing final
                // terminator only when nothing follows, we require it.
                let mut params = Vec::new();
                loop {
                    if r.remaining() == 0 {
                        return Err(protocol_violation(
                            "invalid startup packet layout: expected terminator as last byte",
                        ));
                    }
                    let name = r.cstr()?;
                    if name.is_empty() {
                        break;
                    }
                    let value = r.cstr()?;
                    params.push((name.to_string(), value.to_string()));
                }
                if r.remaining() != 0 {
                    return Err(protocol_violation(
                        "invalid startup packet layout: expected terminator as last byte",
                    ));
                }
                Ok(FrontendMessage::Startup { params })
            }
        }
    }

    /// True for the types whose decoded form keeps its body ([`Bind`],
    /// CopyData, a password message): the codec hands those a `Bytes` of
    /// the frame, the others are decoded from the read buffer in place.
    pub(crate) fn keeps_body(tag: u8) -> bool {
        matches!(tag, b'B' | b'd' | b'p')
    }

    /// Decodes a body that [`FrontendMessage::keeps_body`].
    pub(crate) fn decode_kept(tag: u8, body: Bytes) -> PgResult<FrontendMessage> {
        match tag {
            b'B' => Ok(FrontendMessage::Bind(Bind::decode(body)?)),
            b'p' => Ok(FrontendMessage::PasswordMessage(body)),
            _ => Ok(FrontendMessage::CopyData(body)),
        }
    }

    /// Decodes a typed message body. `tag` is known to be a frontend type
    /// (the codec rejects others) that does not keep its body. `body` is
    /// the whole frame body.
    pub(crate) fn decode(tag: u8, body: &[u8]) -> PgResult<FrontendMessage> {
        let mut r = Reader::new(body);
        let msg = match tag {
            b'Q' => {
                let q = r.cstr()?;
                FrontendMessage::Query(q.to_string())
            }
            b'P' => {
                let name = r.cstr()?.to_string();
                let query = r.cstr()?.to_string();
                let n = r.count(4)?;
                let mut param_types = Vec::with_capacity(n);
                for _ in 0..n {
                    param_types.push(r.i32()? as u32);
                }
                FrontendMessage::Parse {
                    name,
                    query,
                    param_types,
                }
            }
            b'D' => {
                let target = Target::from_byte(r.u8()?)?;
                let name = r.cstr()?.to_string();
                FrontendMessage::Describe { target, name }
            }
            b'E' => {
                let portal = r.cstr()?.to_string();
                let max_rows = r.i32()?;
                FrontendMessage::Execute { portal, max_rows }
            }
            b'C' => {
                let target = Target::from_byte(r.u8()?)?;
                let name = r.cstr()?.to_string();
                FrontendMessage::Close { target, name }
            }
            b'S' => FrontendMessage::Sync,
            b'H' => FrontendMessage::Flush,
            b'X' => FrontendMessage::Terminate,
            b'c' => FrontendMessage::CopyDone,
            b'f' => FrontendMessage::CopyFail(r.cstr()?.to_string()),
            other => {
                return Err(protocol_violation(format!(
                    "invalid frontend message type {other}"
                )));
            }
        };
        r.end()?;
        Ok(msg)
    }

    /// Appends the message in wire format. Fails only if a message would not
    /// fit the protocol's Int32 length or Int16 counts.
    pub fn encode(&self, buf: &mut BytesMut) -> PgResult<()> {
        match self {
            FrontendMessage::Startup { params } => {
                let start = buf.len();
                buf.put_i32(0);
                buf.put_i32(PROTOCOL_VERSION_3);
                for (k, v) in params {
                    put_cstr(buf, k);
                    put_cstr(buf, v);
                }
                buf.put_u8(0);
                patch_len(buf, start)?;
            }
            FrontendMessage::SslRequest => {
                buf.put_i32(8);
                buf.put_i32(SSL_REQUEST_CODE);
            }
            FrontendMessage::GssEncRequest => {
                buf.put_i32(8);
                buf.put_i32(GSSENC_REQUEST_CODE);
            }
            FrontendMessage::CancelRequest { pid, key } => {
                buf.put_i32(16);
                buf.put_i32(CANCEL_REQUEST_CODE);
                buf.put_i32(*pid);
                buf.put_i32(*key);
            }
            FrontendMessage::Query(q) => {
                let s = begin_message(buf, b'Q');
                put_cstr(buf, q);
                finish_message(buf, s)?;
            }
            FrontendMessage::Parse {
                name,
                query,
                param_types,
            } => {
                let s = begin_message(buf, b'P');
                put_cstr(buf, name);
                put_cstr(buf, query);
                put_count(buf, param_types.len())?;
                for t in param_types {
                    buf.put_u32(*t);
                }
                finish_message(buf, s)?;
            }
            FrontendMessage::Bind(b) => {
                let s = begin_message(buf, b'B');
                buf.put_slice(&b.body);
                finish_message(buf, s)?;
            }
            FrontendMessage::Describe { target, name } => {
                let s = begin_message(buf, b'D');
                buf.put_u8(target.byte());
                put_cstr(buf, name);
                finish_message(buf, s)?;
            }
            FrontendMessage::Execute { portal, max_rows } => {
                let s = begin_message(buf, b'E');
                put_cstr(buf, portal);
                buf.put_i32(*max_rows);
                finish_message(buf, s)?;
            }
            FrontendMessage::Close { target, name } => {
                let s = begin_message(buf, b'C');
                buf.put_u8(target.byte());
                put_cstr(buf, name);
                finish_message(buf, s)?;
            }
            FrontendMessage::Sync => put_empty(buf, b'S'),
            FrontendMessage::Flush => put_empty(buf, b'H'),
            FrontendMessage::Terminate => put_empty(buf, b'X'),
            FrontendMessage::CopyData(d) => {
                let s = begin_message(buf, b'd');
                buf.put_slice(d);
                finish_message(buf, s)?;
            }
            FrontendMessage::CopyDone => put_empty(buf, b'c'),
            FrontendMessage::CopyFail(m) => {
                let s = begin_message(buf, b'f');
                put_cstr(buf, m);
                finish_message(buf, s)?;
            }
            FrontendMessage::PasswordMessage(p) => {
                let s = begin_message(buf, b'p');
                buf.put_slice(p);
                finish_message(buf, s)?;
            }
        }
        Ok(())
    }
}

/// True for the type bytes a client may send after startup.
pub fn is_frontend_type(tag: u8) -> bool {
    matches!(
        tag,
        b'Q' | b'P' | b'B' | b'D' | b'E' | b'C' | b'S' | b'H' | b'X' | b'd' | b'c' | b'f' | b'p'
    )
}

// ---------------------------------------------------------------------------
// Backend messages: encode (server side) and decode (client side).

impl BackendMessage {
    /// Appends the message in wire format.
    pub fn encode(&self, buf: &mut BytesMut) -> PgResult<()> {
        match self {
            BackendMessage::AuthenticationOk => {
                buf.put_u8(b'R');
                buf.put_i32(8);
                buf.put_i32(0);
            }
            BackendMessage::AuthenticationCleartextPassword => {
                buf.put_u8(b'R');
                buf.put_i32(8);
                buf.put_i32(3);
            }
            BackendMessage::AuthenticationMD5Password { salt } => {
                buf.put_u8(b'R');
                buf.put_i32(12);
                buf.put_i32(5);
                buf.put_slice(salt);
            }
            BackendMessage::AuthenticationSASL { mechanisms } => {
                let start = begin_message(buf, b'R');
                buf.put_i32(10);
                for m in mechanisms {
                    put_cstr(buf, m);
                }
                buf.put_u8(0);
                finish_message(buf, start)?;
            }
            BackendMessage::AuthenticationSASLContinue(data)
            | BackendMessage::AuthenticationSASLFinal(data) => {
                let code = if matches!(self, BackendMessage::AuthenticationSASLContinue(_)) {
                    11
                } else {
                    12
                };
                let start = begin_message(buf, b'R');
                buf.put_i32(code);
                buf.put_slice(data);
                finish_message(buf, start)?;
            }
            BackendMessage::ParameterStatus { name, value } => {
                write_parameter_status(buf, name, value)?
            }
            BackendMessage::BackendKeyData { pid, key } => {
                buf.put_u8(b'K');
                buf.put_i32(12);
                buf.put_i32(*pid);
                buf.put_i32(*key);
            }
            BackendMessage::ReadyForQuery(s) => write_ready_for_query(buf, *s),
            BackendMessage::RowDescription(fields) => {
                let s = begin_message(buf, b'T');
                put_count(buf, fields.len())?;
                for f in fields {
                    write_field_info(
                        buf,
                        &f.name,
                        f.table_oid,
                        f.column_id,
                        f.type_oid,
                        f.type_len,
                        f.type_mod,
                        f.format,
                    );
                }
                finish_message(buf, s)?;
            }
            BackendMessage::DataRow(values) => {
                let mut w = DataRowWriter::begin(buf, values.len())?;
                for v in values {
                    match v {
                        None => w.null(),
                        Some(b) => w.value(b),
                    }
                }
                w.finish()?;
            }
            BackendMessage::CommandComplete(tag) => write_command_complete(buf, tag)?,
            BackendMessage::EmptyQueryResponse => put_empty(buf, b'I'),
            BackendMessage::ErrorResponse(f) => write_fields(buf, b'E', f)?,
            BackendMessage::NoticeResponse(f) => write_fields(buf, b'N', f)?,
            BackendMessage::ParseComplete => put_empty(buf, b'1'),
            BackendMessage::BindComplete => put_empty(buf, b'2'),
            BackendMessage::CloseComplete => put_empty(buf, b'3'),
            BackendMessage::NoData => put_empty(buf, b'n'),
            BackendMessage::ParameterDescription(oids) => {
                let s = begin_message(buf, b't');
                put_count(buf, oids.len())?;
                for o in oids {
                    buf.put_u32(*o);
                }
                finish_message(buf, s)?;
            }
            BackendMessage::PortalSuspended => put_empty(buf, b's'),
            BackendMessage::CopyInResponse {
                format,
                column_formats,
            } => write_copy_response(buf, b'G', *format, column_formats)?,
            BackendMessage::CopyOutResponse {
                format,
                column_formats,
            } => write_copy_response(buf, b'H', *format, column_formats)?,
            BackendMessage::CopyBothResponse {
                format,
                column_formats,
            } => write_copy_response(buf, b'W', *format, column_formats)?,
            BackendMessage::CopyData(d) => write_copy_data(buf, d)?,
            BackendMessage::CopyDone => put_empty(buf, b'c'),
        }
        Ok(())
    }

    /// Decodes one backend message body (client side).
    pub fn decode(tag: u8, body: Bytes) -> PgResult<BackendMessage> {
        let mut r = Reader::new(&body);
        let msg = match tag {
            b'R' => match r.i32()? {
                0 => BackendMessage::AuthenticationOk,
                3 => BackendMessage::AuthenticationCleartextPassword,
                5 => {
                    let b = r.bytes(4)?;
                    BackendMessage::AuthenticationMD5Password {
                        salt: [b[0], b[1], b[2], b[3]],
                    }
                }
                10 => {
                    let mut mechanisms = Vec::new();
                    loop {
                        let m = r.cstr()?;
                        if m.is_empty() {
                            break;
                        }
                        mechanisms.push(m.to_string());
                    }
                    BackendMessage::AuthenticationSASL { mechanisms }
                }
                11 => {
                    r.rest();
                    BackendMessage::AuthenticationSASLContinue(body.slice(4..))
                }
                12 => {
                    r.rest();
                    BackendMessage::AuthenticationSASLFinal(body.slice(4..))
                }
                n => {
                    return Err(PgError::unsupported(format!(
                        "authentication method {n} not supported"
                    )))
                }
            },
            b'S' => {
                let name = r.cstr()?.to_string();
                let value = r.cstr()?.to_string();
                BackendMessage::ParameterStatus { name, value }
            }
            b'K' => {
                let pid = r.i32()?;
                let key = r.i32()?;
                BackendMessage::BackendKeyData { pid, key }
            }
            b'Z' => BackendMessage::ReadyForQuery(r.u8()?),
            b'T' => {
                let n = r.count(19)?;
                let mut fields = Vec::with_capacity(n);
                for _ in 0..n {
                    fields.push(FieldInfo {
                        name: r.cstr()?.to_string(),
                        table_oid: r.i32()? as u32,
                        column_id: r.i16()?,
                        type_oid: r.i32()? as u32,
                        type_len: r.i16()?,
                        type_mod: r.i32()?,
                        format: r.i16()?,
                    });
                }
                BackendMessage::RowDescription(fields)
            }
            b'D' => {
                let n = r.count(4)?;
                let mut values = Vec::with_capacity(n);
                for _ in 0..n {
                    let len = r.i32()?;
                    if len == -1 {
                        values.push(None);
                    } else if len < 0 {
                        return Err(protocol_violation(format!("invalid field length {len}")));
                    } else {
                        let at = body.len() - r.remaining();
                        r.bytes(len as usize)?;
                        values.push(Some(body.slice(at..at + len as usize)));
                    }
                }
                BackendMessage::DataRow(values)
            }
            b'C' => BackendMessage::CommandComplete(r.cstr()?.to_string()),
            b'I' => BackendMessage::EmptyQueryResponse,
            b'E' | b'N' => {
                let mut fields = Vec::new();
                loop {
                    let code = r.u8()?;
                    if code == 0 {
                        break;
                    }
                    fields.push((code, r.cstr()?.to_string()));
                }
                let f = ErrorFields { fields };
                if tag == b'E' {
                    BackendMessage::ErrorResponse(f)
                } else {
                    BackendMessage::NoticeResponse(f)
                }
            }
            b'1' => BackendMessage::ParseComplete,
            b'2' => BackendMessage::BindComplete,
            b'3' => BackendMessage::CloseComplete,
            b'n' => BackendMessage::NoData,
            b't' => {
                let n = r.count(4)?;
                let mut oids = Vec::with_capacity(n);
                for _ in 0..n {
                    oids.push(r.i32()? as u32);
                }
                BackendMessage::ParameterDescription(oids)
            }
            b's' => BackendMessage::PortalSuspended,
            b'G' | b'H' | b'W' => {
                let format = r.u8()? as i8;
                let n = r.count(2)?;
                let mut column_formats = Vec::with_capacity(n);
                for _ in 0..n {
                    column_formats.push(r.i16()?);
                }
                match tag {
                    b'G' => BackendMessage::CopyInResponse {
                        format,
                        column_formats,
                    },
                    b'H' => BackendMessage::CopyOutResponse {
                        format,
                        column_formats,
                    },
                    _ => BackendMessage::CopyBothResponse {
                        format,
                        column_formats,
                    },
                }
            }
            b'd' => {
                r.rest();
                BackendMessage::CopyData(body.clone())
            }
            b'c' => BackendMessage::CopyDone,
            other => {
                return Err(protocol_violation(format!(
                    "invalid backend message type {other}"
                )))
            }
        };
        r.end()?;
        Ok(msg)
    }
}

// ---------------------------------------------------------------------------
// Writers: append to a buffer, no allocation beyond the buffer's growth.

/// Starts a typed message: writes the type byte and a length placeholder;
/// returns the offset to hand to [`finish_message`].
#[inline]
pub fn begin_message(buf: &mut BytesMut, tag: u8) -> usize {
    let start = buf.len();
    buf.put_u8(tag);
    buf.put_i32(0);
    start
}

/// Patches the length of the message begun at `start`.
#[inline]
pub fn finish_message(buf: &mut BytesMut, start: usize) -> PgResult<()> {
    patch_len(buf, start + 1)
}

/// Patches an Int32 length word at `at` covering everything after it.
fn patch_len(buf: &mut BytesMut, at: usize) -> PgResult<()> {
    let len = buf.len() - at;
    let len = i32::try_from(len).map_err(|_| {
        buf.truncate(at.saturating_sub(1));
        PgError::new(PROGRAM_LIMIT_EXCEEDED, "message too large to send")
    })?;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

fn put_empty(buf: &mut BytesMut, tag: u8) {
    buf.put_u8(tag);
    buf.put_i32(4);
}

/// Writes `s` and its NUL terminator. An embedded NUL would corrupt the
/// framing, so the string is cut there (PostgreSQL strings never hold NUL).
#[inline]
pub fn put_cstr(buf: &mut BytesMut, s: &str) {
    let b = s.as_bytes();
    let b = match b.iter().position(|&c| c == 0) {
        Some(p) => &b[..p],
        None => b,
    };
    buf.put_slice(b);
    buf.put_u8(0);
}

fn put_count(buf: &mut BytesMut, n: usize) -> PgResult<()> {
    let n = i16::try_from(n).map_err(|_| {
        PgError::new(
            PROGRAM_LIMIT_EXCEEDED,
            format!("too many items in message ({n})"),
        )
    })?;
    buf.put_i16(n);
    Ok(())
}

fn put_field(buf: &mut BytesMut, v: Option<&[u8]>) -> PgResult<()> {
    match v {
        None => buf.put_i32(-1),
        Some(b) => {
            let n = i32::try_from(b.len())
                .map_err(|_| PgError::new(PROGRAM_LIMIT_EXCEEDED, "value too large"))?;
            buf.put_i32(n);
            buf.put_slice(b);
        }
    }
    Ok(())
}

/// `Z`: ReadyForQuery with status `I`, `T` or `E`.
#[inline]
pub fn write_ready_for_query(buf: &mut BytesMut, status: u8) {
    buf.put_u8(b'Z');
    buf.put_i32(5);
    buf.put_u8(status);
}

/// `S`: ParameterStatus.
pub fn write_parameter_status(buf: &mut BytesMut, name: &str, value: &str) -> PgResult<()> {
    let s = begin_message(buf, b'S');
    put_cstr(buf, name);
    put_cstr(buf, value);
    finish_message(buf, s)
}

/// `C`: CommandComplete.
#[inline]
pub fn write_command_complete(buf: &mut BytesMut, tag: &str) -> PgResult<()> {
    let s = begin_message(buf, b'C');
    put_cstr(buf, tag);
    finish_message(buf, s)
}

/// `I`: EmptyQueryResponse.
pub fn write_empty_query_response(buf: &mut BytesMut) {
    put_empty(buf, b'I');
}

/// Simple bodiless messages: ParseComplete `1`, BindComplete `2`,
/// CloseComplete `3`, NoData `n`, PortalSuspended `s`, CopyDone `c`.
pub fn write_simple(buf: &mut BytesMut, tag: u8) {
    put_empty(buf, tag);
}

/// `d`: CopyData.
pub fn write_copy_data(buf: &mut BytesMut, data: &[u8]) -> PgResult<()> {
    let s = begin_message(buf, b'd');
    buf.put_slice(data);
    finish_message(buf, s)
}

/// `G`/`H`/`W`: CopyIn/Out/BothResponse.
pub fn write_copy_response(
    buf: &mut BytesMut,
    tag: u8,
    format: i8,
    column_formats: &[i16],
) -> PgResult<()> {
    let s = begin_message(buf, tag);
    buf.put_i8(format);
    put_count(buf, column_formats.len())?;
    for f in column_formats {
        buf.put_i16(*f);
    }
    finish_message(buf, s)
}

/// `G`/`H` with `columns` text columns, as COPY … (FORMAT text/csv) sends.
pub fn write_copy_response_text(buf: &mut BytesMut, tag: u8, columns: usize) -> PgResult<()> {
    let s = begin_message(buf, tag);
    buf.put_i8(0);
    put_count(buf, columns)?;
    for _ in 0..columns {
        buf.put_i16(0);
    }
    finish_message(buf, s)
}

/// One field of a RowDescription (the count is written by the caller).
#[allow(clippy::too_many_arguments)]
pub fn write_field_info(
    buf: &mut BytesMut,
    name: &str,
    table_oid: Oid,
    column_id: i16,
    type_oid: Oid,
    type_len: i16,
    type_mod: i32,
    format: i16,
) {
    put_cstr(buf, name);
    buf.put_u32(table_oid);
    buf.put_i16(column_id);
    buf.put_u32(type_oid);
    buf.put_i16(type_len);
    buf.put_i32(type_mod);
    buf.put_i16(format);
}

/// Starts a RowDescription with `n` fields; follow with `n`
/// [`write_field_info`] calls and [`finish_message`].
pub fn begin_row_description(buf: &mut BytesMut, n: usize) -> PgResult<usize> {
    let s = begin_message(buf, b'T');
    if let Err(e) = put_count(buf, n) {
        buf.truncate(s);
        return Err(e);
    }
    Ok(s)
}

/// `t`: ParameterDescription.
pub fn write_parameter_description(
    buf: &mut BytesMut,
    oids: impl ExactSizeIterator<Item = Oid>,
) -> PgResult<()> {
    let s = begin_message(buf, b't');
    if let Err(e) = put_count(buf, oids.len()) {
        buf.truncate(s);
        return Err(e);
    }
    for o in oids {
        buf.put_u32(o);
    }
    finish_message(buf, s)
}

/// `E` (or `N` for notices) from a [`PgError`], without building
/// [`ErrorFields`]. Severity decides E vs N: warnings and notices are
/// NoticeResponses.
pub fn write_error(buf: &mut BytesMut, e: &PgError) {
    let tag = match e.severity {
        Severity::Error | Severity::Fatal => b'E',
        Severity::Warning | Severity::Notice => b'N',
    };
    let s = begin_message(buf, tag);
    buf.put_u8(b'S');
    put_cstr(buf, e.severity.as_str());
    buf.put_u8(b'V');
    put_cstr(buf, e.severity.as_str());
    buf.put_u8(b'C');
    put_cstr(buf, e.code);
    buf.put_u8(b'M');
    put_cstr(buf, &e.message);
    if let Some(d) = &e.detail {
        buf.put_u8(b'D');
        put_cstr(buf, d);
    }
    if let Some(h) = &e.hint {
        buf.put_u8(b'H');
        put_cstr(buf, h);
    }
    if let Some(p) = e.position {
        buf.put_u8(b'P');
        put_cstr(buf, &p.to_string());
    }
    if let Some(c) = e.context() {
        buf.put_u8(b'W');
        put_cstr(buf, c);
    }
    buf.put_u8(0);
    // An error message can only exceed 2 GB if its text does; cut it then.
    if finish_message(buf, s).is_err() {
        let mut short = e.clone();
        short.message = "error message too long".into();
        short.detail = None;
        short.hint = None;
        short.context = None;
        write_error(buf, &short);
    }
}

fn write_fields(buf: &mut BytesMut, tag: u8, f: &ErrorFields) -> PgResult<()> {
    let s = begin_message(buf, tag);
    for (code, v) in &f.fields {
        // A zero code would end the field list early; it cannot be sent.
        if *code == 0 {
            continue;
        }
        buf.put_u8(*code);
        put_cstr(buf, v);
    }
    buf.put_u8(0);
    finish_message(buf, s)
}

/// Writes one DataRow in place: the column count and length words go
/// straight into the output buffer, values are written by the caller's
/// formatter through [`DataRowWriter::value_with`]. No allocation per row.
pub struct DataRowWriter<'a> {
    buf: &'a mut BytesMut,
    start: usize,
}

impl<'a> DataRowWriter<'a> {
    /// Starts a DataRow of `columns` values.
    #[inline]
    pub fn begin(buf: &'a mut BytesMut, columns: usize) -> PgResult<DataRowWriter<'a>> {
        let start = begin_message(buf, b'D');
        if let Err(e) = put_count(buf, columns) {
            buf.truncate(start);
            return Err(e);
        }
        Ok(DataRowWriter { buf, start })
    }
    /// A NULL.
    #[inline]
    pub fn null(&mut self) {
        self.buf.put_i32(-1);
    }
    /// A value given as bytes.
    #[inline]
    pub fn value(&mut self, v: &[u8]) {
        self.buf.put_i32(v.len() as i32);
        self.buf.put_slice(v);
    }
    /// A value written by `f` directly into the buffer; its length word is
    /// patched afterwards.
    #[inline]
    pub fn value_with<E>(
        &mut self,
        f: impl FnOnce(&mut BytesMut) -> Result<(), E>,
    ) -> Result<(), E> {
        let at = self.buf.len();
        self.buf.put_i32(0);
        f(self.buf)?;
        let len = (self.buf.len() - at - 4) as i32;
        self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        Ok(())
    }
    /// Patches the message length.
    #[inline]
    pub fn finish(self) -> PgResult<()> {
        finish_message(self.buf, self.start)
    }
    /// Drops the half-written row (after a formatting error).
    pub fn abandon(self) {
        self.buf.truncate(self.start);
    }
}
