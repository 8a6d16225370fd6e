-- aggregates: GROUP BY by expression and ordinal, HAVING, DISTINCT
-- aggregates, bool_and / bool_or / every, empty inputs. The rest of the
-- aggregate features (FILTER, string_agg / array_agg, statistics, grouping
-- sets) are in aggregates_ext.sql.
CREATE TABLE agg_t (id int, region text, product text, qty int, price numeric(6,2), ok bool);
INSERT INTO agg_t VALUES
  (1, 'north', 'pen', 3, 1.25, true),
  (2, 'north', 'pen', 3, 1.25, true),
  (3, 'north', 'ink', 1, 9.00, false),
  (4, 'south', 'pen', 10, 1.10, true),
  (5, 'south', 'pad', NULL, 2.00, NULL),
  (6, 'south', 'pad', 4, NULL, true),
  (7, NULL, 'ink', 2, 8.50, false),
  (8, 'east', NULL, 0, 0.00, true);
CREATE TABLE agg_empty (g int, v int);
-- @@ read-only
SELECT region, count(*), sum(qty), avg(qty), min(price), max(price) FROM agg_t GROUP BY region ORDER BY region NULLS FIRST;
SELECT region, product, sum(qty) FROM agg_t GROUP BY 1, 2 ORDER BY 1, 2;
SELECT qty % 2 AS parity, count(*) FROM agg_t GROUP BY qty % 2 ORDER BY 1 NULLS LAST;
SELECT upper(region) AS r, count(*) FROM agg_t GROUP BY upper(region) ORDER BY r NULLS LAST;
SELECT region FROM agg_t GROUP BY region HAVING sum(qty) > 5 ORDER BY 1;
SELECT region, count(*) FROM agg_t GROUP BY region HAVING min(price) < 2 AND count(*) > 1 ORDER BY 1;
SELECT count(*) FROM agg_t HAVING count(*) > 100;
SELECT g, count(*) FROM agg_empty GROUP BY g;
SELECT count(*) FROM agg_empty HAVING count(*) = 0;
-- DISTINCT and FILTER
SELECT count(DISTINCT product), count(DISTINCT region), sum(DISTINCT qty), avg(DISTINCT qty) FROM agg_t;
-- bool_and / bool_or / every
SELECT region, bool_and(ok), bool_or(ok), every(qty > 0) FROM agg_t GROUP BY region ORDER BY region NULLS FIRST;
-- aggregates over expressions and in expressions
SELECT sum(qty * price), sum(qty) * 2, max(length(product)), min(coalesce(region, '~')) FROM agg_t;
