-- select_misc_ext: DISTINCT ON, FETCH FIRST (ONLY and WITH TIES), and
-- VALUES as a query and as a FROM item.
CREATE TABLE miscx_t (id int, k text, v int, note text);
INSERT INTO miscx_t VALUES
  (1, 'a', 3, 'x'), (2, 'a', 1, NULL), (3, 'a', NULL, 'y'), (4, 'b', 2, 'x'),
  (5, 'b', 2, 'z'), (6, NULL, 5, NULL), (7, 'c', NULL, NULL), (8, 'c', 9, 'x');
-- @@ read-only
-- DISTINCT ON
SELECT DISTINCT ON (k) k, id, v FROM miscx_t ORDER BY k, v DESC NULLS LAST, id;
SELECT DISTINCT ON (k) k, id, v FROM miscx_t ORDER BY k NULLS FIRST, v, id;
SELECT DISTINCT ON (v) v, id FROM miscx_t ORDER BY v, id DESC;
SELECT DISTINCT ON (k, note) k, note, id FROM miscx_t ORDER BY k, note, id;
-- LIMIT / OFFSET / FETCH FIRST
SELECT id FROM miscx_t ORDER BY id FETCH FIRST 2 ROWS ONLY;
SELECT id FROM miscx_t ORDER BY id OFFSET 2 ROWS FETCH NEXT 3 ROWS ONLY;
SELECT id FROM miscx_t ORDER BY id FETCH FIRST ROW ONLY;
SELECT * FROM (SELECT id, v FROM miscx_t ORDER BY v NULLS LAST FETCH FIRST 2 ROWS WITH TIES) t ORDER BY id;
-- VALUES as a table
VALUES (1, 'one'), (2, 'two'), (3, NULL) ORDER BY 1 DESC;
SELECT * FROM (VALUES (1, 'one'), (2, 'two'), (2, 'two')) AS t(n, name) ORDER BY n;
SELECT t.n, count(*) FROM (VALUES (1), (1), (2), (NULL)) AS t(n) GROUP BY t.n ORDER BY t.n;
SELECT m.id, v.label FROM miscx_t m JOIN (VALUES ('a', 'first'), ('b', 'second')) AS v(k, label) ON v.k = m.k ORDER BY m.id;
SELECT column1, column2 FROM (VALUES (1, 2.5), (3, NULL)) AS t ORDER BY column1;
-- errors
SELECT DISTINCT ON (k) k, id FROM miscx_t ORDER BY id;
SELECT id FROM miscx_t FETCH FIRST 2 ROWS WITH TIES;
