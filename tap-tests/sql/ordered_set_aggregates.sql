-- ordered_set_aggregates: percentile_cont, percentile_disc and mode with
-- WITHIN GROUP (ORDER BY …) — per group, over integers, numerics, floats,
-- intervals, dates and text, with NULL inputs, ties, DESC keys, FILTER,
-- arrays of fractions and empty inputs, and PostgreSQL's errors.
CREATE TABLE osa (id int, grp text, n int, x numeric, f float8, iv interval, d date, t text);
INSERT INTO osa SELECT g, 'g' || (g % 3), g % 7, g * 1.25, g / 4.0, g * interval '90 minutes',
  date '2024-02-27' + g, chr(97 + g % 5) FROM generate_series(1, 40) g;
INSERT INTO osa VALUES (41, 'g0', NULL, NULL, NULL, NULL, NULL, NULL), (42, 'empty', NULL, NULL, NULL, NULL, NULL, NULL);
-- @@ read-only
SELECT grp, percentile_cont(0.5) WITHIN GROUP (ORDER BY n) AS med, percentile_disc(0.5) WITHIN GROUP (ORDER BY n) AS disc,
       mode() WITHIN GROUP (ORDER BY t) AS common FROM osa GROUP BY grp ORDER BY grp;
SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY x), percentile_cont(0.9) WITHIN GROUP (ORDER BY f),
       percentile_cont(0.3) WITHIN GROUP (ORDER BY iv), percentile_disc(0.3) WITHIN GROUP (ORDER BY d) FROM osa;
SELECT percentile_cont(ARRAY[0, 0.25, 0.5, 1]) WITHIN GROUP (ORDER BY n),
       percentile_disc(ARRAY[0.1, NULL, 0.99]) WITHIN GROUP (ORDER BY t) FROM osa;
SELECT percentile_disc(0) WITHIN GROUP (ORDER BY n DESC), percentile_disc(1) WITHIN GROUP (ORDER BY n DESC),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY n DESC) FROM osa;
SELECT mode() WITHIN GROUP (ORDER BY n), mode() WITHIN GROUP (ORDER BY n DESC), mode() WITHIN GROUP (ORDER BY t DESC) FROM osa;
SELECT grp, percentile_cont(0.5) WITHIN GROUP (ORDER BY n) FILTER (WHERE id % 2 = 0) FROM osa GROUP BY grp ORDER BY grp;
SELECT percentile_cont(NULL) WITHIN GROUP (ORDER BY n), percentile_cont(0.5) WITHIN GROUP (ORDER BY n) FROM osa WHERE false;
SELECT grp, count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY n) - avg(n) AS skew FROM osa GROUP BY grp
HAVING percentile_disc(0.5) WITHIN GROUP (ORDER BY n) > 2 ORDER BY 3 DESC NULLS LAST, grp;
SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY n) FROM osa;
SELECT percentile_cont(0.5) FROM osa;
SELECT sum(n) WITHIN GROUP (ORDER BY n) FROM osa;
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY t) FROM osa;
-- bit_and / bit_or / bit_xor
SELECT grp, bit_and(n), bit_or(n), bit_xor(n), bit_or(n::int2), bit_xor(id::int8 * 1099511627776) FROM osa GROUP BY grp ORDER BY grp;
-- corr, covar_pop / covar_samp and the regr_* family over (y, x) pairs
SELECT grp, corr(x, n), covar_pop(x, n), covar_samp(f, id), regr_count(x, n), regr_slope(x, id), regr_intercept(x, id),
       regr_r2(f, n), regr_avgx(x, n), regr_avgy(x, n), regr_sxx(x, n), regr_syy(x, n), regr_sxy(x, n)
FROM osa GROUP BY grp ORDER BY grp;
SELECT corr(f, f), regr_r2(n, id * 0), regr_slope(id, n * 0), covar_samp(id, id) FROM osa WHERE id < 3;
SELECT corr(n, id) OVER (ORDER BY id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) FROM osa WHERE id <= 6 ORDER BY id;
SELECT corr(t, n) FROM osa;
