-- views: CREATE [OR REPLACE] VIEW, ALTER VIEW RENAME, DROP VIEW [CASCADE],
-- views in queries, dependencies, the catalogs and pg_get_viewdef, psql's
-- \dv and \d+ for views.
CREATE TABLE vw_t (a int, b text, c numeric);
CREATE TABLE vw_u (a int, d text);
INSERT INTO vw_t VALUES (1, 'x', 1.5), (2, 'y', NULL), (3, 'z', 3.0);
INSERT INTO vw_u VALUES (1, 'one'), (3, 'three'), (4, 'four');
CREATE VIEW vw_1 AS SELECT a, b FROM vw_t WHERE a > 1;
CREATE VIEW vw_2 AS SELECT a+1, b AS x, 'lit' AS l, count(*) OVER () FROM vw_t;
CREATE VIEW vw_3 AS SELECT vw_t.a, d FROM vw_t JOIN vw_u ON vw_t.a = vw_u.a
  WHERE b = 'x' AND c IS NOT NULL ORDER BY 1 LIMIT 5;
CREATE VIEW vw_4 AS SELECT a, count(*) FROM vw_t GROUP BY a HAVING count(*) > 0 ORDER BY a DESC;
CREATE VIEW vw_5 AS SELECT * FROM vw_t LEFT JOIN vw_u USING (a);
CREATE VIEW vw_6 AS SELECT t.a FROM vw_t t, vw_u WHERE t.a = vw_u.a OR t.b LIKE 'z%';
CREATE VIEW vw_7 AS SELECT 1 AS one;
CREATE VIEW vw_8 AS SELECT a FROM vw_1 WHERE a IN (SELECT a FROM vw_u) AND b BETWEEN 'a' AND 'z';
CREATE VIEW vw_9 AS SELECT DISTINCT a::text, coalesce(b, 'n') FROM vw_t ORDER BY 1 OFFSET 1;
CREATE VIEW vw_cols (p, q) AS SELECT a, b FROM vw_t;
CREATE VIEW vw_part (p) AS SELECT a, b FROM vw_t;
-- errors
CREATE VIEW vw_1 AS SELECT 1;
CREATE VIEW vw_t AS SELECT 1;
CREATE OR REPLACE VIEW vw_t AS SELECT 1;
CREATE VIEW vw_bad (x, y, z) AS SELECT 1, 2;
CREATE VIEW vw_dup AS SELECT 1 AS a, 2 AS a;
CREATE TABLE vw_1 (a int);
CREATE SEQUENCE vw_1;
-- CREATE OR REPLACE: columns may only be added at the end
CREATE OR REPLACE VIEW vw_cols AS SELECT a AS p, b AS q, c AS r FROM vw_t;
CREATE OR REPLACE VIEW vw_cols AS SELECT a AS p FROM vw_t;
CREATE OR REPLACE VIEW vw_cols AS SELECT a AS p, b AS z, c AS r FROM vw_t;
CREATE OR REPLACE VIEW vw_cols AS SELECT b AS p, b AS q, c AS r FROM vw_t;
-- rename
CREATE VIEW vw_old AS SELECT b FROM vw_t WHERE a = 1;
ALTER VIEW vw_old RENAME TO vw_new;
ALTER TABLE vw_new RENAME TO vw_renamed;
ALTER VIEW vw_renamed RENAME TO vw_1;
-- transactions
BEGIN;
CREATE VIEW vw_tx AS SELECT 1 AS x;
SELECT * FROM vw_tx;
ROLLBACK;
SELECT count(*) FROM pg_class WHERE relname = 'vw_tx';
BEGIN;
CREATE OR REPLACE VIEW vw_part AS SELECT a AS p, b, c FROM vw_t;
ROLLBACK;
SELECT * FROM vw_part ORDER BY p;
BEGIN;
DROP VIEW vw_7;
ROLLBACK;
SELECT * FROM vw_7;
-- dependencies
CREATE TABLE vw_d (k int);
CREATE VIEW vw_d1 AS SELECT k FROM vw_d;
CREATE VIEW vw_d2 AS SELECT k FROM vw_d1;
CREATE VIEW vw_d3 AS SELECT k FROM vw_d;
DROP TABLE vw_d;
DROP VIEW vw_d1;
DROP VIEW vw_d2, vw_d1;
DROP TABLE vw_d CASCADE;
CREATE TABLE vw_d (k int);
CREATE VIEW vw_d1 AS SELECT k FROM vw_d;
CREATE VIEW vw_d2 AS SELECT k FROM vw_d1;
DROP VIEW vw_d1 CASCADE;
BEGIN;
CREATE VIEW vw_d1 AS SELECT k FROM vw_d;
DROP TABLE vw_d CASCADE;
ROLLBACK;
SELECT relname FROM pg_class WHERE relname LIKE 'vw\_d%' ORDER BY 1;
DROP TABLE vw_d;
DROP VIEW vw_nope;
DROP VIEW IF EXISTS vw_nope, vw_nope2;
DROP VIEW vw_t;
-- writes are refused
INSERT INTO vw_4 VALUES (1, 1);
UPDATE vw_3 SET d = 'x';
DELETE FROM vw_9;
-- columns: DROP COLUMN read by a view, renames followed by the view
CREATE TABLE vw_rc_t (a int, b text, c int);
INSERT INTO vw_rc_t VALUES (1, 'x', 10);
CREATE VIEW vw_rc_v AS SELECT a, b FROM vw_rc_t WHERE vw_rc_t.a > 0;
CREATE VIEW vw_rc_w AS SELECT b FROM vw_rc_v;
CREATE VIEW vw_rc_s AS SELECT * FROM vw_rc_t;
ALTER TABLE vw_rc_t DROP COLUMN b;
ALTER TABLE vw_rc_t DROP COLUMN c;
DROP VIEW vw_rc_s;
ALTER TABLE vw_rc_t DROP COLUMN c;
ALTER TABLE vw_rc_t RENAME TO vw_rc_t2;
ALTER TABLE vw_rc_t2 RENAME COLUMN a TO aa;
ALTER VIEW vw_rc_v RENAME TO vw_rc_v2;
SELECT * FROM vw_rc_w;
SELECT * FROM vw_rc_v2;
SELECT pg_get_viewdef('vw_rc_v2'::regclass, true);
SELECT pg_get_viewdef('vw_rc_w'::regclass, true);
ALTER TABLE vw_rc_t2 DROP COLUMN b CASCADE;
SELECT relname FROM pg_class WHERE relname LIKE 'rc\_%' ORDER BY 1;
DROP TABLE vw_rc_t2;
-- @@ read-only
SELECT * FROM vw_1 ORDER BY a;
SELECT * FROM vw_2 ORDER BY 1;
SELECT * FROM vw_3;
SELECT * FROM vw_4;
SELECT * FROM vw_5 ORDER BY a;
SELECT * FROM vw_6 ORDER BY a;
SELECT * FROM vw_7;
SELECT * FROM vw_8 ORDER BY a;
SELECT * FROM vw_9 ORDER BY 1;
SELECT * FROM vw_cols ORDER BY p;
SELECT * FROM vw_part ORDER BY p;
SELECT v.a, u.d FROM vw_1 v JOIN vw_u u USING (a) ORDER BY 1;
SELECT * FROM vw_1 AS v (m, n) WHERE m > 2;
SELECT (SELECT count(*) FROM vw_1), EXISTS (SELECT 1 FROM vw_8 WHERE a = 3);
WITH w AS (SELECT * FROM vw_1) SELECT max(a) FROM w;
SELECT * FROM (SELECT b FROM vw_1) s ORDER BY b;
SELECT vw_1.* FROM vw_1 ORDER BY 1;
SELECT viewname, definition FROM pg_views WHERE viewname LIKE 'vw\_%' ORDER BY 1;
SELECT pg_get_viewdef('vw_3', true);
SELECT pg_get_viewdef('vw_3'::regclass);
SELECT pg_get_viewdef('vw_8'::regclass, true);
SELECT relname, relkind, relam, relhasrules, relnatts, relpages FROM pg_class
  WHERE relname LIKE 'vw\_%' ORDER BY 1;
SELECT attname, atttypid::regtype, attnum FROM pg_attribute
  WHERE attrelid = 'vw_cols'::regclass ORDER BY attnum;
SELECT r.rulename, r.ev_type, r.is_instead FROM pg_rewrite r
  WHERE r.ev_class = 'vw_1'::regclass;
SELECT DISTINCT c.relname, d.deptype FROM pg_depend d JOIN pg_rewrite r ON d.objid = r.oid
  JOIN pg_class c ON c.oid = d.refobjid
  WHERE r.ev_class = 'vw_8'::regclass ORDER BY 1, 2;
SELECT table_name, table_type FROM information_schema.tables
  WHERE table_name LIKE 'vw\_%' ORDER BY 1;
SELECT table_name, view_definition, is_updatable FROM information_schema.views
  WHERE table_name IN ('vw_1', 'vw_7') ORDER BY 1;
SELECT column_name, data_type FROM information_schema.columns
  WHERE table_name = 'vw_2' ORDER BY ordinal_position;
\dv vw_*
\d vw_1
\d+ vw_4
\d vw_[3-5]
