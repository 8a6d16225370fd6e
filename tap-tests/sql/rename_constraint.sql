-- ALTER TABLE … RENAME CONSTRAINT of CHECK and FOREIGN KEY constraints:
-- transactional, the comment moves along, errors as PostgreSQL's.
create table rc_p (id int primary key);
create table rc_c (id int primary key, pid int constraint rc_fk references rc_p on delete cascade, v int constraint rc_chk check (v > 0));
insert into rc_p values (1);
insert into rc_c values (1, 1, 1);
comment on constraint rc_chk on rc_c is 'must be positive';
alter table rc_c rename constraint rc_chk to rc_v_positive;
alter table rc_c rename constraint rc_fk to rc_parent;
alter table rc_c rename constraint nope to x;
alter table rc_c rename constraint rc_parent to rc_v_positive;
insert into rc_c values (2, 1, -1);
insert into rc_c values (3, 9, 1);
begin;
alter table rc_c rename constraint rc_v_positive to rolled;
rollback;
select conname, contype, obj_description(oid, 'pg_constraint') from pg_constraint where conrelid = 'rc_c'::regclass order by 1;
\d rc_c
delete from rc_p;
select count(*) from rc_c;
-- @@ read-only
select conname from pg_constraint where conrelid = 'rc_c'::regclass order by 1;
