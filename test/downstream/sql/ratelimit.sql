-- ratelimit: partner_svc's own rate limiter in a suite.  A test that spends
-- a budget and then calls sandbox.reset() finds it whole again, at once:
-- the reset also forgets partner_svc's counts for the servers that point
-- at the sandbox.  The limiter's refusal says in its DETAIL when the
-- budget frees (a time), so the test shows it with VERBOSITY terse, which
-- prints the message only.
\getenv sandbox_url PSVC_SANDBOX_URL
SELECT sandbox.reset();
SELECT sandbox.freeze_clock();
-- the limiter's window is a minute of the sandbox's clock
SELECT current_setting('partner_svc.time_scale')::float8
       = (sandbox.control('GET', '/_sandbox/config') ->> 'time_scale')::float8 AS same_time_scale;

-- a server of the project with a tight limit of its own on the status
-- route, and no waiting for budget: a spent budget fails at once
CREATE SERVER orders_tight FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url',
           rate_limits 'GET /orders/{id}/status=2');
CREATE USER MAPPING FOR CURRENT_USER SERVER orders_tight OPTIONS (api_key 'sandbox-key');
SET partner_svc.rate_limit_max_wait = 0;

SELECT shop.place_order('LJ RL-100', 'R-1') LIKE 'ord\_%' AS booked;
SELECT partner_svc.order_status('R-1', 'orders_tight') AS status;
SELECT partner_svc.order_status('R-1', 'orders_tight') AS status;
-- the third read of the minute is refused before it is sent
\set VERBOSITY terse
SELECT partner_svc.order_status('R-1', 'orders_tight') AS status;
\set VERBOSITY default
SELECT "limit", used, available FROM partner_svc.rate_limits
WHERE server = 'orders_tight' AND resource = 'R-1';

-- a reset, with the clock still frozen: the sandbox forgets the order and
-- partner_svc its budget, so the same order placed again is read at once
SELECT sandbox.reset();
SELECT sandbox.freeze_clock();
SELECT count(*) AS counting_keys FROM partner_svc.rate_limits WHERE used > 0;
SELECT shop.place_order('LJ RL-100', 'R-1') LIKE 'ord\_%' AS booked;
SELECT partner_svc.order_status('R-1', 'orders_tight') AS status;
SELECT method, route, path, status FROM sandbox.requests('GET /public/orders/{id}/status');
-- still frozen: nothing of this needed sandbox time to pass
SELECT (sandbox.clock() ->> 'frozen')::boolean AS frozen;

RESET partner_svc.rate_limit_max_wait;
DROP USER MAPPING FOR CURRENT_USER SERVER orders_tight;
DROP SERVER orders_tight;
SELECT sandbox.freeze_clock(false);
