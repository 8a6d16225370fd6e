-- json: the json and jsonb types — input and output (jsonb's canonical
-- form: keys deduplicated and sorted, numbers as numeric prints them),
-- storage and TOAST, operators, ordering and indexes, builders,
-- aggregates, set-returning functions, casts, and their runtime errors.
CREATE TABLE js_t (id int PRIMARY KEY, j json, b jsonb);
INSERT INTO js_t VALUES (1, '{"b": 1, "a": [1,  2]}', '{"b": 1, "a": [1, 2], "b": 3}');
INSERT INTO js_t VALUES (2, '[1, "x", null, true]', '[1, "x", null, true, {"k": "v"}]');
INSERT INTO js_t VALUES (3, '"str"', '"str"');
INSERT INTO js_t VALUES (4, '12.50', '1.50e1');
INSERT INTO js_t VALUES (5, 'null', 'null');
INSERT INTO js_t VALUES (6, '{}', '{"aaa": {"x": null, "y": [1, {"z": 2}]}, "bb": false, "c": "q\"\\\n\u00e9"}');
INSERT INTO js_t VALUES (7, NULL, NULL);
INSERT INTO js_t VALUES (8, '[]', '[]');
-- an index on a jsonb column; a big value goes to TOAST
CREATE INDEX js_t_b ON js_t (b);
INSERT INTO js_t SELECT 100, json_build_object('k', repeat('x', 20000)), jsonb_build_object('k', repeat('y', 20000), 'n', 1);
UPDATE js_t SET b = b || '{"n": 2}' WHERE id = 100;
-- uuid
CREATE TABLE js_u (u uuid PRIMARY KEY, n int);
INSERT INTO js_u VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1), ('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12', 2), ('{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a10}', 3), ('00000000000000000000000000000000', 4), ('ffffffff-ffff-ffff-ffff-ffffffffffff', 5);
INSERT INTO js_u VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 9);
CREATE TABLE js_d (a json, b jsonb, c uuid);
-- @@ read-only
SELECT id, j, b FROM js_t WHERE id < 100 ORDER BY id;
SELECT id, pg_typeof(j), pg_typeof(b), json_typeof(j), jsonb_typeof(b) FROM js_t WHERE id < 100 ORDER BY id;
SELECT '{"a":1, "a":2}'::json, '{"a":1, "a":2}'::jsonb, '{"bb":1,"a":2,"c":3,"aa":4}'::jsonb;
SELECT '[1e2, -0.0, 1.50e-1, 0e5, -12E-1, 123456789012345678901234567890.123]'::jsonb;
SELECT ' {"x" : [ ] , "y":{ }} '::jsonb, '"\u00e9\t\u0001"'::jsonb, '"\ud83d\ude00"'::jsonb;
-- operators
SELECT id, j -> 'a', j ->> 'b', b -> 'a', b ->> 'b', b -> 1, b ->> 1, b -> -1 FROM js_t WHERE id < 100 ORDER BY id;
SELECT b #> '{aaa,y,1}', b #>> '{aaa,y,1,z}', b #> '{}', b #>> '{c}', j #> '{a,1}' FROM js_t WHERE id IN (1, 6) ORDER BY id;
SELECT '{"a": {"b": [1, 2]}}'::json #>> '{a,b,0}', '{"a": 1, "a": 2}'::json -> 'a', '[1, [2, 3]]'::json -> 1 ->> 0;
SELECT id FROM js_t WHERE b @> '{"a": [2]}' ORDER BY id;
SELECT id FROM js_t WHERE b @> '[1]' OR '"str"' <@ b ORDER BY id;
SELECT '{"a": 1, "b": 2}'::jsonb @> '{"b": 2}', '[1, 2, [3]]'::jsonb @> '[[3]]', '[1, 2]'::jsonb @> '1', '1'::jsonb @> '[1]';
SELECT id, b ? 'a', b ? 'x', b ?| array['x', 'bb'], b ?& array['a', 'b'] FROM js_t WHERE id IN (1, 2, 6) ORDER BY id;
SELECT '{"a": 1}'::jsonb || '{"b": 2, "a": 3}', '[1]'::jsonb || '[2, 3]', '1'::jsonb || '2', '{"a": 1}'::jsonb || '[1]', '[1]'::jsonb || '{"a": 1}';
SELECT '{"a": 1, "b": 2}'::jsonb - 'a', '["a", "b", "a"]'::jsonb - 'a', '[1, 2, 3]'::jsonb - 1, '[1, 2, 3]'::jsonb - -1, '{"a": 1, "b": 2, "c": 3}'::jsonb - '{a,c}'::text[];
SELECT '{"a": {"b": 1, "c": 2}}'::jsonb #- '{a,b}', '[1, [2, 3]]'::jsonb #- '{1,0}';
-- ordering, equality, DISTINCT, GROUP BY, index
SELECT id, b FROM js_t WHERE id < 100 ORDER BY b, id;
SELECT '1.0'::jsonb = '1', '{"a": 1, "b": 2}'::jsonb = '{"b": 2, "a": 1}', '[]'::jsonb < 'null', '1'::jsonb < '[0]', '{}'::jsonb > '[1, 2, 3]';
SELECT DISTINCT v FROM (VALUES ('1'::jsonb), ('1.00'), ('{"a": 1}'), ('{"a": 1.0}'), ('[]')) t(v) ORDER BY v;
SELECT v, count(*) FROM (VALUES ('"a"'::jsonb), ('"a"'), ('true')) t(v) GROUP BY v ORDER BY v;
-- builders and conversions
SELECT json_build_object('a', 1, 'b', 'x', 'c', NULL, 'd', true), jsonb_build_object('b', 1, 'a', 2.50, 'b', 3);
SELECT json_build_array(1, 'x', NULL, 1.5), jsonb_build_array(), json_build_object(), jsonb_build_array(1, '2', array[1, 2]);
SELECT to_json('a"b'::text), to_jsonb(42), to_json(array[1, 2, 3]), to_jsonb(array['a', 'b']), to_json(true), to_jsonb(NULL::int);
SELECT to_json('2020-01-02 03:04:05'::timestamp), to_jsonb('2020-01-02'::date), to_json(1.5::float8), to_jsonb('NaN'::float8);
SELECT j::jsonb, b::json, b::text FROM js_t WHERE id IN (1, 6) ORDER BY id;
SELECT '12.5'::jsonb::numeric, '12.5'::jsonb::int, '3'::jsonb::bigint, 'true'::jsonb::bool, '1e2'::jsonb::float8;
-- functions
SELECT id, jsonb_array_length(b), json_array_length(j) FROM js_t WHERE id IN (2, 8) ORDER BY id;
SELECT jsonb_pretty(b) FROM js_t WHERE id IN (1, 2, 3, 6, 8) ORDER BY id;
SELECT jsonb_set(b, '{a,0}', '"new"'), jsonb_set(b, '{z}', '[1]'), jsonb_set(b, '{z}', '1', false) FROM js_t WHERE id = 1;
SELECT jsonb_set('[1, 2]', '{-1}', '9'), jsonb_set('[1, 2]', '{5}', '9'), jsonb_set('[1, 2]', '{-5}', '9'), jsonb_set('{"a": {"b": 1}}', '{a,c}', '2');
SELECT jsonb_strip_nulls(b), json_strip_nulls('{"a": null, "b": [null, {"c": null}]}') FROM js_t WHERE id = 6;
-- aggregates
SELECT json_agg(id ORDER BY id), jsonb_agg(b ORDER BY id) FROM js_t WHERE id < 5;
SELECT json_agg(x), jsonb_agg(x) FROM (VALUES (1), (NULL), (3)) t(x);
SELECT json_object_agg(k, v), jsonb_object_agg(k, v) FROM (VALUES ('b', 1), ('a', 2), ('b', 3)) t(k, v);
SELECT json_agg(a) FROM (VALUES (array[1, 2]), (array[3])) t(a);
-- set-returning functions
SELECT * FROM jsonb_array_elements('[1, "a", null, {"b": [2]}]');
SELECT * FROM jsonb_array_elements_text('[1, "a", null, {"b": [2]}]') AS t(x);
SELECT * FROM json_array_elements('[1,  "a" , {"b":[2]}]');
SELECT * FROM jsonb_each('{"b": 1, "a": {"c": null}}');
SELECT key, value FROM jsonb_each_text('{"b": 1, "a": "x", "c": null}') ORDER BY key;
SELECT * FROM json_each('{"b": 1, "a": [1,  2]}');
SELECT * FROM jsonb_object_keys('{"bb": 1, "a": 2, "ccc": 3}');
SELECT k FROM json_object_keys('{"bb": 1, "a": 2}') AS k;
SELECT jsonb_array_elements('[1, 2, 3]');
SELECT jsonb_object_keys('{"x": 1, "y": 2}') AS k;
SELECT js_t.id, e.value FROM js_t, jsonb_array_elements(js_t.b -> 'a') AS e WHERE js_t.id = 1;
SELECT jsonb_typeof(x) FROM jsonb_array_elements('[1, "a", null, true, [], {}]') x;
SELECT e ->> 'k', value -> 'k' FROM jsonb_array_elements('[{"k": 1}, {"k": "v"}]') e;
SELECT id, k FROM js_t, jsonb_object_keys(b) AS k WHERE jsonb_typeof(b) = 'object' ORDER BY id, k;
-- errors
SELECT jsonb_array_length('{}');
SELECT jsonb_array_length('1');
SELECT '{"a": 1}'::jsonb - 1;
SELECT '"x"'::jsonb - 'x';
SELECT b::int FROM js_t WHERE id = 3;
SELECT b::bool FROM js_t WHERE id = 8;
SELECT jsonb_build_object('a', 1, 'b');
SELECT jsonb_build_object(NULL, 1);
SELECT json_build_object(NULL, 1);
SELECT jsonb_set('1', '{a}', '1');
SELECT jsonb_set('{"a": [1]}', '{a,x}', '1');
SELECT * FROM jsonb_each('[1]');
SELECT * FROM jsonb_array_elements('{"a": 1}');
SELECT jsonb_object_keys('[1]');
SELECT jsonb_object_agg(k, 1) FROM (VALUES (NULL::text)) t(k);
SELECT id FROM js_t WHERE b = '{"a": [1, 2], "b": 3}';
SELECT id FROM js_t WHERE b = '"str"';
SELECT id, length(j::text), length(b::text), b -> 'n', b ->> 'k' = repeat('y', 20000), length(b ->> 'k') FROM js_t WHERE id = 100;
SELECT * FROM js_u ORDER BY u;
SELECT u FROM js_u WHERE u = 'a0eebc999c0b4ef8bb6d6bb9bd380a12';
SELECT u FROM js_u WHERE u > 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a10' ORDER BY u DESC;
SELECT u::text, pg_typeof(u), to_json(u), to_jsonb(u) FROM js_u WHERE n = 1;
SELECT a.n, b.n FROM js_u a JOIN js_u b ON a.u = b.u ORDER BY a.n;
SELECT count(DISTINCT u), min(n) FROM js_u;
SELECT x::uuid FROM (VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1')) t(x);
SELECT x::uuid FROM (VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-')) t(x);
SELECT length(gen_random_uuid()::text), gen_random_uuid() <> gen_random_uuid(), substr(gen_random_uuid()::text, 15, 1);
-- column types as \d shows them, and pg_type
\d js_d
SELECT oid, typname, typlen, typcategory FROM pg_type WHERE typname IN ('json', 'jsonb', 'uuid') ORDER BY oid;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'js_d'::regclass AND attnum > 0 ORDER BY attnum;
-- arrays of json, jsonb and uuid
SELECT array_agg(b ORDER BY b) FROM (VALUES ('{"a":1}'::jsonb), ('[1, "x"]'), ('"s"')) v(b);
SELECT array['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, NULL], '{"{\"x\": 1}", null}'::jsonb[], array['{"a": 1}'::json, '[]'];
SELECT unnest('{"{\"x\": 1}", 2}'::jsonb[]), to_jsonb(array['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid]);
