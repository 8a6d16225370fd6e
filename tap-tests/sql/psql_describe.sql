-- psql_describe: psql's meta-commands (\d and friends) send PostgreSQL's
-- own catalog queries (joins of pg_class, pg_attribute, pg_index, … with
-- catalog functions); their output must be PostgreSQL's, on the standby
-- too. Patterns keep the listings to this script's objects.
CREATE TABLE pd_accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12,2) DEFAULT 0, created timestamptz, flag boolean DEFAULT true, code varchar(8) DEFAULT 'x', n int DEFAULT -1);
CREATE TABLE pd_orders (id int8 PRIMARY KEY, account_id int, amount int, note varchar(20), "Mixed Case" text, tags text[]);
CREATE INDEX pd_orders_acc ON pd_orders (account_id);
CREATE UNIQUE INDEX pd_orders_note ON pd_orders (note, amount);
CREATE TABLE pd_plain (a int, b text);
CREATE TABLE pd_checked (id serial PRIMARY KEY, qty int CHECK (qty > 0), sku text, lot int, CONSTRAINT pd_checked_sku_lot UNIQUE (sku, lot));
CREATE SEQUENCE pd_seq INCREMENT 2 START 5;
ALTER TABLE pd_plain ADD COLUMN c int DEFAULT 7;
ALTER TABLE pd_plain DROP COLUMN b;
-- @@ read-only
\dt pd_*
\di pd_*
\d pd_*
\d pd_accounts
\d+ pd_accounts
\d pd_orders_note
\d pd_accounts_pkey
\d pd_nosuch
\dn
\dp pd_*
\df
\du
\dT pd_*
\d pd_checked
\d pd_seq
\d pd_checked_id_seq
\dv pd_*
\ds pd_*
\x
\d pd_plain
\x
SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'pd_checked'::regclass ORDER BY conname;
SELECT sequencename, data_type, start_value, increment_by, last_value FROM pg_sequences WHERE sequencename LIKE 'pd\_%' ORDER BY 1;
SELECT attname, attnum, attisdropped FROM pg_attribute WHERE attrelid = 'pd_plain'::regclass AND attnum > 0 ORDER BY attnum;
SELECT c.relname, c.relkind, c.relnatts, c.relhasindex, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname LIKE 'pd\_%' ORDER BY 1;
SELECT a.attrelid::regclass, a.attname, a.attnum, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef FROM pg_attribute a WHERE a.attrelid = 'pd_accounts'::regclass AND a.attnum > 0 ORDER BY a.attnum;
SELECT 'pd_orders'::regclass, 'pd_orders'::regclass::oid = (SELECT oid FROM pg_class WHERE relname = 'pd_orders'), 'int4'::regtype, 'pg_catalog'::regnamespace, to_regclass('pd_nosuch');
SELECT indexrelid::regclass, indrelid::regclass, indisunique, indisprimary, indkey, pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid::regclass::text LIKE 'pd\_%' ORDER BY 1::text;
SELECT conname, contype, conrelid::regclass, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'pd_accounts'::regclass;
SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes WHERE tablename LIKE 'pd\_%' ORDER BY indexname;
SELECT tablename, hasindexes FROM pg_tables WHERE tablename LIKE 'pd\_%' ORDER BY 1;
SELECT adnum, pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'pd_accounts'::regclass ORDER BY adnum;
SELECT typname, typlen, typbyval, typcategory, typarray::regtype FROM pg_type WHERE typname IN ('int4', 'text', 'numeric', 'bool', 'timestamptz') ORDER BY typname;
SELECT pg_size_pretty(10752::bigint), pg_size_pretty(20971520::bigint), pg_table_is_visible('pd_orders'::regclass), pg_get_userbyid(10), format_type(1043, 24), format_type(1700, -1), current_schemas(true), current_schemas(false);
