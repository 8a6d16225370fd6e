-- arrays_multidim: arrays of more than one dimension — constructors, text
-- input with and without explicit bounds, subscripts and slices, the
-- dimension functions, concatenation, array_agg over arrays, to_json,
-- stored in a table (and an index on it) and read on the standby, and
-- PostgreSQL's errors for ragged or mixed input.
CREATE TABLE md (id int PRIMARY KEY, m int[], t text[]);
INSERT INTO md VALUES
  (1, ARRAY[[1, 2, 3], [4, 5, 6]], '{{a,b},{"c d",NULL}}'),
  (2, '[0:1][-1:0]={{7,8},{9,NULL}}', ARRAY[ARRAY['x'], ARRAY['y']]),
  (3, '{1,2,3,4,5,6}', '{}'),
  (4, NULL, ARRAY[[['p', 'q']], [['r', 's']]]);
CREATE INDEX md_m ON md (m);
-- @@ read-only
SELECT id, m, t FROM md ORDER BY id;
SELECT id, array_ndims(m), array_dims(m), cardinality(m), array_length(m, 1), array_length(m, 2),
       array_lower(m, 2), array_upper(m, 2), array_dims(t) FROM md ORDER BY id;
SELECT id, m[1][2], m[2][3], m[1], m[0][-1], m[1:2][2:3], m[2:][:1], m[2][2:] FROM md ORDER BY id;
SELECT id, t[2][1], t[1:1], t[2][1][2] FROM md ORDER BY id;
SELECT ARRAY[[1, 2], [3, 4]] AS a, ARRAY[ARRAY[1.5, NULL], ARRAY[3, 4]] AS b, ARRAY[[[1]], [[2]]] AS c;
SELECT ARRAY[ARRAY[]::int[], ARRAY[]::int[]] AS empty, ARRAY[NULL::int[], '{}'] AS nulls;
SELECT '{{1,2},{3,4}}'::int[] AS a, '[2:3][1:2]={{1,2},{3,4}}'::int[] AS b, ' { { 1 } , { 2 } } '::int[] AS c;
SELECT '{{"a,b", "{x}"}, {"", "NULL"}}'::text[] AS quoted;
SELECT ARRAY[[1, 2]] || ARRAY[[3, 4]] AS cat, ARRAY[[1, 2]] || ARRAY[3, 4] AS append_row,
       ARRAY[3, 4] || ARRAY[[1, 2]] AS prepend_row, array_cat(ARRAY[[1, 2]], NULL) AS with_null;
SELECT array_agg(m ORDER BY id) FROM md WHERE id IN (1, 3) AND array_ndims(m) = 2;
SELECT array_agg(x) FROM (VALUES (ARRAY[1, 2]), (ARRAY[3, 4]), (ARRAY[5, 6])) v(x);
SELECT to_json(m), to_jsonb(t) FROM md ORDER BY id;
SELECT unnest(m) FROM md WHERE id = 2;
SELECT id FROM md WHERE 5 = ANY (m) ORDER BY id;
SELECT id, m @> ARRAY[9], m && ARRAY[6, 7] FROM md ORDER BY id;
SELECT array_to_string(t, '|', '-') FROM md ORDER BY id;
SELECT array_replace(m, 5, 50), m::text[] FROM md ORDER BY id;
SELECT id FROM md WHERE m = '{{1,2,3},{4,5,6}}' ORDER BY id;
SELECT id FROM md WHERE m = '{1,2,3,4,5,6}' ORDER BY id;
SELECT a, a = '{1,2,3,4}'::int[] AS eq, a > '{1,2,3,4}'::int[] AS gt, a < '{{1,2,3,4}}'::int[] AS lt
FROM (VALUES ('{{1,2},{3,4}}'::int[]), ('{1,2,3,4}'), ('[0:3]={1,2,3,4}'), ('{{1,2,3,4}}')) v(a) ORDER BY a;
SELECT m FROM md ORDER BY m NULLS FIRST;
DO $$ DECLARE x int[]; y int; BEGIN
  FOREACH x SLICE 1 IN ARRAY '[0:1][5:6]={{1,2},{3,4}}'::int[] LOOP RAISE NOTICE 'row %', x; END LOOP;
  FOREACH x SLICE 2 IN ARRAY ARRAY[[1,2],[3,4]] LOOP RAISE NOTICE 'all %', x; END LOOP;
  FOREACH y IN ARRAY ARRAY[[1,2],[3,4]] LOOP RAISE NOTICE 'el %', y; END LOOP;
  FOREACH x SLICE 1 IN ARRAY ARRAY[[[1,2]],[[3,4]]] LOOP RAISE NOTICE 'deep %', x; END LOOP;
END $$;
SELECT '{{1,2},{3}}'::int[];
SELECT '{{1,2},3}'::int[];
SELECT '{1,{2}}'::int[];
SELECT '{{},{}}'::int[];
SELECT '[1:2]={{1,2},{3,4}}'::int[];
SELECT ARRAY[[[[[[[1]]]]]]];
SELECT ARRAY[ARRAY[1, 2], ARRAY[3]];
SELECT ARRAY[ARRAY[1, 2], NULL, ARRAY[3, 4]];
SELECT array_append(ARRAY[[1, 2]], 3);
SELECT array_prepend(0, ARRAY[[1, 2]]);
SELECT ARRAY[[1, 2]] || ARRAY[[3]];
SELECT ARRAY[[[1]]] || ARRAY[1];
SELECT array_position(ARRAY[[1, 2], [3, 4]], 3);
SELECT array_remove(ARRAY[[1, 2], [3, 4]], 3);
SELECT array_agg(x) FROM (VALUES (ARRAY[1, 2]), (ARRAY[3])) v(x);
SELECT array_agg(x) FROM (VALUES (ARRAY[1, 2]), (NULL)) v(x);
SELECT array_agg(x) FROM (VALUES (ARRAY[1, 2]), ('{}')) v(x);
SELECT array_agg(x) FROM (VALUES ('{}'::int[]), (ARRAY[1, 2])) v(x);
SELECT array_agg(x) FROM (VALUES (ARRAY[1, 2]), (ARRAY[[3, 4]]), (NULL)) v(x);
