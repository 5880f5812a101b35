-- 31_stats.sql: the request stats per server and route, with the answers of
-- the response cache (src/shmem/ratelimit_views.c, docs/ratelimit.md).  The
-- update 0.2 -> 0.3 drops the 0.2 view and function and runs this file
-- again (sql/upgrade/0.2--0.3/41_stats.sql links here).

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

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

GRANT SELECT ON @extschema@.stats TO PUBLIC;
