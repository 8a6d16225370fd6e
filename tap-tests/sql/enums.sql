-- enums: CREATE TYPE … AS ENUM, ALTER TYPE (ADD VALUE [BEFORE|AFTER],
-- RENAME VALUE, RENAME TO), DROP TYPE [CASCADE]; enum columns, casts,
-- comparison and ORDER BY in the type's sort order, indexes, GROUP BY,
-- the enum functions, arrays of enums, pg_enum / pg_type /
-- information_schema, psql's \dT, \dT+ and \d.
CREATE TYPE en_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE en_empty AS ENUM ();
CREATE TYPE en_size AS ENUM ('small', 'medium', 'large');
CREATE TABLE en_t (id int PRIMARY KEY, m en_mood, s en_size NOT NULL DEFAULT 'medium');
INSERT INTO en_t VALUES (1, 'happy', 'small'), (2, 'sad', 'large'), (3, 'ok', 'medium'),
  (4, NULL, 'small'), (5, 'sad', 'small');
INSERT INTO en_t (id, m) VALUES (6, 'ok');
-- sort order is the declared order, not the alphabet
SELECT * FROM en_t ORDER BY m, id;
SELECT * FROM en_t ORDER BY m DESC NULLS LAST, id;
SELECT id FROM en_t WHERE m = 'sad' ORDER BY id;
SELECT id FROM en_t WHERE m > 'sad' ORDER BY id;
SELECT id FROM en_t WHERE m <= 'ok' ORDER BY id;
SELECT id FROM en_t WHERE m <> 'ok' ORDER BY id;
SELECT id FROM en_t WHERE m IN ('happy', 'sad') ORDER BY id;
SELECT id FROM en_t WHERE m BETWEEN 'ok' AND 'happy' ORDER BY id;
SELECT min(m), max(m), count(DISTINCT m) FROM en_t;
SELECT m, count(*) FROM en_t GROUP BY m ORDER BY m;
SELECT s, array_agg(id ORDER BY id) FROM en_t GROUP BY s ORDER BY s DESC;
SELECT DISTINCT m FROM en_t ORDER BY 1;
SELECT a.id, b.id FROM en_t a JOIN en_t b ON a.m = b.m AND a.id < b.id ORDER BY 1, 2;
SELECT 'sad'::en_mood < 'happy'::en_mood, 'ok'::en_mood = 'ok', 'happy' > 'ok'::en_mood;
SELECT greatest('sad'::en_mood, 'happy', 'ok'), least('happy'::en_mood, 'ok');
-- casts
SELECT 'ok'::en_mood, CAST('happy' AS en_mood), 'sad'::en_mood::text;
SELECT 'ok'::EN_MOOD, 'sad'::public.en_mood, '{ok}'::"en_mood"[];
SELECT m::text, m::text || '!', length(m::text) FROM en_t WHERE id < 4 ORDER BY id;
SELECT t::en_mood FROM (VALUES ('ok'), ('sad')) v(t) ORDER BY 1;
SELECT t::en_mood FROM (VALUES ('ok'::text), ('meh')) v(t);
SELECT m FROM en_t WHERE m::text LIKE 'h%';
SELECT pg_typeof(m), pg_typeof(m::text) FROM en_t WHERE id = 1;
UPDATE en_t SET m = 'happy' WHERE id = 5 RETURNING id, m;
-- indexes: PRIMARY KEY / UNIQUE on an enum column
CREATE TABLE en_k (m en_mood PRIMARY KEY, s en_size UNIQUE, n int);
INSERT INTO en_k VALUES ('ok', 'small', 1), ('sad', 'large', 2), ('happy', 'medium', 3);
INSERT INTO en_k VALUES ('ok', NULL, 4);
INSERT INTO en_k VALUES ('ok', 'medium', 5) ON CONFLICT (m) DO UPDATE SET n = excluded.n;
SELECT * FROM en_k ORDER BY m;
SELECT * FROM en_k WHERE m = 'happy';
SELECT * FROM en_k WHERE m > 'sad' ORDER BY m DESC;
-- functions
SELECT enum_first(NULL::en_mood), enum_last(NULL::en_mood), enum_range(NULL::en_mood);
SELECT enum_range('ok'::en_mood, 'happy'::en_mood), enum_range(NULL, 'ok'::en_mood),
  enum_range('ok'::en_mood, NULL), enum_range('happy'::en_mood, 'sad'::en_mood);
SELECT enum_range(NULL::en_empty), enum_first(NULL::en_empty);
SELECT unnest(enum_range(NULL::en_size)) AS s ORDER BY 1 DESC;
-- arrays of enums
CREATE TABLE en_arr (id int, ms en_mood[]);
INSERT INTO en_arr VALUES (1, '{sad,happy}'), (2, ARRAY['ok'::en_mood]), (3, '{}');
SELECT id, ms, ms[1], cardinality(ms) FROM en_arr ORDER BY id;
SELECT id FROM en_arr WHERE 'happy' = ANY (ms);
SELECT t::en_mood[] FROM (VALUES ('{ok,nope}'::text)) v(t);
-- ALTER TYPE … ADD VALUE
ALTER TYPE en_mood ADD VALUE 'meh' BEFORE 'ok';
ALTER TYPE en_mood ADD VALUE 'ecstatic';
ALTER TYPE en_mood ADD VALUE 'content' AFTER 'ok';
ALTER TYPE en_mood ADD VALUE 'miserable' BEFORE 'sad';
ALTER TYPE en_mood ADD VALUE IF NOT EXISTS 'ok';
ALTER TYPE en_mood ADD VALUE IF NOT EXISTS 'fine' AFTER 'happy';
ALTER TYPE en_mood ADD VALUE 'ok';
ALTER TYPE en_mood ADD VALUE 'zz' AFTER 'nope';
ALTER TYPE en_mood ADD VALUE '';
ALTER TYPE en_nope ADD VALUE 'x';
INSERT INTO en_t VALUES (7, 'meh', 'large'), (8, 'ecstatic', 'small'), (9, 'content', 'large'),
  (10, 'miserable', 'medium'), (11, 'fine', 'medium');
SELECT id, m FROM en_t ORDER BY m, id;
SELECT id, m FROM en_t WHERE m > 'ok' ORDER BY m DESC, id;
SELECT min(m), max(m) FROM en_t;
SELECT enum_range(NULL::en_mood);
SELECT enum_range('meh'::en_mood, 'content'::en_mood);
SELECT e.enumlabel, e.enumsortorder FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid
  WHERE t.typname = 'en_mood' ORDER BY e.enumsortorder;
-- ALTER TYPE … RENAME VALUE / RENAME TO
ALTER TYPE en_mood RENAME VALUE 'ok' TO 'okay';
ALTER TYPE en_mood RENAME VALUE 'nope' TO 'x';
ALTER TYPE en_mood RENAME VALUE 'sad' TO 'happy';
SELECT id, m FROM en_t WHERE id < 4 ORDER BY id;
SELECT t::en_mood FROM (VALUES ('ok'::text)) v(t);
ALTER TYPE en_size RENAME TO en_sz;
ALTER TYPE en_sz RENAME TO en_mood;
SELECT s FROM en_t WHERE id = 1;
SELECT to_regtype('en_size'), to_regtype('en_sz');
-- duplicate names
CREATE TYPE en_mood AS ENUM ('a');
CREATE TYPE en_t AS ENUM ('a');
CREATE TABLE en_mood (a int);
-- the catalogs
SELECT t.typname, t.typtype, t.typcategory, t.typlen, t.typbyval, t.typalign,
  e.typname AS elem, t.typnamespace::regnamespace
  FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem
  WHERE t.typname LIKE '%en\_%' AND 'e' IN (t.typtype, e.typtype) ORDER BY 1;
SELECT count(*) FROM pg_type t WHERE t.typname = 'en_mood' AND t.typarray =
  (SELECT oid FROM pg_type WHERE typname = '_en_mood');
SELECT format_type('en_mood'::regtype, NULL), 'en_sz'::regtype, '_en_mood'::regtype,
  'en_mood[]'::regtype, pg_typeof(ARRAY['okay'::en_mood]);
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
  WHERE attrelid = 'en_t'::regclass AND attnum > 0 ORDER BY attnum;
SELECT column_name, data_type, udt_schema, udt_name, column_default
  FROM information_schema.columns WHERE table_name IN ('en_t', 'en_arr')
  ORDER BY table_name, ordinal_position;
\dT
\dT+
\dT en_mood
\d en_t
\d en_arr
-- transactions
BEGIN;
CREATE TYPE en_tx AS ENUM ('a', 'b');
CREATE TABLE en_txt (v en_tx);
INSERT INTO en_txt VALUES ('b'), ('a');
SELECT v FROM en_txt ORDER BY v;
ROLLBACK;
SELECT to_regtype('en_tx');
SELECT count(*) FROM pg_type WHERE typname IN ('en_tx', '_en_tx');
BEGIN;
ALTER TYPE en_sz RENAME VALUE 'large' TO 'big';
ALTER TYPE en_sz RENAME TO en_sz2;
ROLLBACK;
SELECT enum_range(NULL::en_sz);
BEGIN;
DROP TYPE en_empty;
ROLLBACK;
SELECT enum_range(NULL::en_empty);
-- defaults and old rows follow renames; COPY
CREATE TYPE en_d AS ENUM ('x', 'y', 'z');
CREATE TABLE en_dt (id int);
INSERT INTO en_dt VALUES (1), (2);
ALTER TABLE en_dt ADD COLUMN e en_d NOT NULL DEFAULT 'y';
ALTER TYPE en_d RENAME VALUE 'y' TO 'why';
INSERT INTO en_dt VALUES (3, 'z');
INSERT INTO en_dt (id) VALUES (4);
ALTER TYPE en_d RENAME TO en_d2;
BEGIN;
ALTER TYPE en_d2 RENAME VALUE 'why' TO 'w';
\d en_dt
ROLLBACK;
ANALYZE en_dt;
SELECT * FROM en_dt ORDER BY e DESC, id;
COPY en_dt TO STDOUT;
\d en_dt
DROP TABLE en_dt;
DROP TYPE en_d2;
-- DROP TYPE
DROP TYPE en_mood;
DROP TYPE en_sz, en_nope;
DROP TYPE IF EXISTS en_nope, en_empty;
DROP TYPE en_mood CASCADE;
\d en_t
\d en_arr
-- the rows keep what the dropped column does not hold
SELECT * FROM en_arr ORDER BY id;
ANALYZE en_arr;
DROP TYPE en_sz RESTRICT;
CREATE TYPE en_keep AS ENUM ('lo', 'mid', 'hi');
CREATE TABLE en_ro (id int, k en_keep, ks en_keep[]);
INSERT INTO en_ro VALUES (1, 'hi', '{lo,hi}'), (2, 'lo', NULL), (3, 'mid', '{mid}'), (4, NULL, '{}');
ALTER TYPE en_keep ADD VALUE 'top';
ALTER TYPE en_keep ADD VALUE 'low' BEFORE 'mid';
INSERT INTO en_ro VALUES (5, 'top', '{top,low}'), (6, 'low', NULL);
-- @@ read-only
SELECT * FROM en_ro ORDER BY k, id;
SELECT * FROM en_ro WHERE k > 'low' ORDER BY k DESC, id;
SELECT min(k), max(k), enum_range(NULL::en_keep) FROM en_ro;
SELECT k, count(*) FROM en_ro GROUP BY k ORDER BY k;
SELECT 'mid'::en_keep, 'top'::en_keep > 'hi', k::text FROM en_ro WHERE id = 3;
SELECT t::en_keep FROM (VALUES ('nope'::text)) v(t);
SELECT e.enumlabel, e.enumsortorder FROM pg_enum e
  WHERE e.enumtypid = 'en_keep'::regtype ORDER BY e.enumsortorder;
\dT+ en_keep
