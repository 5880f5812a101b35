-- func_orders: the SQL functions of the order service: create_order,
-- validate_order, order_detail, order_status, cancel_pending,
-- cancel_deferred.  Each result is checked together with what the sandbox
-- received (sandbox.requests()).  Ids the service makes (ord_..., txn_...)
-- and links (they hold the sandbox's port) are only matched by pattern.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();
-- polling reads one order's status often: lift the per-order limits
CALL sandbox.set('{"rate_limit.GET /orders/{id}/status": 10000, "rate_limit.GET /orders/{id}": 10000}');

-- polls an order's status until it is want (at most about 10 s)
CREATE FUNCTION pg_temp.wait_status(id text, want text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  s text;
BEGIN
  FOR i IN 1..200 LOOP
    s := partner_svc.order_status(id);
    EXIT WHEN s = want;
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN s;
END $$;

SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result, p.prosecdef, p.provolatile, p.proisstrict
FROM pg_proc p
WHERE p.pronamespace = 'partner_svc'::regnamespace
  AND p.proname IN ('create_order', 'validate_order', 'order_detail', 'order_status',
                    'cancel_pending', 'cancel_deferred')
ORDER BY 1;

--
-- validate_order: a result, never an error, for valid and invalid payloads
--
CREATE TEMP TABLE base AS SELECT $${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ AB-123", "country": "SI"}],
  "vignettes": [{"custom_id": "FO-V-1", "name": "Slovenia 1 year", "period": "1_year",
                 "start_date": "2030-01-01"}]}$$::jsonb AS p;

CALL sandbox.reset_stats();
SELECT partner_svc.validate_order(p) FROM base;
SELECT partner_svc.validate_order(p - 'terms_and_privacy_accepted' - 'order_has_been_paid') FROM base;
SELECT partner_svc.validate_order('{"vehicles": []}');
SELECT partner_svc.validate_order(NULL);
SELECT method, route, status FROM sandbox.requests();

-- every rule of the sandbox's create/validate checks, one payload each
-- (content_type_invalid and body_invalid_json cannot happen: the functions
-- always send JSON); create_only: validate does not require the member
CREATE TEMP TABLE cases (code text, create_only bool, payload jsonb);
INSERT INTO cases SELECT c.code, c.create_only, c.payload FROM base, LATERAL (VALUES
  ('body_not_object', false, '[1]'::jsonb),
  ('unknown_field', false, p || '{"colour": "red"}'),
  ('terms_and_privacy_accepted_required', true, p - 'terms_and_privacy_accepted'),
  ('terms_and_privacy_accepted_invalid', false, p || '{"terms_and_privacy_accepted": "yes"}'),
  ('terms_not_accepted', false, p || '{"terms_and_privacy_accepted": false}'),
  ('order_has_been_paid_required', true, p - 'order_has_been_paid'),
  ('order_has_been_paid_invalid', false, p || '{"order_has_been_paid": 1}'),
  ('vehicles_required', false, p - 'vehicles'),
  ('vehicles_invalid', false, p || '{"vehicles": {}}'),
  ('vehicles_empty', false, p || '{"vehicles": []}'),
  ('vehicles_too_many', false, p || jsonb_build_object('vehicles',
     (SELECT jsonb_agg(jsonb_build_object('plate', 'LJ ' || i, 'country', 'SI')) FROM generate_series(1, 11) i))),
  ('vehicle_invalid', false, p || '{"vehicles": [{"plate": "LJ 1", "country": "SI", "colour": "red"}]}'),
  ('vehicle_plate_invalid', false, p || '{"vehicles": [{"plate": "L!", "country": "SI"}]}'),
  ('vehicle_country_invalid', false, p || '{"vehicles": [{"plate": "LJ 1", "country": "si"}]}'),
  ('vehicles_duplicate', false, p || '{"vehicles": [{"plate": "LJ 1", "country": "SI"}, {"plate": "lj 1", "country": "SI"}]}'),
  ('vignettes_required', false, p - 'vignettes'),
  ('vignettes_invalid', false, p || '{"vignettes": "1_year"}'),
  ('vignettes_empty', false, p || '{"vignettes": []}'),
  ('vignettes_too_many', false, p || jsonb_build_object('vignettes',
     (SELECT jsonb_agg(jsonb_build_object('custom_id', 'FO-M-' || i, 'name', 'n', 'period', '1_day',
                                          'start_date', '2030-01-01')) FROM generate_series(1, 11) i))),
  ('vignette_invalid', false, p || '{"vignettes": [7]}'),
  ('vignette_custom_id_invalid', false, jsonb_set(p, '{vignettes,0,custom_id}', '""')),
  ('vignette_custom_id_invalid', true, p #- '{vignettes,0,custom_id}'),
  ('vignette_name_invalid', false, p #- '{vignettes,0,name}'),
  ('vignette_period_invalid', false, jsonb_set(p, '{vignettes,0,period}', '"2_years"')),
  ('vignette_start_date_invalid', false, jsonb_set(p, '{vignettes,0,start_date}', '"2030-02-30"')),
  ('vignette_flex_invalid', false, jsonb_set(p, '{vignettes,0,flex}', '"yes"')),
  ('vignettes_duplicate_custom_id', false, jsonb_set(p, '{vignettes,1}', p->'vignettes'->0)),
  ('send_payment_link_not_allowed', false, p || '{"send_payment_link": "email"}'),
  ('send_payment_link_invalid', false, p || '{"order_has_been_paid": false, "send_payment_link": "fax"}'),
  ('allowed_payment_providers_not_allowed', false, p || '{"allowed_payment_providers": ["provider_a"]}'),
  ('allowed_payment_providers_invalid', false, p || '{"order_has_been_paid": false, "allowed_payment_providers": "provider_a"}'),
  ('allowed_payment_providers_empty', false, p || '{"order_has_been_paid": false, "allowed_payment_providers": []}'),
  ('allowed_payment_provider_unknown', false, p || '{"order_has_been_paid": false, "allowed_payment_providers": ["provider_z"]}'),
  ('allowed_payment_providers_not_unique', false, p || '{"order_has_been_paid": false, "allowed_payment_providers": ["provider_a", "provider_a"]}'),
  ('open_order_details_by_default_not_allowed', false, p || '{"open_order_details_by_default": true}'),
  ('open_order_details_by_default_invalid', false, p || '{"order_has_been_paid": false, "open_order_details_by_default": "yes"}'),
  ('user_invalid', false, p || '{"user": []}'),
  ('user_email_invalid', false, p || '{"user": {"email": "ana.example.com"}}'),
  ('user_phone_invalid', false, p || '{"user": {"phone": "040 123 456"}}'),
  ('subaccount_invalid', false, p || '{"subaccount": ""}'),
  ('extra_invalid', false, p || '{"extra": [1]}'),
  ('user_email_required', false, p || '{"order_has_been_paid": false, "send_payment_link": "email"}'),
  ('user_phone_required', false, p || '{"order_has_been_paid": false, "send_payment_link": "sms", "user": {"email": "a@b.c"}}')
) AS c(code, create_only, payload);

-- validate: {"valid": false, "error": {code, message}} with the rule's code
CALL sandbox.reset_stats();
SELECT c.code, v->'valid' AS valid, v->'error'->>'code' AS reported, v->'error' ? 'message' AS has_message
FROM cases c, LATERAL partner_svc.validate_order(c.payload) v
WHERE NOT c.create_only ORDER BY c.code;
SELECT method, route, status, count(*) FROM sandbox.requests() GROUP BY 1, 2, 3;

-- create: an error (22023) whose detail carries the same code; nothing made
CREATE TEMP TABLE refused (code text, state text, message text, detail text);
CALL sandbox.reset_stats();
DO $$
DECLARE
  c record;
  st text; msg text; det text;
BEGIN
  FOR c IN SELECT * FROM cases ORDER BY code, create_only LOOP
    BEGIN
      PERFORM partner_svc.create_order(c.payload);
      INSERT INTO refused VALUES (c.code, 'no error');
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
      INSERT INTO refused VALUES (c.code, st, msg, det);
    END;
  END LOOP;
END $$;
SELECT state, message, count(*) FROM refused GROUP BY 1, 2;
SELECT code FROM refused WHERE detail NOT LIKE 'The service reported error "' || code || '": %';
SELECT detail FROM refused WHERE code = 'terms_not_accepted';
SELECT method, route, status, count(*) FROM sandbox.requests() GROUP BY 1, 2, 3;

-- NULL in, NULL out, nothing sent; an empty id is refused before sending
CALL sandbox.reset_stats();
SELECT partner_svc.create_order(NULL) IS NULL AS create_null,
       partner_svc.order_detail(NULL) IS NULL AS detail_null,
       partner_svc.order_status(NULL) IS NULL AS status_null,
       partner_svc.cancel_pending(NULL) IS NULL AS cancel_null;
SELECT partner_svc.order_status('');
SELECT partner_svc.order_detail(repeat('x', 256));
SELECT count(*) AS requests FROM sandbox.requests();

--
-- create_order, unpaid: AWAITING_PAYMENT with a payment link; paid through
-- the sandbox's checkout, it goes CREATED, PENDING, ACTIVE, and the
-- provider's PDF confirmation shows in order_detail
--
CALL sandbox.set('{"orders.pending_after_min": 0.001, "orders.active_after_min": 0.001, "orders.pdf_after_min": 0.001}');
CALL sandbox.reset_stats();
SELECT partner_svc.create_order($${
  "terms_and_privacy_accepted": true, "order_has_been_paid": false,
  "vehicles": [{"plate": "LJ FL-001", "country": "SI"}, {"plate": "W 12345", "country": "AT"}],
  "vignettes": [{"custom_id": "FO-FLOW-1", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2020-01-01"}],
  "send_payment_link": "email", "user": {"email": "ana@example.com"}}$$) AS r \gset
SELECT :'r'::jsonb ->> 'transaction_id' LIKE 'txn_%' AS txn,
       :'r'::jsonb ->> 'payment_link' LIKE 'http://%/_sandbox/orders/checkout/' || (:'r'::jsonb ->> 'transaction_id') AS payment_link,
       :'r'::jsonb - 'transaction_id' - 'payment_link' #- '{orders,0,id}' AS rest;
SELECT method, route, path, status FROM sandbox.requests();
SELECT :'r'::jsonb ->> 'transaction_id' AS txid \gset

CREATE TEMP TABLE seen (n serial, status text);
INSERT INTO seen (status) SELECT partner_svc.order_status('FO-FLOW-1');
SELECT status FROM seen;
SELECT count(*) FROM sandbox.call('POST', '/_sandbox/orders/transactions/' || :'txid' || '/pay', NULL, 'sandbox-key');
DO $$
DECLARE
  s text;
  last text := 'AWAITING_PAYMENT';
BEGIN
  FOR i IN 1..200 LOOP
    s := partner_svc.order_status('FO-FLOW-1');
    IF s IS DISTINCT FROM last THEN
      INSERT INTO seen (status) VALUES (s);
      last := s;
    END IF;
    EXIT WHEN s = 'ACTIVE' AND
      partner_svc.order_detail('FO-FLOW-1') -> 'cars' -> 1 ->> 'pdf' IS NOT NULL;
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
-- every status seen is a later one of the life cycle, ending at ACTIVE
SELECT bool_and(coalesce(rank > prev, false)) AS in_order, max(rank) AS last_rank,
       (SELECT status FROM seen ORDER BY n DESC LIMIT 1) AS last_status
FROM (SELECT array_position(ARRAY['AWAITING_PAYMENT', 'CREATED', 'PENDING', 'ACTIVE'], status) AS rank,
             lag(array_position(ARRAY['AWAITING_PAYMENT', 'CREATED', 'PENDING', 'ACTIVE'], status), 1, 0)
               OVER (ORDER BY n) AS prev
      FROM seen) s;
SELECT d ->> 'custom_id' AS custom_id, d ->> 'status' AS status, d ->> 'email' AS email,
       d ->> 'provider_id' LIKE 'PRV-%' AS provider_id, d -> 'payment_link' AS payment_link,
       d ->> 'transaction_id' = :'txid' AS same_txn,
       jsonb_path_query_array(d, '$.cars[*].plate') AS plates,
       (SELECT bool_and(c ->> 'pdf' LIKE 'http://%/_sandbox/orders/pdf/' || (d ->> 'id') || '?car=%'
                        AND c ->> 'provider_id' LIKE 'CAR-%')
        FROM jsonb_array_elements(d -> 'cars') c) AS pdf_confirmations
FROM partner_svc.order_detail('FO-FLOW-1') d;
SELECT DISTINCT method, route, path, status FROM sandbox.requests() WHERE method = 'GET' ORDER BY 2;

--
-- cancel_pending: a PENDING order is refunded; a second cancel is
-- refused with 55000 naming the state the order is in
--
CALL sandbox.set('{"orders.pending_after_min": 0, "orders.active_after_min": 100000, "orders.deferred_active_after_min": 100000}');
SELECT partner_svc.create_order($${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ PE-001", "country": "SI"}],
  "vignettes": [{"custom_id": "FO-PEND-1", "name": "Slovenia 10 days", "period": "10_days", "start_date": "2020-01-01"}]}$$)
  #> '{orders,0,custom_id}' AS created;
SELECT pg_temp.wait_status('FO-PEND-1', 'PENDING');
CALL sandbox.reset_stats();
SELECT r ->> 'custom_id' AS custom_id, r ->> 'status' AS status, r ->> 'id' LIKE 'ord_%' AS id
FROM partner_svc.cancel_pending('FO-PEND-1') r;
SELECT partner_svc.order_status('FO-PEND-1');
SELECT partner_svc.cancel_pending('FO-PEND-1');
SELECT sandbox.sqlstate_of($$SELECT partner_svc.cancel_pending('FO-PEND-1')$$);
SELECT method, route, path, status FROM sandbox.requests() ORDER BY seq LIMIT 4;

--
-- cancel_deferred: a start date in the future makes the order DEFERRED
--
SELECT partner_svc.create_order($${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ DE-001", "country": "SI"}],
  "vignettes": [{"custom_id": "FO-DEF-1", "name": "Slovenia 1 month", "period": "1_month", "start_date": "2099-06-01"}]}$$)
  #> '{orders,0,custom_id}' AS created;
SELECT pg_temp.wait_status('FO-DEF-1', 'DEFERRED');
CALL sandbox.reset_stats();
SELECT partner_svc.cancel_pending('FO-DEF-1');
SELECT partner_svc.cancel_deferred('FO-DEF-1') ->> 'status' AS status;
SELECT partner_svc.cancel_deferred('FO-DEF-1');
SELECT method, route, status FROM sandbox.requests();

-- unknown orders: 404 order_not_found is an error (P0002)
CALL sandbox.reset_stats();
SELECT partner_svc.order_detail('FO-NONE');
SELECT sandbox.sqlstate_of($$SELECT partner_svc.order_status('FO-NONE')$$) AS status,
       sandbox.sqlstate_of($$SELECT partner_svc.cancel_pending('FO-NONE')$$) AS cancel_pending,
       sandbox.sqlstate_of($$SELECT partner_svc.cancel_deferred('FO-NONE')$$) AS cancel_deferred;
SELECT method, route, path, status FROM sandbox.requests();

-- a custom id twice: 409 custom_id_exists → 55000; validate reports it
SELECT partner_svc.validate_order(jsonb_set(p, '{vignettes,0,custom_id}', '"FO-PEND-1"')) FROM base;
SELECT partner_svc.create_order(jsonb_set(p, '{vignettes,0,custom_id}', '"FO-PEND-1"')) FROM base;
SELECT sandbox.sqlstate_of($$SELECT partner_svc.create_order(jsonb_set(p, '{vignettes,0,custom_id}', '"FO-PEND-1"')) FROM base$$);

--
-- lost answers: create_order never creates twice
--
-- the create is carried out but its answer is lost: the orders are found
-- by custom id and returned; exactly one create reached the service
CALL sandbox.set('{"orders.pending_after_min": 100000}');
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/orders", "kind": "drop_after_apply", "count": 1}');
SELECT r - 'transaction_id' #- '{orders,0,id}' #- '{orders,1,id}' AS result,
       r ->> 'transaction_id' LIKE 'txn_%' AS txn
FROM partner_svc.create_order($${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ DR-001", "country": "SI"}],
  "vignettes": [{"custom_id": "FO-DROP-1", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2030-01-01"},
                {"custom_id": "FO-DROP-2", "name": "Slovenia 1 day", "period": "1_day", "start_date": "2030-01-01"}]}$$) r;
SELECT method, route, path, status FROM sandbox.requests();
SELECT custom_id, status FROM orders WHERE custom_id LIKE 'FO-DROP-%' ORDER BY 1;

-- the same with a service that fills only the members the order document
-- shows (knob orders.unshown_null: transaction_id, name, period and
-- start_date of the order detail are null): the orders found by custom id
-- are still recognised as the lost create's, and nothing is sent twice
CALL sandbox.set('{"orders.unshown_null": 1}');
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/orders", "kind": "drop_after_apply", "count": 1}');
SELECT r #- '{orders,0,id}' AS result
FROM partner_svc.create_order($${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ DR-003", "country": "SI"}],
  "vignettes": [{"custom_id": "FO-DROP-3", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2030-01-01"}]}$$) r;
SELECT method, route, path, status FROM sandbox.requests();
CALL sandbox.set('{"orders.unshown_null": 0}');

-- the service did not process the create (503): sent again, without a
-- lookup
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/orders", "kind": "error", "value": 503, "count": 1}');
SELECT r -> 'orders' -> 0 ->> 'custom_id' AS custom_id, r ? 'recovered' AS recovered
FROM base, partner_svc.create_order(jsonb_set(p, '{vignettes,0,custom_id}', '"FO-503-1"')) r;
SELECT method, route, path, status FROM sandbox.requests();

-- with partner_svc.max_retries = 0 it is not sent again: the 503 is the error
SET partner_svc.max_retries = 0;
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/orders", "kind": "error", "value": 503, "count": 1}');
SELECT partner_svc.create_order(jsonb_set(p, '{vignettes,0,custom_id}', '"FO-503-2"')) FROM base;
SELECT method, route, path, status FROM sandbox.requests();
RESET partner_svc.max_retries;

-- a lost answer and no custom id to look for: the outcome is unknown
-- (08006), and the hint says how to check; nothing is sent again
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/orders", "kind": "reset", "count": 1}');
DO $$
DECLARE
  st text; msg text; det text; hint text;
BEGIN
  PERFORM partner_svc.create_order(p #- '{vignettes,0,custom_id}') FROM base;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                          det = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
  RAISE NOTICE 'SQLSTATE %: %', st, msg;
  RAISE NOTICE 'detail ends: %', right(det, 42);
  RAISE NOTICE 'hint: %', hint;
END $$;
SELECT method, route, status FROM sandbox.requests();

-- a lost answer, and the custom id belongs to an earlier order (here the
-- service had refused the payload with 409 custom_id_exists): the order
-- document shows nothing but the custom id to tell orders apart, so the
-- order found is taken for this create's (docs/functions.md)
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/orders", "kind": "reset", "count": 1}');
DO $$
DECLARE
  st text; msg text; det text; hint text; r jsonb;
BEGIN
  SELECT partner_svc.create_order(jsonb_set(p, '{vignettes,0,custom_id}', '"FO-PEND-1"')) INTO r FROM base;
  RAISE NOTICE 'recovered: %, custom id %', r -> 'recovered', r #>> '{orders,0,custom_id}';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                          det = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
  RAISE NOTICE 'SQLSTATE %: %', st, msg;
  RAISE NOTICE 'detail: ... %', substring(det FROM 'Orders with.*');
  RAISE NOTICE 'hint: %', hint;
END $$;
SELECT method, route, path, status FROM sandbox.requests();

-- a request that times out is carried out later, after the lookup found
-- nothing and the create was sent again: the service refuses the second
-- arrival (409 custom_id_exists), whichever it is, and create_order
-- returns the one order
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/orders", "kind": "latency", "value": 2000, "count": 1}');
SET partner_svc.request_timeout = '300ms';
SELECT r #>> '{orders,0,custom_id}' AS custom_id, r #>> '{orders,0,status}' AS status
FROM base, partner_svc.create_order(jsonb_set(p, '{vignettes,0,custom_id}', '"FO-LATE-1"')) r;
RESET partner_svc.request_timeout;
DO $$
BEGIN
  FOR i IN 1..100 LOOP
    EXIT WHEN (SELECT count(*) FROM sandbox.requests() WHERE method = 'POST') >= 2;
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT status, count(*) FROM sandbox.requests() WHERE method = 'POST' GROUP BY 1 ORDER BY 1;
SELECT count(*) AS orders FROM orders WHERE custom_id = 'FO-LATE-1';

-- a cancel whose answer is lost: reading the status shows it happened
CALL sandbox.set('{"orders.pending_after_min": 0}');
SELECT partner_svc.create_order(jsonb_set(p, '{vignettes,0}',
  '{"custom_id": "FO-PEND-2", "name": "Slovenia 1 day", "period": "1_day", "start_date": "2020-01-01"}'))
  #> '{orders,0,custom_id}' AS created FROM base;
SELECT pg_temp.wait_status('FO-PEND-2', 'PENDING');
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /public/orders/{id}/cancel-pending", "kind": "drop_after_apply", "count": 1}');
SELECT partner_svc.cancel_pending('FO-PEND-2') - 'id' AS result;
SELECT method, route, path, status FROM sandbox.requests();

--
-- which server: the only one of the service, or the one named
--
CALL sandbox.reset_stats();
SELECT partner_svc.order_status('FO-PEND-1', 'orders');
SELECT partner_svc.order_status('FO-PEND-1', server => 'movies');
SELECT partner_svc.order_status('FO-PEND-1', 'no_such_server');
CREATE SERVER orders_premium FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url', tier 'premium');
CREATE USER MAPPING FOR CURRENT_USER SERVER orders_premium OPTIONS (api_key 'premium-key');
SELECT partner_svc.order_status('FO-PEND-1');
-- each key is its own partner: the premium partner has no such order
SELECT partner_svc.order_status('FO-PEND-1', 'orders_premium');
SELECT partner_svc.validate_order(p, 'orders_premium') FROM base;
DROP SERVER orders_premium CASCADE;
SELECT method, route, path, status FROM sandbox.requests();

-- the caller needs USAGE on the server (42501), nothing is sent without it
CREATE ROLE regress_fo_user;
GRANT USAGE ON SCHEMA partner_svc TO regress_fo_user;
CALL sandbox.reset_stats();
SET ROLE regress_fo_user;
SELECT partner_svc.order_status('FO-PEND-1');
SELECT sandbox.sqlstate_of($$SELECT partner_svc.create_order('{}')$$);
RESET ROLE;
GRANT USAGE ON FOREIGN SERVER orders TO regress_fo_user;
SET ROLE regress_fo_user;
SELECT partner_svc.order_status('FO-PEND-1');
RESET ROLE;
SELECT method, route, path, status FROM sandbox.requests();
REVOKE ALL ON FOREIGN SERVER orders FROM regress_fo_user;
REVOKE ALL ON SCHEMA partner_svc FROM regress_fo_user;
DROP ROLE regress_fo_user;

CALL sandbox.clear_faults();
CALL sandbox.set('{"rate_limit.GET /orders/{id}/status": null, "rate_limit.GET /orders/{id}": null}');
CALL sandbox.set('{"orders.pending_after_min": 1, "orders.active_after_min": 2, "orders.deferred_active_after_min": 5, "orders.pdf_after_min": 1}');
