-- foreign_keys: FOREIGN KEY constraints — enforcement on both sides, the
-- referential actions, deferred checks, ALTER TABLE, DROP / TRUNCATE
-- rules, and how psql and the catalogs show them; the standby then reads
-- the tables and the catalog.
CREATE TABLE fk_p (id int PRIMARY KEY, name text);
CREATE TABLE fk_c (cid serial PRIMARY KEY, pid int REFERENCES fk_p, note text);
INSERT INTO fk_p VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO fk_c (pid, note) VALUES (1, 'a'), (1, 'b'), (2, 'c'), (NULL, 'null ok');
-- the referencing side
INSERT INTO fk_c (pid, note) VALUES (9, 'bad');
UPDATE fk_c SET pid = 8 WHERE note = 'a';
UPDATE fk_c SET note = 'a2' WHERE note = 'a';
-- the referenced side (NO ACTION)
DELETE FROM fk_p WHERE id = 1;
UPDATE fk_p SET id = 10 WHERE id = 2;
UPDATE fk_p SET name = 'TWO' WHERE id = 2;
DELETE FROM fk_p WHERE id = 3;
SELECT * FROM fk_c ORDER BY cid;
-- a statement is checked at its end
INSERT INTO fk_p VALUES (4, 'four');
INSERT INTO fk_c (pid, note) SELECT 4, 'select';
UPDATE fk_p SET id = CASE id WHEN 4 THEN 40 ELSE 4 END WHERE id IN (4, 40);
INSERT INTO fk_p VALUES (40, 'forty');
UPDATE fk_p SET id = CASE id WHEN 4 THEN 40 ELSE 4 END WHERE id IN (4, 40);
DELETE FROM fk_p WHERE id = 40;
-- CASCADE
CREATE TABLE fk_cc (id int PRIMARY KEY, pid int REFERENCES fk_p (id) ON DELETE CASCADE ON UPDATE CASCADE);
INSERT INTO fk_cc VALUES (1, 1), (2, 2), (3, 4);
DELETE FROM fk_c;
DELETE FROM fk_p WHERE id = 1;
UPDATE fk_p SET id = 20 WHERE id = 2;
SELECT * FROM fk_cc ORDER BY id;
-- SET NULL / SET DEFAULT
CREATE TABLE fk_sn (id int PRIMARY KEY, pid int DEFAULT 20 REFERENCES fk_p ON DELETE SET NULL ON UPDATE SET DEFAULT);
INSERT INTO fk_sn VALUES (1, 20);
INSERT INTO fk_p VALUES (5, 'five');
INSERT INTO fk_sn VALUES (2, 5);
UPDATE fk_p SET id = 6 WHERE id = 5;
SELECT * FROM fk_sn ORDER BY id;
DELETE FROM fk_p WHERE id = 20;
SELECT * FROM fk_sn ORDER BY id;
SELECT * FROM fk_cc ORDER BY id;
-- RESTRICT
CREATE TABLE fk_r (id int PRIMARY KEY, pid int REFERENCES fk_p ON DELETE RESTRICT);
INSERT INTO fk_r VALUES (1, 4);
DELETE FROM fk_p WHERE id = 4;
-- composite keys, MATCH SIMPLE
CREATE TABLE fk_k (a int, b text, PRIMARY KEY (a, b));
CREATE TABLE fk_kc (x int, y text, CONSTRAINT fk_kc_xy FOREIGN KEY (x, y) REFERENCES fk_k (a, b) ON DELETE CASCADE);
INSERT INTO fk_k VALUES (1, 'a'), (2, 'b');
INSERT INTO fk_kc VALUES (1, 'a'), (2, 'b'), (3, NULL), (NULL, 'zz');
INSERT INTO fk_kc VALUES (1, 'b');
DELETE FROM fk_k WHERE a = 2;
SELECT * FROM fk_kc ORDER BY x, y;
-- DROP and TRUNCATE of a referenced table
DROP TABLE fk_p;
TRUNCATE fk_p;
BEGIN;
DROP TABLE fk_p CASCADE;
\d fk_cc
ROLLBACK;
BEGIN;
TRUNCATE fk_k CASCADE;
SELECT count(*) FROM fk_kc;
ROLLBACK;
-- deferred checks
CREATE TABLE fk_d (id int PRIMARY KEY, pid int REFERENCES fk_p DEFERRABLE INITIALLY DEFERRED);
BEGIN;
INSERT INTO fk_d VALUES (1, 100);
INSERT INTO fk_p VALUES (100, 'hundred');
COMMIT;
BEGIN;
INSERT INTO fk_d VALUES (2, 200);
COMMIT;
BEGIN;
SAVEPOINT s;
INSERT INTO fk_d VALUES (3, 300);
ROLLBACK TO s;
COMMIT;
SELECT * FROM fk_d ORDER BY id;
-- SET CONSTRAINTS
SET CONSTRAINTS ALL DEFERRED;
BEGIN;
SET CONSTRAINTS fk_d_pid_fkey IMMEDIATE;
INSERT INTO fk_d VALUES (4, 400);
ROLLBACK;
BEGIN;
INSERT INTO fk_d VALUES (5, 500);
SET CONSTRAINTS ALL IMMEDIATE;
ROLLBACK;
BEGIN;
SET CONSTRAINTS fk_c_pid_fkey DEFERRED;
ROLLBACK;
BEGIN;
SET CONSTRAINTS fk_nosuch DEFERRED;
ROLLBACK;
-- a key to its own table
CREATE TABLE fk_self (id int PRIMARY KEY, parent int REFERENCES fk_self);
INSERT INTO fk_self VALUES (1, NULL), (2, 1), (3, 2);
INSERT INTO fk_self VALUES (4, 7);
DELETE FROM fk_self WHERE id = 1;
-- ALTER TABLE … ADD / DROP CONSTRAINT … FOREIGN KEY
ALTER TABLE fk_cc ADD CONSTRAINT fk_cc_x FOREIGN KEY (id) REFERENCES fk_self;
ALTER TABLE fk_cc ADD CONSTRAINT fk_cc_x FOREIGN KEY (id) REFERENCES fk_self(parent);
ALTER TABLE fk_cc ADD CONSTRAINT fk_cc_y FOREIGN KEY (pid) REFERENCES fk_p (name);
ALTER TABLE fk_r ADD FOREIGN KEY (id) REFERENCES fk_self;
ALTER TABLE fk_r ADD FOREIGN KEY (id) REFERENCES fk_cc;
ALTER TABLE fk_r DROP CONSTRAINT fk_r_id_fkey;
ALTER TABLE fk_cc DROP CONSTRAINT fk_cc_x;
ALTER TABLE fk_self DROP CONSTRAINT fk_self_pkey;
-- DROP COLUMN of a referenced column
ALTER TABLE fk_self DROP COLUMN parent;
ALTER TABLE fk_k DROP COLUMN b;
BEGIN;
ALTER TABLE fk_k DROP COLUMN b CASCADE;
\d fk_kc
ROLLBACK;
-- ADD COLUMN … REFERENCES
CREATE TABLE fk_ac_p (id int PRIMARY KEY);
INSERT INTO fk_ac_p VALUES (1), (2);
CREATE TABLE fk_ac_c (id int PRIMARY KEY);
INSERT INTO fk_ac_c VALUES (10), (20);
ALTER TABLE fk_ac_c ADD COLUMN pid int REFERENCES fk_ac_p ON DELETE CASCADE;
ALTER TABLE fk_ac_c ADD COLUMN good int DEFAULT 1 CONSTRAINT fk_ac_good REFERENCES fk_ac_p;
UPDATE fk_ac_c SET pid = 2;
DELETE FROM fk_ac_p WHERE id = 2;
CREATE TABLE fk_ac_b (id int);
INSERT INTO fk_ac_b VALUES (1);
ALTER TABLE fk_ac_b ADD COLUMN bad int DEFAULT 7 REFERENCES fk_ac_p;
-- definition errors
CREATE TABLE fk_bad (x text REFERENCES fk_p);
CREATE TABLE fk_bad (x int REFERENCES fk_p (name));
CREATE TABLE fk_bad (x int, y int, FOREIGN KEY (x, y) REFERENCES fk_p (id));
CREATE TABLE fk_bad (x int REFERENCES fk_nosuch);
CREATE TABLE fk_bad (x int REFERENCES fk_p (nosuch));
CREATE TABLE fk_bad (x int, FOREIGN KEY (nosuch) REFERENCES fk_p);
CREATE TABLE fk_bad (x int REFERENCES fk_kc);
-- @@ read-only
\d fk_c
\d fk_p
\d fk_kc
SELECT conname, contype, confupdtype, confdeltype, confmatchtype, confkey, conkey,
       condeferrable, condeferred, confrelid::regclass, conindid::regclass,
       pg_get_constraintdef(oid)
  FROM pg_constraint WHERE conname LIKE 'fk%' ORDER BY conname;
-- (fk_self lost its key: PostgreSQL's relhastriggers stays true until VACUUM, hotpair's goes false)
SELECT relname, relhastriggers FROM pg_class WHERE relname LIKE 'fk%' AND relname <> 'fk_self' AND relkind = 'r' ORDER BY 1;
SELECT constraint_name, unique_constraint_name, match_option, update_rule, delete_rule
  FROM information_schema.referential_constraints
 WHERE constraint_name LIKE 'fk%' ORDER BY 1;
SELECT constraint_name, table_name, column_name, ordinal_position, position_in_unique_constraint
  FROM information_schema.key_column_usage
 WHERE constraint_name LIKE 'fk%' ORDER BY 1, 4;
SELECT constraint_name, table_name, column_name
  FROM information_schema.constraint_column_usage
 WHERE constraint_name LIKE 'fk%' ORDER BY 1, 3;
SELECT tc.table_name, kcu.column_name, ccu.table_name AS foreign_table, ccu.column_name AS foreign_column
  FROM information_schema.table_constraints tc
  JOIN information_schema.key_column_usage kcu ON tc.constraint_name = kcu.constraint_name
  JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name
 WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_name LIKE 'fk%'
 ORDER BY 1, 2, 4;
SELECT * FROM fk_cc ORDER BY id;
SELECT * FROM fk_self ORDER BY id;
SELECT * FROM fk_kc ORDER BY x, y;
SELECT * FROM fk_ac_c ORDER BY id;
\d fk_ac_c
