-- 40_cache.sql (0.2 -> 0.3): the response cache (sql/install/35_cache.sql)
-- and the columns cache_hits and cache_misses of partner_svc.stats
-- (sql/install/30_ratelimit.sql): the view and its function are made again,
-- since a function's result columns cannot be changed in place.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION partner_svc UPDATE TO '0.3'" to load this file. \quit

DROP VIEW @extschema@.stats;
DROP FUNCTION @extschema@.stats();

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

CREATE FUNCTION @extschema@.cache_reset()
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'psvc_cache_reset'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.cache_reset()
IS 'empties the response cache of the whole server and zeroes its counters; returns the number of entries forgotten';

CREATE FUNCTION @extschema@.cache_usage(
    OUT size_limit pg_catalog.int8,
    OUT shared_bytes pg_catalog.int8,
    OUT bytes_used pg_catalog.int8,
    OUT bytes_cached pg_catalog.int8,
    OUT entries pg_catalog.int8,
    OUT max_entries pg_catalog.int4,
    OUT max_entry_bytes pg_catalog.int8,
    OUT hits pg_catalog.int8,
    OUT misses pg_catalog.int8,
    OUT stores pg_catalog.int8,
    OUT evictions pg_catalog.int8,
    OUT not_stored pg_catalog.int8,
    OUT revalidated pg_catalog.int8,
    OUT reset_at pg_catalog.timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_cache_usage'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.cache_usage AS
  SELECT * FROM @extschema@.cache_usage();

COMMENT ON VIEW @extschema@.cache_usage
IS 'the response cache: its memory (partner_svc.cache_size, what it took, what its entries hold), entries, and hits, misses, stores, evictions and revalidations since cache_reset()';

GRANT SELECT ON @extschema@.cache_usage TO PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.cache_reset() FROM PUBLIC;
