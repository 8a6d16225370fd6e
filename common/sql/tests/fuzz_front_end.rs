//! Property-based fuzzing of the SQL front end (issue 21 item 7): the
//! parsers (sqlparser plus the hand parsers for what it lacks) and the
//! statement classifier must answer every input with a statement or an
//! error, never a panic. Inputs: random text over SQL's alphabet, and
//! valid statements from the golden suite's kind mutated byte by byte
//! (deleted, inserted, replaced, truncated, duplicated), which reach deep
//! into each grammar before breaking it.

use proptest::prelude::*;

/// Valid statements of every kind the hand parsers and sqlparser take.
const CORPUS: &[&str] = &[
    "SELECT a, count(*) FROM t JOIN u USING (id) WHERE b IN (SELECT c FROM v) GROUP BY a HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 5",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT sum(n) OVER (ORDER BY n ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM r",
    "INSERT INTO t (a, b) VALUES (1, 'x'), (2, E'\\n') ON CONFLICT (a) DO UPDATE SET b = excluded.b RETURNING *",
    "UPDATE t SET b = b || '!' FROM u WHERE t.id = u.id AND u.flag",
    "DELETE FROM t USING u WHERE t.id = u.id RETURNING t.*",
    "CREATE TABLE s.t (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v numeric(10,2) DEFAULT 0 CHECK (v >= 0), r int REFERENCES u (id) ON DELETE CASCADE)",
    "ALTER TABLE t ADD COLUMN c text NOT NULL DEFAULT 'd', ALTER COLUMN v TYPE bigint USING v::bigint",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS ix ON t (lower(b), a DESC NULLS LAST) WHERE a > 0",
    "CREATE SEQUENCE seq INCREMENT BY 2 MINVALUE 1 MAXVALUE 100 START WITH 3 CACHE 1 CYCLE OWNED BY t.a",
    "ALTER SEQUENCE seq RESTART WITH 10",
    "CREATE VIEW v AS SELECT a FROM t WHERE b IS NOT NULL",
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
    "ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok'",
    "CREATE SCHEMA IF NOT EXISTS s AUTHORIZATION alice",
    "GRANT SELECT (a, b), UPDATE ON TABLE t TO bob WITH GRANT OPTION",
    "REVOKE GRANT OPTION FOR ALL PRIVILEGES ON ALL TABLES IN SCHEMA public FROM PUBLIC CASCADE",
    "ALTER DEFAULT PRIVILEGES FOR ROLE alice IN SCHEMA s GRANT SELECT ON TABLES TO bob",
    "CREATE ROLE r WITH LOGIN PASSWORD 'secret' CONNECTION LIMIT 5 VALID UNTIL '2030-01-01'",
    "ALTER ROLE r WITH NOLOGIN CONNECTION LIMIT 2",
    "COMMENT ON COLUMN t.a IS 'the key'",
    "COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER true, DELIMITER ';')",
    "COPY (SELECT * FROM t) TO STDOUT",
    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    "SAVEPOINT s1; ROLLBACK TO SAVEPOINT s1; RELEASE s1",
    "PREPARE TRANSACTION 'gid-1'",
    "COMMIT PREPARED 'gid-1'",
    "PREPARE q (int, text) AS SELECT $1, $2",
    "EXECUTE q (1, 'a')",
    "EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM t",
    "SET LOCAL statement_timeout = '5s'",
    "SHOW transaction_isolation",
    "ALTER SYSTEM SET work_mem = '8MB'",
    "VACUUM (VERBOSE) t",
    "TRUNCATE t, u RESTART IDENTITY CASCADE",
    "SELECT '{1,2,3}'::int[] @> ARRAY[2], '[1,2)'::text, $$dollar 'quoted'$$, U&'\\0041'",
    "SELECT CASE WHEN a BETWEEN 1 AND 2 THEN 'x' ELSE NULL END, a::regclass, EXTRACT(epoch FROM now())",
    "DROP TABLE IF EXISTS t, u CASCADE",
];

fn mutate(base: &str, edits: &[(u8, u16, u8)]) -> String {
    let mut b = base.as_bytes().to_vec();
    for &(op, at, byte) in edits {
        if b.is_empty() {
            b.push(byte);
            continue;
        }
        let i = at as usize % b.len();
        match op % 5 {
            0 => {
                b.remove(i);
            }
            1 => b.insert(i, byte),
            2 => b[i] = byte,
            3 => b.truncate(i),
            _ => {
                let tail = b[i..].to_vec();
                b.extend_from_slice(&tail);
            }
        }
    }
    // The server receives text already checked as UTF-8 (the protocol
    // layer refuses invalid bytes); keep what survives the edits.
    String::from_utf8_lossy(&b).into_owned()
}

fn sqlish() -> impl Strategy<Value = String> {
    proptest::string::string_regex(
        "[a-zA-Z0-9_ ,;()'\"$:*+\\-/<>=!.\\[\\]{}|&%^~@#?\\\\\\nÅé€]{0,120}",
    )
    .expect("regex")
}

/// `PROPTEST_CASES` when set (a longer hunt), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(20000)))]

    #[test]
    fn random_text_never_panics(text in sqlish()) {
        let _ = sql::parser::parse_query(&text);
        let _ = sql::parser::parse_expr_text(&text);
    }

    #[test]
    fn mutated_statements_never_panic(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 1..6),
    ) {
        let base = CORPUS[pick.index(CORPUS.len())];
        let text = mutate(base, &edits);
        let _ = sql::parser::parse_query(&text);
    }
}

/// The corpus itself parses: the mutations start from valid statements.
#[test]
fn corpus_parses() {
    for s in CORPUS {
        sql::parser::parse_query(s).unwrap_or_else(|e| panic!("{s}: {}", e.message));
    }
}
