--
-- webhooks: the SQL objects of the webhook worker (the worker itself is
-- tested end to end by test/scenario/*.t): tables and their constraints,
-- the status rank, webhook_status() with the listener off (the default,
-- no port in partner_svc.webhook_listener), and the settings.
--

-- the tables the worker writes
SELECT table_name, column_name, data_type, is_nullable, column_default IS NOT NULL AS has_default
FROM information_schema.columns
WHERE table_schema = 'partner_svc'
  AND table_name IN ('webhook_events', 'order_states', 'transactions', 'webhook_rejects')
ORDER BY table_name, ordinal_position;

SELECT conrelid::regclass AS "table", pg_get_constraintdef(oid) AS constraint
FROM pg_constraint
WHERE connamespace = 'partner_svc'::regnamespace AND contype IN ('p', 'u', 'c')
ORDER BY 1, 2;

SELECT indexrelid::regclass AS index FROM pg_index
WHERE indrelid = 'partner_svc.webhook_events'::regclass ORDER BY 1;

-- the environment is one of the two paths (terse: the row has a timestamp)
\set VERBOSITY terse
INSERT INTO partner_svc.webhook_events (environment, event_type, status, payload, dedupe_key)
VALUES ('staging', 'ORDER_STATUS_CHANGED', 'CREATED', '{}', '\x00');

-- the same dedupe key twice is refused (the worker uses ON CONFLICT)
INSERT INTO partner_svc.webhook_events (environment, event_type, status, payload, dedupe_key)
VALUES ('sandbox', 'ORDER_STATUS_CHANGED', 'CREATED', '{}', '\x01');
INSERT INTO partner_svc.webhook_events (environment, event_type, status, payload, dedupe_key)
VALUES ('production', 'ORDER_STATUS_CHANGED', 'CREATED', '{}', '\x01');
\set VERBOSITY default
TRUNCATE partner_svc.webhook_events;

-- the order of statuses: order_states and transactions only move up
SELECT s, partner_svc.webhook_status_rank(s)
FROM unnest(ARRAY['CREATED', 'PENDING', 'DEFERRED', 'ACTIVE', 'REFUNDED',
                  'SUCCESS', 'FAILED', 'EXPIRED', NULL]) AS s;

-- the worker runs but does not listen; it has not connected to a database
SELECT state, listen_address, port, database, pid IS NOT NULL AS has_pid,
       listening_since, requests, accepted, duplicates, rejected, unauthorized,
       too_large, not_found, bad_method, failed, timed_out, batches, max_batch,
       last_error
FROM partner_svc.webhook_status();
SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'partner_svc webhook worker';
-- the poll worker runs without a listener, connected to its database
-- (docs/webhooks.md#the-poll-worker); no creator waited for it
SELECT count(*) AS poll_workers FROM pg_stat_activity WHERE backend_type = 'partner_svc poll worker';
SELECT created_waits, polling IN ('idle', 'polling', 'lagging', 'off', 'failed') AS polling_known
FROM partner_svc.webhook_status();

-- the settings: reloaded with the configuration (SIGHUP), the database
-- and role only at server start; none can be SET in a session (each one's
-- unit and bounds are in the test gucs), but for the cap of a role's
-- deferred calls, which superusers set, also per role
SELECT name, setting, unit, context FROM pg_settings
WHERE name LIKE 'partner_svc.webhook%' OR name LIKE 'partner_svc.worker%'
   OR name LIKE 'partner_svc.deferred%' OR name LIKE 'partner_svc.poll%' ORDER BY name;
SET partner_svc.webhook_port = 8080;
SET partner_svc.worker_database = 'regression';
SET partner_svc.deferred_senders = 2;
ALTER SYSTEM SET partner_svc.webhook_port = 70000;
ALTER SYSTEM SET partner_svc.webhook_listen_address = '';
\set VERBOSITY sqlstate
ALTER SYSTEM SET partner_svc.webhook_max_body = 100;
-- the worker's lock timeout is always bounded
ALTER SYSTEM SET partner_svc.webhook_lock_timeout = 0;
\set VERBOSITY default
ALTER SYSTEM SET partner_svc.deferred_senders = 0;
-- a misspelt name is refused (the prefix is reserved), a wrong value too
SET partner_svc.webhook_max_bdy = '1MB';
ALTER SYSTEM SET partner_svc.webhook_request_timeout = 'ten';
-- one ALTER SYSTEM a setting: each is written alone
ALTER SYSTEM SET partner_svc.webhook_listen_address = '::1';
ALTER SYSTEM SET partner_svc.webhook_port = 8443;
ALTER SYSTEM SET partner_svc.webhook_max_body = '1MB';
ALTER SYSTEM SET partner_svc.webhook_max_body_in_flight = '32MB';
ALTER SYSTEM SET partner_svc.webhook_min_rate = 0;
ALTER SYSTEM SET partner_svc.webhook_header_timeout = '1min';
ALTER SYSTEM SET partner_svc.webhook_request_timeout = '5min';
ALTER SYSTEM SET partner_svc.webhook_lock_timeout = '2s';
ALTER SYSTEM SET partner_svc.webhook_max_connections_per_address = 0;
ALTER SYSTEM SET partner_svc.deferred_give_up = '2h';
ALTER SYSTEM SET partner_svc.poll_after = '25min';
ALTER SYSTEM SET partner_svc.webhook_keep_events = 0;
ALTER SYSTEM SET partner_svc.worker_role = 'partner_hooks';
ALTER SYSTEM RESET partner_svc.webhook_listen_address;
ALTER SYSTEM RESET partner_svc.webhook_port;
ALTER SYSTEM RESET partner_svc.webhook_max_body;
ALTER SYSTEM RESET partner_svc.webhook_max_body_in_flight;
ALTER SYSTEM RESET partner_svc.webhook_min_rate;
ALTER SYSTEM RESET partner_svc.webhook_header_timeout;
ALTER SYSTEM RESET partner_svc.webhook_request_timeout;
ALTER SYSTEM RESET partner_svc.webhook_lock_timeout;
ALTER SYSTEM RESET partner_svc.webhook_max_connections_per_address;
ALTER SYSTEM RESET partner_svc.deferred_give_up;
ALTER SYSTEM RESET partner_svc.poll_after;
ALTER SYSTEM RESET partner_svc.webhook_keep_events;
ALTER SYSTEM RESET partner_svc.worker_role;
-- the secrets: a list (two during a rotation); a value is never refused,
-- since the refusal would print it
ALTER SYSTEM SET partner_svc.webhook_secret = 'a-secret, the-one-before';
ALTER SYSTEM SET partner_svc.webhook_secret = ' , a-secret,,';
ALTER SYSTEM RESET partner_svc.webhook_secret;

-- pg_dump keeps the four tables and the two identity sequences
SELECT u.rel::regclass AS dumped, u.cond AS condition
FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(rel, cond)
WHERE e.extname = 'partner_svc' ORDER BY u.rel::regclass::text;

-- webhook_status() is for superusers unless granted; the secret is hidden
CREATE ROLE webhook_reader;
SELECT has_function_privilege('webhook_reader', 'partner_svc.webhook_status()', 'EXECUTE');
SET ROLE webhook_reader;
-- (the SQLSTATE only: 16 reworded PostgreSQL's own message)
\set VERBOSITY sqlstate
SHOW partner_svc.webhook_secret;
\set VERBOSITY default
RESET ROLE;
-- members of pg_monitor may call webhook_status() and quota_status()
GRANT pg_monitor TO webhook_reader;
SELECT has_function_privilege('webhook_reader', 'partner_svc.webhook_status()', 'EXECUTE') AS webhook_status,
       has_function_privilege('webhook_reader', 'partner_svc.quota_status()', 'EXECUTE') AS quota_status;
SET ROLE webhook_reader;
SELECT state FROM partner_svc.webhook_status();
SELECT mode FROM partner_svc.quota_status();
RESET ROLE;
DROP ROLE webhook_reader;
