create table sales (id int primary key, region text, day date, amount numeric(10,2), qty int, ratio float8, tags text[], spent interval, at timestamp)
insert into sales values (1, 'north', '2024-01-05', 100.50, 3, 0.5, '{a,b}', '1 hour', '2024-01-05 10:00'), (2, 'north', '2024-02-10', 200.25, 1, 1.5, '{b}', '90 minutes', '2024-02-10 11:30'), (3, 'south', '2024-02-11', 50.00, 7, 2.25, NULL, '2 days', '2024-02-11 23:59:59.5'), (4, 'south', '2024-03-01', NULL, 2, NULL, '{}', NULL, NULL), (5, 'east', '2023-12-31', 75.75, 4, 3.0, '{"x y",NULL}', '-1 day', '2023-12-31 00:00')
select id, day, spent, tags, at from sales order by id
select '2024-02-29'::date, 'infinity'::date, '-infinity'::date, '0001-01-01 BC'::date, '2024-01-01 13:00'::date, '20240105'::date
select '2023-02-30'::date
select 'x'::date
select '5874898-01-01'::date
select date '2024-01-31' + 1, date '2024-03-01' - date '2024-02-01', date '2024-01-31' + interval '1 month', date '2024-01-01' - 1, 7 + date '2024-01-01'
select timestamp '2024-01-31 10:00' + interval '1 month', timestamp '2024-01-01' - timestamp '2023-12-25 06:00', timestamptz '2024-01-01 00:00+00' - interval '1 day 1 hour', interval '2 hours' + timestamp '2024-01-01'
select date '2024-01-01'::timestamp, timestamp '2024-01-01 12:00'::date, date '2024-01-02'::timestamptz, date '2024-01-15' = timestamp '2024-01-15 00:00', date '2024-01-15' < date '2024-02-01'
select -interval '1 day 2 hours', interval '1 day' + interval '2 hours', interval '1 day' - interval '36 hours', interval '2 hours' * 1.5, interval '1 month' / 3, 2 * interval '1 mon 1 day', interval '1 mon 1 day' * 0.5
select interval '1 year 2 months 3 days 4 hours 5 minutes 6 seconds', interval '-1 year', interval '-1 day +1 hour', interval '1.5 months', interval '100 hours', interval '0', interval '2' day, '@ 1 day ago'::interval, 'P1Y2M3DT4H5M6S'::interval
select interval '1 mon' = interval '30 days', interval '1 day' > interval '23 hours'
select 'abc'::interval
select timestamp '2024-01-01' + '1 day', date '2024-01-01' - '2023-01-01', interval '1 day' * '2'
select current_date + '1'
select array[1,2,3], array['a', null, 'b c', '', 'NULL', 'x"y', 'a\b', 'a,b'], array[1.5, 2], array[date '2024-01-01'], array[true, false]
select '{1,2,NULL}'::int[], '{"a b",c}'::text[], '{}'::int[], '{ 1 , 2 }'::int4[], '[0:1]={5,6}'::int[]
select '{1,2'::int[]
select '{a}'::int[]
select (array[1,2,3])[2], (array[1,2,3])[5], (array[1,2,3])[2:3], (array[1,2,3])[:2], (array[1,2,3])[2:]
select array_length(array[1,2,3], 1), array_length('{}'::int[], 1), cardinality(array[1,2,3]), cardinality('{}'::int[]), array_lower(array[1,2], 1), array_upper(array[1,2], 1)
select array[1,2] || 3, 0 || array[1,2], array[1] || array[2,3], array['a'] || '{b}', array_append(array[1], 2), array_prepend(0, array[1]), array_cat(array[1], array[2])
select 2 = any(array[1,2]), 2 = any(array[1,null]), 3 = any(array[1,null]), 3 <> all(array[1,2]), 3 <> all(array[1,null]), null = any(array[1]), 1 = any('{}'::int[]), 5 > all(array[1,2]), 2 = any('{1,2}')
select array[1,2] = array[1,2], array[1,2] < array[1,3], array[1,2] < array[1,2,0], array_position(array['a','b'], 'b')
select array_to_string(array[1,null,3], ','), array_to_string(array[1,null,3], ',', '*'), string_to_array('a,b,,c', ','), string_to_array('a b', null), string_to_array('a,x,b', ',', 'x'), string_to_array('', ',')
select unnest(array[1,2,3])
select x from unnest(array['a','b']) as u(x)
select pg_typeof(array[1.5, 2]), pg_typeof(array['a']), pg_typeof(date '2024-01-01' - 1), pg_typeof(date '2024-01-01' + interval '1 h'), pg_typeof(date '2024-01-01' - date '2024-01-01'), pg_typeof(timestamp '2024-01-01' - timestamp '2024-01-01')
select date_trunc('month', timestamp '2024-03-05 14:07:09.5'), date_trunc('week', timestamp '2024-03-05 14:07:09'), date_trunc('quarter', timestamptz '2024-05-05 14:07:09+00'), date_trunc('hour', interval '1 day 02:03:04'), date_trunc('year', interval '14 months 3 days'), date_trunc('day', date '2024-03-05')
select date_trunc('decade', timestamp '2024-03-05'), date_trunc('century', timestamp '2024-03-05'), date_trunc('millennium', timestamp '2024-03-05'), date_trunc('milliseconds', timestamp '2024-03-05 01:02:03.456789')
select date_trunc('foo', timestamp '2024-03-05')
select extract(second from timestamp '2024-03-05 14:07:09.5'), extract(epoch from timestamp '2024-03-05 14:07:09.5'), extract(milliseconds from timestamp '2024-03-05 14:07:09.5'), extract(microseconds from timestamp '2024-03-05 14:07:09.5'), extract(year from timestamp '2024-03-05'), extract(dow from timestamp '2024-03-05'), extract(julian from timestamp '2024-03-05 12:00')
select extract(epoch from date '2024-03-05'), extract(year from date '2024-03-05'), extract(doy from date '2024-03-05'), extract(week from date '2024-01-01'), extract(isoyear from date '2021-01-01'), extract(century from date '2000-01-01'), extract(decade from date '2024-01-01'), extract(millennium from date '2001-01-01'), extract(quarter from date '2024-05-01')
select extract(epoch from interval '1 day 01:00:00.5'), extract(hour from interval '26 hours'), extract(month from interval '14 months'), extract(year from interval '14 months'), extract(day from interval '40 days'), extract(second from interval '1 min 2.5 sec'), extract(epoch from interval '1 month')
select date_part('epoch', timestamp '2024-03-05 14:07:09.5'), date_part('second', timestamp '2024-03-05 14:07:09.5'), date_part('year', date '2024-03-05'), extract(epoch from timestamptz '2024-03-05 14:07:09+00'), extract(timezone from timestamptz '2024-03-05 14:07:09+00'), pg_typeof(date_part('year', date '2024-01-01')), pg_typeof(extract(year from date '2024-01-01'))
select extract(hour from date '2024-01-01')
select extract(foo from timestamp '2024-03-05')
select age(timestamp '2024-03-05', timestamp '2023-01-31'), age(timestamp '2023-01-31', timestamp '2024-03-05'), age(timestamp '2024-03-01', timestamp '2024-01-31 12:00'), age(date '2024-03-05', date '2020-02-29'), make_date(2024, 2, 29), make_date(-44, 3, 15)
select make_date(2023, 2, 29)
select to_char(timestamp '2024-03-05 14:07:09.123456', 'YYYY-MM-DD HH24:MI:SS.MS.US'), to_char(timestamp '2024-03-05 14:07:09', 'Mon Month Dy Day DD FMMonth FMDay'), to_char(timestamp '2024-03-05 04:07:09', 'HH HH12 AM am P.M. Q WW IW D DDD J YY Y YYY')
select to_char(timestamp '2024-03-05 00:07:09', 'HH12 "quoted" MONTH MON DAY DY mon day dy FMDD FMHH24'), to_char(timestamptz '2024-03-05 00:07:09+00', 'YYYY TZ OF'), to_char(date '2024-03-05', 'DD/MM/YYYY'), to_char(interval '1 day 02:03:04', 'HH24:MI:SS DD')
select to_char(timestamp '2024-03-01', 'DDth DDTH FMDDth'), to_char(timestamp '2024-03-02', 'FMDDth'), to_char(timestamp '2024-03-03', 'FMDDth'), to_char(timestamp '2024-03-11', 'FMDDth'), to_char(timestamp '2024-03-22', 'FMDDth')
select '[' || to_char(5, '999') || ']', '[' || to_char(-5, '999') || ']', '[' || to_char(1234.567, '9999.99') || ']', '[' || to_char(1234.567, '9,999.99') || ']', '[' || to_char(-1234.567, 'FM9,999.99') || ']', '[' || to_char(12345, '999') || ']'
select '[' || to_char(0.5, '0.99') || ']', '[' || to_char(0.5, '9.99') || ']', '[' || to_char(5, '000') || ']', '[' || to_char(-5, 'S999') || ']', '[' || to_char(-5, '999PR') || ']', '[' || to_char(-5, '999MI') || ']', '[' || to_char(1234.5::float8, '9G999D99') || ']', '[' || to_char(1234.5, 'FM999999.99') || ']'
select to_date('05 Mar 2024', 'DD Mon YYYY'), to_date('2024-03-05', 'YYYY-MM-DD'), to_timestamp('2024-03-05 14:07:09', 'YYYY-MM-DD HH24:MI:SS'), to_timestamp(1700000000), to_timestamp(1700000000.5), to_number('12,345.67', '99G999D99'), to_number('-12.5', '999.9')
select to_date('2024-13-05', 'YYYY-MM-DD')
select substring('hello world' from 2 for 3), substring('hello world' from 7), substring('foobar' from 'o.b'), substring('foobar' from 'o(.)b'), position('lo' in 'hello'), position('z' in 'hello')
select split_part('a,b,c', ',', 2), split_part('a,b,c', ',', 5), split_part('a,b,c', ',', -1), initcap('hello wORLD foo-bar'), lpad('7', 3, '0'), lpad('hello', 3), rpad('ab', 5, 'xy'), lpad('ab', 5), concat_ws(', ', 'a', null, 'b', 1)
select split_part('a,b', ',', 0)
select 'abc' ~ 'b', 'abc' ~ '^b', 'ABC' ~* 'b', 'abc' !~ 'b', 'ABC' !~* 'b', regexp_replace('foobarbaz', 'b(..)', 'X\1Y', 'g'), regexp_replace('Hello', 'L', '_', 'i'), regexp_replace('aaa', 'a', 'b')
select regexp_match('foobarbequebaz', '(bar)(beque)'), regexp_match('abc', 'x'), regexp_match('abc', 'b'), regexp_match('ABC', 'b', 'i')
select 'abc' ~ '('
select 'abc' like 'a%', 'abc' like 'A%', 'abc' ilike 'A%', 'abc' not like '%c', '50%' like '50#%' escape '#', '50x' like '50#%' escape '#', 'a_c' like 'a\_c', 'abc' similar to 'abc', 'abc' similar to 'a%', 'abc' similar to '%(b|d)%', 'abc' not similar to '(b|c)%', 'a.c' similar to 'a.c'
select coalesce(null::date, date '2024-01-01'), nullif(interval '1 day', interval '24 hours'), greatest(date '2024-01-01', date '2023-01-01'), least(interval '1 day', interval '1 hour'), greatest(array[1,2], array[1,3])
select round(2.567, 2), round(-2.5), trunc(2.567, 1), trunc(-2.567, 2), ceil(2.1), floor(-2.1), ceil(2.1::float8), floor(-2.1::float8), round(2.5::float8), round(3.5::float8), trunc(-2.7::float8)
select reverse('abc'), starts_with('abc', 'ab'), translate('12345', '143', 'ax'), chr(65), ascii('A'), justify_hours(interval '27 hours'), justify_days(interval '35 days'), make_interval(1, 2, 0, 3, 4, 5, 6.5)
select region, string_agg(id::text, ',' order by id), array_agg(qty order by qty desc), count(*) filter (where qty > 2), sum(amount), avg(amount), min(day), max(day) from sales group by region order by region
select string_agg(region, '|'), array_agg(id), bool_and(qty > 0), bool_or(qty > 5), every(qty > 1), count(tags), min(spent), max(spent), sum(spent), avg(spent) from sales
select stddev(qty), stddev_samp(qty), stddev_pop(qty), variance(qty), var_samp(qty), var_pop(qty), stddev(ratio), variance(ratio), var_pop(ratio), stddev(amount), variance(amount) from sales
select variance(x), stddev(x), stddev_pop(x) from generate_series(1, 1) as x
select variance(x::numeric), stddev(x::float8) from generate_series(5, 5) as x
select string_agg(x::text, '-' order by x desc) filter (where x % 2 = 0), array_agg(x) filter (where x > 8), sum(x) filter (where x < 0) from generate_series(1, 10) as x
select array_agg(tags[1] order by id) from sales
select id from sales where 'b' = any(tags) order by id
select id, extract(month from day), to_char(day, 'Mon YYYY'), date_trunc('month', at) from sales order by id
select date_trunc('month', day)::date as m, sum(amount) from sales group by 1 order by 1
select distinct spent from sales order by spent
select id from sales where day between date '2024-01-01' and date '2024-02-10' order by id
select id from sales where at >= date '2024-02-10' order by id
select generate_series(date '2024-01-01', date '2024-03-01', interval '1 month')
select d::date from generate_series(timestamp '2024-01-31', timestamp '2024-04-30', interval '1 month') as g(d)
select count(*), min(g), max(g) from generate_series(timestamp '2024-01-01', timestamp '2024-01-02', interval '1 hour') as g
select to_char(date_trunc('month', day), 'YYYY-MM') as month, count(*), sum(amount) from sales group by 1 order by 1
select extract(year from age(date '2024-03-05', date '1990-06-15')), age(timestamp '2024-03-05 10:00', timestamp '2024-03-05 12:30')
select id, coalesce(array_length(tags, 1), 0), date '2024-01-01' + (id || ' days')::interval, interval '1 day' * id from sales order by id
select string_agg(distinct region, ',' order by region), sum(qty) filter (where day >= date '2024-02-01'), count(distinct region) from sales
select region, round(avg(qty), 2), round(stddev_pop(qty), 3), max(at) - min(at) from sales group by region order by region
select id, (at - day)::text, at::date = day, day + 30 > date '2024-02-01' from sales where at is not null order by id
select '[' || to_char(0, 'FM9,999.99') || ']', '[' || to_char(0.5, '.99') || ']', '[' || to_char(12, '999.') || ']', '[' || to_char(-0.001::float8, '990.00') || ']', '[' || to_char(123456789.123456789::float8, 'FM999999999.999999999') || ']', '[' || to_char(999.995, 'FM9.9') || ']', '[' || to_char(-0.5::float8, 'PL999') || ']', '[' || to_char(1234567, 'FM9G999G999') || ']'
select array[1,2,3] @> array[2], array[1,2] <@ array[1,2,3], array[1,2] && array[3], '{a,b}'::text[] @> '{a}', array[1,null] @> array[null::int], array[1] && '{1,2}'
select timestamp '2024-01-05 10:00' at time zone 'UTC', timestamptz '2024-01-05 10:00+00' at time zone 'utc', make_timestamp(2024, 2, 29, 12, 30, 15.5)
select '01/05/2024'::date, '2024/01/05'::date, '1/5/24'::date, '2024.01.05'::date, '01/05/99'::date, '01/05/2024 10:30'::timestamp
select '13/05/2024'::date
select id from sales where tags @> array['b'] order by id
select date(timestamp '2024-01-05 10:00'), int4('7'), date('2024-02-03'), text(1)
select string_agg(distinct region, ',' order by id) from sales
