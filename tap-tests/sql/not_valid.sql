-- ADD CONSTRAINT … NOT VALID (CHECK and FOREIGN KEY: existing rows not
-- checked, new ones are; convalidated, pg_get_constraintdef, \d) and
-- ALTER TABLE … VALIDATE CONSTRAINT (transactional).
CREATE TABLE nv_p (id int PRIMARY KEY);
INSERT INTO nv_p VALUES (1);
CREATE TABLE nv_c (id int, p int);
INSERT INTO nv_c VALUES (-1, 5), (2, 1);
ALTER TABLE nv_c ADD CONSTRAINT nv_chk CHECK (id > 0);
ALTER TABLE nv_c ADD CONSTRAINT nv_chk CHECK (id > 0) NOT VALID;
ALTER TABLE nv_c ADD CHECK (p < 100) NOT VALID;
ALTER TABLE nv_c ADD CONSTRAINT nv_fk FOREIGN KEY (p) REFERENCES nv_p (id) NOT VALID;
ALTER TABLE nv_c ADD FOREIGN KEY (p) REFERENCES nv_p NOT VALID;
SELECT conname, convalidated, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'nv_c'::regclass ORDER BY 1;
\d nv_c
INSERT INTO nv_c VALUES (-2, 1);
INSERT INTO nv_c VALUES (3, 7);
ALTER TABLE nv_c VALIDATE CONSTRAINT nv_chk;
ALTER TABLE nv_c VALIDATE CONSTRAINT nv_fk;
DELETE FROM nv_c WHERE id < 0 OR p = 5;
BEGIN;
ALTER TABLE nv_c VALIDATE CONSTRAINT nv_chk;
ROLLBACK;
SELECT conname, convalidated FROM pg_constraint WHERE conrelid = 'nv_c'::regclass ORDER BY 1;
ALTER TABLE nv_c VALIDATE CONSTRAINT nv_chk;
ALTER TABLE nv_c VALIDATE CONSTRAINT nv_fk;
ALTER TABLE nv_c VALIDATE CONSTRAINT nv_nope;
ALTER TABLE nv_p VALIDATE CONSTRAINT nv_p_pkey;
SELECT conname, convalidated, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'nv_c'::regclass ORDER BY 1;
-- @@ read-only
SELECT conname, convalidated, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'nv_c'::regclass ORDER BY 1;
