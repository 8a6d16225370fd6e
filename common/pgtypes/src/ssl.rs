//! What `pg_stat_ssl` shows of a client connection that uses TLS: filled
//! by the server's session loop after the handshake, kept with the
//! session's `pg_stat_activity` row.

/// A TLS connection's parameters and the client certificate's names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SslInfo {
    /// `TLSv1.2` or `TLSv1.3`.
    pub version: String,
    /// The cipher suite under OpenSSL's name (`TLS_AES_256_GCM_SHA384`).
    pub cipher: String,
    /// The cipher's key length in bits.
    pub bits: i32,
    /// The client certificate's subject (`/CN=…`), if one was presented.
    pub client_dn: Option<String>,
    /// Its serial number, in decimal.
    pub client_serial: Option<String>,
    /// Its issuer (`/CN=…`).
    pub issuer_dn: Option<String>,
    /// The subject's common name (`cert` authentication compares it with
    /// the role name).
    pub client_cn: Option<String>,
}
