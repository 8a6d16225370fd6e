-- functions_execute: the EXECUTE privilege on functions and procedures:
-- PUBLIC holds it by default; GRANT / REVOKE EXECUTE ON FUNCTION |
-- PROCEDURE | ROUTINE | ALL FUNCTIONS IN SCHEMA; calls without it fail
-- with 42501; owners and superusers; proacl; has_function_privilege.
-- The standby then answers the same checks.
CREATE ROLE fx_owner LOGIN;
CREATE ROLE fx_user LOGIN;
CREATE ROLE fx_group NOLOGIN;
GRANT fx_group TO fx_user;
GRANT CREATE ON SCHEMA public TO fx_owner;
SET ROLE fx_owner;
CREATE FUNCTION fx_add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b';
CREATE FUNCTION fx_add(a text, b text) RETURNS text LANGUAGE sql AS 'SELECT a || b';
CREATE FUNCTION fx_one() RETURNS int LANGUAGE plpgsql AS 'BEGIN RETURN 1; END';
CREATE FUNCTION fx_definer_one() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'SELECT fx_one() + 10';
CREATE PROCEDURE fx_proc() LANGUAGE plpgsql AS $$BEGIN RAISE NOTICE 'fx_proc ran'; END$$;
RESET ROLE;
SELECT proname, pg_get_function_identity_arguments(oid) AS args, proacl
  FROM pg_proc WHERE proname LIKE 'fx\_%' ORDER BY proname, args;
-- PUBLIC may call by default.
SET ROLE fx_user;
SELECT fx_add(1, 2), fx_add('a'::text, 'b'::text), fx_one();
CALL fx_proc();
RESET ROLE;
-- Only the owner (or a superuser) may grant.
SET ROLE fx_user;
REVOKE EXECUTE ON FUNCTION fx_one() FROM PUBLIC;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION fx_one() FROM PUBLIC;
REVOKE ALL ON FUNCTION fx_add(int, int) FROM PUBLIC;
REVOKE EXECUTE ON PROCEDURE fx_proc FROM PUBLIC;
SELECT proname, pg_get_function_identity_arguments(oid) AS args, proacl
  FROM pg_proc WHERE proname LIKE 'fx\_%' ORDER BY proname, args;
SET ROLE fx_user;
SELECT fx_one();
SELECT fx_add(1, 2);
SELECT fx_add('a'::text, 'b'::text);
SELECT fx_definer_one();
CALL fx_proc();
RESET ROLE;
-- The owner keeps its own right; a superuser always may call.
SET ROLE fx_owner;
SELECT fx_one(), fx_add(1, 2);
CALL fx_proc();
RESET ROLE;
SELECT fx_one();
-- Grants to a role, through membership, WITH GRANT OPTION.
GRANT EXECUTE ON FUNCTION fx_one() TO fx_group;
GRANT EXECUTE ON PROCEDURE fx_proc() TO fx_user WITH GRANT OPTION;
GRANT EXECUTE ON ROUTINE fx_add(int, int) TO fx_user;
SELECT proname, pg_get_function_identity_arguments(oid) AS args, proacl
  FROM pg_proc WHERE proname LIKE 'fx\_%' ORDER BY proname, args;
SET ROLE fx_user;
SELECT fx_one(), fx_add(1, 2);
CALL fx_proc();
RESET ROLE;
-- has_function_privilege.
SELECT has_function_privilege('fx_user', 'fx_one()', 'EXECUTE'),
       has_function_privilege('fx_user', 'fx_add(text, text)', 'EXECUTE'),
       has_function_privilege('fx_user', 'fx_proc()', 'EXECUTE WITH GRANT OPTION'),
       has_function_privilege('fx_owner', 'fx_one()', 'EXECUTE');
SELECT has_function_privilege('fx_one()', 'execute');
SELECT has_function_privilege('fx_user', 'fx_nosuch()', 'EXECUTE');
SELECT has_function_privilege('fx_user', 'fx_one()', 'SELECT');
-- Errors.
GRANT SELECT ON FUNCTION fx_one() TO fx_user;
GRANT EXECUTE ON FUNCTION fx_nosuch() TO fx_user;
GRANT EXECUTE ON FUNCTION fx_add TO fx_user;
GRANT EXECUTE ON PROCEDURE fx_one() TO fx_user;
GRANT EXECUTE ON FUNCTION fx_proc() TO fx_user;
-- ALL FUNCTIONS IN SCHEMA; REVOKE from a role.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
GRANT EXECUTE ON ALL ROUTINES IN SCHEMA public TO fx_group;
REVOKE EXECUTE ON FUNCTION fx_one() FROM fx_group;
SELECT proname, pg_get_function_identity_arguments(oid) AS args, proacl
  FROM pg_proc WHERE proname LIKE 'fx\_%' ORDER BY proname, args;
SET ROLE fx_user;
SELECT fx_one();
SELECT fx_add('a'::text, 'b'::text);
RESET ROLE;
\df+ fx_one
-- CREATE TRIGGER needs EXECUTE on its function (the trigger then fires
-- it for whoever writes).
SET ROLE fx_owner;
CREATE TABLE fx_trig_t (id int);
CREATE FUNCTION fx_trig() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
REVOKE EXECUTE ON FUNCTION fx_trig() FROM PUBLIC;
GRANT TRIGGER, INSERT ON fx_trig_t TO fx_user;
RESET ROLE;
SET ROLE fx_user;
CREATE TRIGGER fx_trig BEFORE INSERT ON fx_trig_t FOR EACH ROW EXECUTE FUNCTION fx_trig();
RESET ROLE;
SET ROLE fx_owner;
CREATE TRIGGER fx_trig BEFORE INSERT ON fx_trig_t FOR EACH ROW EXECUTE FUNCTION fx_trig();
RESET ROLE;
SET ROLE fx_user;
INSERT INTO fx_trig_t VALUES (1);
RESET ROLE;
SELECT * FROM fx_trig_t;
-- @@ read-only
SELECT proname, pg_get_function_identity_arguments(oid) AS args, proacl
  FROM pg_proc WHERE proname LIKE 'fx\_%' ORDER BY proname, args;
SET ROLE fx_user;
SELECT fx_one();
SELECT fx_add(1, 2), fx_add('a'::text, 'b'::text);
SELECT fx_definer_one();
RESET ROLE;
SELECT has_function_privilege('fx_user', 'fx_one()', 'EXECUTE'),
       has_function_privilege('fx_user', 'fx_add(int, int)', 'EXECUTE');
