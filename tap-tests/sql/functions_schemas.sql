-- functions_schemas: functions and procedures in schemas other than
-- public — CREATE in a schema, qualified calls, the search path choosing
-- among same-named functions (an earlier schema hides a later one with
-- the same argument types), regproc / regprocedure, pg_proc, \df,
-- pg_get_functiondef, CALL, triggers naming a qualified function, ALTER
-- … RENAME / SET SCHEMA, CREATE and USAGE on the schema, DROP SCHEMA
-- with functions. The read-only part calls them on the standby.
CREATE SCHEMA fs_a;
CREATE SCHEMA fs_b;
CREATE FUNCTION fs_a.f(x int) RETURNS text LANGUAGE sql AS $$ SELECT 'a:' || x $$;
CREATE FUNCTION fs_b.f(x int) RETURNS text LANGUAGE sql AS $$ SELECT 'b:' || x $$;
CREATE FUNCTION fs_b.g(x text) RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN 'g:' || x; END $$;
CREATE FUNCTION fs_nosuch.f() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION fs_a.f(x int) RETURNS text LANGUAGE sql AS $$ SELECT 'dup' $$;
CREATE OR REPLACE FUNCTION fs_a.f(x int) RETURNS text LANGUAGE sql AS $$ SELECT 'a:' || x $$;
SELECT fs_a.f(1), fs_b.f(2), fs_b.g('x');
SET search_path = fs_b, fs_a, public;
SELECT f(3), g('y');
SET search_path = fs_a, fs_b, public;
SELECT f(3), g('y');
SELECT fs_a.f(x => 4);
SELECT * FROM fs_b.f(5);
SELECT * FROM f(6) AS t(v);
SELECT 'fs_b.f'::regproc, 'f(integer)'::regprocedure, 'fs_b.f(integer)'::regprocedure;
SELECT proname, pronamespace::regnamespace, pg_function_is_visible(oid) FROM pg_proc
  WHERE proname IN ('f', 'g') ORDER BY 2, 1;
SELECT pg_get_functiondef('fs_b.g'::regproc);
\df fs_*.*
-- procedures
CREATE PROCEDURE fs_b.p(INOUT n int) LANGUAGE plpgsql AS $$ BEGIN n := n * 10; END $$;
CALL fs_b.p(4);
CALL p(5);
DO $$ DECLARE v int := 2; BEGIN CALL fs_b.p(v); RAISE NOTICE 'v=%', v; END $$;
-- a trigger's function in another schema
CREATE TABLE fs_t (id int, note text);
CREATE FUNCTION fs_b.trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.note := 'trg'; RETURN NEW; END $$;
CREATE TRIGGER fs_tr BEFORE INSERT ON fs_t FOR EACH ROW EXECUTE FUNCTION fs_b.trg();
CREATE TRIGGER fs_tr2 BEFORE INSERT ON fs_t FOR EACH ROW EXECUTE FUNCTION fs_a.trg();
INSERT INTO fs_t VALUES (1) RETURNING *;
SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'fs_tr';
RESET search_path;
SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'fs_tr';
-- ALTER … RENAME / SET SCHEMA, DROP
CREATE FUNCTION fs_a.k(x int) RETURNS int LANGUAGE sql AS 'SELECT x + 100';
ALTER FUNCTION fs_a.k(int) RENAME TO k2;
SELECT fs_a.k2(1);
ALTER FUNCTION fs_a.k2(int) SET SCHEMA fs_b;
ALTER FUNCTION fs_b.k2(int) SET SCHEMA fs_nosuch;
SELECT fs_b.k2(2);
CREATE FUNCTION fs_a.k2(x int) RETURNS int LANGUAGE sql AS 'SELECT x';
ALTER FUNCTION fs_a.k2(int) SET SCHEMA fs_b;
DROP FUNCTION fs_a.k2(int);
DROP FUNCTION fs_a.nope(text);
DROP FUNCTION IF EXISTS fs_a.nope(text);
ALTER FUNCTION fs_b.k2(int) SET SCHEMA public;
SELECT k2(9), public.k2(9);
-- CREATE and USAGE on the schema
CREATE ROLE fs_r;
SET ROLE fs_r;
CREATE FUNCTION fs_a.h() RETURNS int LANGUAGE sql AS 'SELECT 1';
RESET ROLE;
GRANT USAGE, CREATE ON SCHEMA fs_a TO fs_r;
SET ROLE fs_r;
CREATE FUNCTION fs_a.h() RETURNS int LANGUAGE sql AS 'SELECT 7';
SELECT fs_a.h();
RESET ROLE;
-- DROP SCHEMA: functions and the triggers using them
CREATE SCHEMA fs_c;
CREATE FUNCTION fs_c.one() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE PROCEDURE fs_c.pr(a int, b text) LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION fs_c.ctrg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER fs_ctr AFTER INSERT ON fs_a.fs_t FOR EACH ROW EXECUTE FUNCTION fs_c.ctrg();
DROP SCHEMA fs_c;
BEGIN;
DROP SCHEMA fs_c CASCADE;
SELECT count(*) FROM pg_trigger WHERE tgname = 'fs_ctr';
ROLLBACK;
SELECT fs_c.one();
DROP SCHEMA fs_c CASCADE;
SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'fs_c';
-- @@ read-only
SELECT fs_a.f(1), fs_b.f(2), fs_b.g('x'), fs_a.h(), k2(3);
SET search_path = fs_b, fs_a, public;
SELECT f(7), g('s');
RESET search_path;
SELECT p.proname, n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname LIKE 'fs\_%' ORDER BY 2, 1;
SELECT * FROM fs_a.fs_t ORDER BY id;
