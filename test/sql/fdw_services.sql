-- fdw_services: the foreign tables of the order, catalog, todo and
-- scheduler services: detail reads by id, filters, lists without paging.
SET search_path = public;
IMPORT FOREIGN SCHEMA orders FROM SERVER orders INTO public;
IMPORT FOREIGN SCHEMA catalog FROM SERVER catalog INTO public;
IMPORT FOREIGN SCHEMA todos FROM SERVER todos INTO public;
IMPORT FOREIGN SCHEMA scheduler FROM SERVER scheduler INTO public;
SELECT foreign_table_name, foreign_server_name FROM information_schema.foreign_tables
WHERE foreign_table_schema = 'public' AND foreign_server_name <> 'movies' ORDER BY 1;
-- the comments IMPORT writes: detail reads, filters, writes, required columns
SELECT c.relname, obj_description(c.oid, 'pg_class') FROM pg_class c
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'f'
  AND c.relname IN ('orders', 'todos', 'job_executions', 'notifications', 'business_questions', 'user_jobs')
ORDER BY 1;
SELECT a.attname, col_description(a.attrelid, a.attnum) FROM pg_attribute a
WHERE a.attrelid = 'orders'::regclass AND a.attnum > 0 ORDER BY a.attnum;
SELECT a.attname, col_description(a.attrelid, a.attnum) FROM pg_attribute a
WHERE a.attrelid = 'job_executions'::regclass AND a.attnum > 0 ORDER BY a.attnum;

--
-- orders: two paid orders, one of two vignettes, kept PENDING
--
CALL sandbox.set('{"orders.pending_after_min": 0, "orders.active_after_min": 100000}');
SELECT count(*) FROM sandbox.call('POST', '/public/orders', $${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ AB-123", "country": "SI"}],
  "vignettes": [{"custom_id": "REG-1", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2026-01-01"},
                {"custom_id": "REG-2", "name": "Slovenia 1 month", "period": "1_month", "start_date": "2026-01-01"}]}$$,
  'sandbox-key');
SELECT count(*) FROM sandbox.call('POST', '/public/orders', $${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "KR 77-ZZ", "country": "SI"}],
  "vignettes": [{"custom_id": "REG-3", "name": "Slovenia 10 days", "period": "10_days", "start_date": "2026-01-01"}]}$$,
  'sandbox-key');
SELECT pg_sleep(0.3);

CALL sandbox.reset_stats();
SELECT custom_id, status, email IS NULL AS no_email, id LIKE 'ord_%' AS service_id
FROM orders ORDER BY custom_id;
SELECT custom_id FROM orders WHERE status = 'PENDING' ORDER BY custom_id;
SELECT count(*) FROM orders WHERE status = 'ACTIVE';
SELECT method, route, query, status FROM sandbox.requests();

-- custom_id = (as id =) reads one order: one detail request
CALL sandbox.reset_stats();
SELECT custom_id, status, provider_id LIKE 'PRV-%' AS provider, jsonb_array_length(cars) AS cars
FROM orders WHERE custom_id = 'REG-2';
SELECT count(*) FROM orders WHERE id = 'REG-404';
SELECT o.custom_id FROM orders o WHERE o.id = (SELECT id FROM orders WHERE custom_id = 'REG-3');
SELECT method, route, path, status FROM sandbox.requests();
EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE custom_id = 'REG-2';
EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE status = 'PENDING' AND email IS NULL;

--
-- business questions: one page, filters as query parameters
--
CALL sandbox.reset_stats();
SELECT count(*), count(DISTINCT persona), count(DISTINCT answerability) FROM business_questions;
SELECT persona, count(*) FROM business_questions GROUP BY 1 ORDER BY 1;
SELECT id, answerability FROM business_questions WHERE persona = 'hr' AND answerability = 'source_required' ORDER BY id;
-- a persona outside the documented ones is not sent: no row (fdw_filters)
SELECT count(*) FROM business_questions WHERE persona = 'nobody';
SELECT query, status FROM sandbox.requests();

--
-- todos: no key needed, one list
--
CALL sandbox.reset_stats();
SELECT id, title, completed, user_id FROM todos ORDER BY id;
SELECT method, path, query, status FROM sandbox.requests();

--
-- scheduler: jobs, a job by id, executions of a job, notification addresses
--
CALL sandbox.reset_stats();
SELECT id, name, is_active, time_zone, status IS NOT NULL AS has_status FROM user_jobs ORDER BY id;
SELECT id, name FROM user_jobs WHERE id = 1000002;
SELECT count(*) FROM user_jobs WHERE id = 999;
SELECT method, path, status FROM sandbox.requests();

SELECT count(*) FROM sandbox.call('GET', '/api/user-jobs/run/1000001', NULL, 'sandbox-key');
SELECT count(*) FROM sandbox.call('GET', '/api/user-jobs/run/1000001', NULL, 'sandbox-key');
SELECT job_id, status, id > 0 AS has_id FROM job_executions WHERE job_id = 1000001;
SELECT e.job_id, count(*) FROM user_jobs j JOIN job_executions e ON e.job_id = j.id
WHERE j.id IN (1000001, 1000002) GROUP BY 1 ORDER BY 1;
SELECT * FROM job_executions;

SELECT count(*) FROM sandbox.call('POST', '/api/notifications', '"ops@example.com"', 'sandbox-key');
SELECT email FROM notifications ORDER BY email;
SELECT count(*) FROM notifications WHERE email LIKE '%@example.com';
