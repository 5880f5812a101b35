-- fdw_partner: the foreign tables of the other routes of document 000's
-- rate-limit table (products, product_status, users, user_orders,
-- user_vehicles, transactions): what IMPORT makes, what each scan sends,
-- detail reads, the join-capable user_id, and the rate-limit row each
-- route takes for every tier.
-- the join plans below (and so the order of their requests) must not
-- depend on what other tests of the suite have scanned
SET partner_svc.learn_estimates = off;
CREATE SCHEMA partner;
SET search_path = partner, public;
IMPORT FOREIGN SCHEMA orders
  LIMIT TO (products, product_status, users, user_orders, user_vehicles, transactions)
  FROM SERVER orders INTO partner;
SELECT c.relname, ft.ftoptions
FROM pg_foreign_table ft JOIN pg_class c ON c.oid = ft.ftrelid
WHERE c.relnamespace = 'partner'::regnamespace ORDER BY 1;
SELECT table_name, string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position)
FROM information_schema.columns WHERE table_schema = 'partner'
GROUP BY 1 ORDER BY 1;
-- what \dE+ tells an analyst: the route, the required user_id, the detail read
SELECT c.relname, obj_description(c.oid, 'pg_class')
FROM pg_class c WHERE c.relnamespace = 'partner'::regnamespace ORDER BY 1;

--
-- products and product_status: one unpaged request each
--
CALL sandbox.reset_stats();
SELECT id, country, name, periods, prices, currency FROM products ORDER BY id;
SELECT id, status FROM product_status ORDER BY id;
SELECT p.country, s.status FROM products p JOIN product_status s USING (id)
WHERE s.status <> 'available' ORDER BY 1;
SELECT count(*), bool_and(raw ? 'prices') AS raw_has_prices FROM products;
SELECT method, route, path, query, status FROM sandbox.requests();
EXPLAIN (COSTS OFF) SELECT * FROM products;
EXPLAIN (COSTS OFF) SELECT id FROM product_status WHERE status = 'maintenance';

--
-- users, user_orders, user_vehicles, transactions: a partner of its own
-- (enterprise-key, which no other test gives orders), two items a page
--
\getenv sandbox_url PSVC_SANDBOX_URL
CREATE SERVER orders_ent FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url', tier 'enterprise', page_size '2');
CREATE USER MAPPING FOR PUBLIC SERVER orders_ent OPTIONS (api_key 'enterprise-key');
CREATE SERVER orders_prem FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url', tier 'premium');
CREATE USER MAPPING FOR PUBLIC SERVER orders_prem OPTIONS (api_key 'premium-key');
CREATE SCHEMA ent;
IMPORT FOREIGN SCHEMA orders FROM SERVER orders_ent INTO ent;
CREATE SCHEMA prem;
IMPORT FOREIGN SCHEMA orders FROM SERVER orders_prem INTO prem;

-- four requests: ana twice (three orders, two vehicles), bo, cy (unpaid:
-- a checkout), and one without a user; their transaction ids are kept
CREATE TEMP TABLE made (n int, tx text);
INSERT INTO made
SELECT n, (string_agg(l, '')::jsonb) #>> '{data,transaction_id}'
FROM (VALUES
  (1, $${"terms_and_privacy_accepted": true, "order_has_been_paid": true,
   "vehicles": [{"plate": "LJ AB-123", "country": "SI"}, {"plate": "W 12345", "country": "AT"}],
   "vignettes": [{"custom_id": "SF-1", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2030-01-01"},
                 {"custom_id": "SF-2", "name": "Austria 10 days", "period": "10_days", "start_date": "2030-01-01"}],
   "user": {"email": "ana@surface.test"}}$$),
  (2, $${"terms_and_privacy_accepted": true, "order_has_been_paid": true,
   "vehicles": [{"plate": "lj ab-123", "country": "SI"}],
   "vignettes": [{"custom_id": "SF-3", "name": "Slovenia 1 month", "period": "1_month", "start_date": "2030-01-01"}],
   "user": {"email": "ana@surface.test"}}$$),
  (3, $${"terms_and_privacy_accepted": true, "order_has_been_paid": true,
   "vehicles": [{"plate": "ABC-123", "country": "HU"}],
   "vignettes": [{"custom_id": "SF-4", "name": "Hungary 1 year", "period": "1_year", "start_date": "2030-01-01"}],
   "user": {"email": "bo@surface.test"}}$$),
  (4, $${"terms_and_privacy_accepted": true, "order_has_been_paid": false,
   "vehicles": [{"plate": "BA 123 XY", "country": "SK"}],
   "vignettes": [{"custom_id": "SF-5", "name": "Slovakia 1 year", "period": "1_year", "start_date": "2030-01-01"}],
   "user": {"email": "cy@surface.test"}}$$),
  (5, $${"terms_and_privacy_accepted": true, "order_has_been_paid": true,
   "vehicles": [{"plate": "ZG 1234 AB", "country": "HR"}],
   "vignettes": [{"custom_id": "SF-6", "name": "Slovenia 1 day", "period": "1_day", "start_date": "2030-01-01"}]}$$)
) AS b(n, body), LATERAL sandbox.call('POST', '/public/orders', body, 'enterprise-key') AS l
GROUP BY n;
SELECT n, tx LIKE 'txn_%' AS is_tx FROM made ORDER BY n;

-- users: three, over two pages of two
CALL sandbox.reset_stats();
SELECT email, orders, id LIKE 'usr_%' AS usr, created_date > 0 AS dated FROM ent.users ORDER BY email;
SELECT method, route, regexp_replace(query, 'cursor=[^&]+', 'cursor=...') AS query, status
FROM sandbox.requests();

-- user_orders and user_vehicles need user_id
CALL sandbox.reset_stats();
SELECT custom_id, status IS NOT NULL AS has_status, email
FROM ent.user_orders WHERE user_id = (SELECT id FROM ent.users WHERE email = 'ana@surface.test')
ORDER BY custom_id;
SELECT plate, country, id LIKE 'veh_%' AS veh
FROM ent.user_vehicles WHERE user_id = (SELECT id FROM ent.users WHERE email = 'ana@surface.test')
ORDER BY plate;
SELECT route, regexp_replace(query, 'cursor=[^&]+', 'cursor=...') AS query, status
FROM sandbox.requests();
SELECT * FROM ent.user_orders;
SELECT sandbox.try('SELECT * FROM ent.user_vehicles WHERE plate = ''X''');
-- an unknown user has no orders and no vehicles (404 user_not_found)
SELECT count(*) FROM ent.user_orders WHERE user_id = 'usr_000000000000';
SELECT count(*) FROM ent.user_vehicles WHERE user_id = 'usr_000000000000';
SELECT count(*) FROM ent.user_vehicles WHERE user_id = '';

-- join-capable: users feed user_orders (a parameterized nested loop)
CALL sandbox.reset_stats();
SELECT u.email, o.custom_id FROM ent.users u JOIN ent.user_orders o ON o.user_id = u.id
ORDER BY 1, 2;
SELECT route, count(*) FROM sandbox.requests() GROUP BY 1 ORDER BY 1;
EXPLAIN (COSTS OFF)
SELECT u.email, o.custom_id FROM ent.users u JOIN ent.user_orders o ON o.user_id = u.id;
-- a VALUES list through LATERAL, an unknown id among them
CREATE TEMP TABLE ids AS SELECT email, id FROM ent.users;
SELECT i.email, v.plate
FROM (SELECT email, id FROM ids UNION ALL VALUES ('nobody', 'usr_000000000000')) AS i(email, id)
LEFT JOIN LATERAL (SELECT plate FROM ent.user_vehicles WHERE user_id = i.id) v ON true
ORDER BY 1, 2;
EXPLAIN (COSTS OFF)
SELECT v.plate FROM (VALUES ('a'), ('b')) AS i(id), LATERAL
  (SELECT plate FROM ent.user_vehicles WHERE user_id = i.id) v;
-- = ANY: one stream per user
CALL sandbox.reset_stats();
SELECT count(*) FROM ent.user_vehicles WHERE user_id = ANY (ARRAY(SELECT id FROM ids));
SELECT route, count(*) FROM sandbox.requests() GROUP BY 1 ORDER BY 1;

-- transactions: five, over three pages; a detail read by transaction_id
CALL sandbox.reset_stats();
SELECT m.n, t.order_has_been_paid, t.checkout_status, jsonb_array_length(t.orders) AS orders,
       t.payment_link IS NOT NULL AS link
FROM ent.transactions t JOIN made m ON m.tx = t.transaction_id ORDER BY m.n;
SELECT count(*) FROM sandbox.requests() WHERE route = '/public/transactions';
CALL sandbox.reset_stats();
SELECT order_has_been_paid, checkout_status, orders -> 0 ->> 'custom_id' AS custom_id
FROM ent.transactions WHERE transaction_id = (SELECT tx FROM made WHERE n = 4);
SELECT count(*) FROM ent.transactions WHERE transaction_id = 'txn_000000000000';
SELECT route, status FROM sandbox.requests();
EXPLAIN (COSTS OFF) SELECT * FROM ent.transactions WHERE transaction_id = 'txn_1';
EXPLAIN (COSTS OFF) SELECT * FROM ent.user_orders WHERE user_id = 'usr_1' LIMIT 3;

--
-- each route takes its row of the rate-limit table, for every tier: a read
-- of each table through a standard, a premium and an enterprise server
-- (how many rows the other partners have depends on the other tests)
--
SELECT count(*) FROM prem.products;
SELECT count(*) FROM prem.product_status;
SELECT count(*) IS NOT NULL AS read FROM prem.users;
SELECT count(*) IS NOT NULL AS read FROM prem.transactions;
SELECT count(*) FROM prem.transactions WHERE transaction_id = 'txn_000000000000';
SELECT count(*) FROM prem.user_orders WHERE user_id = 'usr_000000000000';
SELECT count(*) FROM prem.user_vehicles WHERE user_id = 'usr_000000000000';
SELECT count(*) FROM ent.products;
SELECT count(*) FROM ent.product_status;
SELECT count(*) IS NOT NULL AS read FROM users;
SELECT count(*) IS NOT NULL AS read FROM transactions;
SELECT count(*) FROM transactions WHERE transaction_id = 'txn_000000000000';
SELECT count(*) FROM user_orders WHERE user_id = 'usr_000000000000';
SELECT count(*) FROM user_vehicles WHERE user_id = 'usr_000000000000';
SELECT route, method,
       max("limit") FILTER (WHERE server = 'orders') AS standard,
       max("limit") FILTER (WHERE server = 'orders_prem') AS premium,
       max("limit") FILTER (WHERE server = 'orders_ent') AS enterprise,
       bool_or(resource IS NOT NULL) AS per_resource
FROM partner_svc.rate_limits
WHERE server IN ('orders', 'orders_prem', 'orders_ent')
  AND route NOT LIKE '/public/orders%'
GROUP BY 1, 2 ORDER BY 1, 2;

-- the later tests expect one server of each service
SET client_min_messages = warning;
DROP SERVER orders_ent, orders_prem CASCADE;
DROP SCHEMA ent, prem, partner CASCADE;
RESET client_min_messages;
