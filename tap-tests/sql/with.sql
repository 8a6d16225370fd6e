-- with: common table expressions — plain, referenced twice, chained,
-- RECURSIVE with UNION and UNION ALL, MATERIALIZED / NOT MATERIALIZED.
CREATE TABLE cte_tree (id int, parent int, name text);
INSERT INTO cte_tree VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 1, 'b'), (4, 2, 'a1'), (5, 2, 'a2'), (6, 4, 'a1x'), (7, NULL, 'other'), (8, 7, 'o1');
CREATE TABLE cte_edge (src int, dst int);
INSERT INTO cte_edge VALUES (1, 2), (2, 3), (3, 1), (3, 4), (4, 4), (5, 6);
-- @@ read-only
WITH t AS (SELECT id, name FROM cte_tree WHERE parent = 1) SELECT * FROM t ORDER BY id;
WITH t AS (SELECT parent, count(*) AS n FROM cte_tree GROUP BY parent) SELECT a.parent, a.n, b.n FROM t a JOIN t b ON a.parent = b.parent ORDER BY 1;
WITH a AS (SELECT id FROM cte_tree WHERE id < 5), b AS (SELECT id * 10 AS id FROM a) SELECT * FROM b ORDER BY id;
WITH a(x, y) AS (VALUES (1, 'one'), (2, 'two'), (2, 'two')) SELECT x, y, count(*) FROM a GROUP BY x, y ORDER BY x;
WITH m AS MATERIALIZED (SELECT id FROM cte_tree WHERE name LIKE 'a%') SELECT count(*) FROM m;
WITH m AS NOT MATERIALIZED (SELECT id, name FROM cte_tree) SELECT name FROM m WHERE id = 3;
-- referenced twice: computed once (one random() value for both)
WITH r AS (SELECT random() AS x) SELECT a.x = b.x AS same FROM r a, r b;
WITH t AS (SELECT id, name FROM cte_tree WHERE id < 4)
SELECT t.name, (SELECT count(*) FROM t t2 WHERE t2.id < t.id) AS before FROM t ORDER BY t.id;
WITH empty AS (SELECT id FROM cte_tree WHERE false) SELECT count(*), max(id) FROM empty;
-- recursive: counting, trees, graphs with cycles
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT i FROM n ORDER BY i;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) SELECT count(*), sum(i) FROM n;
WITH RECURSIVE sub(id, name, depth, path) AS (
  SELECT id, name, 0, name FROM cte_tree WHERE parent IS NULL
  UNION ALL
  SELECT t.id, t.name, s.depth + 1, s.path || '/' || t.name FROM cte_tree t JOIN sub s ON t.parent = s.id
) SELECT id, depth, path FROM sub ORDER BY path;
WITH RECURSIVE anc(id, parent) AS (
  SELECT id, parent FROM cte_tree WHERE id = 6
  UNION ALL
  SELECT t.id, t.parent FROM cte_tree t JOIN anc a ON t.id = a.parent
) SELECT id FROM anc ORDER BY id;
WITH RECURSIVE reach(n) AS (SELECT 1 UNION SELECT e.dst FROM cte_edge e JOIN reach r ON e.src = r.n) SELECT n FROM reach ORDER BY n;
WITH RECURSIVE reach(n) AS (SELECT 5 UNION SELECT e.dst FROM cte_edge e JOIN reach r ON e.src = r.n) SELECT n FROM reach ORDER BY n;
WITH RECURSIVE fib(a, b, k) AS (SELECT 0::numeric, 1::numeric, 1 UNION ALL SELECT b, a + b, k + 1 FROM fib WHERE k < 30) SELECT k, a FROM fib WHERE k % 10 = 0 ORDER BY k;
WITH RECURSIVE dup(x) AS (SELECT 1 UNION SELECT (x % 3) + 1 FROM dup) SELECT x FROM dup ORDER BY x;
WITH RECURSIVE cnt(parent, n) AS (SELECT id, 1 FROM cte_tree UNION ALL SELECT t.parent, c.n FROM cte_tree t JOIN cnt c ON c.parent = t.id WHERE t.parent IS NOT NULL)
SELECT parent AS id, sum(n) AS subtree_size FROM cnt GROUP BY parent ORDER BY parent;
-- CTE used in a subquery and in set operations
WITH leaves AS (SELECT id FROM cte_tree t WHERE NOT EXISTS (SELECT 1 FROM cte_tree c WHERE c.parent = t.id))
SELECT id, name FROM cte_tree WHERE id IN (SELECT id FROM leaves) ORDER BY id;
WITH a AS (SELECT src AS n FROM cte_edge), b AS (SELECT dst AS n FROM cte_edge) SELECT n FROM a EXCEPT SELECT n FROM b ORDER BY n;
-- errors
WITH RECURSIVE bad(i) AS (SELECT 1 UNION ALL SELECT count(*) FROM bad) SELECT * FROM bad;
WITH t AS (SELECT 1 AS x) SELECT y FROM t;
