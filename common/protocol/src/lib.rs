//! The PostgreSQL v3 wire protocol: messages in both directions and
//! tokio-util codecs for the server side and the client side.
//!
//! ```text
//!   client                         server
//!   ------                         ------
//!   [SSLRequest]        ───▶       'N' | 'S' + TLS handshake
//!   Startup(params)     ───▶       AuthenticationOk, ParameterStatus*,
//!                                  BackendKeyData, ReadyForQuery
//!   Query | Parse/Bind/Describe/Execute/Close…/Sync | CopyData… ───▶
//!                       ◀───       RowDescription, DataRow*, CommandComplete,
//!                                  ErrorResponse, ReadyForQuery …
//! ```
//!
//! * [`messages`]: [`FrontendMessage`] and [`BackendMessage`] with their
//!   byte layouts, plus allocation-free writers for the server's hot path
//!   (DataRow, CommandComplete, ErrorResponse straight into a buffer).
//! * [`codec`]: [`ServerCodec`] and [`ClientCodec`]. They enforce the
//!   message size limits before allocating and turn framing errors into
//!   [`ProtocolError`]s (the connection ends with a FATAL 08P01), while
//!   errors inside a well-framed message are ordinary [`PgError`]s.
//! * [`client`]: a small async client (startup with trust, password, md5
//!   or SCRAM-SHA-256 authentication, simple query, COPY, raw messages)
//!   for the walreceiver and for tests.
//! * [`tls`]: libpq's `sslmode` for the client ([`client`] runs the
//!   SSLRequest and the handshake); [`x509`]: the names, serial and
//!   channel-binding hash PostgreSQL reads from a certificate.
//! * [`sockopt`]: TCP keepalive options of a connected socket, for both
//!   sides (the server's `tcp_keepalives_*` settings, libpq's
//!   `keepalives*` in a walreceiver's connection string).
//! * [`scram`] and [`md5`]: the password verifiers PostgreSQL stores and
//!   both sides of their authentication exchanges (the server's session
//!   loop and the client above use the same code).
//!
//! Invariant: nothing here panics on any byte sequence; every read is
//! bounds-checked against the one message body it belongs to.
//!
//! [`PgError`]: pgtypes::error::PgError

pub mod client;
pub mod codec;
pub mod md5;
pub mod messages;
pub mod scram;
pub mod sockopt;
pub mod tls;
pub mod x509;

pub use client::{cancel_request, Client, ClientError, QueryResult};
pub use codec::{ClientCodec, MessageError, ProtocolError, ServerCodec, DEFAULT_MAX_MESSAGE_SIZE};
pub use messages::{BackendMessage, ErrorFields, FieldInfo, FrontendMessage, Target};

#[cfg(test)]
mod tests;
