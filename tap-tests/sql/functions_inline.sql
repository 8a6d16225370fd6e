-- functions_inline: simple LANGUAGE sql functions (one SELECT of an
-- expression) are inlined into the calling statement, as PostgreSQL's
-- inline_function does: the same results, and an error inside carries no
-- "SQL function" CONTEXT line (a function that is not inlined keeps it).
CREATE TABLE inl_t (id int PRIMARY KEY, v text, n numeric);
INSERT INTO inl_t SELECT g, 'v' || g, g * 1.5 FROM generate_series(1, 6) AS g;
ANALYZE inl_t;
CREATE FUNCTION inl_add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b';
CREATE FUNCTION inl_tag(t text) RETURNS text LANGUAGE sql AS $$ SELECT upper(t) || '!' $$;
CREATE FUNCTION inl_pos(x int) RETURNS boolean LANGUAGE sql AS 'SELECT $1 > 0';
CREATE FUNCTION inl_twice(x int) RETURNS int LANGUAGE sql AS 'SELECT x + x';
CREATE FUNCTION inl_num(x int) RETURNS numeric LANGUAGE sql AS 'SELECT x';
CREATE FUNCTION inl_strict(a int, b int) RETURNS int LANGUAGE sql STRICT AS 'SELECT coalesce(a, 0) + b';
CREATE FUNCTION inl_from(x int) RETURNS int LANGUAGE sql AS 'SELECT count(*)::int FROM inl_t WHERE id < x';
CREATE FUNCTION inl_two(x int) RETURNS int LANGUAGE sql AS 'SELECT 1; SELECT x * 2';
SELECT id FROM inl_t WHERE inl_add(id, 1) > 4 ORDER BY id;
SELECT id, inl_tag(v) FROM inl_t WHERE inl_tag(v) = 'V3!';
SELECT id FROM inl_t WHERE inl_pos(id - 3) ORDER BY id;
SELECT id, inl_twice(id), inl_twice(id * 10), inl_num(id) FROM inl_t ORDER BY id;
SELECT inl_add(NULL, 1), inl_strict(NULL, 1), inl_strict(2, 3), inl_two(4);
SELECT inl_from(4), inl_add(inl_add(1, 2), inl_twice(3));
PREPARE inl_p(int) AS SELECT inl_add($1, 10), inl_tag($1::text);
EXECUTE inl_p(5);
-- errors: inlined (no CONTEXT), and a call (STRICT is never inlined here)
CREATE FUNCTION inl_div(a int) RETURNS int LANGUAGE sql AS 'SELECT 10 / a';
CREATE FUNCTION inl_div_strict(a int) RETURNS int LANGUAGE sql STRICT AS 'SELECT 10 / a';
SELECT inl_div(id - 1) FROM inl_t ORDER BY id;
SELECT inl_div_strict(id - 1) FROM inl_t WHERE id = 1;
-- the body follows a replaced definition
CREATE OR REPLACE FUNCTION inl_add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a * b';
SELECT id FROM inl_t WHERE inl_add(id, 2) > 8 ORDER BY id;
-- @@ read-only
SELECT id, inl_add(id, 3), inl_tag(v), inl_pos(id - 4) FROM inl_t ORDER BY id;
