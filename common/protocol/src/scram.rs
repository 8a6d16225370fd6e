//! SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL speaks it: the stored
//! verifier, the server side of the exchange and the client side (the
//! standby's walreceiver and tests log in with it).
//!
//! ```text
//!  client                                   server
//!  SASLInitialResponse "SCRAM-SHA-256"
//!    client-first  n,,n=,r=<cnonce>   ───▶
//!                                     ◀───  SASLContinue  r=<cnonce><snonce>,s=<salt>,i=<iter>
//!    client-final  c=biws,r=<nonce>,p=<proof> ───▶
//!                                     ◀───  SASLFinal  v=<server signature>   (then AuthenticationOk)
//! ```
//!
//! The verifier is what `pg_authid.rolpassword` holds, in PostgreSQL's
//! format: `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`
//! (base64). The password itself is never kept: `SaltedPassword =
//! Hi(password, salt, i)` (PBKDF2-HMAC-SHA-256), `ClientKey =
//! HMAC(SaltedPassword, "Client Key")`, `StoredKey = H(ClientKey)`,
//! `ServerKey = HMAC(SaltedPassword, "Server Key")`. The server checks a
//! proof by recovering `ClientKey = proof XOR HMAC(StoredKey, AuthMessage)`
//! and comparing `H(ClientKey)` with `StoredKey`; it proves itself with
//! `HMAC(ServerKey, AuthMessage)`.
//!
//! A user that does not exist, or has no SCRAM verifier, still gets a full
//! exchange against a mock verifier whose salt is derived from the user
//! name with a per-process secret (as PostgreSQL's `scram_mock_salt`), so
//! a client cannot tell an unknown user from a wrong password; the
//! exchange then fails at the proof.
//!
//! Passwords are used as UTF-8 bytes without SASLprep normalisation:
//! identical to PostgreSQL for ASCII passwords (and any already in NFKC
//! form without mapped characters).

use std::sync::OnceLock;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// The mechanism name.
pub const SCRAM_SHA_256: &str = "SCRAM-SHA-256";
/// The mechanism name with channel binding (`tls-server-end-point`),
/// offered only over TLS.
pub const SCRAM_SHA_256_PLUS: &str = "SCRAM-SHA-256-PLUS";
/// The gs2 header of a `tls-server-end-point` binding.
const END_POINT_HEADER: &str = "p=tls-server-end-point,,";
/// PostgreSQL's default `scram_iterations`.
pub const DEFAULT_ITERATIONS: u32 = 4096;
/// Salt length of new verifiers (PostgreSQL's SCRAM_DEFAULT_SALT_LEN).
pub const SALT_LEN: usize = 16;
/// Raw nonce length (PostgreSQL's SCRAM_RAW_NONCE_LEN).
const NONCE_LEN: usize = 18;

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    // HMAC accepts keys of any length: new_from_slice cannot fail.
    let mut m = match <HmacSha256 as KeyInit>::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => return [0; 32],
    };
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// RFC 5802's Hi(): PBKDF2 with HMAC-SHA-256, one block.
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut u = hmac(password, &[salt, &1u32.to_be_bytes()]);
    let mut out = u;
    for _ in 1..iterations {
        u = hmac(password, &[&u]);
        for (o, b) in out.iter_mut().zip(u.iter()) {
            *o ^= b;
        }
    }
    out
}

/// A parsed SCRAM-SHA-256 verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verifier {
    /// Iteration count.
    pub iterations: u32,
    /// Salt.
    pub salt: Vec<u8>,
    /// H(ClientKey).
    pub stored_key: [u8; 32],
    /// HMAC(SaltedPassword, "Server Key").
    pub server_key: [u8; 32],
}

impl Verifier {
    /// The verifier of `password` with `salt` and `iterations`.
    pub fn compute(password: &str, salt: &[u8], iterations: u32) -> Verifier {
        let salted = hi(password.as_bytes(), salt, iterations.max(1));
        let client_key = hmac(&salted, &[b"Client Key"]);
        Verifier {
            iterations: iterations.max(1),
            salt: salt.to_vec(),
            stored_key: sha256(&client_key),
            server_key: hmac(&salted, &[b"Server Key"]),
        }
    }

    /// A new verifier of `password` with a random salt.
    pub fn new(password: &str, iterations: u32) -> Verifier {
        let mut salt = [0u8; SALT_LEN];
        rand::fill(&mut salt[..]);
        Verifier::compute(password, &salt, iterations)
    }

    /// Parses `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>`.
    pub fn parse(text: &str) -> Option<Verifier> {
        let rest = text.strip_prefix("SCRAM-SHA-256$")?;
        let (iter_salt, keys) = rest.split_once('$')?;
        let (iter, salt) = iter_salt.split_once(':')?;
        let (stored, server) = keys.split_once(':')?;
        let iterations: u32 = iter.parse().ok().filter(|i| *i > 0)?;
        let salt = B64.decode(salt).ok()?;
        let stored_key: [u8; 32] = B64.decode(stored).ok()?.try_into().ok()?;
        let server_key: [u8; 32] = B64.decode(server).ok()?.try_into().ok()?;
        Some(Verifier {
            iterations,
            salt,
            stored_key,
            server_key,
        })
    }

    /// True if `password` is the one this verifier was made from.
    pub fn matches(&self, password: &str) -> bool {
        let v = Verifier::compute(password, &self.salt, self.iterations);
        constant_time_eq(&v.stored_key, &self.stored_key)
            && constant_time_eq(&v.server_key, &self.server_key)
    }

    /// A verifier no password matches, with a salt derived from `user`
    /// (stable for the life of the process, so repeated attempts see the
    /// same salt, as they would for a real user).
    pub fn mock(user: &str) -> Verifier {
        static SECRET: OnceLock<[u8; 32]> = OnceLock::new();
        let secret = SECRET.get_or_init(|| {
            let mut s = [0u8; 32];
            rand::fill(&mut s[..]);
            s
        });
        let salt = hmac(secret, &[user.as_bytes()]);
        let mut stored_key = [0u8; 32];
        rand::fill(&mut stored_key[..]);
        Verifier {
            iterations: DEFAULT_ITERATIONS,
            salt: salt[..SALT_LEN].to_vec(),
            stored_key,
            server_key: [0; 32],
        }
    }
}

impl std::fmt::Display for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SCRAM-SHA-256${}:{}${}:{}",
            self.iterations,
            B64.encode(&self.salt),
            B64.encode(self.stored_key),
            B64.encode(self.server_key)
        )
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn random_nonce() -> String {
    let mut raw = [0u8; NONCE_LEN];
    rand::fill(&mut raw[..]);
    B64.encode(raw)
}

/// Why a SCRAM exchange failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScramError {
    /// The client's message does not follow the protocol: PostgreSQL's
    /// 08P01 "malformed SCRAM message", with this detail.
    Malformed(String),
    /// A well-formed exchange whose proof does not match (wrong password,
    /// unknown user): 28P01.
    Failed,
    /// The client asked for something we do not offer: 08P01 with this
    /// message.
    Unsupported(String),
    /// A `y` flag over TLS: the client thinks the server cannot bind
    /// (PostgreSQL's "SCRAM channel binding negotiation error", 08P01).
    Negotiation,
    /// The channel-binding data does not match the server's certificate
    /// (28000 "SCRAM channel binding check failed").
    BindingFailed,
}

/// The server side of one exchange.
pub struct ScramServer {
    verifier: Verifier,
    /// False for a mock verifier: the exchange must fail whatever the proof.
    real: bool,
    client_first_bare: String,
    server_first: String,
    nonce: String,
    gs2_header: String,
    /// The connection uses TLS (a `y` flag is then a downgrade).
    ssl_in_use: bool,
    /// The client chose SCRAM-SHA-256-PLUS: the server certificate's
    /// `tls-server-end-point` hash it must bind to.
    binding: Option<Vec<u8>>,
}

/// What [`ScramServer::client_first`] is given.
impl ScramServer {
    /// A new exchange against `verifier`, or a mock one for `user` when the
    /// user has no usable verifier.
    pub fn new(verifier: Option<Verifier>, user: &str) -> ScramServer {
        let (verifier, real) = match verifier {
            Some(v) => (v, true),
            None => (Verifier::mock(user), false),
        };
        ScramServer {
            verifier,
            real,
            client_first_bare: String::new(),
            server_first: String::new(),
            nonce: String::new(),
            gs2_header: String::new(),
            ssl_in_use: false,
            binding: None,
        }
    }

    /// Channel binding: `ssl_in_use` for a TLS connection, and `binding`
    /// (the server certificate's `tls-server-end-point` hash) when the
    /// client selected SCRAM-SHA-256-PLUS.
    pub fn with_channel_binding(mut self, ssl_in_use: bool, binding: Option<Vec<u8>>) -> Self {
        self.ssl_in_use = ssl_in_use;
        self.binding = binding;
        self
    }

    /// Reads the client-first-message, returns the server-first-message.
    pub fn client_first(&mut self, msg: &[u8]) -> Result<String, ScramError> {
        let text = std::str::from_utf8(msg)
            .map_err(|_| ScramError::Malformed("Message is not valid UTF-8.".into()))?;
        // gs2-header: cbind-flag "," [authzid] ","
        let (flag, rest) = text.split_once(',').ok_or_else(|| {
            ScramError::Malformed("Comma expected, but found end of string.".into())
        })?;
        let plus_without_data = || {
            ScramError::Malformed(
                "The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data.".into(),
            )
        };
        match flag {
            "n" | "y" if self.binding.is_some() => return Err(plus_without_data()),
            "n" => {}
            "y" if self.ssl_in_use => return Err(ScramError::Negotiation),
            "y" => {}
            f if f.starts_with("p=") => {
                if self.binding.is_none() {
                    return Err(ScramError::Malformed(
                        "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.".into(),
                    ));
                }
                if f != "p=tls-server-end-point" {
                    return Err(ScramError::Unsupported(format!(
                        "unsupported SCRAM channel-binding type \"{}\"",
                        &f[2..]
                    )));
                }
            }
            f => {
                return Err(ScramError::Malformed(format!(
                    "Unexpected channel-binding flag \"{}\".",
                    f.chars().next().unwrap_or(' ')
                )))
            }
        }
        let (authzid, bare) = rest.split_once(',').ok_or_else(|| {
            ScramError::Malformed("Comma expected, but found end of string.".into())
        })?;
        if !authzid.is_empty() {
            return Err(ScramError::Unsupported(
                "client uses authorization identity, but it is not supported".into(),
            ));
        }
        self.gs2_header = format!("{flag},{authzid},");
        // client-first-message-bare: [reserved-mext ","] username "," nonce ["," extensions]
        let mut attrs = bare.split(',');
        let user = attrs.next().unwrap_or("");
        if user.starts_with("m=") {
            return Err(ScramError::Unsupported(
                "client requires an unsupported SCRAM extension".into(),
            ));
        }
        if !user.starts_with("n=") {
            return Err(ScramError::Malformed(
                "Expected attribute \"n\" but found something else.".into(),
            ));
        }
        let cnonce = attrs
            .next()
            .and_then(|a| a.strip_prefix("r="))
            .ok_or_else(|| {
                ScramError::Malformed("Expected attribute \"r\" but found something else.".into())
            })?;
        if cnonce.is_empty()
            || !cnonce
                .bytes()
                .all(|b| (0x21..=0x7e).contains(&b) && b != b',')
        {
            return Err(ScramError::Malformed(
                "Expected printable characters in client nonce.".into(),
            ));
        }
        self.client_first_bare = bare.to_string();
        self.nonce = format!("{cnonce}{}", random_nonce());
        self.server_first = format!(
            "r={},s={},i={}",
            self.nonce,
            B64.encode(&self.verifier.salt),
            self.verifier.iterations
        );
        Ok(self.server_first.clone())
    }

    /// Reads the client-final-message; on success returns the
    /// server-final-message (`v=<signature>`).
    pub fn client_final(&mut self, msg: &[u8]) -> Result<String, ScramError> {
        let text = std::str::from_utf8(msg)
            .map_err(|_| ScramError::Malformed("Message is not valid UTF-8.".into()))?;
        let (without_proof, proof) = text.rsplit_once(",p=").ok_or_else(|| {
            ScramError::Malformed("Could not find proof in client-final-message.".into())
        })?;
        let mut attrs = without_proof.split(',');
        let cbind = attrs
            .next()
            .and_then(|a| a.strip_prefix("c="))
            .ok_or_else(|| {
                ScramError::Malformed("Expected attribute \"c\" but found something else.".into())
            })?;
        let cbind = B64
            .decode(cbind)
            .map_err(|_| ScramError::Malformed("Invalid channel binding data.".into()))?;
        match &self.binding {
            Some(hash) => {
                let mut expected = END_POINT_HEADER.as_bytes().to_vec();
                expected.extend_from_slice(hash);
                if !constant_time_eq(&cbind, &expected) {
                    return Err(ScramError::BindingFailed);
                }
            }
            None if cbind != self.gs2_header.as_bytes() => {
                return Err(ScramError::Unsupported(
                    "unexpected SCRAM channel-binding attribute in client-final-message".into(),
                ));
            }
            None => {}
        }
        let nonce = attrs
            .next()
            .and_then(|a| a.strip_prefix("r="))
            .ok_or_else(|| {
                ScramError::Malformed("Expected attribute \"r\" but found something else.".into())
            })?;
        if nonce != self.nonce {
            return Err(ScramError::Malformed("Nonce does not match.".into()));
        }
        let proof = B64.decode(proof).map_err(|_| {
            ScramError::Malformed("Malformed proof in client-final-message.".into())
        })?;
        if proof.len() != 32 {
            return Err(ScramError::Malformed(
                "Malformed proof in client-final-message.".into(),
            ));
        }
        let auth_message = format!(
            "{},{},{}",
            self.client_first_bare, self.server_first, without_proof
        );
        let signature = hmac(&self.verifier.stored_key, &[auth_message.as_bytes()]);
        let client_key: Vec<u8> = proof.iter().zip(signature).map(|(p, s)| p ^ s).collect();
        let ok = constant_time_eq(&sha256(&client_key), &self.verifier.stored_key);
        if !ok || !self.real {
            return Err(ScramError::Failed);
        }
        let server_sig = hmac(&self.verifier.server_key, &[auth_message.as_bytes()]);
        Ok(format!("v={}", B64.encode(server_sig)))
    }
}

/// The client side of one exchange.
pub struct ScramClient {
    password: String,
    client_nonce: String,
    client_first_bare: String,
    server_signature: Option<[u8; 32]>,
    /// The gs2 header sent (`n,,`, `y,,` or `p=tls-server-end-point,,`).
    gs2_header: String,
    /// The channel-binding data after the header (the certificate hash).
    binding: Vec<u8>,
}

/// What a client binds its SCRAM exchange to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientBinding {
    /// No TLS: flag `n`.
    None,
    /// TLS, but the server offered no SCRAM-SHA-256-PLUS: flag `y`.
    Unused,
    /// SCRAM-SHA-256-PLUS with this `tls-server-end-point` hash.
    EndPoint(Vec<u8>),
}

impl ScramClient {
    /// Starts an exchange; [`ScramClient::client_first`] is the initial response.
    pub fn new(password: &str) -> ScramClient {
        ScramClient::with_binding(password, ClientBinding::None)
    }

    /// Starts an exchange bound as `binding` says.
    pub fn with_binding(password: &str, binding: ClientBinding) -> ScramClient {
        let client_nonce = random_nonce();
        let (gs2_header, binding) = match binding {
            ClientBinding::None => ("n,,".to_string(), Vec::new()),
            ClientBinding::Unused => ("y,,".to_string(), Vec::new()),
            ClientBinding::EndPoint(h) => (END_POINT_HEADER.to_string(), h),
        };
        ScramClient {
            password: password.to_string(),
            client_first_bare: format!("n=,r={client_nonce}"),
            client_nonce,
            server_signature: None,
            gs2_header,
            binding,
        }
    }

    /// The mechanism this exchange uses.
    pub fn mechanism(&self) -> &'static str {
        if self.binding.is_empty() {
            SCRAM_SHA_256
        } else {
            SCRAM_SHA_256_PLUS
        }
    }

    /// The client-first-message.
    pub fn client_first(&self) -> String {
        format!("{}{}", self.gs2_header, self.client_first_bare)
    }

    /// Reads the server-first-message, returns the client-final-message.
    pub fn server_first(&mut self, msg: &[u8]) -> Result<String, ScramError> {
        let bad = |what: &str| ScramError::Malformed(what.to_string());
        let text = std::str::from_utf8(msg).map_err(|_| bad("server-first not UTF-8"))?;
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for a in text.split(',') {
            if let Some(v) = a.strip_prefix("r=") {
                nonce = Some(v);
            } else if let Some(v) = a.strip_prefix("s=") {
                salt = B64.decode(v).ok();
            } else if let Some(v) = a.strip_prefix("i=") {
                iterations = v.parse::<u32>().ok().filter(|i| *i > 0);
            }
        }
        let nonce = nonce.ok_or_else(|| bad("server-first without nonce"))?;
        let salt = salt.ok_or_else(|| bad("server-first without salt"))?;
        let iterations = iterations.ok_or_else(|| bad("server-first without iterations"))?;
        if !nonce.starts_with(&self.client_nonce) || nonce.len() == self.client_nonce.len() {
            return Err(bad("invalid SCRAM server nonce"));
        }
        let salted = hi(self.password.as_bytes(), &salt, iterations);
        let client_key = hmac(&salted, &[b"Client Key"]);
        let stored_key = sha256(&client_key);
        let server_key = hmac(&salted, &[b"Server Key"]);
        let mut cbind = self.gs2_header.as_bytes().to_vec();
        cbind.extend_from_slice(&self.binding);
        let without_proof = format!("c={},r={nonce}", B64.encode(cbind));
        let auth_message = format!("{},{},{}", self.client_first_bare, text, without_proof);
        let signature = hmac(&stored_key, &[auth_message.as_bytes()]);
        let proof: Vec<u8> = client_key
            .iter()
            .zip(signature)
            .map(|(k, s)| k ^ s)
            .collect();
        self.server_signature = Some(hmac(&server_key, &[auth_message.as_bytes()]));
        Ok(format!("{without_proof},p={}", B64.encode(proof)))
    }

    /// Checks the server-final-message (the server knew the verifier).
    pub fn server_final(&self, msg: &[u8]) -> Result<(), ScramError> {
        let text = std::str::from_utf8(msg)
            .map_err(|_| ScramError::Malformed("server-final not UTF-8".into()))?;
        if let Some(e) = text.strip_prefix("e=") {
            return Err(ScramError::Malformed(format!("server error: {e}")));
        }
        let sig = text
            .strip_prefix("v=")
            .and_then(|v| B64.decode(v).ok())
            .ok_or_else(|| ScramError::Malformed("malformed server-final-message".into()))?;
        match &self.server_signature {
            Some(expected) if constant_time_eq(expected, &sig) => Ok(()),
            _ => Err(ScramError::Malformed("incorrect server signature".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's test vector (user "user", password "pencil").
    #[test]
    fn rfc7677_vector() {
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let v = Verifier::compute("pencil", &salt, 4096);
        let client_first_bare = "n=user,r=rOprNGfwEbeRWgbNEkqO";
        let server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let without_proof = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let auth = format!("{client_first_bare},{server_first},{without_proof}");
        let salted = hi(b"pencil", &salt, 4096);
        let client_key = hmac(&salted, &[b"Client Key"]);
        let sig = hmac(&v.stored_key, &[auth.as_bytes()]);
        let proof: Vec<u8> = client_key.iter().zip(sig).map(|(k, s)| k ^ s).collect();
        assert_eq!(
            B64.encode(proof),
            "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        let server_sig = hmac(&v.server_key, &[auth.as_bytes()]);
        assert_eq!(
            B64.encode(server_sig),
            "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
    }

    #[test]
    fn verifier_round_trip() {
        let v = Verifier::new("secret", 4096);
        let text = v.to_string();
        assert!(text.starts_with("SCRAM-SHA-256$4096:"));
        let back = Verifier::parse(&text).unwrap();
        assert_eq!(back, v);
        assert!(back.matches("secret"));
        assert!(!back.matches("Secret"));
        assert!(Verifier::parse("md5abc").is_none());
        assert!(Verifier::parse("SCRAM-SHA-256$x:y$z:w").is_none());
    }

    fn exchange(stored: &str, given: &str, real: bool) -> Result<(), ScramError> {
        let v = Verifier::new(stored, 64);
        let mut server = ScramServer::new(real.then_some(v), "u");
        let mut client = ScramClient::new(given);
        let sf = server.client_first(client.client_first().as_bytes())?;
        let cf = client.server_first(sf.as_bytes())?;
        let fin = server.client_final(cf.as_bytes())?;
        client.server_final(fin.as_bytes())
    }

    #[test]
    fn full_exchange() {
        assert_eq!(exchange("pw", "pw", true), Ok(()));
        assert_eq!(exchange("pw", "wrong", true), Err(ScramError::Failed));
        assert_eq!(exchange("pw", "pw", false), Err(ScramError::Failed));
    }

    /// One exchange over "TLS": the server binds to `server_hash` when
    /// the client picks -PLUS, the client sends `client`.
    fn bound(server_hash: Option<&[u8]>, client: ClientBinding) -> Result<(), ScramError> {
        let v = Verifier::new("pw", 64);
        let mut client = ScramClient::with_binding("pw", client);
        let plus = client.mechanism() == SCRAM_SHA_256_PLUS;
        let mut server = ScramServer::new(Some(v), "u").with_channel_binding(
            true,
            if plus {
                server_hash.map(|h| h.to_vec())
            } else {
                None
            },
        );
        let sf = server.client_first(client.client_first().as_bytes())?;
        let cf = client.server_first(sf.as_bytes())?;
        let fin = server.client_final(cf.as_bytes())?;
        client.server_final(fin.as_bytes())
    }

    #[test]
    fn channel_binding() {
        let hash = [7u8; 32];
        assert_eq!(
            bound(Some(&hash), ClientBinding::EndPoint(hash.to_vec())),
            Ok(())
        );
        assert_eq!(
            bound(Some(&hash), ClientBinding::EndPoint(vec![8u8; 32])),
            Err(ScramError::BindingFailed),
            "another certificate (a man in the middle)"
        );
        assert_eq!(
            bound(Some(&hash), ClientBinding::Unused),
            Err(ScramError::Negotiation),
            "'y' over TLS is a downgrade"
        );
        assert_eq!(
            bound(Some(&hash), ClientBinding::None),
            Ok(()),
            "'n' is allowed"
        );
    }

    #[test]
    fn malformed_messages_are_errors() {
        let mut s = ScramServer::new(None, "u");
        for m in [
            &b""[..],
            b"x",
            b"n,",
            b"n,,",
            b"n,,n=,r=",
            b"q,,n=,r=a",
            b"\xff",
        ] {
            assert!(s.client_first(m).is_err(), "{m:?}");
        }
        let mut s = ScramServer::new(None, "u");
        s.client_first(b"n,,n=,r=abc").unwrap();
        for m in [&b""[..], b"c=biws", b"c=biws,r=abc,p=AAAA", b"c=xx,r=a,p=b"] {
            assert!(s.client_final(m).is_err(), "{m:?}");
        }
    }
}
