-- alter_sequence: ALTER SEQUENCE's options, RESTART, bounds errors,
-- RENAME, SET SCHEMA, OWNED BY, and what pg_sequences and \d show.
CREATE SEQUENCE as_a;
SELECT nextval('as_a'), nextval('as_a');
ALTER SEQUENCE as_a INCREMENT BY 10;
SELECT nextval('as_a'), nextval('as_a');
ALTER SEQUENCE as_a RESTART;
SELECT nextval('as_a');
ALTER SEQUENCE as_a RESTART WITH 100;
SELECT nextval('as_a'), currval('as_a');
ALTER SEQUENCE as_a START WITH 50 RESTART;
SELECT nextval('as_a');
ALTER SEQUENCE as_a RESTART 7 INCREMENT 1;
SELECT nextval('as_a');
ALTER SEQUENCE as_a MAXVALUE 9 CYCLE;
ALTER SEQUENCE as_a MAXVALUE 9 START 1 CYCLE;
SELECT nextval('as_a'), nextval('as_a'), nextval('as_a');
ALTER SEQUENCE as_a NO CYCLE NO MAXVALUE CACHE 5;
SELECT sequencename, data_type, start_value, min_value, max_value,
       increment_by, cycle, cache_size, last_value
  FROM pg_sequences WHERE sequencename = 'as_a';
-- a descending sequence, and its bounds
CREATE SEQUENCE as_d;
ALTER SEQUENCE as_d INCREMENT BY -1 MINVALUE -10 MAXVALUE 10 START 10 RESTART;
SELECT nextval('as_d'), nextval('as_d');
ALTER SEQUENCE as_d NO MINVALUE;
SELECT min_value, max_value FROM pg_sequences WHERE sequencename = 'as_d';
-- type changes: bounds that were the type's follow it
CREATE SEQUENCE as_t AS integer;
ALTER SEQUENCE as_t AS smallint;
SELECT data_type, min_value, max_value FROM pg_sequences WHERE sequencename = 'as_t';
ALTER SEQUENCE as_t AS bigint MAXVALUE 1000;
ALTER SEQUENCE as_t AS smallint;
SELECT data_type, min_value, max_value FROM pg_sequences WHERE sequencename = 'as_t';
-- errors
ALTER SEQUENCE as_a INCREMENT BY 0;
ALTER SEQUENCE as_a MINVALUE 10 MAXVALUE 5;
ALTER SEQUENCE as_a START WITH 0;
ALTER SEQUENCE as_a MAXVALUE 100 START WITH 200;
ALTER SEQUENCE as_a RESTART WITH 0;
ALTER SEQUENCE as_a RESTART WITH 1000 MAXVALUE 500;
SELECT setval('as_a', 400);
ALTER SEQUENCE as_a MAXVALUE 300;
ALTER SEQUENCE as_a CACHE 0;
ALTER SEQUENCE as_t MAXVALUE 40000;
ALTER SEQUENCE as_t AS text;
ALTER SEQUENCE as_missing RESTART;
ALTER SEQUENCE IF EXISTS as_missing RESTART;
ALTER SEQUENCE IF EXISTS as_missing RENAME TO as_other;
CREATE TABLE as_tab (id int, note text);
ALTER SEQUENCE as_tab RESTART;
-- nothing changed after the errors
SELECT nextval('as_a');
-- RENAME
ALTER SEQUENCE as_d RENAME TO as_d2;
SELECT nextval('as_d2');
SELECT count(*) FROM pg_sequences WHERE sequencename = 'as_d';
ALTER SEQUENCE as_d2 RENAME TO as_a;
-- SET SCHEMA
CREATE SCHEMA as_s;
ALTER SEQUENCE as_d2 SET SCHEMA as_s;
SELECT nextval('as_s.as_d2');
SELECT schemaname, sequencename FROM pg_sequences WHERE sequencename LIKE 'as\_%' ORDER BY 1, 2;
-- OWNED BY: the sequence goes with its table
CREATE SEQUENCE as_own;
ALTER SEQUENCE as_own OWNED BY as_tab.id;
ALTER SEQUENCE as_own OWNED BY as_tab.nope;
ALTER SEQUENCE as_own OWNED BY as_s.as_other;
ALTER SEQUENCE as_own OWNED BY nothing;
CREATE TABLE as_tab2 (id int);
ALTER SEQUENCE as_own2 OWNED BY as_tab2.id;
CREATE SEQUENCE as_own2;
ALTER SEQUENCE as_own2 OWNED BY as_tab2.id;
ALTER SEQUENCE as_own2 OWNED BY NONE;
ALTER SEQUENCE as_own2 SET SCHEMA as_s;
\d as_own
DROP TABLE as_tab;
SELECT count(*) FROM pg_sequences WHERE sequencename = 'as_own';
DROP TABLE as_tab2;
SELECT nextval('as_s.as_own2');
-- a serial column's sequence
CREATE TABLE as_ser (id serial, v text);
ALTER SEQUENCE as_ser_id_seq RESTART WITH 1000;
INSERT INTO as_ser (v) VALUES ('a'), ('b');
SELECT * FROM as_ser ORDER BY id;
ALTER SEQUENCE as_ser_id_seq SET SCHEMA as_s;
-- ALTER in a transaction block
BEGIN;
ALTER SEQUENCE as_a RESTART WITH 500;
SELECT nextval('as_a');
COMMIT;
SELECT nextval('as_a');
\d as_a
\d as_t
SELECT sequence_schema, sequence_name, data_type, numeric_precision, start_value,
       minimum_value, maximum_value, increment, cycle_option
  FROM information_schema.sequences WHERE sequence_name LIKE 'as\_%' ORDER BY sequence_schema, sequence_name;
-- A sequence read as a relation: its one row.
CREATE SEQUENCE as_rel;
SELECT * FROM as_rel;
SELECT nextval('as_rel');
SELECT * FROM as_rel;
SELECT nextval('as_rel');
SELECT last_value, is_called FROM as_rel;
SELECT setval('as_rel', 50);
SELECT * FROM as_rel;
SELECT s.last_value + 1 AS nxt FROM as_rel s;
EXPLAIN (COSTS OFF) SELECT * FROM as_rel;
-- @@ read-only
SELECT schemaname, sequencename, data_type, start_value, min_value, max_value,
       increment_by, cycle, cache_size
  FROM pg_sequences WHERE sequencename LIKE 'as\_%' ORDER BY 1, 2;
\d as_a
\d as_s.as_d2
SELECT last_value, log_cnt, is_called FROM as_rel;
