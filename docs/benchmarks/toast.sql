\timing on
CREATE TABLE seed (s text);
INSERT INTO seed SELECT string_agg(md5(i::text), '') FROM generate_series(1, 40000) i;
CREATE TABLE k10 (id int, v text);
CREATE TABLE m1 (id int, v text);
INSERT INTO k10 SELECT i, substr(s, 1 + (i % 1000) * 100, 10000) FROM seed, generate_series(1, 2000) i;
INSERT INTO m1 SELECT i, substr(s || s, 1 + (i % 100) * 1000, 1000000) FROM seed, generate_series(1, 100) i;
SELECT sum(length(v)) FROM k10;
SELECT sum(length(v)) FROM k10;
SELECT sum(length(v)) FROM m1;
SELECT sum(length(v)) FROM m1;
