-- alter_table: ALTER TABLE actions, CHECK / UNIQUE constraints and their
-- messages; the standby then reads the altered tables.
CREATE TABLE at_t (a int CHECK (a > 0), b int, CHECK (a > b), CHECK (b > 0), CHECK (1 > 0), UNIQUE (a, b));
INSERT INTO at_t VALUES (5, 1);
-- ADD COLUMN with a default: existing rows read it
ALTER TABLE at_t ADD COLUMN c int NOT NULL DEFAULT 5;
ALTER TABLE at_t ADD COLUMN note text DEFAULT 'none';
ALTER TABLE at_t ADD COLUMN plain int;
INSERT INTO at_t VALUES (0, 1);
INSERT INTO at_t VALUES (6, 7);
INSERT INTO at_t (a, b, c) VALUES (6, 1, NULL);
INSERT INTO at_t (a, b) VALUES (8, 2);
ALTER TABLE at_t ADD CONSTRAINT at_big CHECK (a > 100);
ALTER TABLE at_t ADD CONSTRAINT at_pos CHECK (c > 0);
INSERT INTO at_t (a, b, c) VALUES (9, 1, -1);
UPDATE at_t SET c = 0 WHERE a = 8;
-- NOT NULL
ALTER TABLE at_t ALTER COLUMN plain SET NOT NULL;
ALTER TABLE at_t ALTER COLUMN b SET NOT NULL;
INSERT INTO at_t (a, b) VALUES (7, NULL);
ALTER TABLE at_t ALTER COLUMN b DROP NOT NULL;
INSERT INTO at_t (a, b) VALUES (10, NULL);
-- errors naming columns and constraints
ALTER TABLE at_t DROP COLUMN zz;
ALTER TABLE at_t DROP COLUMN IF EXISTS zz;
ALTER TABLE at_t RENAME COLUMN zz TO yy;
ALTER TABLE at_t RENAME COLUMN a TO b;
ALTER TABLE at_t ADD COLUMN a int;
ALTER TABLE at_t ADD COLUMN IF NOT EXISTS a int;
ALTER TABLE at_t DROP CONSTRAINT nope;
ALTER TABLE at_t DROP CONSTRAINT IF EXISTS nope;
ALTER TABLE at_t RENAME TO at_t;
ALTER TABLE at_t ADD COLUMN d int NOT NULL;
ALTER TABLE at_nosuch ADD COLUMN d int;
ALTER TABLE IF EXISTS at_nosuch ADD COLUMN d int;
CREATE TABLE at_p (id int PRIMARY KEY, v text DEFAULT 'x');
ALTER TABLE at_p ALTER COLUMN id DROP NOT NULL;
ALTER TABLE at_p ADD COLUMN d int NOT NULL;
INSERT INTO at_p VALUES (1);
ALTER TABLE at_p ALTER COLUMN v SET DEFAULT 'y';
INSERT INTO at_p VALUES (2);
ALTER TABLE at_p ALTER COLUMN v DROP DEFAULT;
INSERT INTO at_p VALUES (3);
SELECT * FROM at_p ORDER BY id;
-- multi-column UNIQUE
INSERT INTO at_t VALUES (6, 1, 5);
INSERT INTO at_t VALUES (5, 1, 5);
-- DROP COLUMN takes its constraints and indexes along
ALTER TABLE at_t DROP COLUMN b;
INSERT INTO at_t VALUES (11, 3);
SELECT * FROM at_t ORDER BY a;
SELECT a, c FROM at_t WHERE a > 5 ORDER BY a;
-- RENAME COLUMN keeps the CHECK working
ALTER TABLE at_t RENAME COLUMN a TO aa;
INSERT INTO at_t (aa) VALUES (-3);
-- RENAME TO
ALTER TABLE at_t RENAME TO at_u;
INSERT INTO at_u (aa, c) VALUES (12, 0);
-- ADD PRIMARY KEY / UNIQUE / CHECK by name; DROP CONSTRAINT
CREATE TABLE at_k (x int, y int);
INSERT INTO at_k VALUES (1, 1), (2, 1);
ALTER TABLE at_k ADD CONSTRAINT at_k_y UNIQUE (y);
ALTER TABLE at_k ADD UNIQUE (x, y);
ALTER TABLE at_k ADD PRIMARY KEY (x);
INSERT INTO at_k VALUES (1, 3);
INSERT INTO at_k VALUES (2, 1);
ALTER TABLE at_k ADD CONSTRAINT at_k_small CHECK (y < 10);
INSERT INTO at_k VALUES (3, 10);
ALTER TABLE at_k DROP CONSTRAINT at_k_small;
INSERT INTO at_k VALUES (3, 10);
ALTER TABLE at_k DROP CONSTRAINT at_k_pkey;
INSERT INTO at_k VALUES (1, 4);
-- CREATE TABLE constraint names and errors
CREATE TABLE at_c (a int CONSTRAINT a_pos CHECK (a > 0), b text CHECK (length(b) < 3), UNIQUE (a, b));
INSERT INTO at_c VALUES (0, 'x');
INSERT INTO at_c VALUES (1, 'long');
INSERT INTO at_c VALUES (1, NULL);
-- @@ read-only
SELECT * FROM at_u ORDER BY aa;
SELECT * FROM at_p ORDER BY id;
SELECT * FROM at_k ORDER BY x, y;
SELECT * FROM at_c;
SELECT at_u.* FROM at_u ORDER BY 1;
SELECT * FROM at_u u(p, q) ORDER BY 1;
