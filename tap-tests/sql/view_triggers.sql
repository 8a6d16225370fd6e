-- view_triggers: INSTEAD OF triggers make a view writable — INSERT,
-- UPDATE and DELETE run the trigger for each row (a NULL return skips the
-- row), with the view's statement triggers around them, RETURNING from
-- the row the trigger returned; what CREATE TRIGGER refuses on views;
-- the triggers in pg_trigger, pg_get_triggerdef and psql's \d; DROP /
-- RENAME / REPLACE / rollback of the definitions. The read-only part
-- reads the results and the catalog on the standby.
CREATE TABLE vt_base (id int PRIMARY KEY, name text, n int);
INSERT INTO vt_base VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30);
CREATE VIEW vt_v AS SELECT id, name, n * 2 AS dbl FROM vt_base;
CREATE VIEW vt_g AS SELECT name, count(*) AS c FROM vt_base GROUP BY name;
CREATE FUNCTION vt_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE '% % % on % (%): new=% old=%', TG_NAME, TG_WHEN, TG_OP, TG_TABLE_NAME, TG_LEVEL, NEW, OLD;
  IF TG_OP = 'INSERT' THEN
    IF NEW.id < 0 THEN
      RETURN NULL;
    END IF;
    INSERT INTO vt_base VALUES (NEW.id, NEW.name, NEW.dbl / 2);
    NEW.name := upper(NEW.name);
    RETURN NEW;
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE vt_base SET id = NEW.id, name = NEW.name, n = NEW.dbl / 2 WHERE id = OLD.id;
    RETURN NEW;
  END IF;
  DELETE FROM vt_base WHERE id = OLD.id;
  IF OLD.id = 2 THEN
    RETURN NULL;
  END IF;
  RETURN OLD;
END;
$$;
CREATE FUNCTION vt_stmt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE '% % % on % (%)', TG_NAME, TG_WHEN, TG_OP, TG_TABLE_NAME, TG_LEVEL;
  RETURN NULL;
END;
$$;
-- what views cannot have
CREATE TRIGGER vt_x BEFORE INSERT ON vt_v FOR EACH ROW EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_x AFTER UPDATE ON vt_v FOR EACH ROW EXECUTE FUNCTION vt_row();
CREATE CONSTRAINT TRIGGER vt_x AFTER INSERT ON vt_v FOR EACH ROW EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_x INSTEAD OF INSERT ON vt_v EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_x INSTEAD OF INSERT ON vt_v FOR EACH STATEMENT EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_x INSTEAD OF UPDATE ON vt_v FOR EACH ROW WHEN (OLD.id > 1) EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_x INSTEAD OF UPDATE OF name ON vt_v FOR EACH ROW EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_x BEFORE TRUNCATE ON vt_v EXECUTE FUNCTION vt_stmt();
CREATE TRIGGER vt_x AFTER INSERT ON vt_v REFERENCING NEW TABLE AS nt FOR EACH STATEMENT EXECUTE FUNCTION vt_stmt();
CREATE TRIGGER vt_x INSTEAD OF INSERT ON vt_v REFERENCING NEW TABLE AS nt FOR EACH ROW EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_x INSTEAD OF INSERT ON vt_base FOR EACH ROW EXECUTE FUNCTION vt_row();
-- without a trigger a view like this one is not updatable
INSERT INTO vt_g VALUES ('x', 1);
DELETE FROM vt_g;
CREATE TRIGGER vt_ins INSTEAD OF INSERT ON vt_v FOR EACH ROW EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_upd INSTEAD OF UPDATE ON vt_v FOR EACH ROW EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_del INSTEAD OF DELETE ON vt_v FOR EACH ROW EXECUTE FUNCTION vt_row();
CREATE TRIGGER vt_bs BEFORE INSERT OR UPDATE OR DELETE ON vt_v FOR EACH STATEMENT EXECUTE FUNCTION vt_stmt();
CREATE TRIGGER vt_as AFTER INSERT OR UPDATE OR DELETE ON vt_v FOR EACH STATEMENT EXECUTE FUNCTION vt_stmt();
CREATE TRIGGER vt_ins INSTEAD OF INSERT ON vt_v FOR EACH ROW EXECUTE FUNCTION vt_row();
-- INSERT: each row through the trigger; NULL skips it (not counted)
INSERT INTO vt_v VALUES (4, 'd', 80);
INSERT INTO vt_v VALUES (5, 'e', 100), (-1, 'neg', 0) RETURNING *;
INSERT INTO vt_v (name, id) VALUES ('f', 6) RETURNING id, name, dbl;
INSERT INTO vt_v VALUES (7, DEFAULT, '14') RETURNING dbl + 1 AS next, vt_v.name;
INSERT INTO vt_v SELECT id + 10, name, dbl FROM vt_v WHERE id < 3 RETURNING *;
INSERT INTO vt_v VALUES (8, 'h', 16) ON CONFLICT DO NOTHING;
SELECT * FROM vt_base ORDER BY id;
-- UPDATE: OLD is the view's row, NEW it with the SET list applied
UPDATE vt_v SET dbl = dbl + 2 WHERE id = 1 RETURNING *;
UPDATE vt_v AS w SET name = 'zz', dbl = '40' WHERE w.id > 10;
UPDATE vt_v SET id = 99 WHERE id = 999;
UPDATE vt_v SET name = b.name || '!' FROM vt_base b WHERE b.id = vt_v.id + 1 AND vt_v.id IN (4, 5) RETURNING vt_v.*;
UPDATE vt_v SET name = DEFAULT WHERE id = 7 RETURNING name IS NULL AS cleared;
-- DELETE: RETURNING shows OLD of the rows the trigger did not skip
DELETE FROM vt_v WHERE id IN (2, 3) RETURNING *;
DELETE FROM vt_v v USING vt_base b WHERE b.id = v.id AND b.name = 'zz';
SELECT * FROM vt_base ORDER BY id;
-- parameters, as a driver sends them
PREPARE vt_p(int, int) AS UPDATE vt_v SET dbl = $2 WHERE id = $1 RETURNING id, dbl;
EXECUTE vt_p(4, 44);
EXECUTE vt_p(1000, 1);
DEALLOCATE vt_p;
-- a view over a view: its trigger writes through the inner view's
CREATE VIEW vt_w AS SELECT id * 10 AS id10, name FROM vt_v;
CREATE FUNCTION vt_wf() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO vt_v (id, name, dbl) VALUES (NEW.id10 / 10, NEW.name, 0);
  RETURN NEW;
END;
$$;
CREATE TRIGGER vt_wi INSTEAD OF INSERT ON vt_w FOR EACH ROW EXECUTE FUNCTION vt_wf();
INSERT INTO vt_w VALUES (200, 'via w') RETURNING *;
SELECT * FROM vt_w ORDER BY id10;
-- an error in a trigger undoes the whole statement
INSERT INTO vt_v VALUES (30, 'ok', 0), (1, 'dup', 0);
SELECT count(*) FROM vt_base;
-- trigger definitions are transactional
BEGIN;
DROP TRIGGER vt_wi ON vt_w;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'vt_w'::regclass;
ROLLBACK;
BEGIN;
CREATE OR REPLACE TRIGGER vt_wi INSTEAD OF INSERT ON vt_w FOR EACH ROW EXECUTE FUNCTION vt_row();
SELECT tgname, tgfoid::regproc FROM pg_trigger WHERE tgrelid = 'vt_w'::regclass;
ROLLBACK;
SELECT tgname, tgfoid::regproc FROM pg_trigger WHERE tgrelid = 'vt_w'::regclass;
-- ALTER TABLE … TRIGGER is for tables
ALTER TABLE vt_v DISABLE TRIGGER vt_ins;
ALTER TABLE vt_v ENABLE TRIGGER ALL;
-- the function is in use
DROP FUNCTION vt_wf();
-- RENAME and CREATE OR REPLACE VIEW keep the triggers
ALTER VIEW vt_w RENAME TO vt_w2;
CREATE OR REPLACE VIEW vt_w2 AS SELECT id * 10 AS id10, name, dbl FROM vt_v;
INSERT INTO vt_w2 VALUES (210, 'renamed');
SELECT tgname, tgrelid::regclass, tgtype, tgenabled, tgnargs FROM pg_trigger
  WHERE tgrelid IN ('vt_v'::regclass, 'vt_w2'::regclass) ORDER BY 1;
SELECT relname, relhastriggers FROM pg_class WHERE relname IN ('vt_v', 'vt_w2', 'vt_g') ORDER BY 1;
\d vt_v
-- DROP TRIGGER on a view
DROP TRIGGER vt_del ON vt_v;
DROP TRIGGER vt_del ON vt_v;
DROP TRIGGER IF EXISTS vt_del ON vt_v;
DROP TRIGGER vt_x ON vt_nothere;
-- DROP FUNCTION … CASCADE takes the triggers using it
CREATE VIEW vt_tmp AS SELECT 1 AS one;
CREATE FUNCTION vt_tf() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END; $$;
CREATE TRIGGER vt_t1 INSTEAD OF INSERT ON vt_tmp FOR EACH ROW EXECUTE FUNCTION vt_tf();
CREATE TRIGGER vt_t2 INSTEAD OF UPDATE ON vt_tmp FOR EACH ROW EXECUTE FUNCTION vt_tf();
INSERT INTO vt_tmp VALUES (5) RETURNING one;
DROP FUNCTION vt_tf() CASCADE;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'vt_tmp'::regclass;
-- DROP VIEW takes its triggers
CREATE TRIGGER vt_t3 INSTEAD OF DELETE ON vt_tmp FOR EACH ROW EXECUTE FUNCTION vt_row();
DROP VIEW vt_tmp;
SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'vt_t_';
-- @@ read-only
SELECT * FROM vt_base ORDER BY id;
SELECT * FROM vt_v ORDER BY id;
SELECT * FROM vt_w2 ORDER BY id10;
SELECT tgname, pg_get_triggerdef(oid), pg_get_triggerdef(oid, true) FROM pg_trigger
  WHERE tgrelid IN ('vt_v'::regclass, 'vt_w2'::regclass) ORDER BY 1;
\d vt_w2
