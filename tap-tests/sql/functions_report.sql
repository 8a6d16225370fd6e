-- functions_report: the functions reports use — dates and intervals,
-- to_char / to_date / to_number, regular expressions, the string and
-- numeric functions functions_text.sql leaves out, arrays, and
-- generate_series joined with tables.
CREATE TABLE fr_orders (id int, placed timestamp, shipped date, amount numeric(10,2), customer text, code text);
INSERT INTO fr_orders VALUES
  (1, '2024-01-15 09:30:00', '2024-01-17', 120.50, 'Alice Smith', 'AB-123-x'),
  (2, '2024-01-31 23:59:59', '2024-02-02', 80.00, 'bob jones', 'CD-45-y'),
  (3, '2024-02-29 12:00:00', NULL, 15.25, 'Carol  White', 'ab-6-Z'),
  (4, '2024-03-01 00:00:00', '2024-03-01', NULL, NULL, NULL),
  (5, '2023-12-31 18:45:10', '2024-01-03', 999.99, 'alice smith', 'EF-7890-x'),
  (6, '2024-02-29 12:00:00', '2024-03-04', 15.25, 'Dan', 'GH-1-');
-- @@ read-only
-- date_trunc, extract / date_part, age, interval arithmetic
SELECT id, date_trunc('month', placed), date_trunc('day', placed), date_trunc('hour', placed) FROM fr_orders ORDER BY id;
SELECT date_trunc('month', placed) AS month, count(*), sum(amount) FROM fr_orders GROUP BY 1 ORDER BY 1;
SELECT id, extract(year FROM placed), extract(month FROM placed), extract(dow FROM placed), extract(doy FROM placed), extract(epoch FROM placed) FROM fr_orders ORDER BY id;
SELECT id, date_part('quarter', placed), date_part('week', placed), date_part('hour', placed) FROM fr_orders ORDER BY id;
SELECT id, shipped - placed::date AS days, age(shipped, placed::date), age(timestamp '2024-06-30 00:00:00', placed) FROM fr_orders ORDER BY id;
SELECT id, placed + interval '1 day', placed - interval '2 hours 30 minutes', shipped + 7, placed + interval '1 month' FROM fr_orders ORDER BY id;
SELECT interval '1 day' * 3, interval '90 minutes' + interval '1 hour', interval '1 year 2 months' - interval '3 months', interval '36 hours' / 2;
SELECT date '2024-02-28' + 1, date '2024-03-01' - date '2024-02-01', timestamp '2024-01-01 00:00' - timestamp '2023-12-25 12:00';
SELECT id FROM fr_orders WHERE placed >= timestamp '2024-02-01' AND placed < timestamp '2024-03-01' ORDER BY id;
SELECT id FROM fr_orders WHERE shipped - placed::date > 2 ORDER BY id;
-- to_char, to_date, to_number, to_timestamp
SELECT id, to_char(placed, 'YYYY-MM-DD HH24:MI:SS'), to_char(placed, 'Mon DD, YYYY'), to_char(placed, 'Day'), to_char(amount, 'FM999,990.00') FROM fr_orders ORDER BY id;
SELECT to_char(1234567.891, '9,999,999.99'), to_char(-42, '999'), to_char(0.5, '0.00'), to_char(7, 'FM00');
SELECT to_date('2024-03-15', 'YYYY-MM-DD'), to_date('15/03/2024', 'DD/MM/YYYY'), to_number('1,234.50', '9,999.99'), to_timestamp('2024-03-15 10:20', 'YYYY-MM-DD HH24:MI');
-- strings: regular expressions, SIMILAR TO
SELECT id, regexp_match(code, '([A-Za-z]+)-([0-9]+)'), regexp_replace(code, '[0-9]', '#', 'g'), regexp_replace(customer, '\s+', ' ') FROM fr_orders ORDER BY id;
SELECT id, code ~ '^[A-Z]{2}-', code ~* '^ab', code LIKE '%-x', code ILIKE 'ab%', code SIMILAR TO '[A-Z]{2}-[0-9]+-%' FROM fr_orders ORDER BY id;
SELECT id, code NOT LIKE 'A%', code !~ 'x$', customer NOT ILIKE 'alice%' FROM fr_orders ORDER BY id;
-- more string and numeric functions
SELECT id, split_part(code, '-', 1), split_part(code, '-', 2), split_part(code, '-', 3), split_part(code, '-', 4) FROM fr_orders ORDER BY id;
SELECT lower(customer), upper(customer), initcap(customer), length(customer), char_length(code), octet_length(code) FROM fr_orders ORDER BY id;
SELECT replace(customer, ' ', '_'), left(customer, 3), right(customer, 3), reverse(code), repeat('ab', id) FROM fr_orders ORDER BY id;
SELECT lpad(id::text, 4, '0'), rpad(code, 10, '.'), trim(both '-' from code), ltrim(code, 'A'), rtrim(code, '-'), btrim('  x  ') FROM fr_orders ORDER BY id;
SELECT concat(customer, '/', code), concat_ws('|', customer, code, amount), customer || code FROM fr_orders ORDER BY id;
SELECT starts_with(code, 'AB'), md5(coalesce(code, '')), translate(code, 'ABx', 'abX') FROM fr_orders ORDER BY id;
SELECT round(-2.5), round(2.5), trunc(-2.7), ceil(-2.7), floor(-2.7), abs(-3), mod(17, 5), sign(-4.5), sqrt(16::numeric);
SELECT 17 % 5, -17 % 5, 2 ^ 10, 10 / 4, 10 / 4.0, 10::numeric / 3;
-- arrays
SELECT ARRAY[1, 2, 3] AS a, ARRAY['x', NULL, 'z'] AS b, array_length(ARRAY[1, 2, 3], 1), cardinality(ARRAY[[1, 2], [3, 4]]);
SELECT (ARRAY[10, 20, 30])[2], (ARRAY[10, 20, 30])[2:3], ARRAY[1, 2] || 3, array_append(ARRAY[1], 2), array_position(ARRAY['a', 'b'], 'b');
SELECT id FROM fr_orders WHERE id = ANY (ARRAY[1, 3, 5, 7]) ORDER BY id;
SELECT id FROM fr_orders WHERE id <> ALL (ARRAY[1, 3, 5]) ORDER BY id;
SELECT unnest(ARRAY[3, 1, 2]) AS u ORDER BY u;
SELECT x, count(*) FROM unnest(ARRAY['a', 'b', 'a', NULL]) AS x GROUP BY x ORDER BY x NULLS FIRST;
SELECT id, string_to_array(code, '-'), array_to_string(string_to_array(code, '-'), '/') FROM fr_orders ORDER BY id;
-- generate_series joined with tables
SELECT d::date AS day, count(o.id) FROM generate_series(timestamp '2024-02-27', timestamp '2024-03-02', interval '1 day') AS d LEFT JOIN fr_orders o ON o.placed::date = d::date GROUP BY d ORDER BY d;
SELECT g, o.id FROM generate_series(1, 3) AS g JOIN fr_orders o ON o.id % 3 = g % 3 ORDER BY g, o.id;
SELECT m.month, coalesce(sum(o.amount), 0) AS total FROM generate_series(1, 4) AS m(month) LEFT JOIN fr_orders o ON extract(month FROM o.placed) = m.month AND extract(year FROM o.placed) = 2024 GROUP BY m.month ORDER BY m.month;
-- errors
SELECT date '2024-02-30';
SELECT to_date('2024-13-01', 'YYYY-MM-DD');
SELECT regexp_match('x', '(');
SELECT (ARRAY[1, 2])[1] + 'a';
SELECT repeat('x', -1), split_part('a-b', '-', 0);
