-- merge_join: an equi-join of two inputs already sorted on their keys is
-- a merge join (executor/mergejoin.rs): inner rows of one key form a
-- group that every outer row of that key meets. Every query must give
-- the join's answer: duplicate keys on both sides, NULL keys (they match
-- nothing), keys on one side only (below, between and above the other's),
-- LEFT / RIGHT / FULL joins with and without a join filter, two keys,
-- text keys, an empty side, and USING.
CREATE TABLE mj_a (k int, v text);
CREATE TABLE mj_b (k int, w text);
INSERT INTO mj_a SELECT g % 50, 'a' || g FROM generate_series(1, 300) g;
INSERT INTO mj_a VALUES (NULL, 'a null'), (NULL, 'a null 2'), (1000, 'a only'), (-7, 'a low');
INSERT INTO mj_b SELECT g % 70, 'b' || g FROM generate_series(1, 210) g WHERE g % 70 NOT IN (3, 4, 5);
INSERT INTO mj_b VALUES (NULL, 'b null'), (-5, 'b low'), (2000, 'b high');
CREATE TABLE mj_x (x int, y int, note text);
CREATE TABLE mj_y (x int, y int, tag text);
INSERT INTO mj_x SELECT g % 5, g % 3, 'x' || g FROM generate_series(1, 40) g;
INSERT INTO mj_y SELECT g % 4, g % 3, 'y' || g FROM generate_series(1, 30) g;
INSERT INTO mj_y VALUES (1, NULL, 'y null'), (NULL, 1, 'null y');
CREATE TABLE mj_t (name text, n int);
CREATE TABLE mj_u (name text, m int);
INSERT INTO mj_t VALUES ('apple', 1), ('banana', 2), ('banana', 3), ('cherry', 4), ('', 5), (NULL, 6);
INSERT INTO mj_u VALUES ('banana', 10), ('banana', 11), ('cherry', 12), ('date', 13), ('', 14), (NULL, 15);
CREATE TABLE mj_empty (k int, w text);
ANALYZE;
-- @@ read-only
-- Inner join: counts and a checksum over every pair.
SELECT count(*), count(DISTINCT a.k), sum(length(a.v || b.w))
  FROM (SELECT * FROM mj_a ORDER BY k) a
  JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k;
SELECT a.k, a.v, b.w
  FROM (SELECT * FROM mj_a ORDER BY k) a
  JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k
 WHERE a.k IN (0, 1, 49) ORDER BY 1, 2, 3;
-- Outer joins: what each side keeps.
SELECT count(*), count(a.v), count(b.w), count(*) FILTER (WHERE b.w IS NULL)
  FROM (SELECT * FROM mj_a ORDER BY k) a
  LEFT JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k;
SELECT a.k, a.v FROM (SELECT * FROM mj_a ORDER BY k) a
  LEFT JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k
 WHERE b.w IS NULL ORDER BY 1, 2;
SELECT count(*), count(a.v), count(b.w)
  FROM (SELECT * FROM mj_a ORDER BY k) a
 RIGHT JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k;
SELECT b.k, b.w FROM (SELECT * FROM mj_a ORDER BY k) a
 RIGHT JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k
 WHERE a.v IS NULL ORDER BY 1, 2;
SELECT count(*), count(a.v), count(b.w)
  FROM (SELECT * FROM mj_a ORDER BY k) a
  FULL JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k;
SELECT a.k AS ak, a.v, b.k AS bk, b.w FROM (SELECT * FROM mj_a ORDER BY k) a
  FULL JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k
 WHERE a.v IS NULL OR b.w IS NULL ORDER BY 1, 2, 3, 4;
-- A join filter beside the key: pairs it rejects leave outer rows unmatched.
SELECT a.k, a.v, b.w FROM (SELECT * FROM mj_a ORDER BY k) a
  LEFT JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k AND b.w > 'b15'
 WHERE a.k BETWEEN 1 AND 3 ORDER BY 1, 2, 3;
SELECT a.k, a.v, b.k, b.w FROM (SELECT * FROM mj_a WHERE k < 10 ORDER BY k) a
  FULL JOIN (SELECT * FROM mj_b WHERE k < 10 ORDER BY k) b ON a.k = b.k AND length(a.v) = length(b.w)
 ORDER BY 1, 2, 3, 4;
-- Two keys, sorted on both.
SELECT x.x, x.y, x.note, y.tag
  FROM (SELECT * FROM mj_x ORDER BY x, y) x
  JOIN (SELECT * FROM mj_y ORDER BY x, y) y ON x.x = y.x AND x.y = y.y
 ORDER BY 1, 2, 3, 4;
SELECT count(*), count(y.tag) FROM (SELECT * FROM mj_x ORDER BY x, y) x
  LEFT JOIN (SELECT * FROM mj_y ORDER BY x, y) y ON x.y = y.y AND x.x = y.x;
-- Text keys, the empty string among them.
SELECT t.name, t.n, u.m FROM (SELECT * FROM mj_t ORDER BY name) t
  FULL JOIN (SELECT * FROM mj_u ORDER BY name) u ON t.name = u.name
 ORDER BY 1, 2, 3;
-- An empty side.
SELECT count(*) FROM (SELECT * FROM mj_a ORDER BY k) a
  JOIN (SELECT * FROM mj_empty ORDER BY k) e ON a.k = e.k;
SELECT count(*), count(e.w) FROM (SELECT * FROM mj_a ORDER BY k) a
  LEFT JOIN (SELECT * FROM mj_empty ORDER BY k) e ON a.k = e.k;
SELECT count(*), count(a.v) FROM (SELECT * FROM mj_empty ORDER BY k) e
  FULL JOIN (SELECT * FROM mj_a ORDER BY k) a ON a.k = e.k;
-- USING, and the join's rows in key order.
SELECT k, a.v, b.w FROM (SELECT * FROM mj_a ORDER BY k) a
  JOIN (SELECT * FROM mj_b ORDER BY k) b USING (k)
 WHERE k < 2 ORDER BY k, a.v, b.w;
-- Three inputs, each sorted.
SELECT count(*), sum(c.k)
  FROM (SELECT * FROM mj_a ORDER BY k) a
  JOIN (SELECT * FROM mj_b ORDER BY k) b ON a.k = b.k
  JOIN (SELECT k FROM mj_a ORDER BY k) c ON c.k = a.k;
-- Past work_mem: the inner group of one key goes to a temporary file.
SET work_mem = '64kB';
SELECT count(*), count(a.k), count(b.w), sum(length(b.w))
  FROM (SELECT g % 5 AS k FROM generate_series(1, 20) g ORDER BY 1) a
  FULL JOIN (SELECT g % 2 AS k, 'w' || g AS w FROM generate_series(1, 20000) g ORDER BY 1) b
    ON a.k = b.k;
SELECT a.k, count(*), min(b.w), max(b.w)
  FROM (SELECT g % 5 AS k FROM generate_series(1, 20) g ORDER BY 1) a
  LEFT JOIN (SELECT g % 2 AS k, 'w' || g AS w FROM generate_series(1, 20000) g ORDER BY 1) b
    ON a.k = b.k
 GROUP BY a.k ORDER BY a.k;
RESET work_mem;
