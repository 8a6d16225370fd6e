//! TLS for client connections (PostgreSQL's `be-secure-openssl.c`), with
//! rustls and its `ring` provider.
//!
//! ```text
//!   client: SSLRequest ──▶ 'S' (ssl = on, TCP)  ──▶ TLS handshake ──▶ Startup …
//!                      ──▶ 'N' (ssl = off, or a Unix socket) ──▶ Startup …
//! ```
//!
//! * [`TlsContext`] is what `ssl`, `ssl_cert_file`, `ssl_key_file`,
//!   `ssl_ca_file` and the protocol-version range make: the rustls server
//!   configuration, whether client certificates are asked for (only with
//!   an `ssl_ca_file`, then checked against it; a client that sends none
//!   is still let in, and pg_hba.conf's `cert` / `clientcert` decide), and
//!   the server certificate's `tls-server-end-point` hash for
//!   SCRAM-SHA-256-PLUS. [`load`] reports problems in PostgreSQL's words;
//!   at start they are FATAL, at reload ([`TlsState::reload`]) the old
//!   context stays and the error is logged.
//! * The handshake runs inside the session loop's startup, under the same
//!   `authentication_timeout` as the startup packet and authentication, on
//!   the connection's own task: a client that stalls mid-handshake costs
//!   one idle task until the deadline, nothing else.
//! * [`TlsSocket`] is the TCP socket under a TLS stream. It can be parked
//!   (deregistered from one runtime's reactor) and registered again with
//!   another, so a TLS session moves between session cores and hands
//!   over to the walsender like a plain one, its TLS state travelling with
//!   it.
//! * [`ssl_info`] reads what `pg_stat_ssl` shows: version, OpenSSL's
//!   cipher name, key bits, the client certificate's names.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use parking_lot::RwLock;
use pgtypes::config::Config;
use pgtypes::ssl::SslInfo;
use rustls::pki_types::CertificateDer;
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A server TLS stream over a client's TCP socket.
pub type ServerTls = tokio_rustls::server::TlsStream<TlsSocket>;

/// What the `ssl*` settings made.
pub struct TlsContext {
    acceptor: tokio_rustls::TlsAcceptor,
    /// The server certificate's `tls-server-end-point` hash (None when its
    /// signature algorithm names no hash: no SCRAM-SHA-256-PLUS then).
    end_point: Option<Vec<u8>>,
    /// `ssl_ca_file` is set: client certificates are asked for and checked.
    verifies_clients: bool,
}

impl TlsContext {
    /// The acceptor for one handshake.
    pub fn acceptor(&self) -> &tokio_rustls::TlsAcceptor {
        &self.acceptor
    }

    /// The `tls-server-end-point` channel-binding data.
    pub fn end_point(&self) -> Option<&[u8]> {
        self.end_point.as_deref()
    }

    /// True if client certificates are checked (PostgreSQL's
    /// `secure_loaded_verify_locations`).
    pub fn verifies_clients(&self) -> bool {
        self.verifies_clients
    }
}

/// The node's current TLS context, replaced whole on reload.
#[derive(Default)]
pub struct TlsState {
    current: RwLock<Option<Arc<TlsContext>>>,
}

/// The settings [`load`] reads.
pub const SSL_SETTINGS: &[&str] = &[
    "ssl",
    "ssl_cert_file",
    "ssl_key_file",
    "ssl_ca_file",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
];

impl TlsState {
    /// Loads the context at start (an error is FATAL there).
    pub fn load(config: &Config) -> Result<TlsState, String> {
        let state = TlsState::default();
        *state.current.write() = load(config)?;
        Ok(state)
    }

    /// The context new connections use (None: `ssl` is off).
    pub fn current(&self) -> Option<Arc<TlsContext>> {
        self.current.read().clone()
    }

    /// Rebuilds the context from a reloaded configuration; on any error
    /// the old context stays and the error is logged. Sessions already
    /// connected keep theirs.
    pub fn reload(&self, config: &Config) {
        match load(config) {
            Ok(ctx) => *self.current.write() = ctx,
            Err(e) => {
                tracing::info!("{e}");
                tracing::info!("SSL configuration was not reloaded");
            }
        }
    }
}

/// An OS error as PostgreSQL's `%m` prints it (no "(os error N)").
fn os_text(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn in_data_dir(config: &Config, name: &str) -> PathBuf {
    let p = Path::new(config.get(name).unwrap_or(""));
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        config.data_dir.join(p)
    }
}

/// The file name as the setting wrote it (PostgreSQL's messages quote the
/// setting's value, relative to the data directory).
fn shown(config: &Config, name: &str) -> String {
    config.get(name).unwrap_or("").to_string()
}

/// Builds the context the `ssl*` settings of `config` describe; None when
/// `ssl` is off. Errors are PostgreSQL's messages.
pub fn load(config: &Config) -> Result<Option<Arc<TlsContext>>, String> {
    if !config.bool("ssl") {
        return Ok(None);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // The certificate chain.
    let cert_name = shown(config, "ssl_cert_file");
    let cert_path = in_data_dir(config, "ssl_cert_file");
    let cert_err =
        |m: String| format!("could not load server certificate file \"{cert_name}\": {m}");
    let pem = std::fs::read(&cert_path).map_err(|e| cert_err(os_text(&e)))?;
    let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut pem.as_slice())
        .collect::<Result<_, _>>()
        .map_err(|e| cert_err(e.to_string()))?;
    if certs.is_empty() {
        return Err(cert_err("no start line".into()));
    }
    // The key: PostgreSQL's permission checks first.
    let key_name = shown(config, "ssl_key_file");
    let key_path = in_data_dir(config, "ssl_key_file");
    let meta = std::fs::metadata(&key_path).map_err(|e| {
        format!(
            "could not access private key file \"{key_name}\": {}",
            os_text(&e)
        )
    })?;
    if !meta.is_file() {
        return Err(format!(
            "private key file \"{key_name}\" is not a regular file"
        ));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if meta.uid() != euid && meta.uid() != 0 {
        return Err(format!(
            "private key file \"{key_name}\" must be owned by the database user or root"
        ));
    }
    let mode = meta.mode() & 0o777;
    if (meta.uid() == euid && mode & 0o077 != 0) || (meta.uid() == 0 && mode & 0o037 != 0) {
        return Err(format!(
            "private key file \"{key_name}\" has group or world access\nDETAIL:  File must have permissions u=rw (0600) or less if owned by the database user, or permissions u=rw,g=r (0640) or less if owned by root."
        ));
    }
    let key_err = |m: String| format!("could not load private key file \"{key_name}\": {m}");
    let pem = std::fs::read(&key_path).map_err(|e| key_err(os_text(&e)))?;
    let key = rustls_pemfile::private_key(&mut pem.as_slice())
        .map_err(|e| key_err(e.to_string()))?
        .ok_or_else(|| key_err("no start line".into()))?;
    // Protocol versions.
    let version = |name: &str| -> Option<&'static SupportedProtocolVersion> {
        match config.get(name).unwrap_or("") {
            "TLSv1.2" => Some(&rustls::version::TLS12),
            "TLSv1.3" => Some(&rustls::version::TLS13),
            _ => None,
        }
    };
    let min = version("ssl_min_protocol_version").unwrap_or(&rustls::version::TLS12);
    let max = version("ssl_max_protocol_version");
    let mut versions: Vec<&'static SupportedProtocolVersion> = Vec::new();
    if min.version == rustls::ProtocolVersion::TLSv1_2 {
        versions.push(&rustls::version::TLS12);
    }
    if max.is_none_or(|m| m.version == rustls::ProtocolVersion::TLSv1_3) {
        versions.push(&rustls::version::TLS13);
    }
    if versions.is_empty() {
        return Err(format!(
            "could not set SSL protocol version range\nDETAIL:  \"ssl_min_protocol_version\" cannot be higher than \"ssl_max_protocol_version\" (\"{}\" > \"{}\")",
            shown(config, "ssl_min_protocol_version"),
            shown(config, "ssl_max_protocol_version")
        ));
    }
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| format!("could not create SSL context: {e}"))?;
    let ca_name = shown(config, "ssl_ca_file");
    let verifies_clients = !ca_name.is_empty();
    let builder = if verifies_clients {
        let ca_err = |m: String| format!("could not load root certificate file \"{ca_name}\": {m}");
        let pem =
            std::fs::read(in_data_dir(config, "ssl_ca_file")).map_err(|e| ca_err(os_text(&e)))?;
        let mut roots = RootCertStore::empty();
        for c in rustls_pemfile::certs(&mut pem.as_slice()) {
            let c = c.map_err(|e| ca_err(e.to_string()))?;
            roots.add(c).map_err(|e| ca_err(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(ca_err("no certificate found".into()));
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .allow_unauthenticated()
            .build()
            .map_err(|e| ca_err(e.to_string()))?;
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let end_point = protocol::x509::end_point_hash(&certs[0]);
    let mut cfg = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("check of private key failed: {e}"))?;
    // No session resumption, as PostgreSQL (SSL_OP_NO_TICKET, no cache).
    cfg.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    cfg.send_tls13_tickets = 0;
    Ok(Some(Arc::new(TlsContext {
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(cfg)),
        end_point,
        verifies_clients,
    })))
}

/// What `pg_stat_ssl` shows of an established TLS connection.
pub fn ssl_info(stream: &ServerTls) -> SslInfo {
    let conn = stream.get_ref().1;
    let version = match conn.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
        _ => "unknown",
    };
    let (cipher, bits) = conn
        .negotiated_cipher_suite()
        .map(|s| openssl_cipher(s.suite()))
        .unwrap_or(("unknown", 0));
    let client = conn
        .peer_certificates()
        .and_then(|c| c.first())
        .and_then(|c| protocol::x509::parse(c));
    SslInfo {
        version: version.into(),
        cipher: cipher.into(),
        bits,
        client_dn: client.as_ref().map(|c| c.subject.clone()),
        client_serial: client.as_ref().map(|c| c.serial.clone()),
        issuer_dn: client.as_ref().map(|c| c.issuer.clone()),
        client_cn: client.and_then(|c| c.common_name),
    }
}

/// OpenSSL's name and key bits of a cipher suite.
fn openssl_cipher(s: rustls::CipherSuite) -> (&'static str, i32) {
    use rustls::CipherSuite as C;
    match s {
        C::TLS13_AES_256_GCM_SHA384 => ("TLS_AES_256_GCM_SHA384", 256),
        C::TLS13_AES_128_GCM_SHA256 => ("TLS_AES_128_GCM_SHA256", 128),
        C::TLS13_CHACHA20_POLY1305_SHA256 => ("TLS_CHACHA20_POLY1305_SHA256", 256),
        C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => ("ECDHE-ECDSA-AES256-GCM-SHA384", 256),
        C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => ("ECDHE-ECDSA-AES128-GCM-SHA256", 128),
        C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => ("ECDHE-ECDSA-CHACHA20-POLY1305", 256),
        C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => ("ECDHE-RSA-AES256-GCM-SHA384", 256),
        C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => ("ECDHE-RSA-AES128-GCM-SHA256", 128),
        C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => ("ECDHE-RSA-CHACHA20-POLY1305", 256),
        _ => ("unknown", 0),
    }
}

/// The TCP socket under a [`ServerTls`]: registered with a runtime, or
/// parked between two (see the module doc).
#[derive(Debug)]
pub struct TlsSocket(Sock);

#[derive(Debug)]
enum Sock {
    Live(TcpStream),
    Parked(std::net::TcpStream),
    /// Only while converting (a failed conversion leaves it).
    Gone,
}

impl TlsSocket {
    /// Wraps a registered socket.
    pub fn new(s: TcpStream) -> TlsSocket {
        TlsSocket(Sock::Live(s))
    }

    /// The registered socket (None while parked).
    pub fn tcp(&self) -> Option<&TcpStream> {
        match &self.0 {
            Sock::Live(s) => Some(s),
            _ => None,
        }
    }

    /// Leaves the current runtime's reactor.
    pub fn park(&mut self) -> io::Result<()> {
        if let Sock::Live(s) = std::mem::replace(&mut self.0, Sock::Gone) {
            self.0 = Sock::Parked(s.into_std()?);
        }
        Ok(())
    }

    /// Joins the current runtime's reactor.
    pub fn unpark(&mut self) -> io::Result<()> {
        if let Sock::Parked(s) = std::mem::replace(&mut self.0, Sock::Gone) {
            self.0 = Sock::Live(TcpStream::from_std(s)?);
        }
        Ok(())
    }

    fn live(&mut self) -> io::Result<Pin<&mut TcpStream>> {
        match &mut self.0 {
            Sock::Live(s) => Ok(Pin::new(s)),
            _ => Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "TLS socket used while between runtimes",
            )),
        }
    }
}

impl AsyncRead for TlsSocket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut().live() {
            Ok(s) => s.poll_read(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl AsyncWrite for TlsSocket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut().live() {
            Ok(s) => s.poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut().live() {
            Ok(s) => s.poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut().live() {
            Ok(s) => s.poll_shutdown(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}
