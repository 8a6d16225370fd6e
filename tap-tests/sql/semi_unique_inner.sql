-- semi_unique_inner: EXISTS over a table that repeats its keys is planned
-- as PostgreSQL plans it — an inner hash join with the inner side's
-- distinct keys (a HashAggregate), not a hash semi join over every row —
-- and answers as the semi join does: outer duplicates kept, NULL keys
-- never matching, keys of two columns and of two integer types.
CREATE TABLE su_order (id int PRIMARY KEY, cust int, region int, note text);
CREATE TABLE su_line (order_id int, part int, qty int, big bigint);
INSERT INTO su_order SELECT g, g % 40, g % 3, 'o' || g FROM generate_series(1, 60) g;
INSERT INTO su_order VALUES (61, NULL, NULL, 'no cust');
INSERT INTO su_line SELECT g % 30, g % 7, g % 5, (g % 30)::bigint FROM generate_series(1, 3000) g;
INSERT INTO su_line VALUES (NULL, 1, 1, NULL), (55, NULL, 2, 55);
ANALYZE su_order;
ANALYZE su_line;
-- @@ read-only
EXPLAIN (COSTS OFF) SELECT id FROM su_order o WHERE EXISTS (SELECT 1 FROM su_line l WHERE l.order_id = o.id);
SELECT id FROM su_order o WHERE EXISTS (SELECT 1 FROM su_line l WHERE l.order_id = o.id) ORDER BY id;
SELECT count(*), sum(id) FROM su_order o WHERE EXISTS (SELECT 1 FROM su_line l WHERE l.order_id = o.cust);
SELECT id, cust FROM su_order o WHERE EXISTS (SELECT 1 FROM su_line l WHERE l.big = o.cust) ORDER BY id;
SELECT id FROM su_order o WHERE EXISTS (SELECT 1 FROM su_line l WHERE l.order_id = o.cust AND l.part = o.region) ORDER BY id;
SELECT id FROM su_order o WHERE EXISTS (SELECT 1 FROM su_line l WHERE l.order_id = o.id AND l.qty > 3) ORDER BY id;
SELECT o.region, count(*) FROM su_order o WHERE EXISTS (SELECT 1 FROM su_line l WHERE l.order_id = o.cust) GROUP BY o.region ORDER BY o.region;
SELECT id FROM su_order o WHERE NOT EXISTS (SELECT 1 FROM su_line l WHERE l.order_id = o.id) ORDER BY id;
