-- default_privileges: ALTER DEFAULT PRIVILEGES for tables, sequences,
-- functions and schemas, globally and IN SCHEMA, FOR ROLE; pg_default_acl and \ddp;
-- what objects created afterwards start with; errors.
CREATE ROLE dp_owner LOGIN CREATEROLE;
CREATE ROLE dp_reader;
CREATE SCHEMA dp_s;
GRANT USAGE, CREATE ON SCHEMA dp_s TO dp_owner;
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner GRANT SELECT ON TABLES TO dp_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner IN SCHEMA dp_s GRANT INSERT ON TABLES TO dp_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner REVOKE ALL ON SEQUENCES FROM dp_owner;
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner GRANT USAGE ON SEQUENCES TO dp_reader WITH GRANT OPTION;
SELECT pg_get_userbyid(defaclrole), defaclnamespace::regnamespace, defaclobjtype, defaclacl FROM pg_default_acl ORDER BY 1, 2, 3;
\ddp
SET ROLE dp_owner;
CREATE TABLE dp_s.t1 (a int);
CREATE SEQUENCE dp_s.q1;
CREATE VIEW dp_s.v1 AS SELECT 1 AS x;
RESET ROLE;
CREATE TABLE dp_s.t2 (a int);
SELECT c.relname, c.relacl FROM pg_class c WHERE c.relnamespace = 'dp_s'::regnamespace ORDER BY 1;
-- Back to the default: the entry goes.
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner REVOKE SELECT ON TABLES FROM dp_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner IN SCHEMA dp_s REVOKE INSERT ON TABLES FROM dp_reader;
SELECT pg_get_userbyid(defaclrole), defaclobjtype, defaclacl FROM pg_default_acl ORDER BY 1, 2;
-- Schemas.
ALTER DEFAULT PRIVILEGES GRANT USAGE ON SCHEMAS TO dp_reader;
CREATE SCHEMA dp_s2;
SELECT nspacl FROM pg_namespace WHERE nspname = 'dp_s2';
ALTER DEFAULT PRIVILEGES REVOKE USAGE ON SCHEMAS FROM dp_reader;
-- Functions and procedures (ROUTINES is the same kind).
GRANT CREATE ON SCHEMA public TO dp_owner;
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner IN SCHEMA public GRANT EXECUTE ON ROUTINES TO dp_reader;
SELECT pg_get_userbyid(defaclrole), defaclnamespace::regnamespace, defaclobjtype, defaclacl FROM pg_default_acl ORDER BY 1, 2, 3;
SET ROLE dp_owner;
CREATE FUNCTION dp_f1() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE PROCEDURE dp_p1() LANGUAGE sql AS 'SELECT 1';
RESET ROLE;
CREATE FUNCTION dp_f3() RETURNS int LANGUAGE sql AS 'SELECT 3';
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner IN SCHEMA public REVOKE EXECUTE ON ROUTINES FROM dp_reader;
SET ROLE dp_owner;
CREATE FUNCTION dp_f5() RETURNS int LANGUAGE sql AS 'SELECT 5';
RESET ROLE;
SELECT proname, proacl FROM pg_proc WHERE proname LIKE 'dp\_%' ORDER BY 1;
SET ROLE dp_reader;
SELECT dp_f1(), dp_f3();
SELECT dp_f5();
RESET ROLE;
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner GRANT EXECUTE ON FUNCTIONS TO PUBLIC;
REVOKE CREATE ON SCHEMA public FROM dp_owner;
SELECT count(*) FROM pg_default_acl WHERE defaclobjtype = 'f';
-- Errors.
ALTER DEFAULT PRIVILEGES IN SCHEMA dp_s GRANT USAGE ON SCHEMAS TO dp_reader;
ALTER DEFAULT PRIVILEGES GRANT USAGE ON TABLES TO dp_reader;
ALTER DEFAULT PRIVILEGES IN SCHEMA dp_nosuch GRANT SELECT ON TABLES TO dp_reader;
ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO dp_nosuch;
SET ROLE dp_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE dp_owner GRANT SELECT ON TABLES TO dp_reader;
RESET ROLE;
-- @@ read-only
SELECT pg_get_userbyid(defaclrole), defaclobjtype, defaclacl FROM pg_default_acl ORDER BY 1, 2;
SELECT c.relname, c.relacl FROM pg_class c WHERE c.relnamespace = 'dp_s'::regnamespace ORDER BY 1;
