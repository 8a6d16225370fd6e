//! `primary_conninfo`: libpq's `key=value` connection string, the subset a
//! walreceiver needs (`host`, `port`, `user`, `application_name`,
//! `password`). Values may be single-quoted with `\'` and `\\` escapes.

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
        };
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
                _ => {}
            }
        }
        Ok(ci)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quoted_values() {
        let c = ConnInfo::parse("host=localhost port=5433 application_name='my \\'sb\\''").unwrap();
        assert_eq!(c.host, "localhost");
        assert_eq!(c.port, 5433);
        assert_eq!(c.application_name, "my 'sb'");
        assert!(ConnInfo::parse("port=x").is_err());
        assert!(ConnInfo::parse("host").is_err());
    }
}
