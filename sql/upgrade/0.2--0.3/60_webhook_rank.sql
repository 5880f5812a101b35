-- 60_webhook_rank.sql: a checkout that FAILED and then succeeded is
-- SUCCESS (src/webhook/webhook_store.c, status_moves; docs/webhooks.md)

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

CREATE OR REPLACE FUNCTION @extschema@.webhook_status_rank(status text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE status
  WHEN 'CREATED' THEN 1
  WHEN 'PENDING' THEN 2
  WHEN 'DEFERRED' THEN 2
  WHEN 'ACTIVE' THEN 3
  WHEN 'REFUNDED' THEN 4
  WHEN 'FAILED' THEN 2
  WHEN 'SUCCESS' THEN 3
  ELSE 0
END;
