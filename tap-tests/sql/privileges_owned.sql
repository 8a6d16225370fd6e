-- privileges_owned: DROP OWNED BY and REASSIGN OWNED BY over tables,
-- views, sequences, schemas and default privileges; their permission
-- checks; DROP ROLE afterwards; CREATE SCHEMA AUTHORIZATION;
-- pg_terminate_backend's answers for pids that are not sessions; the
-- standby then reads the result.
CREATE ROLE po_old LOGIN;
CREATE ROLE po_new LOGIN;
CREATE ROLE po_other LOGIN;
CREATE ROLE po_gone LOGIN;
GRANT CREATE ON SCHEMA public TO po_old, po_gone;
SET ROLE po_old;
CREATE TABLE po_t (a int);
CREATE SEQUENCE po_s;
CREATE VIEW po_v AS SELECT a FROM po_t;
GRANT SELECT ON po_t TO po_other WITH GRANT OPTION;
RESET ROLE;
CREATE SCHEMA po_sch AUTHORIZATION po_old;
CREATE TABLE po_sch.po_in (b int);
ALTER TABLE po_sch.po_in OWNER TO po_old;
CREATE TABLE po_keep (a int);
GRANT SELECT, INSERT ON po_keep TO po_gone;
GRANT UPDATE ON po_keep TO po_old;
ALTER DEFAULT PRIVILEGES FOR ROLE po_gone GRANT SELECT ON TABLES TO po_other;
ALTER DEFAULT PRIVILEGES GRANT INSERT ON TABLES TO po_gone;
SET ROLE po_gone;
CREATE TABLE po_gt (a int);
CREATE VIEW po_gv AS SELECT a FROM po_gt;
CREATE SEQUENCE po_gs;
RESET ROLE;
-- DROP ROLE refuses while objects depend on the roles.
DROP ROLE po_old;
-- Permission: the caller needs the privileges of every role named.
SET ROLE po_other;
REASSIGN OWNED BY po_old TO po_other;
REASSIGN OWNED BY po_other TO po_old;
DROP OWNED BY po_old;
RESET ROLE;
REASSIGN OWNED BY nosuch_role TO po_new;
REASSIGN OWNED BY po_old TO nosuch_role;
DROP OWNED BY nosuch_role;
REASSIGN OWNED BY postgres TO po_new;
DROP OWNED BY postgres;
-- REASSIGN OWNED moves ownership; the old owner's items go with it.
REASSIGN OWNED BY po_old TO po_new;
SELECT c.relname, pg_get_userbyid(c.relowner) AS owner, c.relacl
  FROM pg_class c WHERE c.relname LIKE 'po\_%' ORDER BY 1;
SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'po_sch';
-- po_old still has a grant on po_keep.
DROP ROLE po_old;
DROP OWNED BY po_old;
SELECT relacl FROM pg_class WHERE relname = 'po_keep';
DROP ROLE po_old;
-- DROP OWNED drops what po_gone owns, revokes its grants and its
-- default privileges.
DROP OWNED BY po_gone RESTRICT;
SELECT relname FROM pg_class WHERE relname LIKE 'po\_g%' ORDER BY 1;
SELECT relacl FROM pg_class WHERE relname = 'po_keep';
SELECT pg_get_userbyid(defaclrole), defaclobjtype, defaclacl FROM pg_default_acl
  WHERE pg_get_userbyid(defaclrole) IN ('po_gone', 'postgres') ORDER BY 1, 2;
DROP ROLE po_gone;
-- Several roles at once, in a transaction that rolls back.
BEGIN;
DROP OWNED BY po_new, po_other CASCADE;
ROLLBACK;
SELECT relname FROM pg_class WHERE relname LIKE 'po\_%' ORDER BY 1;
-- CREATE SCHEMA AUTHORIZATION: the name defaults to the role's.
CREATE SCHEMA AUTHORIZATION po_new;
CREATE SCHEMA IF NOT EXISTS po_sch2 AUTHORIZATION po_new;
CREATE SCHEMA IF NOT EXISTS po_sch2 AUTHORIZATION po_new;
SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname LIKE 'po\_%' ORDER BY 1;
-- pg_terminate_backend / pg_cancel_backend of a pid that is no session.
SELECT pg_terminate_backend(1);
SELECT pg_cancel_backend(1);
SELECT pg_terminate_backend(pg_backend_pid(), -1);
-- @@ read-only
SELECT c.relname, pg_get_userbyid(c.relowner) AS owner, c.relacl
  FROM pg_class c WHERE c.relname LIKE 'po\_%' ORDER BY 1;
SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname LIKE 'po\_%' ORDER BY 1;
SELECT rolname FROM pg_roles WHERE rolname LIKE 'po\_%' ORDER BY 1;
BEGIN READ ONLY;
DROP OWNED BY po_new;
ROLLBACK;
BEGIN READ ONLY;
REASSIGN OWNED BY po_new TO po_other;
ROLLBACK;
SELECT pg_terminate_backend(1);
