-- pg_get_constraintdef, pg_get_viewdef and information_schema show the
-- casts PostgreSQL's parser adds to CHECK and view expressions: integers
-- meeting numeric or double precision, varchar compared as text, typed
-- string literals, negative numbers, and PostgreSQL's parentheses in both
-- modes.
CREATE TABLE dc_t (a int, b numeric, c varchar(10), d text, e date, f float8, g bigint, h boolean, k char(3),
  CHECK (a > 0), CHECK (b >= 0), CHECK (c <> ''), CHECK (d IN ('x', 'y')), CHECK (e > '2020-1-1'),
  CHECK (f < 1), CHECK (a + 1 < 10 AND b * 2 < 100.5), CHECK (g BETWEEN 1 AND 10), CHECK (h),
  CHECK (d LIKE 'a%'), CHECK (a <> -1), CHECK (b > 1.5), CHECK (a < 2.5), CHECK (c = d),
  CHECK (coalesce(a, 0) > -5), CHECK (lower(d) = d), CHECK (f > 1.5), CHECK (a IS NOT NULL OR b IS NULL),
  CHECK (a * 2 + 1 > a - 1 - 1), CHECK (a = 1 OR a = 2 OR (a = 3 AND b = 4)), CHECK (k = 'abc'));
SELECT conname, pg_get_constraintdef(oid), pg_get_constraintdef(oid, true)
  FROM pg_constraint WHERE conrelid = 'dc_t'::regclass ORDER BY conname;
SELECT check_clause FROM information_schema.check_constraints
  WHERE constraint_name LIKE 'dc_t%' ORDER BY constraint_name;
CREATE VIEW dc_v AS SELECT a, b FROM dc_t WHERE b > 100 AND c = 'q' AND f > 2 AND (a = 1 OR g = 2);
SELECT pg_get_viewdef('dc_v');
SELECT pg_get_viewdef('dc_v', true);
\d dc_t
-- @@ read-only
SELECT conname, pg_get_constraintdef(oid, true)
  FROM pg_constraint WHERE conrelid = 'dc_t'::regclass ORDER BY conname;
SELECT pg_get_viewdef('dc_v', true);
