-- Set-returning functions in a target list (PostgreSQL's ProjectSet):
-- one per row of FROM, several in lockstep (the shorter padded with
-- NULL), generate_subscripts, and the catalog query shapes ORMs send.
CREATE TABLE ts_t (id int PRIMARY KEY, arr int[], tags text[]);
INSERT INTO ts_t VALUES (1, ARRAY[10, 20, 30], ARRAY['a', 'b']), (2, ARRAY[]::int[], ARRAY['c']), (3, NULL, NULL), (4, ARRAY[5], ARRAY['d', 'e', 'f']);
SELECT generate_series(1, 3) AS x;
SELECT unnest(ARRAY[1, 2, 3]), generate_series(1, 2);
SELECT id, unnest(arr) FROM ts_t ORDER BY 1, 2;
SELECT id, unnest(arr) AS v, unnest(tags) AS t FROM ts_t ORDER BY id, v NULLS LAST, t;
SELECT id, generate_subscripts(arr, 1) AS i, unnest(arr) AS v FROM ts_t ORDER BY 1, 2;
SELECT generate_subscripts(ARRAY[5, 6, 7], 1, true) AS s;
SELECT generate_subscripts(ARRAY[5, 6, 7], 1, false) AS s;
SELECT generate_subscripts(ARRAY[5, 6, 7], 2) AS none;
SELECT DISTINCT unnest(tags) AS t FROM ts_t ORDER BY 1;
SELECT id, generate_series(1, id) AS n FROM ts_t WHERE id < 3 ORDER BY 1, 2;
SELECT * FROM (SELECT id, unnest(arr) AS v FROM ts_t) s WHERE v > 10 ORDER BY v;
SELECT t.id, jsonb_array_elements_text('["x", "y"]') AS e FROM ts_t t WHERE t.id = 1 ORDER BY 2;
SELECT unnest(arr) FROM ts_t ORDER BY 1 LIMIT 2;
-- The shape SQLAlchemy sends for a key's columns in order.
SELECT c.relname, a.attname, k.ord
  FROM (SELECT indexrelid, unnest(indkey) AS attnum, generate_subscripts(indkey, 1) AS ord
          FROM pg_index WHERE indrelid = 'ts_t'::regclass) k
  JOIN pg_class c ON c.oid = k.indexrelid
  JOIN pg_attribute a ON a.attrelid = 'ts_t'::regclass AND a.attnum = k.attnum
  ORDER BY 1, 3;
-- OID comparisons with integers of any width.
SELECT relname FROM pg_class WHERE oid IN ('ts_t'::regclass::oid::int8) AND oid = ('ts_t'::regclass::oid::int4);
-- @@ read-only
SELECT id, unnest(arr) AS v, unnest(tags) AS t FROM ts_t ORDER BY id, v NULLS LAST, t;
SELECT id, generate_subscripts(arr, 1) AS i FROM ts_t ORDER BY 1, 2;
