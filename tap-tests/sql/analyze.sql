-- analyze: ANALYZE gathers PostgreSQL's per-column statistics (a table
-- smaller than the sample is read whole, so the numbers are exact) and
-- pg_stats shows them, on the standby too.
CREATE TABLE an_t (id int PRIMARY KEY, grp int, name text, flag bool, note text);
INSERT INTO an_t SELECT g, g % 7, 'n' || (g % 50), g % 3 = 0, CASE WHEN g % 4 = 0 THEN NULL ELSE 'x' END FROM generate_series(1, 2000) g;
INSERT INTO an_t VALUES (2001, NULL, NULL, NULL, NULL), (2002, 3, 'rare', true, 'y');
CREATE TABLE an_empty (a int, b text);
CREATE TABLE an_rev (k int, v text);
INSERT INTO an_rev SELECT 1000 - g, 'v' || (g % 3) FROM generate_series(1, 300) g;
ANALYZE an_t;
ANALYZE an_empty;
ANALYZE an_rev (k);
VACUUM ANALYZE an_rev;
SET default_statistics_target = 10;
ANALYZE an_rev (v);
RESET default_statistics_target;
-- errors
ANALYZE an_nosuch;
ANALYZE an_t (nosuch);
SET default_statistics_target = 0;
-- @@ read-only
SELECT attname, null_frac, avg_width, n_distinct, most_common_vals, most_common_freqs FROM pg_stats WHERE tablename = 'an_t' ORDER BY attname;
SELECT attname, histogram_bounds, correlation FROM pg_stats WHERE tablename = 'an_t' ORDER BY attname;
SELECT tablename, attname, null_frac, n_distinct, most_common_vals, histogram_bounds, correlation FROM pg_stats WHERE tablename IN ('an_empty', 'an_rev') ORDER BY tablename, attname;
