-- ALTER DATABASE … CONNECTION LIMIT: pg_database.datconnlimit, the
-- option spellings, PostgreSQL's errors. The database is named through a
-- psql variable (each run has its own database name).
select current_database() as db \gset
select datconnlimit from pg_database where datname = current_database();
alter database :"db" connection limit 5;
select datconnlimit from pg_database where datname = current_database();
alter database :"db" with connection limit = 3;
select datconnlimit from pg_database where datname = current_database();
alter database :"db" connection_limit 4;
select datconnlimit from pg_database where datname = current_database();
alter database :"db" connection limit +2;
select datconnlimit from pg_database where datname = current_database();
alter database :"db" connection limit default;
select datconnlimit from pg_database where datname = current_database();
alter database :"db" with;
alter database :"db" allow_connections true;
alter database :"db" connection limit -2;
alter database :"db" connection limit 1.5;
alter database :"db" connection limit '7';
alter database :"db" connection limit 2147483648;
alter database :"db" allow_connections 'maybe';
alter database :"db" allow_connections false;
alter database ad_no_such_db connection limit 1;
select datconnlimit from pg_database where datname = current_database();
create role ad_user;
set role ad_user;
\set VERBOSITY sqlstate
alter database :"db" connection limit 1;
\set VERBOSITY default
reset role;
begin;
alter database :"db" connection limit 7;
select datconnlimit from pg_database where datname = current_database();
commit;
select datconnlimit from pg_database where datname = current_database();
alter database :"db" connection limit -1;
drop role ad_user;
-- @@ read-only
select datconnlimit from pg_database where datname = current_database();
