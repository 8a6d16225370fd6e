//! The client side of TLS, as libpq's `sslmode` sets it up: the
//! walreceiver and the base backup connect to the primary with it.
//!
//! ```text
//!   sslmode      SSLRequest?  server says N   certificate check
//!   disable      no           -               -
//!   allow        after a plain attempt fails  -   none
//!   prefer       yes          go on in clear  none
//!   require      yes          error           none (verify-ca with sslrootcert)
//!   verify-ca    yes          error           chain to sslrootcert
//!   verify-full  yes          error           chain + host name / address
//! ```
//!
//! rustls with its `ring` provider does the work; the handshake itself is
//! in [`super::client`]. Only TLS 1.2 and 1.3 exist here.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// Plain first; TLS if the plain attempt is refused.
    Allow,
    /// TLS if the server offers it (libpq's default).
    #[default]
    Prefer,
    /// TLS or nothing; no certificate check.
    Require,
    /// TLS, with the server's certificate chained to `sslrootcert`.
    VerifyCa,
    /// [`SslMode::VerifyCa`], and the certificate names the host.
    VerifyFull,
}

impl SslMode {
    /// Parses libpq's values.
    pub fn parse(s: &str) -> Result<SslMode, String> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return Err(format!("invalid sslmode value: \"{s}\"")),
        })
    }

    /// libpq's name.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// True if a connection without TLS is refused.
    pub fn requires_tls(self) -> bool {
        matches!(
            self,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
        )
    }
}

/// How a client connection does TLS.
#[derive(Clone, Debug)]
pub struct ClientTls {
    /// When to ask for TLS.
    pub mode: SslMode,
    /// The rustls configuration (None for `disable`).
    pub config: Option<Arc<ClientConfig>>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("could not open {what} \"{}\": {e}", path.display()))
}

/// The certificates of a PEM file.
pub fn load_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = read_pem(path, what)?;
    let certs = rustls_pemfile::certs(&mut pem.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("could not read {what} \"{}\": {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "could not read {what} \"{}\": no certificate found",
            path.display()
        ));
    }
    Ok(certs)
}

/// The private key of a PEM file.
pub fn load_key(path: &Path, what: &str) -> Result<PrivateKeyDer<'static>, String> {
    let pem = read_pem(path, what)?;
    rustls_pemfile::private_key(&mut pem.as_slice())
        .map_err(|e| format!("could not load {what} \"{}\": {e}", path.display()))?
        .ok_or_else(|| {
            format!(
                "could not load {what} \"{}\": no private key found",
                path.display()
            )
        })
}

impl ClientTls {
    /// The setup for `mode`: `rootcert` is libpq's `sslrootcert` (with
    /// `require` it turns on the chain check, as in libpq), `cert` and
    /// `key` a client certificate to present.
    pub fn new(
        mode: SslMode,
        rootcert: Option<&Path>,
        cert: Option<&Path>,
        key: Option<&Path>,
    ) -> Result<ClientTls, String> {
        if mode == SslMode::Disable {
            return Ok(ClientTls { mode, config: None });
        }
        let verify_chain = match mode {
            SslMode::VerifyCa | SslMode::VerifyFull => {
                if rootcert.is_none() {
                    return Err(format!(
                        "root certificate file must be given with sslrootcert\nEither provide the file or change sslmode to disable server certificate verification (sslmode={}).",
                        mode.name()
                    ));
                }
                true
            }
            SslMode::Require => rootcert.is_some(),
            _ => false,
        };
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("could not set up TLS: {e}"))?;
        let builder = if verify_chain {
            let mut roots = RootCertStore::empty();
            let path = rootcert.unwrap_or(Path::new(""));
            for c in load_certs(path, "root certificate file")? {
                roots.add(c).map_err(|e| {
                    format!(
                        "could not read root certificate file \"{}\": {e}",
                        path.display()
                    )
                })?;
            }
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| format!("could not set up TLS: {e}"))?;
            if mode == SslMode::VerifyFull {
                builder.with_webpki_verifier(webpki)
            } else {
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(ChainOnly(webpki)))
            }
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoCheck(provider())))
        };
        let config = match (cert, key) {
            (Some(c), Some(k)) => builder
                .with_client_auth_cert(
                    load_certs(c, "certificate file")?,
                    load_key(k, "private key file")?,
                )
                .map_err(|e| format!("could not load private key file \"{}\": {e}", k.display()))?,
            (Some(_), None) | (None, Some(_)) => {
                return Err("sslcert and sslkey must be given together".into())
            }
            (None, None) => builder.with_no_client_auth(),
        };
        Ok(ClientTls {
            mode,
            config: Some(Arc::new(config)),
        })
    }
}

/// `verify-ca`: the chain is checked, the name is not.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer` / `require` without `sslrootcert`: encryption without a
/// certificate check (libpq's behaviour); the handshake signature is still
/// verified.
#[derive(Debug)]
struct NoCheck(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes() {
        for m in [
            "disable",
            "allow",
            "prefer",
            "require",
            "verify-ca",
            "verify-full",
        ] {
            assert_eq!(SslMode::parse(m).map(|m| m.name()), Ok(m));
        }
        assert!(SslMode::parse("always").is_err());
        assert!(ClientTls::new(SslMode::VerifyFull, None, None, None).is_err());
        assert!(ClientTls::new(SslMode::Require, None, None, None).is_ok());
    }
}
