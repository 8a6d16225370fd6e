-- Catalog scans keyed by a relation's OID (pg_class.oid,
-- pg_attribute.attrelid, pg_index.indrelid, pg_constraint.conrelid,
-- pg_attrdef.adrelid) give the rows a full scan gives: by a constant, by
-- an implied equality, per outer row of a join, with NULL or no match.
CREATE TABLE ck_a (id int PRIMARY KEY, v text DEFAULT 'x', n int CHECK (n > 0));
CREATE TABLE ck_b (id int PRIMARY KEY, a_id int REFERENCES ck_a (id), w numeric);
CREATE INDEX ck_b_w ON ck_b (w);
INSERT INTO ck_a VALUES (1, 'one', 1), (2, 'two', 2);
INSERT INTO ck_b VALUES (10, 1, 1.5), (20, 2, 2.5), (30, NULL, NULL);
SELECT relname, relkind, relnatts FROM pg_class WHERE oid = 'ck_a'::regclass;
SELECT attname, attnum FROM pg_attribute WHERE attrelid = 'ck_b'::regclass AND attnum > 0 ORDER BY attnum;
SELECT attname FROM pg_attribute WHERE attrelid = 0;
SELECT attname FROM pg_attribute WHERE attrelid = NULL;
SELECT c.relname, i.indisprimary FROM pg_class c, pg_index i
  WHERE c.oid = 'ck_b'::regclass AND c.oid = i.indrelid ORDER BY 1, 2;
SELECT c2.relname, pg_get_indexdef(i.indexrelid) FROM pg_class c, pg_class c2, pg_index i
  WHERE c.oid = 'ck_b'::regclass AND c.oid = i.indrelid AND i.indexrelid = c2.oid ORDER BY 1;
SELECT c.relname, tc.relname AS none FROM pg_class c LEFT JOIN pg_class tc ON c.reltablespace = tc.oid
  WHERE c.oid = 'ck_a'::regclass;
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'ck_b'::regclass ORDER BY 1;
SELECT t.relname, con.conname FROM pg_class t JOIN pg_constraint con ON con.conrelid = t.oid
  WHERE t.relname IN ('ck_a', 'ck_b') ORDER BY 1, 2;
SELECT adnum, pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'ck_a'::regclass;
SELECT a.attname, (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
    WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum) AS def
  FROM pg_attribute a WHERE a.attrelid = 'ck_a'::regclass AND a.attnum > 0 ORDER BY a.attnum;
SELECT c.relname, (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0)
  FROM pg_class c WHERE c.relname LIKE 'ck\_%' ORDER BY 1;
-- Implied equalities over user tables.
SELECT a.id, b.id FROM ck_a a, ck_b b WHERE a.id = 1 AND a.id = b.a_id;
SELECT a.id, b.id FROM ck_a a LEFT JOIN ck_b b ON b.a_id = a.id WHERE a.id = 2 AND b.a_id = a.id;
SELECT count(*) FROM ck_a a, ck_b b WHERE b.a_id = a.id AND b.a_id = 3;
-- By name: equality, and the anchored literal patterns psql sends.
SELECT relname, relkind FROM pg_class WHERE relname = 'ck_a';
SELECT c.oid::regclass, n.nspname FROM pg_class c LEFT JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relname OPERATOR(pg_catalog.~) '^(ck_b)$' COLLATE pg_catalog.default ORDER BY 2;
SELECT relname FROM pg_class WHERE relname ~ '^ck_a$';
SELECT relname FROM pg_class WHERE relname ~ '^(ck_.)$' ORDER BY 1;
SELECT relname FROM pg_class WHERE relname ~ '^(ck_b_w)$' AND relkind = 'i';
SELECT count(*) FROM pg_class WHERE relname ~ '^(nothing_here)$';
SELECT count(*) FROM pg_class WHERE relname ~* '^(CK_A)$';
-- @@ read-only
SELECT relname FROM pg_class WHERE relname ~ '^(ck_a)$';
SELECT c2.relname, pg_get_indexdef(i.indexrelid) FROM pg_class c, pg_class c2, pg_index i
  WHERE c.oid = 'ck_b'::regclass AND c.oid = i.indrelid AND i.indexrelid = c2.oid ORDER BY 1;
SELECT attname, attnum FROM pg_attribute WHERE attrelid = 'ck_b'::regclass AND attnum > 0 ORDER BY attnum;
SELECT a.id, b.id FROM ck_a a, ck_b b WHERE a.id = 1 AND a.id = b.a_id;
