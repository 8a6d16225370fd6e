-- select_misc: NULLS FIRST / LAST, LIMIT / OFFSET, CASE in every clause,
-- DISTINCT over expressions. DISTINCT ON, FETCH FIRST and VALUES as a table
-- are in select_misc_ext.sql.
CREATE TABLE misc_t (id int, k text, v int, note text);
INSERT INTO misc_t VALUES
  (1, 'a', 3, 'x'), (2, 'a', 1, NULL), (3, 'a', NULL, 'y'), (4, 'b', 2, 'x'),
  (5, 'b', 2, 'z'), (6, NULL, 5, NULL), (7, 'c', NULL, NULL), (8, 'c', 9, 'x');
CREATE TABLE sm_ou (a int, b text);
INSERT INTO sm_ou VALUES (1, 'x'), (3, 'y'), (2, 'z'), (NULL, 'n');
-- @@ read-only
-- NULLS FIRST / LAST with ASC and DESC
SELECT id, v FROM misc_t ORDER BY v NULLS FIRST, id;
SELECT id, v FROM misc_t ORDER BY v DESC NULLS LAST, id;
SELECT id, v FROM misc_t ORDER BY v DESC, id;
SELECT id, k, note FROM misc_t ORDER BY k DESC NULLS FIRST, note NULLS FIRST, id;
-- LIMIT / OFFSET / FETCH FIRST
SELECT id FROM misc_t ORDER BY id LIMIT ALL OFFSET 5;
SELECT id FROM misc_t ORDER BY id LIMIT NULL;
SELECT id FROM misc_t ORDER BY id LIMIT 2 + 1 OFFSET 1 * 2;
-- CASE in every clause
SELECT id, CASE k WHEN 'a' THEN 'A' WHEN 'b' THEN 'B' ELSE 'other' END AS kk FROM misc_t ORDER BY id;
SELECT id FROM misc_t WHERE CASE WHEN v IS NULL THEN note IS NOT NULL ELSE v > 2 END ORDER BY id;
SELECT CASE WHEN v > 2 THEN 'big' WHEN v IS NULL THEN 'none' ELSE 'small' END AS size, count(*) FROM misc_t GROUP BY CASE WHEN v > 2 THEN 'big' WHEN v IS NULL THEN 'none' ELSE 'small' END ORDER BY 1;
SELECT k, sum(v) FROM misc_t GROUP BY k HAVING CASE WHEN k IS NULL THEN true ELSE sum(v) > 3 END ORDER BY k;
SELECT id, k FROM misc_t ORDER BY CASE WHEN k IS NULL THEN 0 WHEN k = 'c' THEN 1 ELSE 2 END, id;
SELECT sum(CASE WHEN note = 'x' THEN 1 ELSE 0 END) AS xs, count(CASE WHEN v > 1 THEN 1 END) AS big FROM misc_t;
SELECT id, CASE WHEN id > 4 THEN CASE WHEN v IS NULL THEN 'hi-null' ELSE 'hi' END ELSE 'lo' END FROM misc_t ORDER BY id;
-- DISTINCT with expressions and ORDER BY
SELECT DISTINCT v % 2 AS parity FROM misc_t ORDER BY 1 NULLS FIRST;
SELECT DISTINCT k, note IS NULL AS no_note FROM misc_t ORDER BY k, no_note;
-- errors
SELECT id FROM misc_t LIMIT -1;
-- ORDER BY … USING < / > (ASC / DESC by the type's btree order).
SELECT a FROM sm_ou ORDER BY a USING >;
SELECT a FROM sm_ou ORDER BY a USING <;
SELECT a FROM sm_ou ORDER BY a USING > NULLS LAST;
SELECT b FROM sm_ou ORDER BY b USING >, a;
SELECT x.a FROM sm_ou x JOIN sm_ou y USING (a) ORDER BY 1 USING >;
