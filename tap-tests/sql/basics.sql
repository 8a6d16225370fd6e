-- basics: what a single-table engine answers — projection, WHERE, ORDER BY,
-- GROUP BY / HAVING, aggregates, DISTINCT, LIMIT / OFFSET, over a small
-- table with NULLs and duplicates.
CREATE TABLE basic_items (id int PRIMARY KEY, name text, category text, qty int, price numeric(8,2), active bool);
INSERT INTO basic_items VALUES
  (1, 'apple', 'fruit', 10, 1.50, true),
  (2, 'banana', 'fruit', 25, 0.25, true),
  (3, 'carrot', 'veg', 7, 0.40, false),
  (4, 'durian', 'fruit', NULL, 12.00, true),
  (5, 'eggplant', 'veg', 3, 2.10, NULL),
  (6, 'fig', NULL, 10, 3.00, true),
  (7, 'grape', 'fruit', 10, NULL, false),
  (8, 'apple', 'fruit', 4, 1.50, true);
CREATE TABLE basic_empty (a int, b text);
-- @@ read-only
SELECT * FROM basic_items ORDER BY id;
SELECT name, qty * 2 AS double_qty, price FROM basic_items WHERE qty > 5 ORDER BY id;
SELECT id, name FROM basic_items WHERE category IS NULL OR qty IS NULL ORDER BY id;
SELECT id FROM basic_items WHERE active ORDER BY id;
SELECT id FROM basic_items WHERE NOT active ORDER BY id;
SELECT id FROM basic_items WHERE active IS NOT TRUE ORDER BY id;
SELECT id, name FROM basic_items WHERE name LIKE '%an%' ORDER BY id;
SELECT id FROM basic_items WHERE qty BETWEEN 4 AND 10 ORDER BY id;
SELECT id FROM basic_items WHERE id IN (2, 4, 6, 99) ORDER BY id;
SELECT id FROM basic_items WHERE category <> 'fruit' ORDER BY id;
-- ORDER BY with NULLs, DESC, several keys, position and expression
SELECT id, qty FROM basic_items ORDER BY qty, id;
SELECT id, qty FROM basic_items ORDER BY qty DESC, id;
SELECT name, price FROM basic_items ORDER BY 2 DESC NULLS LAST, 1;
SELECT id, qty FROM basic_items ORDER BY qty NULLS FIRST, id DESC;
SELECT id, price * qty AS total FROM basic_items ORDER BY price * qty, id;
-- aggregates
SELECT count(*), count(qty), count(category), sum(qty), min(qty), max(qty) FROM basic_items;
SELECT avg(qty), sum(price), avg(price), min(name), max(name) FROM basic_items;
SELECT count(*), sum(a), max(b) FROM basic_empty;
SELECT count(DISTINCT name), count(DISTINCT qty) FROM basic_items;
SELECT bool_and(active), bool_or(active) FROM basic_items;
-- GROUP BY / HAVING
SELECT category, count(*), sum(qty) FROM basic_items GROUP BY category ORDER BY category;
SELECT category, count(*) FROM basic_items GROUP BY category HAVING count(*) > 1 ORDER BY category;
SELECT name, count(*) AS n FROM basic_items GROUP BY name HAVING count(*) > 1 ORDER BY name;
SELECT active, min(price), max(price) FROM basic_items GROUP BY active ORDER BY active NULLS FIRST;
SELECT qty, count(*) FROM basic_items GROUP BY qty ORDER BY qty DESC NULLS LAST;
SELECT a, count(*) FROM basic_empty GROUP BY a;
-- DISTINCT, LIMIT, OFFSET
SELECT DISTINCT category FROM basic_items ORDER BY category;
SELECT DISTINCT name, price FROM basic_items ORDER BY name, price;
SELECT id FROM basic_items ORDER BY id LIMIT 3;
SELECT id FROM basic_items ORDER BY id LIMIT 3 OFFSET 6;
SELECT id FROM basic_items ORDER BY id OFFSET 10;
SELECT id FROM basic_items ORDER BY id LIMIT 0;
-- expressions
SELECT id, qty % 3 AS m, -qty AS neg, qty / 3 AS q, price / 2 AS half FROM basic_items ORDER BY id;
SELECT id, name || '-' || coalesce(category, 'none') AS label, upper(name), length(name) FROM basic_items ORDER BY id;
SELECT id, CASE WHEN qty >= 10 THEN 'many' WHEN qty IS NULL THEN 'unknown' ELSE 'few' END AS amount FROM basic_items ORDER BY id;
SELECT 1 + 2 AS three, 'x' || 'y' AS xy, NULL::int IS NULL AS isnull, 7 / 2 AS idiv, 7.0 / 2 AS ndiv;
-- errors
SELECT 1 / 0;
SELECT id / (qty - 10) FROM basic_items ORDER BY id;
