//! The certificate both systems serve TLS with during a bench run.
//!
//! Both servers start with `ssl = on` and the same self-signed ECDSA
//! P-256 certificate (rcgen), so a workload can compare them over TLS by
//! setting `PGSSLMODE=require` for its pgbench runs. Every other run
//! connects in plain TCP: the bench sets `PGSSLMODE=disable` for the
//! whole run unless the caller set it.
//!
//! The key file must satisfy each server's ownership rule (owned by the
//! server's user, `u=rw` only): when the bench runs as root, PostgreSQL
//! runs as `postgres`, so it gets its own copy of the key.

use std::path::Path;

use rcgen::{CertificateParams, DnType, KeyPair};

use super::pg::{effective_uid, os_user, set_mode};

/// The certificate's file name in the directory.
pub const CERT: &str = "server.crt";
/// The key's file name in the directory (hotpair's copy).
pub const KEY: &str = "server.key";
/// PostgreSQL's copy of the key.
pub const PG_KEY: &str = "server-pg.key";

/// Writes `dir/server.crt` and `dir/server.key`.
pub fn write_files(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
    set_mode(dir, 0o755)?;
    let key = KeyPair::generate().map_err(|e| format!("TLS key: {e}"))?;
    let mut p = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .map_err(|e| format!("TLS certificate: {e}"))?;
    p.distinguished_name.push(DnType::CommonName, "localhost");
    let cert = p
        .self_signed(&key)
        .map_err(|e| format!("TLS certificate: {e}"))?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
        Ok::<_, String>(path)
    };
    let cert_path = write(CERT, &cert.pem())?;
    set_mode(&cert_path, 0o644)?;
    for name in [KEY, PG_KEY] {
        let key_path = write(name, &key.serialize_pem())?;
        set_mode(&key_path, 0o600)?;
        if let (Some(0), Some((uid, gid)), PG_KEY) = (effective_uid(), os_user("postgres"), name) {
            std::os::unix::fs::chown(&key_path, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", key_path.display()))?;
        }
    }
    Ok(())
}

/// The configuration lines that serve TLS with the files in `dir`
/// (`pg`: PostgreSQL's key).
pub fn conf_lines(dir: &Path, pg: bool) -> String {
    format!(
        "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n",
        dir.join(CERT).display(),
        dir.join(if pg { PG_KEY } else { KEY }).display()
    )
}
