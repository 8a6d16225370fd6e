//! Bytes on a socket: a protocol-level client for tests that send what no
//! driver would (garbage, huge lengths, unknown message types, bad startup
//! packets, malformed Bind messages) and look at exactly what comes back.
//!
//! Frontend messages are built with the helpers at the bottom ([`startup`],
//! [`message`], [`query`], [`parse`], [`bind`], [`sync`]); backend messages
//! are read as `(type byte, body)` and ErrorResponses decoded into
//! [`ErrorFields`]. Reads time out after
//! [`timeout_default`](crate::timeout_default) so a hung server fails the
//! test with a message instead of hanging it.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};

use crate::utils::timeout_default;

/// PostgreSQL protocol 3.0.
pub const PROTOCOL_3_0: i32 = 196_608;

/// One backend message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendMessage {
    /// The type byte (`b'E'`, `b'Z'`, `b'R'`, …).
    pub tag: u8,
    /// The body after the length word.
    pub body: Vec<u8>,
}

/// The fields of an ErrorResponse / NoticeResponse.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorFields {
    /// `S`: ERROR, FATAL, …
    pub severity: String,
    /// `C`: the SQLSTATE.
    pub code: String,
    /// `M`: the primary message.
    pub message: String,
}

impl BackendMessage {
    /// Decodes an ErrorResponse body (`None` for other messages).
    pub fn error_fields(&self) -> Option<ErrorFields> {
        if self.tag != b'E' && self.tag != b'N' {
            return None;
        }
        let mut fields = ErrorFields::default();
        for part in self.body.split(|&b| b == 0) {
            let Some((&kind, value)) = part.split_first() else {
                continue;
            };
            let value = String::from_utf8_lossy(value).into_owned();
            match kind {
                b'S' => fields.severity = value,
                b'C' => fields.code = value,
                b'M' => fields.message = value,
                _ => {}
            }
        }
        Some(fields)
    }
}

/// How the server answered something a test sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An ErrorResponse arrived (the connection may or may not stay open).
    Error(ErrorFields),
    /// The server closed the connection (EOF or reset) without an error.
    Closed,
    /// ReadyForQuery arrived with no ErrorResponse before it: the server
    /// accepted what was sent.
    Ready,
}

/// A raw TCP connection to a server.
pub struct RawConnection {
    stream: TcpStream,
}

impl RawConnection {
    /// Connects to `host:port`; panics if it cannot.
    pub fn connect(host: &str, port: u16) -> RawConnection {
        let stream = TcpStream::connect((host, port))
            .unwrap_or_else(|e| panic!("connect {host}:{port}: {e}"));
        stream
            .set_read_timeout(Some(timeout_default()))
            .expect("set_read_timeout");
        stream.set_nodelay(true).expect("set_nodelay");
        RawConnection { stream }
    }

    /// Sends a 3.0 startup packet (user `postgres`, database `postgres`) and
    /// reads up to ReadyForQuery; panics if the server does not accept it.
    pub fn startup(&mut self) {
        self.send(&startup(
            PROTOCOL_3_0,
            &[("user", "postgres"), ("database", "postgres")],
        ));
        loop {
            match self.read_message() {
                Ok(Some(m)) if m.tag == b'Z' => return,
                Ok(Some(m)) if m.tag == b'E' => panic!("startup refused: {:?}", m.error_fields()),
                Ok(Some(_)) => {}
                Ok(None) => panic!("server closed the connection during startup"),
                Err(e) => panic!("reading the startup response: {e}"),
            }
        }
    }

    /// Writes `bytes`. Write errors are ignored: the server may already have
    /// closed the connection, which [`outcome`](Self::outcome) reports.
    pub fn send(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
        let _ = self.stream.flush();
    }

    /// Half-closes the connection: the server reads EOF after what was sent.
    pub fn finish_sending(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
    }

    /// Reads one backend message; `Ok(None)` on EOF or reset. A timeout is
    /// an error (`TimedOut` / `WouldBlock`).
    pub fn read_message(&mut self) -> std::io::Result<Option<BackendMessage>> {
        let mut header = [0u8; 5];
        if !self.read_exact_or_eof(&mut header)? {
            return Ok(None);
        }
        let len = i32::from_be_bytes([header[1], header[2], header[3], header[4]]);
        if !(4..=(1 << 30)).contains(&len) {
            return Err(std::io::Error::new(
                ErrorKind::InvalidData,
                format!("bad backend message length {len}"),
            ));
        }
        let mut body = vec![0u8; len as usize - 4];
        if !self.read_exact_or_eof(&mut body)? {
            return Ok(None);
        }
        Ok(Some(BackendMessage {
            tag: header[0],
            body,
        }))
    }

    /// Reads messages until an ErrorResponse, ReadyForQuery, or the end of
    /// the connection; panics if the server neither answers nor closes
    /// within the default timeout.
    pub fn outcome(&mut self) -> Outcome {
        loop {
            match self.read_message() {
                Ok(Some(m)) if m.tag == b'E' => {
                    return Outcome::Error(m.error_fields().unwrap_or_default())
                }
                Ok(Some(m)) if m.tag == b'Z' => return Outcome::Ready,
                Ok(Some(_)) => {}
                Ok(None) => return Outcome::Closed,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    panic!(
                        "server neither answered nor closed the connection within {:?}",
                        timeout_default()
                    )
                }
                Err(e) => panic!("reading from the server: {e}"),
            }
        }
    }

    /// Reads until EOF (discarding messages); true if the server closed the
    /// connection, false on timeout.
    pub fn wait_closed(&mut self) -> bool {
        loop {
            match self.read_message() {
                Ok(Some(_)) => {}
                Ok(None) => return true,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return false
                }
                Err(_) => return true,
            }
        }
    }

    /// Reads everything until the server closes the connection (for answers
    /// that need not follow protocol 3.0 framing, such as the error a
    /// PostgreSQL server sends to a 2.0 startup packet). Panics on timeout.
    pub fn read_to_end(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return out,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    panic!(
                        "server did not close the connection within {:?}; read {out:?}",
                        timeout_default()
                    )
                }
                Err(_) => return out,
            }
        }
    }

    /// Fills `buf`; false on a clean EOF or a reset (the server hung up).
    fn read_exact_or_eof(&mut self, buf: &mut [u8]) -> std::io::Result<bool> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.stream.read(&mut buf[filled..]) {
                Ok(0) => return Ok(false),
                Ok(n) => filled += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
                    ) =>
                {
                    return Ok(false)
                }
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

/// A startup packet: length, protocol `version`, `name\0value\0` pairs, `\0`.
pub fn startup(version: i32, params: &[(&str, &str)]) -> Vec<u8> {
    let mut body = version.to_be_bytes().to_vec();
    for (k, v) in params {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut out = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

/// A typed frontend message: tag, length (body + 4), body.
pub fn message(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// A Query message for raw SQL bytes (need not be UTF-8).
pub fn query(sql: &[u8]) -> Vec<u8> {
    let mut body = sql.to_vec();
    body.push(0);
    message(b'Q', &body)
}

/// A Parse message: statement `name`, `sql`, parameter type OIDs.
pub fn parse(name: &str, sql: &str, param_types: &[u32]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(name.as_bytes());
    body.push(0);
    body.extend_from_slice(sql.as_bytes());
    body.push(0);
    body.extend_from_slice(&(param_types.len() as i16).to_be_bytes());
    for oid in param_types {
        body.extend_from_slice(&oid.to_be_bytes());
    }
    message(b'P', &body)
}

/// A Bind message: `portal`, `statement`, text-format parameters (`None` =
/// NULL), text results.
pub fn bind(portal: &str, statement: &str, params: &[Option<&str>]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(portal.as_bytes());
    body.push(0);
    body.extend_from_slice(statement.as_bytes());
    body.push(0);
    body.extend_from_slice(&0i16.to_be_bytes()); // all parameters in text
    body.extend_from_slice(&(params.len() as i16).to_be_bytes());
    for p in params {
        match p {
            Some(v) => {
                body.extend_from_slice(&(v.len() as i32).to_be_bytes());
                body.extend_from_slice(v.as_bytes());
            }
            None => body.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    body.extend_from_slice(&0i16.to_be_bytes()); // all results in text
    message(b'B', &body)
}

/// An Execute message for `portal`, no row limit.
pub fn execute(portal: &str) -> Vec<u8> {
    let mut body = portal.as_bytes().to_vec();
    body.push(0);
    body.extend_from_slice(&0i32.to_be_bytes());
    message(b'E', &body)
}

/// A Sync message.
pub fn sync() -> Vec<u8> {
    message(b'S', &[])
}

/// A Terminate message.
pub fn terminate() -> Vec<u8> {
    message(b'X', &[])
}

/// Deterministic pseudo-random bytes (xorshift64*), so a failing input can
/// be reproduced from its seed.
pub fn pseudo_random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_packet_layout() {
        let p = startup(PROTOCOL_3_0, &[("user", "u")]);
        assert_eq!(
            &p[0..4],
            &(p.len() as i32).to_be_bytes(),
            "length covers the packet"
        );
        assert_eq!(&p[4..8], &PROTOCOL_3_0.to_be_bytes(), "version follows");
        assert_eq!(&p[8..], b"user\0u\0\0", "parameters end with a NUL");
    }

    #[test]
    fn error_fields_decode() {
        let m = BackendMessage {
            tag: b'E',
            body: b"SERROR\0C42P01\0Mno such table\0\0".to_vec(),
        };
        let f = m.error_fields().unwrap();
        assert_eq!(
            (f.severity.as_str(), f.code.as_str(), f.message.as_str()),
            ("ERROR", "42P01", "no such table")
        );
    }

    #[test]
    fn random_bytes_are_reproducible() {
        assert_eq!(
            pseudo_random_bytes(7, 16),
            pseudo_random_bytes(7, 16),
            "same seed, same bytes"
        );
        assert_ne!(
            pseudo_random_bytes(7, 16),
            pseudo_random_bytes(8, 16),
            "different seeds differ"
        );
    }
}
