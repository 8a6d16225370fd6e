-- SQL-level PREPARE / EXECUTE / DEALLOCATE: parameters typed or inferred,
-- arguments evaluated and cast, command tags of the prepared statement,
-- errors, DEALLOCATE ALL, and PREPARE kept across ROLLBACK (not transactional).
CREATE TABLE pp_t (id int PRIMARY KEY, v text, n numeric);
INSERT INTO pp_t VALUES (1, 'a', 1.5), (2, 'b', 2.5);
PREPARE q1 AS SELECT * FROM pp_t ORDER BY id;
EXECUTE q1;
PREPARE q2(int) AS SELECT v FROM pp_t WHERE id = $1;
EXECUTE q2(2);
EXECUTE q2('1');
EXECUTE q2(1 + 1);
PREPARE ins(int, text, numeric) AS INSERT INTO pp_t VALUES ($1, $2, $3) RETURNING *;
EXECUTE ins(3, 'c', 3.25);
EXECUTE ins(4, 'd', '4');
PREPARE up AS UPDATE pp_t SET n = n * 2 WHERE id > 2;
EXECUTE up;
PREPARE q3 AS SELECT $1::int + 1 AS x;
EXECUTE q3(41);
PREPARE q1 AS SELECT 1;
EXECUTE nope;
EXECUTE q2;
EXECUTE q2(1, 2);
DEALLOCATE q3;
DEALLOCATE q3;
DEALLOCATE PREPARE q2;
BEGIN;
PREPARE inb AS SELECT count(*) FROM pp_t;
ROLLBACK;
EXECUTE inb;
DEALLOCATE ALL;
EXECUTE q1;

-- PREPARE and EXECUTE in one Query message: EXECUTE is described after
-- the PREPARE before it has run.
PREPARE ps_one AS SELECT 1 AS a, 'x'::text AS b \; EXECUTE ps_one;
DEALLOCATE ps_one;
-- @@ read-only
PREPARE ro(int) AS SELECT v, n FROM pp_t WHERE id <= $1 ORDER BY id;
EXECUTE ro(3);
DEALLOCATE ro;
