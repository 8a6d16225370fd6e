-- functions_owner: ALTER FUNCTION | PROCEDURE | ROUTINE … OWNER TO moves the
-- old owner's items of an explicit EXECUTE list to the new owner
-- (aclnewowner), DROP FUNCTION takes the list with it (ROLLBACK brings
-- it back), and DROP ROLE names a function its grants depend on.
CREATE ROLE fo_alice; CREATE ROLE fo_bob; CREATE ROLE fo_carol;
CREATE FUNCTION fo_f(int) RETURNS int LANGUAGE sql AS 'SELECT $1';
ALTER FUNCTION fo_f(int) OWNER TO fo_alice;
REVOKE ALL ON FUNCTION fo_f(int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fo_f(int) TO fo_carol WITH GRANT OPTION;
SET ROLE fo_carol; GRANT EXECUTE ON FUNCTION fo_f(int) TO fo_bob; RESET ROLE;
SELECT proowner::regrole, proacl FROM pg_proc WHERE proname = 'fo_f';
ALTER FUNCTION fo_f(int) OWNER TO fo_bob;
SELECT proowner::regrole, proacl FROM pg_proc WHERE proname = 'fo_f';
CREATE PROCEDURE fo_p() LANGUAGE sql AS 'SELECT 1';
GRANT EXECUTE ON PROCEDURE fo_p() TO fo_carol;
ALTER PROCEDURE fo_p() OWNER TO fo_alice;
SELECT proowner::regrole, proacl FROM pg_proc WHERE proname = 'fo_p';
ALTER ROUTINE fo_p() OWNER TO fo_bob;
SELECT proowner::regrole, proacl FROM pg_proc WHERE proname = 'fo_p';
CREATE ROLE fo_y;
CREATE FUNCTION fo_h(int, text) RETURNS int LANGUAGE sql AS 'SELECT $1';
GRANT EXECUTE ON FUNCTION fo_h(int, text) TO fo_y;
DROP ROLE fo_y;
BEGIN;
DROP FUNCTION fo_h(int, text);
ROLLBACK;
SELECT proacl FROM pg_proc WHERE proname = 'fo_h';
DROP FUNCTION fo_h(int, text);
DROP ROLE fo_y;
-- @@ read-only
SELECT proname, proowner::regrole, proacl FROM pg_proc WHERE proname LIKE 'fo\_%' ORDER BY 1;
