-- 50_fleet.sql: upgrade 0.1 -> 0.2, one partner quota for a fleet of nodes
-- (issue 14): the column "mode" at the end of partner_svc.rate_limits.  The
-- coordinator's table and function and the node's status are new in 0.2 and
-- come whole from sql/install/25_quota.sql, through the link 45_quota.sql
-- beside this file, so they are written once.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION partner_svc UPDATE" to load this file. \quit

-- partner_svc.rate_limits gains the node's mode as its last column
CREATE OR REPLACE VIEW @extschema@.rate_limits AS
  SELECT s.srvname AS server, r.method, r.route, r.resource, r."limit",
         r.used, r.in_flight, GREATEST(r."limit" - r.used, 0) AS available,
         r.frees_at, r.resets_at, r.blocked_until, r.dbid, r.serverid,
         (SELECT qs.mode FROM @extschema@.quota_status() qs) AS mode
  FROM @extschema@.rate_limits() r
  LEFT JOIN pg_catalog.pg_foreign_server s
    ON s.oid = r.serverid
   AND r.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                 WHERE d.datname = pg_catalog.current_database());
