-- operators_catalog: pg_operator lists the built-in operators hotpair's
-- expression binder implements with PostgreSQL 15's rows, and pg_opclass,
-- pg_opfamily, pg_amop and pg_amproc the btree operator classes over
-- them; what reads them: regoper / regoperator, obj_description(oid,
-- 'pg_operator'), pg_index.indclass, psql's \do and \dA* family. The
-- operators and classes asked about are ones whose every PostgreSQL
-- counterpart over the same types hotpair implements, so the listings
-- are equal.
CREATE TABLE opc_t (a int4, b text, c uuid, d varchar(10), e char(3), f name, g int8,
                    h date, i jsonb, j bool, k numeric, l timestamptz, m int4[]);
CREATE INDEX opc_t_abc ON opc_t (a, b, c);
CREATE INDEX opc_t_defgh ON opc_t (d, e, f, g, h);
CREATE UNIQUE INDEX opc_t_ijklm ON opc_t (i, j, k, l, m);
CREATE INDEX opc_t_expr ON opc_t (lower(b), (a + 1), d);
-- @@ read-only
-- pg_index.indclass: each key's default operator class (a column's or
-- an expression's type).
SELECT c.relname, i.indclass, i.indcollation, pg_get_indexdef(i.indexrelid)
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE i.indrelid = 'opc_t'::regclass ORDER BY 1;
SELECT c.relname, k, o.opcname, o.opcintype::regtype
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  CROSS JOIN generate_series(0, 4) AS k JOIN pg_opclass o ON o.oid = i.indclass[k]
 WHERE i.indrelid = 'opc_t'::regclass ORDER BY 1, 2;
-- pg_operator's rows
SELECT oid, oprname, oprnamespace, oprowner, oprkind, oprcanmerge, oprcanhash, oprleft, oprright,
       oprresult, oprcom, oprnegate, oprcode, oprrest, oprjoin
  FROM pg_operator
 WHERE oprleft IN (21, 23, 20) AND oprright IN (21, 23, 20)
   AND oprname IN ('=', '<>', '<', '<=', '>', '>=', '+', '-', '*', '/', '%')
 ORDER BY oid;
SELECT o.oprname, l.typname AS left, r.typname AS right, t.typname AS result, o.oprcode
  FROM pg_operator o LEFT JOIN pg_type l ON l.oid = o.oprleft
  JOIN pg_type r ON r.oid = o.oprright JOIN pg_type t ON t.oid = o.oprresult
 WHERE r.typname IN ('date', 'timestamp', 'timestamptz', 'interval', 'int4', 'float8')
   AND (l.typname IS NULL OR l.typname IN ('date', 'timestamp', 'timestamptz', 'interval', 'int4', 'float8'))
   AND o.oprname IN ('+', '-') AND 'interval' IN (l.typname, r.typname, t.typname)
 ORDER BY 1, 2, 3;
SELECT oprname, oprleft::regtype, oprright::regtype, oprresult::regtype, oprcode
  FROM pg_operator WHERE oprleft IN ('jsonb'::regtype, 'json'::regtype) AND oprname NOT IN ('@?', '@@')
 ORDER BY oprname, 2, 3;
SELECT oprname, oprleft::regtype, oprright::regtype, oprcom::regoperator, oprnegate::regoperator
  FROM pg_operator WHERE oprleft = 'uuid'::regtype ORDER BY oid;
SELECT oprname, oprkind, oprleft, oprright::regtype FROM pg_operator
 WHERE oprkind = 'l' AND oprname IN ('-', '+') AND oprright IN (21, 23, 20, 701, 1700, 1186) ORDER BY 1, 4;
-- keyed by oid
SELECT oprname, oprleft::regtype, oprright::regtype FROM pg_operator WHERE oid = 96;
SELECT count(*) FROM pg_operator WHERE oid = 0;
-- descriptions
SELECT oid, obj_description(oid, 'pg_operator') FROM pg_operator WHERE oid IN (96, 551, 3211, 1209) ORDER BY 1;
SELECT d.objoid, d.classoid::regclass, d.objsubid, d.description
  FROM pg_description d WHERE d.classoid = 'pg_operator'::regclass AND d.objoid IN (15, 96, 558) ORDER BY 1;
SELECT o.oprname, p.proname, p.prorettype::regtype, obj_description(p.oid, 'pg_proc')
  FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode WHERE o.oid IN (96, 551, 3211) ORDER BY o.oid;
-- regoper and regoperator
SELECT '+(int4,int4)'::regoperator, '+(integer,integer)'::regoperator::oid,
       '-(NONE,integer)'::regoperator::oid, 'pg_catalog.=(text,text)'::regoperator::oid;
SELECT 551::regoperator, 551::regoper, 3211::regoper, 3287::regoper, '#-'::regoper::oid, 0::regoper, 0::regoperator;
SELECT ('?' || '|')::regoper;
SELECT ('-' || '')::regoper;
SELECT '0'::regoper::oid, '0'::regoperator::oid;
SELECT to_regoper('+') IS NULL AS ambiguous, to_regoper('?&'), to_regoper('nosuch'),
       to_regoperator('=(uuid,uuid)'), to_regoperator('-(int4,NONE)'), to_regoperator('nosuch(int4,int4)');
SELECT to_regoperator('=(uuid,nosuch)');
SELECT to_regoperator('=(int4)');
SELECT ('+' || '')::regoper;
SELECT ('nosuch' || '(int4,int4)')::regoperator;
SELECT ('=' || '(int4)')::regoperator;
SELECT ('=' || '(int4,int4,int4)')::regoperator;
SELECT ('-(int4,' || 'NONE)')::regoperator;
SELECT ('=(int4,' || 'nosuchtype)')::regoperator;
SELECT oprname, oid::regoperator FROM pg_operator WHERE oprname = '?' ORDER BY 2;
-- pg_opclass, pg_opfamily, pg_amop, pg_amproc
SELECT oid, opcmethod, opcname, opcnamespace, opcowner, opcfamily, opcintype::regtype, opcdefault, opckeytype
  FROM pg_opclass
 WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')
   AND opcintype IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'uuid'::regtype, 'bool'::regtype,
                     'date'::regtype, 'numeric'::regtype, 'jsonb'::regtype, 'bytea'::regtype, 'anyarray'::regtype)
 ORDER BY oid;
SELECT oid, opfmethod, opfname, opfnamespace, opfowner FROM pg_opfamily
 WHERE opfmethod = 403 AND opfname IN ('integer_ops', 'uuid_ops', 'datetime_ops', 'numeric_ops') ORDER BY oid;
SELECT f.opfname, a.amoplefttype::regtype, a.amoprighttype::regtype, a.amopstrategy, a.amoppurpose,
       a.amopopr::regoperator, a.amopmethod, a.amopsortfamily
  FROM pg_amop a JOIN pg_opfamily f ON f.oid = a.amopfamily
 WHERE f.opfname IN ('uuid_ops', 'datetime_ops') AND a.amopmethod = 403 ORDER BY 1, 2, 3, 4;
SELECT f.opfname, a.amproclefttype::regtype, a.amprocrighttype::regtype, a.amprocnum, a.amproc,
       a.amproc::oid::regprocedure AS signature
  FROM pg_amproc a JOIN pg_opfamily f ON f.oid = a.amprocfamily
 WHERE f.opfname IN ('integer_ops', 'uuid_ops') AND f.opfmethod = 403 ORDER BY 1, 2, 3, 4;
SELECT c.opcname, o.oprname, o.oprleft::regtype
  FROM pg_opclass c JOIN pg_amop a ON a.amopfamily = c.opcfamily AND a.amoplefttype = c.opcintype
   AND a.amoprighttype = c.opcintype JOIN pg_operator o ON o.oid = a.amopopr
 WHERE c.opcname IN ('int4_ops', 'bool_ops') AND c.opcmethod = 403 ORDER BY 1, a.amopstrategy;
-- psql's \do and \dA* family
\do ->
\do+ ->>
\do = integer *
\do < date *
\do+ - jsonb *
\do - integer
\do #>>
\dAc btree int4
\dAc btree uuid
\dAc+ btree bool
\dAf btree int4
\dAf+ btree uuid
\dAo btree uuid_ops
\dAo+ btree integer_ops
\dAp btree uuid_ops
\dAp+ btree integer_ops
SELECT format('%s|%I|%L|%%|%2$s|%-4s|%4s', 'a b', 'X', NULL, 'y', 'z'), format('%I', 'int4_ops'), format('x');
SELECT format('%I', NULL);
SELECT format('%s %s', 'one');
