//! Utility statements over a session's settings: `SET`, `SHOW`, `RESET`.
//!
//! Each session works on its own copy of the server [`Config`] (plus
//! custom `a.b` placeholders, as PostgreSQL allows). Settings follow
//! PostgreSQL's transactional rules in a simplified form: the first `SET`
//! inside a transaction saves the state; at COMMIT the saved state comes
//! back with the session-level `SET`s of the transaction re-applied (so
//! `SET LOCAL` values end with the transaction), at ROLLBACK the saved state
//! comes back as it was.
//!
//! Settings PostgreSQL reports with ParameterStatus (`GUC_REPORT`) are
//! reported to the client when a `SET`/`RESET` changes them.

use std::collections::BTreeMap;

use pgtypes::config::{find_setting, Config, Context, SETTINGS};
use pgtypes::error::{sqlstate, PgError, PgResult};

/// Settings reported with ParameterStatus when they change.
pub const REPORTED: &[&str] = &[
    "application_name",
    "client_encoding",
    "DateStyle",
    "IntervalStyle",
    "TimeZone",
    "standard_conforming_strings",
    "is_superuser",
    "integer_datetimes",
    "server_encoding",
    "server_version",
];

#[derive(Clone, Debug)]
struct State {
    config: Config,
    custom: BTreeMap<String, String>,
}

/// One session's settings.
#[derive(Debug)]
pub struct SessionSettings {
    state: State,
    /// The server's values (RESET goes back to them).
    base: Config,
    /// State saved at the first SET of the current transaction.
    saved: Option<State>,
    /// Session-level SETs made in the current transaction, in order
    /// (value None = RESET).
    session_sets: Vec<(String, Option<String>)>,
}

/// The canonical name of a setting (`datestyle` → `DateStyle`), or the
/// lower-cased name of a custom placeholder.
pub fn canonical_name(name: &str) -> String {
    let lname = name.to_ascii_lowercase();
    let lname = if lname == "timezone" || lname == "time zone" {
        "TimeZone".to_string()
    } else {
        lname
    };
    match find_setting(&lname) {
        Some(d) => d.name.to_string(),
        None => lname,
    }
}

fn unrecognized(name: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("unrecognized configuration parameter \"{name}\""),
    )
}

impl SessionSettings {
    /// The server's settings, as a new session starts with them.
    pub fn new(base: &Config) -> SessionSettings {
        SessionSettings {
            state: State {
                config: base.clone(),
                custom: BTreeMap::new(),
            },
            base: base.clone(),
            saved: None,
            session_sets: Vec::new(),
        }
    }

    /// The server's configuration was reloaded: every value the session
    /// did not set follows `server`. False (nothing done) while a
    /// transaction has saved settings to restore; the caller asks again
    /// later.
    pub fn rebase(&mut self, server: &Config) -> bool {
        if self.saved.is_some() {
            return false;
        }
        self.state.config = self.state.config.rebased(server);
        self.base = self.base.rebased(server);
        true
    }

    /// The current value of a setting (None if unknown).
    pub fn get(&self, name: &str) -> Option<String> {
        let c = canonical_name(name);
        if let Some(v) = self.state.config.get(&c) {
            return Some(v.to_string());
        }
        self.state.custom.get(&c).cloned()
    }

    /// Sets a value the session itself owns (`session_authorization`,
    /// `is_superuser`): not settable by SET, kept by RESET.
    pub fn set_internal(&mut self, name: &str, value: &str) {
        let _ = self.state.config.set(name, value);
        let _ = self.base.set(name, value);
    }

    /// The session's effective configuration.
    pub fn config(&self) -> &Config {
        &self.state.config
    }

    /// SET name = value (None: DEFAULT). `in_xact_block` says whether an
    /// explicit transaction block is open (for SET LOCAL). Returns the
    /// canonical name and the new value.
    pub fn set(
        &mut self,
        name: &str,
        value: Option<&str>,
        local: bool,
        in_xact: bool,
    ) -> PgResult<(String, String)> {
        let c = canonical_name(name);
        let def = find_setting(&c);
        if def.is_none() && !c.contains('.') {
            return Err(unrecognized(name));
        }
        if let Some(d) = def {
            if d.context == Context::Postmaster {
                return Err(PgError::new(
                    sqlstate::CANT_CHANGE_RUNTIME_PARAM,
                    format!(
                        "parameter \"{}\" cannot be changed without restarting the server",
                        d.name
                    ),
                ));
            }
            if d.context == Context::Internal {
                return Err(PgError::new(
                    sqlstate::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{}\" cannot be changed", d.name),
                ));
            }
            if d.context == Context::Sighup {
                return Err(PgError::new(
                    sqlstate::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{}\" cannot be changed now", d.name),
                ));
            }
        }
        let new_value = match value {
            Some(v) => v.to_string(),
            None => match def {
                Some(_) => self.base.get(&c).unwrap_or("").to_string(),
                None => String::new(),
            },
        };
        let new_value = normalize(&c, &new_value)?;
        if in_xact && self.saved.is_none() {
            self.saved = Some(self.state.clone());
        }
        match def {
            Some(_) => self.state.config.set(&c, &new_value)?,
            None => {
                self.state.custom.insert(c.clone(), new_value.clone());
            }
        }
        if in_xact && !local {
            self.session_sets
                .push((c.clone(), value.map(|_| new_value.clone())));
        }
        Ok((c, new_value))
    }

    /// RESET ALL: every user-settable setting back to the server's value.
    /// Returns the reported settings that changed.
    pub fn reset_all(&mut self, in_xact: bool) -> Vec<(String, String)> {
        if in_xact && self.saved.is_none() {
            self.saved = Some(self.state.clone());
        }
        let mut changed = Vec::new();
        for d in SETTINGS {
            // As PostgreSQL's GUC_NO_RESET_ALL: RESET ALL keeps who the
            // session is.
            if d.context != Context::User || matches!(d.name, "session_authorization" | "role") {
                continue;
            }
            let base = self.base.get(d.name).unwrap_or("").to_string();
            if self.state.config.get(d.name) != Some(base.as_str()) {
                let _ = self.state.config.set(d.name, &base);
                if REPORTED.contains(&d.name) {
                    changed.push((d.name.to_string(), base.clone()));
                }
                if in_xact {
                    self.session_sets.push((d.name.to_string(), None));
                }
            }
        }
        self.state.custom.clear();
        changed
    }

    /// End of a transaction: restore or keep (see the module doc). Returns
    /// whether the transaction had changed settings (so values copied out
    /// of them must be read again).
    pub fn end_xact(&mut self, committed: bool) -> bool {
        let Some(saved) = self.saved.take() else {
            self.session_sets.clear();
            return false;
        };
        self.state = saved;
        if committed {
            for (name, value) in std::mem::take(&mut self.session_sets) {
                let v = value.unwrap_or_else(|| self.base.get(&name).unwrap_or("").to_string());
                if find_setting(&name).is_some() {
                    let _ = self.state.config.set(&name, &v);
                } else {
                    self.state.custom.insert(name, v);
                }
            }
        }
        self.session_sets.clear();
        true
    }

    /// `SHOW ALL` rows: (name, setting, description).
    pub fn show_all(&self) -> Vec<(String, String, String)> {
        let mut rows: Vec<(String, String, String)> = SETTINGS
            .iter()
            .map(|d| {
                (
                    d.name.to_string(),
                    self.state.config.get(d.name).unwrap_or("").to_string(),
                    d.doc.to_string(),
                )
            })
            .collect();
        for (k, v) in &self.state.custom {
            rows.push((k.clone(), v.clone(), String::new()));
        }
        rows.sort_by_key(|r| r.0.to_ascii_lowercase());
        rows
    }
}

/// Canonicalises a few values the way PostgreSQL prints them back.
fn normalize(name: &str, v: &str) -> PgResult<String> {
    if let Some(def) = pgtypes::config::find_setting(name) {
        if pgtypes::config::is_bool_setting(def) {
            // `yes`, `1`, `true` … read back as on / off (validated by then).
            if let Some(b) = pgtypes::config::parse_bool(v) {
                return Ok(if b { "on" } else { "off" }.to_string());
            }
        }
    }
    Ok(match name {
        "transaction_isolation" | "default_transaction_isolation" => {
            match crate::parser::isolation_from_name(v) {
                Some(l) => crate::parser::isolation_name(l).to_string(),
                None => {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"{name}\": \"{v}\""),
                    )
                    .with_hint("Available values: serializable, repeatable read, read committed, read uncommitted."))
                }
            }
        }
        "password_encryption" => match v.to_ascii_lowercase().as_str() {
            "scram-sha-256" => "scram-sha-256".to_string(),
            "md5" => "md5".to_string(),
            _ => {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("invalid value for parameter \"{name}\": \"{v}\""),
                )
                .with_hint("Available values: md5, scram-sha-256."))
            }
        },
        "scram_iterations" => match v.trim().parse::<i32>() {
            Ok(n) if n >= 1 => n.to_string(),
            Ok(n) => {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!(
                        "{n} is outside the valid range for parameter \"{name}\" (1 .. 2147483647)"
                    ),
                ))
            }
            Err(_) => {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("invalid value for parameter \"{name}\": \"{v}\""),
                ))
            }
        },
        "client_encoding" => {
            let n = v.to_ascii_uppercase().replace(['-', '_'], "");
            if n != "UTF8" && n != "UNICODE" {
                return Err(PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("conversion between {v} and UTF8 is not supported"),
                ));
            }
            "UTF8".to_string()
        }
        _ => v.to_string(),
    })
}

impl crate::executor::SettingsView for SessionSettings {
    fn get_setting(&self, name: &str) -> Option<String> {
        self.get(name)
    }
    fn current_user(&self) -> String {
        let c = self.config();
        match c.get("role") {
            Some(r) if r != "none" => r.to_string(),
            _ => c
                .get("session_authorization")
                .unwrap_or("postgres")
                .to_string(),
        }
    }
    fn lock_timeout(&self) -> Option<std::time::Duration> {
        let ms = self.config().int("lock_timeout");
        (ms > 0).then(|| std::time::Duration::from_millis(ms as u64))
    }
    fn show_all(&self) -> Vec<(String, String, String)> {
        SessionSettings::show_all(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_reset_and_transactions() {
        let base = Config::new("/tmp/x");
        let mut s = SessionSettings::new(&base);
        assert_eq!(
            s.set("Application_Name", Some("a"), false, false).unwrap(),
            ("application_name".into(), "a".into())
        );
        assert_eq!(s.get("application_name").as_deref(), Some("a"));
        assert!(s.set("shared_buffers", Some("1MB"), false, false).is_err());
        assert!(s.set("nonsense", Some("1"), false, false).is_err());
        s.set("my.opt", Some("x"), false, false).unwrap();
        assert_eq!(s.get("my.opt").as_deref(), Some("x"));
        // A transaction: session SET survives commit, SET LOCAL does not.
        s.set("application_name", Some("b"), false, true).unwrap();
        s.set("DateStyle", Some("German"), true, true).unwrap();
        s.end_xact(true);
        assert_eq!(s.get("application_name").as_deref(), Some("b"));
        assert_eq!(s.get("datestyle").as_deref(), Some("ISO, MDY"));
        // Rolled back SET is undone.
        s.set("application_name", Some("c"), false, true).unwrap();
        s.end_xact(false);
        assert_eq!(s.get("application_name").as_deref(), Some("b"));
        // RESET = DEFAULT.
        s.set("application_name", None, false, false).unwrap();
        assert_eq!(s.get("application_name").as_deref(), Some(""));
        s.set("timezone", Some("Europe/Paris"), false, false)
            .unwrap();
        assert_eq!(s.get("TimeZone").as_deref(), Some("Europe/Paris"));
        let changed = s.reset_all(false);
        assert!(changed.iter().any(|(n, _)| n == "TimeZone"));
        assert!(s.get("my.opt").is_none());
        assert!(s
            .set("transaction_isolation", Some("bogus"), false, false)
            .is_err());
        assert_eq!(
            s.set(
                "default_transaction_isolation",
                Some("REPEATABLE READ"),
                false,
                false
            )
            .unwrap()
            .1,
            "repeatable read"
        );
        assert!(!s.show_all().is_empty());
    }
}
