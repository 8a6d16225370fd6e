-- privileges_owner_checks: what only an object's owner may do — COMMENT
-- ON each kind of object, CREATE OR REPLACE VIEW of another role's view,
-- ALTER TYPE — and the owner of a type a role creates; the standby then
-- reads the owners and comments.
CREATE ROLE cw_a LOGIN;
CREATE ROLE cw_b LOGIN;
CREATE ROLE cw_sup SUPERUSER;
CREATE TABLE cw_t (a int PRIMARY KEY, b int CONSTRAINT cw_chk CHECK (b > 0));
CREATE INDEX cw_i ON cw_t (b);
CREATE VIEW cw_v AS SELECT a FROM cw_t;
CREATE SEQUENCE cw_s;
CREATE SCHEMA cw_sch;
CREATE TYPE cw_e AS ENUM ('x');
GRANT ALL ON cw_t, cw_v, cw_s TO cw_a;
GRANT CREATE ON SCHEMA public TO cw_a;
SET ROLE cw_a;
-- Privileges on an object are not ownership.
COMMENT ON TABLE cw_t IS 'x';
COMMENT ON COLUMN cw_t.a IS 'x';
COMMENT ON COLUMN cw_v.a IS 'x';
COMMENT ON INDEX cw_i IS 'x';
COMMENT ON VIEW cw_v IS 'x';
COMMENT ON SEQUENCE cw_s IS 'x';
COMMENT ON SCHEMA cw_sch IS 'x';
COMMENT ON TYPE cw_e IS 'x';
COMMENT ON CONSTRAINT cw_chk ON cw_t IS 'x';
COMMENT ON ROLE cw_b IS 'x';
COMMENT ON ROLE cw_sup IS 'x';
COMMENT ON DATABASE postgres IS 'x';
CREATE OR REPLACE VIEW cw_v AS SELECT a FROM cw_t;
ALTER TYPE cw_e ADD VALUE 'y';
ALTER TYPE cw_e RENAME VALUE 'x' TO 'z';
ALTER TYPE cw_e RENAME TO cw_e2;
-- What cw_a creates is its own.
CREATE TYPE cw_mine AS ENUM ('p');
ALTER TYPE cw_mine ADD VALUE 'q';
COMMENT ON TYPE cw_mine IS 'mine';
CREATE VIEW cw_myview AS SELECT 1 AS one;
CREATE OR REPLACE VIEW cw_myview AS SELECT 2 AS one;
COMMENT ON VIEW cw_myview IS 'my view';
COMMENT ON COLUMN cw_myview.one IS 'my column';
RESET ROLE;
SET ROLE cw_b;
ALTER TYPE cw_mine ADD VALUE 'r';
COMMENT ON TYPE cw_mine IS 'not mine';
RESET ROLE;
-- A member of the owning role may.
GRANT cw_a TO cw_b;
SET ROLE cw_b;
COMMENT ON TYPE cw_mine IS 'through membership';
RESET ROLE;
REVOKE cw_a FROM cw_b;
SELECT typname, pg_get_userbyid(typowner) FROM pg_type WHERE typname LIKE 'cw\_%' AND typtype = 'e' ORDER BY 1;
SELECT enum_range(NULL::cw_mine);
DROP ROLE cw_a;
-- A view reads its tables with its owner's rights: the caller needs
-- SELECT on the view only, and the owner's rights count, not the caller's.
CREATE ROLE cw_vown LOGIN;
CREATE ROLE cw_vuser LOGIN;
CREATE TABLE cw_base (a int, secret int);
INSERT INTO cw_base VALUES (1, 42);
GRANT SELECT ON cw_base TO cw_vown;
GRANT CREATE ON SCHEMA public TO cw_vown;
SET ROLE cw_vown;
CREATE VIEW cw_bv AS SELECT a FROM cw_base;
GRANT SELECT ON cw_bv TO cw_vuser;
RESET ROLE;
SET ROLE cw_vuser;
SELECT * FROM cw_bv;
SELECT * FROM cw_base;
RESET ROLE;
REVOKE SELECT ON cw_base FROM cw_vown;
SET ROLE cw_vuser;
SELECT * FROM cw_bv;
RESET ROLE;
GRANT SELECT (a) ON cw_base TO cw_vown;
SET ROLE cw_vuser;
SELECT * FROM cw_bv;
RESET ROLE;
-- Nested: a view of cw_vuser's over cw_vown's view.
GRANT CREATE ON SCHEMA public TO cw_vuser;
SET ROLE cw_vuser;
CREATE VIEW cw_nested AS SELECT a + 1 AS b FROM cw_bv;
SELECT * FROM cw_nested;
RESET ROLE;
REVOKE SELECT (a) ON cw_base FROM cw_vown;
SET ROLE cw_vuser;
SELECT * FROM cw_nested;
RESET ROLE;
-- A superuser reading a view still needs the view owner's rights on
-- what the view reads (unless the owner is a superuser too).
CREATE TABLE cw_sbase (a int);
INSERT INTO cw_sbase VALUES (7);
CREATE VIEW cw_sview AS SELECT * FROM cw_sbase;
CREATE VIEW cw_sview_super AS SELECT * FROM cw_sbase;
ALTER VIEW cw_sview OWNER TO cw_vown;
SELECT * FROM cw_sview;
SELECT 1 AS one WHERE EXISTS (SELECT 1 FROM cw_sview);
SELECT * FROM cw_sview_super;
CREATE VIEW cw_sview_outer AS SELECT * FROM cw_sview;
SELECT * FROM cw_sview_outer;
GRANT SELECT ON cw_sbase TO cw_vown;
SELECT * FROM cw_sview;
SELECT * FROM cw_sview_outer;
REVOKE SELECT ON cw_sbase FROM cw_vown;
-- @@ read-only
SELECT * FROM cw_sview;
SELECT * FROM cw_sview_super;
SELECT typname, pg_get_userbyid(typowner) FROM pg_type WHERE typname LIKE 'cw\_%' AND typtype = 'e' ORDER BY 1;
SELECT obj_description('cw_mine'::regtype, 'pg_type'), obj_description('cw_myview'::regclass, 'pg_class');
SELECT col_description('cw_myview'::regclass, 1);
