//! TLS (`ssl = on`, `server::tls`): the SSLRequest answered `S` and a
//! rustls handshake, `hostssl` lines, `cert` authentication and
//! `clientcert`, SCRAM-SHA-256-PLUS channel binding, `pg_stat_ssl`, a
//! standby streaming over TLS, `primary_conninfo`'s `sslmode=prefer` /
//! `allow` fallbacks, and the startup deadline covering the handshake. Certificates are made here with rcgen: a CA, a server
//! certificate for localhost / 127.0.0.1, a client certificate whose CN
//! is a role.
//!
//! The failures this guards against: a server that lets a client stay in
//! clear where pg_hba.conf demands TLS, trusts a certificate it cannot
//! chain or whose name is someone else's, binds SCRAM to nothing over TLS
//! (so a man in the middle relays the exchange), lets bytes sent before
//! the handshake count as if encrypted, or lets clients that open TLS and
//! never finish it hold connections past `authentication_timeout`; and a
//! standby that gives up where libpq would have fallen back to the other
//! kind of connection.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SerialNumber,
};
use tap_tests::{wait_until, Node, Session};

const HBA: &str = "\
# TYPE   DATABASE     USER        ADDRESS        METHOD
host     all          postgres    127.0.0.1/32   trust
hostssl  all          certuser    127.0.0.1/32   cert
hostssl  all          scramuser   127.0.0.1/32   scram-sha-256
hostssl  all          causer      127.0.0.1/32   scram-sha-256 clientcert=verify-ca
hostssl  replication  replicator  127.0.0.1/32   scram-sha-256
";

/// PEM files of the test's certificates.
struct Certs {
    ca: String,
    server_cert: String,
    server_key: String,
    client_cert: String,
    client_key: String,
}

fn make_certs() -> Certs {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut p = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    p.distinguished_name
        .push(DnType::CommonName, "hotpair test CA");
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = p.self_signed(&ca_key).expect("CA certificate");

    let server_key = KeyPair::generate().expect("server key");
    let mut p = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .expect("server params");
    p.distinguished_name.push(DnType::CommonName, "localhost");
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server = p
        .signed_by(&server_key, &ca, &ca_key)
        .expect("server certificate");

    let client_key = KeyPair::generate().expect("client key");
    let mut p = CertificateParams::new(Vec::<String>::new()).expect("client params");
    p.distinguished_name.push(DnType::CommonName, "certuser");
    p.serial_number = Some(SerialNumber::from(4242u64));
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client = p
        .signed_by(&client_key, &ca, &ca_key)
        .expect("client certificate");
    Certs {
        ca: ca.pem(),
        server_cert: server.pem(),
        server_key: server_key.serialize_pem(),
        client_cert: client.pem(),
        client_key: client_key.serialize_pem(),
    }
}

/// Writes `text` to `path` with mode 0600 (libpq and the server refuse
/// keys others can read).
fn write_private(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write file");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

/// psql with `conn` extra keywords and an optional password:
/// (exit status, stdout, stderr).
fn psql(node: &Node, user: &str, extra: &str, password: &str, sql: &str) -> (i32, String, String) {
    let out = Command::new("psql")
        .args(["-XAtq", "-w", "-d"])
        .arg(format!(
            "host=127.0.0.1 port={} user={user} dbname=postgres {extra}",
            node.port()
        ))
        .args(["-c", sql])
        .env("PGPASSWORD", password)
        .output()
        .expect("run psql");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

const MY_SSL: &str =
    "SELECT ssl, version, cipher, bits, client_dn, client_serial, issuer_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()";

/// A primary with TLS on, the test's certificates and pg_hba.conf.
fn tls_primary(name: &str, certs: &Certs, streaming: bool) -> Node {
    let node = Node::new(name);
    node.init(streaming);
    let dir = node.data_dir();
    std::fs::write(dir.join("server.crt"), &certs.server_cert).expect("server.crt");
    write_private(&dir.join("server.key"), &certs.server_key);
    std::fs::write(dir.join("root.crt"), &certs.ca).expect("root.crt");
    std::fs::write(dir.join("pg_hba.conf"), HBA).expect("pg_hba.conf");
    node.append_conf("ssl = on\nssl_ca_file = 'root.crt'\nauthentication_timeout = 2s");
    node
}

#[test]
fn tls_sessions_and_authentication() {
    let certs = make_certs();
    let primary = tls_primary("primary", &certs, false);
    primary.start();
    let files = primary.base_dir().join("client");
    std::fs::create_dir_all(&files).expect("client dir");
    let ca = files.join("root.crt");
    std::fs::write(&ca, &certs.ca).expect("root.crt");
    let ccert = files.join("certuser.crt");
    std::fs::write(&ccert, &certs.client_cert).expect("client cert");
    let ckey = files.join("certuser.key");
    write_private(&ckey, &certs.client_key);
    primary.safe_sql(
        "CREATE ROLE certuser LOGIN; CREATE ROLE scramuser LOGIN PASSWORD 'scrampw'; \
         CREATE ROLE causer LOGIN PASSWORD 'capw'",
    );
    assert_eq!(primary.safe_sql("SHOW ssl"), "on", "SHOW ssl");

    // 1. sslmode=require: encrypted, TLS 1.3, PostgreSQL's cipher name.
    let (rc, out, err) = psql(&primary, "scramuser", "sslmode=require", "scrampw", MY_SSL);
    assert_eq!(rc, 0, "require connects: {err}");
    assert_eq!(
        out, "t|TLSv1.3|TLS_AES_256_GCM_SHA384|256|||",
        "pg_stat_ssl over TLS"
    );

    // 2. verify-full against the CA: the certificate names 127.0.0.1 and
    //    localhost; SCRAM bound to the channel (channel_binding=require).
    let full = format!("sslmode=verify-full sslrootcert={}", ca.display());
    let (rc, out, err) = psql(
        &primary,
        "scramuser",
        &format!("{full} channel_binding=require"),
        "scrampw",
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
    );
    assert_eq!(
        (rc, out.as_str()),
        (0, "t"),
        "verify-full + channel binding: {err}"
    );
    let (rc, _, err) = psql(&primary, "scramuser", &full, "wrong", "SELECT 1");
    assert_ne!(rc, 0, "wrong password over TLS");
    assert!(
        err.contains("password authentication failed for user \"scramuser\""),
        "wrong password over TLS: {err}"
    );

    // 3. A plain connection where only hostssl lines admit the role.
    let (rc, _, err) = psql(
        &primary,
        "scramuser",
        "sslmode=disable",
        "scrampw",
        "SELECT 1",
    );
    assert_ne!(rc, 0, "plain connection refused");
    assert!(
        err.contains(
            "FATAL:  no pg_hba.conf entry for host \"127.0.0.1\", user \"scramuser\", database \"postgres\", no encryption"
        ),
        "hostssl-only refusal: {err}"
    );
    let e = Session::try_connect(
        "plain",
        &format!(
            "host=127.0.0.1 port={} user=scramuser password=scrampw dbname=postgres",
            primary.port()
        ),
    )
    .err()
    .expect("tokio-postgres without TLS refused");
    assert_eq!(e.code(), "28000", "SQLSTATE of the hostssl-only refusal");

    // 4. cert authentication: the client certificate's CN is the role.
    let with_cert = format!(
        "{full} sslcert={} sslkey={}",
        ccert.display(),
        ckey.display()
    );
    let (rc, out, err) = psql(
        &primary,
        "certuser",
        &with_cert,
        "",
        &format!("SELECT current_user; {MY_SSL}"),
    );
    assert_eq!(rc, 0, "cert login: {err}");
    assert_eq!(
        out, "certuser\nt|TLSv1.3|TLS_AES_256_GCM_SHA384|256|/CN=certuser|4242|/CN=hotpair test CA",
        "pg_stat_ssl shows the client certificate"
    );
    let (rc, _, err) = psql(&primary, "certuser", &full, "", "SELECT 1");
    assert_ne!(rc, 0, "cert without a certificate");
    assert!(
        err.contains("FATAL:  connection requires a valid client certificate"),
        "cert without a certificate: {err}"
    );
    // The certificate of certuser, presented for another role.
    primary.safe_sql("CREATE ROLE othercert LOGIN");
    std::fs::write(
        primary.data_dir().join("pg_hba.conf"),
        format!("{HBA}hostssl  all  othercert  127.0.0.1/32  cert\n"),
    )
    .expect("pg_hba.conf");
    let at = primary.log_position();
    primary.safe_sql("SELECT pg_reload_conf()");
    primary.wait_for_log("received SIGHUP, reloading configuration files", at);
    let (rc, _, err) = psql(&primary, "othercert", &with_cert, "", "SELECT 1");
    assert_ne!(rc, 0, "someone else's certificate");
    assert!(
        err.contains("FATAL:  certificate authentication failed for user \"othercert\""),
        "CN mismatch: {err}"
    );

    // 5. clientcert=verify-ca with a password: a certificate is needed,
    //    any CN will do.
    let (rc, _, err) = psql(&primary, "causer", &full, "capw", "SELECT 1");
    assert_ne!(rc, 0, "verify-ca without a certificate");
    assert!(
        err.contains("connection requires a valid client certificate"),
        "{err}"
    );
    let (rc, out, err) = psql(
        &primary,
        "causer",
        &with_cert,
        "capw",
        "SELECT current_user",
    );
    assert_eq!(
        (rc, out.as_str()),
        (0, "causer"),
        "verify-ca with a certificate: {err}"
    );

    // 6. The ssl settings change only through the files and a reload; a
    //    reload whose certificate does not load keeps the old context.
    let admin = Session::connect("admin", &primary.connstr());
    let e = admin.query("SET ssl = off").expect_err("SET ssl refused");
    assert_eq!(
        (e.code(), e.message.as_str()),
        ("55P02", "parameter \"ssl\" cannot be changed now"),
        "SET ssl"
    );
    std::fs::write(primary.data_dir().join("server.crt"), "not a certificate\n")
        .expect("spoil server.crt");
    let at = primary.log_position();
    admin.query_safe("SELECT pg_reload_conf()");
    primary.wait_for_log("SSL configuration was not reloaded", at);
    let (rc, out, err) = psql(&primary, "scramuser", &full, "scrampw", "SELECT 1");
    assert_eq!(
        (rc, out.as_str()),
        (0, "1"),
        "old certificate still served: {err}"
    );

    // 7. Bytes sent together with the SSLRequest were not encrypted: after
    //    the handshake the server refuses them (PostgreSQL's FATAL 08P01).
    let mut roots = rustls::RootCertStore::empty();
    let der = rustls_pem_cert(&certs.ca);
    roots.add(der).expect("CA into the root store");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let mut tcp = TcpStream::connect(("127.0.0.1", primary.port())).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut req = vec![0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
    req.extend_from_slice(b"\0\0\0\x08\0\x03\0\0");
    tcp.write_all(&req).expect("SSLRequest + bytes");
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer).expect("answer");
    assert_eq!(answer[0], b'S', "SSLRequest answered S");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    let conn = rustls::ClientConnection::new(Arc::new(config), name).expect("client");
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut reply = Vec::new();
    let _ = tls.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.contains("received unencrypted data after SSL request") && reply.contains("08P01"),
        "unencrypted bytes refused: {reply:?}"
    );
}

/// The DER of the first certificate of a PEM text.
fn rustls_pem_cert(pem: &str) -> rustls::pki_types::CertificateDer<'static> {
    let b64: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN CERTIFICATE"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    rustls::pki_types::CertificateDer::from(decode_base64(&b64))
}

fn decode_base64(s: &str) -> Vec<u8> {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            _ => 63,
        }
    };
    let bytes: Vec<u8> = s
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c) << (18 - 6 * i);
        }
        out.push((acc >> 16) as u8);
        if chunk.len() > 2 {
            out.push((acc >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(acc as u8);
        }
    }
    out
}

#[test]
fn standby_streams_over_tls() {
    let certs = make_certs();
    let primary = tls_primary("primary", &certs, true);
    primary.start();
    primary.safe_sql("CREATE ROLE replicator LOGIN REPLICATION PASSWORD 'replpw'");
    let ca = primary.base_dir().join("standby-root.crt");
    std::fs::write(&ca, &certs.ca).expect("root.crt");

    // 1. Base backup and streaming through hostssl + SCRAM, verify-full.
    let standby = Node::new("standby");
    standby.init_from_backup_with_conninfo(
        &primary,
        &format!(
            "user=replicator password=replpw sslmode=verify-full sslrootcert={}",
            ca.display()
        ),
    );
    standby.start();
    primary.safe_sql("CREATE TABLE over_tls (x int); INSERT INTO over_tls VALUES (42)");
    primary.wait_for_catchup(&standby, "replay", None);
    assert_eq!(
        standby.safe_sql("SELECT x FROM over_tls"),
        "42",
        "row committed on the primary seen on the standby"
    );

    // 2. Only hostssl admits replication: the same role in clear is refused.
    let (rc, _, err) = psql(
        &primary,
        "replicator",
        "sslmode=disable replication=true",
        "replpw",
        "IDENTIFY_SYSTEM",
    );
    assert_ne!(rc, 0, "plain replication connection refused");
    assert!(
        err.contains("no pg_hba.conf entry for replication connection from host \"127.0.0.1\", user \"replicator\", no encryption"),
        "plain replication refused: {err}"
    );
}

/// Whether the replication connections of standby `app` came over TLS,
/// as the primary's `log_connections` lines say (`Some(true)`: every one
/// did; `None`: none was logged).
fn replication_over_tls(primary: &Node, app: &str) -> Option<bool> {
    let log = primary.log_content();
    let app = format!(" application_name={app}");
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("replication connection authorized: user="))
        .filter(|l| l.ends_with(&app) || l.contains(&format!("{app} ")))
        .collect();
    if lines.is_empty() {
        return None;
    }
    let ssl = lines
        .iter()
        .filter(|l| {
            l.contains(" SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)")
        })
        .count();
    assert!(
        ssl == 0 || ssl == lines.len(),
        "some connections of{app} over TLS, some not: {lines:?}"
    );
    Some(ssl > 0)
}

#[test]
fn standby_sslmode_prefer_and_allow() {
    // 1. sslmode=prefer to a primary with ssl = off: the SSLRequest is
    //    answered N and the standby streams in clear on that connection.
    let plain = Node::new("plain");
    plain.init(true);
    plain.append_conf("log_connections = on");
    plain.start();
    let prefer = Node::new("prefer");
    prefer.init_from_backup_with_conninfo(&plain, "sslmode=prefer");
    prefer.start();
    plain.safe_sql("CREATE TABLE prefer_t (x int); INSERT INTO prefer_t VALUES (1)");
    plain.wait_for_catchup(&prefer, "replay", None);
    assert_eq!(
        prefer.safe_sql("SELECT x FROM prefer_t"),
        "1",
        "prefer: streams from a primary without TLS"
    );
    assert_eq!(
        replication_over_tls(&plain, "prefer"),
        Some(false),
        "prefer: in clear"
    );

    // 2. sslmode=allow to a primary whose pg_hba.conf admits replication
    //    only over hostssl: the clear attempt is refused (28000), the
    //    retry over TLS streams.
    let certs = make_certs();
    let primary = tls_primary("primary", &certs, true);
    primary.append_conf("log_connections = on");
    primary.start();
    primary.safe_sql("CREATE ROLE replicator LOGIN REPLICATION PASSWORD 'replpw'");
    let allow = Node::new("allow");
    allow.init_from_backup_with_conninfo(&primary, "user=replicator password=replpw sslmode=allow");
    allow.start();
    primary.safe_sql("CREATE TABLE allow_t (x int); INSERT INTO allow_t VALUES (2)");
    primary.wait_for_catchup(&allow, "replay", None);
    assert_eq!(
        allow.safe_sql("SELECT x FROM allow_t"),
        "2",
        "allow: streams from a hostssl-only primary"
    );
    assert_eq!(
        replication_over_tls(&primary, "allow"),
        Some(true),
        "allow: over TLS"
    );
    assert!(
        primary.log_contains("no pg_hba.conf entry for replication connection from host \"127.0.0.1\", user \"replicator\", no encryption"),
        "allow: the clear attempt came first and was refused"
    );

    // 3. sslmode=prefer where replication is admitted only in clear
    //    (hostnossl): TLS is refused (28000), the retry in clear streams.
    let hba = HBA.replace(
        "hostssl  replication  replicator",
        "hostnossl replication replicator",
    );
    std::fs::write(primary.data_dir().join("pg_hba.conf"), hba).expect("pg_hba.conf");
    primary.safe_sql("SELECT pg_reload_conf()");
    let prefer2 = Node::new("prefer2");
    prefer2
        .init_from_backup_with_conninfo(&primary, "user=replicator password=replpw sslmode=prefer");
    prefer2.start();
    primary.safe_sql("INSERT INTO allow_t VALUES (3)");
    primary.wait_for_catchup(&prefer2, "replay", None);
    assert_eq!(
        prefer2.safe_sql("SELECT count(*) FROM allow_t"),
        "2",
        "prefer: streams from a hostnossl-only primary"
    );
    assert_eq!(
        replication_over_tls(&primary, "prefer2"),
        Some(false),
        "prefer: fell back to clear"
    );
    assert!(
        primary.log_contains("no pg_hba.conf entry for replication connection from host \"127.0.0.1\", user \"replicator\", SSL encryption"),
        "prefer: the TLS attempt came first and was refused"
    );
}

#[test]
fn half_open_handshakes_are_bounded() {
    let certs = make_certs();
    let primary = tls_primary("primary", &certs, false);
    primary.start();
    let session = Session::connect("s1", &primary.connstr());
    assert_eq!(session.query_safe("SELECT 1"), "1");

    // 1. 200 clients: SSLRequest, `S`, then silence or half a ClientHello.
    let mut flood = Vec::new();
    for i in 0..200 {
        let mut s = TcpStream::connect(("127.0.0.1", primary.port())).expect("connect");
        s.write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])
            .expect("SSLRequest");
        let mut answer = [0u8; 1];
        s.read_exact(&mut answer).expect("answer");
        assert_eq!(answer[0], b'S', "SSLRequest answered S");
        if i % 2 == 1 {
            // A TLS record header promising 512 bytes, and 5 of them.
            s.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03])
                .expect("partial ClientHello");
        }
        flood.push(s);
    }
    // 2. Meanwhile a normal session keeps answering.
    for i in 0..20 {
        assert_eq!(
            session.query_safe(&format!("SELECT {i} + 1")),
            (i + 1).to_string(),
            "session answers during the flood"
        );
    }

    // 3. Every flood connection is closed once authentication_timeout (2s)
    //    has passed.
    let started = Instant::now();
    for s in &flood {
        s.set_nonblocking(true).expect("nonblocking");
    }
    let mut open: Vec<usize> = (0..flood.len()).collect();
    wait_until("flood connections closed by the server", || {
        open.retain(|&i| {
            let mut buf = [0u8; 64];
            match (&flood[i]).read(&mut buf) {
                Ok(0) => false,
                Ok(_) => true,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => true,
                Err(_) => false,
            }
        });
        open.is_empty()
    });
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "closed within the deadline"
    );
    assert_eq!(session.query_safe("SELECT 2"), "2", "session still answers");
    let (rc, out, err) = psql(
        &primary,
        "postgres",
        "sslmode=require",
        "",
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
    );
    assert_eq!(
        (rc, out.as_str()),
        (0, "t"),
        "new TLS sessions after the flood: {err}"
    );
}
