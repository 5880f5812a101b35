-- func_transactions: the SQL functions of the other routes of document
-- 000's rate-limit table: validate_vehicle, create_transaction,
-- transaction_status, transaction_fee, transaction_data,
-- cancel_transaction and mcp.  Each result is checked together with what
-- the sandbox received (sandbox.requests()); ids the service makes
-- (ord_..., txn_...) and links (they hold the sandbox's port) are only
-- matched by pattern.  The unsafe ones are checked with lost answers.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();

SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result, p.prosecdef, p.provolatile, p.proisstrict
FROM pg_proc p
WHERE p.pronamespace = 'partner_svc'::regnamespace
  AND p.proname IN ('validate_vehicle', 'create_transaction', 'transaction_status',
                    'transaction_fee', 'transaction_data', 'cancel_transaction', 'mcp')
ORDER BY 1;

--
-- validate_vehicle: a refused vehicle is a result, not an error
--
CALL sandbox.reset_stats();
SELECT partner_svc.validate_vehicle('{"plate": "lj 12-ab", "country": "SI"}');
SELECT partner_svc.validate_vehicle('{"plate": "LJ 12-AB", "country": "si"}');
SELECT partner_svc.validate_vehicle('{"plate": "?", "country": "SI"}') -> 'error' ->> 'code';
SELECT partner_svc.validate_vehicle(NULL);
SELECT partner_svc.validate_vehicle('["LJ 12-AB"]');
SELECT method, route, status FROM sandbox.requests();

--
-- create_transaction: orders paid through the service's checkout
--
CREATE TEMP TABLE base AS SELECT $${
  "terms_and_privacy_accepted": true,
  "vehicles": [{"plate": "LJ TX-001", "country": "SI"}, {"plate": "W 77777", "country": "AT"}],
  "vignettes": [{"custom_id": "FT-1", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2030-01-01"},
                {"custom_id": "FT-2", "name": "Austria 10 days", "period": "10_days", "start_date": "2030-01-01"}],
  "send_payment_link": "email", "user": {"email": "tx@surface.test"}}$$::jsonb AS p;
CALL sandbox.reset_stats();
CREATE TEMP TABLE tx AS
SELECT r FROM base, partner_svc.create_transaction(p) r;
SELECT r ->> 'transaction_id' LIKE 'txn_%' AS txn, r -> 'order_has_been_paid' AS paid,
       r ->> 'checkout_status' AS checkout, r ->> 'payment_link' LIKE 'http%' AS link,
       r ->> 'send_payment_link' AS send,
       jsonb_path_query_array(r, '$.orders[*].custom_id') AS orders,
       jsonb_path_query_array(r, '$.orders[*].status') AS statuses
FROM tx;
SELECT method, route, status FROM sandbox.requests();
-- a payload the service refuses: the mapped error, with the service's code
SELECT sandbox.try($$SELECT partner_svc.create_transaction(p || '{"order_has_been_paid": true}') FROM base$$);
SELECT sandbox.try($$SELECT partner_svc.create_transaction(p) FROM base$$);
SELECT partner_svc.create_transaction(NULL);

--
-- transaction_status, transaction_fee, transaction_data
--
CALL sandbox.reset_stats();
SELECT partner_svc.transaction_status(r ->> 'transaction_id') FROM tx;
-- by the id of one of its orders
SELECT partner_svc.transaction_status(r #>> '{orders,0,id}') FROM tx;
SELECT f ->> 'transaction_id' = r ->> 'transaction_id' AS same, (f ->> 'amount')::numeric AS amount,
       round((f ->> 'fee')::numeric, 2) AS fee, round((f ->> 'total')::numeric, 2) AS total,
       f ->> 'currency' AS currency
FROM tx, partner_svc.transaction_fee(r ->> 'transaction_id') f;
SELECT d = r AS same_as_created FROM tx, partner_svc.transaction_data(r ->> 'transaction_id') d;
-- the foreign table reads the same object
CREATE SCHEMA ftx;
IMPORT FOREIGN SCHEMA orders LIMIT TO (transactions) FROM SERVER orders INTO ftx;
SELECT t.raw = (SELECT r FROM tx) AS same_as_table FROM ftx.transactions t
WHERE t.transaction_id = (SELECT r ->> 'transaction_id' FROM tx);
SET client_min_messages = warning;
DROP SCHEMA ftx CASCADE;
RESET client_min_messages;
SELECT method, route, status FROM sandbox.requests();
-- unknown ids are errors (404 transaction_not_found); transaction_data
-- takes a transaction id only
SELECT sandbox.try($$SELECT partner_svc.transaction_status('txn_000000000000')$$);
SELECT sandbox.try($$SELECT partner_svc.transaction_fee('txn_000000000000')$$);
SELECT sandbox.try($$SELECT partner_svc.transaction_data(r #>> '{orders,0,id}') FROM tx$$);
SELECT sandbox.try($$SELECT partner_svc.transaction_data('')$$);
SELECT partner_svc.transaction_status(NULL), partner_svc.transaction_fee(NULL),
       partner_svc.transaction_data(NULL), partner_svc.cancel_transaction(NULL);
-- a transaction the partner paid has no checkout: its status is NULL, its fee 0
CREATE TEMP TABLE paid AS
SELECT partner_svc.create_order($${"terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ TX-002", "country": "SI"}],
  "vignettes": [{"custom_id": "FT-PAID-1", "name": "Slovenia 1 day", "period": "1_day", "start_date": "2030-01-01"}]}$$) AS r;
SELECT partner_svc.transaction_status(r ->> 'transaction_id') IS NULL AS no_checkout,
       round((partner_svc.transaction_fee(r ->> 'transaction_id') ->> 'fee')::numeric, 2) AS fee
FROM paid;

--
-- cancel_transaction: an open checkout becomes FAILED, once
--
CALL sandbox.reset_stats();
SELECT c ->> 'checkout_status' AS checkout, c ->> 'payment_link' AS link,
       jsonb_path_query_array(c, '$.orders[*].status') AS statuses
FROM tx, partner_svc.cancel_transaction(r ->> 'transaction_id') c;
SELECT partner_svc.transaction_status(r ->> 'transaction_id') FROM tx;
SELECT regexp_replace(sandbox.try($$SELECT partner_svc.cancel_transaction(r ->> 'transaction_id') FROM tx$$), 'txn_[0-9a-f]+', 'txn_...');
SELECT regexp_replace(sandbox.try($$SELECT partner_svc.cancel_transaction(r ->> 'transaction_id') FROM paid$$), 'txn_[0-9a-f]+', 'txn_...');
SELECT sandbox.try($$SELECT partner_svc.cancel_transaction('txn_000000000000')$$);
SELECT method, route, status FROM sandbox.requests();
DO $$
DECLARE
  msg text; det text;
BEGIN
  PERFORM partner_svc.cancel_transaction(r ->> 'transaction_id') FROM paid;
EXCEPTION WHEN object_not_in_prerequisite_state THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%', regexp_replace(msg, 'txn_[0-9a-f]+', 'txn_...');
  RAISE NOTICE '%', det;
END $$;

--
-- lost answers: create_transaction never creates twice
--
-- the create is carried out but its answer is lost: the orders are found
-- by custom id, the transaction is read and returned; one create only
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/transaction/create", "kind": "drop_after_apply", "count": 1}');
SELECT r ->> 'recovered' AS recovered, r ->> 'checkout_status' AS checkout,
       r ->> 'payment_link' LIKE 'http%' AS link,
       jsonb_path_query_array(r, '$.orders[*].custom_id') AS orders
FROM base, partner_svc.create_transaction(jsonb_set(jsonb_set(p,
  '{vignettes,0,custom_id}', '"FT-DROP-1"'), '{vignettes,1,custom_id}', '"FT-DROP-2"')) r;
SELECT method, route, regexp_replace(path, 'txn_[0-9a-f]+', 'txn_...') AS path, status
FROM sandbox.requests();

-- the service did not process the create (503): sent again, without a
-- lookup
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/transaction/create", "kind": "error", "value": 503, "count": 1}');
SELECT r ? 'recovered' AS recovered, jsonb_path_query_array(r, '$.orders[*].custom_id') AS orders
FROM base, partner_svc.create_transaction(jsonb_set(p #- '{vignettes,1}',
  '{vignettes,0,custom_id}', '"FT-503-1"')) r;
SELECT method, route, path, status FROM sandbox.requests();

-- a lost answer and no custom id to look for: the outcome is unknown
-- (08006), the hint says how to check; nothing is sent again
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/transaction/create", "kind": "reset", "count": 1}');
DO $$
DECLARE
  st text; msg text; hint text;
BEGIN
  PERFORM partner_svc.create_transaction(p #- '{vignettes,1}' #- '{vignettes,0,custom_id}') FROM base;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  RAISE NOTICE 'SQLSTATE %: %', st, msg;
  RAISE NOTICE 'hint: %', hint;
END $$;
SELECT method, route, status FROM sandbox.requests();

-- a lost answer, and the custom id belongs to an order of another payload
-- (FT-1, made above): the order document shows nothing but the custom id
-- to tell orders apart (not the name), so that order's transaction is
-- taken for this one's (docs/functions.md)
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/transaction/create", "kind": "reset", "count": 1}');
DO $$
DECLARE
  st text; msg text; det text; r jsonb;
BEGIN
  SELECT partner_svc.create_transaction(jsonb_set(p #- '{vignettes,1}',
    '{vignettes,0,name}', '"another name"')) INTO r FROM base;
  RAISE NOTICE 'recovered: %, custom id %', r -> 'recovered', r #>> '{orders,0,custom_id}';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE 'SQLSTATE %: %', st, msg;
  RAISE NOTICE 'detail: ... %', substring(det FROM 'Orders with.*');
END $$;
SELECT method, route, path, status FROM sandbox.requests();

-- a cancel whose answer is lost: reading the transaction shows it happened
CREATE TEMP TABLE tx2 AS
SELECT r FROM base, partner_svc.create_transaction(jsonb_set(p #- '{vignettes,1}',
  '{vignettes,0,custom_id}', '"FT-CANCEL-1"')) r;
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/transaction/{id}/cancel", "kind": "drop_after_apply", "count": 1}');
SELECT c ->> 'checkout_status' AS checkout, c ->> 'transaction_id' = r ->> 'transaction_id' AS same
FROM tx2, partner_svc.cancel_transaction(r ->> 'transaction_id') c;
SELECT method, route, status FROM sandbox.requests();

--
-- mcp: JSON-RPC 2.0, the answer as it came
--
CALL sandbox.reset_stats();
SELECT partner_svc.mcp('{"jsonrpc": "2.0", "id": 1, "method": "initialize"}') #- '{result,protocolVersion}';
SELECT jsonb_path_query_array(partner_svc.mcp('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}'),
                              '$.result.tools[*].name') AS tools;
SELECT partner_svc.mcp(jsonb_build_object('jsonrpc', '2.0', 'id', 3, 'method', 'tools/call',
  'params', jsonb_build_object('name', 'order_status', 'arguments', jsonb_build_object('id', 'FT-1'))))
  -> 'result';
-- JSON-RPC errors are answers, not SQL errors
SELECT partner_svc.mcp('{"jsonrpc": "2.0", "id": 4, "method": "resources/list"}');
SELECT partner_svc.mcp('{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nope"}}') -> 'error';
SELECT sandbox.try($$SELECT partner_svc.mcp('"tools/list"')$$);
SELECT partner_svc.mcp(NULL);
SELECT method, route, status FROM sandbox.requests();
-- a lost answer: a read (tools/list) is asked again, a call is not
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/mcp", "kind": "reset", "count": 1}');
SELECT partner_svc.mcp('{"jsonrpc": "2.0", "id": 6, "method": "tools/list"}') -> 'id' AS id;
SELECT count(*) AS requests FROM sandbox.requests();
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/mcp", "kind": "reset", "count": 1}');
SELECT sandbox.try($$SELECT partner_svc.mcp('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "order_status", "arguments": {"id": "FT-1"}}}')$$);
SELECT count(*) AS requests FROM sandbox.requests();
CALL sandbox.clear_faults();

--
-- the server: the only one of service orders, or the one named
--
SELECT partner_svc.transaction_status(r ->> 'transaction_id', 'orders') FROM tx;
SELECT sandbox.try($$SELECT partner_svc.transaction_status('txn_1', 'movies')$$);

-- each route counts against its own row of the rate-limit table
SELECT method, route, "limit", resource IS NOT NULL AS per_resource
FROM partner_svc.rate_limits
WHERE server = 'orders' AND (route LIKE '/public/transaction/%' OR route IN
      ('/public/validate-vehicle', '/public/mcp'))
GROUP BY 1, 2, 3, 4 ORDER BY 2, 1;
