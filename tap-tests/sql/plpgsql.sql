-- plpgsql: CREATE [OR REPLACE] FUNCTION / DROP FUNCTION in LANGUAGE sql
-- and plpgsql, DO blocks, RAISE, loops, exceptions on subtransactions,
-- SELECT INTO [STRICT], PERFORM, EXECUTE … INTO … USING, FOUND,
-- GET DIAGNOSTICS; the read-only part calls the functions on the standby.
CREATE TABLE pl_t (id int PRIMARY KEY, v text);
INSERT INTO pl_t VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE FUNCTION pl_add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
CREATE FUNCTION pl_add3(int, int, int DEFAULT 10) RETURNS int LANGUAGE sql AS $$ SELECT $1 + $2 + $3 $$;
CREATE FUNCTION pl_name(i int) RETURNS text STABLE LANGUAGE sql AS $$SELECT v FROM pl_t WHERE id = i$$;
CREATE FUNCTION pl_strict(x int) RETURNS int STRICT LANGUAGE sql AS 'SELECT 42';
CREATE FUNCTION snapme(p_ret int, p_loop int) RETURNS int VOLATILE LANGUAGE plpgsql AS
$$BEGIN FOR x in 1..p_loop LOOP EXECUTE 'SELECT 1'; END LOOP; RETURN p_ret; END;$$;
CREATE FUNCTION pl_fact(n int) RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  r bigint := 1;
  i int;
BEGIN
  IF n < 0 THEN
    RAISE EXCEPTION 'negative input: %', n USING HINT = 'Pass zero or more.';
  ELSIF n = 0 THEN
    RETURN 1;
  END IF;
  FOR i IN 1..n LOOP
    r := r * i;
  END LOOP;
  RETURN r;
END;
$$;
CREATE FUNCTION pl_loops(n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  s text := '';
  i int := 0;
BEGIN
  LOOP
    i := i + 1;
    EXIT WHEN i > n;
    CONTINUE WHEN i % 2 = 0;
    s := s || i || ',';
  END LOOP;
  WHILE i > 0 LOOP
    i := i - 3;
  END LOOP;
  s := s || ' ' || i;
  FOR j IN REVERSE 10..1 BY 4 LOOP
    s := s || ' r' || j;
  END LOOP;
  <<outer>>
  FOR a IN 1..3 LOOP
    FOR b IN 1..3 LOOP
      EXIT outer WHEN a * b = 4;
      s := s || ' ' || a || b;
    END LOOP;
  END LOOP outer;
  RETURN s;
END;
$$;
CREATE FUNCTION pl_case(x int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  CASE x
    WHEN 1, 2 THEN RETURN 'small';
    WHEN 3 THEN RETURN 'three';
    ELSE RETURN 'big';
  END CASE;
END;
$$;
CREATE FUNCTION pl_case2(x int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  CASE WHEN x < 0 THEN RETURN 'neg'; WHEN x > 0 THEN RETURN 'pos'; END CASE;
END;
$$;
CREATE FUNCTION pl_lookup(k int) RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  r record;
  t text;
BEGIN
  SELECT id, v INTO r FROM pl_t WHERE id = k;
  IF NOT FOUND THEN
    RETURN 'none';
  END IF;
  SELECT v INTO STRICT t FROM pl_t WHERE id = k;
  RETURN r.id || '=' || r.v || '/' || t;
END;
$$;
CREATE FUNCTION pl_strict_into() RETURNS text LANGUAGE plpgsql AS $$
DECLARE t text;
BEGIN
  SELECT v INTO STRICT t FROM pl_t WHERE id > 1;
  RETURN t;
END;
$$;
CREATE FUNCTION pl_sum() RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  r record;
  total int := 0;
  names text := '';
BEGIN
  FOR r IN SELECT id, v FROM pl_t ORDER BY id LOOP
    total := total + r.id;
    names := names || r.v || ' ';
  END LOOP;
  FOR r IN EXECUTE 'SELECT id FROM pl_t WHERE id >= $1 ORDER BY id' USING 2 LOOP
    total := total + r.id * 100;
  END LOOP;
  RETURN names || total;
END;
$$;
CREATE FUNCTION pl_dyn(tab text, k int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE res text;
BEGIN
  EXECUTE format('SELECT v FROM %I WHERE id = $1', tab) INTO res USING k;
  RETURN res;
END;
$$;
CREATE FUNCTION pl_raise() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'plain notice';
  RAISE NOTICE 'values: % and % (100%%)', 1, NULL;
  RAISE WARNING 'a warning %', 'here' USING DETAIL = 'the detail';
  RAISE NOTICE USING MESSAGE = 'message from USING';
END;
$$;
CREATE FUNCTION pl_catch(x int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  msg text;
  st text;
BEGIN
  BEGIN
    INSERT INTO pl_t VALUES (100 + x, 'temp');
    PERFORM 1 / x;
    RETURN 'no error';
  EXCEPTION
    WHEN division_by_zero THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, st = RETURNED_SQLSTATE;
      RETURN 'caught ' || st || ': ' || msg;
  END;
END;
$$;
CREATE FUNCTION pl_catch_others() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    RAISE EXCEPTION 'custom' USING ERRCODE = 'P1234';
  EXCEPTION WHEN unique_violation THEN
    RETURN 'wrong handler';
  WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
  END;
END;
$$;
CREATE FUNCTION pl_rows() RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  UPDATE pl_t SET v = v WHERE id <= 2;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN 'updated ' || n || ' found ' || FOUND;
END;
$$;
CREATE PROCEDURE pl_proc(k int, val text) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pl_t VALUES (k, val);
END;
$$;
-- calls
SELECT pl_add(1, 2), pl_add3(1, 2), pl_add3(1, 2, 3), pl_name(2), pl_strict(NULL), pl_strict(1);
SELECT snapme(17, 10);
SELECT pl_fact(0), pl_fact(5), pl_fact(20);
SELECT pl_fact(-1);
SELECT pl_loops(7);
SELECT pl_case(1), pl_case(3), pl_case(9), pl_case2(-5), pl_case2(5);
SELECT pl_case2(0);
SELECT pl_lookup(1), pl_lookup(3), pl_lookup(7);
SELECT pl_strict_into();
SELECT pl_sum();
SELECT pl_dyn('pl_t', 3);
SELECT pl_raise();
SELECT pl_catch(0), pl_catch(1);
SELECT id, v FROM pl_t ORDER BY id;
SELECT pl_catch_others();
SELECT pl_rows();
CALL pl_proc(4, 'four');
SELECT id, v FROM pl_t ORDER BY id;
SELECT id, pl_add(id, 10) FROM pl_t WHERE pl_add(id, 1) > 2 ORDER BY id;
-- replace, errors, drop
CREATE FUNCTION pl_add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT 0';
CREATE OR REPLACE FUNCTION pl_add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + b + 1000';
SELECT pl_add(1, 2);
CREATE OR REPLACE FUNCTION pl_add(a int, b int) RETURNS text LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION pl_bad() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;
SELECT pl_bad();
DROP FUNCTION pl_bad();
DROP FUNCTION pl_bad();
DROP FUNCTION IF EXISTS pl_bad();
BEGIN;
CREATE FUNCTION pl_tx() RETURNS int LANGUAGE sql AS 'SELECT 7';
SELECT pl_tx();
ROLLBACK;
SELECT count(*) FROM pg_proc WHERE proname = 'pl_tx';
BEGIN;
DROP FUNCTION pl_add3(int, int, int);
ROLLBACK;
SELECT pl_add3(1, 1);
-- DO blocks
DO $$BEGIN RAISE NOTICE 'hello from DO'; END$$;
DO $$
DECLARE n int;
BEGIN
  SELECT count(*) INTO n FROM pl_t;
  RAISE NOTICE 'rows: %', n;
  INSERT INTO pl_t VALUES (50, 'from do');
END
$$;
DO $$BEGIN RAISE EXCEPTION 'failing DO % %', 1, 'x' USING DETAIL = 'more', HINT = 'fix it'; END$$;
DO $$BEGIN RAISE division_by_zero; END$$;
DO $$BEGIN RAISE SQLSTATE '22012' USING MESSAGE = 'by code'; END$$;
DO $$BEGIN PERFORM 1 / 0; END$$;
DO $$BEGIN ASSERT 1 = 2, 'one is not two'; END$$;
DO $$BEGIN SELECT 1; END$$;
DO LANGUAGE plpgsql $$BEGIN NULL; END$$;
SELECT id, v FROM pl_t ORDER BY id;
SELECT proname, pronargs, pronargdefaults, prorettype::regtype, provolatile, proisstrict,
    proretset, prokind, prolang, proargnames
  FROM pg_proc WHERE proname LIKE 'pl\_%' OR proname = 'snapme' ORDER BY proname;
SELECT proname, pg_get_function_arguments(oid), pg_get_function_result(oid),
    pg_function_is_visible(oid)
  FROM pg_proc WHERE proname IN ('pl_add', 'pl_add3', 'pl_name', 'pl_proc') ORDER BY 1;
SELECT prosrc FROM pg_proc WHERE proname IN ('pl_add', 'pl_add3') ORDER BY proname;
-- @@ read-only
SELECT pl_add(1, 2), pl_add3(1, 2), pl_name(2), pl_strict(NULL);
SELECT snapme(17, 10);
SELECT pl_fact(5), pl_fact(-1);
SELECT pl_loops(7), pl_case(2), pl_lookup(1), pl_sum(), pl_dyn('pl_t', 1);
SELECT pl_catch_others();
SELECT pl_raise();
DO $$BEGIN RAISE NOTICE 'DO on the standby'; END$$;
