-- procedures_tx: procedures with OUT and INOUT parameters (CALL returns
-- their row; PL/pgSQL's CALL stores them back into variables), and
-- COMMIT / ROLLBACK [AND CHAIN] inside procedures and DO blocks, with
-- the places PostgreSQL refuses them; the read-only part calls and
-- commits on the standby.
CREATE TABLE ptx_t (id int PRIMARY KEY, note text);

-- OUT / INOUT parameters
CREATE PROCEDURE ptx_out(INOUT a int, OUT b int, OUT c text)
LANGUAGE plpgsql AS $$
BEGIN
  a := a * 2;
  b := a + 1;
  c := 'c' || a;
END;
$$;
CALL ptx_out(5, NULL, NULL);
CALL ptx_out(a => 7, b => NULL, c => NULL);
CREATE PROCEDURE ptx_sql(x int, OUT doubled int) LANGUAGE sql AS $$ SELECT x * 2 $$;
CALL ptx_sql(21, NULL);
SELECT p.proname, p.proargtypes::text, p.proallargtypes::text,
       p.proargmodes, p.prorettype::regtype, p.pronargs,
       pg_get_function_arguments(p.oid), pg_get_function_identity_arguments(p.oid),
       pg_get_function_result(p.oid)
FROM pg_proc p WHERE p.proname LIKE 'ptx_%' ORDER BY 1;
CREATE PROCEDURE ptx_bad1(x int DEFAULT 1, OUT y int) LANGUAGE sql AS $$ SELECT 1 $$;
CREATE PROCEDURE ptx_bad2(VARIADIC x int[], OUT y int) LANGUAGE sql AS $$ SELECT 1 $$;

-- CALL inside PL/pgSQL: results go back into the variables
DO $$
DECLARE q int := 3; r int; s text;
BEGIN
  CALL ptx_out(q, r, s);
  RAISE NOTICE 'q=% r=% s=%', q, r, s;
  CALL ptx_out(c => s, b => r, a => q);
  RAISE NOTICE 'q=% r=% s=%', q, r, s;
END;
$$;
DO $$
DECLARE r int;
BEGIN
  CALL ptx_out(1, r, NULL);
END;
$$;
CREATE PROCEDURE ptx_nest(INOUT z int) LANGUAGE plpgsql AS $$
DECLARE q int; s text;
BEGIN
  CALL ptx_out(z, q, s);
  z := z + q;
END;
$$;
CALL ptx_nest(5);

-- COMMIT and ROLLBACK in a procedure: each iteration its own transaction
CREATE PROCEDURE ptx_loop(n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    INSERT INTO ptx_t VALUES (i, 'row ' || i);
    IF i % 2 = 0 THEN
      COMMIT;
    ELSE
      ROLLBACK;
    END IF;
  END LOOP;
END;
$$;
CALL ptx_loop(6);
SELECT * FROM ptx_t ORDER BY id;
-- rows of a failed last transaction go, those committed stay
CREATE PROCEDURE ptx_fail() LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ptx_t VALUES (10, 'committed');
  COMMIT;
  INSERT INTO ptx_t VALUES (11, 'lost');
  INSERT INTO ptx_t VALUES (10, 'duplicate');
END;
$$;
CALL ptx_fail();
SELECT * FROM ptx_t WHERE id >= 10 ORDER BY id;
-- DO blocks may end transactions too
DO $$
BEGIN
  INSERT INTO ptx_t VALUES (20, 'do committed');
  COMMIT;
  INSERT INTO ptx_t VALUES (21, 'do rolled back');
  ROLLBACK;
END;
$$;
SELECT * FROM ptx_t WHERE id >= 20 ORDER BY id;
-- AND CHAIN keeps the transaction's characteristics
CREATE PROCEDURE ptx_chain() LANGUAGE plpgsql AS $$
BEGIN
  COMMIT AND CHAIN;
  RAISE NOTICE 'after COMMIT AND CHAIN: %', current_setting('transaction_isolation');
  ROLLBACK AND CHAIN;
  RAISE NOTICE 'after ROLLBACK AND CHAIN: %', current_setting('transaction_isolation');
  COMMIT AND NO CHAIN;
  RAISE NOTICE 'after COMMIT: %', current_setting('transaction_isolation');
END;
$$;
SET default_transaction_isolation = 'repeatable read';
CALL ptx_chain();
RESET default_transaction_isolation;
-- a deferred constraint is checked at the procedure's COMMIT
CREATE TABLE ptx_parent (id int PRIMARY KEY);
CREATE TABLE ptx_child (id int PRIMARY KEY,
  parent int REFERENCES ptx_parent DEFERRABLE INITIALLY DEFERRED);
CREATE PROCEDURE ptx_deferred() LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ptx_child VALUES (1, 1);
  INSERT INTO ptx_parent VALUES (1);
  COMMIT;
  INSERT INTO ptx_child VALUES (2, 2);
  COMMIT;
  RAISE NOTICE 'not reached';
END;
$$;
CALL ptx_deferred();
SELECT * FROM ptx_child ORDER BY id;

-- where transaction control is refused
CREATE PROCEDURE ptx_commit() LANGUAGE plpgsql AS $$ BEGIN COMMIT; END $$;
BEGIN;
CALL ptx_commit();
ROLLBACK;
CREATE FUNCTION ptx_fn() RETURNS int LANGUAGE plpgsql AS $$ BEGIN COMMIT; RETURN 1; END $$;
SELECT ptx_fn();
CREATE PROCEDURE ptx_sub() LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    COMMIT;
  EXCEPTION WHEN invalid_transaction_termination THEN
    RAISE NOTICE 'caught: % (%)', SQLERRM, SQLSTATE;
  END;
  BEGIN
    ROLLBACK;
  EXCEPTION WHEN others THEN
    RAISE NOTICE 'caught: %', SQLERRM;
  END;
END;
$$;
CALL ptx_sub();
CREATE PROCEDURE ptx_set() LANGUAGE plpgsql SET work_mem = '2MB' AS $$ BEGIN COMMIT; END $$;
CALL ptx_set();
CREATE PROCEDURE ptx_definer() LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN COMMIT; END $$;
CALL ptx_definer();
CREATE PROCEDURE ptx_outer() LANGUAGE plpgsql AS $$
BEGIN
  CALL ptx_commit();
  RAISE NOTICE 'nested CALL committed';
END;
$$;
CALL ptx_outer();
CREATE PROCEDURE ptx_dyn() LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'CALL ptx_commit()'; END $$;
CALL ptx_dyn();
DO $$
DECLARE r int;
BEGIN
  EXECUTE 'CALL ptx_sql(4, NULL)' INTO r;
  RAISE NOTICE 'EXECUTE CALL INTO: %', r;
END;
$$;
CREATE PROCEDURE ptx_drop(INOUT a int, OUT b int) LANGUAGE sql AS $$ SELECT a, a $$;
DROP PROCEDURE ptx_drop(int, text);
DROP PROCEDURE ptx_drop(int, int);
CREATE PROCEDURE ptx_drop(INOUT a int, OUT b int) LANGUAGE sql AS $$ SELECT a, a $$;
DROP PROCEDURE ptx_drop(int);
-- @@ read-only
CALL ptx_sql(5, NULL);
CALL ptx_nest(2);
DO $$
BEGIN
  PERFORM count(*) FROM ptx_t;
  COMMIT;
  RAISE NOTICE 'committed: % rows', (SELECT count(*) FROM ptx_t);
END;
$$;
SELECT count(*) FROM ptx_t;
