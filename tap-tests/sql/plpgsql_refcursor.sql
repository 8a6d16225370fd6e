-- plpgsql_refcursor: PL/pgSQL cursors are the session's portals — a
-- function returns a refcursor its caller FETCHes with SQL until CLOSE or
-- the transaction's end, names come from one per-session counter, SQL and
-- PL/pgSQL cursors share one namespace, and a function may FETCH from a
-- cursor its caller DECLAREd; the read-only part runs them on the standby.
CREATE TABLE prc_t (id int PRIMARY KEY, v text);
INSERT INTO prc_t SELECT g, 'v' || g FROM generate_series(1, 5) AS g;
CREATE FUNCTION prc_open(lo int) RETURNS refcursor LANGUAGE plpgsql AS $$
DECLARE c refcursor;
BEGIN
  OPEN c FOR SELECT id, v FROM prc_t WHERE id >= lo ORDER BY id;
  RETURN c;
END;
$$;
CREATE FUNCTION prc_named(c refcursor) RETURNS refcursor LANGUAGE plpgsql AS $$
BEGIN
  OPEN c SCROLL FOR SELECT v FROM prc_t ORDER BY id DESC;
  RETURN c;
END;
$$;
CREATE FUNCTION prc_sum(c refcursor) RETURNS int LANGUAGE plpgsql AS $$
DECLARE r record; total int := 0;
BEGIN
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    total := total + r.id;
  END LOOP;
  CLOSE c;
  RETURN total;
END;
$$;
-- @@ read-only
BEGIN;
SELECT prc_open(3);
FETCH ALL FROM "<unnamed portal 1>";
SELECT prc_open(4);
FETCH 1 FROM "<unnamed portal 2>";
SELECT prc_named('mycur');
FETCH 2 FROM mycur;
MOVE BACKWARD 1 IN mycur;
FETCH NEXT FROM mycur;
SELECT name, statement, is_holdable, is_binary, is_scrollable FROM pg_cursors ORDER BY name;
CLOSE mycur;
SELECT prc_named('mycur');
SELECT prc_named('mycur');
ROLLBACK;
-- outside a block the cursor closes with the statement's transaction
SELECT prc_named('gone');
FETCH ALL FROM gone;
-- SQL and PL/pgSQL cursors share one namespace
BEGIN;
DECLARE shared CURSOR FOR SELECT 1;
SELECT prc_named('shared');
ROLLBACK;
-- a function fetches from a cursor its caller declared, and closes it
BEGIN;
DECLARE sqlcur CURSOR FOR SELECT id FROM prc_t WHERE id > $$2$$::int ORDER BY id;
FETCH 1 FROM sqlcur;
SELECT prc_sum('sqlcur');
SELECT count(*) FROM pg_cursors;
COMMIT;
-- and from one another function opened
BEGIN;
SELECT prc_sum(prc_open(2));
SELECT count(*) FROM pg_cursors;
COMMIT;
