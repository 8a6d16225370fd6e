-- privileges: GRANT / REVOKE on tables, columns, sequences, schemas and
-- the database; role membership and INHERIT; owners, ALTER … OWNER TO;
-- PostgreSQL's errors and warnings; relacl / \dp; has_*_privilege; the
-- standby then reads the lists and answers the checks.
CREATE ROLE pv_alice LOGIN;
CREATE ROLE pv_bob LOGIN;
CREATE ROLE pv_group NOLOGIN;
CREATE ROLE pv_noinh LOGIN NOINHERIT;
CREATE TABLE pv_t (a int PRIMARY KEY, b text, c int);
INSERT INTO pv_t VALUES (1, 'one', 10), (2, 'two', 20);
CREATE SEQUENCE pv_seq;
CREATE VIEW pv_v AS SELECT a, b FROM pv_t;
SELECT relacl FROM pg_class WHERE relname = 'pv_t';
-- Table privileges.
GRANT SELECT ON pv_t TO pv_alice;
GRANT INSERT, UPDATE ON TABLE pv_t TO pv_alice WITH GRANT OPTION;
GRANT SELECT ON pv_t, pv_v TO PUBLIC;
SELECT relacl FROM pg_class WHERE relname = 'pv_t';
SELECT relacl FROM pg_class WHERE relname = 'pv_v';
SET ROLE pv_alice;
SELECT current_user, * FROM pv_t ORDER BY a;
INSERT INTO pv_t VALUES (3, 'three', 30);
UPDATE pv_t SET c = c + 1 WHERE a = 3;
DELETE FROM pv_t WHERE a = 3;
TRUNCATE pv_t;
GRANT UPDATE ON pv_t TO pv_bob;
GRANT DELETE ON pv_t TO pv_bob;
GRANT SELECT ON pv_seq TO pv_bob;
RESET ROLE;
SELECT relacl FROM pg_class WHERE relname = 'pv_t';
-- REVOKE of a grant option others depend on.
REVOKE GRANT OPTION FOR UPDATE ON pv_t FROM pv_alice;
REVOKE GRANT OPTION FOR UPDATE ON pv_t FROM pv_alice CASCADE;
SELECT relacl FROM pg_class WHERE relname = 'pv_t';
REVOKE ALL ON pv_t FROM PUBLIC;
SET ROLE pv_bob;
SELECT * FROM pv_t;
SELECT * FROM pv_v ORDER BY a;
DROP TABLE pv_t;
ALTER TABLE pv_t ADD COLUMN d int;
RESET ROLE;
-- Column privileges.
GRANT UPDATE (b), INSERT (a, b) ON pv_t TO pv_bob;
SELECT attname, attacl FROM pg_attribute WHERE attrelid = 'pv_t'::regclass AND attnum > 0 ORDER BY attnum;
GRANT SELECT (a) ON pv_t TO pv_bob;
SET ROLE pv_bob;
INSERT INTO pv_t (a, b) VALUES (4, 'four');
INSERT INTO pv_t (a, b, c) VALUES (5, 'five', 5);
UPDATE pv_t SET b = 'FOUR';
UPDATE pv_t SET c = 0;
RESET ROLE;
SELECT * FROM pv_t ORDER BY a;
REVOKE UPDATE ON pv_t FROM pv_bob;
SELECT attname, attacl FROM pg_attribute WHERE attrelid = 'pv_t'::regclass AND attnum > 0 ORDER BY attnum;
-- Errors.
GRANT USAGE ON pv_t TO pv_bob;
GRANT SELECT ON pv_nosuch TO pv_bob;
GRANT SELECT ON pv_t TO pv_nosuch;
GRANT SELECT ON pv_t TO PUBLIC WITH GRANT OPTION;
GRANT SELECT (nosuch) ON pv_t TO pv_bob;
GRANT EXECUTE ON SEQUENCE pv_seq TO pv_bob;
-- Sequences, schemas, the database.
GRANT USAGE, SELECT ON SEQUENCE pv_seq TO pv_bob;
SELECT relacl FROM pg_class WHERE relname = 'pv_seq';
CREATE SCHEMA pv_s;
CREATE TABLE pv_s.t1 (x int);
CREATE TABLE pv_s.t2 (x int);
GRANT SELECT ON ALL TABLES IN SCHEMA pv_s TO pv_bob;
SET ROLE pv_bob;
SELECT * FROM pv_s.t1;
RESET ROLE;
GRANT USAGE ON SCHEMA pv_s TO pv_bob;
SELECT nspacl FROM pg_namespace WHERE nspname = 'pv_s';
SET ROLE pv_bob;
SELECT * FROM pv_s.t1;
CREATE TABLE pv_s.t3 (x int);
CREATE TABLE pv_bobs (x int);
RESET ROLE;
GRANT CREATE ON SCHEMA pv_s TO pv_bob;
SET ROLE pv_bob;
CREATE TABLE pv_s.t3 (x int);
INSERT INTO pv_s.t3 VALUES (1);
SELECT * FROM pv_s.t3;
RESET ROLE;
SELECT c.relname, pg_get_userbyid(c.relowner) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'pv_s' ORDER BY 1;
-- Membership and INHERIT.
GRANT pv_group TO pv_alice, pv_noinh;
GRANT pv_group TO pv_alice;
SELECT r.rolname, m.rolname AS member, m2.rolname AS grantor, admin_option FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid JOIN pg_roles m ON m.oid = a.member JOIN pg_roles m2 ON m2.oid = a.grantor WHERE r.rolname LIKE 'pv%' ORDER BY 1, 2;
GRANT pv_alice TO pv_group;
GRANT DELETE ON pv_t TO pv_group;
SET ROLE pv_alice;
DELETE FROM pv_t WHERE a = 5;
RESET ROLE;
SET ROLE pv_noinh;
DELETE FROM pv_t WHERE a = 4;
SET ROLE pv_group;
DELETE FROM pv_t WHERE a = 4;
RESET ROLE;
SET ROLE pv_bob;
SET ROLE pv_group;
RESET ROLE;
REVOKE pv_group FROM pv_noinh;
REVOKE pv_group FROM pv_noinh;
-- Owners.
CREATE TABLE pv_owned (x int);
ALTER TABLE pv_owned OWNER TO pv_alice;
GRANT SELECT ON pv_owned TO pv_bob;
SELECT pg_get_userbyid(relowner), relacl FROM pg_class WHERE relname = 'pv_owned';
ALTER TABLE pv_owned OWNER TO pv_bob;
SELECT pg_get_userbyid(relowner), relacl FROM pg_class WHERE relname = 'pv_owned';
SET ROLE pv_alice;
ALTER TABLE pv_owned OWNER TO pv_alice;
RESET ROLE;
DROP ROLE pv_bob;
-- Transactional.
BEGIN;
GRANT ALL ON pv_t TO pv_noinh;
SELECT relacl FROM pg_class WHERE relname = 'pv_t';
ROLLBACK;
SELECT relacl FROM pg_class WHERE relname = 'pv_t';
-- has_*_privilege.
SELECT has_table_privilege('pv_alice', 'pv_t', 'SELECT'),
       has_table_privilege('pv_bob', 'pv_t', 'SELECT'),
       has_table_privilege('pv_bob', 'pv_t', 'SELECT, INSERT'),
       has_table_privilege('pv_alice', 'pv_t', 'INSERT WITH GRANT OPTION'),
       has_table_privilege('pv_noinh', 'pv_t', 'DELETE'),
       has_table_privilege('pv_t', 'TRUNCATE');
SELECT has_column_privilege('pv_bob', 'pv_t', 'a', 'SELECT'),
       has_column_privilege('pv_bob', 'pv_t', 'c', 'SELECT'),
       has_any_column_privilege('pv_bob', 'pv_t', 'SELECT'),
       has_sequence_privilege('pv_bob', 'pv_seq', 'USAGE'),
       has_schema_privilege('pv_bob', 'pv_s', 'CREATE'),
       has_schema_privilege('pv_alice', 'pv_s', 'USAGE'),
       has_schema_privilege('pv_alice', 'public', 'USAGE'),
       has_schema_privilege('pv_alice', 'public', 'CREATE'),
       has_database_privilege('pv_alice', current_database(), 'CONNECT'),
       has_database_privilege('pv_alice', current_database(), 'CREATE');
SELECT pg_has_role('pv_alice', 'pv_group', 'MEMBER'),
       pg_has_role('pv_alice', 'pv_group', 'USAGE'),
       pg_has_role('pv_bob', 'pv_group', 'MEMBER'),
       pg_has_role('pv_alice', 'pv_group', 'USAGE WITH ADMIN OPTION');
SELECT has_table_privilege('pv_alice', 'pv_t', 'FLY');
SELECT has_table_privilege('pv_alice', 'pv_nosuch', 'SELECT');
-- pg_authid is for superusers; pg_roles for everyone.
SET ROLE pv_alice;
SELECT rolname FROM pg_authid WHERE rolname = 'pv_alice';
SELECT rolname FROM pg_roles WHERE rolname = 'pv_alice';
RESET ROLE;
-- Predefined roles.
SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname IN ('pg_read_all_data', 'pg_write_all_data', 'pg_monitor', 'pg_signal_backend') ORDER BY 1;
GRANT pg_read_all_data TO pv_noinh;
SET ROLE pv_noinh;
SELECT count(*) FROM pv_s.t1;
RESET ROLE;
\dp pv_t
\dp pv_s.*
-- Sequences: CREATE needs CREATE on the schema, ALTER ownership.
CREATE ROLE pv_sq_r LOGIN;
CREATE SEQUENCE pv_sq_own;
SET ROLE pv_sq_r;
CREATE SEQUENCE pv_sq_new;
ALTER SEQUENCE pv_sq_own RESTART;
ALTER SEQUENCE pv_sq_own RENAME TO pv_sq_x;
RESET ROLE;
ALTER SEQUENCE pv_sq_own OWNER TO pv_sq_r;
SET ROLE pv_sq_r;
ALTER SEQUENCE pv_sq_own INCREMENT 2;
SELECT nextval('pv_sq_own');
RESET ROLE;
-- Views: ALTER VIEW and ALTER TABLE both change a view's owner.
CREATE VIEW pv_ov AS SELECT 1 AS x;
ALTER VIEW pv_ov OWNER TO pv_alice;
SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'pv_ov';
ALTER TABLE pv_ov OWNER TO pv_noinh;
SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'pv_ov';
-- @@ read-only
SELECT relacl FROM pg_class WHERE relname = 'pv_t';
SELECT attname, attacl FROM pg_attribute WHERE attrelid = 'pv_t'::regclass AND attnum > 0 ORDER BY attnum;
SET ROLE pv_bob;
SELECT a FROM pv_t ORDER BY a;
SELECT * FROM pv_t;
SELECT * FROM pv_s.t3;
RESET ROLE;
SELECT has_table_privilege('pv_alice', 'pv_t', 'SELECT'), pg_has_role('pv_alice', 'pv_group', 'MEMBER');
\dp pv_t
