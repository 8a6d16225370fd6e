-- operators_ext: IS [NOT] DISTINCT FROM followed by AND / OR without
-- parentheses (the right operand is one comparison: AND / OR bind
-- looser).
CREATE TABLE opx_t (id int, a int, b bool);
INSERT INTO opx_t VALUES (1, 1, true), (2, 2, NULL), (3, NULL, false);
-- @@ read-only
SELECT 1 IS DISTINCT FROM 2 AND true AS x, 1 IS NOT DISTINCT FROM 2 OR true AS y;
SELECT id FROM opx_t WHERE a IS DISTINCT FROM 2 AND b ORDER BY id;
SELECT id FROM opx_t WHERE a IS NOT DISTINCT FROM NULL OR b ORDER BY id;
SELECT id, a IS DISTINCT FROM 1 AND b IS NOT NULL AS c FROM opx_t ORDER BY id;
