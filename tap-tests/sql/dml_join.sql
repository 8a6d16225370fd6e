-- dml_join: writes driven by other tables — INSERT … SELECT with joins,
-- UPDATE … FROM, DELETE … USING, INSERT … ON CONFLICT DO NOTHING / DO
-- UPDATE, with RETURNING where its row order is fixed (one row, or VALUES
-- order). Writes: this file runs on the primary only.
CREATE TABLE dj_stock (sku text PRIMARY KEY, qty int NOT NULL, price numeric(6,2));
CREATE TABLE dj_delivery (sku text, qty int, new_price numeric(6,2));
CREATE TABLE dj_log (sku text, qty int, note text);
INSERT INTO dj_stock VALUES ('a', 10, 1.00), ('b', 0, 2.00), ('c', 5, NULL), ('d', 1, 4.00);
INSERT INTO dj_delivery VALUES ('a', 5, 1.10), ('c', 2, NULL), ('e', 7, 3.00), ('e', 1, 3.50), (NULL, 9, 1.00);
-- INSERT … SELECT with a join and with an anti join
INSERT INTO dj_log SELECT s.sku, d.qty, 'delivered' FROM dj_stock s JOIN dj_delivery d ON d.sku = s.sku;
INSERT INTO dj_log (sku, qty, note) SELECT d.sku, d.qty, 'unknown' FROM dj_delivery d LEFT JOIN dj_stock s ON s.sku = d.sku WHERE s.sku IS NULL;
SELECT * FROM dj_log ORDER BY sku NULLS LAST, qty;
-- UPDATE … FROM
UPDATE dj_stock s SET qty = s.qty + d.qty, price = coalesce(d.new_price, s.price) FROM dj_delivery d WHERE d.sku = s.sku;
SELECT * FROM dj_stock ORDER BY sku;
UPDATE dj_stock SET qty = 0 FROM dj_log l WHERE l.sku = dj_stock.sku AND l.note = 'nothing';
UPDATE dj_stock s SET price = s.price * 2 FROM (SELECT sku FROM dj_log GROUP BY sku HAVING count(*) >= 1) g WHERE g.sku = s.sku;
SELECT sku, price FROM dj_stock ORDER BY sku;
-- DELETE … USING
DELETE FROM dj_log l USING dj_stock s WHERE s.sku = l.sku AND s.qty > 10;
DELETE FROM dj_stock s USING dj_delivery d WHERE d.sku IS NULL AND s.qty < d.qty AND s.qty = 0;
SELECT * FROM dj_stock ORDER BY sku;
SELECT * FROM dj_log ORDER BY sku NULLS LAST, qty;
-- ON CONFLICT
INSERT INTO dj_stock VALUES ('a', 1, 9.99) ON CONFLICT DO NOTHING;
INSERT INTO dj_stock VALUES ('a', 1, 9.99), ('f', 2, 1.50) ON CONFLICT (sku) DO NOTHING RETURNING sku;
INSERT INTO dj_stock VALUES ('a', 100, 9.99) ON CONFLICT (sku) DO UPDATE SET qty = dj_stock.qty + EXCLUDED.qty RETURNING *;
INSERT INTO dj_stock VALUES ('b', 3, 0.50), ('g', 3, 0.50) ON CONFLICT (sku) DO UPDATE SET price = EXCLUDED.price WHERE dj_stock.qty = 0 RETURNING sku, qty, price;
INSERT INTO dj_stock SELECT sku, sum(qty), max(new_price) FROM dj_delivery WHERE sku IS NOT NULL GROUP BY sku ON CONFLICT (sku) DO UPDATE SET qty = EXCLUDED.qty;
SELECT * FROM dj_stock ORDER BY sku;
-- errors
INSERT INTO dj_stock VALUES ('a', 1, 1), ('a', 2, 2) ON CONFLICT (sku) DO UPDATE SET qty = 0;
INSERT INTO dj_stock VALUES ('z', 1, 1) ON CONFLICT (qty) DO NOTHING;
UPDATE dj_stock SET qty = d.qty FROM dj_delivery d WHERE d.sku = nosuch;
SELECT count(*) FROM dj_stock;
