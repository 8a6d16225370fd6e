//! tokio-util codecs for the v3 protocol: [`ServerCodec`] (decodes the
//! startup packet, then typed frontend messages; encodes backend messages)
//! and [`ClientCodec`] (the mirror image).
//!
//! Framing rules, checked before any allocation so that a hostile length
//! prefix costs nothing:
//! * startup packet: total length 8 ..= [`MAX_STARTUP_PACKET_LENGTH`];
//! * typed message: the type byte is checked first (an unknown type is
//!   "invalid frontend message type N", FATAL, as in PostgreSQL's
//!   `SocketBackend`), then the length: at least 4 and at most the limit of
//!   its type — [`SMALL_MESSAGE_LIMIT`] for Sync/Flush/Describe/… and
//!   `max_message_size` for Query/Parse/Bind/CopyData.
//!
//! Buffer growth for a message being received is incremental
//! ([`RESERVE_CHUNK`] at a time, doubling through `BytesMut`), so a client
//! announcing 1 GB and sending nothing makes us allocate nothing big.
//!
//! Framing errors are [`ProtocolError`]s and end the stream (the server
//! sends a FATAL ErrorResponse and closes). Errors inside one complete
//! message body (bad UTF-8, a truncated Bind) are not framing errors: the
//! server codec yields them as `Ok(Some(Err(MessageError)))` and the connection
//! continues, as PostgreSQL's ERROR-level `pq_getmsg*` failures do.

use std::io;

use bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::messages::*;
use pgtypes::error::{sqlstate, PgError};

/// PostgreSQL's PQ_SMALL_MESSAGE_LIMIT, for messages that are never big.
pub const SMALL_MESSAGE_LIMIT: usize = 10000;
/// Default `max_message_size` (PostgreSQL's PQ_LARGE_MESSAGE_LIMIT, 1 GB).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 1 << 30;
/// How much buffer a partially received message reserves at a time.
pub const RESERVE_CHUNK: usize = 64 * 1024;

/// A framing error: the connection cannot continue.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// The socket failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A length word below 4 or above the limit for its type.
    #[error("invalid message length {0}")]
    InvalidLength(i64),
    /// A startup packet length outside 8 ..= 10000.
    #[error("invalid length of startup packet {0}")]
    InvalidStartupLength(i64),
    /// A type byte that is not a frontend message.
    #[error("invalid frontend message type {0}")]
    UnknownType(u8),
    /// A startup packet asking for a protocol other than 3.x.
    #[error("unsupported frontend protocol {0}.{1}: server supports 3.0 to 3.0")]
    UnsupportedProtocol(u16, u16),
    /// Any other unrecoverable error (a malformed startup packet, a
    /// malformed message received by the client).
    #[error("{0}")]
    Fatal(PgError),
}

impl ProtocolError {
    /// The FATAL error to send before closing (PostgreSQL's wording).
    pub fn to_pg_error(&self) -> PgError {
        match self {
            ProtocolError::Io(e) => PgError::fatal(
                sqlstate::CONNECTION_FAILURE,
                format!("could not receive data from client: {e}"),
            ),
            ProtocolError::InvalidLength(_) => {
                PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "invalid message length")
            }
            ProtocolError::InvalidStartupLength(_) => PgError::fatal(
                sqlstate::PROTOCOL_VIOLATION,
                "invalid length of startup packet",
            ),
            ProtocolError::UnknownType(t) => PgError::fatal(
                sqlstate::PROTOCOL_VIOLATION,
                format!("invalid frontend message type {t}"),
            ),
            ProtocolError::UnsupportedProtocol(..) => {
                PgError::fatal(sqlstate::FEATURE_NOT_SUPPORTED, self.to_string())
            }
            ProtocolError::Fatal(e) => {
                let mut e = e.clone();
                e.severity = pgtypes::error::Severity::Fatal;
                e
            }
        }
    }
}

/// The per-type length limit of a frontend message body.
fn frontend_limit(tag: u8, max: usize) -> usize {
    match tag {
        b'Q' | b'P' | b'B' | b'd' | b'p' => max,
        _ => SMALL_MESSAGE_LIMIT,
    }
}

/// Reads a typed frame `tag, len, body` from `src` if complete. `check`
/// validates the type byte, `limit` gives its maximum body length.
fn split_typed_frame(
    src: &mut BytesMut,
    check: impl Fn(u8) -> Result<(), ProtocolError>,
    limit: impl Fn(u8) -> usize,
) -> Result<Option<(u8, bytes::Bytes)>, ProtocolError> {
    let Some((tag, total)) = typed_frame(src, check, limit)? else {
        return Ok(None);
    };
    let mut frame = src.split_to(total);
    frame.advance(5);
    Ok(Some((tag, frame.freeze())))
}

/// The type and whole length (type byte included) of the complete typed
/// frame at the front of `src`, if it is all there.
fn typed_frame(
    src: &mut BytesMut,
    check: impl Fn(u8) -> Result<(), ProtocolError>,
    limit: impl Fn(u8) -> usize,
) -> Result<Option<(u8, usize)>, ProtocolError> {
    let Some(&tag) = src.first() else {
        return Ok(None);
    };
    check(tag)?;
    if src.len() < 5 {
        return Ok(None);
    }
    let len = i32::from_be_bytes([src[1], src[2], src[3], src[4]]) as i64;
    if len < 4 || (len - 4) as u64 > limit(tag) as u64 {
        return Err(ProtocolError::InvalidLength(len));
    }
    let total = 1 + len as usize;
    if src.len() < total {
        src.reserve((total - src.len()).min(RESERVE_CHUNK));
        return Ok(None);
    }
    Ok(Some((tag, total)))
}

/// An error confined to one well-framed message (the connection goes on).
#[derive(Clone, Debug, PartialEq)]
pub struct MessageError {
    /// The message's type byte (0 for the startup packet).
    pub tag: u8,
    /// What was wrong with it (08P01, or 22021 for invalid UTF-8).
    pub error: PgError,
}

/// Which phase a server connection is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Expecting a startup packet (or SSLRequest/GSSENCRequest/CancelRequest).
    Startup,
    /// Expecting typed messages.
    Normal,
}

/// Server side: decodes [`FrontendMessage`]s, encodes [`BackendMessage`]s.
#[derive(Debug)]
pub struct ServerCodec {
    phase: Phase,
    max_message_size: usize,
}

impl ServerCodec {
    /// A codec expecting a startup packet, accepting messages up to
    /// `max_message_size` body bytes.
    pub fn new(max_message_size: usize) -> ServerCodec {
        ServerCodec {
            phase: Phase::Startup,
            max_message_size,
        }
    }
    /// A codec for a connection whose startup packet was already read (a
    /// replication connection handed over by the session loop).
    pub fn new_started(max_message_size: usize) -> ServerCodec {
        ServerCodec {
            phase: Phase::Normal,
            max_message_size,
        }
    }
    /// True until a Startup message has been decoded.
    pub fn in_startup(&self) -> bool {
        self.phase == Phase::Startup
    }

    fn decode_startup(
        &mut self,
        src: &mut BytesMut,
    ) -> Result<Option<FrontendMessage>, ProtocolError> {
        if src.len() < 4 {
            return Ok(None);
        }
        let len = i32::from_be_bytes([src[0], src[1], src[2], src[3]]) as i64;
        if len < 8 || len as usize > MAX_STARTUP_PACKET_LENGTH {
            return Err(ProtocolError::InvalidStartupLength(len));
        }
        let len = len as usize;
        if src.len() < len {
            src.reserve(len - src.len());
            return Ok(None);
        }
        let mut frame = src.split_to(len);
        frame.advance(4);
        let code = frame.get_i32();
        match code {
            SSL_REQUEST_CODE | GSSENC_REQUEST_CODE | CANCEL_REQUEST_CODE => {}
            _ => {
                let (major, minor) = ((code as u32 >> 16) as u16, (code as u32 & 0xffff) as u16);
                if major != 3 {
                    return Err(ProtocolError::UnsupportedProtocol(major, minor));
                }
            }
        }
        let msg = FrontendMessage::decode_startup(code, &frame).map_err(ProtocolError::Fatal)?;
        if matches!(msg, FrontendMessage::Startup { .. }) {
            self.phase = Phase::Normal;
        }
        Ok(Some(msg))
    }
}

impl Decoder for ServerCodec {
    /// A complete message, or an error confined to one message body.
    type Item = Result<FrontendMessage, MessageError>;
    type Error = ProtocolError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, ProtocolError> {
        if self.phase == Phase::Startup {
            return Ok(self.decode_startup(src)?.map(Ok));
        }
        let max = self.max_message_size;
        let Some((tag, total)) = typed_frame(
            src,
            |t| {
                if is_frontend_type(t) {
                    Ok(())
                } else {
                    Err(ProtocolError::UnknownType(t))
                }
            },
            |t| frontend_limit(t, max),
        )?
        else {
            return Ok(None);
        };
        // Most messages are decoded where they lie (no `Bytes` made and
        // dropped per message); Bind and CopyData keep theirs.
        let decoded = if FrontendMessage::keeps_body(tag) {
            let mut frame = src.split_to(total);
            frame.advance(5);
            FrontendMessage::decode_kept(tag, frame.freeze())
        } else {
            let r = FrontendMessage::decode(tag, &src[5..total]);
            src.advance(total);
            r
        };
        Ok(Some(decoded.map_err(|error| MessageError { tag, error })))
    }
}

impl Encoder<&BackendMessage> for ServerCodec {
    type Error = ProtocolError;
    fn encode(&mut self, msg: &BackendMessage, dst: &mut BytesMut) -> Result<(), ProtocolError> {
        msg.encode(dst).map_err(ProtocolError::Fatal)
    }
}

impl Encoder<BackendMessage> for ServerCodec {
    type Error = ProtocolError;
    fn encode(&mut self, msg: BackendMessage, dst: &mut BytesMut) -> Result<(), ProtocolError> {
        msg.encode(dst).map_err(ProtocolError::Fatal)
    }
}

/// Client side: encodes [`FrontendMessage`]s, decodes [`BackendMessage`]s.
#[derive(Debug)]
pub struct ClientCodec {
    max_message_size: usize,
}

impl ClientCodec {
    /// A codec accepting backend messages up to `max_message_size` bytes.
    pub fn new(max_message_size: usize) -> ClientCodec {
        ClientCodec { max_message_size }
    }
}

impl Default for ClientCodec {
    fn default() -> ClientCodec {
        ClientCodec::new(DEFAULT_MAX_MESSAGE_SIZE)
    }
}

impl Decoder for ClientCodec {
    type Item = BackendMessage;
    type Error = ProtocolError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<BackendMessage>, ProtocolError> {
        let max = self.max_message_size;
        let Some((tag, body)) = split_typed_frame(src, |_| Ok(()), |_| max)? else {
            return Ok(None);
        };
        BackendMessage::decode(tag, body)
            .map(Some)
            .map_err(ProtocolError::Fatal)
    }
}

impl Encoder<&FrontendMessage> for ClientCodec {
    type Error = ProtocolError;
    fn encode(&mut self, msg: &FrontendMessage, dst: &mut BytesMut) -> Result<(), ProtocolError> {
        msg.encode(dst).map_err(ProtocolError::Fatal)
    }
}

impl Encoder<FrontendMessage> for ClientCodec {
    type Error = ProtocolError;
    fn encode(&mut self, msg: FrontendMessage, dst: &mut BytesMut) -> Result<(), ProtocolError> {
        msg.encode(dst).map_err(ProtocolError::Fatal)
    }
}
