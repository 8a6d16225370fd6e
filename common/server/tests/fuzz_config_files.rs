//! Property-based fuzzing of the configuration-file parsers (issue 21
//! item 7): `pg_hba.conf`, `pg_ident.conf` and `hotpair.conf` text, random
//! or mutated from valid files, is answered with rules or errors, never a
//! panic — a reload with a broken file must leave the server running.

use proptest::prelude::*;

const HBA: &str = "# comment\n\
local   all             all                                     trust\n\
host    all             all             127.0.0.1/32            scram-sha-256\n\
host    \"db one\",db2  +admins,@users  ::1/128                 md5\n\
hostssl replication     repl            10.0.0.0/8              cert clientcert=verify-full map=m\n\
hostnossl all           all             samenet                 reject\n\
host    all             all             192.168.1.0 255.255.255.0 password\n\
include_if_exists other.conf\n";

const IDENT: &str = "# MAPNAME SYSTEM-USERNAME PG-USERNAME\n\
m   alice   alice\n\
m   /^(.*)@example\\.com$   \\1\n\
m   \"quoted user\"   +group\n";

const CONF: &str = "port = 5433\n\
shared_buffers = '128MB'   # comment\n\
work_mem = 4MB\n\
search_path = '\"$user\", public'\n\
synchronous_standby_names = 'ANY 2 (s1, \"s 2\", s3)'\n\
log_min_messages = warning\n\
include 'other.conf'\n";

fn mutate(base: &str, edits: &[(u8, u16, u8)]) -> String {
    let mut b = base.as_bytes().to_vec();
    for &(op, at, byte) in edits {
        if b.is_empty() {
            b.push(byte);
            continue;
        }
        let i = at as usize % b.len();
        match op % 4 {
            0 => {
                b.remove(i);
            }
            1 => b.insert(i, byte),
            2 => b[i] = byte,
            _ => b.truncate(i),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn edits() -> impl Strategy<Value = Vec<(u8, u16, u8)>> {
    prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 1..8)
}

/// `PROPTEST_CASES` when set (a longer hunt), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(5000)))]

    #[test]
    fn hba_never_panics(e in edits(), text in ".{0,80}") {
        let _ = server::hba::HbaRules::parse(&mutate(HBA, &e));
        let _ = server::hba::HbaRules::parse(&text);
        let _ = server::hba::parse_rows(&mutate(HBA, &e));
    }

    #[test]
    fn ident_never_panics(e in edits(), text in ".{0,80}") {
        let _ = server::ident::IdentMaps::parse(&mutate(IDENT, &e));
        let _ = server::ident::IdentMaps::parse(&text);
    }

    #[test]
    fn conf_never_panics(e in edits(), text in ".{0,80}") {
        let dir = std::env::temp_dir();
        let mut c = pgtypes::config::Config::new(&dir);
        let _ = c.apply_conf_text(&mutate(CONF, &e), &dir.join("hotpair.conf"));
        let _ = c.apply_conf_text(&text, &dir.join("hotpair.conf"));
    }
}
