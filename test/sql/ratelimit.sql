-- ratelimit: the rate limiter's table, overrides and views, what it does
-- when the budget is spent, and the request statistics.  Runs against the
-- shared sandbox, whose windows are real minutes (so a spent budget stays
-- spent for the whole test); its own servers keep it apart from the rest.
-- The concurrency, the full key table and the server without preloading
-- are in test/scenario/50_ratelimit.t.
\getenv sandbox_url PSVC_SANDBOX_URL
CALL sandbox.clear_faults();
SET partner_svc.max_retries = 3;
CREATE SERVER rl_standard FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url');
CREATE SERVER rl_premium FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url', tier 'premium');
CREATE SERVER rl_enterprise FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url', tier 'enterprise');
CREATE SERVER rl_generation FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'generation', base_url :'sandbox_url');

-- the document's whole table for the three tiers, plus our choices
SELECT s.route, s.per_resource, s."limit" AS standard, p."limit" AS premium,
       e."limit" AS enterprise, s.source
FROM partner_svc.rate_limit_rules('rl_standard') WITH ORDINALITY s
JOIN partner_svc.rate_limit_rules('rl_premium') p USING (route)
JOIN partner_svc.rate_limit_rules('rl_enterprise') e USING (route)
ORDER BY s.ordinality;
SELECT * FROM partner_svc.rate_limit_rules('rl_generation');
-- the movie service is limited only on its nested-list details (our choice)
SELECT * FROM partner_svc.rate_limit_rules('movies');
-- services without limits have no rules: their requests pass freely
SELECT count(*) FROM partner_svc.rate_limit_rules('todos');

-- per-route overrides: replace a row, lift one, add one the table lacks
ALTER SERVER rl_premium OPTIONS (ADD rate_limits
  'GET /orders/{id}=2, GET /orders = none, POST /orders/validate=1000, GET /v9/things/{id}=7, /mcp=5');
SELECT * FROM partner_svc.rate_limit_rules('rl_premium')
WHERE source = 'override' OR route LIKE 'GET /orders%';
ALTER SERVER rl_premium OPTIONS (DROP rate_limits);
SELECT "limit", source FROM partner_svc.rate_limit_rules('rl_premium') WHERE route = 'GET /orders/{id}';
SELECT "limit" FROM partner_svc.rate_limit_rules('no_such_server');

-- option rate_limits: bad values
ALTER SERVER rl_standard OPTIONS (ADD rate_limits 'GET /orders/{id}=x');
ALTER SERVER rl_standard OPTIONS (ADD rate_limits 'GET /orders/{id}');
ALTER SERVER rl_standard OPTIONS (ADD rate_limits 'GET /orders/{id}=0');
ALTER SERVER rl_standard OPTIONS (ADD rate_limits 'GET /orders/{id}=1000001');
ALTER SERVER rl_standard OPTIONS (ADD rate_limits 'get /orders=1');
ALTER SERVER rl_standard OPTIONS (ADD rate_limits 'GET orders=1');
ALTER SERVER rl_standard OPTIONS (ADD rate_limits 'GET /orders//x=1');
ALTER SERVER rl_standard OPTIONS (ADD rate_limits 'GET /orders=1, GET /orders=2');
ALTER SERVER rl_standard OPTIONS (ADD rate_limits '=5');
-- on any service: a contract may limit what the documents do not
ALTER SERVER movies OPTIONS (ADD rate_limits 'GET /movies=1000');
ALTER SERVER movies OPTIONS (DROP rate_limits);

-- a spent budget: two reads per order id on server rl_orders
CREATE SERVER rl_orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url', rate_limits 'GET /orders/{id}=2');
CREATE USER MAPPING FOR PUBLIC SERVER rl_orders OPTIONS (api_key 'sandbox-key');
CREATE FOREIGN TABLE rl_orders (id text, custom_id text) SERVER rl_orders
  OPTIONS (resource 'orders');
SELECT partner_svc.stats_reset();
CALL sandbox.reset_stats();
SET partner_svc.rate_limit_max_wait = 0;
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-1';
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-1';
\set VERBOSITY terse
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-1';
\set VERBOSITY default
-- the detail says when the budget frees
DO $$
DECLARE d text; h text;
BEGIN
  PERFORM * FROM rl_orders WHERE custom_id = 'REG-1';
EXCEPTION WHEN too_many_connections THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
  RAISE NOTICE '%', regexp_replace(d, 'frees at [^(]*\(in [0-9.]+ s\)', 'frees at <time> (in <n> s)');
  RAISE NOTICE '%', h;
END $$;
-- another order id has its own budget
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-3';
-- a plain route of the same server is not held back either
SELECT count(*) > 0 AS listed FROM rl_orders;
-- what was sent: the refused reads never left
SELECT method, route, path, status FROM sandbox.requests();

SELECT server, method, route, resource, "limit", used, in_flight, available,
       frees_at > now() AS exhausted, resets_at > now() AS resets_later,
       blocked_until
FROM partner_svc.rate_limits WHERE server = 'rl_orders' AND resource = 'REG-1';
-- the account's other keys: the servers of the suite with its key (the
-- sandbox's) count in them too, so only whether they counted is shown
SELECT server, method, route, resource, "limit", used >= 1 AS counted, in_flight
FROM partner_svc.rate_limits
WHERE server = 'rl_orders' AND resource IS DISTINCT FROM 'REG-1'
ORDER BY route, resource;

-- the budget is the partner account's (base URL and API key), not the
-- server's: a second server with the same key, its URL written otherwise,
-- finds REG-1 spent; the view shows no key
SELECT replace(:'sandbox_url', 'http://', 'HTTP://') || '/' AS twin_url \gset
CREATE SERVER rl_orders_twin FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'twin_url', rate_limits 'GET /orders/{id}=2');
CREATE USER MAPPING FOR PUBLIC SERVER rl_orders_twin OPTIONS (api_key 'sandbox-key');
CREATE FOREIGN TABLE rl_orders_twin (id text, custom_id text) SERVER rl_orders_twin
  OPTIONS (resource 'orders');
SET partner_svc.rate_limit_max_wait = 0;
\set VERBOSITY terse
SELECT count(*) FROM rl_orders_twin WHERE custom_id = 'REG-1';
\set VERBOSITY default
SELECT count(*) AS rows_with_the_key FROM partner_svc.rate_limits r
WHERE r::text LIKE '%sandbox-key%';
DROP SERVER rl_orders_twin CASCADE;

-- waiting for budget: statement_timeout ends the wait, and the CONTEXT
-- says what the statement waited for
SET partner_svc.rate_limit_max_wait = '10min';
SELECT clock_timestamp() AS t0 \gset
SET statement_timeout = '300ms';
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-1';
RESET statement_timeout;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '3 s' AS cancelled_promptly;
-- a budget that frees later than rate_limit_max_wait fails at once
SET partner_svc.rate_limit_max_wait = '1s';
SELECT clock_timestamp() AS t0 \gset
\set VERBOSITY terse
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-1';
\set VERBOSITY default
SELECT clock_timestamp() - :'t0'::timestamptz < interval '0.9 s' AS failed_at_once;
RESET partner_svc.rate_limit_max_wait;

-- with partner_svc.rate_limit off the limiter is not consulted
SET partner_svc.rate_limit = off;
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-1';
RESET partner_svc.rate_limit;
SELECT count(*) AS sent_for_reg_1 FROM sandbox.requests() WHERE path = '/public/orders/REG-1';

-- a 429 the limiter did not prevent: retried after Retry-After or
-- backoff, counted in the stats
CALL sandbox.fault('{"route": "GET /public/orders", "kind": "429", "value": 1, "count": 1}');
SELECT clock_timestamp() AS t0 \gset
SELECT count(*) > 0 AS listed FROM rl_orders;
SELECT clock_timestamp() - :'t0'::timestamptz >= interval '0.9 s' AS waited_retry_after;
CALL sandbox.fault('{"route": "GET /public/orders", "kind": "429", "count": 2}');
SELECT count(*) > 0 AS listed FROM rl_orders;

SELECT server, method, route, requests, retries, ok, client_errors, rate_limited,
       server_errors, other_status, failures, bytes_sent, bytes_received > 0 AS received,
       total_time >= max_time AS times, mean_time > 0 AS mean, limiter_waits
FROM partner_svc.stats WHERE server = 'rl_orders' ORDER BY route;

-- routes without a limit: counted in the stats, no rate-limit key
SELECT partner_svc.stats_reset();
SELECT count(*) FROM m.movies WHERE genre = 'drama';
SELECT server, method, route, requests, ok FROM partner_svc.stats WHERE server = 'movies';
SELECT count(*) FROM partner_svc.rate_limits WHERE server = 'movies';

-- rate_limits_reset: a test whose sandbox forgot its counters makes the
-- limiter forget the account's too; REG-1, spent above, is read at once
SET partner_svc.rate_limit_max_wait = 0;
\set VERBOSITY terse
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-1';
\set VERBOSITY default
CALL sandbox.reset_stats();
SELECT partner_svc.rate_limits_reset('rl_orders') > 0 AS forgot;
SELECT count(*) AS reg_1_keys FROM partner_svc.rate_limits
WHERE server = 'rl_orders' AND resource = 'REG-1';
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-1';
SELECT method, route, path, status FROM sandbox.requests();
SELECT "limit", used, available FROM partner_svc.rate_limits
WHERE server = 'rl_orders' AND resource = 'REG-1';
-- a second reset finds it counted again; NULL forgets every account's keys
SELECT partner_svc.rate_limits_reset('rl_orders') AS forgot_again;
SELECT count(*) FROM rl_orders WHERE custom_id = 'REG-1';
SELECT partner_svc.rate_limits_reset() > 0 AS forgot_all;
SELECT count(*) AS counting_keys FROM partner_svc.rate_limits
WHERE used > 0 OR blocked_until IS NOT NULL;
SELECT partner_svc.rate_limits_reset('no_such_server');
RESET partner_svc.rate_limit_max_wait;

-- the views are for everyone who may use the schema, stats_reset and
-- rate_limits_reset are for superusers unless granted
CREATE ROLE rl_user;
GRANT USAGE ON SCHEMA partner_svc TO rl_user;
SET ROLE rl_user;
SELECT partner_svc.stats_reset();
SELECT partner_svc.rate_limits_reset();
SELECT count(*) > 0 AS readable FROM partner_svc.stats;
SELECT count(*) >= 0 AS readable FROM partner_svc.rate_limits;
RESET ROLE;
REVOKE USAGE ON SCHEMA partner_svc FROM rl_user;
DROP ROLE rl_user;

DROP SERVER rl_standard, rl_premium, rl_enterprise, rl_generation;
DROP SERVER rl_orders CASCADE;
CALL sandbox.clear_faults();
