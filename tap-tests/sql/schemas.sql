-- schemas: CREATE / DROP / ALTER SCHEMA, search_path, schema-qualified
-- names in every statement kind, SET SCHEMA, the catalogs and psql's \dn
-- and \d with schemas.
CREATE SCHEMA sc_a;
CREATE SCHEMA IF NOT EXISTS sc_a;
CREATE SCHEMA sc_a;
CREATE SCHEMA pg_sc;
CREATE SCHEMA sc_b AUTHORIZATION postgres;
CREATE TABLE sc_a.t (id serial PRIMARY KEY, v text);
CREATE TABLE sc_b.t (a int, b text);
INSERT INTO sc_a.t (v) VALUES ('x'), ('y'), ('z');
INSERT INTO sc_b.t VALUES (1, 'one'), (2, 'two');
UPDATE sc_a.t SET v = v || '!' WHERE id = 2;
DELETE FROM sc_b.t WHERE a = 2;
SELECT * FROM sc_a.t ORDER BY id;
SELECT * FROM sc_b.t;
SELECT t.v, u.b FROM sc_a.t t JOIN sc_b.t u ON u.a = t.id;
SELECT sc_a.t.v FROM sc_a.t WHERE id = 1;
-- the search path
SHOW search_path;
SELECT current_schema(), current_schemas(false), current_schemas(true);
SET search_path = sc_a, public;
SELECT current_schema(), current_schemas(false);
SELECT * FROM t ORDER BY id;
CREATE TABLE sc_here (k int);
SELECT relname, nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE relname = 'sc_here';
SET search_path = sc_b, sc_a;
SELECT * FROM t;
SELECT 'sc_a.t'::regclass, 'sc_b.t'::regclass, 't'::regclass;
SELECT pg_table_is_visible('sc_a.t'::regclass), pg_table_is_visible('sc_b.t'::regclass);
SET search_path = '';
SELECT current_schema();
RESET search_path;
-- sequences and serial columns in a schema
CREATE SEQUENCE sc_a.s START 10;
SELECT nextval('sc_a.s'), nextval('sc_a.s');
SELECT pg_get_serial_sequence('sc_a.t', 'id');
INSERT INTO sc_a.t (v) VALUES ('w') RETURNING id;
-- indexes, views, constraints across schemas
CREATE INDEX sc_b_idx ON sc_b.t (b);
CREATE TABLE sc_b.child (id int REFERENCES sc_a.t (id) ON DELETE CASCADE, note text);
INSERT INTO sc_b.child VALUES (1, 'first');
INSERT INTO sc_b.child VALUES (99, 'none');
DELETE FROM sc_a.t WHERE id = 1;
SELECT count(*) FROM sc_b.child;
CREATE VIEW sc_a.v AS SELECT id, v FROM sc_a.t WHERE id > 2;
SELECT * FROM sc_a.v ORDER BY id;
SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes
  WHERE schemaname LIKE 'sc_%' ORDER BY 1, 2, 3;
SELECT table_schema, table_name, table_type FROM information_schema.tables
  WHERE table_schema LIKE 'sc_%' ORDER BY 1, 2;
SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'sc_%' ORDER BY 1;
SELECT constraint_schema, constraint_name, table_name FROM information_schema.table_constraints
  WHERE constraint_schema LIKE 'sc_%' AND constraint_type <> 'CHECK' ORDER BY 1, 2;
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'sc_%' ORDER BY 1;
\dn
\d sc_a.t
\d sc_b.child
\d sc_a.v
SET search_path = sc_a;
\d
\d t
RESET search_path;
-- transactional: a rolled-back CREATE SCHEMA leaves nothing
BEGIN;
CREATE SCHEMA sc_gone;
CREATE TABLE sc_gone.t (a int);
INSERT INTO sc_gone.t VALUES (1);
SELECT count(*) FROM sc_gone.t;
ROLLBACK;
SELECT count(*) FROM pg_namespace WHERE nspname = 'sc_gone';
-- SET SCHEMA and ALTER SCHEMA
CREATE SCHEMA sc_c;
CREATE TABLE sc_mover (a int PRIMARY KEY);
INSERT INTO sc_mover VALUES (7);
ALTER TABLE sc_mover SET SCHEMA sc_c;
SELECT * FROM sc_c.sc_mover;
SELECT schemaname, indexname FROM pg_indexes WHERE tablename = 'sc_mover';
ALTER VIEW sc_a.v SET SCHEMA sc_c;
SELECT count(*) FROM sc_c.v;
ALTER TABLE IF EXISTS sc_nothing SET SCHEMA sc_c;
ALTER SCHEMA sc_c RENAME TO sc_d;
SELECT * FROM sc_d.sc_mover;
ALTER SCHEMA sc_d RENAME TO sc_a;
-- DROP SCHEMA
DROP SCHEMA sc_b;
DROP SCHEMA IF EXISTS sc_nothing;
DROP SCHEMA sc_nothing;
DROP SCHEMA pg_catalog;
DROP SCHEMA sc_b CASCADE;
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'sc_%' ORDER BY 1;
\d sc_a.t
-- @@ read-only
SELECT * FROM sc_a.t ORDER BY id;
SELECT * FROM sc_d.sc_mover;
SELECT count(*) FROM sc_d.v;
SET search_path = sc_a, public;
SELECT * FROM t ORDER BY id;
SELECT current_schemas(true);
RESET search_path;
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'sc_%' ORDER BY 1;
\dn
\d sc_d.sc_mover
