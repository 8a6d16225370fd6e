-- comments: COMMENT ON TABLE / COLUMN, transactional, shown by psql's \d+
-- and the description functions; the standby then reads them.
CREATE TABLE cm_t (id int PRIMARY KEY, note text, gone int);
COMMENT ON TABLE cm_t IS 'the table';
COMMENT ON COLUMN cm_t.note IS 'a note';
COMMENT ON COLUMN cm_t.gone IS 'will go';
BEGIN;
COMMENT ON TABLE cm_t IS 'changed';
COMMENT ON COLUMN cm_t.note IS NULL;
SELECT obj_description('cm_t'::regclass, 'pg_class'), col_description('cm_t'::regclass, 2);
ROLLBACK;
ALTER TABLE cm_t DROP COLUMN gone;
COMMENT ON TABLE cm_nosuch IS 'x';
COMMENT ON COLUMN cm_t.nosuch IS 'x';
CREATE TABLE cm_u (a int);
COMMENT ON TABLE cm_u IS 'to be removed';
COMMENT ON TABLE cm_u IS '';
COMMENT ON COLUMN cm_u.a IS 'kept';
COMMENT ON COLUMN cm_u.a IS 'replaced';
-- @@ read-only
\d+ cm_t
\d+ cm_u
SELECT obj_description('cm_t'::regclass, 'pg_class'), obj_description('cm_t'::regclass),
       obj_description('cm_t'::regclass, 'pg_type'),
       col_description('cm_t'::regclass, 2), col_description('cm_t'::regclass, 1);
SELECT c.relname, d.objsubid, d.description
  FROM pg_description d JOIN pg_class c ON c.oid = d.objoid
 WHERE c.relname LIKE 'cm%' ORDER BY 1, 2;
