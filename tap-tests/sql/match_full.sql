-- FOREIGN KEY … MATCH FULL: all key columns NULL or none (23503 with
-- PostgreSQL's DETAIL on INSERT, UPDATE and ADD CONSTRAINT),
-- confmatchtype, pg_get_constraintdef, information_schema; MATCH SIMPLE.
CREATE TABLE mf_p (a int, b int, PRIMARY KEY (a, b));
INSERT INTO mf_p VALUES (1, 1);
CREATE TABLE mf_c (id int, a int, b int, FOREIGN KEY (a, b) REFERENCES mf_p (a, b) MATCH FULL);
INSERT INTO mf_c VALUES (1, 1, 1), (2, NULL, NULL);
INSERT INTO mf_c VALUES (3, 1, NULL);
INSERT INTO mf_c VALUES (4, 2, 2);
UPDATE mf_c SET b = NULL WHERE id = 1;
CREATE TABLE mf_s (id int, a int, b int, FOREIGN KEY (a, b) REFERENCES mf_p MATCH SIMPLE ON DELETE CASCADE);
INSERT INTO mf_s VALUES (1, 1, NULL), (2, 9, NULL);
CREATE TABLE mf_col (id int, p int REFERENCES mf_p (a) MATCH FULL);
CREATE TABLE mf_x (a int, b int);
INSERT INTO mf_x VALUES (1, NULL);
ALTER TABLE mf_x ADD CONSTRAINT mf_x_fk FOREIGN KEY (a, b) REFERENCES mf_p MATCH FULL;
DELETE FROM mf_x;
ALTER TABLE mf_x ADD CONSTRAINT mf_x_fk FOREIGN KEY (a, b) REFERENCES mf_p MATCH FULL ON UPDATE CASCADE;
SELECT conname, confmatchtype, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text LIKE 'mf%' ORDER BY 1;
SELECT constraint_name, match_option FROM information_schema.referential_constraints WHERE constraint_name LIKE 'mf%' ORDER BY 1;
\d mf_c
-- @@ read-only
SELECT conname, confmatchtype, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text LIKE 'mf%' ORDER BY 1;
