-- equivalence_classes: column equalities of a run of inner joins form
-- classes (a = b AND b = c implies a = c), which join inputs no written
-- condition connects and leave one equality per class at each join
-- (planner/fromclause.rs, EqClasses). Each query must see every
-- equality of the class applied, whatever join order is chosen: NULL
-- keys, two members in one table, outer joins as inputs, and the hash
-- join that turns a LEFT join around to hash its smaller side.
CREATE TABLE ec_a (id int PRIMARY KEY, x int, y int, t text);
CREATE TABLE ec_b (id int PRIMARY KEY, x int, z int);
CREATE TABLE ec_c (id int PRIMARY KEY, x int, w text);
CREATE TABLE ec_d (x int, note text);
INSERT INTO ec_a SELECT g, g % 6, (g * 7) % 6, 't' || g FROM generate_series(1, 300) g;
INSERT INTO ec_a VALUES (301, NULL, NULL, 'null x'), (302, 2, NULL, 'null y'), (303, NULL, 2, 'null x2');
INSERT INTO ec_b SELECT g, g % 8, g % 4 FROM generate_series(1, 40) g;
INSERT INTO ec_b VALUES (41, NULL, 1);
INSERT INTO ec_c SELECT g, g % 5, 'w' || (g % 3) FROM generate_series(1, 25) g;
INSERT INTO ec_c VALUES (26, NULL, 'wnull');
INSERT INTO ec_d VALUES (1, 'one'), (2, 'two'), (NULL, 'none'), (9, 'nine');
CREATE TABLE ec_ch (id int, c char(6), v varchar(5));
INSERT INTO ec_ch VALUES (1, 'MAIL', 'MAIL'), (2, 'SHIP', 'x'), (3, NULL, NULL), (4, 'AIR', 'AIR '),
  (5, 'MAIL  ', ''), (6, '', 'SHIP');
ANALYZE;
-- @@ read-only
-- a.x = b.x, b.x = c.x: a and c are joined through the class.
SELECT count(*), sum(a.id), sum(b.id), sum(c.id)
  FROM ec_a a, ec_b b, ec_c c WHERE a.x = b.x AND b.x = c.x;
SELECT a.x, count(*) FROM ec_a a, ec_c c, ec_b b
 WHERE c.x = b.x AND a.x = b.x AND c.w = 'w1' GROUP BY a.x ORDER BY a.x;
-- Two members in one table: a.x = b.x AND a.y = b.x means a.x = a.y.
SELECT a.id, a.x, a.y, b.id FROM ec_a a, ec_b b
 WHERE a.x = b.x AND a.y = b.x AND b.z = 1 ORDER BY a.id, b.id LIMIT 12;
SELECT count(*) FROM ec_a a, ec_b b, ec_c c
 WHERE a.x = b.x AND a.y = c.x AND b.x = c.x;
-- A constant in the class's neighbourhood and a cross product elsewhere.
SELECT count(*) FROM ec_a a, ec_b b, ec_c c, ec_d d
 WHERE a.x = b.x AND b.x = c.x AND c.x = d.x AND d.note <> 'one';
SELECT count(*) FROM ec_a a, ec_b b, ec_c c, ec_d d
 WHERE a.x = b.x AND c.x = d.x AND a.id < 20;
-- An outer join as one input of the run.
SELECT a.id, b.id, c.id FROM ec_a a LEFT JOIN ec_b b ON b.id = a.id, ec_c c
 WHERE a.x = c.x AND c.x = b.x ORDER BY 1, 2, 3 LIMIT 10;
SELECT count(*), count(b.id) FROM ec_c c, ec_a a LEFT JOIN ec_b b ON b.x = a.x AND b.z = 2
 WHERE a.x = c.x AND c.id <= 5;
-- JOIN ... ON conditions of inner joins take part too.
SELECT count(*) FROM ec_a a JOIN ec_b b ON a.x = b.x JOIN ec_c c ON c.x = b.x JOIN ec_d d ON d.x = a.x;
-- A LEFT join hashing its preserved (smaller) side: every row of it once,
-- NULL keys and unmatched rows NULL-extended.
SELECT d.x, d.note, count(a.id) FROM ec_d d LEFT JOIN ec_a a ON a.x = d.x
 GROUP BY d.x, d.note ORDER BY d.note;
SELECT b.id, count(a.id) FROM ec_b b LEFT JOIN ec_a a ON a.y = b.x AND a.t NOT LIKE 't1%'
 GROUP BY b.id ORDER BY b.id LIMIT 12;
SELECT count(*), count(d.note) FROM ec_a a RIGHT JOIN ec_d d ON d.x = a.x;
SELECT count(*), count(a.id), count(d.note) FROM ec_a a FULL JOIN ec_d d ON d.x = a.y;
-- LIKE over ASCII and other text, with escapes.
SELECT t FROM ec_a WHERE t LIKE 't2_' ORDER BY id LIMIT 5;
SELECT t FROM ec_a WHERE t LIKE '%ull%' ORDER BY id;
SELECT 'a%b' LIKE 'a\%b', 'axb' LIKE 'a\%b', 'a_b' LIKE 'a\_b', 'ab\' LIKE 'ab\', 'x' LIKE '';
SELECT 'grüße' LIKE 'gr_ße', 'grüße' LIKE '%ü%', 'Grüße' ILIKE 'GR%E', 'naïve' LIKE 'na_ve%', 'a\b' LIKE 'a\\b';
SELECT '' LIKE '%', '' LIKE '_', 'abc' LIKE '%%c', 'abc' LIKE 'a%%%', 'special requests' LIKE '%special%requests%';
-- char(n) columns compared in filters (trailing blanks do not count).
SELECT id FROM ec_ch WHERE c IN ('MAIL', 'SHIP') ORDER BY id;
SELECT id FROM ec_ch WHERE c NOT IN ('MAIL', 'SHIP') ORDER BY id;
SELECT id FROM ec_ch WHERE c NOT IN ('MAIL', NULL) ORDER BY id;
SELECT id FROM ec_ch WHERE c IN ('AIR', NULL) ORDER BY id;
SELECT id FROM ec_ch WHERE c = 'AIR' OR c = ANY (ARRAY['SHIP', NULL]) ORDER BY id;
SELECT id FROM ec_ch WHERE c <> 'AIR' AND c >= 'MAIL' ORDER BY id;
SELECT id FROM ec_ch WHERE c = '' AND v IN ('SHIP', 'AIR') ORDER BY id;
SELECT id FROM ec_ch WHERE v IN ('AIR', 'x') OR c IN ('') ORDER BY id;
-- A constant through JOIN … ON: every member of the class gets it, and
-- the joins of the class need no equality (a cross product of the
-- restricted sides); mixed types, NULL, two constants, outer joins.
SELECT a.id, b.id, b.z FROM ec_a a JOIN ec_b b ON b.x = a.x WHERE a.x = 3 ORDER BY 1, 2;
SELECT count(*), sum(a.id), sum(b.id), sum(c.id) FROM ec_a a JOIN ec_b b ON b.x = a.x JOIN ec_c c ON c.x = b.x WHERE c.x = 2;
SELECT count(*) FROM ec_a a JOIN ec_b b ON b.x = a.x WHERE a.x = 3 AND b.x = 4;
SELECT count(*) FROM ec_a a JOIN ec_b b ON b.x = a.x WHERE a.x = NULL;
SELECT count(*), sum(b.id) FROM ec_a a JOIN ec_b b ON b.x::bigint = a.x WHERE a.x = 2;
SELECT a.id, d.note FROM ec_a a JOIN ec_d d ON d.x = a.x WHERE a.x = 2 AND a.id < 30 ORDER BY 1, 2;
SELECT count(*), count(c.id) FROM ec_a a JOIN ec_b b ON b.x = a.x LEFT JOIN ec_c c ON c.x = b.x WHERE a.x = 1;
SELECT count(*), count(b.id) FROM ec_a a LEFT JOIN ec_b b ON b.x = a.x WHERE a.x = 5;
SELECT count(*) FROM ec_a a JOIN (ec_b b LEFT JOIN ec_c c ON c.x = b.x) ON c.x = a.x WHERE a.x = 4;
SELECT count(*) FROM ec_a a JOIN ec_b b ON b.x = a.x AND b.z = a.y WHERE a.x = 2 AND a.y = 2;
