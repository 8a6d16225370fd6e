-- CREATE SEQUENCE options in any order (pg_dump writes START before
-- INCREMENT), AS, OWNED BY, RESTART, and the errors of each.
create sequence cso_1 increment by 2 start with 10 minvalue 5 no cycle cache 1;
create sequence cso_2 start 3 increment 4;
create sequence cso_3 as integer start with 1 increment by 1 no minvalue no maxvalue cache 1;
create sequence if not exists cso_3 start 5;
create sequence cso_4 start 1 start 2;
create sequence cso_5 restart 3;
create sequence cso_6 as text;
create sequence cso_7 minvalue 10 maxvalue 5;
create table cso_t (id int);
create sequence cso_8 owned by cso_t.id;
create sequence cso_9 increment 0;
select nextval('cso_1'), nextval('cso_2'), nextval('cso_2'), nextval('cso_3');
select sequencename, data_type, start_value, min_value, max_value, increment_by, cycle, cache_size from pg_sequences where sequencename like 'cso\_%' order by 1;
drop table cso_t;
select sequencename from pg_sequences where sequencename like 'cso\_%' order by 1;
-- @@ read-only
select sequencename, start_value, increment_by from pg_sequences where sequencename like 'cso\_%' order by 1;
