-- information_schema: what ORMs and drivers reflect through — tables,
-- columns with their SQL-standard type facets, keys — as PostgreSQL 15
-- answers, on the standby too.
CREATE TABLE is_accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12,2) DEFAULT 0, created timestamptz, code varchar(8) DEFAULT 'x');
CREATE TABLE is_types (a int2, b int4, c int8, d numeric, e numeric(10,3), f float8, g text, h varchar(7), i char(3), j timestamp, k timestamptz, l date, m interval, n bool, o int4[], q oid, r name, PRIMARY KEY (b, a));
-- @@ read-only
SELECT table_schema, table_name, table_type, is_insertable_into, is_typed FROM information_schema.tables WHERE table_name LIKE 'is\_%' ORDER BY table_name;
SELECT table_name, column_name, ordinal_position, column_default, is_nullable, data_type, character_maximum_length, character_octet_length, numeric_precision, numeric_precision_radix, numeric_scale, datetime_precision FROM information_schema.columns WHERE table_name LIKE 'is\_%' ORDER BY table_name, ordinal_position;
SELECT column_name, udt_schema, udt_name, dtd_identifier, collation_name, is_identity, is_generated, is_updatable FROM information_schema.columns WHERE table_name = 'is_types' ORDER BY ordinal_position;
SELECT constraint_name, table_name, constraint_type, is_deferrable, initially_deferred, enforced FROM information_schema.table_constraints WHERE table_name LIKE 'is\_%' AND constraint_type <> 'CHECK' ORDER BY table_name, constraint_name;
SELECT count(*) FROM information_schema.table_constraints WHERE table_name LIKE 'is\_%' AND constraint_type = 'CHECK';
SELECT constraint_name, table_name, column_name, ordinal_position, position_in_unique_constraint FROM information_schema.key_column_usage WHERE table_name LIKE 'is\_%' ORDER BY table_name, ordinal_position;
SELECT table_name, column_name, constraint_name FROM information_schema.constraint_column_usage WHERE table_name LIKE 'is\_%' ORDER BY table_name, column_name;
SELECT schema_name FROM information_schema.schemata ORDER BY 1;
SELECT k.table_name, k.column_name FROM information_schema.table_constraints t JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name) WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_name LIKE 'is\_%' ORDER BY 1, k.ordinal_position;
SELECT count(*) > 0 FROM information_schema.columns WHERE table_schema = 'pg_catalog' AND table_name = 'pg_class';
