-- 40_webhooks.sql: what the webhook worker writes (webhook_events,
-- order_states, transactions, webhook_rejects) and how to watch it
-- (webhook_status()).  The worker (src/webhook/webhook_worker.c) inserts with the
-- statements of src/webhook/webhook_store.c; keep the two in step.

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

-- Every accepted delivery, once.  dedupe_key is sha256(environment, NUL,
-- body): a retried delivery (same body) conflicts on it and is not stored
-- again.
CREATE TABLE @extschema@.webhook_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  received_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
  environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
  event_type text NOT NULL,
  status text NOT NULL,
  unique_id text,
  custom_id text,
  transaction_id text,
  pdf_url text,
  payload jsonb NOT NULL,
  dedupe_key bytea NOT NULL UNIQUE
);
CREATE INDEX ON @extschema@.webhook_events (unique_id);
CREATE INDEX ON @extschema@.webhook_events (transaction_id);
-- the worker deletes rows older than keep_events of partner_svc.worker_tasks
CREATE INDEX ON @extschema@.webhook_events (received_at);

COMMENT ON TABLE @extschema@.webhook_events
IS 'every webhook delivery the worker accepted, once (retries of the same body are not stored again)';

-- Latest known status of each order.  A status only ever moves up in
-- CREATED < PENDING, DEFERRED < ACTIVE < EXPIRED < REFUNDED, so a late
-- retry of an older event changes nothing; pdf_url, once known, is kept.
--
-- source says who told the status: 'webhook', 'poll' (the worker's
-- reconciler read it with GET /public/orders/{id}/status) or 'created'
-- (the answer of create_order or create_transaction, before any webhook).
-- server and created_by name the server and role of a create (the
-- reconciler polls with that role's user mapping); created_by is the
-- role's OID (regrole: a renamed role keeps its orders, a dropped one is
-- never taken for a new role of its name); polled_at is the last
-- time the reconciler read the status (docs/webhooks.md#reconciliation).
-- account is the partner account the row was learned through (a digest
-- of the base URL and the API key, as partner_svc.rate_limits shows it),
-- NULL for a row only webhooks told: polling writes only rows of the
-- account it polls through, and a create never takes over another
-- account's row (docs/privileges.md#tenancy).
CREATE TABLE @extschema@.order_states (
  unique_id text PRIMARY KEY,
  custom_id text,
  status text NOT NULL,
  pdf_url text,
  updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
  source text NOT NULL DEFAULT 'webhook' CHECK (source IN ('webhook', 'poll', 'created')),
  server name,
  created_by regrole,
  polled_at timestamptz,
  account text
);

COMMENT ON TABLE @extschema@.order_states
IS 'latest status of each order, from webhooks first, else from status polling; never moved backwards';

-- Latest checkout status of each transaction (CREATED < SUCCESS, FAILED),
-- with the orders its last webhook listed.
-- source, server, created_by, polled_at and account as in order_states.
CREATE TABLE @extschema@.transactions (
  transaction_id text PRIMARY KEY,
  status text NOT NULL,
  order_ids text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
  source text NOT NULL DEFAULT 'webhook' CHECK (source IN ('webhook', 'poll', 'created')),
  server name,
  created_by regrole,
  polled_at timestamptz,
  account text
);

COMMENT ON TABLE @extschema@.transactions
IS 'latest checkout status of each transaction, from CHECKOUT_STATUS_CHANGED webhooks first, else from status polling';

-- Deliveries answered 400: not JSON, or not one of the three events.  The
-- worker deletes rows older than keep_rejects and keeps at most
-- max_rejects rows (partner_svc.worker_tasks), oldest deleted first.
CREATE TABLE @extschema@.webhook_rejects (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  received_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
  environment text NOT NULL,
  reason text NOT NULL,
  body_bytes integer NOT NULL,
  body text NOT NULL
);

COMMENT ON TABLE @extschema@.webhook_rejects
IS 'webhook deliveries answered 400, with the reason and the body (truncated to 8 kB)';

-- The order of statuses; a status moves only to a higher rank.  The worker
-- applies the table of moves in src/webhook/webhook_store.c (status_moves); these
-- ranks give the same order, for readers of order_states and transactions.
-- Unknown statuses never get here (the worker answers them 400).
CREATE FUNCTION @extschema@.webhook_status_rank(status text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE status
  WHEN 'CREATED' THEN 1
  WHEN 'PENDING' THEN 2
  WHEN 'DEFERRED' THEN 2
  WHEN 'ACTIVE' THEN 3
  WHEN 'EXPIRED' THEN 4
  WHEN 'REFUNDED' THEN 5
  WHEN 'FAILED' THEN 2
  WHEN 'SUCCESS' THEN 3
  ELSE 0
END;

COMMENT ON FUNCTION @extschema@.webhook_status_rank(text)
IS 'rank of an order or checkout status: order_states and transactions only move to a higher rank';

CREATE FUNCTION @extschema@.webhook_status(
  OUT state text,
  OUT listen_address text,
  OUT port integer,
  OUT database text,
  OUT pid integer,
  OUT listening_since timestamptz,
  OUT requests bigint,
  OUT accepted bigint,
  OUT duplicates bigint,
  OUT rejected bigint,
  OUT unauthorized bigint,
  OUT too_large bigint,
  OUT not_found bigint,
  OUT bad_method bigint,
  OUT failed bigint,
  OUT timed_out bigint,
  OUT batches bigint,
  OUT max_batch integer,
  OUT last_error text,
  OUT stats_reset timestamptz,
  OUT polling text,
  OUT poll_lag interval,
  OUT created_waits bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_webhook_status'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.webhook_status()
IS 'state, address and counters of the webhook worker (since stats_reset, when it last started), and the state of the poll worker';

REVOKE ALL ON FUNCTION @extschema@.webhook_status() FROM PUBLIC;
-- monitoring roles read the worker's state as they read pg_stat_activity
GRANT EXECUTE ON FUNCTION @extschema@.webhook_status() TO pg_monitor;

-- Backups: the four tables hold data the partner will not send again, so
-- pg_dump must keep their rows (an extension's tables are otherwise dumped
-- as CREATE EXTENSION only), and the identity sequences their positions.
SELECT pg_catalog.pg_extension_config_dump('@extschema@.webhook_events', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.order_states', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.transactions', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.webhook_rejects', '');
SELECT pg_catalog.pg_extension_config_dump(
  pg_catalog.pg_get_serial_sequence('@extschema@.webhook_events', 'id')::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump(
  pg_catalog.pg_get_serial_sequence('@extschema@.webhook_rejects', 'id')::pg_catalog.regclass, '');
