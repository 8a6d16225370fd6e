-- alter_column_type: ALTER TABLE … ALTER COLUMN … [SET DATA] TYPE …
-- [USING …] rewrites the table: conversions, typmods, defaults, CHECKs,
-- indexes, foreign keys, views, identity columns, rollback; the standby
-- then reads the rewritten tables through their new indexes.
CREATE TABLE act_t (id int PRIMARY KEY, b text DEFAULT 'x', c varchar(10) DEFAULT 'abc', n numeric(8,2) DEFAULT 1.5, i int DEFAULT 3);
INSERT INTO act_t VALUES (1, '10', 'hello', 1.25, 1), (2, '20', 'worldwide!', 2.5, 2), (3, NULL, NULL, NULL, NULL);
CREATE INDEX act_t_b ON act_t (b);
CREATE INDEX act_t_ci ON act_t (c, i);
-- no assignment cast: USING is needed
ALTER TABLE act_t ALTER b TYPE int;
ALTER TABLE act_t ALTER COLUMN i TYPE boolean;
-- the default does not cast
ALTER TABLE act_t ALTER b TYPE int USING b::int;
ALTER TABLE act_t ALTER i TYPE date USING NULL;
-- result of USING does not cast
ALTER TABLE act_t ALTER i TYPE int USING b;
-- typmods: varchar length, numeric precision
ALTER TABLE act_t ALTER c TYPE varchar(5);
ALTER TABLE act_t ALTER n TYPE numeric(2,1);
ALTER TABLE act_t ALTER n TYPE numeric(3,1);
ALTER TABLE act_t ALTER c TYPE varchar(20), ALTER i TYPE bigint;
ALTER TABLE act_t ALTER b SET DATA TYPE text USING 'z' || b;
SELECT * FROM act_t ORDER BY id;
\d act_t
-- the indexes serve the new types
SELECT id FROM act_t WHERE b = 'z20';
SELECT id FROM act_t WHERE c = 'hello' AND i = 1;
SELECT id FROM act_t WHERE id = 2;
INSERT INTO act_t VALUES (4, 'z40', 'four', 4.4, 4000000000);
SELECT * FROM act_t WHERE i = 4000000000;
INSERT INTO act_t VALUES (4, 'dup', 'dup', 1, 1);
-- int -> bigint, int -> text, text -> int with USING
ALTER TABLE act_t ALTER n TYPE int;
ALTER TABLE act_t ALTER id TYPE bigint;
ALTER TABLE act_t ALTER n TYPE text;
SELECT id, n, pg_typeof(n) AS t FROM act_t ORDER BY id;
ALTER TABLE act_t ALTER n TYPE int USING n::int + 1;
SELECT id, n FROM act_t WHERE n = 5;
-- conversion errors
CREATE TABLE act_u (x text DEFAULT '0');
INSERT INTO act_u VALUES ('5'), ('six');
ALTER TABLE act_u ALTER x TYPE int USING x::int;
ALTER TABLE act_u ALTER x DROP DEFAULT;
ALTER TABLE act_u ALTER x TYPE int USING x::int;
ALTER TABLE act_u ALTER x TYPE int USING 'q';
ALTER TABLE act_u ALTER nosuch TYPE int;
ALTER TABLE act_u ALTER x TYPE nosuchtype;
DELETE FROM act_u WHERE x = 'six';
ALTER TABLE act_u ALTER x TYPE int USING x::int;
SELECT x, pg_typeof(x) FROM act_u;
-- CHECK, NOT NULL and UNIQUE hold on the new values
CREATE TABLE act_w (k int UNIQUE, v int CHECK (v > 0), e int);
CREATE INDEX act_w_expr ON act_w ((k * 10)) WHERE v > 1;
INSERT INTO act_w VALUES (1, 1, 1), (2, 2, 2), (3, 3, NULL);
ALTER TABLE act_w ALTER k TYPE int USING 5;
ALTER TABLE act_w ALTER v TYPE int USING v - 2;
ALTER TABLE act_w ALTER v TYPE text;
ALTER TABLE act_w ALTER e SET NOT NULL;
ALTER TABLE act_w ALTER e TYPE bigint USING coalesce(e, 0);
ALTER TABLE act_w ALTER e SET NOT NULL;
ALTER TABLE act_w ALTER e TYPE int USING NULL;
ALTER TABLE act_w ALTER k TYPE bigint USING k + 10;
SELECT * FROM act_w ORDER BY k;
SELECT k FROM act_w WHERE k = 12;
SELECT k FROM act_w WHERE k * 10 = 130 AND v > 1;
INSERT INTO act_w VALUES (12, 5, 0);
\d act_w
-- a view reading the column: refused
CREATE VIEW act_wv AS SELECT k FROM act_w;
ALTER TABLE act_w ALTER k TYPE int;
ALTER TABLE act_w ALTER v TYPE bigint, ALTER k TYPE int;
ALTER TABLE act_w ALTER v TYPE bigint;
DROP VIEW act_wv;
-- foreign keys: compatible types keep the key, others are refused
CREATE TABLE act_p (id int PRIMARY KEY);
CREATE TABLE act_c (pid int REFERENCES act_p);
INSERT INTO act_p VALUES (1), (2);
INSERT INTO act_c VALUES (1), (2);
ALTER TABLE act_p ALTER id TYPE bigint;
ALTER TABLE act_c ALTER pid TYPE text;
ALTER TABLE act_p ALTER id TYPE text;
ALTER TABLE act_c ALTER pid TYPE bigint USING pid + 5;
ALTER TABLE act_c ALTER pid TYPE bigint;
INSERT INTO act_c VALUES (3);
DELETE FROM act_p WHERE id = 1;
\d act_c
-- identity and serial columns
CREATE TABLE act_idt (id int GENERATED ALWAYS AS IDENTITY, v int);
INSERT INTO act_idt (v) VALUES (10), (20);
ALTER TABLE act_idt ALTER id TYPE text;
ALTER TABLE act_idt ALTER id TYPE bigint;
SELECT data_type, max_value FROM pg_sequences WHERE sequencename = 'act_idt_id_seq';
INSERT INTO act_idt (v) VALUES (30);
SELECT * FROM act_idt ORDER BY id;
\d act_idt
CREATE TABLE act_sr (id serial, v text);
INSERT INTO act_sr (v) VALUES ('a');
ALTER TABLE act_sr ALTER id TYPE bigint;
SELECT data_type, max_value FROM pg_sequences WHERE sequencename = 'act_sr_id_seq';
INSERT INTO act_sr (v) VALUES ('b');
SELECT * FROM act_sr ORDER BY id;
-- transactional: ROLLBACK brings back the type, the values and the indexes
CREATE TABLE act_r (id int PRIMARY KEY, v text);
INSERT INTO act_r SELECT g, 'v' || g FROM generate_series(1, 50) g;
BEGIN;
ALTER TABLE act_r ALTER id TYPE text USING 'k' || id;
SELECT id FROM act_r WHERE id = 'k7';
INSERT INTO act_r VALUES ('k7', 'dup');
ROLLBACK;
SELECT * FROM act_r WHERE id = 7;
INSERT INTO act_r VALUES (7, 'dup');
SELECT pg_typeof(id) FROM act_r LIMIT 1;
BEGIN;
ALTER TABLE act_r ALTER id TYPE bigint;
SAVEPOINT s;
ALTER TABLE act_r ALTER v TYPE varchar(3);
ALTER TABLE act_r ALTER v TYPE varchar(5);
SELECT v FROM act_r WHERE id = 3;
ROLLBACK TO s;
ALTER TABLE act_r ALTER v TYPE varchar(10);
COMMIT;
SELECT id, v FROM act_r WHERE id = 42;
\d act_r
SELECT attname, atttypid::regtype, atttypmod FROM pg_attribute WHERE attrelid = 'act_r'::regclass AND attnum > 0 ORDER BY attnum;
SELECT column_name, data_type, character_maximum_length FROM information_schema.columns WHERE table_name = 'act_r' ORDER BY ordinal_position;
-- several actions in one statement
CREATE TABLE act_z (a int, b text);
INSERT INTO act_z VALUES (1, 'one');
ALTER TABLE act_z ALTER a TYPE bigint, ALTER a TYPE int;
ALTER TABLE act_z ADD COLUMN c int, ALTER a TYPE bigint USING a + 1, ALTER c SET DEFAULT 5;
INSERT INTO act_z (a, b) VALUES (7, 'seven');
SELECT * FROM act_z ORDER BY a;
\d act_z
-- dropped columns, missing values and TOAST-ed values survive the rewrite
CREATE TABLE act_m (a int, b int, c int, big text);
INSERT INTO act_m VALUES (1, 2, 3, repeat('x', 100000));
ALTER TABLE act_m DROP COLUMN b;
ALTER TABLE act_m ADD COLUMN d text DEFAULT 'dd';
ALTER TABLE act_m ALTER a TYPE text;
INSERT INTO act_m VALUES ('y', 4, 'small');
SELECT a, c, length(big), d FROM act_m ORDER BY a;
-- a table created in the same transaction
BEGIN;
CREATE TABLE act_n (a int PRIMARY KEY);
INSERT INTO act_n VALUES (1), (2);
ALTER TABLE act_n ALTER a TYPE bigint;
SAVEPOINT q;
ALTER TABLE act_n ALTER a TYPE text;
ROLLBACK TO q;
SELECT a, pg_typeof(a) FROM act_n WHERE a = 2;
COMMIT;
INSERT INTO act_n VALUES (2);
SELECT a, pg_typeof(a) FROM act_n WHERE a = 1;
BEGIN;
CREATE TABLE act_o (a int);
ALTER TABLE act_o ALTER a TYPE text;
ROLLBACK;
SELECT count(*) FROM pg_class WHERE relname = 'act_o';
-- @@ read-only
SELECT * FROM act_t ORDER BY id;
SELECT id FROM act_t WHERE b = 'z20';
SELECT * FROM act_t WHERE i = 4000000000;
SELECT * FROM act_w ORDER BY k;
SELECT k FROM act_w WHERE k = 12;
SELECT * FROM act_c ORDER BY pid;
SELECT id, v FROM act_r WHERE id = 42;
SELECT count(*) FROM act_r;
\d act_t
\d act_r
SELECT a, c, length(big), d FROM act_m ORDER BY a;
SELECT a, pg_typeof(a) FROM act_n WHERE a = 1;
