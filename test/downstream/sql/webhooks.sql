-- webhooks: the partner's webhooks drive the shop's bookings.  The runner
-- points the sandbox's callbacks at the instance's webhook listener and
-- waits until it answers, so a test only has to wait for the deliveries
-- that its own steps cause (bounded waits: never a bare pg_sleep).
SELECT sandbox.reset();
-- after a reset the sandbox hands out the same order ids again (its seed is
-- the same): forget what the earlier tests' webhooks stored, or an old
-- order's ACTIVE row would stand for the new order
TRUNCATE partner_svc.webhook_events, partner_svc.order_states, partner_svc.transactions;
-- a frozen clock: the order moves only when the test moves the clock
SELECT sandbox.freeze_clock();

SELECT shop.place_order('LJ EF-789', 'W-1') LIKE 'ord\_%' AS booked;
-- the CREATED webhook is sent at once
SELECT sandbox.wait_for_order_status('W-1', 'CREATED');

-- a sandbox minute later the order is PENDING: the webhook moves the
-- booking (the shop's trigger on partner_svc.order_states)
SELECT sandbox.advance_clock('1 minute');
SELECT sandbox.wait_for_order_status('W-1', 'PENDING');
SELECT plate, status FROM shop.bookings WHERE plate = 'LJ EF-789';
SELECT sandbox.advance_clock('2 minutes');
SELECT sandbox.wait_for_order_status('W-1', 'ACTIVE');
SELECT plate, status FROM shop.bookings WHERE plate = 'LJ EF-789';

-- a minute after ACTIVE the confirmation (with its PDF) arrives: four
-- deliveries of this order in all
SELECT sandbox.advance_clock('1 minute');
SELECT sandbox.wait_for_webhooks(4, 'W-1');
SELECT event_type, status, custom_id, pdf_url IS NOT NULL AS has_pdf
  FROM partner_svc.webhook_events WHERE custom_id = 'W-1' ORDER BY id;
SELECT status, pdf_url IS NOT NULL AS has_pdf FROM partner_svc.order_states
 WHERE custom_id = 'W-1';

-- the waits are bounded: a timeout says what it saw (without the
-- helpers' line numbers)
\set SHOW_CONTEXT never
SELECT sandbox.wait_for_webhooks(5, 'W-1', '0.2 seconds');
SELECT sandbox.wait_for_order_status('no-such-order', 'ACTIVE', '0.2 seconds');
-- an order never goes back
SELECT sandbox.wait_for_order_status('W-1', 'PENDING');
-- a REPEATABLE READ snapshot would never see the worker's rows
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sandbox.wait_for_webhooks(1);
ROLLBACK;
