-- The refund desk's database before a run (the sandbox fixture of the fixture cases):
-- two orders, and one refund already issued for order 900.
CREATE TABLE orders (id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, amount REAL NOT NULL);
CREATE TABLE refunds (id INTEGER PRIMARY KEY, order_id TEXT NOT NULL, amount REAL NOT NULL);
INSERT INTO orders (id, customer_id, amount) VALUES ('900', 'C3', 15.0), ('981', 'C7', 40.0);
INSERT INTO refunds (order_id, amount) VALUES ('900', 15.0);
