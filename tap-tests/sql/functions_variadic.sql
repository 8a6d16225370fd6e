-- functions_variadic: VARIADIC parameters — definitions, calls in
-- expanded form and with VARIADIC array, a variadic DEFAULT, PL/pgSQL
-- bodies, OUT parameters beside one, the catalog columns that show them,
-- and the definition errors (a call's errors would need the error
-- cursor, see `errors` in the schedule); the read-only part calls them
-- on the standby.
CREATE FUNCTION v_sum(VARIADIC xs int[]) RETURNS int LANGUAGE sql IMMUTABLE AS
$$SELECT coalesce(sum(x), 0)::int FROM unnest(xs) AS x$$;
CREATE FUNCTION v_join(sep text, VARIADIC parts text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r text := '';
  p text;
BEGIN
  FOREACH p IN ARRAY parts LOOP
    IF r <> '' THEN
      r := r || sep;
    END IF;
    r := r || coalesce(p, '?');
  END LOOP;
  RETURN r;
END;
$$;
CREATE FUNCTION v_count(VARIADIC xs numeric[] DEFAULT ARRAY[]::numeric[]) RETURNS int
LANGUAGE sql AS $$SELECT cardinality(xs)$$;
CREATE FUNCTION v_range(VARIADIC xs int[], OUT lo int, OUT hi int) LANGUAGE sql AS
$$SELECT min(x), max(x) FROM unnest(xs) AS x$$;
CREATE FUNCTION v_bad(VARIADIC x int) RETURNS int LANGUAGE sql AS $$SELECT 1$$;
CREATE FUNCTION v_bad2(VARIADIC x int[], y int) RETURNS int LANGUAGE sql AS $$SELECT 1$$;
-- @@ read-only
SELECT v_sum(1, 2, 3);
SELECT v_sum(5);
SELECT v_sum(VARIADIC ARRAY[4, 5, 6]);
SELECT v_sum(VARIADIC '{7,8}');
SELECT v_join(', ', 'a', 'b', NULL, 'c');
SELECT v_join('-', VARIADIC ARRAY['x', 'y']);
SELECT v_join('+', 'only');
SELECT v_count();
SELECT v_count(1, 2.5, 3);
SELECT * FROM v_range(3, 1, 2);
SELECT v_sum(x, x * 10) FROM generate_series(1, 3) AS x ORDER BY 1;
SELECT proname, provariadic::regtype, pg_get_function_arguments(oid)
FROM pg_proc WHERE proname LIKE 'v\_%' ORDER BY proname;
SELECT pg_get_function_identity_arguments('v_join'::regproc);
