-- 62_reconcile.sql: order state that heals itself (the worker's
-- reconciler polls the status of orders and checkouts that webhooks left
-- behind, src/webhook/webhook_reconcile.c), and the retention of received
-- webhooks (src/webhook/webhook_prune.c); docs/webhooks.md#reconciliation,
-- docs/backups.md

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

ALTER TABLE @extschema@.order_states
  ADD COLUMN source text NOT NULL DEFAULT 'webhook' CHECK (source IN ('webhook', 'poll', 'created')),
  ADD COLUMN server name,
  ADD COLUMN created_by regrole,
  ADD COLUMN polled_at timestamptz;

COMMENT ON TABLE @extschema@.order_states
IS 'latest status of each order, from webhooks first, else from status polling; never moved backwards';

ALTER TABLE @extschema@.transactions
  ADD COLUMN source text NOT NULL DEFAULT 'webhook' CHECK (source IN ('webhook', 'poll', 'created')),
  ADD COLUMN server name,
  ADD COLUMN created_by regrole,
  ADD COLUMN polled_at timestamptz;

COMMENT ON TABLE @extschema@.transactions
IS 'latest checkout status of each transaction, from CHECKOUT_STATUS_CHANGED webhooks first, else from status polling';

CREATE INDEX ON @extschema@.webhook_events (received_at);

CREATE OR REPLACE FUNCTION @extschema@.webhook_status_rank(status text)
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
