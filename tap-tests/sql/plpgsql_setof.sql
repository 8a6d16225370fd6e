-- plpgsql_setof: set-returning functions (RETURNS SETOF / TABLE, RETURN
-- NEXT / RETURN QUERY [EXECUTE]) in FROM and in the select list, OUT /
-- INOUT parameters, defaults and named notation, and the pg_proc columns
-- that show them; the read-only part calls them on the standby.
CREATE TABLE so_t (id int PRIMARY KEY, v text);
INSERT INTO so_t VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, NULL);
CREATE FUNCTION so_ints(n int) RETURNS SETOF int LANGUAGE sql AS
$$SELECT g FROM generate_series(1, n) AS g$$;
CREATE FUNCTION so_rows(lo int) RETURNS TABLE (id int, v text) LANGUAGE sql STABLE AS
$$SELECT id, v FROM so_t WHERE id >= lo ORDER BY id$$;
CREATE FUNCTION so_next(n int) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    RETURN NEXT 'item ' || i;
  END LOOP;
  RETURN;
END;
$$;
CREATE FUNCTION so_table(lo int) RETURNS TABLE (k int, label text) LANGUAGE plpgsql AS $$
BEGIN
  FOR k, label IN SELECT t.id, t.v FROM so_t t WHERE t.id >= lo ORDER BY t.id LOOP
    label := coalesce(upper(label), '-');
    RETURN NEXT;
  END LOOP;
  k := 100;
  label := 'last';
  RETURN NEXT;
END;
$$;
CREATE FUNCTION so_query(lo int) RETURNS TABLE (id int, v text) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT t.id, t.v FROM so_t t WHERE t.id >= lo ORDER BY t.id;
  RETURN QUERY EXECUTE 'SELECT id * 10, v FROM so_t WHERE id = $1' USING lo;
END;
$$;
CREATE FUNCTION so_empty() RETURNS SETOF int LANGUAGE plpgsql AS $$BEGIN RETURN; END$$;
CREATE FUNCTION so_rec() RETURNS SETOF int LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT id FROM so_t ORDER BY id DESC LOOP
    RETURN NEXT r;
  END LOOP;
END;
$$;
CREATE FUNCTION so_bad() RETURNS SETOF int LANGUAGE plpgsql AS $$
BEGIN RETURN QUERY SELECT 1, 2; END;
$$;
CREATE FUNCTION so_out(a int, OUT doubled int, OUT label text) LANGUAGE plpgsql AS $$
BEGIN
  doubled := a * 2;
  label := 'n' || a;
END;
$$;
CREATE FUNCTION so_out_sql(a int, OUT s int, OUT p int) AS 'SELECT a + a, a * a' LANGUAGE sql;
CREATE FUNCTION so_inout(INOUT x int, b int DEFAULT 5) LANGUAGE plpgsql AS $$
BEGIN x := x + b; END;
$$;
CREATE FUNCTION so_out_set(n int, OUT i int, OUT sq int) RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN
  FOR j IN 1..n LOOP
    i := j;
    sq := j * j;
    RETURN NEXT;
  END LOOP;
END;
$$;
CREATE FUNCTION so_named(a int, b int DEFAULT 10, c int DEFAULT 3) RETURNS text
  LANGUAGE sql AS $$SELECT a || '/' || b || '/' || c$$;
CREATE FUNCTION so_wrong(OUT a int, OUT b text) RETURNS int LANGUAGE sql AS 'SELECT 1, 2';
SELECT proname, pronargs, pronargdefaults, prorettype::regtype, proretset,
    proallargtypes::text, proargmodes, proargnames
  FROM pg_proc WHERE proname LIKE 'so\_%' ORDER BY proname;
SELECT proname, pg_get_function_arguments(oid), pg_get_function_result(oid)
  FROM pg_proc WHERE proname LIKE 'so\_%' ORDER BY proname;
-- @@ read-only
SELECT * FROM so_ints(3);
SELECT * FROM so_ints(3) AS g(n);
SELECT x FROM so_ints(2) AS x;
SELECT so_ints(3);
SELECT so_ints(2) AS n, 'a' AS tag;
SELECT * FROM so_rows(2);
SELECT r.v FROM so_rows(3) AS r WHERE r.id = 4;
SELECT * FROM so_rows(3) AS r(a, b);
SELECT so_rows(3);
SELECT * FROM so_next(3);
SELECT * FROM so_table(3);
SELECT * FROM so_query(3);
SELECT count(*) FROM so_empty();
SELECT * FROM so_rec();
SELECT * FROM so_bad();
SELECT t.id, s FROM so_t t, LATERAL so_ints(t.id) AS s WHERE t.id <= 3 ORDER BY 1, 2;
SELECT t.id, s.* FROM so_t t CROSS JOIN LATERAL so_rows(t.id) AS s WHERE t.id >= 3 ORDER BY 1, 2;
SELECT * FROM so_ints(3) WITH ORDINALITY;
SELECT * FROM so_out(21);
SELECT so_out(21);
SELECT * FROM so_out_sql(3);
SELECT so_inout(1), so_inout(1, 2);
SELECT * FROM so_inout(7);
SELECT * FROM so_out_set(3);
SELECT so_named(1), so_named(1, 2), so_named(a => 1, c => 7), so_named(1, c => 8);
SELECT so_named(b => 2, a => 1);
SELECT * FROM so_ints(NULL);
