-- DROP SEQUENCE with defaults that use it (2BP01, CASCADE drops the
-- defaults, transactional), identity sequences, DROP INDEX of a
-- constraint's index.
CREATE SEQUENCE ds_s;
CREATE TABLE ds_t (id int DEFAULT nextval('ds_s'), v text, w bigint DEFAULT nextval('ds_s'::regclass));
DROP SEQUENCE ds_s;
BEGIN;
DROP SEQUENCE ds_s CASCADE;
\d ds_t
ROLLBACK;
\d ds_t
DROP SEQUENCE ds_s CASCADE;
\d ds_t
CREATE TABLE ds_serial (id serial, x int GENERATED ALWAYS AS IDENTITY);
DROP SEQUENCE ds_serial_id_seq;
DROP SEQUENCE ds_serial_x_seq;
DROP SEQUENCE ds_serial_x_seq CASCADE;
CREATE TABLE ds_p (id int PRIMARY KEY, u int UNIQUE);
DROP INDEX ds_p_pkey;
DROP INDEX ds_p_u_key;
CREATE INDEX ds_p_plain ON ds_p (u);
DROP INDEX ds_p_plain;
DROP INDEX ds_nope;
DROP INDEX IF EXISTS ds_nope;
DROP TABLE ds_t, ds_serial, ds_p;
-- A type with column and view dependents: one list, one NOTICE.
CREATE TYPE ds_mood AS ENUM ('a', 'b');
CREATE TABLE ds_e (id int PRIMARY KEY, m ds_mood, n int UNIQUE);
CREATE VIEW ds_ev AS SELECT id, m FROM ds_e;
DROP TYPE ds_mood;
DROP TYPE ds_mood CASCADE;
\d ds_e
DROP INDEX ds_e_n_key CASCADE;
DROP TABLE ds_e;
-- A table with a view and a foreign key depending on it.
CREATE TABLE ds_q (id int PRIMARY KEY);
CREATE TABLE ds_r (qid int REFERENCES ds_q (id));
CREATE VIEW ds_qv AS SELECT id FROM ds_q;
DROP TABLE ds_q CASCADE;
\d ds_r
DROP TABLE ds_r;
-- @@ read-only
SELECT count(*) FROM pg_class WHERE relname LIKE 'ds\_%';
