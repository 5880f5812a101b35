-- 30_ratelimit.sql: the rate limiter's views and rules, and the reset of the
-- request stats (src/ratelimit*.c, docs/ratelimit.md); the stats view itself
-- is 31_stats.sql

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

CREATE FUNCTION @extschema@.rate_limit_rules(server pg_catalog.name,
    OUT route pg_catalog.text,
    OUT per_resource pg_catalog.bool,
    OUT "limit" pg_catalog.int4,
    OUT source pg_catalog.text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_rl_rules'
LANGUAGE C STRICT STABLE;

COMMENT ON FUNCTION @extschema@.rate_limit_rules(pg_catalog.name)
IS 'the rate limits requests of a server get: the table for its tier, with its rate_limits overrides';

CREATE FUNCTION @extschema@.rate_limits(
    OUT dbid pg_catalog.oid,
    OUT serverid pg_catalog.oid,
    OUT method pg_catalog.text,
    OUT route pg_catalog.text,
    OUT resource pg_catalog.text,
    OUT "limit" pg_catalog.int4,
    OUT used pg_catalog.int4,
    OUT in_flight pg_catalog.int4,
    OUT frees_at pg_catalog.timestamptz,
    OUT resets_at pg_catalog.timestamptz,
    OUT blocked_until pg_catalog.timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_rl_rate_limits'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.rate_limits AS
  SELECT s.srvname AS server, r.method, r.route, r.resource, r."limit",
         r.used, r.in_flight, GREATEST(r."limit" - r.used, 0) AS available,
         r.frees_at, r.resets_at, r.blocked_until, r.dbid, r.serverid,
         (SELECT qs.mode FROM @extschema@.quota_status() qs) AS mode
  FROM @extschema@.rate_limits() r
  LEFT JOIN pg_catalog.pg_foreign_server s
    ON s.oid = r.serverid
   AND r.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                 WHERE d.datname = pg_catalog.current_database());

COMMENT ON VIEW @extschema@.rate_limits
IS 'the rate limiter''s keys (server, route, resource id) with their limit, use in the current window and when budget frees';

CREATE FUNCTION @extschema@.stats_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_rl_stats_reset'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.stats_reset()
IS 'forgets partner_svc.stats (not the rate limiter''s budgets)';

CREATE FUNCTION @extschema@.rate_limits_reset(server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'psvc_rl_rate_limits_reset'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.rate_limits_reset(pg_catalog.name)
IS 'forgets the rate limiter''s counts and 429 blocks of the partner account a server reaches with your user mapping and of the keys it used last, or with NULL of every key; returns how many keys had any (for tests: a sandbox that forgot its own counters)';

GRANT SELECT ON @extschema@.rate_limits TO PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.stats_reset() FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.rate_limits_reset(pg_catalog.name) FROM PUBLIC;
