-- functions_security: SECURITY DEFINER / INVOKER and SET clauses of
-- CREATE / ALTER FUNCTION and PROCEDURE: current_user and every privilege
-- check inside a definer's call are the owner's and come back after it
-- (also after an error, and in an EXCEPTION handler); SET clauses hold
-- for the call only; prosecdef / proconfig; pg_get_functiondef and \sf.
-- The standby then runs the read-only functions.
CREATE ROLE fs_owner LOGIN;
CREATE ROLE fs_caller LOGIN;
CREATE SCHEMA fs_s;
GRANT USAGE ON SCHEMA fs_s TO fs_owner;
GRANT CREATE ON SCHEMA public TO fs_owner;
CREATE TABLE fs_secret (id int PRIMARY KEY, v text);
INSERT INTO fs_secret VALUES (1, 'one'), (2, 'two');
ALTER TABLE fs_secret OWNER TO fs_owner;
CREATE TABLE fs_s.fs_hidden (x int);
INSERT INTO fs_s.fs_hidden VALUES (42);
ALTER TABLE fs_s.fs_hidden OWNER TO fs_owner;
CREATE SEQUENCE fs_seq;
ALTER SEQUENCE fs_seq OWNER TO fs_owner;
SET ROLE fs_owner;
CREATE FUNCTION fs_count() RETURNS bigint LANGUAGE sql SECURITY DEFINER
  AS 'SELECT count(*) FROM fs_secret';
CREATE FUNCTION fs_count_inv() RETURNS bigint LANGUAGE sql SECURITY INVOKER
  AS 'SELECT count(*) FROM fs_secret';
CREATE FUNCTION fs_who() RETURNS text LANGUAGE sql SECURITY DEFINER
  AS 'SELECT current_user || ''/'' || session_user';
CREATE FUNCTION fs_who_inv() RETURNS text LANGUAGE sql
  AS 'SELECT current_user || ''/'' || session_user';
CREATE FUNCTION fs_nested() RETURNS text LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  RETURN fs_who_inv() || ' ' || (SELECT count(*) FROM fs_secret);
END$$;
CREATE FUNCTION fs_next() RETURNS bigint LANGUAGE sql SECURITY DEFINER
  AS $$SELECT nextval('fs_seq')$$;
CREATE FUNCTION fs_fail() RETURNS int LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  RAISE EXCEPTION 'failing as %', current_user;
END$$;
CREATE FUNCTION fs_path() RETURNS int LANGUAGE sql SET search_path = fs_s, public
  AS 'SELECT x FROM fs_hidden';
CREATE FUNCTION fs_settings() RETURNS text LANGUAGE plpgsql
  SET work_mem = '64MB' SET statement_timeout TO '5s' AS $$
BEGIN
  RETURN current_setting('work_mem') || ' ' || current_setting('statement_timeout')
    || ' ' || current_setting('search_path');
END$$;
CREATE PROCEDURE fs_proc() LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  RAISE NOTICE 'proc runs as %', current_user;
END$$;
RESET ROLE;
SELECT proname, prosecdef, proconfig FROM pg_proc WHERE proname LIKE 'fs\_%' ORDER BY proname;
-- The caller may not read the table, the definer's function may.
SET ROLE fs_caller;
SELECT * FROM fs_secret;
SELECT fs_count();
SELECT fs_count_inv();
SELECT fs_who(), fs_who_inv(), current_user;
SELECT fs_nested();
SELECT fs_next();
SELECT nextval('fs_seq');
SELECT fs_fail();
SELECT current_user;
CALL fs_proc();
RESET ROLE;
SELECT fs_path();
SELECT to_regclass('fs_hidden');
-- An EXCEPTION handler sees the caller again.
CREATE FUNCTION fs_catch() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM fs_fail();
  RETURN 'not reached';
EXCEPTION WHEN raise_exception THEN
  RETURN SQLERRM || ' / handler runs as ' || current_user;
END$$;
SET ROLE fs_caller;
SELECT fs_catch();
RESET ROLE;
-- SET clauses hold for the call only, also after an error.
SHOW work_mem;
SELECT fs_settings();
SHOW work_mem;
SHOW search_path;
CREATE FUNCTION fs_bad_path() RETURNS int LANGUAGE sql SET search_path = fs_s
  AS 'SELECT 1 / (SELECT x - 42 FROM fs_hidden)';
SELECT fs_bad_path();
SHOW search_path;
SELECT to_regclass('fs_hidden');
-- Errors in SET clauses.
CREATE FUNCTION fs_e1() RETURNS int LANGUAGE sql SET no_such_setting = 1 AS 'SELECT 1';
CREATE FUNCTION fs_e2() RETURNS int LANGUAGE sql SET work_mem = 'lots' AS 'SELECT 1';
CREATE FUNCTION fs_e3() RETURNS int LANGUAGE sql SET myapp.flag = 'on' AS 'SELECT 1';
SELECT fs_e3();
-- SET FROM CURRENT.
SET work_mem = '2MB';
CREATE FUNCTION fs_fc() RETURNS text LANGUAGE sql SET work_mem FROM CURRENT
  AS $$SELECT current_setting('work_mem')$$;
RESET work_mem;
SELECT fs_fc(), current_setting('work_mem');
-- ALTER FUNCTION: SECURITY, SET, RESET.
ALTER FUNCTION fs_count_inv() SECURITY DEFINER;
ALTER FUNCTION fs_fc() SET work_mem = '8MB' SET DateStyle = 'SQL, DMY';
ALTER FUNCTION fs_path() SET search_path TO "fs_s", "public";
SELECT proname, prosecdef, proconfig FROM pg_proc WHERE proname IN ('fs_count_inv', 'fs_fc', 'fs_path') ORDER BY proname;
SET ROLE fs_caller;
SELECT fs_count_inv();
RESET ROLE;
SELECT fs_fc();
ALTER FUNCTION fs_fc() RESET work_mem;
SELECT proconfig FROM pg_proc WHERE proname = 'fs_fc';
ALTER FUNCTION fs_fc() RESET ALL;
SELECT proconfig FROM pg_proc WHERE proname = 'fs_fc';
ALTER FUNCTION fs_count_inv() EXTERNAL SECURITY INVOKER;
SELECT prosecdef FROM pg_proc WHERE proname = 'fs_count_inv';
ALTER PROCEDURE fs_proc() SET work_mem = '1MB';
ALTER ROUTINE fs_proc() SECURITY INVOKER;
SELECT prosecdef, proconfig FROM pg_proc WHERE proname = 'fs_proc';
-- pg_get_functiondef / \sf.
SELECT pg_get_functiondef('fs_count'::regproc);
SELECT pg_get_functiondef('fs_path'::regproc);
SELECT pg_get_functiondef('fs_settings'::regproc);
CREATE FUNCTION fs_def(a int, b int DEFAULT 7, OUT c int, OUT d int)
  LANGUAGE sql IMMUTABLE STRICT SECURITY DEFINER SET search_path = public, fs_s
  AS $$SELECT a, b$$;
CREATE FUNCTION fs_tab(n int) RETURNS TABLE (i int, sq int) LANGUAGE sql STABLE
  AS $$SELECT g, g * g FROM generate_series(1, n) g$$;
CREATE FUNCTION fs_setof() RETURNS SETOF int LANGUAGE plpgsql AS $$
BEGIN
  RETURN NEXT 1;
END$$;
\sf fs_def
\sf+ fs_tab
\sf fs_setof
\sf fs_proc
\sf fs_nested
-- @@ read-only
SELECT proname, prosecdef, proconfig FROM pg_proc WHERE proname LIKE 'fs\_%' ORDER BY proname;
SET ROLE fs_caller;
SELECT * FROM fs_secret;
SELECT fs_count();
SELECT fs_who(), fs_who_inv();
SELECT fs_nested();
SELECT fs_fail();
SELECT current_user;
SELECT fs_catch();
RESET ROLE;
SELECT fs_path();
SELECT fs_settings();
SHOW work_mem;
\sf fs_def
