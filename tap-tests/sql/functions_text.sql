-- functions_text: string, pattern, conditional and numeric functions over
-- a table of text and numeric columns (dates, formatting, regular
-- expressions and arrays are in functions_report.sql).
CREATE TABLE ft_t (id int, customer text, code text, amount numeric(10,2));
INSERT INTO ft_t VALUES
  (1, 'Alice Smith', 'AB-123-x', 120.50),
  (2, 'bob jones', 'CD-45-y', 80.00),
  (3, 'Carol  White', 'ab-6-Z', 15.25),
  (4, NULL, NULL, NULL),
  (5, 'alice smith', 'EF-7890-x', 999.99),
  (6, 'Dan', 'GH-1-', 15.25);
-- @@ read-only
SELECT id, substring(code from 1 for 2), substring(code from 4), substr(code, 2, 3), position('-' in code), strpos(code, '-') FROM ft_t ORDER BY id;
SELECT id, code LIKE '%-x', code ILIKE 'ab%', code NOT LIKE 'A%', customer NOT ILIKE 'alice%', code LIKE 'A_-%' FROM ft_t ORDER BY id;
SELECT id FROM ft_t WHERE customer ILIKE '%SMITH' ORDER BY id;
SELECT lower(customer) AS c, count(*) FROM ft_t GROUP BY lower(customer) ORDER BY c NULLS LAST;
-- conditional expressions
SELECT id, coalesce(amount, 0), coalesce(customer, code, 'none'), nullif(amount, 15.25), greatest(amount, 100), least(amount, 100, id * 10) FROM ft_t ORDER BY id;
SELECT nullif(1, 1), nullif(1, 2), coalesce(NULL, NULL, 3), greatest(1, NULL, 3), least('b', 'a', NULL);
-- numeric rounding and arithmetic
SELECT id, round(amount), round(amount, 1), trunc(amount), trunc(amount, 1), ceil(amount), floor(amount), round(amount / 3, 3) FROM ft_t ORDER BY id;
SELECT id, amount * 1.1 AS raised, round(amount * 1.1, 2) AS raised2, amount::int, amount::text FROM ft_t ORDER BY id;
-- errors
SELECT substring('abc' from -1 for -1);
