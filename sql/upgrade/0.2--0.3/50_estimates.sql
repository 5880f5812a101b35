-- 50_estimates.sql: row estimates learned from complete scans
-- (src/shmem/estimates.c, docs/estimates.md)

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

CREATE FUNCTION @extschema@.estimates(
    OUT dbid pg_catalog.oid,
    OUT serverid pg_catalog.oid,
    OUT route pg_catalog.text,
    OUT kind pg_catalog.text,
    OUT columns pg_catalog.text,
    OUT key pg_catalog.text,
    OUT rows pg_catalog.float8,
    OUT scans pg_catalog.int8,
    OUT last_rows pg_catalog.int8,
    OUT last_scan pg_catalog.timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_est_entries'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.estimates AS
  SELECT s.srvname AS server, e.route, e.kind, e.columns, e.key, e.rows,
         e.scans, e.last_rows, e.last_scan, e.dbid, e.serverid
  FROM @extschema@.estimates() e
  LEFT JOIN pg_catalog.pg_foreign_server s
    ON s.oid = e.serverid
   AND e.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                 WHERE d.datname = pg_catalog.current_database());

COMMENT ON VIEW @extschema@.estimates
IS 'row estimates learned from complete scans, per server, list route and key value, and their average per route';

CREATE FUNCTION @extschema@.estimates_reset(server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_est_reset'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.estimates_reset(pg_catalog.name)
IS 'forgets the learned row estimates of one server of this database, or with NULL of every server';

GRANT SELECT ON @extschema@.estimates TO PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.estimates_reset(pg_catalog.name) FROM PUBLIC;
