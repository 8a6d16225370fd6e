-- inet: the inet and cidr types — text input and output (IPv4, IPv6,
-- IPv4-mapped forms, cidr's classful abbreviations), input errors,
-- storage, ordering (network_cmp) with a btree index and a unique
-- constraint, the network operators and functions, casts, arrays,
-- defaults and COPY; the second half runs on the standby.
CREATE TABLE inet_t (id int PRIMARY KEY, i inet, c cidr);
INSERT INTO inet_t VALUES
  (1, '192.168.1.5', '192.168.1.0/24'),
  (2, '192.168.1.5/24', '192.168.2'),
  (3, '10.1.2.3/8', '11'),
  (4, '10.0.0.0/8', '10.0.0.0/8'),
  (5, '0.0.0.0/0', '0.0.0.0/0'),
  (6, '255.255.255.255', '255.255.255.255/32'),
  (7, '::1', '::1/128'),
  (8, '2001:DB8:0:0:0:0:0:1/64', '2001:db8::/32'),
  (9, '::ffff:1.2.3.4', '::ffff:1.2.3.0/120'),
  (10, '::1.2.3.4', '::/0'),
  (11, 'fe80::1:2:3:4/10', 'fe80::/10'),
  (12, '2001:db8:0:0:1:0:0:1', '2001:db8:0:1::/64'),
  (13, '10.1.2.3/32', '128.1'),
  (14, NULL, NULL),
  (15, '1:0:2:3:4:5:6:7', '224');
-- a unique index on an inet column: equal values collide, /24 and /32 do not
CREATE TABLE inet_u (a inet PRIMARY KEY, n int);
INSERT INTO inet_u VALUES ('10.0.0.1', 1), ('10.0.0.1/24', 2), ('10.0.0.0/24', 3), ('::a', 4), ('10.0.0.2/8', 5), ('9.255.255.255', 6), ('10.1.2.3', 7), ('0.0.0.0/0', 8);
INSERT INTO inet_u VALUES ('10.0.0.1/32', 9);
CREATE UNIQUE INDEX inet_t_c ON inet_t (c);
CREATE INDEX inet_t_i ON inet_t (i);
-- defaults, arrays, COPY
CREATE TABLE inet_d (id int, a inet DEFAULT '127.0.0.1', b cidr DEFAULT '10.0.0.0/8', arr inet[], carr cidr[]);
INSERT INTO inet_d (id, arr, carr) VALUES (1, '{192.168.0.1,::1,NULL}', ARRAY['10/8'::cidr, '2001:db8::/32']);
INSERT INTO inet_d VALUES (2, '1.2.3.4/16', '1.2.0.0/16', ARRAY['1.1.1.1'::inet], '{}');
COPY inet_d FROM STDIN;
3	10.9.8.7/24	10.9.8.0/24	{::ffff:10.0.0.1,1.2.3.4/8}	{0.0.0.0/0}
\N	\N	\N	\N	\N
\.
INSERT INTO inet_d (id, a) VALUES (5, '1.2.3.4'::cidr);
-- @@ read-only
SELECT id, i, c FROM inet_t ORDER BY id;
SELECT id, pg_typeof(i), pg_typeof(c), family(i), masklen(i), masklen(c) FROM inet_t WHERE id IN (1, 7, 14) ORDER BY id;
-- more input forms
SELECT x, x::inet AS inet FROM (VALUES ('1.2.3.4/0'), ('10/8'), ('10.1/16'), ('10.1/9'), ('::'), ('::/0'), ('1::'), ('::2'), ('::1:0'), ('::0.1.0.0'), ('0:0:0:0:0:ffff:a:b'), ('::ffff:0:0'), ('1:2:3:4:5:6:1.2.3.4'), ('ABCD:EF01::1/100'), ('1:0:0:2:0:0:0:3'), ('1:0:0:2:0:0:3:4'), ('::1.2.3')) t(x);
SELECT x, x::cidr AS cidr FROM (VALUES ('10'), ('128.1'), ('192.168.1'), ('224'), ('224.1'), ('240'), ('0x0a'), ('0x0A0B'), ('10.1.2.3'), ('10.1.2/24'), ('::/0'), ('2001:db8::/32'), ('::1')) t(x);
-- input errors
SELECT x::inet FROM (VALUES ('x')) t(x);
SELECT x::inet FROM (VALUES ('')) t(x);
SELECT x::inet FROM (VALUES (' 1.2.3.4')) t(x);
SELECT x::inet FROM (VALUES ('1.2.3')) t(x);
SELECT x::inet FROM (VALUES ('1.2.3.4/33')) t(x);
SELECT x::inet FROM (VALUES ('1.2.3.256')) t(x);
SELECT x::inet FROM (VALUES ('1.2.3.4.5')) t(x);
SELECT x::inet FROM (VALUES ('1::2::3')) t(x);
SELECT x::inet FROM (VALUES ('::1/129')) t(x);
SELECT x::inet FROM (VALUES ('12345::')) t(x);
SELECT x::inet FROM (VALUES ('fe80::1%eth0')) t(x);
SELECT x::cidr FROM (VALUES ('10.1.2.3/8')) t(x);
SELECT x::cidr FROM (VALUES ('2001:db8::1/64')) t(x);
SELECT x::cidr FROM (VALUES ('0x0a0b0c0d0e')) t(x);
SELECT x::cidr FROM (VALUES ('abc')) t(x);
-- ordering: family, network part, mask length, whole address
SELECT id, i FROM inet_t ORDER BY i, id;
SELECT id, c FROM inet_t ORDER BY c DESC, id;
SELECT a, n FROM inet_u ORDER BY a;
SELECT a FROM inet_u WHERE a > '10.0.0.0/24' ORDER BY a;
SELECT a FROM inet_u WHERE a = '10.0.0.1' OR a = '10.0.0.0/24'::cidr ORDER BY a;
SELECT id FROM inet_t WHERE c = '10/8' ORDER BY id;
SELECT id FROM inet_t WHERE i BETWEEN '10.0.0.0/8' AND '192.168.1.5/24' ORDER BY id;
SELECT DISTINCT network(i) FROM inet_t ORDER BY 1;
SELECT family(i), count(*), min(i), max(i) FROM inet_t GROUP BY family(i) ORDER BY 1;
SELECT t.id, u.n FROM inet_t t JOIN inet_u u ON t.i = u.a ORDER BY 1, 2;
SELECT t.id, u.n FROM inet_t t JOIN inet_u u ON t.c = u.a ORDER BY 1, 2;
SELECT t.id, u.n FROM inet_t t, inet_u u WHERE t.c::inet = u.a AND u.n > 0 ORDER BY 1, 2;
SELECT t.id, u.n FROM inet_t t JOIN inet_u u ON u.a << t.c ORDER BY 1, 2;
SELECT '10.0.0.0/8'::inet = '10.0.0.0/8'::cidr, '10.0.0.0/8'::inet < '10.0.0.0/9'::inet, '10.0.0.1'::inet > '10.0.0.0/8', '::1'::inet > '255.255.255.255', '1.2.3.4'::inet <> '1.2.3.4/32';
-- containment
SELECT i, c, i << c AS "<<", i <<= c AS "<<=", c >> i AS ">>", c >>= i AS ">>=", i && c AS "&&" FROM inet_t WHERE id < 14 ORDER BY id;
SELECT '192.168.1/24'::cidr <<= '192.168.1/24'::cidr, '192.168.1/24'::cidr << '192.168.1/24'::cidr, '10.0.0.0/8' >> '10.1.0.0/16'::inet, '::1'::inet << '10/8'::cidr;
SELECT id FROM inet_t WHERE i << '10/8' OR i <<= '::/0' ORDER BY id;
-- bitwise and arithmetic
SELECT i, ~i, i & '255.0.0.255', i | '0.0.0.255' FROM inet_t WHERE id IN (1, 2, 3, 6) ORDER BY id;
SELECT ~'::1'::inet, '::ffff:1.2.3.4'::inet & '::ffff:ffff:0', '2001:db8::/32'::cidr | '::ff'::inet, pg_typeof(~'10/8'::cidr);
SELECT i + 1, i - 1, 5 + i, i + 256, i + 65536 FROM inet_t WHERE id IN (1, 7, 8) ORDER BY id;
SELECT '0.0.0.0'::inet + 4294967295, '255.255.255.255'::inet - 4294967295, '::'::inet + 9223372036854775807, '10.0.0.0/8'::cidr + 1, pg_typeof('10.0.0.0/8'::cidr + 1);
SELECT '192.168.1.5'::inet - '192.168.1.0'::inet, '10.0.0.0'::inet - '11.0.0.0', '::1'::inet - '::', '::7fff:ffff:ffff:ffff'::inet - '::', '::' - '::8000:0:0:0'::inet;
SELECT x::inet - y::inet FROM (VALUES ('::ffff:ffff:ffff:ffff', '::')) t(x, y);
SELECT x::inet + n FROM (VALUES ('255.255.255.255', 1)) t(x, n);
SELECT x::inet - n FROM (VALUES ('0.0.0.0', 1)) t(x, n);
SELECT x::inet - y::inet FROM (VALUES ('::1', '1.2.3.4')) t(x, y);
SELECT x::inet - y::inet FROM (VALUES ('1::', '::')) t(x, y);
SELECT x::inet & y::inet FROM (VALUES ('::1', '1.2.3.4')) t(x, y);
SELECT x::inet | y::inet FROM (VALUES ('::1', '1.2.3.4')) t(x, y);
SELECT x::inet + n FROM (VALUES ('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 1)) t(x, n);
-- functions
SELECT i, host(i), text(i), abbrev(i), netmask(i), hostmask(i), network(i), broadcast(i) FROM inet_t ORDER BY id;
SELECT c, host(c), text(c), abbrev(c), netmask(c), hostmask(c), network(c), broadcast(c) FROM inet_t ORDER BY id;
SELECT abbrev(x::cidr) FROM (VALUES ('10.1.0.0/16'), ('10.1.2.0/23'), ('0.0.0.0/0'), ('2001:db8::/32'), ('::ffff:1.2.0.0/112'), ('::1.2.3.0/120'), ('1:2:3:4:5:6:7:0/112'), ('::/0'), ('fe80::/10')) t(x);
SELECT set_masklen(i, 16), set_masklen(c, 16), set_masklen(i, -1), set_masklen(c, -1) FROM inet_t WHERE id IN (1, 2, 4, 13) ORDER BY id;
SELECT pg_typeof(set_masklen('10.0.0.0/8'::cidr, 4)), set_masklen('10.0.0.0/8'::cidr, 4), pg_typeof(set_masklen('1.2.3.4', 4)), set_masklen('1.2.3.4', 4);
SELECT set_masklen(i, n) FROM (VALUES ('1.2.3.4'::inet, 33)) t(i, n);
SELECT set_masklen(i, n) FROM (VALUES ('1.2.3.4'::cidr, -2)) t(i, n);
SELECT inet_same_family('1.2.3.4', '::1'), inet_same_family('1.2.3.4', '10/8'::cidr), inet_merge('192.168.1.5/24', '192.168.2.5/24'), inet_merge('10.0.0.1', '10.0.0.1'), inet_merge('::1', '::2/120');
SELECT inet_merge(x::inet, y::inet) FROM (VALUES ('::1', '1.2.3.4')) t(x, y);
SELECT family('::1'), masklen('1.2.3.4/7'), host('::1/32'), abbrev('10.1.0.0/16'), abbrev('10.1.0.0/16'::cidr);
-- typed literals
SELECT inet '10.0.0.1' << cidr '10/8', inet'1.2.3.4', CIDR  '::/0', set_masklen(inet '1.2.3.4', 24), 1 + inet '1.2.3.4', inet '1.2.3.4' - '1.2.3.0';
-- the connection's addresses (psql connects over TCP to 127.0.0.1)
SELECT inet_client_addr() = inet_server_addr(), family(inet_client_addr()), inet_client_port() > 0, inet_server_port() > 0, pg_typeof(inet_server_addr());
-- casts
SELECT '10.1.2.3/8'::inet::cidr, '10.0.0.0/8'::cidr::inet, cidr('::1/64'::inet), inet('1.2.3.4'), '1.2.3.4'::inet::text, '10/8'::cidr::varchar, text('::1'::inet), 'a' || '1.2.3.4'::inet, '1.2.3.0/24'::inet::text::cidr;
SELECT pg_typeof(network('1.2.3.4')), pg_typeof(inet_merge('1.2.3.4', '1.2.3.5')), pg_typeof(i), format_type(869, NULL), format_type(650, NULL), format_type(1041, NULL), format_type(651, NULL) FROM inet_t WHERE id = 1;
SELECT x::cidr FROM (VALUES ('10.1.2.3/8'::inet)) t(x);
-- arrays, defaults, COPY
SELECT * FROM inet_d ORDER BY id;
SELECT id, arr[1], arr[2], carr[1], pg_typeof(arr), pg_typeof(carr), array_length(arr, 1) FROM inet_d ORDER BY id;
SELECT ARRAY['1.2.3.4'::inet, '::1'], '{10/8, ::/0}'::cidr[], '1.2.3.4'::inet = ANY (ARRAY['1.2.3.4/32'::inet]), '{1.2.3.4/24}'::inet[] < '{1.2.3.4}'::inet[];
COPY (SELECT * FROM inet_d ORDER BY id) TO STDOUT;
COPY inet_t TO STDOUT;
-- catalogs and \d
SELECT oid, typname, typlen, typcategory, typispreferred, typelem, typarray FROM pg_type WHERE oid IN (869, 650, 1041, 651) ORDER BY oid;
SELECT column_name, data_type, udt_name FROM information_schema.columns WHERE table_name = 'inet_d' ORDER BY ordinal_position;
\d inet_d
\d inet_u
