-- The tableoid system column of tables and catalogs (what psql's \dd
-- reads), qualified and not.
create table toid_a (x int);
create table toid_b (y int);
insert into toid_a values (1);
insert into toid_b values (2);
comment on table toid_a is 'table a';
alter table toid_a add constraint toid_chk check (x > 0);
comment on constraint toid_chk on toid_a is 'positive';
select tableoid::regclass, x from toid_a;
select a.tableoid::regclass, b.tableoid::regclass from toid_a a, toid_b b;
select c.tableoid = 'pg_class'::regclass from pg_class c where relname = 'toid_a';
\dd toid*
-- @@ read-only
select tableoid::regclass, x from toid_a;
\dd toid*
