-- errors: semantic errors carry the cursor position psql prints as
-- "LINE 1: …" and a caret, as PostgreSQL's parse analysis reports them.
CREATE TABLE err_t (id int PRIMARY KEY, name text, qty int);
INSERT INTO err_t VALUES (1, 'a', 1), (2, 'b', NULL), (3, 'b', 3);
-- statements that fail before writing anything
INSERT INTO err_t VALUES (7, 'bad', 'x');
INSERT INTO err_t (id, nosuch) VALUES (9, 1);
INSERT INTO err_t VALUES (10, 'a', 1, 'extra');
-- @@ read-only
SELECT nosuchcolumn FROM err_t;
SELECT * FROM err_nosuchtable;
SELECT name, count(*) FROM err_t;
SELECT id FROM err_t ORDER BY nosuch;
SELECT id FROM err_t WHERE name = 1;
SELECT id FROM err_t WHERE qty = 'x';
SELECT nosuchfunc(id) FROM err_t;
SELECT id FROM err_t GROUP BY name;
SELECT count(count(*)) FROM err_t;
SELECT id FROM err_t WHERE count(*) > 1;
SELECT err_t.nosuch FROM err_t;
SELECT x.id FROM err_t;
SELECT id FROM err_t ORDER BY 5;
SELECT sum(qty) FROM err_t GROUP BY 9;
SELECT id FROM err_t LIMIT 'x';
SELECT sum(name) FROM err_t;
SELECT round(1.5, 'x');
SELECT 'x' + 1;
SELECT id FROM err_t WHERE qty;
SELECT id FROM err_t WHERE name > 1;
SELECT 'abc'::int;
SELECT '99999'::smallint;
SELECT 'maybe'::bool;
-- comparison operators do not chain
SELECT 1 < 2 = true;
