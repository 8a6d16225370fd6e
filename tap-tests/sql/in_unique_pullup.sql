-- in_unique_pullup: `x IN (SELECT key FROM t WHERE …)` over a unique key
-- is planned as an inner join with t (planner/sublink_join.rs,
-- UniqueIn), so the join order can start from t. Every query must give
-- the IN's answer: NULLs on either side, duplicates on the outer side,
-- outer joins and USING columns around it, `*` and names not reaching
-- the pulled-up table, and the shapes that stay a subplan (a non-unique
-- or multi-column key, correlation, another type, NOT IN).
CREATE TABLE pu_part (id int PRIMARY KEY, name text, code int UNIQUE, grp int);
CREATE TABLE pu_supply (part int, supplier int, qty int, PRIMARY KEY (part, supplier));
CREATE TABLE pu_sup (id int PRIMARY KEY, name text, nation int);
CREATE TABLE pu_pair (a int, b int, note text, UNIQUE (a, b));
INSERT INTO pu_part SELECT g, CASE WHEN g % 7 = 0 THEN 'forest ' || g ELSE 'plain ' || g END,
  CASE WHEN g % 10 = 0 THEN NULL ELSE g * 3 END, g % 4 FROM generate_series(1, 200) g;
INSERT INTO pu_supply SELECT p, s, (p * s) % 50 FROM generate_series(1, 200) p, generate_series(1, 4) s;
INSERT INTO pu_supply VALUES (999, 1, 5), (998, 2, 7);
INSERT INTO pu_sup SELECT g, 'sup ' || g, g % 3 FROM generate_series(1, 6) g;
INSERT INTO pu_pair VALUES (1, 1, 'one'), (1, 2, 'two'), (2, 1, 'three'), (NULL, 1, 'null a');
CREATE TABLE pu_null (k int, v text);
INSERT INTO pu_null VALUES (7, 'seven'), (NULL, 'null'), (14, 'fourteen'), (7, 'seven again'), (21, 'x');
CREATE TABLE pu_big (k bigint, v text);
INSERT INTO pu_big VALUES (7, 'a'), (8, 'b'), (NULL, 'c');
ANALYZE;
-- @@ read-only
-- The TPC-H Q20 shape: the few named parts, then their supply rows.
SELECT part, supplier, qty FROM pu_supply
 WHERE part IN (SELECT id FROM pu_part WHERE name LIKE 'forest%') AND qty > 20
 ORDER BY part, supplier;
-- Nested: suppliers of those parts.
SELECT id, name FROM pu_sup
 WHERE id IN (SELECT supplier FROM pu_supply
               WHERE part IN (SELECT id FROM pu_part WHERE name LIKE 'forest 1%')
                 AND qty > 10)
 ORDER BY name;
-- Duplicates and NULLs on the outer side keep their multiplicity.
SELECT k, v FROM pu_null WHERE k IN (SELECT id FROM pu_part) ORDER BY k, v;
SELECT count(*) FROM pu_null WHERE k IN (SELECT id FROM pu_part WHERE grp = 3);
-- A unique column with NULLs: NULL matches nothing.
SELECT k, v FROM pu_null WHERE k IN (SELECT code FROM pu_part) ORDER BY k, v;
SELECT k, v FROM pu_null WHERE k IN (SELECT code FROM pu_part WHERE id < 10) ORDER BY k, v;
-- `*` and unqualified names do not reach the pulled-up table.
SELECT * FROM pu_null WHERE k IN (SELECT id FROM pu_part WHERE name LIKE 'forest%') ORDER BY 1, 2;
SELECT v, name FROM pu_null n JOIN pu_sup s ON s.id = n.k % 6
 WHERE k IN (SELECT id FROM pu_part) ORDER BY v;
SELECT count(*), sum(id) FROM pu_sup WHERE id IN (SELECT id FROM pu_part WHERE grp = 1);
-- With a USING join and an outer join below it.
SELECT a.part, a.supplier, b.qty FROM pu_supply a JOIN pu_supply b USING (part, supplier)
 WHERE part IN (SELECT id FROM pu_part WHERE grp = 2 AND id < 20) ORDER BY 1, 2;
SELECT part, supplier FROM pu_supply a JOIN pu_supply b USING (part, supplier)
 WHERE part IN (SELECT id FROM pu_part WHERE id > 196) ORDER BY 1, 2;
SELECT s.id, n.k FROM pu_sup s LEFT JOIN pu_null n ON n.k = s.id * 7
 WHERE n.k IN (SELECT id FROM pu_part) ORDER BY 1, 2;
-- Grouped, DISTINCT and in a derived table.
SELECT supplier, count(*), sum(qty) FROM pu_supply
 WHERE part IN (SELECT id FROM pu_part WHERE grp = 0) GROUP BY supplier ORDER BY supplier;
SELECT DISTINCT supplier FROM pu_supply WHERE part IN (SELECT id FROM pu_part WHERE id <= 3) ORDER BY 1;
SELECT x.s, x.n FROM (SELECT supplier s, count(*) n FROM pu_supply
  WHERE part IN (SELECT id FROM pu_part WHERE name LIKE 'forest 5%') GROUP BY supplier) x ORDER BY 1;
-- Two pulled up in one block, the same table twice.
SELECT part, supplier FROM pu_supply
 WHERE part IN (SELECT id FROM pu_part WHERE grp = 1) AND supplier IN (SELECT id FROM pu_part WHERE grp = 1)
 ORDER BY 1, 2 LIMIT 8;
-- Stays a subplan: key not unique, two-column key, correlated, other type, NOT IN.
SELECT k, v FROM pu_null WHERE k IN (SELECT part FROM pu_supply WHERE qty = 7) ORDER BY k, v;
SELECT a, b, note FROM pu_pair WHERE a IN (SELECT a FROM pu_pair WHERE b = 2) ORDER BY note;
SELECT id, name FROM pu_sup s WHERE id IN (SELECT id FROM pu_part p WHERE p.grp = s.nation) ORDER BY id;
SELECT k, v FROM pu_big WHERE k IN (SELECT id FROM pu_part) ORDER BY k;
SELECT k, v FROM pu_null WHERE k NOT IN (SELECT id FROM pu_part WHERE id > 10) ORDER BY k, v;
SELECT k, v FROM pu_null WHERE k IN (SELECT id FROM pu_part) OR v = 'null' ORDER BY k, v;
-- Parameters inside the subquery.
PREPARE pu(int) AS SELECT k, v FROM pu_null WHERE k IN (SELECT id FROM pu_part WHERE id < $1) ORDER BY k, v;
EXECUTE pu(10);
EXECUTE pu(100);
DEALLOCATE pu;
