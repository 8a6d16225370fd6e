-- plpgsql_ext: PL/pgSQL table%ROWTYPE variables and whole-record values,
-- and FOREACH over arrays; the read-only part calls the functions on the
-- standby.
CREATE TABLE px_t (id int PRIMARY KEY, name text, score numeric);
INSERT INTO px_t VALUES (1, 'ann', 3.5), (2, 'bob', NULL), (3, 'cy', 7);
CREATE FUNCTION px_row(k int) RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE r px_t%ROWTYPE;
BEGIN
  SELECT * INTO r FROM px_t WHERE id = k;
  IF NOT FOUND THEN
    RETURN 'none: ' || coalesce(r.name, '<null>');
  END IF;
  RETURN r.id || ' ' || r.name || ' ' || coalesce(r.score::text, '-');
END;
$$;
CREATE FUNCTION px_copy() RETURNS SETOF text LANGUAGE plpgsql STABLE AS $$
DECLARE
  r px_t%ROWTYPE;
  s public.px_t%rowtype;
  rec record;
BEGIN
  RETURN NEXT 'fresh: ' || coalesce(r.id::text, 'null') || ' ' || coalesce(r.name, 'null');
  FOR r IN SELECT * FROM px_t ORDER BY id LOOP
    s := r;
    s.name := upper(s.name);
    RETURN NEXT s.id || ':' || s.name || ':' || r.name;
  END LOOP;
  SELECT 10, 'ten' INTO s;
  RETURN NEXT s.id || ':' || s.name || ':' || coalesce(s.score::text, 'null');
  SELECT id, name INTO rec FROM px_t WHERE id = 3;
  s := rec;
  RETURN NEXT s.id || ':' || s.name;
  rec := s;
  RETURN NEXT rec.name || ' ' || coalesce(rec.score::text, 'null');
  s := NULL;
  RETURN NEXT 'nulled: ' || coalesce(s.id::text, 'null');
END;
$$;
CREATE FUNCTION px_rows() RETURNS TABLE (id int, name text, score numeric) LANGUAGE plpgsql STABLE AS $$
DECLARE r px_t%ROWTYPE;
BEGIN
  FOR r IN SELECT * FROM px_t ORDER BY px_t.id DESC LOOP
    r.score := coalesce(r.score, 0) * 2;
    id := r.id; name := r.name; score := r.score;
    RETURN NEXT;
  END LOOP;
END;
$$;
CREATE FUNCTION px_bad_assign() RETURNS int LANGUAGE plpgsql AS $$
DECLARE r px_t%ROWTYPE;
BEGIN
  r := 5;
  RETURN 1;
END;
$$;
CREATE FUNCTION px_unassigned() RETURNS int LANGUAGE plpgsql AS $$
DECLARE r record; s px_t%ROWTYPE;
BEGIN
  s := r;
  RETURN 1;
END;
$$;
CREATE FUNCTION px_sum(a int[]) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE x int; total int := 0;
BEGIN
  FOREACH x IN ARRAY a LOOP
    CONTINUE WHEN x IS NULL;
    EXIT WHEN x < 0;
    total := total + x;
  END LOOP;
  RETURN total;
END;
$$;
CREATE FUNCTION px_words(a text[]) RETURNS SETOF text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE w text; whole text[];
BEGIN
  FOREACH w IN ARRAY a LOOP
    RETURN NEXT upper(w);
  END LOOP;
  RETURN NEXT 'found ' || FOUND;
  FOREACH whole SLICE 1 IN ARRAY a LOOP
    RETURN NEXT array_to_string(whole, '+');
  END LOOP;
  <<outer>>
  FOREACH w IN ARRAY a LOOP
    FOREACH w IN ARRAY ARRAY['x', 'y'] LOOP
      EXIT outer WHEN w = 'y';
      RETURN NEXT 'inner ' || w;
    END LOOP;
  END LOOP outer;
END;
$$;
CREATE FUNCTION px_each_found(a int[]) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE x int;
BEGIN
  FOREACH x IN ARRAY a LOOP
    NULL;
  END LOOP;
  RETURN FOUND;
END;
$$;
CREATE FUNCTION px_each_null() RETURNS int LANGUAGE plpgsql AS $$
DECLARE x int; a int[];
BEGIN
  FOREACH x IN ARRAY a LOOP NULL; END LOOP;
  RETURN 1;
END;
$$;
CREATE FUNCTION px_each_scalar() RETURNS int LANGUAGE plpgsql AS $$
DECLARE x int;
BEGIN
  FOREACH x IN ARRAY 42 LOOP NULL; END LOOP;
  RETURN 1;
END;
$$;
CREATE FUNCTION px_each_slice() RETURNS int LANGUAGE plpgsql AS $$
DECLARE x int[];
BEGIN
  FOREACH x SLICE 2 IN ARRAY ARRAY[1, 2] LOOP NULL; END LOOP;
  RETURN 1;
END;
$$;
CREATE FUNCTION px_each_notarray() RETURNS int LANGUAGE plpgsql AS $$
DECLARE x int;
BEGIN
  FOREACH x SLICE 1 IN ARRAY ARRAY[1, 2] LOOP NULL; END LOOP;
  RETURN 1;
END;
$$;
CREATE FUNCTION px_each_isarray() RETURNS int LANGUAGE plpgsql AS $$
DECLARE x int[];
BEGIN
  FOREACH x IN ARRAY ARRAY[1, 2] LOOP NULL; END LOOP;
  RETURN 1;
END;
$$;
DO $$
DECLARE r px_t%ROWTYPE; n int;
BEGIN
  FOREACH n IN ARRAY ARRAY[3, 1] LOOP
    SELECT * INTO STRICT r FROM px_t WHERE id = n;
    RAISE NOTICE 'row % is % (%)', n, r.name, r.score;
  END LOOP;
  r.id := 4; r.name := 'dee'; r.score := 1.25;
  INSERT INTO px_t VALUES (r.id, r.name, r.score);
END
$$;
SELECT * FROM px_t ORDER BY id;
SELECT px_bad_assign();
SELECT px_unassigned();
SELECT px_each_null();
SELECT px_each_scalar();
SELECT px_each_slice();
SELECT px_each_notarray();
SELECT px_each_isarray();
-- ALTER FUNCTION / PROCEDURE / ROUTINE
CREATE ROLE px_owner;
CREATE PROCEDURE px_proc(n int) LANGUAGE plpgsql AS $$BEGIN RAISE NOTICE 'proc %', n; END$$;
ALTER FUNCTION px_row(int) RENAME TO px_row2;
ALTER FUNCTION px_sum(int[]) VOLATILE STRICT;
ALTER FUNCTION px_each_found CALLED ON NULL INPUT STABLE;
ALTER ROUTINE px_words(text[]) OWNER TO px_owner;
ALTER PROCEDURE px_proc(int) RENAME TO px_proc2;
CALL px_proc2(5);
ALTER FUNCTION px_each_found(int[]) RENAME TO px_sum;
ALTER FUNCTION px_nosuch(int) STABLE;
ALTER FUNCTION px_nosuch IMMUTABLE;
ALTER PROCEDURE px_sum(int[]) RENAME TO px_other;
ALTER FUNCTION px_proc2(int) STABLE;
BEGIN;
ALTER FUNCTION px_sum(int[]) RENAME TO px_total;
ALTER FUNCTION px_total(int[]) IMMUTABLE;
SELECT proname, provolatile, proisstrict FROM pg_proc WHERE proname IN ('px_sum', 'px_total');
ROLLBACK;
SELECT proname, provolatile, proisstrict, pg_get_userbyid(proowner) = 'px_owner' AS px_owned
  FROM pg_proc WHERE proname LIKE 'px\_%' ORDER BY proname;
-- @@ read-only
SELECT px_row2(1), px_row2(2), px_row2(9);
SELECT * FROM px_copy();
SELECT * FROM px_rows();
SELECT px_sum(ARRAY[1, 2, NULL, 4]), px_sum(ARRAY[5, -1, 7]), px_sum('{}'::int[]);
SELECT * FROM px_words(ARRAY['a', 'b', 'c']);
SELECT * FROM px_words('{}'::text[]);
SELECT px_each_found(ARRAY[1]), px_each_found('{}');
SELECT px_row2(3), px_sum(NULL) IS NULL AS strict_null, px_sum(ARRAY[2, 3]);
