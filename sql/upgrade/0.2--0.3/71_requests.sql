-- 71_requests.sql: the requests in flight of every backend, as
-- pg_stat_activity shows its queries (src/shmem/inflight.c,
-- docs/ratelimit.md#requests-in-flight)
-- New in 0.3: this file started as a copy of sql/install/55_requests.sql.

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION partner_svc UPDATE TO '0.3'" to load this file. \quit

CREATE FUNCTION @extschema@.requests(
    OUT pid pg_catalog.int4,
    OUT dbid pg_catalog.oid,
    OUT server pg_catalog.text,
    OUT route pg_catalog.text,
    OUT state pg_catalog.text,
    OUT started pg_catalog.timestamptz,
    OUT bytes pg_catalog.int8,
    OUT request pg_catalog.text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_inflight_requests'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.requests AS
  SELECT r.pid, d.datname AS database, r.server, r.route, r.state,
         r.started, r.bytes, r.request
  FROM @extschema@.requests() r
  LEFT JOIN pg_catalog.pg_database d ON d.oid = r.dbid;

COMMENT ON VIEW @extschema@.requests
IS 'the requests in flight of every backend: server, route template, state (waiting for budget, sending, receiving, backing off), start and bytes of the current attempt; the request''s path and query only for superusers and pg_read_all_stats';

GRANT SELECT ON @extschema@.requests TO PUBLIC;
