-- 30_ratelimit.sql: the rate limiter's views, its rules and the request stats
-- (src/ratelimit*.c, docs/ratelimit.md)

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

CREATE FUNCTION @extschema@.stats(
    OUT dbid pg_catalog.oid,
    OUT serverid pg_catalog.oid,
    OUT method pg_catalog.text,
    OUT route pg_catalog.text,
    OUT requests pg_catalog.int8,
    OUT retries pg_catalog.int8,
    OUT ok pg_catalog.int8,
    OUT client_errors pg_catalog.int8,
    OUT rate_limited pg_catalog.int8,
    OUT server_errors pg_catalog.int8,
    OUT other_status pg_catalog.int8,
    OUT failures pg_catalog.int8,
    OUT bytes_sent pg_catalog.int8,
    OUT bytes_received pg_catalog.int8,
    OUT total_time pg_catalog.float8,
    OUT max_time pg_catalog.float8,
    OUT limiter_waits pg_catalog.int8,
    OUT limiter_wait_time pg_catalog.float8,
    OUT cache_hits pg_catalog.int8,
    OUT cache_misses pg_catalog.int8,
    OUT stats_since pg_catalog.timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_rl_stats'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.stats AS
  SELECT s.srvname AS server, st.method, st.route, st.requests, st.retries,
         st.ok, st.client_errors, st.rate_limited, st.server_errors,
         st.other_status, st.failures, st.bytes_sent, st.bytes_received,
         st.total_time, st.max_time,
         CASE WHEN st.requests > 0 THEN st.total_time / st.requests END AS mean_time,
         st.limiter_waits, st.limiter_wait_time, st.cache_hits,
         st.cache_misses, st.stats_since,
         st.dbid, st.serverid
  FROM @extschema@.stats() st
  LEFT JOIN pg_catalog.pg_foreign_server s
    ON s.oid = st.serverid
   AND st.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                  WHERE d.datname = pg_catalog.current_database());

COMMENT ON VIEW @extschema@.stats
IS 'HTTP requests per server and route since the last stats_reset(): attempts, retries, outcomes by class, bytes, time, waits for the rate limiter, answers of the response cache';

CREATE FUNCTION @extschema@.stats_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_rl_stats_reset'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.stats_reset()
IS 'forgets partner_svc.stats (not the rate limiter''s budgets)';

GRANT SELECT ON @extschema@.rate_limits, @extschema@.stats TO PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.stats_reset() FROM PUBLIC;
