-- dml_basic: single-table writes and what psql prints for them — command
-- tags, RETURNING, DEFAULT, INSERT … SELECT, UPDATE / DELETE with WHERE,
-- constraint violations with their DETAIL. Writes: primary only.
CREATE TABLE dmlb_t (id int PRIMARY KEY, name text NOT NULL, qty int DEFAULT 0, note text);
CREATE TABLE dmlb_copy (id int, name text);
INSERT INTO dmlb_t VALUES (1, 'one', 10, NULL);
INSERT INTO dmlb_t (id, name) VALUES (2, 'two'), (3, 'three');
INSERT INTO dmlb_t VALUES (4, 'four', DEFAULT, 'x') RETURNING *;
INSERT INTO dmlb_t (name, id, note) VALUES ('five', 5, 'y') RETURNING id, qty * 2 AS dbl, upper(name);
SELECT * FROM dmlb_t ORDER BY id;
INSERT INTO dmlb_copy SELECT id, name FROM dmlb_t WHERE qty = 0;
INSERT INTO dmlb_copy SELECT id + 10, name || '!' FROM dmlb_t WHERE false;
SELECT * FROM dmlb_copy ORDER BY id;
UPDATE dmlb_t SET qty = qty + 1 WHERE id > 2;
UPDATE dmlb_t SET note = 'none' WHERE note IS NULL RETURNING id, note;
UPDATE dmlb_t SET qty = 100 WHERE id = 99;
UPDATE dmlb_t SET name = name || '+', qty = DEFAULT WHERE id = 1 RETURNING *;
SELECT * FROM dmlb_t ORDER BY id;
DELETE FROM dmlb_t WHERE id = 5 RETURNING name;
DELETE FROM dmlb_t WHERE id > 100;
DELETE FROM dmlb_copy;
SELECT count(*) FROM dmlb_copy;
-- constraint violations and bad values
INSERT INTO dmlb_t VALUES (1, 'dup');
INSERT INTO dmlb_t (id) VALUES (6);
UPDATE dmlb_t SET id = 2 WHERE id = 3;
UPDATE dmlb_t SET name = NULL WHERE id = 2;
INSERT INTO dmlb_t VALUES (8, 'big', 2147483648);
SELECT * FROM dmlb_t ORDER BY id;
-- transactions around writes
BEGIN;
INSERT INTO dmlb_t VALUES (20, 'tx', 1, NULL);
UPDATE dmlb_t SET qty = -1 WHERE id = 20;
ROLLBACK;
SELECT count(*) FROM dmlb_t WHERE id = 20;
BEGIN;
INSERT INTO dmlb_t VALUES (21, 'kept', 1, NULL);
SAVEPOINT s;
DELETE FROM dmlb_t WHERE id = 21;
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT id, name FROM dmlb_t WHERE id >= 20 ORDER BY id;
