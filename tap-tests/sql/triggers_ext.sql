-- triggers_ext: pg_get_triggerdef and psql's \d trigger footers, the
-- TRIGGER privilege and owner checks, TRUNCATE triggers, triggers on COPY
-- FROM, BEFORE UPDATE triggers on INSERT … ON CONFLICT DO UPDATE,
-- constraint triggers deferred to COMMIT (and SET CONSTRAINTS); the
-- read-only part reads what they wrote on the standby (which fires none).
CREATE TABLE tx_t (id int PRIMARY KEY, a int, "B" text);
CREATE TABLE tx_log (seq serial PRIMARY KEY, what text);
CREATE FUNCTION tx_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tx_log (what) VALUES (TG_NAME || ' ' || TG_WHEN || ' ' || TG_OP
    || coalesce(' new=' || NEW.id || '/' || NEW.a, '') || coalesce(' old=' || OLD.id || '/' || OLD.a, ''));
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;
END;
$$;
CREATE FUNCTION tx_stmt() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I', TG_TABLE_NAME) INTO n;
  INSERT INTO tx_log (what) VALUES (TG_NAME || ' ' || TG_WHEN || ' ' || TG_LEVEL || ' ' || TG_OP
    || ' on ' || TG_TABLE_NAME || ' rows=' || n);
  RETURN NULL;
END;
$$;
-- pg_get_triggerdef, plain and pretty, and psql's \d footers
CREATE TRIGGER tx_b BEFORE INSERT OR UPDATE OF a, "B" ON tx_t FOR EACH ROW
  WHEN (NEW.a > 0 AND NEW."B" <> 'z') EXECUTE FUNCTION tx_row('x y', 'it''s', 42);
CREATE TRIGGER tx_a AFTER UPDATE ON tx_t FOR EACH ROW
  WHEN (OLD.a IS DISTINCT FROM NEW.a) EXECUTE PROCEDURE tx_row();
CREATE TRIGGER tx_s AFTER DELETE OR TRUNCATE OR INSERT ON tx_t EXECUTE FUNCTION tx_stmt();
CREATE TRIGGER "Tx Off" BEFORE DELETE ON tx_t FOR EACH ROW EXECUTE FUNCTION tx_row();
ALTER TABLE tx_t DISABLE TRIGGER "Tx Off";
CREATE CONSTRAINT TRIGGER tx_c AFTER INSERT OR UPDATE ON tx_t DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION tx_row();
CREATE CONSTRAINT TRIGGER tx_ci AFTER DELETE ON tx_t FOR EACH ROW EXECUTE FUNCTION tx_row();
CREATE SCHEMA tx_sch;
CREATE TABLE tx_sch.hidden (x int);
CREATE TRIGGER tx_h AFTER INSERT ON tx_sch.hidden FOR EACH ROW EXECUTE FUNCTION tx_row();
SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid IN ('tx_t'::regclass, 'tx_sch.hidden'::regclass) ORDER BY 1;
SELECT tgname, pg_get_triggerdef(oid, true) FROM pg_trigger WHERE tgrelid IN ('tx_t'::regclass, 'tx_sch.hidden'::regclass) ORDER BY 1;
SELECT tgname, tgdeferrable, tginitdeferred, tgconstraint <> 0 AS has_constraint FROM pg_trigger WHERE tgrelid = 'tx_t'::regclass ORDER BY 1;
SELECT pg_get_triggerdef(0);
\d tx_t
-- the TRIGGER privilege creates; only the owner drops, enables, disables
CREATE ROLE tx_role;
GRANT SELECT, INSERT ON tx_t TO tx_role;
SET ROLE tx_role;
CREATE TRIGGER tx_mine AFTER INSERT ON tx_t FOR EACH ROW EXECUTE FUNCTION tx_row();
RESET ROLE;
GRANT TRIGGER ON tx_t TO tx_role;
SET ROLE tx_role;
CREATE TRIGGER tx_mine AFTER INSERT ON tx_t FOR EACH ROW EXECUTE FUNCTION tx_row();
DROP TRIGGER tx_mine ON tx_t;
DROP TRIGGER tx_none ON tx_t;
ALTER TABLE tx_t DISABLE TRIGGER tx_mine;
RESET ROLE;
DROP TRIGGER tx_mine ON tx_t;
REVOKE ALL ON tx_t FROM tx_role;
DROP ROLE tx_role;
-- constraint triggers: deferred ones fire at COMMIT, immediate ones at
-- the statement's end; SET CONSTRAINTS moves them
INSERT INTO tx_t VALUES (1, 1, 'one');
SELECT seq, what FROM tx_log ORDER BY seq;
BEGIN;
INSERT INTO tx_t VALUES (2, 2, 'two');
UPDATE tx_t SET a = 20 WHERE id = 2;
SELECT count(*) FROM tx_log;
COMMIT;
SELECT seq, what FROM tx_log ORDER BY seq;
BEGIN;
INSERT INTO tx_t VALUES (3, 3, 'three');
SET CONSTRAINTS tx_c IMMEDIATE;
SELECT count(*) FROM tx_log;
INSERT INTO tx_t VALUES (4, 4, 'four');
SET CONSTRAINTS ALL DEFERRED;
INSERT INTO tx_t VALUES (5, 5, 'five');
SELECT count(*) FROM tx_log;
ROLLBACK;
SELECT count(*) FROM tx_log;
BEGIN;
SET CONSTRAINTS tx_ci DEFERRED;
ROLLBACK;
BEGIN;
SET CONSTRAINTS tx_nosuch DEFERRED;
ROLLBACK;
-- an error in a deferred trigger fails the COMMIT
CREATE TABLE tx_d (id int);
CREATE FUNCTION tx_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id < 0 THEN
    RAISE EXCEPTION 'negative id % refused at commit', NEW.id;
  END IF;
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER tx_d_check AFTER INSERT ON tx_d INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tx_refuse();
BEGIN;
INSERT INTO tx_d VALUES (1), (-1);
SELECT count(*) FROM tx_d;
COMMIT;
SELECT count(*) FROM tx_d;
INSERT INTO tx_d VALUES (2);
INSERT INTO tx_d VALUES (-2);
SELECT id FROM tx_d ORDER BY id;
-- constraint trigger errors
CREATE CONSTRAINT TRIGGER tx_bad BEFORE INSERT ON tx_d FOR EACH ROW EXECUTE FUNCTION tx_refuse();
CREATE CONSTRAINT TRIGGER tx_bad AFTER INSERT ON tx_d FOR EACH STATEMENT EXECUTE FUNCTION tx_refuse();
CREATE CONSTRAINT TRIGGER tx_bad AFTER INSERT ON tx_d EXECUTE FUNCTION tx_refuse();
CREATE OR REPLACE CONSTRAINT TRIGGER tx_bad AFTER INSERT ON tx_d FOR EACH ROW EXECUTE FUNCTION tx_refuse();
CREATE OR REPLACE TRIGGER tx_d_check AFTER INSERT ON tx_d FOR EACH ROW EXECUTE FUNCTION tx_refuse();
CREATE CONSTRAINT TRIGGER tx_d_check AFTER INSERT ON tx_d FOR EACH ROW EXECUTE FUNCTION tx_refuse();
-- TRUNCATE triggers (statement level), not DELETE ones
CREATE TABLE tx_tr (id int);
CREATE TRIGGER tx_tr_b BEFORE TRUNCATE ON tx_tr EXECUTE FUNCTION tx_stmt();
CREATE TRIGGER tx_tr_a AFTER TRUNCATE ON tx_tr FOR EACH STATEMENT EXECUTE FUNCTION tx_stmt();
CREATE TRIGGER tx_tr_del AFTER DELETE ON tx_tr FOR EACH ROW EXECUTE FUNCTION tx_row();
INSERT INTO tx_tr VALUES (1), (2);
TRUNCATE tx_tr;
BEGIN;
INSERT INTO tx_tr VALUES (3);
TRUNCATE tx_tr;
COMMIT;
BEGIN;
INSERT INTO tx_tr VALUES (4);
COMMIT;
BEGIN;
TRUNCATE tx_tr;
ROLLBACK;
SELECT count(*) FROM tx_tr;
DELETE FROM tx_log WHERE what LIKE 'tx_c %' OR what LIKE 'tx_ci %';
SELECT what FROM tx_log WHERE what LIKE 'tx_tr%' ORDER BY seq;
-- COPY FROM fires INSERT triggers: statement ones once, BEFORE ROW may
-- change or skip a row
CREATE TABLE tx_cp (id int, a text);
CREATE FUNCTION tx_cp_fix() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.a = 'skip' THEN
    RETURN NULL;
  END IF;
  NEW.a := upper(NEW.a);
  RETURN NEW;
END;
$$;
CREATE TRIGGER tx_cp_b BEFORE INSERT ON tx_cp FOR EACH ROW EXECUTE FUNCTION tx_cp_fix();
CREATE TRIGGER tx_cp_a AFTER INSERT ON tx_cp FOR EACH ROW EXECUTE FUNCTION tx_row();
CREATE TRIGGER tx_cp_s BEFORE INSERT ON tx_cp EXECUTE FUNCTION tx_stmt();
CREATE TRIGGER tx_cp_e AFTER INSERT ON tx_cp EXECUTE FUNCTION tx_stmt();
COPY tx_cp FROM stdin;
1	one
2	skip
3	three
\.
SELECT * FROM tx_cp ORDER BY id;
SELECT what FROM tx_log WHERE what LIKE 'tx_cp%' ORDER BY seq;
-- INSERT … ON CONFLICT DO UPDATE: BEFORE UPDATE ROW triggers on the
-- update path, and the UPDATE statement triggers
CREATE TABLE tx_up (id int PRIMARY KEY, n int, note text);
CREATE FUNCTION tx_up_b() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    NEW.note := 'updated from ' || OLD.n;
    IF NEW.n > 100 THEN
      RETURN NULL;
    END IF;
  ELSE
    NEW.note := 'inserted';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER tx_up_b BEFORE INSERT OR UPDATE ON tx_up FOR EACH ROW EXECUTE FUNCTION tx_up_b();
CREATE TRIGGER tx_up_s1 BEFORE INSERT OR UPDATE ON tx_up EXECUTE FUNCTION tx_stmt();
CREATE TRIGGER tx_up_s2 AFTER INSERT OR UPDATE ON tx_up EXECUTE FUNCTION tx_stmt();
INSERT INTO tx_up VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = excluded.n;
INSERT INTO tx_up VALUES (1, 5), (2, 2) ON CONFLICT (id) DO UPDATE SET n = excluded.n;
INSERT INTO tx_up VALUES (1, 500) ON CONFLICT (id) DO UPDATE SET n = excluded.n RETURNING *;
INSERT INTO tx_up VALUES (2, 7) ON CONFLICT (id) DO NOTHING;
SELECT * FROM tx_up ORDER BY id;
SELECT what FROM tx_log WHERE what LIKE 'tx_up%' ORDER BY seq;
-- transition tables: statement and row AFTER triggers read the rows the
-- statement wrote as tables
CREATE TABLE tx_tt (id int PRIMARY KEY, v int);
CREATE FUNCTION tx_tt_sum() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  msg text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT string_agg(id || '=' || v, ',' ORDER BY id) INTO msg FROM newrows;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT string_agg(o.id || ':' || o.v || '->' || n.v, ',' ORDER BY o.id) INTO msg
      FROM oldrows o JOIN newrows n ON n.id = o.id;
  ELSE
    SELECT count(*) || ' gone, sum ' || coalesce(sum(v), 0) INTO msg FROM oldrows;
  END IF;
  INSERT INTO tx_log (what) VALUES (TG_NAME || ' ' || TG_LEVEL || ' ' || TG_OP || ': ' || coalesce(msg, '-'));
  RETURN NULL;
END;
$$;
CREATE TRIGGER tx_tt_ins AFTER INSERT ON tx_tt REFERENCING NEW TABLE AS newrows
  FOR EACH STATEMENT EXECUTE FUNCTION tx_tt_sum();
CREATE TRIGGER tx_tt_upd AFTER UPDATE ON tx_tt REFERENCING OLD TABLE AS oldrows NEW TABLE AS newrows
  FOR EACH STATEMENT EXECUTE FUNCTION tx_tt_sum();
CREATE TRIGGER tx_tt_del AFTER DELETE ON tx_tt REFERENCING OLD TABLE oldrows
  FOR EACH ROW EXECUTE FUNCTION tx_tt_sum();
INSERT INTO tx_tt VALUES (1, 10), (2, 20), (3, 30);
UPDATE tx_tt SET v = v + 1 WHERE id < 3;
UPDATE tx_tt SET v = 0 WHERE id > 100;
DELETE FROM tx_tt WHERE id >= 2;
INSERT INTO tx_tt SELECT 10, 100;
SELECT what FROM tx_log WHERE what LIKE 'tx_tt%' ORDER BY seq;
SELECT tgname, pg_get_triggerdef(oid, true) FROM pg_trigger WHERE tgrelid = 'tx_tt'::regclass ORDER BY 1;
CREATE TRIGGER bad BEFORE INSERT ON tx_tt REFERENCING NEW TABLE AS n FOR EACH ROW EXECUTE FUNCTION tx_tt_sum();
CREATE TRIGGER bad AFTER INSERT OR UPDATE ON tx_tt REFERENCING NEW TABLE AS n EXECUTE FUNCTION tx_tt_sum();
CREATE TRIGGER bad AFTER UPDATE OF v ON tx_tt REFERENCING NEW TABLE AS n EXECUTE FUNCTION tx_tt_sum();
CREATE TRIGGER bad AFTER DELETE ON tx_tt REFERENCING NEW TABLE AS n EXECUTE FUNCTION tx_tt_sum();
CREATE TRIGGER bad AFTER INSERT ON tx_tt REFERENCING OLD TABLE AS o EXECUTE FUNCTION tx_tt_sum();
CREATE TRIGGER bad AFTER UPDATE ON tx_tt REFERENCING OLD TABLE AS x NEW TABLE AS x EXECUTE FUNCTION tx_tt_sum();
CREATE TRIGGER bad AFTER TRUNCATE ON tx_tt REFERENCING OLD TABLE AS o EXECUTE FUNCTION tx_tt_sum();
CREATE TRIGGER bad AFTER INSERT ON tx_tt REFERENCING NEW ROW AS r FOR EACH ROW EXECUTE FUNCTION tx_tt_sum();
-- @@ read-only
SELECT seq, what FROM tx_log ORDER BY seq;
SELECT * FROM tx_t ORDER BY id;
SELECT id FROM tx_d ORDER BY id;
SELECT * FROM tx_cp ORDER BY id;
SELECT * FROM tx_up ORDER BY id;
SELECT tgname, pg_get_triggerdef(oid, true) FROM pg_trigger WHERE tgrelid = 'tx_t'::regclass ORDER BY 1;
SELECT * FROM tx_tt ORDER BY id;
