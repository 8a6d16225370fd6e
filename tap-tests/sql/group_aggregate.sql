-- group_aggregate: more groups than a hash table holds in work_mem are
-- made one at a time from an index's order (GroupAggregate over an
-- Index Scan, planner/select.rs scan_in_key_order). The rows read in
-- key order must give every group once, with every aggregate form:
-- DISTINCT, FILTER, ORDER BY inside the call, HAVING, grouping by a
-- prefix of a two-column key and by its columns in either order.
CREATE TABLE ga_t (a int NOT NULL, b int NOT NULL, x numeric, s text, PRIMARY KEY (a, b));
INSERT INTO ga_t SELECT g / 3, g % 3, (g % 17) * 1.5, 's' || (g % 5)
  FROM generate_series(0, 119999) g;
UPDATE ga_t SET x = NULL WHERE a % 1000 = 7;
DELETE FROM ga_t WHERE a % 1000 = 9 AND b = 1;
CREATE TABLE ga_n (k int PRIMARY KEY, v int);
INSERT INTO ga_n SELECT g, g % 11 FROM generate_series(1, 50000) g;
ANALYZE;
-- @@ read-only
SELECT count(*), sum(n), sum(t), min(t), max(t) FROM
  (SELECT a, count(*) n, sum(x) t FROM ga_t GROUP BY a) q;
SELECT a, count(*), sum(x), avg(x), count(DISTINCT s), max(s) FILTER (WHERE b > 0),
       string_agg(s, ',' ORDER BY b DESC)
  FROM ga_t GROUP BY a HAVING a % 4999 = 0 OR sum(x) IS NULL ORDER BY a LIMIT 12;
SELECT count(*), sum(c) FROM (SELECT b, a, count(*) c FROM ga_t GROUP BY b, a) q;
SELECT a, b, x FROM (SELECT a, b, sum(x) x FROM ga_t GROUP BY a, b) q WHERE a IN (7, 9, 39999) ORDER BY a, b;
SELECT count(*) FROM (SELECT a FROM ga_t WHERE s <> 's1' GROUP BY a HAVING count(*) = 3) q;
SELECT k % 7 AS m, count(*) FROM (SELECT k, sum(v) FROM ga_n GROUP BY k) q GROUP BY 1 ORDER BY 1;
SELECT a FROM ga_t GROUP BY a ORDER BY a DESC LIMIT 3;
