-- parallel_aggregate: an aggregation over a big enough scan is split
-- (planner/parallel.rs): each participant aggregates the rows of the
-- pages it claims, the Finalize node combines their groups. Every answer
-- must be the serial one: counts, sums and averages of integers and
-- numerics, min / max of text and dates, bool_and / bool_or, groups
-- with NULL keys, a group every participant saw and one only a few did,
-- no rows at all, a join on the way, HAVING, and with
-- max_parallel_workers_per_gather = 0.
CREATE TABLE pa_fact (id int, grp int, tag text, qty int, price numeric(12,2), flag bool, d date, note text);
INSERT INTO pa_fact
  SELECT g, g % 7, CASE WHEN g % 11 = 0 THEN NULL ELSE 't' || (g % 5) END,
         CASE WHEN g % 13 = 0 THEN NULL ELSE g % 50 END,
         (g % 1000) / 7.0, g % 3 <> 0, date '2020-01-01' + (g % 400), 'n' || g
  FROM generate_series(1, 300000) g;
INSERT INTO pa_fact VALUES (300001, 99, 'rare', 5, 1.25, false, date '1999-12-31', 'one row group');
CREATE TABLE pa_dim (grp int PRIMARY KEY, name text);
INSERT INTO pa_dim SELECT g, 'group ' || g FROM generate_series(0, 6) g;
ANALYZE;
-- @@ read-only
SELECT grp, count(*), count(qty), sum(qty), avg(qty), min(price), max(price), sum(price)
  FROM pa_fact GROUP BY grp ORDER BY grp;
SELECT tag, count(*), min(d), max(d), min(note), max(note), bool_and(flag), bool_or(flag)
  FROM pa_fact GROUP BY tag ORDER BY tag;
SELECT count(*), sum(qty), avg(price), min(id), max(id) FROM pa_fact;
SELECT count(*), sum(qty), avg(price), max(tag) FROM pa_fact WHERE qty > 1000;
SELECT count(*), sum(price) FROM pa_fact WHERE d BETWEEN date '2020-03-01' AND date '2020-03-31' AND flag;
SELECT grp, sum(qty) FILTER (WHERE flag), count(*) FILTER (WHERE tag IS NULL)
  FROM pa_fact GROUP BY grp ORDER BY grp;
SELECT grp, count(*) FROM pa_fact GROUP BY grp HAVING sum(qty) > 1000000 ORDER BY 1;
SELECT n.name, count(*), sum(f.qty * f.price) FROM pa_fact f JOIN pa_dim n ON n.grp = f.grp
 WHERE f.tag LIKE 't1%' GROUP BY n.name ORDER BY n.name;
SELECT n.name, count(f.id) FROM pa_fact f LEFT JOIN pa_dim n ON n.grp = f.grp
 GROUP BY n.name ORDER BY n.name;
SELECT grp % 2 AS parity, sum(qty) / count(qty) AS mean FROM pa_fact GROUP BY grp % 2 ORDER BY 1;
-- Not split (DISTINCT, string_agg), same answers.
SELECT grp, count(DISTINCT qty), length(string_agg(tag, ',')) FROM pa_fact GROUP BY grp ORDER BY grp;
SET max_parallel_workers_per_gather = 0;
SELECT grp, count(*), count(qty), sum(qty), avg(qty), min(price), max(price), sum(price)
  FROM pa_fact GROUP BY grp ORDER BY grp;
RESET max_parallel_workers_per_gather;
SHOW max_parallel_workers_per_gather;
