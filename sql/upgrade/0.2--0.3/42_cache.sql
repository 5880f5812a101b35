-- 35_cache.sql: the shared response cache (src/shmem/cache.c, docs/cache.md);
-- its hits and misses per route are columns of partner_svc.stats
-- (31_stats.sql)

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

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
    OUT decoded_hits pg_catalog.int8,
    OUT reset_at pg_catalog.timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_cache_usage'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.cache_usage AS
  SELECT * FROM @extschema@.cache_usage();

COMMENT ON VIEW @extschema@.cache_usage
IS 'the response cache: its memory (partner_svc.cache_size, what it took, what its entries hold), entries, and hits (decoded_hits: served with their decoded page), misses, stores, evictions and revalidations since cache_reset()';

GRANT SELECT ON @extschema@.cache_usage TO PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.cache_reset() FROM PUBLIC;
