-- explain: EXPLAIN (COSTS OFF) of a few joins, after ANALYZE, so the plan
-- shapes (join method, which side is hashed, where filters sit) can be
-- compared with PostgreSQL's.
CREATE TABLE ex_a (id int PRIMARY KEY, b_id int, v text);
CREATE TABLE ex_b (id int PRIMARY KEY, w text);
CREATE TABLE ex_c (a_id int, note text);
INSERT INTO ex_a SELECT g, g % 50, 'v' || g FROM generate_series(1, 1000) g;
INSERT INTO ex_b SELECT g, 'w' || g FROM generate_series(1, 50) g;
INSERT INTO ex_c SELECT g * 7, 'n' || g FROM generate_series(1, 100) g;
ANALYZE ex_a;
ANALYZE ex_b;
ANALYZE ex_c;
-- @@ read-only
EXPLAIN (COSTS OFF) SELECT * FROM ex_a WHERE id = 5;
EXPLAIN (COSTS OFF) SELECT * FROM ex_a a JOIN ex_b b ON b.id = a.b_id;
EXPLAIN (COSTS OFF) SELECT * FROM ex_a a LEFT JOIN ex_c c ON c.a_id = a.id WHERE a.v LIKE 'v1%';
EXPLAIN (COSTS OFF) SELECT * FROM ex_b b WHERE EXISTS (SELECT 1 FROM ex_a a WHERE a.b_id = b.id);
EXPLAIN (COSTS OFF) SELECT * FROM ex_b b WHERE NOT EXISTS (SELECT 1 FROM ex_c c WHERE c.a_id = b.id);
EXPLAIN (COSTS OFF) SELECT b.w, count(*) FROM ex_a a JOIN ex_b b ON b.id = a.b_id GROUP BY b.w ORDER BY b.w;
EXPLAIN (COSTS OFF) SELECT * FROM ex_a a JOIN ex_b b ON b.id = a.b_id JOIN ex_c c ON c.a_id = a.id WHERE b.id = 3;
EXPLAIN (COSTS OFF) SELECT id FROM ex_a UNION SELECT a_id FROM ex_c;
