-- aggregates_ext: what aggregates.sql leaves out — FILTER, DISTINCT and
-- ORDER BY inside string_agg / array_agg, stddev / variance, GROUPING SETS /
-- ROLLUP / CUBE with grouping(), an aggregate under a window.
CREATE TABLE aggx_t (id int, region text, product text, qty int, price numeric(6,2), ok bool);
INSERT INTO aggx_t VALUES
  (1, 'north', 'pen', 3, 1.25, true),
  (2, 'north', 'pen', 3, 1.25, true),
  (3, 'north', 'ink', 1, 9.00, false),
  (4, 'south', 'pen', 10, 1.10, true),
  (5, 'south', 'pad', NULL, 2.00, NULL),
  (6, 'south', 'pad', 4, NULL, true),
  (7, NULL, 'ink', 2, 8.50, false),
  (8, 'east', NULL, 0, 0.00, true);
CREATE TABLE aggx_empty (g int, v int);
-- @@ read-only
SELECT sum(v), count(*), count(v), avg(v), min(v), bool_and(v > 0), string_agg(v::text, ',') FROM aggx_empty;
-- DISTINCT and FILTER
SELECT region, count(*) FILTER (WHERE ok), sum(qty) FILTER (WHERE product = 'pen') FROM aggx_t GROUP BY region ORDER BY region NULLS FIRST;
SELECT count(DISTINCT product) FILTER (WHERE qty > 1) FROM aggx_t;
-- string_agg, array_agg with ORDER BY inside the call
SELECT region, string_agg(product, ', ' ORDER BY product, id) FROM aggx_t GROUP BY region ORDER BY region NULLS FIRST;
SELECT string_agg(DISTINCT product, '|' ORDER BY product) FROM aggx_t;
SELECT region, array_agg(id ORDER BY id) FROM aggx_t GROUP BY region ORDER BY region NULLS FIRST;
SELECT array_agg(qty ORDER BY qty NULLS FIRST), array_agg(DISTINCT product ORDER BY product) FROM aggx_t;
-- statistics
SELECT stddev(qty), stddev_pop(qty), stddev_samp(qty), variance(qty), var_pop(qty), var_samp(qty) FROM aggx_t;
SELECT region, round(stddev(price), 4), round(variance(price), 4) FROM aggx_t GROUP BY region ORDER BY region NULLS FIRST;
-- GROUPING SETS, ROLLUP, CUBE and grouping()
SELECT region, product, sum(qty) FROM aggx_t GROUP BY GROUPING SETS ((region), (product), ()) ORDER BY region NULLS FIRST, product NULLS FIRST, 3;
SELECT region, product, sum(qty), grouping(region, product) FROM aggx_t GROUP BY ROLLUP (region, product) ORDER BY region NULLS LAST, product NULLS LAST, 4;
SELECT region, product, count(*), grouping(region) AS gr, grouping(product) AS gp FROM aggx_t GROUP BY CUBE (region, product) ORDER BY gr, gp, region NULLS FIRST, product NULLS FIRST;
SELECT ok, count(*) FROM aggx_t GROUP BY ROLLUP (ok) ORDER BY ok NULLS FIRST, 2;
-- aggregates over expressions and in expressions
SELECT region, sum(qty) * 100 / sum(sum(qty)) OVER () AS pct FROM aggx_t WHERE qty IS NOT NULL GROUP BY region ORDER BY region NULLS FIRST;
SELECT count(*) AS n, count(*) FILTER (WHERE price IS NULL) AS no_price FROM aggx_t;
