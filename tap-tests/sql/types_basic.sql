-- types_basic: literals, input and output of the base types hotpair has —
-- integers of each width with their overflow errors, numeric scale and
-- rounding, text, bool input spellings, NULL display, typed literals.
CREATE TABLE tyb_t (i2 smallint, i4 int, i8 bigint, n numeric, n2 numeric(8,3), t text, v varchar(5), b bool);
INSERT INTO tyb_t VALUES (1, 2, 3, 1.5, 1.2345, 'x', 'abc', 't');
INSERT INTO tyb_t VALUES (-32768, -2147483648, -9223372036854775808, -0.001, -1, '', '', 'no');
INSERT INTO tyb_t VALUES (32767, 2147483647, 9223372036854775807, 123456789.123456789, 99999.9995, 'with ''quote''', 'ab', 'YES');
INSERT INTO tyb_t VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE tyb_c (m char(10));
INSERT INTO tyb_c VALUES ('MAIL'), ('SHIP'), ('AIR');
-- @@ read-only
SELECT * FROM tyb_t ORDER BY i4 NULLS LAST;
SELECT i2 + 1 AS a, i4 * 2 AS b, i8 - 1 AS c FROM tyb_t WHERE i4 = 2;
SELECT i2 + 1 FROM tyb_t WHERE i2 = 32767;
SELECT i4 + 1 FROM tyb_t WHERE i4 = 2147483647;
SELECT i8 + 1 FROM tyb_t WHERE i8 > 0 AND i8 > 100;
SELECT -i4 FROM tyb_t WHERE i4 < 0;
SELECT n, n2, n * 2, n / 3, round(n, 2), n2 + 1 FROM tyb_t ORDER BY n NULLS FIRST;
SELECT 1.10 + 2.205 AS a, 10 / 3.0 AS b, 0.1 * 3 AS c, 1e3 AS d, 2.5e-3 AS e, 100::numeric / 7 AS f;
SELECT 'true'::bool, 'off'::bool, 'y'::bool, '0'::bool, true AND NULL, false OR NULL;
SELECT 42::text, '  7 '::int, '-12'::bigint, '3.14'::numeric, 12::smallint;
SELECT length(t), v || '|', upper(v) FROM tyb_t ORDER BY i4 NULLS LAST;
SELECT 'it''s' AS q, E'tab\there' AS e, 'caf' || 'é' AS u, length('é') AS ulen, octet_length('é') AS ubytes;
SELECT NULL AS n, NULL::int + 1 AS n1, coalesce(NULL, 'd') AS d;
-- errors
SELECT 9223372036854775807::bigint + 1;
SELECT 12345.678::numeric(5,2);
-- character(n) in IN lists and = ANY (trailing spaces do not count)
SELECT m, m IN ('MAIL', 'SHIP') AS in_list, m NOT IN ('AIR') AS not_in, m = ANY (ARRAY['MAIL', 'AIR']) AS any_arr FROM tyb_c ORDER BY m;
SELECT count(*) FROM tyb_c WHERE m IN ('MAIL', 'SHIP');
SELECT 'a'::varchar IN ('a ') AS varchar_keeps_spaces, 'MAIL'::char(10) IN ('MAIL'::text) AS as_text;
