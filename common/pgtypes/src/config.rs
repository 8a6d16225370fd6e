//! Configuration: PostgreSQL's setting names, one table of defaults, values
//! from `DIR/hotpair.conf`, then `DIR/postgresql.auto.conf` (ALTER SYSTEM,
//! [`alter_system`]), then `-c name=value` flags (later wins), and the
//! per-session view used by `SET` / `SHOW` / `RESET`.
//!
//! Every setting is declared once in [`SETTINGS`] with its default and unit;
//! `docs/operations.md` lists them. Values are kept as text (what `SHOW`
//! prints) and parsed on demand by the typed accessors on [`Config`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{sqlstate, PgError, PgResult};

/// How a setting may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// Only at server start (`-c` or hotpair.conf).
    Postmaster,
    /// The configuration files, re-read on SIGHUP / `pg_reload_conf()`;
    /// never `SET`.
    Sighup,
    /// Any session may `SET` it.
    User,
    /// Fixed for the data directory (`data_checksums`): shown, never set;
    /// `-c` names it only when the directory is created (initdb's option).
    Internal,
}

/// The unit a numeric setting is written in when no unit is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A plain number or word.
    None,
    /// 8 KiB pages (`shared_buffers`): accepts kB, MB, GB.
    Blocks,
    /// Megabytes (`max_wal_size`, `wal_keep_size`): accepts kB, MB, GB.
    Megabytes,
    /// Milliseconds: accepts us, ms, s, min, h.
    Milliseconds,
    /// Seconds: accepts ms, s, min, h.
    Seconds,
    /// Minutes (`old_snapshot_threshold`): accepts s, min, h, d.
    Minutes,
    /// Kilobytes (`work_mem`, `temp_file_limit`): accepts B, kB, MB, GB.
    Kilobytes,
}

/// One declared setting.
#[derive(Clone, Copy, Debug)]
pub struct SettingDef {
    /// PostgreSQL's name.
    pub name: &'static str,
    /// Default value as `SHOW` prints it.
    pub default: &'static str,
    /// Unit for bare numbers.
    pub unit: Unit,
    /// Who may change it.
    pub context: Context,
    /// One line for docs and `--help`.
    pub doc: &'static str,
}

const fn def(
    name: &'static str,
    default: &'static str,
    unit: Unit,
    context: Context,
    doc: &'static str,
) -> SettingDef {
    SettingDef {
        name,
        default,
        unit,
        context,
        doc,
    }
}

/// Every setting hotpair knows, with its default. The one place defaults live.
pub const SETTINGS: &[SettingDef] = &[
    def(
        "port",
        "5432",
        Unit::None,
        Context::Postmaster,
        "TCP port to listen on",
    ),
    def(
        "listen_addresses",
        "localhost",
        Unit::None,
        Context::Postmaster,
        "addresses to listen on ('*' for all)",
    ),
    def(
        "unix_socket_directories",
        "/var/run/postgresql",
        Unit::None,
        Context::Postmaster,
        "directories of the Unix-domain socket (only the first is used; empty: none)",
    ),
    def(
        "unix_socket_permissions",
        "0777",
        Unit::None,
        Context::Postmaster,
        "access permissions of the Unix-domain socket (octal)",
    ),
    def(
        "data_directory_mode",
        "0700",
        Unit::None,
        Context::Postmaster,
        "mode of the data directory (read only)",
    ),
    def(
        "authentication_timeout",
        "1min",
        Unit::Seconds,
        Context::Sighup,
        "time to complete the startup packet and authentication",
    ),
    def(
        "tcp_keepalives_idle",
        "0",
        Unit::Seconds,
        Context::User,
        "time between TCP keepalives on an idle client connection (0 = system default)",
    ),
    def(
        "tcp_keepalives_interval",
        "0",
        Unit::Seconds,
        Context::User,
        "time between TCP keepalive retransmits (0 = system default)",
    ),
    def(
        "tcp_keepalives_count",
        "0",
        Unit::None,
        Context::User,
        "TCP keepalive retransmits before a client connection is dead (0 = system default)",
    ),
    def(
        "tcp_user_timeout",
        "0",
        Unit::Milliseconds,
        Context::User,
        "time transmitted data may stay unacknowledged before a client connection is dead (0 = system default)",
    ),
    def(
        "log_connections",
        "off",
        Unit::None,
        Context::Sighup,
        "log each connection received and authorized",
    ),
    def(
        "log_disconnections",
        "off",
        Unit::None,
        Context::Sighup,
        "log the end of each session, with its duration",
    ),
    def(
        "max_connections",
        "100",
        Unit::None,
        Context::Postmaster,
        "maximum concurrent client connections",
    ),
    def(
        "superuser_reserved_connections",
        "3",
        Unit::None,
        Context::Postmaster,
        "connection slots of max_connections kept for superusers",
    ),
    def(
        "park_idle_sessions_above",
        "-1",
        Unit::None,
        Context::Sighup,
        "client sockets held beyond which sessions idle for 100 ms park theirs outside the descriptor table (-1: half the open-file limit; 0: always)",
    ),
    def(
        "session_cores",
        "0",
        Unit::None,
        Context::Postmaster,
        "session event loops, one thread each (0: one per CPU)",
    ),
    def(
        "max_pred_locks_per_transaction",
        "64",
        Unit::None,
        Context::Postmaster,
        "SIRead locks a serializable transaction holds before its busiest relation's are promoted",
    ),
    def(
        "max_pred_locks_per_relation",
        "-2",
        Unit::None,
        Context::Postmaster,
        "page and tuple SIRead locks of one relation before promotion (negative: per transaction / -n)",
    ),
    def(
        "max_pred_locks_per_page",
        "2",
        Unit::None,
        Context::Postmaster,
        "tuple SIRead locks of one page before promotion to the page",
    ),
    def(
        "max_prepared_transactions",
        "0",
        Unit::None,
        Context::Postmaster,
        "maximum prepared transactions (0 disables PREPARE TRANSACTION)",
    ),
    def(
        "shared_buffers",
        "128MB",
        Unit::Blocks,
        Context::Postmaster,
        "size of the buffer pool",
    ),
    def(
        "max_message_size",
        "1GB",
        Unit::None,
        Context::Postmaster,
        "largest protocol message accepted (bytes; kB/MB/GB)",
    ),
    def(
        "fsync",
        "on",
        Unit::None,
        Context::Sighup,
        "flush WAL and data to disk (off only for tests)",
    ),
    def(
        "synchronous_commit",
        "on",
        Unit::None,
        Context::User,
        "what a commit waits for: off, local, remote_write, on, remote_apply",
    ),
    def(
        "synchronous_standby_names",
        "",
        Unit::None,
        Context::Sighup,
        "standbys commits wait for: FIRST n (names), ANY n (names), or a list",
    ),
    def(
        "full_page_writes",
        "on",
        Unit::None,
        Context::Sighup,
        "log a full page image at the first change after a checkpoint",
    ),
    def(
        "data_checksums",
        "off",
        Unit::None,
        Context::Internal,
        "pages carry checksums, checked on every read (fixed when the data directory is created)",
    ),
    def(
        "ignore_checksum_failure",
        "off",
        Unit::None,
        Context::Sighup,
        "a page that fails its checksum is used anyway, with a WARNING in the log",
    ),
    def(
        "wal_segment_size",
        "16MB",
        Unit::None,
        Context::Postmaster,
        "size of one WAL segment file (bytes; kB/MB)",
    ),
    def(
        "wal_keep_size",
        "0",
        Unit::Megabytes,
        Context::Sighup,
        "WAL kept for standbys beyond what checkpoints need",
    ),
    def(
        "max_slot_wal_keep_size",
        "-1",
        Unit::Megabytes,
        Context::Sighup,
        "most WAL a replication slot may hold (-1: no limit)",
    ),
    def(
        "max_wal_size",
        "1GB",
        Unit::Megabytes,
        Context::Sighup,
        "WAL between checkpoints that triggers one",
    ),
    def(
        "checkpoint_timeout",
        "5min",
        Unit::Seconds,
        Context::Sighup,
        "time between automatic checkpoints",
    ),
    def(
        "deadlock_timeout",
        "1s",
        Unit::Milliseconds,
        Context::Postmaster,
        "wait before checking for deadlock",
    ),
    def(
        "statement_timeout",
        "0",
        Unit::Milliseconds,
        Context::User,
        "abort statements running longer (0 = off)",
    ),
    def(
        "relation_extension",
        "bulk",
        Unit::None,
        Context::Postmaster,
        "bulk (PostgreSQL 16: victim buffers found outside the extension lock, many pages per extension) or single (PostgreSQL 15: one page, victim under the lock)",
    ),
    def(
        "default_table_access_method",
        "heap",
        Unit::None,
        Context::User,
        "the table access method of new tables: heap (the only one)",
    ),
    def(
        "default_toast_compression",
        "lz4",
        Unit::None,
        Context::User,
        "compression of TOAST-ed values: lz4 (pglz, PostgreSQL's default, is not implemented)",
    ),
    def(
        "old_snapshot_threshold",
        "-1",
        Unit::Minutes,
        Context::Postmaster,
        "time before a snapshot is too old to read pages changed after the snapshot was taken (-1: off; 0: at once, for tests)",
    ),
    def(
        "hot_standby",
        "on",
        Unit::None,
        Context::Postmaster,
        "allow read-only queries during recovery",
    ),
    def(
        "hot_standby_feedback",
        "off",
        Unit::None,
        Context::Sighup,
        "standby reports its oldest query xmin to the primary, which keeps the rows it needs",
    ),
    def(
        "max_standby_streaming_delay",
        "30s",
        Unit::Milliseconds,
        Context::Sighup,
        "how long replay waits before canceling standby queries that conflict with it (-1: for ever)",
    ),
    def(
        "wal_receiver_timeout",
        "60s",
        Unit::Milliseconds,
        Context::Sighup,
        "a standby ends a replication connection whose primary sent nothing for this long, then reconnects (0 = never)",
    ),
    def(
        "wal_sender_timeout",
        "60s",
        Unit::Milliseconds,
        Context::Sighup,
        "a primary ends a replication connection whose standby sent no reply for this long (0 = never)",
    ),
    def(
        "wal_receiver_status_interval",
        "10s",
        Unit::Seconds,
        Context::Sighup,
        "interval between standby status replies",
    ),
    def(
        "primary_conninfo",
        "",
        Unit::None,
        Context::Sighup,
        "connection string to the primary",
    ),
    def(
        "recovery_target_timeline",
        "latest",
        Unit::None,
        Context::Postmaster,
        "timeline a standby follows: latest (every promotion of its primary), current, or an ID",
    ),
    def(
        "primary_slot_name",
        "",
        Unit::None,
        Context::Sighup,
        "replication slot used on the primary",
    ),
    def(
        "max_wal_senders",
        "10",
        Unit::None,
        Context::Postmaster,
        "maximum walsender connections",
    ),
    def(
        "max_replication_slots",
        "10",
        Unit::None,
        Context::Postmaster,
        "maximum replication slots",
    ),
    def(
        "wal_level",
        "replica",
        Unit::None,
        Context::Postmaster,
        "accepted for compatibility; always replica",
    ),
    def(
        "application_name",
        "",
        Unit::None,
        Context::User,
        "name reported in pg_stat_replication and logs",
    ),
    def(
        "client_encoding",
        "UTF8",
        Unit::None,
        Context::User,
        "client character set (only UTF8)",
    ),
    def(
        "server_encoding",
        "UTF8",
        Unit::None,
        Context::Postmaster,
        "server character set (only UTF8)",
    ),
    def(
        "DateStyle",
        "ISO, MDY",
        Unit::None,
        Context::User,
        "date output style",
    ),
    def(
        "TimeZone",
        "UTC",
        Unit::None,
        Context::User,
        "time zone for timestamptz",
    ),
    def(
        "IntervalStyle",
        "postgres",
        Unit::None,
        Context::User,
        "interval output style",
    ),
    def(
        "integer_datetimes",
        "on",
        Unit::None,
        Context::Postmaster,
        "timestamps are 64-bit integers",
    ),
    def(
        "standard_conforming_strings",
        "on",
        Unit::None,
        Context::User,
        "backslashes are literal in ordinary strings",
    ),
    def(
        "server_version",
        "15.4",
        Unit::None,
        Context::Postmaster,
        "PostgreSQL version hotpair answers as",
    ),
    def(
        "server_version_num",
        "150004",
        Unit::None,
        Context::Postmaster,
        "numeric server version",
    ),
    def(
        "transaction_isolation",
        "read committed",
        Unit::None,
        Context::User,
        "isolation of the current transaction",
    ),
    def(
        "default_transaction_isolation",
        "read committed",
        Unit::None,
        Context::User,
        "isolation of new transactions",
    ),
    def(
        "transaction_read_only",
        "off",
        Unit::None,
        Context::User,
        "whether the current transaction is read-only",
    ),
    def(
        "default_transaction_read_only",
        "off",
        Unit::None,
        Context::User,
        "whether new transactions start read-only",
    ),
    def(
        "transaction_deferrable",
        "off",
        Unit::None,
        Context::User,
        "whether a serializable read-only transaction waits for a safe snapshot",
    ),
    def(
        "default_transaction_deferrable",
        "off",
        Unit::None,
        Context::User,
        "whether new transactions start deferrable",
    ),
    def(
        "search_path",
        "\"$user\", public",
        Unit::None,
        Context::User,
        "accepted for compatibility",
    ),
    def(
        "extra_float_digits",
        "1",
        Unit::None,
        Context::User,
        "accepted for compatibility",
    ),
    def(
        "client_min_messages",
        "notice",
        Unit::None,
        Context::User,
        "lowest notice level sent to the client",
    ),
    def(
        "log_min_messages",
        "info",
        Unit::None,
        Context::Sighup,
        "log filter (also RUST_LOG)",
    ),
    def(
        "is_superuser",
        "on",
        Unit::None,
        Context::Postmaster,
        "whether the session's role is a superuser (set per session)",
    ),
    def(
        "session_authorization",
        "postgres",
        Unit::None,
        Context::User,
        "the session user (from the startup packet; SET SESSION AUTHORIZATION by a superuser)",
    ),
    def(
        "role",
        "none",
        Unit::None,
        Context::User,
        "the current role (SET ROLE; none: the session user)",
    ),
    def(
        "password_encryption",
        "scram-sha-256",
        Unit::None,
        Context::User,
        "how CREATE/ALTER ROLE … PASSWORD stores a password: scram-sha-256 or md5",
    ),
    def(
        "scram_iterations",
        "4096",
        Unit::None,
        Context::User,
        "PBKDF2 iterations of new SCRAM-SHA-256 verifiers",
    ),
    def(
        "ssl",
        "off",
        Unit::None,
        Context::Sighup,
        "accept TLS connections (SSLRequest answered S)",
    ),
    def(
        "ssl_cert_file",
        "server.crt",
        Unit::None,
        Context::Sighup,
        "server certificate chain, PEM (relative to the data directory)",
    ),
    def(
        "ssl_key_file",
        "server.key",
        Unit::None,
        Context::Sighup,
        "server private key, PEM (relative to the data directory)",
    ),
    def(
        "ssl_ca_file",
        "",
        Unit::None,
        Context::Sighup,
        "certificate authorities for client certificates (empty: none asked for)",
    ),
    def(
        "ssl_min_protocol_version",
        "TLSv1.2",
        Unit::None,
        Context::Sighup,
        "oldest TLS version accepted: TLSv1.2 or TLSv1.3",
    ),
    def(
        "ssl_max_protocol_version",
        "",
        Unit::None,
        Context::Sighup,
        "newest TLS version accepted (empty: the newest there is)",
    ),
    def(
        "hba_file",
        "",
        Unit::None,
        Context::Postmaster,
        "client authentication file (empty: DIR/pg_hba.conf)",
    ),
    def(
        "ident_file",
        "",
        Unit::None,
        Context::Postmaster,
        "user name map file (empty: DIR/pg_ident.conf)",
    ),
    def(
        "lock_timeout",
        "0",
        Unit::Milliseconds,
        Context::User,
        "longest wait for a row lock (55P03); 0 waits without limit",
    ),
    def(
        "idle_in_transaction_session_timeout",
        "0",
        Unit::Milliseconds,
        Context::User,
        "end a session idle this long inside a transaction block (FATAL 25P03); 0 = off",
    ),
    def(
        "work_mem",
        "4MB",
        Unit::Kilobytes,
        Context::User,
        "memory a sort, hash join or hash aggregation holds before it spills to temporary files",
    ),
    def(
        "hash_mem_multiplier",
        "2",
        Unit::None,
        Context::User,
        "multiple of work_mem a hash table may use: hash joins, hash aggregation, hashed DISTINCT and set operations (1 .. 1000)",
    ),
    def(
        "temp_file_limit",
        "-1",
        Unit::Kilobytes,
        Context::User,
        "most temporary file space a session may hold at once (-1: no limit)",
    ),
    def(
        "log_temp_files",
        "-1",
        Unit::Kilobytes,
        Context::User,
        "log each temporary file at least this big when it is removed (-1: off; 0: all)",
    ),
    def(
        "default_statistics_target",
        "100",
        Unit::None,
        Context::User,
        "most common values and histogram bins ANALYZE keeps per column (1..10000)",
    ),
    def(
        "maintenance_work_mem",
        "64MB",
        Unit::Kilobytes,
        Context::User,
        "accepted for compatibility",
    ),
    def(
        "enable_seqscan",
        "on",
        Unit::None,
        Context::User,
        "accepted for compatibility (the planner takes a matching index whenever there is one)",
    ),
    def(
        "max_parallel_workers_per_gather",
        "2",
        Unit::None,
        Context::User,
        "most threads a Gather adds to the session's own for one parallel scan (0: no parallel query)",
    ),
    def(
        "jit",
        "off",
        Unit::None,
        Context::User,
        "accepted for compatibility",
    ),
    def(
        "row_security",
        "on",
        Unit::None,
        Context::User,
        "accepted for compatibility",
    ),
];

/// Looks a setting up by name, case-insensitively: a binary search of
/// the names sorted in lower case (settings are read by name on hot paths:
/// every statement a function runs asks for `role`).
pub fn find_setting(name: &str) -> Option<&'static SettingDef> {
    type Index = (Vec<&'static SettingDef>, Vec<&'static SettingDef>);
    static BY_NAME: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
    let (exact, folded) = BY_NAME.get_or_init(|| {
        let mut exact: Vec<&'static SettingDef> = SETTINGS.iter().collect();
        exact.sort_by(|a, b| a.name.cmp(b.name));
        let mut folded = exact.clone();
        folded.sort_by(|a, b| cmp_ignore_case(a.name, b.name));
        (exact, folded)
    });
    // The canonical spelling (what the server itself asks for) first.
    if let Ok(i) = exact.binary_search_by(|d| d.name.cmp(name)) {
        return exact.get(i).copied();
    }
    folded
        .binary_search_by(|d| cmp_ignore_case(d.name, name))
        .ok()
        .and_then(|i| folded.get(i).copied())
}

/// ASCII case-insensitive order of `a` and `b`.
fn cmp_ignore_case(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes()
        .map(|c| c.to_ascii_lowercase())
        .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
}

/// The file ALTER SYSTEM writes in the data directory (PostgreSQL's
/// name), read after `hotpair.conf` and before `-c` flags.
pub const AUTO_CONF: &str = "postgresql.auto.conf";

/// ALTER SYSTEM: sets (`value` Some) or removes (None) `name` in
/// `DIR/postgresql.auto.conf`; `name` None removes everything (RESET
/// ALL). The value is checked as the setting's own parser checks it; the
/// file is replaced atomically (temp file, fsync, rename).
pub fn alter_system(data_dir: &Path, name: Option<&str>, value: Option<&str>) -> PgResult<()> {
    let path = data_dir.join(AUTO_CONF);
    let mut entries: Vec<(String, String)> = Vec::new();
    if path.exists() {
        let text = std::fs::read_to_string(&path).map_err(|e| {
            PgError::new(
                sqlstate::IO_ERROR,
                format!("could not read file \"{}\": {e}", path.display()),
            )
        })?;
        for raw in text.lines() {
            let line = strip_comment(raw).trim();
            if let Some((k, v)) = line.split_once('=') {
                entries.push((k.trim().to_string(), unquote(v.trim()).to_string()));
            }
        }
    }
    match name {
        None => entries.clear(),
        Some(n) => {
            let def = find_setting(n).ok_or_else(|| {
                PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("unrecognized configuration parameter \"{n}\""),
                )
            })?;
            if def.context == Context::Internal {
                return Err(PgError::new(
                    sqlstate::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{}\" cannot be changed", def.name),
                ));
            }
            entries.retain(|(k, _)| k != def.name);
            if let Some(v) = value {
                // The setting's own check, on a scratch configuration.
                Config::new(data_dir).set(def.name, v)?;
                entries.push((def.name.to_string(), v.to_string()));
            }
        }
    }
    let mut text = String::from(
        "# Do not edit this file manually!\n# It will be overwritten by the ALTER SYSTEM command.\n",
    );
    for (k, v) in &entries {
        text.push_str(&format!("{k} = '{}'\n", v.replace('\'', "''")));
    }
    crate::fileutil::write_atomic(&path, text.as_bytes(), true)
}

/// The server-wide configuration: defaults, then hotpair.conf, then `-c`.
///
/// Every session starts from a copy of the server's configuration, so a
/// copy must be cheap: the values are shared (`base`, behind an `Arc`) and
/// a copy owns only what was set on it since (`changed`). A node's
/// configuration folds its file and command-line values into the shared
/// part once loaded ([`Config::load`]).
#[derive(Clone, Debug)]
pub struct Config {
    /// The data directory.
    pub data_dir: PathBuf,
    /// Every setting's value, shared between copies.
    base: Arc<BTreeMap<&'static str, String>>,
    /// Values set on this copy, over `base`.
    changed: BTreeMap<&'static str, String>,
    /// Where the values came from, for [`Config::reload`].
    sources: Arc<Sources>,
    /// Names these values: taken from a process-wide counter whenever
    /// they change, kept by a copy (same values), so two configurations
    /// with the same stamp hold the same values (see [`Config::stamp`]).
    stamp: u64,
}

/// The last [`Config::stamp`] handed out.
static STAMPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn next_stamp() -> u64 {
    STAMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

/// What [`Config::load`] read: what a reload compares against.
#[derive(Debug, Default)]
struct Sources {
    /// Every setting as the defaults and the files alone set it.
    files: BTreeMap<&'static str, String>,
    /// Restart-only settings whose file value differs from the running
    /// one (`pg_settings.pending_restart`).
    pending_restart: std::collections::BTreeSet<&'static str>,
}

/// The outcome of [`Config::reload`].
#[derive(Debug)]
pub struct Reloaded {
    /// The new server configuration.
    pub config: Config,
    /// The settings that took new values, with them, in name order.
    pub applied: Vec<(&'static str, String)>,
    /// Restart-only settings the files changed this time (their old value
    /// stays in force).
    pub needs_restart: Vec<&'static str>,
}

impl Config {
    /// The file a path setting (`hba_file`, `ident_file`) names: absolute
    /// as given, relative to the data directory, or `default_name` in the
    /// data directory when unset or empty.
    pub fn file_path(&self, setting: &str, default_name: &str) -> std::path::PathBuf {
        match self.get(setting).filter(|s| !s.is_empty()) {
            Some(p) if std::path::Path::new(p).is_absolute() => std::path::PathBuf::from(p),
            Some(p) => self.data_dir.join(p),
            None => self.data_dir.join(default_name),
        }
    }

    /// Defaults only, for `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Config {
        let values = SETTINGS
            .iter()
            .map(|s| (s.name, s.default.to_string()))
            .collect();
        Config {
            data_dir: data_dir.into(),
            base: Arc::new(values),
            changed: BTreeMap::new(),
            sources: Arc::default(),
            stamp: next_stamp(),
        }
    }

    /// Defaults, then `DIR/hotpair.conf` if present, then `overrides`
    /// (`name=value` strings from `-c`).
    pub fn load(data_dir: impl Into<PathBuf>, overrides: &[String]) -> PgResult<Config> {
        let mut cfg = Config::read_files(data_dir.into())?;
        let files = cfg.changed.clone();
        apply_overrides(&mut cfg, overrides)?;
        cfg.fold();
        let files = SETTINGS
            .iter()
            .map(|d| {
                let v = files.get(d.name).map_or(d.default, |v| v.as_str());
                (d.name, v.to_string())
            })
            .collect();
        cfg.sources = Arc::new(Sources {
            files,
            pending_restart: Default::default(),
        });
        Ok(cfg)
    }

    /// Defaults, then `hotpair.conf`, then the ALTER SYSTEM file (values
    /// left unfolded in `changed`).
    fn read_files(data_dir: PathBuf) -> PgResult<Config> {
        let mut cfg = Config::new(data_dir);
        for conf in [
            cfg.data_dir.join("hotpair.conf"),
            cfg.data_dir.join(AUTO_CONF),
        ] {
            if !conf.exists() {
                continue;
            }
            let text = std::fs::read_to_string(&conf).map_err(|e| {
                PgError::new(
                    sqlstate::IO_ERROR,
                    format!("could not read file \"{}\": {e}", conf.display()),
                )
            })?;
            cfg.apply_conf_text(&text, &conf)?;
        }
        Ok(cfg)
    }

    /// SIGHUP (PostgreSQL's ProcessConfigFile): reads the files again and
    /// returns the configuration the server runs with from now on. A value
    /// a file changed since the last read takes effect — over a `-c` value
    /// too, so a standby started with `--primary-conninfo` can be
    /// re-pointed through `ALTER SYSTEM` — if the setting may change
    /// without a restart; a restart-only one keeps its running value and
    /// is listed in `needs_restart` (and stays pending until the files
    /// agree with the running value again). A file that cannot be read or
    /// holds an invalid value changes nothing: the error says why.
    pub fn reload(&self) -> PgResult<Reloaded> {
        let mut fresh = Config::read_files(self.data_dir.clone())?;
        fresh.fold();
        let mut applied = Vec::new();
        let mut needs_restart = Vec::new();
        let mut pending = std::collections::BTreeSet::new();
        let mut next = self.clone();
        next.stamp = next_stamp();
        next.changed.clear();
        let base = Arc::make_mut(&mut next.base);
        let mut files = BTreeMap::new();
        for d in SETTINGS {
            let now = fresh.get(d.name).unwrap_or(d.default).to_string();
            if d.context == Context::Internal {
                // The data directory's, never the files'.
                files.insert(d.name, now);
                continue;
            }
            let before = self.sources.files.get(d.name).map(|s| s.as_str());
            let running = self.get(d.name).unwrap_or(d.default);
            let file_changed = before != Some(now.as_str());
            if file_changed && now != running {
                if d.context == Context::Postmaster {
                    needs_restart.push(d.name);
                } else {
                    base.insert(d.name, now.clone());
                    applied.push((d.name, now.clone()));
                }
            }
            let effective = base.get(d.name).map_or(d.default, |s| s.as_str());
            if d.context == Context::Postmaster
                && now != effective
                && (file_changed || self.sources.pending_restart.contains(d.name))
            {
                pending.insert(d.name);
            }
            files.insert(d.name, now);
        }
        next.sources = Arc::new(Sources {
            files,
            pending_restart: pending,
        });
        Ok(Reloaded {
            config: next,
            applied,
            needs_restart,
        })
    }

    /// Whether a restart-only setting was changed in the files since the
    /// server started (`pg_settings.pending_restart`).
    pub fn pending_restart(&self, name: &str) -> bool {
        find_setting(name).is_some_and(|d| self.sources.pending_restart.contains(d.name))
    }

    /// This copy's own values (a session's `SET`s) over `server`'s: what a
    /// session's configuration becomes after the server's is reloaded.
    pub fn rebased(&self, server: &Config) -> Config {
        Config {
            data_dir: server.data_dir.clone(),
            base: server.base.clone(),
            changed: self.changed.clone(),
            sources: server.sources.clone(),
            stamp: next_stamp(),
        }
    }

    /// Moves the values set on this copy into its shared part, so that
    /// copies made from now on share them too.
    pub fn fold(&mut self) {
        if self.changed.is_empty() {
            return;
        }
        let base = Arc::make_mut(&mut self.base);
        base.append(&mut self.changed);
    }

    /// Applies `name = value` lines (`#` comments, optional quotes).
    pub fn apply_conf_text(&mut self, text: &str, origin: &Path) -> PgResult<()> {
        for (n, raw) in text.lines().enumerate() {
            let line = strip_comment(raw).trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = match line.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => match line.split_once(char::is_whitespace) {
                    Some((k, v)) => (k.trim(), v.trim()),
                    None => {
                        return Err(PgError::new(
                            sqlstate::SYNTAX_ERROR,
                            format!(
                                "syntax error in file \"{}\" line {}",
                                origin.display(),
                                n + 1
                            ),
                        ))
                    }
                },
            };
            self.set(k, unquote(v))?;
        }
        Ok(())
    }

    /// Sets a value after checking the name exists and the value parses.
    pub fn set(&mut self, name: &str, value: &str) -> PgResult<()> {
        let def = find_setting(name).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("unrecognized configuration parameter \"{name}\""),
            )
        })?;
        validate(def, value)?;
        self.changed.insert(def.name, value.to_string());
        self.stamp = next_stamp();
        Ok(())
    }

    /// Equal for two configurations only if they hold the same values
    /// (copies of one another, unchanged since): what a cache of something
    /// derived from settings checks before looking any up again.
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    /// The text value of a setting (as `SHOW` prints it).
    pub fn get(&self, name: &str) -> Option<&str> {
        let def = find_setting(name)?;
        self.changed
            .get(def.name)
            .or_else(|| self.base.get(def.name))
            .map(|s| s.as_str())
    }

    /// All settings, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.base
            .iter()
            .map(|(k, v)| (*k, self.changed.get(k).unwrap_or(v).as_str()))
    }

    fn raw(&self, name: &str) -> &str {
        self.get(name).unwrap_or("")
    }

    /// A boolean setting (`on/off/true/false/yes/no/1/0`).
    pub fn bool(&self, name: &str) -> bool {
        parse_bool(self.raw(name)).unwrap_or(false)
    }

    /// An integer setting in its base unit (pages, MB, ms, s, or plain).
    pub fn int(&self, name: &str) -> i64 {
        let def = find_setting(name);
        match def {
            Some(d) => parse_with_unit(self.raw(name), d.unit).unwrap_or(0),
            None => 0,
        }
    }

    /// A byte size (plain number = bytes; kB/MB/GB accepted).
    pub fn bytes(&self, name: &str) -> u64 {
        parse_bytes(self.raw(name)).unwrap_or(0)
    }

    /// `port`.
    pub fn port(&self) -> u16 {
        self.int("port").clamp(0, 65535) as u16
    }
    /// `max_connections`.
    pub fn max_connections(&self) -> usize {
        self.int("max_connections").max(1) as usize
    }
    /// `max_prepared_transactions`.
    pub fn max_prepared_transactions(&self) -> usize {
        self.int("max_prepared_transactions").max(0) as usize
    }
    /// `shared_buffers` in 8 KiB pages.
    pub fn shared_buffers_pages(&self) -> usize {
        self.int("shared_buffers").max(16) as usize
    }
    /// `max_message_size` in bytes.
    pub fn max_message_size(&self) -> usize {
        self.bytes("max_message_size").clamp(1 << 16, 1 << 30) as usize
    }
}

/// Applies `-c name=value` strings.
fn apply_overrides(cfg: &mut Config, overrides: &[String]) -> PgResult<()> {
    for o in overrides {
        let (k, v) = o.split_once('=').ok_or_else(|| {
            PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("-c {o} requires a value"),
            )
        })?;
        cfg.set(k.trim(), unquote(v.trim()))?;
    }
    Ok(())
}

fn strip_comment(line: &str) -> &str {
    let mut in_quote = false;
    for (i, c) in line.char_indices() {
        match c {
            '\'' => in_quote = !in_quote,
            '#' if !in_quote => return &line[..i],
            _ => {}
        }
    }
    line
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// Parses PostgreSQL's boolean spellings.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" | "t" | "y" => Some(true),
        "off" | "false" | "no" | "0" | "f" | "n" => Some(false),
        _ => None,
    }
}

fn split_num(v: &str) -> Option<(i64, String)> {
    let v = v.trim();
    let end = v
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || (*i == 0 && *c == '-')))
        .map(|(i, _)| i)
        .unwrap_or(v.len());
    let n: i64 = v[..end].parse().ok()?;
    Some((n, v[end..].trim().to_string()))
}

/// Parses `8192`, `64kB`, `16MB`, `1GB` into bytes.
pub fn parse_bytes(v: &str) -> Option<u64> {
    let (n, unit) = split_num(v)?;
    let mult: i64 = match unit.as_str() {
        "" | "B" => 1,
        "kB" | "KB" | "k" => 1 << 10,
        "MB" | "M" => 1 << 20,
        "GB" | "G" => 1 << 30,
        _ => return None,
    };
    u64::try_from(n.checked_mul(mult)?).ok()
}

/// A size in kilobytes, as `work_mem` takes it: a plain number is kB,
/// B / kB / MB / GB are accepted.
pub fn parse_kilobytes(v: &str) -> Option<i64> {
    parse_with_unit(v, Unit::Kilobytes)
}

fn parse_with_unit(v: &str, unit: Unit) -> Option<i64> {
    let (n, u) = split_num(v)?;
    match unit {
        Unit::None => {
            if u.is_empty() {
                Some(n)
            } else {
                None
            }
        }
        Unit::Blocks => {
            if u.is_empty() {
                Some(n)
            } else {
                Some(parse_bytes(v)? as i64 / crate::BLCKSZ as i64)
            }
        }
        Unit::Megabytes => {
            if u.is_empty() {
                Some(n)
            } else {
                Some((parse_bytes(v)? >> 20) as i64)
            }
        }
        Unit::Kilobytes => {
            if u.is_empty() {
                Some(n)
            } else if n < 0 {
                None
            } else {
                Some((parse_bytes(v)? >> 10) as i64)
            }
        }
        Unit::Minutes => match u.as_str() {
            "" | "min" => Some(n),
            "s" => Some(n / 60),
            "h" => n.checked_mul(60),
            "d" => n.checked_mul(1440),
            _ => None,
        },
        Unit::Milliseconds | Unit::Seconds => {
            let ms: i64 = match u.as_str() {
                "" => return Some(n),
                "us" => {
                    return Some(if unit == Unit::Milliseconds {
                        n / 1000
                    } else {
                        n / 1_000_000
                    })
                }
                "ms" => n,
                "s" => n.checked_mul(1000)?,
                "min" => n.checked_mul(60_000)?,
                "h" => n.checked_mul(3_600_000)?,
                "d" => n.checked_mul(86_400_000)?,
                _ => return None,
            };
            Some(if unit == Unit::Milliseconds {
                ms
            } else {
                ms / 1000
            })
        }
    }
}

/// A boolean setting (default `on` or `off`; `synchronous_commit` has
/// more values).
pub fn is_bool_setting(def: &SettingDef) -> bool {
    matches!(def.default, "on" | "off") && def.name != "synchronous_commit"
}

fn validate(def: &SettingDef, value: &str) -> PgResult<()> {
    let bad = || {
        PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!(
                "invalid value for parameter \"{}\": \"{}\"",
                def.name, value
            ),
        )
    };
    if is_bool_setting(def) {
        return parse_bool(value).map(|_| ()).ok_or_else(|| {
            PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("parameter \"{}\" requires a Boolean value", def.name),
            )
        });
    }
    match def.name {
        "synchronous_commit" => match value.to_ascii_lowercase().as_str() {
            "on" | "off" | "local" | "remote_write" | "remote_apply" | "true" | "false" | "yes"
            | "no" | "1" | "0" => Ok(()),
            _ => Err(bad().with_hint("Available values: local, remote_write, remote_apply, on, off.")),
        },
        "synchronous_standby_names" => {
            use crate::syncrep_gram::{parse_sync_standby_names, SyncRepParseError};
            match parse_sync_standby_names(value) {
                Ok(_) => Ok(()),
                Err(SyncRepParseError::Syntax(detail)) => Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!(
                        "invalid value for parameter \"{}\": \"{}\"",
                        def.name, value
                    ),
                )
                .with_detail(detail)),
                Err(SyncRepParseError::NumSync(msg)) => {
                    Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg))
                }
            }
        }
        "recovery_target_timeline" => match value.to_ascii_lowercase().as_str() {
            "latest" | "current" => Ok(()),
            v => match v.parse::<u32>() {
                Ok(n) if n > 0 => Ok(()),
                _ => Err(bad().with_detail("recovery_target_timeline is not a valid number.")),
            },
        },
        "ssl_min_protocol_version" => match value {
            "TLSv1.2" | "TLSv1.3" => Ok(()),
            _ => Err(bad().with_hint("Available values: TLSv1.2, TLSv1.3.")),
        },
        "ssl_max_protocol_version" => match value {
            "" | "TLSv1.2" | "TLSv1.3" => Ok(()),
            _ => Err(bad().with_hint("Available values: , TLSv1.2, TLSv1.3.")),
        },
        "relation_extension" => match value {
            "bulk" | "single" => Ok(()),
            _ => Err(bad()),
        },
        "default_table_access_method" => match value.trim() {
            "heap" => Ok(()),
            other => Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("invalid value for parameter \"default_table_access_method\": \"{other}\""),
            )
            .with_detail(format!("Table access method \"{other}\" does not exist."))),
        },
        "default_toast_compression" => match value.trim().to_ascii_lowercase().as_str() {
            "lz4" => Ok(()),
            _ => Err(bad().with_hint("Available values: lz4.")),
        },
        "max_message_size" | "wal_segment_size" => parse_bytes(value).map(|_| ()).ok_or_else(bad),
        "hash_mem_multiplier" => match value.trim().parse::<f64>() {
            Ok(m) if (1.0..=1000.0).contains(&m) => Ok(()),
            Ok(m) if m.is_finite() => Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("{} is outside the valid range for parameter \"hash_mem_multiplier\" (1 .. 1000)", value.trim()),
            )),
            _ => Err(bad()),
        },
        "work_mem" | "maintenance_work_mem" | "temp_file_limit" | "log_temp_files" => {
            let min = match def.name {
                "work_mem" => 64,
                "maintenance_work_mem" => 1024,
                _ => -1,
            };
            match parse_kilobytes(value) {
                Some(n) if (min..=i64::from(i32::MAX)).contains(&n) => Ok(()),
                Some(n) => Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!(
                        "{n} kB is outside the valid range for parameter \"{}\" ({min} .. 2147483647)",
                        def.name
                    ),
                )),
                None => Err(bad()),
            }
        }
        "max_parallel_workers_per_gather" => match value.trim().parse::<i64>() {
            Ok(n) if (0..=1024).contains(&n) => Ok(()),
            Ok(n) => Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!(
                    "{n} is outside the valid range for parameter \"max_parallel_workers_per_gather\" (0 .. 1024)"
                ),
            )),
            Err(_) => Err(bad()),
        },
        "default_statistics_target" => match value.trim().parse::<i64>() {
            Ok(n) if (1..=10_000).contains(&n) => Ok(()),
            Ok(n) => Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!(
                    "{n} is outside the valid range for parameter \"default_statistics_target\" (1 .. 10000)"
                ),
            )),
            Err(_) => Err(bad()),
        },
        "old_snapshot_threshold" => match parse_with_unit(value, Unit::Minutes) {
            Some(n) if (-1..=86_400).contains(&n) => Ok(()),
            Some(n) => Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!(
                    "{n} min is outside the valid range for parameter \"old_snapshot_threshold\" (-1 min .. 86400 min)"
                ),
            )),
            None => Err(bad()),
        },
        "tcp_keepalives_idle"
        | "tcp_keepalives_interval"
        | "tcp_keepalives_count"
        | "tcp_user_timeout" => match parse_with_unit(value, def.unit) {
            Some(n) if (0..=i64::from(i32::MAX)).contains(&n) => Ok(()),
            Some(n) => {
                let unit = match def.unit {
                    Unit::Seconds => " s",
                    Unit::Milliseconds => " ms",
                    _ => "",
                };
                Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!(
                        "{n}{unit} is outside the valid range for parameter \"{}\" (0 .. 2147483647)",
                        def.name
                    ),
                ))
            }
            None => Err(bad()),
        },
        "park_idle_sessions_above" => match value.trim().parse::<i64>() {
            Ok(n) if (-1..=i64::from(i32::MAX)).contains(&n) => Ok(()),
            Ok(n) => Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("{n} is outside the valid range for parameter \"park_idle_sessions_above\" (-1 .. 2147483647)"),
            )),
            Err(_) => Err(bad()),
        },
        "session_cores" => match value.trim().parse::<u32>() {
            Ok(n) if n <= 1024 => Ok(()),
            _ => Err(bad()),
        },
        _ => {
            if def.unit != Unit::None
                || def.default.chars().all(|c| c.is_ascii_digit()) && !def.default.is_empty()
            {
                parse_with_unit(value, def.unit).map(|_| ()).ok_or_else(bad)
            } else {
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_setting_finds_every_name_in_any_case() {
        for d in SETTINGS {
            for n in [
                d.name.to_string(),
                d.name.to_ascii_uppercase(),
                d.name.to_ascii_lowercase(),
            ] {
                assert_eq!(find_setting(&n).map(|f| f.name), Some(d.name), "{n}");
            }
            let same = SETTINGS
                .iter()
                .filter(|o| o.name.eq_ignore_ascii_case(d.name))
                .count();
            assert_eq!(same, 1, "{} is defined once", d.name);
        }
        for n in ["", "no_such_setting", "work_mem_", "zzz", "\u{e9}t\u{e9}"] {
            assert!(find_setting(n).is_none(), "{n}");
        }
    }

    #[test]
    fn stamps_name_values() {
        let mut a = Config::new("/tmp");
        let b = a.clone();
        assert_eq!(a.stamp(), b.stamp(), "a copy holds the same values");
        a.set("role", "alice").unwrap();
        assert_ne!(a.stamp(), b.stamp());
        // Two copies of one configuration changed differently never share
        // a stamp, even after a copy of the original comes back.
        let mut c = b.clone();
        c.set("role", "bob").unwrap();
        assert_ne!(a.stamp(), c.stamp());
        assert_ne!(b.stamp(), c.stamp());
        let before = c.stamp();
        assert!(c.set("no_such_setting", "1").is_err());
        assert_eq!(c.stamp(), before, "a refused set changes nothing");
        assert_ne!(a.rebased(&b).stamp(), a.stamp());
    }

    #[test]
    fn copies_share_values_and_keep_their_own_sets() {
        let mut server = Config::new("/tmp/x");
        server.set("work_mem", "8MB").unwrap();
        server.fold();
        let mut session = server.clone();
        assert!(
            Arc::ptr_eq(&server.base, &session.base),
            "a copy shares the values"
        );
        session.set("work_mem", "1MB").unwrap();
        assert_eq!(session.get("work_mem"), Some("1MB"));
        assert_eq!(
            server.get("work_mem"),
            Some("8MB"),
            "the server's value is untouched"
        );
        let listed: Vec<_> = session.iter().filter(|(k, _)| *k == "work_mem").collect();
        assert_eq!(
            listed,
            vec![("work_mem", "1MB")],
            "iter shows the copy's value"
        );
        assert_eq!(
            session.iter().count(),
            SETTINGS.len(),
            "every setting listed once"
        );
    }

    #[test]
    fn old_snapshot_threshold_in_minutes() {
        let mut c = Config::new("/tmp/x");
        assert_eq!(c.int("old_snapshot_threshold"), -1, "off by default");
        for (v, min) in [
            ("0", 0),
            ("10", 10),
            ("10min", 10),
            ("2h", 120),
            ("1d", 1440),
            ("-1", -1),
        ] {
            c.set("old_snapshot_threshold", v).unwrap();
            assert_eq!(c.int("old_snapshot_threshold"), min, "{v}");
        }
        for v in ["-2", "86401", "10ms", "ten"] {
            let e = c.set("old_snapshot_threshold", v).unwrap_err();
            assert_eq!(e.code, sqlstate::INVALID_PARAMETER_VALUE, "{v}");
        }
    }

    #[test]
    fn units_parse() {
        let mut c = Config::new("/tmp/x");
        assert_eq!(c.shared_buffers_pages(), 128 * 1024 / 8);
        c.set("shared_buffers", "1MB").unwrap();
        assert_eq!(c.shared_buffers_pages(), 128);
        c.set("shared_buffers", "300").unwrap();
        assert_eq!(c.shared_buffers_pages(), 300);
        c.set("checkpoint_timeout", "30s").unwrap();
        assert_eq!(c.int("checkpoint_timeout"), 30);
        c.set("deadlock_timeout", "2s").unwrap();
        assert_eq!(c.int("deadlock_timeout"), 2000);
        assert!(c.set("fsync", "maybe").is_err());
        assert!(c.set("no_such_thing", "1").is_err());
        assert!(c.set("max_connections", "lots").is_err());
    }

    #[test]
    fn conf_file_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("hotpair.conf"),
            "port = 6000 # comment\nfsync='off'\n",
        )
        .unwrap();
        let c = Config::load(dir.path(), &["port=7000".into()]).unwrap();
        assert_eq!(c.port(), 7000);
        assert!(!c.bool("fsync"));
    }

    /// Reload: a sighup setting the file changed applies (over a `-c`
    /// value too); a restart-only one stays and is pending until the file
    /// agrees again; an invalid file changes nothing; a session copy keeps
    /// what it SET and follows the rest.
    #[test]
    fn reload_rules() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("hotpair.conf");
        std::fs::write(
            &conf,
            "wal_keep_size = 16
",
        )
        .unwrap();
        let c = Config::load(dir.path(), &["primary_conninfo=host=a".into()]).unwrap();
        let mut session = c.clone();
        session.set("work_mem", "1MB").unwrap();

        std::fs::write(
            &conf,
            "wal_keep_size = 16
port = 6000
work_mem = 8MB
",
        )
        .unwrap();
        let r = c.reload().unwrap();
        assert_eq!(r.applied, vec![("work_mem", "8MB".to_string())]);
        assert_eq!(r.needs_restart, vec!["port"]);
        assert_eq!(r.config.port(), 5432);
        assert!(r.config.pending_restart("port"));
        assert_eq!(r.config.get("primary_conninfo"), Some("host=a"));
        let s = session.rebased(&r.config);
        assert_eq!(s.get("work_mem"), Some("1MB"));
        assert_eq!(c.clone().rebased(&r.config).get("work_mem"), Some("8MB"));

        // The file now names primary_conninfo: it wins over `-c`.
        std::fs::write(
            &conf,
            "wal_keep_size = 16
primary_conninfo = 'host=b'
",
        )
        .unwrap();
        let r = r.config.reload().unwrap();
        assert_eq!(r.config.get("primary_conninfo"), Some("host=b"));
        assert!(!r.config.pending_restart("port"), "the file agrees again");
        assert_eq!(r.config.get("work_mem"), Some("4MB"), "removed: default");

        std::fs::write(
            &conf,
            "wal_keep_size = 32
work_mem = banana
",
        )
        .unwrap();
        assert!(r.config.reload().is_err());
    }
}

#[cfg(test)]
mod doc_tests {
    /// docs/operations.md lists every setting with its default: the guide
    /// cannot drift from the one table of defaults.
    #[test]
    fn operations_guide_lists_every_setting() {
        let guide = include_str!("../../../docs/operations.md");
        for s in super::SETTINGS {
            let row = format!("| `{}` | `{}` |", s.name, s.default.replace('\\', ""));
            assert!(guide.contains(&row), "docs/operations.md lacks {row}");
        }
    }
}
