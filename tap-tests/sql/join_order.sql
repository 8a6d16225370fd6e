-- Inner joins listed in an order that would join unconnected tables first
-- (comma lists, CROSS JOIN, an outer join kept whole among them) are
-- planned in an order without the cross product; the rows and their
-- columns are those of the textual order.
CREATE TABLE jo_a (id int PRIMARY KEY, v text);
CREATE TABLE jo_b (id int PRIMARY KEY, a_id int, w text);
CREATE TABLE jo_c (id int PRIMARY KEY, b_id int, x text);
CREATE TABLE jo_d (c_id int, y text);
INSERT INTO jo_a SELECT g, 'a' || g FROM generate_series(1, 40) g;
INSERT INTO jo_b SELECT g, g % 40 + 1, 'b' || g FROM generate_series(1, 40) g;
INSERT INTO jo_c SELECT g, g % 40 + 1, 'c' || g FROM generate_series(1, 40) g;
INSERT INTO jo_d SELECT g, 'd' || g FROM generate_series(1, 40, 3) g;
SELECT count(*), sum(jo_a.id), sum(jo_c.id) FROM jo_a, jo_c, jo_b
  WHERE jo_a.id = jo_b.a_id AND jo_b.id = jo_c.b_id;
SELECT * FROM jo_a, jo_c, jo_b
  WHERE jo_a.id = jo_b.a_id AND jo_b.id = jo_c.b_id AND jo_a.id IN (7, 8) ORDER BY jo_a.id;
SELECT jo_c.*, jo_a.v FROM jo_a CROSS JOIN jo_c JOIN jo_b ON jo_b.id = jo_c.b_id
  WHERE jo_a.id = jo_b.a_id AND jo_a.id < 4 ORDER BY 1;
SELECT a.id, c.x, d.y FROM jo_a a, jo_c c LEFT JOIN jo_d d ON d.c_id = c.id, jo_b b
  WHERE a.id = b.a_id AND b.id = c.b_id AND a.id BETWEEN 10 AND 15 ORDER BY 1, 2;
SELECT a.id, d.y FROM jo_d d, jo_a a, jo_b b, jo_c c
  WHERE c.id = d.c_id AND a.id = b.a_id AND b.id = c.b_id AND a.id < 12 ORDER BY 1;
SELECT count(*) FROM jo_a a, jo_b b, jo_c c WHERE a.id = c.b_id;
SELECT a.id, b.id, c.id FROM jo_a a, jo_b b, jo_c c
  WHERE a.id = c.b_id AND a.id < 2 AND b.id < 3 ORDER BY 1, 2, 3;
-- The same on the standby.
-- @@ read-only
SELECT * FROM jo_a, jo_c, jo_b
  WHERE jo_a.id = jo_b.a_id AND jo_b.id = jo_c.b_id AND jo_a.id IN (7, 8) ORDER BY jo_a.id;
SELECT a.id, c.x, d.y FROM jo_a a, jo_c c LEFT JOIN jo_d d ON d.c_id = c.id, jo_b b
  WHERE a.id = b.a_id AND b.id = c.b_id AND a.id BETWEEN 10 AND 15 ORDER BY 1, 2;
