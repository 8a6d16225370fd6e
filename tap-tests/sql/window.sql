-- window: ranking, offset and value functions, aggregates as windows,
-- PARTITION BY, and ROWS / RANGE / GROUPS frames.
CREATE TABLE win_s (id int, dept text, amount int, day int);
INSERT INTO win_s VALUES
  (1, 'a', 10, 1), (2, 'a', 20, 2), (3, 'a', 20, 3), (4, 'a', NULL, 4),
  (5, 'b', 5, 1), (6, 'b', 15, 1), (7, 'b', 15, 5),
  (8, 'c', 100, 2),
  (9, NULL, 7, 3), (10, NULL, 7, 3);
-- @@ read-only
SELECT id, dept, amount, row_number() OVER (ORDER BY id) FROM win_s ORDER BY id;
SELECT id, dept, amount, row_number() OVER (PARTITION BY dept ORDER BY amount DESC NULLS LAST, id) FROM win_s ORDER BY id;
SELECT id, amount, rank() OVER w, dense_rank() OVER w, percent_rank() OVER w, cume_dist() OVER w FROM win_s WINDOW w AS (ORDER BY amount) ORDER BY amount, id;
SELECT id, dept, amount, rank() OVER (PARTITION BY dept ORDER BY amount) FROM win_s ORDER BY dept, amount, id;
SELECT id, ntile(3) OVER (ORDER BY id), ntile(4) OVER (PARTITION BY dept ORDER BY id) FROM win_s ORDER BY id;
-- lag / lead / first_value / last_value / nth_value
SELECT id, amount, lag(amount) OVER (ORDER BY id), lead(amount) OVER (ORDER BY id), lag(amount, 2, -1) OVER (ORDER BY id), lead(id, 3, 0) OVER (ORDER BY id) FROM win_s ORDER BY id;
SELECT id, dept, lag(id) OVER (PARTITION BY dept ORDER BY id) AS prev, lead(id) OVER (PARTITION BY dept ORDER BY id) AS next FROM win_s ORDER BY id;
SELECT id, dept, first_value(id) OVER w, last_value(id) OVER w, nth_value(id, 2) OVER w FROM win_s WINDOW w AS (PARTITION BY dept ORDER BY id) ORDER BY id;
SELECT id, dept, first_value(id) OVER w, last_value(id) OVER w, nth_value(id, 2) OVER w FROM win_s WINDOW w AS (PARTITION BY dept ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) ORDER BY id;
-- aggregates as window functions
SELECT id, dept, amount, sum(amount) OVER (PARTITION BY dept), count(*) OVER (PARTITION BY dept), count(amount) OVER (PARTITION BY dept) FROM win_s ORDER BY id;
SELECT id, amount, sum(amount) OVER (ORDER BY id) AS running, avg(amount) OVER (ORDER BY id) AS running_avg FROM win_s ORDER BY id;
SELECT id, amount, sum(amount) OVER (ORDER BY amount) AS by_peers, min(amount) OVER (), max(amount) OVER () FROM win_s ORDER BY amount, id;
SELECT dept, sum(amount), sum(sum(amount)) OVER (ORDER BY dept NULLS FIRST) AS cumulative, rank() OVER (ORDER BY sum(amount) DESC NULLS LAST) FROM win_s GROUP BY dept ORDER BY dept NULLS FIRST;
-- frames
SELECT id, amount, sum(amount) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS rows3 FROM win_s ORDER BY id;
SELECT id, amount, sum(amount) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS rest FROM win_s ORDER BY id;
SELECT id, amount, count(*) OVER (ORDER BY id ROWS 2 PRECEDING) AS last3 FROM win_s ORDER BY id;
SELECT id, day, sum(amount) OVER (ORDER BY day RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS range1 FROM win_s ORDER BY day, id;
SELECT id, day, sum(amount) OVER (ORDER BY day RANGE BETWEEN CURRENT ROW AND 2 FOLLOWING) AS range2 FROM win_s ORDER BY day, id;
SELECT id, day, count(*) OVER (ORDER BY day GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS groups3 FROM win_s ORDER BY day, id;
SELECT id, day, sum(amount) OVER (ORDER BY day GROUPS CURRENT ROW) AS peers FROM win_s ORDER BY day, id;
-- windows over expressions, in subqueries, with filters
SELECT * FROM (SELECT id, dept, row_number() OVER (PARTITION BY dept ORDER BY amount DESC NULLS LAST, id) AS rn FROM win_s) t WHERE rn = 1 ORDER BY dept NULLS FIRST;
SELECT id, amount - avg(amount) OVER (PARTITION BY dept) AS diff FROM win_s WHERE dept IS NOT NULL ORDER BY id;
SELECT id, count(*) FILTER (WHERE amount > 10) OVER (ORDER BY id) FROM win_s ORDER BY id;
SELECT id, row_number() OVER (ORDER BY id DESC) FROM win_s ORDER BY row_number() OVER (ORDER BY id DESC);
-- errors
SELECT id FROM win_s WHERE row_number() OVER (ORDER BY id) > 1;
SELECT ntile(0) OVER (ORDER BY id) FROM win_s;
