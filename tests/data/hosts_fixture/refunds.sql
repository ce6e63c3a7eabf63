-- The refund desk's database before a run (written for trajcheck's host tests).
CREATE TABLE refunds (id INTEGER PRIMARY KEY, order_id TEXT NOT NULL, amount REAL NOT NULL);
INSERT INTO refunds (order_id, amount) VALUES ('900', 15.0);
