-- union: UNION / INTERSECT / EXCEPT with and without ALL, NULLs and
-- duplicates, nesting, ORDER BY / LIMIT over the result.
CREATE TABLE set_l (n int, s text);
CREATE TABLE set_r (n int, s text);
CREATE TABLE set_e (n int, s text);
INSERT INTO set_l VALUES (1, 'a'), (2, 'b'), (2, 'b'), (3, NULL), (NULL, 'n'), (NULL, 'n'), (5, 'e');
INSERT INTO set_r VALUES (2, 'b'), (3, NULL), (3, NULL), (4, 'd'), (NULL, 'n');
-- @@ read-only
SELECT n, s FROM set_l UNION SELECT n, s FROM set_r ORDER BY n NULLS FIRST, s;
SELECT n, s FROM set_l UNION ALL SELECT n, s FROM set_r ORDER BY n NULLS FIRST, s;
SELECT n, s FROM set_l INTERSECT SELECT n, s FROM set_r ORDER BY n NULLS FIRST, s;
SELECT n, s FROM set_l INTERSECT ALL SELECT n, s FROM set_r ORDER BY n NULLS FIRST, s;
SELECT n, s FROM set_l EXCEPT SELECT n, s FROM set_r ORDER BY n NULLS FIRST, s;
SELECT n, s FROM set_l EXCEPT ALL SELECT n, s FROM set_r ORDER BY n NULLS FIRST, s;
SELECT n, s FROM set_r EXCEPT ALL SELECT n, s FROM set_l ORDER BY n NULLS FIRST, s;
SELECT n FROM set_l UNION SELECT n FROM set_e ORDER BY 1;
SELECT n FROM set_e INTERSECT SELECT n FROM set_l;
SELECT n FROM set_l EXCEPT SELECT n FROM set_e ORDER BY n DESC;
-- precedence: INTERSECT binds tighter than UNION / EXCEPT; parentheses
SELECT n FROM set_l UNION SELECT n FROM set_r INTERSECT SELECT n FROM set_l WHERE n > 2 ORDER BY 1;
(SELECT n FROM set_l UNION SELECT n FROM set_r) INTERSECT SELECT n FROM set_l WHERE n > 2 ORDER BY 1;
SELECT n FROM set_l EXCEPT SELECT n FROM set_r EXCEPT SELECT 5 ORDER BY 1;
SELECT n FROM set_l EXCEPT (SELECT n FROM set_r EXCEPT SELECT 3) ORDER BY 1;
-- ORDER BY, LIMIT, OFFSET on the whole result; by name and position
SELECT n, s FROM set_l UNION ALL SELECT n, s FROM set_r ORDER BY 2 DESC, 1 LIMIT 4;
SELECT n AS num FROM set_l UNION SELECT n FROM set_r ORDER BY num DESC NULLS LAST LIMIT 3 OFFSET 1;
(SELECT n FROM set_l ORDER BY n LIMIT 2) UNION ALL (SELECT n FROM set_r ORDER BY n DESC LIMIT 2) ORDER BY 1;
-- type resolution across branches, constants, VALUES
SELECT 1 AS x UNION SELECT 2.5 ORDER BY 1;
SELECT 'a' AS t UNION ALL SELECT s FROM set_r WHERE n = 4 UNION ALL SELECT NULL ORDER BY 1;
SELECT n FROM set_l UNION VALUES (10), (11) ORDER BY 1 DESC LIMIT 3;
-- set operations inside subqueries and with aggregates
SELECT count(*) FROM (SELECT n FROM set_l UNION SELECT n FROM set_r) u;
SELECT s, count(*) FROM (SELECT s FROM set_l UNION ALL SELECT s FROM set_r) u GROUP BY s ORDER BY s NULLS FIRST;
SELECT n FROM set_l WHERE n IN (SELECT n FROM set_r INTERSECT SELECT 3) ORDER BY 1;
-- errors
SELECT n, s FROM set_l UNION SELECT n FROM set_r;
SELECT n FROM set_l UNION SELECT s FROM set_r;
