-- 40_poll_worker.sql: the poll worker (src/webhook/webhook_poller.c).
-- order_states and transactions carry the partner account each row was
-- learned through (docs/privileges.md#tenancy), and webhook_status()
-- shows the state of polling: a new result type, so the function is made
-- again, with the grants it had (sql/install/40_webhooks.sql).

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION partner_svc UPDATE TO '0.4'" to load this file. \quit

ALTER TABLE @extschema@.order_states ADD COLUMN account text;
ALTER TABLE @extschema@.transactions ADD COLUMN account text;

DO $upgrade$
DECLARE
  grants text[];
  g text;
BEGIN
  -- the grants of the function as it is (pg_monitor's and any a DBA added)
  SELECT pg_catalog.array_agg(pg_catalog.format('GRANT EXECUTE ON FUNCTION @extschema@.webhook_status() TO %s%s',
           CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(r.rolname) END,
           CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END))
    INTO grants
    FROM pg_catalog.pg_proc p,
         LATERAL pg_catalog.aclexplode(p.proacl) a
         LEFT JOIN pg_catalog.pg_roles r ON r.oid = a.grantee
   WHERE p.oid = '@extschema@.webhook_status()'::pg_catalog.regprocedure
     AND a.grantee <> p.proowner AND a.privilege_type = 'EXECUTE';

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
    OUT stats_reset timestamptz,
    OUT polling text,
    OUT poll_lag interval,
    OUT created_waits bigint)
  RETURNS record
  AS 'MODULE_PATHNAME', 'psvc_webhook_status'
  LANGUAGE C STRICT VOLATILE;
  REVOKE ALL ON FUNCTION @extschema@.webhook_status() FROM PUBLIC;
  FOREACH g IN ARRAY COALESCE(grants, '{}')
  LOOP
    EXECUTE g;
  END LOOP;
END
$upgrade$;

COMMENT ON FUNCTION @extschema@.webhook_status()
IS 'state, address and counters of the webhook worker (since stats_reset, when it last started), and the state of the poll worker';
