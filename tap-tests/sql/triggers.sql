-- triggers: CREATE [OR REPLACE] TRIGGER / DROP TRIGGER, PL/pgSQL trigger
-- functions (NEW, OLD, TG_ variables), BEFORE / AFTER, ROW / STATEMENT,
-- WHEN, UPDATE OF, firing order, skipped rows, ALTER TABLE ENABLE /
-- DISABLE TRIGGER, dependencies, errors; the read-only part reads what
-- the triggers wrote on the standby (which never fires them).
CREATE TABLE tr_t (id int PRIMARY KEY, v text, n int DEFAULT 0, stamp text);
CREATE TABLE tr_log (seq serial PRIMARY KEY, what text);
CREATE FUNCTION tr_log_it() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tr_log (what) VALUES (TG_NAME || ' ' || TG_WHEN || ' ' || TG_LEVEL || ' ' || TG_OP
    || ' on ' || TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME || ' ' || TG_RELNAME
    || ' nargs=' || TG_NARGS || coalesce(' argv1=' || TG_ARGV[0], '')
    || coalesce(' argv2=' || TG_ARGV[1], ''));
  IF TG_LEVEL = 'ROW' THEN
    IF TG_OP = 'DELETE' THEN
      RETURN OLD;
    END IF;
    RETURN NEW;
  END IF;
  RETURN NULL;
END;
$$;
CREATE FUNCTION tr_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.stamp := TG_OP || ':' || coalesce(NEW.v, '?');
  IF TG_OP = 'UPDATE' THEN
    NEW.n := OLD.n + 1;
  END IF;
  RETURN NEW;
END;
$$;
CREATE FUNCTION tr_skip() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.v = 'keep' THEN
      RAISE NOTICE 'keeping row %', OLD.id;
      RETURN NULL;
    END IF;
    RETURN OLD;
  END IF;
  IF NEW.v = 'skip' THEN
    RAISE NOTICE 'skipping row %', NEW.id;
    RETURN NULL;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER b_stamp BEFORE INSERT OR UPDATE ON tr_t FOR EACH ROW EXECUTE FUNCTION tr_stamp();
CREATE TRIGGER a_skip BEFORE INSERT OR UPDATE OR DELETE ON tr_t FOR EACH ROW EXECUTE FUNCTION tr_skip();
CREATE TRIGGER z_after_row AFTER INSERT OR UPDATE OR DELETE ON tr_t
  FOR EACH ROW EXECUTE FUNCTION tr_log_it('row', 42);
CREATE TRIGGER y_after_stmt AFTER INSERT OR UPDATE OR DELETE ON tr_t
  FOR EACH STATEMENT EXECUTE PROCEDURE tr_log_it();
CREATE TRIGGER x_before_stmt BEFORE INSERT ON tr_t EXECUTE FUNCTION tr_log_it('stmt');
-- BEFORE ROW changes the row, RETURN NULL skips it (the tag counts it not)
INSERT INTO tr_t (id, v) VALUES (1, 'one'), (2, 'skip'), (3, 'three');
SELECT * FROM tr_t ORDER BY id;
UPDATE tr_t SET v = v || '!' WHERE id = 1;
UPDATE tr_t SET v = 'skip' WHERE id = 3;
SELECT * FROM tr_t ORDER BY id;
-- statement triggers fire for zero rows too
UPDATE tr_t SET v = 'none' WHERE id = 99;
INSERT INTO tr_t (id, v) VALUES (4, 'keep'), (5, 'five');
DELETE FROM tr_t WHERE id IN (4, 5);
SELECT * FROM tr_t ORDER BY id;
SELECT seq, what FROM tr_log ORDER BY seq;
-- WHEN and UPDATE OF
CREATE TABLE tr_w (id int PRIMARY KEY, a int, b int);
CREATE TABLE tr_w_log (msg text);
CREATE FUNCTION tr_w_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tr_w_log VALUES (TG_NAME || ': ' || coalesce(OLD.a::text, '-') || ' -> ' || NEW.a);
  RETURN NULL;
END;
$$;
CREATE TRIGGER w_changed AFTER UPDATE ON tr_w FOR EACH ROW
  WHEN (OLD.a IS DISTINCT FROM NEW.a) EXECUTE FUNCTION tr_w_note();
CREATE TRIGGER w_of_b AFTER UPDATE OF b ON tr_w FOR EACH ROW EXECUTE FUNCTION tr_w_note();
CREATE TRIGGER w_big BEFORE INSERT ON tr_w FOR EACH ROW WHEN (NEW.a > 100) EXECUTE FUNCTION tr_w_note();
INSERT INTO tr_w VALUES (1, 1, 1), (2, 200, 2);
UPDATE tr_w SET a = a WHERE id = 1;
UPDATE tr_w SET a = a + 1 WHERE id = 1;
UPDATE tr_w SET b = 5 WHERE id = 1;
SELECT * FROM tr_w ORDER BY id;
SELECT msg FROM tr_w_log ORDER BY msg;
-- ENABLE / DISABLE
ALTER TABLE tr_w DISABLE TRIGGER w_changed;
UPDATE tr_w SET a = 50 WHERE id = 1;
ALTER TABLE tr_w DISABLE TRIGGER ALL;
UPDATE tr_w SET b = 50 WHERE id = 1;
ALTER TABLE tr_w ENABLE TRIGGER ALL;
UPDATE tr_w SET a = 51 WHERE id = 1;
SELECT count(*) FROM tr_w_log;
SELECT tgname, tgenabled, tgtype, tgnargs FROM pg_trigger WHERE tgrelid = 'tr_w'::regclass ORDER BY tgname;
-- OR REPLACE, transactions
CREATE OR REPLACE TRIGGER w_big BEFORE INSERT ON tr_w FOR EACH ROW WHEN (NEW.a > 1000) EXECUTE FUNCTION tr_w_note();
BEGIN;
DROP TRIGGER w_changed ON tr_w;
ROLLBACK;
SELECT tgname FROM pg_trigger WHERE tgrelid = 'tr_w'::regclass ORDER BY tgname;
-- errors
CREATE TRIGGER w_big BEFORE INSERT ON tr_w FOR EACH ROW EXECUTE FUNCTION tr_w_note();
CREATE TRIGGER bad AFTER INSERT ON tr_w FOR EACH ROW EXECUTE FUNCTION no_such_fn();
CREATE FUNCTION tr_not_trigger() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE TRIGGER bad AFTER INSERT ON tr_w FOR EACH ROW EXECUTE FUNCTION tr_not_trigger();
CREATE TRIGGER bad AFTER INSERT ON no_such_table FOR EACH ROW EXECUTE FUNCTION tr_w_note();
CREATE TRIGGER bad AFTER UPDATE OF zz ON tr_w FOR EACH ROW EXECUTE FUNCTION tr_w_note();
CREATE TRIGGER bad INSTEAD OF INSERT ON tr_w FOR EACH ROW EXECUTE FUNCTION tr_w_note();
CREATE TRIGGER bad AFTER INSERT ON tr_w FOR EACH ROW WHEN (OLD.a > 1) EXECUTE FUNCTION tr_w_note();
CREATE TRIGGER bad AFTER DELETE ON tr_w FOR EACH ROW WHEN (NEW.a > 1) EXECUTE FUNCTION tr_w_note();
CREATE TRIGGER bad AFTER INSERT ON tr_w WHEN (NEW.a > 1) EXECUTE FUNCTION tr_w_note();
CREATE TRIGGER bad BEFORE TRUNCATE ON tr_w FOR EACH ROW EXECUTE FUNCTION tr_w_note();
SELECT tr_w_note();
DROP TRIGGER no_such ON tr_w;
DROP TRIGGER IF EXISTS no_such ON tr_w;
ALTER TABLE tr_w ENABLE TRIGGER no_such;
CREATE FUNCTION tr_bad_arg(trigger) RETURNS int LANGUAGE plpgsql AS 'BEGIN RETURN 1; END';
DROP FUNCTION tr_w_note();
-- an error inside a trigger carries its CONTEXT; nothing is written
CREATE FUNCTION tr_fail() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.a < 0 THEN
    RAISE EXCEPTION 'negative a: %', NEW.a;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER w_fail BEFORE INSERT ON tr_w FOR EACH ROW EXECUTE FUNCTION tr_fail();
INSERT INTO tr_w VALUES (3, 3, 3), (4, -4, 4);
SELECT id FROM tr_w ORDER BY id;
-- a trigger that writes its own table recurses until the stack limit
CREATE TABLE tr_rec (n int);
CREATE FUNCTION tr_again() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tr_rec VALUES (NEW.n + 1);
  RETURN NEW;
END;
$$;
CREATE TRIGGER rec AFTER INSERT ON tr_rec FOR EACH ROW EXECUTE FUNCTION tr_again();
\set VERBOSITY terse
INSERT INTO tr_rec VALUES (1);
\set VERBOSITY default
SELECT count(*) FROM tr_rec;
-- dropping the table drops its triggers; the function goes with CASCADE
DROP TABLE tr_rec;
DROP FUNCTION tr_again();
DROP FUNCTION tr_fail() CASCADE;
SELECT tgname FROM pg_trigger WHERE tgrelid = 'tr_w'::regclass ORDER BY tgname;
-- @@ read-only
SELECT * FROM tr_t ORDER BY id;
SELECT seq, what FROM tr_log ORDER BY seq;
SELECT msg FROM tr_w_log ORDER BY msg;
SELECT * FROM tr_w ORDER BY id;
