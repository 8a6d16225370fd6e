-- subselect: scalar subqueries (correlated and not), IN / NOT IN with
-- NULLs, EXISTS, ANY / ALL, derived tables and LATERAL.
CREATE TABLE sub_a (id int, grp text, v int);
CREATE TABLE sub_b (id int, grp text, w int);
CREATE TABLE sub_empty (id int);
INSERT INTO sub_a VALUES (1, 'x', 10), (2, 'x', 20), (3, 'y', 30), (4, 'y', NULL), (5, 'z', 50), (5, 'z', 50), (6, NULL, 60);
INSERT INTO sub_b VALUES (1, 'x', 100), (3, 'y', 300), (3, 'y', 301), (7, 'w', 700), (NULL, 'x', NULL);
-- @@ read-only
-- scalar subqueries
SELECT (SELECT max(v) FROM sub_a) AS maxv, (SELECT count(*) FROM sub_b) AS nb;
SELECT id, v, (SELECT max(w) FROM sub_b b WHERE b.id = a.id) AS maxw FROM sub_a a ORDER BY id, v;
SELECT id, v - (SELECT avg(v) FROM sub_a) AS dev FROM sub_a ORDER BY id, v;
SELECT id FROM sub_a a WHERE v > (SELECT avg(v) FROM sub_a a2 WHERE a2.grp = a.grp) ORDER BY id;
SELECT (SELECT id FROM sub_empty) AS nothing;
SELECT (SELECT id FROM sub_b WHERE grp = 'y') AS too_many;
SELECT grp, (SELECT count(*) FROM sub_b b WHERE b.grp = a.grp) AS nb FROM sub_a a GROUP BY grp ORDER BY grp;
SELECT id FROM sub_a ORDER BY (SELECT count(*) FROM sub_b b WHERE b.id = sub_a.id) DESC, id LIMIT 3;
-- IN / NOT IN, with NULLs on either side
SELECT id FROM sub_a WHERE id IN (SELECT id FROM sub_b) ORDER BY id;
SELECT id FROM sub_a WHERE id NOT IN (SELECT id FROM sub_b) ORDER BY id;
SELECT id FROM sub_a WHERE id NOT IN (SELECT id FROM sub_b WHERE id IS NOT NULL) ORDER BY id;
SELECT id FROM sub_a WHERE id NOT IN (SELECT id FROM sub_empty) ORDER BY id;
SELECT id, v IN (SELECT w / 10 FROM sub_b) AS in_b, v NOT IN (SELECT w / 10 FROM sub_b) AS not_in_b FROM sub_a ORDER BY id, v;
SELECT id FROM sub_a WHERE (id, grp) IN (SELECT id, grp FROM sub_b) ORDER BY id;
-- EXISTS
SELECT id FROM sub_a a WHERE EXISTS (SELECT 1 FROM sub_b b WHERE b.grp = a.grp AND b.w > 200) ORDER BY id;
SELECT id FROM sub_a a WHERE NOT EXISTS (SELECT 1 FROM sub_b b WHERE b.id = a.id) ORDER BY id;
SELECT EXISTS (SELECT 1 FROM sub_empty) AS e1, EXISTS (SELECT 1 FROM sub_a) AS e2;
-- ANY / SOME / ALL
SELECT id FROM sub_a WHERE v > ANY (SELECT w / 10 FROM sub_b) ORDER BY id;
SELECT id FROM sub_a WHERE v > ALL (SELECT w / 10 FROM sub_b WHERE w IS NOT NULL) ORDER BY id;
SELECT id, v > ALL (SELECT w / 10 FROM sub_b) AS gt_all FROM sub_a ORDER BY id, v;
SELECT id FROM sub_a WHERE v = SOME (SELECT v FROM sub_a WHERE grp = 'z') ORDER BY id;
SELECT id FROM sub_a WHERE v < ALL (SELECT id FROM sub_empty) ORDER BY id;
-- derived tables
SELECT t.grp, t.total FROM (SELECT grp, sum(v) AS total FROM sub_a GROUP BY grp) t WHERE t.total > 20 ORDER BY t.grp;
SELECT s.grp, s.n, b.w FROM (SELECT grp, count(*) AS n FROM sub_a GROUP BY grp) s JOIN sub_b b ON b.grp = s.grp ORDER BY s.grp, b.w;
SELECT count(*) FROM (SELECT DISTINCT id FROM sub_a) d;
SELECT * FROM (SELECT id, v FROM sub_a ORDER BY v DESC NULLS LAST LIMIT 2) top ORDER BY id;
SELECT x.k, x.c FROM (SELECT id % 2 AS k, count(*) AS c FROM (SELECT DISTINCT id FROM sub_a) d GROUP BY id % 2) x ORDER BY x.k;
-- LATERAL
SELECT a.id, l.w FROM sub_a a, LATERAL (SELECT w FROM sub_b b WHERE b.id = a.id ORDER BY w DESC LIMIT 1) l ORDER BY a.id;
SELECT a.id, l.w FROM sub_a a LEFT JOIN LATERAL (SELECT w FROM sub_b b WHERE b.id = a.id ORDER BY w LIMIT 1) l ON true ORDER BY a.id, a.v;
SELECT a.id, l.n FROM sub_a a CROSS JOIN LATERAL (SELECT count(*) AS n FROM sub_b b WHERE b.grp = a.grp) l ORDER BY a.id, a.v;
-- subqueries in other clauses
SELECT grp, sum(v) FROM sub_a GROUP BY grp HAVING sum(v) > (SELECT min(w) / 10 FROM sub_b) ORDER BY grp;
SELECT id, CASE WHEN EXISTS (SELECT 1 FROM sub_b b WHERE b.id = a.id) THEN 'matched' ELSE 'alone' END AS m FROM sub_a a ORDER BY id, v;
-- errors
SELECT id FROM sub_a WHERE id = (SELECT id, grp FROM sub_b);
SELECT id FROM sub_a WHERE id IN (SELECT id, grp FROM sub_b);
