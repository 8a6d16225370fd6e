-- parallel_hash: a hash join on a split aggregation's driving path whose
-- hashed side is itself driven by a big scan builds its table together
-- (planner/parallel.rs build_together; executor/hashjoin.rs
-- Build::Parts, PostgreSQL's Parallel Hash): each participant hashes
-- the rows of the pages it claims, and the parts become one table. Keys
-- repeated across the parts (their chains joined), NULL keys, a join
-- filter, inner / left / semi / anti joins, a hashed side that is a join
-- itself (TPC-H Q10's shape), and past work_mem, where the parts do not
-- fit and each participant builds the whole table alone.
CREATE TABLE ph_fact (id int, k int, qty int);
INSERT INTO ph_fact
  SELECT g, CASE WHEN g % 101 = 0 THEN NULL ELSE g % 40000 END, g % 13
  FROM generate_series(1, 300000) g;
CREATE TABLE ph_side (k int, tag int, note text);
INSERT INTO ph_side
  SELECT CASE WHEN g % 89 = 0 THEN NULL ELSE g % 50000 END, g % 7, 'side ' || (g % 11)
  FROM generate_series(1, 100000) g;
CREATE TABLE ph_link (id int, side_k int);
INSERT INTO ph_link SELECT g, (g * 7) % 60000 FROM generate_series(1, 100000) g;
CREATE INDEX ph_fact_id ON ph_fact (id);
ANALYZE;
-- @@ read-only
SELECT s.tag, count(*), sum(f.qty), max(s.note)
  FROM ph_fact f JOIN ph_side s ON s.k = f.k
 GROUP BY s.tag ORDER BY s.tag;
SELECT count(*), count(s.k), sum(f.qty), sum(s.tag)
  FROM ph_fact f LEFT JOIN ph_side s ON s.k = f.k AND s.tag <> f.qty % 7;
SELECT f.qty, count(*)
  FROM ph_fact f
 WHERE EXISTS (SELECT 1 FROM ph_side s WHERE s.k = f.k AND s.tag = 3)
 GROUP BY f.qty ORDER BY f.qty;
SELECT f.qty, count(*)
  FROM ph_fact f
 WHERE NOT EXISTS (SELECT 1 FROM ph_side s WHERE s.k = f.k)
 GROUP BY f.qty ORDER BY f.qty;
SELECT s.note, count(*), sum(l.id)
  FROM ph_side s, ph_link l, ph_fact f
 WHERE l.side_k = s.k AND f.id = l.id AND f.qty < 6
 GROUP BY s.note ORDER BY s.note;
SET work_mem = '64kB';
SELECT s.tag, count(*), sum(f.qty), max(s.note)
  FROM ph_fact f JOIN ph_side s ON s.k = f.k
 GROUP BY s.tag ORDER BY s.tag;
SELECT count(*), count(s.k), sum(f.qty), sum(s.tag)
  FROM ph_fact f LEFT JOIN ph_side s ON s.k = f.k AND s.tag <> f.qty % 7;
RESET work_mem;
