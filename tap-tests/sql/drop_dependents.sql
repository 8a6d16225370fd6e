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
-- @@ read-only
SELECT count(*) FROM pg_class WHERE relname LIKE 'ds\_%';
