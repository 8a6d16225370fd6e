-- operators: predicate forms and operator precedence over NULLs — IS
-- [NOT] DISTINCT FROM, IS [NOT] TRUE / FALSE / UNKNOWN, [NOT] BETWEEN,
-- [NOT] IN, [NOT] [I]LIKE, three-valued AND / OR / NOT, arithmetic and
-- concatenation precedence, int / numeric mixing and casts.
CREATE TABLE op_t (id int, a int, n numeric(6,2), t text, b bool);
INSERT INTO op_t VALUES
  (1, 1, 1.00, 'Ab', true),
  (2, 2, 1.50, NULL, NULL),
  (3, NULL, NULL, 'x', false),
  (4, -3, -0.50, '', true),
  (5, 2, 2.00, 'ab%', false);
-- @@ read-only
SELECT id, a IS DISTINCT FROM 2 AS d2, a IS NOT DISTINCT FROM NULL AS nn, (a IS DISTINCT FROM n) AS dn FROM op_t ORDER BY id;
SELECT id, b IS TRUE AS t, b IS NOT TRUE AS nt, b IS FALSE AS f, b IS NOT FALSE AS nf, b IS UNKNOWN AS u, b IS NOT UNKNOWN AS nu FROM op_t ORDER BY id;
SELECT id, a BETWEEN 0 AND 2 AS btw, a NOT BETWEEN 0 AND 2 AS nbtw, n BETWEEN 1 AND 1.5 AS nb FROM op_t ORDER BY id;
SELECT id, a IN (1, 2) AS i, a NOT IN (1, 2) AS ni, a IN (1, NULL) AS inull, a NOT IN (1, NULL) AS ninull FROM op_t ORDER BY id;
SELECT id, t LIKE 'a%' AS l, t ILIKE 'a%' AS il, t NOT LIKE '%b' AS nl, t NOT ILIKE 'AB%' AS nil, t LIKE 'ab\%' AS esc, t LIKE '_' AS one FROM op_t ORDER BY id;
-- three-valued logic
SELECT id, b AND a > 1 AS and_, b OR a > 1 AS or_, NOT b AS not_, NOT (b AND a > 1) AS nand FROM op_t ORDER BY id;
SELECT id FROM op_t WHERE NOT (a > 1) ORDER BY id;
SELECT id FROM op_t WHERE a > 1 OR b AND t IS NOT NULL ORDER BY id;
SELECT id FROM op_t WHERE (a > 1 OR b) AND t IS NOT NULL ORDER BY id;
SELECT id FROM op_t WHERE NOT b IS NULL ORDER BY id;
-- precedence of arithmetic, unary minus, concatenation, comparison
SELECT 2 + 3 * 4 AS a, (2 + 3) * 4 AS b, -2 * 3 AS c, 10 - 2 - 3 AS d, 7 % 3 * 2 AS e, - - 4 AS f;
SELECT id, a + n AS an, a * 1.5 AS a15, n / 2 AS n2, a / 2 AS a2, -a % 2 AS m FROM op_t ORDER BY id;
SELECT id, 'x' || a || 'y' AS s, a::text || t AS at, t || n AS tn FROM op_t ORDER BY id;
SELECT id, a = n AS eq, n > a AS gt, a < n + 1 AS lt FROM op_t ORDER BY id;
SELECT 1 < 2 AS cmp, 'a' < 'b' AND 'b' < 'c' AS chain, NULL = NULL AS nulleq, NULL IS NULL AS nullis;
-- casts and conditional forms
SELECT id, CAST(a AS text), n::int AS ni, n::text AS nt, a::numeric(6,2) AS an, t::varchar AS tv FROM op_t ORDER BY id;
SELECT id, CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END AS simple, CASE WHEN a IS NULL THEN 'null' WHEN a < 0 THEN 'neg' ELSE 'pos' END AS searched FROM op_t ORDER BY id;
SELECT id, greatest(a, 0), least(a, n), coalesce(t, b::text, 'none'), nullif(a, 2) FROM op_t ORDER BY id;
