-- orders: the project's shop.place_order() against the sandbox.
SELECT sandbox.reset();
-- nothing moves by itself: the test moves the clock
SELECT sandbox.freeze_clock();

-- a booking: one POST /public/orders, recorded locally
SELECT shop.place_order('LJ AB-123', 'B-1') LIKE 'ord\_%' AS booked;
SELECT plate FROM shop.bookings;
SELECT method, route, status FROM sandbox.requests();
SELECT method, route, count, status_2xx FROM sandbox.stats();
SELECT partner_svc.order_status('B-1', 'orders') AS status;

-- the state machine, without sleeping: a sandbox minute later the order is
-- PENDING, two more and it is ACTIVE
SELECT sandbox.advance_clock('1 minute');
SELECT partner_svc.order_status('B-1', 'orders') AS status;
SELECT sandbox.advance_clock('2 minutes');
SELECT partner_svc.order_status('B-1', 'orders') AS status;
SELECT (sandbox.clock() ->> 'frozen')::boolean AS frozen,
       (sandbox.clock() ->> 'advanced_ms')::bigint AS advanced_ms;

-- the service refuses the next create (one injected 400): the booking
-- fails and leaves no row behind
SELECT sandbox.add_fault('{"route": "POST /public/orders", "kind": "error", "value": 400, "count": 1}');
SELECT jsonb_array_length(sandbox.faults()) AS fault_rules;
\set VERBOSITY terse
SELECT shop.place_order('LJ CD-456', 'B-2');
\set VERBOSITY default
SELECT count(*) AS bookings FROM shop.bookings;
SELECT sandbox.clear_faults();
SELECT shop.place_order('LJ CD-456', 'B-3') IS NOT NULL AS booked_after_the_fault;
SELECT plate FROM shop.bookings ORDER BY plate;

-- the request log, filtered by route template
SELECT sandbox.reset_stats();
SELECT partner_svc.order_status('B-3', 'orders') AS status;
SELECT method, route, path, status FROM sandbox.requests('GET /public/orders/{id}/status');

-- a control route the sandbox refuses raises its message
SELECT sandbox.add_fault('{"kind": "nonsense"}');

-- the clock never goes back; reset lets it run again
SELECT sandbox.advance_clock('-1 second');
SELECT sandbox.reset();
SELECT (sandbox.clock() ->> 'frozen')::boolean AS frozen;
