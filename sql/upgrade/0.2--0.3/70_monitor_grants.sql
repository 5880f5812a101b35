-- 70_monitor_grants.sql: members of pg_monitor may call webhook_status()
-- and quota_status() (sql/install/40_webhooks.sql, 25_quota.sql;
-- docs/privileges.md)

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION partner_svc UPDATE TO '0.3'" to load this file. \quit

GRANT EXECUTE ON FUNCTION @extschema@.webhook_status() TO pg_monitor;
GRANT EXECUTE ON FUNCTION @extschema@.quota_status() TO pg_monitor;
