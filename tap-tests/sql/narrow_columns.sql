-- narrow_columns: a table scan decodes only the columns the query reads
-- (planner/narrow.rs). Each query reads some columns of a wide table
-- only through one place — a join or semi-join condition, a sort key, a
-- grouping key, a window's partition, a correlated subquery's argument,
-- a projection nobody reads, LATERAL — and must see their real values.
CREATE TABLE nc_w (id int PRIMARY KEY, a int, b text, c numeric, d date, e text, f int);
INSERT INTO nc_w SELECT g, g % 7, 'b' || (g % 5), g * 1.5, date '2020-01-01' + g, repeat('x', g % 4), g % 3
  FROM generate_series(1, 60) g;
INSERT INTO nc_w VALUES (61, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE nc_k (k int, label text, w int);
INSERT INTO nc_k SELECT g, 'k' || g, g * 10 FROM generate_series(0, 6) g;
ANALYZE;
-- @@ read-only
SELECT k.label FROM nc_k k JOIN nc_w w ON w.a = k.k WHERE w.f = 1 ORDER BY k.label, w.id LIMIT 5;
SELECT id FROM nc_w w WHERE EXISTS (SELECT 1 FROM nc_k k WHERE k.k = w.a AND k.w > w.f * 20) ORDER BY id LIMIT 6;
SELECT id FROM nc_w w WHERE NOT EXISTS (SELECT 1 FROM nc_k k WHERE k.k = w.a AND k.label <> w.b) ORDER BY id;
SELECT id FROM nc_w ORDER BY d DESC NULLS LAST, id LIMIT 3;
SELECT count(*) FROM nc_w GROUP BY b ORDER BY 1;
SELECT id, row_number() OVER (PARTITION BY f ORDER BY c DESC) FROM nc_w WHERE id < 10 ORDER BY id;
SELECT id, (SELECT label FROM nc_k WHERE k = nc_w.a) FROM nc_w WHERE id <= 8 ORDER BY id;
SELECT x.id FROM (SELECT id, coalesce(e, 'none') AS ee, 100 / (f + 1) AS q FROM nc_w) x WHERE x.id % 20 = 0 ORDER BY 1;
SELECT w.id, l.label FROM nc_w w, LATERAL (SELECT label FROM nc_k WHERE w > w.f * 10 ORDER BY k LIMIT 1) l
 WHERE w.id <= 4 ORDER BY 1;
SELECT DISTINCT ON (a) a, id FROM nc_w ORDER BY a, c DESC;
SELECT w.id FROM nc_w w LEFT JOIN nc_k k ON k.k = w.a AND k.label LIKE w.b || '%' WHERE k.k IS NULL ORDER BY 1 LIMIT 5;
SELECT sum(c) FILTER (WHERE e = 'xx'), string_agg(b, ',' ORDER BY d) FILTER (WHERE id < 4) FROM nc_w;
SELECT id FROM nc_w WHERE id IN (SELECT f FROM nc_w WHERE e = '') ORDER BY 1;
SELECT count(*) FROM nc_w w1 JOIN nc_w w2 ON w1.d = w2.d - 1 AND w1.b = w2.b;
WITH t AS (SELECT * FROM nc_w WHERE a = 3) SELECT id, e FROM t ORDER BY d LIMIT 3;
SELECT id FROM nc_w UNION SELECT a FROM nc_w WHERE e = 'xxx' ORDER BY 1 LIMIT 4;
