-- plpgsql_cursors: PL/pgSQL cursors — bound cursors with arguments,
-- refcursor variables opened FOR a query or FOR EXECUTE, FETCH / MOVE in
-- every direction, FOUND, FOR over a cursor, CLOSE, and the run-time
-- errors (a compile-time one would need the error cursor); the read-only
-- part runs them on the standby.
CREATE TABLE pcur_t (id int PRIMARY KEY, v text);
INSERT INTO pcur_t SELECT g, 'v' || g FROM generate_series(1, 6) AS g;
CREATE FUNCTION cur_bound(lo int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  c CURSOR (k int) FOR SELECT id, v FROM pcur_t WHERE id >= k ORDER BY id;
  r record;
  out text := '';
BEGIN
  OPEN c(lo);
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    out := out || r.id || ':' || r.v || ' ';
  END LOOP;
  CLOSE c;
  RETURN out;
END;
$$;
CREATE FUNCTION cur_for(lo int, hi int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  c CURSOR (a int, b int) IS SELECT id FROM pcur_t WHERE id BETWEEN a AND b;
  total int := 0;
BEGIN
  FOR rec IN c(lo, hi) LOOP
    total := total + rec.id;
  END LOOP;
  RETURN total;
END;
$$;
CREATE FUNCTION cur_scroll() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  c SCROLL CURSOR FOR SELECT id FROM pcur_t ORDER BY id;
  x int;
BEGIN
  OPEN c;
  FETCH LAST FROM c INTO x;       RETURN NEXT 'last ' || x;
  FETCH PRIOR FROM c INTO x;      RETURN NEXT 'prior ' || x;
  FETCH FIRST FROM c INTO x;      RETURN NEXT 'first ' || x;
  FETCH ABSOLUTE 4 FROM c INTO x; RETURN NEXT 'absolute 4 ' || x;
  FETCH RELATIVE -2 FROM c INTO x; RETURN NEXT 'relative -2 ' || x;
  FETCH ABSOLUTE -1 FROM c INTO x; RETURN NEXT 'absolute -1 ' || x;
  MOVE BACKWARD 2 FROM c;
  FETCH c INTO x;                 RETURN NEXT 'after move ' || x;
  MOVE FORWARD ALL FROM c;
  RETURN NEXT 'found after move all: ' || FOUND;
  FETCH NEXT FROM c INTO x;
  RETURN NEXT 'past the end: ' || coalesce(x::text, 'null') || ' ' || FOUND;
  MOVE ABSOLUTE 2 IN c;
  RETURN NEXT 'moved to 2: ' || FOUND;
  CLOSE c;
END;
$$;
CREATE FUNCTION cur_ref(q text, lim int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  c refcursor;
  d refcursor;
  a int;
  b text;
  out text;
BEGIN
  OPEN c FOR SELECT id, v FROM pcur_t WHERE id <= lim ORDER BY id DESC;
  FETCH c INTO a, b;
  out := c || ' ' || a || b;
  OPEN d FOR EXECUTE q USING lim;
  FETCH d INTO a;
  out := out || ' / ' || d || ' ' || a;
  CLOSE c;
  CLOSE d;
  RETURN out;
END;
$$;
CREATE FUNCTION cur_err(what text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  c CURSOR FOR SELECT id FROM pcur_t ORDER BY id;
  n NO SCROLL CURSOR FOR SELECT id FROM pcur_t ORDER BY id;
  u refcursor;
  x int;
BEGIN
  IF what = 'null' THEN
    FETCH u INTO x;
  ELSIF what = 'twice' THEN
    OPEN c;
    OPEN c;
  ELSIF what = 'closed' THEN
    OPEN c;
    CLOSE c;
    FETCH c INTO x;
  ELSIF what = 'unopened' THEN
    FETCH c INTO x;
  ELSIF what = 'backward' THEN
    OPEN n;
    FETCH n INTO x;
    FETCH PRIOR FROM n INTO x;
  END IF;
  RETURN 'ok';
END;
$$;
-- @@ read-only
SELECT cur_bound(3);
SELECT cur_bound(10);
SELECT cur_for(2, 4);
SELECT * FROM cur_scroll();
SELECT cur_ref('SELECT count(*)::int FROM pcur_t WHERE id > $1', 2);
SELECT cur_err('null');
SELECT cur_err('twice');
SELECT cur_err('closed');
SELECT cur_err('unopened');
SELECT cur_err('backward');
SELECT cur_err('none');
