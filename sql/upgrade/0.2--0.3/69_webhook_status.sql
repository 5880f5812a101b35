-- 69_webhook_status.sql: webhook_status() reports when its counters
-- started (stats_reset); a new result type, so the function is made again
-- (sql/install/40_webhooks.sql; 70_monitor_grants.sql grants it to
-- pg_monitor)

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION partner_svc UPDATE TO '0.3'" to load this file. \quit

DROP FUNCTION @extschema@.webhook_status();

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
  OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_webhook_status'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.webhook_status()
IS 'state, address and counters of the webhook worker (since stats_reset, when it last started)';

REVOKE ALL ON FUNCTION @extschema@.webhook_status() FROM PUBLIC;
