-- parallel_outer_join: an aggregation over a right or full hash join
-- whose probing side is a big scan is split (planner/parallel.rs): each
-- participant probes its share of the big table against its own copy of
-- the small side, and an inner row is NULL-extended only if no
-- participant matched it, exactly once (executor/hashjoin.rs,
-- ParallelTails). Inner rows no big row matches, rows only the last
-- pages match (one participant's share), NULL keys on both sides, a
-- join filter, grouping above and below the join (TPC-H Q13's shape).
CREATE TABLE pj_big (id int, k int, note text);
INSERT INTO pj_big
  SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE g % 20000 END, 'note ' || g
  FROM generate_series(1, 299990) g;
INSERT INTO pj_big SELECT g, 25000 + (g - 299990), 'late ' || g FROM generate_series(299991, 300000) g;
CREATE TABLE pj_dim (id int, name text);
INSERT INTO pj_dim SELECT g, 'n' || (g % 10) FROM generate_series(0, 29999) g;
INSERT INTO pj_dim VALUES (NULL, 'null one'), (NULL, 'null two');
ANALYZE;
-- @@ read-only
SELECT c_count, count(*) AS custdist
  FROM (SELECT d.id, count(b.id) AS c_count
          FROM pj_dim d LEFT JOIN pj_big b ON b.k = d.id AND b.note NOT LIKE '%7'
         GROUP BY d.id) AS c_orders
 GROUP BY c_count ORDER BY custdist DESC, c_count DESC;
SELECT d.name, count(*), count(b.id), sum(b.k)
  FROM pj_big b RIGHT JOIN pj_dim d ON d.id = b.k
 GROUP BY d.name ORDER BY d.name;
SELECT count(*), count(b.id), count(d.id), sum(b.k), sum(d.id)
  FROM pj_big b FULL JOIN pj_dim d ON b.k = d.id;
SELECT count(*) FILTER (WHERE b.id IS NULL) AS unmatched, count(*) FILTER (WHERE d.id >= 25000) AS late
  FROM pj_big b RIGHT JOIN pj_dim d ON d.id = b.k;
-- Past work_mem: every participant splits its copy of the small side
-- into the same batches, and each batch's unmatched rows come once.
SET work_mem = '64kB';
SELECT count(*), count(b.id), count(d.id), sum(b.k), sum(d.id)
  FROM pj_big b FULL JOIN pj_dim d ON b.k = d.id;
SELECT d.name, count(*), count(b.id), sum(b.k)
  FROM pj_big b RIGHT JOIN pj_dim d ON d.id = b.k
 GROUP BY d.name ORDER BY d.name;
RESET work_mem;
SET max_parallel_workers_per_gather = 0;
SELECT count(*), count(b.id), count(d.id), sum(b.k), sum(d.id)
  FROM pj_big b FULL JOIN pj_dim d ON b.k = d.id;
RESET max_parallel_workers_per_gather;
