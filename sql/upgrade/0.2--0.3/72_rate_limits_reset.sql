-- 72_rate_limits_reset.sql: partner_svc.rate_limits_reset() forgets the rate
-- limiter's counts and 429 blocks (src/shmem/ratelimit.c,
-- docs/ratelimit.md); the kit's sandbox.reset() calls it.
-- New in 0.3: as in sql/install/30_ratelimit.sql.

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

CREATE FUNCTION @extschema@.rate_limits_reset(server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'psvc_rl_rate_limits_reset'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.rate_limits_reset(pg_catalog.name)
IS 'forgets the rate limiter''s counts and 429 blocks of the partner account a server reaches with your user mapping and of the keys it used last, or with NULL of every key; returns how many keys had any (for tests: a sandbox that forgot its own counters)';

REVOKE ALL ON FUNCTION @extschema@.rate_limits_reset(pg_catalog.name) FROM PUBLIC;
