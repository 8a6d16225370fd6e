//! `primary_conninfo`: libpq's `key=value` connection string, the subset a
//! walreceiver needs (`host`, `port`, `user`, `application_name`,
//! `password`, `passfile`, TLS: `sslmode` — default `prefer`, as
//! libpq — `sslrootcert`, `sslcert`, `sslkey` (see `protocol::tls`), and
//! TCP keepalives: `keepalives` (default 1: on, as libpq),
//! `keepalives_idle`, `keepalives_interval`, `keepalives_count`,
//! `tcp_user_timeout` (0 or absent: the system's default; see
//! `protocol::sockopt`). Values may be single-quoted with `\'` and
//! `\\` escapes. Without `password`, a `passfile` (libpq's `~/.pgpass`
//! format: `host:port:database:user:password`, `*` matching anything,
//! first match wins) supplies it.

use std::path::Path;

use protocol::sockopt::Keepalives;
use protocol::tls::{ClientTls, SslMode};
use protocol::Client;

/// A parsed connection string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnInfo {
    /// Host name or address (default `127.0.0.1`).
    pub host: String,
    /// Port (default 5432).
    pub port: u16,
    /// User (default `postgres`).
    pub user: String,
    /// `application_name` (default `walreceiver`).
    pub application_name: String,
    /// Password, if any.
    pub password: Option<String>,
    /// `passfile`, if given.
    pub passfile: Option<String>,
    /// `sslmode`.
    pub sslmode: SslMode,
    /// `sslrootcert`: the authorities the primary's certificate must
    /// chain to (verify-ca, verify-full; require too when given).
    pub sslrootcert: Option<String>,
    /// `sslcert`: a client certificate to present.
    pub sslcert: Option<String>,
    /// `sslkey`: its private key.
    pub sslkey: Option<String>,
    /// The keepalive options for the socket; None with `keepalives=0`.
    pub keepalives: Option<Keepalives>,
}

/// An integer connection option, with libpq's error for anything else.
fn conn_int(key: &str, val: &str) -> Result<i32, String> {
    val.trim()
        .parse()
        .map_err(|_| format!("invalid integer value \"{val}\" for connection option \"{key}\""))
}

impl ConnInfo {
    /// Parses `s`; unknown keys are ignored, a bad port is an error.
    pub fn parse(s: &str) -> Result<ConnInfo, String> {
        let mut ci = ConnInfo {
            host: "127.0.0.1".into(),
            port: 5432,
            user: "postgres".into(),
            application_name: "walreceiver".into(),
            password: None,
            passfile: None,
            sslmode: SslMode::Prefer,
            sslrootcert: None,
            sslcert: None,
            sslkey: None,
            keepalives: Some(Keepalives::default()),
        };
        let mut keepalives_on = true;
        let mut chars = s.chars().peekable();
        loop {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.peek().is_none() {
                break;
            }
            let mut key = String::new();
            while let Some(&c) = chars.peek() {
                if c == '=' || c.is_whitespace() {
                    break;
                }
                key.push(c);
                chars.next();
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.next() != Some('=') {
                return Err(format!(
                    "missing \"=\" after \"{key}\" in connection info string"
                ));
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            let mut val = String::new();
            if chars.peek() == Some(&'\'') {
                chars.next();
                loop {
                    match chars.next() {
                        Some('\\') => {
                            if let Some(c) = chars.next() {
                                val.push(c);
                            }
                        }
                        Some('\'') => break,
                        Some(c) => val.push(c),
                        None => {
                            return Err(
                                "unterminated quoted string in connection info string".into()
                            )
                        }
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() {
                        break;
                    }
                    val.push(c);
                    chars.next();
                }
            }
            match key.as_str() {
                "host" | "hostaddr" => ci.host = val,
                "port" => {
                    ci.port = val
                        .parse()
                        .map_err(|_| format!("invalid port number: \"{val}\""))?
                }
                "user" => ci.user = val,
                "application_name" => ci.application_name = val,
                "password" => ci.password = Some(val),
                "passfile" => ci.passfile = Some(val),
                "sslmode" => ci.sslmode = SslMode::parse(&val)?,
                "sslrootcert" => ci.sslrootcert = Some(val),
                "sslcert" => ci.sslcert = Some(val),
                "sslkey" => ci.sslkey = Some(val),
                "keepalives" => keepalives_on = conn_int(&key, &val)? != 0,
                "keepalives_idle"
                | "keepalives_interval"
                | "keepalives_count"
                | "tcp_user_timeout" => {
                    let n = conn_int(&key, &val)?.max(0);
                    if let Some(k) = ci.keepalives.as_mut() {
                        match key.as_str() {
                            "keepalives_idle" => k.idle = n,
                            "keepalives_interval" => k.interval = n,
                            "keepalives_count" => k.count = n,
                            _ => k.user_timeout = n,
                        }
                    }
                }
                _ => {}
            }
        }
        if !keepalives_on {
            ci.keepalives = None;
        }
        if ci.password.is_none() {
            if let Some(file) = &ci.passfile {
                if let Ok(text) = std::fs::read_to_string(file) {
                    ci.password =
                        passfile_lookup(&text, &ci.host, ci.port, "replication", &ci.user);
                }
            }
        }
        Ok(ci)
    }

    /// The TLS setup `sslmode` and the certificate files ask for (files
    /// are read here, so call it per connection: a replaced certificate
    /// is picked up).
    pub fn tls(&self) -> Result<ClientTls, String> {
        fn path(p: &Option<String>) -> Option<&Path> {
            p.as_deref().map(Path::new)
        }
        ClientTls::new(
            self.sslmode,
            path(&self.sslrootcert),
            path(&self.sslcert),
            path(&self.sslkey),
        )
    }

    /// Connects to the primary as `params` say, with TLS as `sslmode`
    /// asks.
    pub async fn connect(&self, params: &[(&str, &str)]) -> Result<Client, String> {
        let tls = self.tls()?;
        let ka = self.keepalives.as_ref();
        Client::connect_tls(
            (self.host.as_str(), self.port),
            &self.host,
            params,
            &tls,
            ka,
        )
        .await
        .map_err(|e| e.to_string())
    }

    /// Startup parameters of a replication connection.
    pub fn startup_params(&self) -> Vec<(&str, &str)> {
        let mut v = vec![
            ("user", self.user.as_str()),
            ("replication", "true"),
            ("application_name", self.application_name.as_str()),
        ];
        if let Some(p) = &self.password {
            v.push(("password", p.as_str()));
        }
        v
    }
}

/// The password of the first pgpass line matching (host, port, database,
/// user); `*` matches anything, `\:` and `\\` are escapes.
pub fn passfile_lookup(
    text: &str,
    host: &str,
    port: u16,
    database: &str,
    user: &str,
) -> Option<String> {
    let port = port.to_string();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                }
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        fields.push(cur);
        if fields.len() != 5 {
            continue;
        }
        let want = [host, port.as_str(), database, user];
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passfile_first_match() {
        let text = "# comment\n\
                    otherhost:*:*:*:nope\n\
                    127.0.0.1:5433:*:rep:pa\\:ss\n\
                    *:*:*:*:fallback\n";
        assert_eq!(
            passfile_lookup(text, "127.0.0.1", 5433, "replication", "rep").as_deref(),
            Some("pa:ss")
        );
        assert_eq!(
            passfile_lookup(text, "127.0.0.1", 5434, "replication", "rep").as_deref(),
            Some("fallback")
        );
    }

    #[test]
    fn parses_quoted_values() {
        let c = ConnInfo::parse("host=localhost port=5433 application_name='my \\'sb\\''").unwrap();
        assert_eq!(c.host, "localhost");
        assert_eq!(c.port, 5433);
        assert_eq!(c.application_name, "my 'sb'");
        assert!(ConnInfo::parse("port=x").is_err());
        assert!(ConnInfo::parse("host").is_err());
    }

    #[test]
    fn keepalive_options() {
        let c = ConnInfo::parse("port=1").unwrap();
        assert_eq!(c.keepalives, Some(Keepalives::default()), "on by default");
        let c = ConnInfo::parse(
            "keepalives_idle=5 keepalives_interval=2 keepalives_count=3 tcp_user_timeout=9000",
        )
        .unwrap();
        assert_eq!(
            c.keepalives,
            Some(Keepalives {
                idle: 5,
                interval: 2,
                count: 3,
                user_timeout: 9000
            })
        );
        assert_eq!(
            ConnInfo::parse("keepalives=0 keepalives_idle=5")
                .unwrap()
                .keepalives,
            None
        );
        assert_eq!(
            ConnInfo::parse("keepalives_idle=x").unwrap_err(),
            "invalid integer value \"x\" for connection option \"keepalives_idle\""
        );
    }
}
