-- functions_catalog: pg_proc lists the built-in functions hotpair
-- implements with PostgreSQL 15's rows (OIDs, argument and result types,
-- volatility, descriptions), and what reads them: regproc /
-- regprocedure, pg_get_function_*, obj_description(oid, 'pg_proc'),
-- pg_aggregate, pg_language, information_schema.routines / parameters
-- and psql's \df family. The names asked about are ones whose every
-- PostgreSQL overload hotpair implements, so the listings are equal.
-- Catalog reads only: all of it runs on the standby too.
-- @@ read-only
SELECT oid, proname, pronamespace, proowner, prolang, procost, prorows, provariadic,
       prokind, prosecdef, proleakproof, proisstrict, proretset, provolatile, proparallel,
       pronargs, pronargdefaults, prorettype, proargtypes, proallargtypes, proargmodes,
       proargnames, proargdefaults IS NOT NULL AS has_defaults, prosrc, probin, proconfig, proacl
  FROM pg_proc
 WHERE proname IN ('abs', 'now', 'count', 'avg', 'row_number', 'lag', 'json_each',
                   'pg_promote', 'make_interval', 'concat', 'string_to_array', 'jsonb_set')
 ORDER BY oid;
SELECT p.oid, p.proname, t.typname AS rettype
  FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype
 WHERE p.proname IN ('to_char', 'round', 'pg_wal_lsn_diff') ORDER BY p.oid;
-- regproc and regprocedure
SELECT 'now'::regproc, 'now'::regproc::oid, 'pg_catalog.now'::regproc::oid;
SELECT 'abs(integer)'::regprocedure, 'abs(integer)'::regprocedure::oid,
       'pg_catalog.abs(double precision)'::regprocedure::oid, 'count()'::regprocedure::oid;
SELECT 1397::regproc, 1397::regprocedure, 1299::regproc, 1299::regprocedure, 0::regproc;
SELECT ('ab' || 's')::regproc;
SELECT ('no' || 'such')::regproc;
SELECT ('abs(' || 'text)')::regprocedure;
SELECT ('nosuch(' || 'int)')::regprocedure;
SELECT to_regproc('abs') IS NULL AS ambiguous, to_regproc('now'), to_regproc('nosuch'),
       to_regprocedure('abs(bigint)'), to_regprocedure('nosuch(int)'), to_regprocedure('abs(text)');
SELECT proname, oid::regprocedure FROM pg_proc WHERE proname = 'make_interval';
SELECT to_regprocedure('abs(nosuchtype)');
SELECT ('NOW')::text::regproc, ('"now"')::text::regproc, (' now ')::text::regproc;
SELECT ('public.now')::text::regproc;
SELECT ('pg_catalog.abs(int8)')::text::regprocedure, ('abs( bigint )')::text::regprocedure,
       ('abs(int)')::text::regprocedure, ('json_build_object("any")')::text::regprocedure;
SELECT ('ab' || 's')::text::regprocedure;
SELECT to_regproc('pg_catalog.nosuch'), to_regproc('nosuchschema.now'), to_regprocedure('now()');
SELECT 'now'::regproc = 1299::oid, 'now'::regproc::text, '-'::regprocedure, 0::regprocedure;
SELECT 'now'::regproc || '', 'abs(integer)'::regprocedure || '!', 'x: ' || 'pg_proc'::regclass;
SELECT oid::regprocedure FROM pg_proc WHERE proname = 'abs' ORDER BY 1;
-- The function-describing catalog functions
SELECT p.oid::regprocedure, pg_get_function_arguments(p.oid) AS args,
       pg_get_function_identity_arguments(p.oid) AS identity, pg_get_function_result(p.oid) AS result
  FROM pg_proc p
 WHERE p.proname IN ('pg_promote', 'make_interval', 'json_each', 'concat', 'jsonb_set', 'count', 'lag', 'json_array_elements')
 ORDER BY p.oid;
SELECT pg_get_function_arguments(0), pg_get_function_result(0), pg_function_is_visible(0);
SELECT n, pg_get_function_arg_default('pg_promote'::regproc, n) AS promote,
       pg_get_function_arg_default('jsonb_set'::regproc, n) AS jsonb_set,
       pg_get_function_arg_default('now'::regproc, n) AS now
  FROM generate_series(0, 5) n ORDER BY n;
SELECT pg_function_is_visible('now'::regproc), pg_get_function_sqlbody('now'::regproc);
SELECT pg_get_functiondef('abs(integer)'::regprocedure);
SELECT pg_get_functiondef('pg_promote'::regproc);
SELECT pg_get_functiondef('json_each'::regproc);
SELECT pg_get_functiondef('avg(bigint)'::regprocedure);
SELECT obj_description('now'::regproc, 'pg_proc'), obj_description('abs(integer)'::regprocedure, 'pg_proc'),
       obj_description('now'::regproc, 'pg_class'), obj_description('count()'::regprocedure);
SELECT d.objoid::regprocedure, d.classoid::regclass, d.objsubid, d.description
  FROM pg_description d JOIN pg_proc p ON p.oid = d.objoid AND d.classoid = 'pg_proc'::regclass
 WHERE p.proname IN ('abs', 'avg', 'json_each', 'row_number') ORDER BY d.objoid;
-- pg_aggregate and pg_language
SELECT aggfnoid, aggfnoid::oid, aggkind, aggnumdirectargs, aggtransfn, aggfinalfn, aggcombinefn,
       aggserialfn, aggdeserialfn, aggmtransfn, aggminvtransfn, aggmfinalfn, aggfinalextra,
       aggmfinalextra, aggfinalmodify, aggmfinalmodify, aggsortop, aggtranstype, aggtransspace,
       aggmtranstype, aggmtransspace, agginitval, aggminitval
  FROM pg_aggregate WHERE aggfnoid::oid IN (SELECT oid FROM pg_proc WHERE proname IN ('avg', 'count', 'bool_and'))
 ORDER BY aggfnoid::oid;
SELECT oid, lanname, lanowner, lanispl, lanpltrusted, lanacl FROM pg_language ORDER BY oid;
SELECT l.lanname, count(*) > 0 AS some FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.proname IN ('abs', 'now') GROUP BY 1;
-- information_schema
-- (every column but the *_catalog ones, which name the database)
SELECT specific_schema, specific_name, routine_schema, routine_name, routine_type, module_schema, module_name, udt_schema, udt_name, data_type, character_maximum_length, character_octet_length, character_set_schema, character_set_name, collation_schema, collation_name, numeric_precision, numeric_precision_radix, numeric_scale, datetime_precision, interval_type, interval_precision, type_udt_schema, type_udt_name, scope_schema, scope_name, maximum_cardinality, dtd_identifier, routine_body, routine_definition, external_name, external_language, parameter_style, is_deterministic, sql_data_access, is_null_call, sql_path, schema_level_routine, max_dynamic_result_sets, is_user_defined_cast, is_implicitly_invocable, security_type, to_sql_specific_schema, to_sql_specific_name, as_locator, created, last_altered, new_savepoint_level, is_udt_dependent, result_cast_from_data_type, result_cast_as_locator, result_cast_char_max_length, result_cast_char_octet_length, result_cast_char_set_schema, result_cast_char_set_name, result_cast_collation_schema, result_cast_collation_name, result_cast_numeric_precision, result_cast_numeric_precision_radix, result_cast_numeric_scale, result_cast_datetime_precision, result_cast_interval_type, result_cast_interval_precision, result_cast_type_udt_schema, result_cast_type_udt_name, result_cast_scope_schema, result_cast_scope_name, result_cast_maximum_cardinality, result_cast_dtd_identifier
  FROM information_schema.routines WHERE routine_name IN ('now', 'pg_promote') ORDER BY specific_name;
SELECT specific_name, routine_name, routine_type, data_type, type_udt_name, is_deterministic,
       is_null_call, external_language, routine_definition
  FROM information_schema.routines
 WHERE routine_name IN ('abs', 'count', 'row_number', 'json_each', 'concat', 'make_interval')
 ORDER BY specific_name;
SELECT specific_schema, specific_name, ordinal_position, parameter_mode, is_result, as_locator, parameter_name, data_type, character_maximum_length, character_octet_length, character_set_schema, character_set_name, collation_schema, collation_name, numeric_precision, numeric_precision_radix, numeric_scale, datetime_precision, interval_type, interval_precision, udt_schema, udt_name, scope_schema, scope_name, maximum_cardinality, dtd_identifier, parameter_default
  FROM information_schema.parameters WHERE specific_name LIKE 'make\_interval\_%' ORDER BY ordinal_position;
SELECT specific_name, ordinal_position, parameter_mode, is_result, parameter_name, data_type,
       udt_name, parameter_default
  FROM information_schema.parameters
 WHERE specific_name IN (SELECT specific_name FROM information_schema.routines
                          WHERE routine_name IN ('pg_promote', 'json_each', 'jsonb_set', 'abs'))
 ORDER BY specific_name, ordinal_position;
-- psql
\df
\dfa
\df abs
\df+ abs
\df+ pg_catalog.now
\df pg_catalog.json*_each*
\df pg_catalog.to_regp*
\df pg_catalog.justify*
\df pg_catalog.pg_get_function*
\dfa pg_catalog.json*
\dfw pg_catalog.*
\da avg
\da pg_catalog.bool*
\df pg_catalog.nosuch*
\sf now
\sf+ pg_catalog.abs(bigint)
\sf pg_promote
