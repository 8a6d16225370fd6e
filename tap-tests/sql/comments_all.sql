-- comments_all: COMMENT ON for indexes, views (and their columns),
-- sequences, schemas, enum types, constraints, roles and the database;
-- pg_description / pg_shdescription, the description functions and
-- psql's listings; the standby then reads them.
CREATE SCHEMA cm_sch;
CREATE TABLE cm_tab (id int PRIMARY KEY, code text UNIQUE, n int CHECK (n > 0));
CREATE TABLE cm_child (id int REFERENCES cm_tab (id));
CREATE INDEX cm_idx ON cm_tab (n);
CREATE VIEW cm_view AS SELECT id, code FROM cm_tab;
CREATE SEQUENCE cm_seq;
CREATE TYPE cm_mood AS ENUM ('sad', 'ok');
CREATE ROLE cm_role;
CREATE ROLE cm_role_gone;
COMMENT ON INDEX cm_idx IS 'an index';
COMMENT ON VIEW cm_view IS 'a view';
COMMENT ON COLUMN cm_view.code IS 'a view column';
COMMENT ON SEQUENCE cm_seq IS 'a sequence';
COMMENT ON SCHEMA cm_sch IS 'a schema';
COMMENT ON TYPE cm_mood IS 'an enum';
COMMENT ON CONSTRAINT cm_tab_n_check ON cm_tab IS 'a check';
COMMENT ON CONSTRAINT cm_tab_pkey ON cm_tab IS 'a primary key';
COMMENT ON CONSTRAINT cm_tab_code_key ON cm_tab IS 'a unique key';
COMMENT ON CONSTRAINT cm_child_id_fkey ON cm_child IS 'a foreign key';
COMMENT ON ROLE cm_role IS 'a role';
COMMENT ON ROLE cm_role_gone IS 'a role to drop';
COMMENT ON DATABASE postgres IS 'cm: the database';
-- Replaced, then removed with IS NULL and with ''.
COMMENT ON INDEX cm_tab_code_key IS 'first';
COMMENT ON INDEX cm_tab_code_key IS 'second';
SELECT obj_description('cm_tab_code_key'::regclass, 'pg_class');
COMMENT ON INDEX cm_tab_code_key IS NULL;
COMMENT ON SEQUENCE cm_seq IS 'temporary';
COMMENT ON SEQUENCE cm_seq IS '';
COMMENT ON SEQUENCE cm_seq IS 'a sequence';
-- ROLLBACK keeps the old comments; inside the block the new ones show.
BEGIN;
COMMENT ON INDEX cm_idx IS 'changed';
COMMENT ON SCHEMA cm_sch IS NULL;
COMMENT ON ROLE cm_role IS 'changed role';
SELECT obj_description('cm_idx'::regclass, 'pg_class'),
       obj_description('cm_sch'::regnamespace, 'pg_namespace'),
       shobj_description((SELECT oid FROM pg_roles WHERE rolname = 'cm_role'), 'pg_authid');
ROLLBACK;
BEGIN;
SAVEPOINT s;
COMMENT ON TYPE cm_mood IS 'changed';
ROLLBACK TO SAVEPOINT s;
COMMENT ON VIEW cm_view IS 'a view, committed';
COMMIT;
-- Errors.
COMMENT ON INDEX cm_nosuch IS 'x';
COMMENT ON INDEX cm_tab IS 'x';
COMMENT ON VIEW cm_tab IS 'x';
COMMENT ON VIEW cm_nosuch IS 'x';
COMMENT ON SEQUENCE cm_view IS 'x';
COMMENT ON TABLE cm_view IS 'x';
COMMENT ON TABLE cm_seq IS 'x';
COMMENT ON COLUMN cm_view.nosuch IS 'x';
COMMENT ON SCHEMA cm_nosuch IS 'x';
COMMENT ON TYPE cm_nosuch IS 'x';
COMMENT ON CONSTRAINT cm_nosuch ON cm_tab IS 'x';
COMMENT ON CONSTRAINT cm_nosuch ON cm_nosuch IS 'x';
COMMENT ON ROLE cm_nosuch IS 'x';
COMMENT ON DATABASE cm_nosuch IS 'x';
COMMENT ON INDEX cm_nosuch_schema.cm_idx IS 'x';
-- DROP takes the comment with it; RENAME keeps it.
CREATE INDEX cm_idx_gone ON cm_tab (code, n);
COMMENT ON INDEX cm_idx_gone IS 'dropped index';
DROP INDEX cm_idx_gone;
CREATE SEQUENCE cm_seq_gone;
COMMENT ON SEQUENCE cm_seq_gone IS 'dropped sequence';
DROP SEQUENCE cm_seq_gone;
DROP ROLE cm_role_gone;
ALTER SCHEMA cm_sch RENAME TO cm_sch2;
ALTER VIEW cm_view RENAME TO cm_view2;
SELECT count(*) FROM pg_description WHERE description LIKE 'dropped%';
SELECT count(*) FROM pg_shdescription WHERE description = 'a role to drop';
-- @@ read-only
SELECT obj_description('cm_idx'::regclass, 'pg_class') AS idx,
       obj_description('cm_view2'::regclass, 'pg_class') AS view,
       col_description('cm_view2'::regclass, 2) AS view_col,
       col_description('cm_view2'::regclass, 1) AS view_col1,
       obj_description('cm_seq'::regclass, 'pg_class') AS seq,
       obj_description('cm_sch2'::regnamespace, 'pg_namespace') AS schema,
       obj_description('cm_mood'::regtype, 'pg_type') AS type,
       obj_description('cm_idx'::regclass, 'pg_namespace') AS wrong_catalog;
SELECT c.conname, obj_description(c.oid, 'pg_constraint')
  FROM pg_constraint c
 WHERE c.conrelid IN ('cm_tab'::regclass, 'cm_child'::regclass) ORDER BY 1;
SELECT r.rolname, shobj_description(r.oid, 'pg_authid')
  FROM pg_roles r WHERE r.rolname LIKE 'cm%' ORDER BY 1;
SELECT d.classoid::regclass, d.objsubid, d.description
  FROM pg_description d
 WHERE d.description IN ('an index', 'a view, committed', 'a view column', 'a sequence',
                         'a schema', 'an enum', 'a check', 'a primary key',
                         'a unique key', 'a foreign key')
 ORDER BY 3;
SELECT d.classoid::regclass, d.description FROM pg_shdescription d
 WHERE d.description LIKE 'a role%' OR d.description LIKE 'cm:%' ORDER BY 2;
\dn+ cm_sch2
\dT+ cm_mood
\dv+ cm_view2
\d+ cm_view2
\du+ cm_role
-- (\di+ and \ds+ show the Description the same way; their Size column
-- differs: pg_relation_size is not PostgreSQL's yet.)
