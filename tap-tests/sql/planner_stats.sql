-- planner_stats: results of plans chosen from ANALYZE's statistics — join
-- orders by cost, index nested loops, lookups of an index's leading
-- columns (with NULLs in later columns, which have no index entry), and
-- hash joins hashing either side. Plans differ from PostgreSQL's; rows
-- must not.
CREATE TABLE pst_ps (pk int, sk int, cost numeric, PRIMARY KEY (pk, sk));
INSERT INTO pst_ps SELECT g / 4, g % 4, g FROM generate_series(0, 40000) g;
CREATE TABLE pst_li (ok int, pk int, sk int, q int);
CREATE INDEX pst_li_p ON pst_li (pk, sk);
INSERT INTO pst_li SELECT g, g % 5000, g % 7, g % 50 FROM generate_series(1, 60000) g;
INSERT INTO pst_li VALUES (0, NULL, 1, 1), (0, 3, NULL, 2), (-1, 3, 2, NULL);
CREATE TABLE pst_n (id int PRIMARY KEY, name text, region int);
INSERT INTO pst_n SELECT g, 'n' || g, g % 5 FROM generate_series(0, 24) g;
CREATE TABLE pst_r (id int PRIMARY KEY, name text);
INSERT INTO pst_r VALUES (0, 'AFRICA'), (1, 'AMERICA'), (2, 'ASIA'), (3, 'EUROPE'), (4, 'MIDDLE EAST');
CREATE TABLE pst_s (id int PRIMARY KEY, nation int NOT NULL);
INSERT INTO pst_s SELECT g, g % 25 FROM generate_series(0, 999) g;
ANALYZE;
-- @@ read-only
SELECT * FROM pst_ps WHERE pk = 17 ORDER BY sk;
SELECT count(*), sum(q) FROM pst_li WHERE pk = 3;
SELECT count(*) FROM pst_li WHERE pk = 3 AND sk = 2;
SELECT count(*) FROM pst_li WHERE pk IS NULL;
SELECT sum(l.q) FROM pst_ps p JOIN pst_li l ON l.pk = p.pk WHERE p.sk = 1 AND p.cost < 100;
SELECT p.pk, count(*) FROM pst_li l, pst_ps p WHERE l.pk = p.pk AND l.sk = p.sk AND l.ok < 30 GROUP BY p.pk ORDER BY p.pk;
-- largest table first in the text; the filter on the region keeps one row
SELECT r.name, count(*), sum(l.q) FROM pst_li l, pst_s s, pst_n n, pst_r r
 WHERE l.sk = s.id AND s.nation = n.id AND n.region = r.id AND r.name = 'ASIA'
 GROUP BY r.name;
SELECT n.name, count(*) FROM pst_r r JOIN pst_n n ON n.region = r.id JOIN pst_s s ON s.nation = n.id
 WHERE r.name IN ('EUROPE', 'AFRICA') GROUP BY n.name ORDER BY n.name;
-- a join on a non-key column, either side larger
SELECT count(*) FROM pst_n n JOIN pst_li l ON l.q = n.id;
SELECT count(*) FROM pst_li l JOIN pst_n n ON l.q = n.id WHERE l.ok % 2 = 0;
-- outer joins keep their rows whatever the order
SELECT count(*), count(l.ok) FROM pst_n n LEFT JOIN pst_li l ON l.pk = n.id AND l.sk = 6;
SELECT count(*) FROM pst_s s WHERE NOT EXISTS (SELECT 1 FROM pst_li l WHERE l.pk = s.id AND l.sk = 3);
SELECT count(*) FROM pst_s s WHERE s.id IN (SELECT pk FROM pst_li WHERE q = 7);
-- a join condition repeated in every arm of an OR is a join key (TPC-H Q19)
SELECT count(*), sum(l.q) FROM pst_li l, pst_ps p
 WHERE (l.pk = p.pk AND l.q < 5 AND p.sk = 1) OR (l.pk = p.pk AND l.q > 45 AND p.sk = 2)
    OR (p.pk = l.pk AND l.q IS NULL);
SELECT count(*) FROM pst_n n, pst_s s WHERE (s.nation = n.id) OR (s.nation = n.id AND n.region = 1);
SELECT count(*) FROM pst_n n, pst_r r WHERE (n.region = r.id AND r.name = 'ASIA') OR (n.region = r.id AND n.id > 20) OR n.id = 0;
