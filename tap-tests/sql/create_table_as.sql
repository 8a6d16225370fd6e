-- create_table_as: CREATE TABLE … AS and SELECT … INTO — the new table's
-- columns take the query's names (or the names listed) and types (typmods
-- and arrays kept), the tag counts the rows, WITH NO DATA makes it empty,
-- IF NOT EXISTS skips, a failing query leaves no table, and the tables
-- replicate.
CREATE TABLE cta_src (a int, b numeric(6,2), c varchar(10), d text);
INSERT INTO cta_src VALUES (1, 1.5, 'x', 'y'), (2, NULL, 'z', NULL), (3, 2.25, NULL, 'w');
CREATE TABLE cta_all AS SELECT * FROM cta_src WHERE a > 1;
CREATE TABLE IF NOT EXISTS cta_all AS SELECT 1;
CREATE TABLE cta_all AS SELECT 1;
CREATE TABLE cta_named (x, y) AS SELECT a, b, c FROM cta_src;
CREATE TABLE cta_too_many (x, y, z, w, v) AS SELECT a, b FROM cta_src;
CREATE TABLE cta_dup AS SELECT a AS k, a AS k FROM cta_src;
CREATE TABLE cta_empty AS SELECT a, d, ARRAY[a, a] AS arr FROM cta_src WITH NO DATA;
CREATE TABLE cta_data AS SELECT count(*) AS n, sum(b) AS total FROM cta_src WITH DATA;
CREATE TABLE cta_values AS VALUES (1, 'a'), (2, 'b');
CREATE TABLE cta_table AS TABLE cta_src;
CREATE TABLE cta_join AS SELECT s.a, v.column2 AS tag FROM cta_src s JOIN cta_values v ON v.column1 = s.a;
CREATE TABLE cta_null AS SELECT NULL AS n, 'lit' AS l, 2.5 AS num;
CREATE TABLE cta_fail AS SELECT 1 / (a - 2) AS q FROM cta_src;
SELECT count(*) FROM pg_class WHERE relname = 'cta_fail';
SELECT a, b INTO cta_into FROM cta_src WHERE d IS NOT NULL;
BEGIN;
CREATE TABLE cta_rolled AS SELECT 1 AS a;
SELECT * FROM cta_rolled;
ROLLBACK;
SELECT count(*) FROM pg_class WHERE relname = 'cta_rolled';
BEGIN READ ONLY;
CREATE TABLE cta_ro AS SELECT 1 AS a;
ROLLBACK;
-- @@ read-only
\d cta_all
\d cta_named
\d cta_empty
\d cta_data
\d cta_values
\d cta_null
\d cta_into
SELECT * FROM cta_all ORDER BY a;
SELECT * FROM cta_named ORDER BY x;
SELECT count(*) FROM cta_empty;
SELECT * FROM cta_data;
SELECT * FROM cta_table ORDER BY a;
SELECT * FROM cta_join ORDER BY a;
SELECT * FROM cta_null;
SELECT * FROM cta_into ORDER BY a;
