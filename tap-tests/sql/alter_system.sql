-- ALTER SYSTEM: tags, PostgreSQL's errors (unknown setting, bad value,
-- inside a transaction block); the file is left empty at the end.
alter system set work_mem = '8MB';
alter system set statement_timeout to 5000;
alter system set nosuch = 1;
alter system set statement_timeout = 'abc';
begin;
alter system set work_mem = '4MB';
rollback;
alter system reset statement_timeout;
alter system set work_mem = default;
alter system set log_connections = on;
alter system reset all;
