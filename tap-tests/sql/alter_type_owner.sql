-- ALTER TYPE … OWNER TO: the owner's checks and messages, SESSION_USER /
-- CURRENT_ROLE, the types that go with another object, ROLLBACK, and
-- REASSIGN OWNED / DROP OWNED seeing the new owner.
CREATE ROLE at_a;
CREATE ROLE at_b;
CREATE ROLE at_c;
CREATE TYPE at_mood AS ENUM ('sad', 'ok');
SELECT typname, pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'at_mood';
ALTER TYPE at_mood OWNER TO at_a;
SELECT typname, pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'at_mood';
ALTER TYPE at_mood OWNER TO at_a;
ALTER TYPE at_nope OWNER TO at_a;
ALTER TYPE at_mood OWNER TO at_nobody;
ALTER TYPE at_mood OWNER TO public;
ALTER TYPE at_mood OWNER TO CURRENT_USER;
SELECT typname, pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'at_mood';
ALTER TYPE at_mood OWNER TO at_a;
SET ROLE at_b;
ALTER TYPE at_mood OWNER TO at_b;
RESET ROLE;
GRANT at_a TO at_b;
SET ROLE at_b;
ALTER TYPE at_mood OWNER TO at_c;
ALTER TYPE at_mood OWNER TO at_b;
RESET ROLE;
GRANT CREATE ON SCHEMA public TO at_b;
SET ROLE at_b;
ALTER TYPE at_mood OWNER TO at_b;
ALTER TYPE at_mood OWNER TO CURRENT_ROLE;
ALTER TYPE at_mood OWNER TO SESSION_USER;
RESET ROLE;
SELECT typname, pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'at_mood';
CREATE TABLE at_tab (a int);
ALTER TYPE at_tab OWNER TO at_a;
ALTER TYPE _at_mood OWNER TO at_a;
BEGIN;
ALTER TYPE at_mood OWNER TO at_c;
SELECT pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'at_mood';
ROLLBACK;
SELECT pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'at_mood';
REASSIGN OWNED BY at_b TO at_c;
SELECT pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'at_mood';
DROP ROLE at_c;
DROP OWNED BY at_c;
SELECT count(*) FROM pg_type WHERE typname = 'at_mood';
DROP ROLE at_c;
-- A relation's new owner needs CREATE on its schema too.
ALTER TABLE at_tab OWNER TO at_a;
REVOKE CREATE ON SCHEMA public FROM at_b;
SET ROLE at_b;
ALTER TABLE at_tab OWNER TO at_b;
RESET ROLE;
DROP TABLE at_tab;
-- Kept for the standby: a type owned by a role.
CREATE TYPE at_kept AS ENUM ('a');
ALTER TYPE at_kept OWNER TO at_a;
-- @@ read-only
SELECT typname, pg_get_userbyid(typowner) FROM pg_type WHERE typname IN ('at_kept', '_at_kept') ORDER BY 1;
