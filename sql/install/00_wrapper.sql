-- 00_wrapper.sql: the foreign-data wrapper, its handler and validator

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

CREATE FUNCTION @extschema@.fdw_handler()
RETURNS pg_catalog.fdw_handler
AS 'MODULE_PATHNAME', 'psvc_fdw_handler'
LANGUAGE C STRICT;

COMMENT ON FUNCTION @extschema@.fdw_handler()
IS 'handler of the partner_svc foreign-data wrapper';

CREATE FUNCTION @extschema@.fdw_validator(pg_catalog.text[], pg_catalog.oid)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_options_validator'
LANGUAGE C STRICT;

COMMENT ON FUNCTION @extschema@.fdw_validator(pg_catalog.text[], pg_catalog.oid)
IS 'validator of the options of partner_svc servers, user mappings, foreign tables and columns';

CREATE FOREIGN DATA WRAPPER partner_svc
  HANDLER @extschema@.fdw_handler
  VALIDATOR @extschema@.fdw_validator;

COMMENT ON FOREIGN DATA WRAPPER partner_svc
IS 'HTTP JSON partner services as foreign tables';

CREATE FUNCTION @extschema@.version()
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_module_version'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.version()
IS 'version of the loaded partner_svc library';

-- Every role may look into the schema: what a role may do there is decided
-- by the grants on each object (functions are EXECUTE for PUBLIC and check
-- USAGE on the server they call; foreign tables are granted by their
-- owner; see docs/privileges.md).
GRANT USAGE ON SCHEMA @extschema@ TO PUBLIC;
