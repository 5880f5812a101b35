-- 23_request.sql: partner_svc.request(), one request to any route of a
-- server through the call path of the built-in functions: the caller's
-- user mapping, the limiter, retries of reads, the cache, stats
-- (docs/functions.md).  New in 0.4; a copy of sql/install/23_request.sql
-- (the whole function is new).
--
-- As every function of the extension: SECURITY INVOKER (USAGE on the
-- server, the caller's user mapping); VOLATILE; not STRICT.

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION partner_svc UPDATE TO '0.4'" to load this file. \quit

CREATE FUNCTION @extschema@.request(method pg_catalog.text, path pg_catalog.text,
	query pg_catalog.jsonb DEFAULT NULL, body pg_catalog.jsonb DEFAULT NULL,
	server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_request'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.request(pg_catalog.text, pg_catalog.text, pg_catalog.jsonb, pg_catalog.jsonb, pg_catalog.name)
IS 'sends one request (method, path below the server''s base_url, query parameters, JSON body) through the limiter, retries of reads and the cache; returns the answer''s JSON body';
