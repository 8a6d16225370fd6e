-- The schema tap test 051_orm_reflection reflects with SQLAlchemy and
-- psycopg on PostgreSQL 15, a hotpair primary and its standby.
CREATE TABLE orm_accounts (
    id serial PRIMARY KEY,
    owner text NOT NULL,
    email varchar(120) UNIQUE,
    balance numeric(12,2) DEFAULT 0,
    created timestamptz DEFAULT now(),
    CHECK (balance >= 0)
);
COMMENT ON TABLE orm_accounts IS 'the accounts';
COMMENT ON COLUMN orm_accounts.owner IS 'who owns it';
CREATE TABLE orm_orders (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id int NOT NULL REFERENCES orm_accounts(id) ON DELETE CASCADE,
    amount numeric CHECK (amount > 0 AND amount < 1000000.5),
    note text,
    tags text[],
    placed date,
    meta jsonb,
    u uuid,
    flag boolean DEFAULT false,
    code char(3) DEFAULT 'abc',
    ratio double precision CHECK (ratio < 2)
);
CREATE INDEX orm_orders_account ON orm_orders (account_id, placed DESC);
CREATE UNIQUE INDEX orm_orders_note ON orm_orders (lower(note)) WHERE note IS NOT NULL;
CREATE TABLE orm_pair (a int, b int, c text, PRIMARY KEY (a, b), CONSTRAINT orm_pair_c_key UNIQUE (c, a));
CREATE TABLE orm_child (
    id int PRIMARY KEY,
    pa int,
    pb int,
    FOREIGN KEY (pa, pb) REFERENCES orm_pair (a, b) ON UPDATE SET NULL DEFERRABLE INITIALLY DEFERRED
);
CREATE VIEW orm_big AS SELECT DISTINCT id, owner FROM orm_accounts WHERE balance > 100 AND owner <> 'x';
CREATE SEQUENCE orm_seq START 5;
CREATE TYPE orm_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE orm_moods (id int, m orm_mood NOT NULL DEFAULT 'ok');
CREATE SCHEMA orm_s;
CREATE TABLE orm_s.other (id int PRIMARY KEY, name varchar(10) CHECK (name <> ''), acct int REFERENCES public.orm_accounts (id));
