-- expr_indexes: indexes on expressions and partial indexes — creation,
-- uniqueness among the rows a partial index covers, every write path
-- (INSERT, UPDATE, DELETE, COPY, ON CONFLICT), plans that use them, how
-- psql and the catalogs show them, and ALTER TABLE's effect on them; the
-- standby then reads through the same indexes.
CREATE TABLE xi_users (id int PRIMARY KEY, email text, deleted timestamptz, n int);
CREATE UNIQUE INDEX xi_users_email ON xi_users (lower(email)) WHERE deleted IS NULL;
CREATE INDEX CONCURRENTLY xi_users_mixed ON xi_users (n, (id % 10));
CREATE INDEX IF NOT EXISTS xi_users_mixed ON xi_users (n);
BEGIN;
CREATE INDEX CONCURRENTLY xi_users_in_block ON xi_users (n);
ROLLBACK;
CREATE INDEX ON xi_users ((n * 2) DESC NULLS LAST, upper(email)) WHERE n > 0 AND email IS NOT NULL;
-- expressions must be immutable
CREATE INDEX xi_bad ON xi_users (now());
CREATE INDEX xi_bad ON xi_users ((random()));
CREATE INDEX xi_bad ON xi_users (n) WHERE deleted < now();
CREATE INDEX xi_bad ON xi_users (date_trunc('day', deleted));
CREATE INDEX xi_bad ON xi_users ((deleted::date));
-- uniqueness, case-insensitively, among rows not deleted
INSERT INTO xi_users VALUES (1, 'Bob@example.com', NULL, 1), (2, 'ann@example.com', NULL, 2);
INSERT INTO xi_users VALUES (3, 'BOB@EXAMPLE.COM', NULL, 3);
UPDATE xi_users SET deleted = '2024-01-01' WHERE id = 1;
INSERT INTO xi_users VALUES (3, 'BOB@EXAMPLE.COM', NULL, 3);
UPDATE xi_users SET deleted = NULL WHERE id = 1;
UPDATE xi_users SET email = 'Ann@Example.com' WHERE id = 3;
UPDATE xi_users SET email = 'carl@example.com' WHERE id = 3;
DELETE FROM xi_users WHERE id = 2;
INSERT INTO xi_users VALUES (4, 'ANN@example.com', NULL, 4);
INSERT INTO xi_users VALUES (5, 'ann@EXAMPLE.com', NULL, 5) ON CONFLICT DO NOTHING;
INSERT INTO xi_users VALUES (5, 'dora@example.com', NULL, 5) ON CONFLICT DO NOTHING;
-- inference of an expression index, and of a partial one by its WHERE
INSERT INTO xi_users VALUES (10, 'Dora@Example.com', NULL, 10)
  ON CONFLICT (lower(email)) WHERE deleted IS NULL DO UPDATE SET n = xi_users.n + 100 RETURNING id, n;
INSERT INTO xi_users VALUES (10, 'Dora@Example.com', NULL, 10) ON CONFLICT (lower(email)) DO NOTHING;
INSERT INTO xi_users VALUES (10, 'Dora@Example.com', NULL, 10) ON CONFLICT (upper(email)) WHERE deleted IS NULL DO NOTHING;
COPY xi_users FROM stdin;
6	eve@example.com	\N	6
7	frank@example.com	2024-01-01 00:00:00+00	17
8	FRANK@example.com	\N	18
\.
SELECT id, email, deleted IS NULL AS live FROM xi_users ORDER BY id;
-- a unique index over existing duplicates fails
CREATE UNIQUE INDEX xi_users_all ON xi_users (lower(email));
-- an expression error while building or writing
CREATE INDEX xi_div ON xi_users ((100 / (n - 4)));
CREATE INDEX xi_div ON xi_users ((100 / (n - 400)));
INSERT INTO xi_users VALUES (400, 'z@example.com', NULL, 400);
DROP INDEX xi_div;
-- plans
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM xi_users WHERE lower(email) = 'ann@example.com' AND deleted IS NULL;
SELECT id, email FROM xi_users WHERE lower(email) = 'ann@example.com' AND deleted IS NULL;
SELECT id, email FROM xi_users WHERE lower(email) = 'frank@example.com' AND deleted IS NULL;
SELECT id FROM xi_users WHERE n = 17 AND id % 10 = 7;
SELECT id FROM xi_users WHERE n * 2 = 12 AND n > 0 AND email IS NOT NULL;
RESET enable_seqscan;
-- how they are shown
SELECT pg_get_indexdef(indexrelid), indkey, indoption, pg_get_expr(indexprs, indrelid) AS exprs,
       pg_get_expr(indpred, indrelid) AS pred, pg_get_expr(indpred, indrelid, true) AS pred_pretty
  FROM pg_index WHERE indrelid = 'xi_users'::regclass ORDER BY indexrelid::regclass::text;
SELECT pg_get_indexdef('xi_users_mixed'::regclass, 2, true), pg_get_indexdef('xi_users_mixed'::regclass, 2, false);
SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relname LIKE 'xi_users_%' AND c.relkind = 'i' ORDER BY 1, 2;
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'xi_users' ORDER BY 1;
\d xi_users
\d xi_users_email
\d xi_users_mixed
\di xi_*
-- RENAME COLUMN keeps the index; DROP COLUMN drops those that use it
ALTER TABLE xi_users RENAME COLUMN email TO mail;
SELECT pg_get_indexdef('xi_users_email'::regclass);
INSERT INTO xi_users VALUES (9, 'CARL@example.com', NULL, 9);
INSERT INTO xi_users VALUES (9, 'gus@example.com', NULL, 9);
CREATE TABLE xi_drop (a int, b int, c text);
CREATE INDEX xi_drop_b ON xi_drop ((b + 1));
CREATE INDEX xi_drop_p ON xi_drop (a) WHERE b > 0;
CREATE INDEX xi_drop_c ON xi_drop (lower(c));
CREATE INDEX xi_drop_two ON xi_drop ((a + 1), (a * 2));
\d xi_drop_two
ALTER TABLE xi_drop DROP COLUMN b;
\d xi_drop
-- @@ read-only
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM xi_users WHERE lower(mail) = 'ann@example.com' AND deleted IS NULL;
SELECT id, mail FROM xi_users WHERE lower(mail) = 'ann@example.com' AND deleted IS NULL;
SELECT id, mail FROM xi_users WHERE lower(mail) = 'gus@example.com' AND deleted IS NULL;
SELECT id FROM xi_users WHERE n = 17 AND id % 10 = 7;
SELECT pg_get_indexdef('xi_users_email'::regclass);
\d xi_users
