-- partner_svc_sandbox_helpers--1.0--1.1.sql: 1.1 adds helpers that wait,
-- within a timeout, for what the sandbox's webhooks do to this database
-- (docs/testing-with-the-sandbox.md, "Waiting for webhooks"), and makes
-- sandbox.reset() and sandbox.reset_rate_limits() reset partner_svc's own
-- state for the servers that point at the sandbox ("Resets and
-- partner_svc's rate limiter").
--
-- Why they poll: the sandbox delivers webhooks from a thread of its own,
-- after the request that caused them has been answered, and the webhook
-- worker stores them in its own transactions.  A test cannot LISTEN for
-- them (psql shows notifications only between statements, and what it
-- prints is not stable), so these functions read partner_svc.webhook_events
-- and partner_svc.order_states again every 50 ms, each read with a new
-- snapshot (plpgsql in READ COMMITTED), until the rows are there or the
-- timeout has passed; then they raise an error that says what they saw.
-- Inside a REPEATABLE READ or SERIALIZABLE transaction they would never
-- see a new row, so they refuse to run there.
--
-- 1.0 was released with partner_svc 0.2 and is never edited: CREATE
-- EXTENSION runs it and then this script.

\echo Use "ALTER EXTENSION partner_svc_sandbox_helpers UPDATE TO '1.1'" to load this file. \quit

-- raises unless the caller's snapshots can see what the worker commits
CREATE FUNCTION @extschema@.check_can_wait() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'cannot wait for webhooks in a % transaction',
                    pg_catalog.upper(pg_catalog.current_setting('transaction_isolation'))
      USING ERRCODE = 'active_sql_transaction',
            DETAIL = 'Its snapshot never shows the rows the webhook worker commits meanwhile.',
            HINT = 'Wait outside the transaction, or in one that is READ COMMITTED.';
  END IF;
  IF pg_catalog.to_regclass('partner_svc.webhook_events') IS NULL THEN
    RAISE EXCEPTION 'partner_svc is not installed in this database'
      USING ERRCODE = 'undefined_table',
            HINT = 'Run CREATE EXTENSION partner_svc in the database named by partner_svc.worker.';
  END IF;
END $$;

-- Waits until partner_svc.webhook_events holds at least n deliveries (of
-- the order or transaction order_id, a unique_id, custom_id or
-- transaction_id, when given); returns how many it holds.
CREATE FUNCTION @extschema@.wait_for_webhooks(n integer, order_id text DEFAULT NULL,
                                              timeout interval DEFAULT '10 seconds')
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  deadline timestamptz := pg_catalog.clock_timestamp() + timeout;
  got bigint;
BEGIN
  PERFORM @extschema@.check_can_wait();
  LOOP
    SELECT pg_catalog.count(*) INTO got FROM partner_svc.webhook_events e
     WHERE order_id IS NULL OR e.unique_id = order_id OR e.custom_id = order_id
        OR e.transaction_id = order_id;
    IF got >= n THEN
      RETURN got;
    END IF;
    IF pg_catalog.clock_timestamp() >= deadline THEN
      RAISE EXCEPTION 'timed out after % waiting for % webhook deliveries%', timeout, n,
                      coalesce(' of ' || order_id, '')
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = pg_catalog.format('partner_svc.webhook_events holds %s of them.', got),
              HINT = 'Check partner_svc.webhook_status() and the sandbox''s attempt log (sandbox.control(''GET'', ''/_sandbox/orders/webhooks'')); with a frozen clock, a retry waits for sandbox.advance_clock().';
    END IF;
    PERFORM pg_catalog.pg_sleep(0.05);
  END LOOP;
END $$;

-- Waits until the webhooks have brought the order order_id (its
-- unique_id or custom_id) to status in partner_svc.order_states; returns
-- the status.  A status never moves down the rank of
-- partner_svc.webhook_status_rank(), so an order already past it fails at
-- once.
CREATE FUNCTION @extschema@.wait_for_order_status(order_id text, status text,
                                                  timeout interval DEFAULT '10 seconds')
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  deadline timestamptz := pg_catalog.clock_timestamp() + timeout;
  now_status text;
BEGIN
  PERFORM @extschema@.check_can_wait();
  LOOP
    SELECT s.status INTO now_status FROM partner_svc.order_states s
     WHERE s.unique_id = order_id OR s.custom_id = order_id
     ORDER BY s.updated_at DESC LIMIT 1;
    IF now_status = status THEN
      RETURN now_status;
    END IF;
    IF now_status IS NOT NULL
       AND partner_svc.webhook_status_rank(now_status) > partner_svc.webhook_status_rank(status) THEN
      RAISE EXCEPTION 'order % is already %, past %', order_id, now_status, status
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = 'An order''s status only moves up (partner_svc.webhook_status_rank()).';
    END IF;
    IF pg_catalog.clock_timestamp() >= deadline THEN
      RAISE EXCEPTION 'timed out after % waiting for order % to be %', timeout, order_id, status
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = CASE WHEN now_status IS NULL THEN 'partner_svc.order_states has no row for it.'
                            ELSE pg_catalog.format('Its status is %s.', now_status) END,
              HINT = 'Check partner_svc.webhook_status() and the sandbox''s attempt log (sandbox.control(''GET'', ''/_sandbox/orders/webhooks'')); with a frozen clock, the order moves only when sandbox.advance_clock() passes its next state.';
    END IF;
    PERFORM pg_catalog.pg_sleep(0.05);
  END LOOP;
END $$;

-- The partner_svc servers of this database whose base_url is the
-- sandbox's URL (case and a trailing slash aside).  Why the resets below
-- need them: partner_svc keeps a rate limiter, a response cache and row
-- estimates of its own, in shared memory, which a sandbox that forgot its
-- data and counters would otherwise contradict (a budget still spent, a
-- cached answer of an order the sandbox no longer has).
CREATE FUNCTION @extschema@.partner_servers() RETURNS SETOF name
LANGUAGE sql STABLE AS $$
  SELECT s.srvname
    FROM pg_catalog.pg_foreign_server s
    JOIN pg_catalog.pg_foreign_data_wrapper w ON w.oid = s.srvfdw
   WHERE w.fdwname = 'partner_svc'
     AND EXISTS (SELECT 1 FROM pg_catalog.pg_options_to_table(s.srvoptions) o
                  WHERE o.option_name = 'base_url'
                    AND pg_catalog.lower(pg_catalog.rtrim(o.option_value, '/'))
                        = pg_catalog.lower(@extschema@.url()))
   ORDER BY s.srvname
$$;

-- Resets partner_svc's state for those servers: the rate limiter's
-- counts and blocks, and with everything also the response cache (all of
-- it: it has no per-server reset) and the row estimates.  Does nothing
-- where partner_svc is not installed in this database, is older than
-- partner_svc.rate_limits_reset() (0.3), or is not preloaded (its state
-- lives in shared memory only then).
CREATE FUNCTION @extschema@.reset_partner_svc(everything boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  srv name;
  found_one boolean := false;
BEGIN
  IF pg_catalog.to_regprocedure('partner_svc.rate_limits_reset(name)') IS NULL
     OR pg_catalog.current_setting('shared_preload_libraries') !~ '(^|[\s,])"?partner_svc"?($|[\s,])' THEN
    RETURN;
  END IF;
  FOR srv IN SELECT * FROM @extschema@.partner_servers() LOOP
    found_one := true;
    PERFORM partner_svc.rate_limits_reset(srv);
    IF everything THEN
      PERFORM partner_svc.estimates_reset(srv);
    END IF;
  END LOOP;
  IF everything AND found_one THEN
    PERFORM partner_svc.cache_reset();
  END IF;
END $$;

-- 1.0's reset() and reset_rate_limits(), which told only the sandbox
CREATE OR REPLACE FUNCTION @extschema@.reset() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM @extschema@.control('POST', '/_sandbox/reset');
  PERFORM @extschema@.reset_partner_svc(true);
END $$;

CREATE OR REPLACE FUNCTION @extschema@.reset_rate_limits() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM @extschema@.control('POST', '/_sandbox/rate-limits/reset');
  PERFORM @extschema@.reset_partner_svc(false);
END $$;

REVOKE ALL ON FUNCTION @extschema@.partner_servers(), @extschema@.reset_partner_svc(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.check_can_wait(), @extschema@.wait_for_webhooks(integer, text, interval),
  @extschema@.wait_for_order_status(text, text, interval) FROM PUBLIC;
