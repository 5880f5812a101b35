-- 22_functions_partner.sql: the SQL functions of the other routes of the
-- order service's rate-limit table: vehicle validation, transactions paid
-- through the service's checkout, and /mcp (docs/functions.md).  New in
-- 0.3; sql/upgrade/0.2--0.3/30_surface.sql is a link to this file.
--
-- As every function of the extension: the last argument is the server to
-- use, by default the one partner_svc server of service "orders"; SECURITY
-- INVOKER (USAGE on the server, the caller's user mapping); VOLATILE; not
-- STRICT; a NULL first argument gives NULL.

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

CREATE FUNCTION @extschema@.validate_vehicle(vehicle pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_validate_vehicle'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.validate_vehicle(pg_catalog.jsonb, pg_catalog.name)
IS 'checks a vehicle {"plate", "country"} (POST /public/validate-vehicle); {"valid": false, "error": ...} instead of an error';

CREATE FUNCTION @extschema@.create_transaction(payload pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_create'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.create_transaction(pg_catalog.jsonb, pg_catalog.name)
IS 'creates orders paid through the service''s checkout (POST /public/transaction/create); looks them up by custom id before sending again when an answer is lost';

CREATE FUNCTION @extschema@.transaction_status(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_tx_status'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.transaction_status(pg_catalog.text, pg_catalog.name)
IS 'the checkout status of a transaction, by transaction id or the id of one of its orders (GET /public/transaction/{unique_id}/status); NULL when the partner paid';

CREATE FUNCTION @extschema@.transaction_fee(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_fee'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.transaction_fee(pg_catalog.text, pg_catalog.name)
IS 'amount, fee and total of a transaction (GET /public/transaction/{unique_id}/fee)';

CREATE FUNCTION @extschema@.transaction_data(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_data'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.transaction_data(pg_catalog.text, pg_catalog.name)
IS 'the transaction object (GET /public/transaction/{id}/data)';

CREATE FUNCTION @extschema@.cancel_transaction(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_cancel'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.cancel_transaction(pg_catalog.text, pg_catalog.name)
IS 'cancels an open checkout (POST /public/transaction/{id}/cancel); reads the transaction when an answer is lost';

CREATE FUNCTION @extschema@.mcp(request pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_mcp'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.mcp(pg_catalog.jsonb, pg_catalog.name)
IS 'one JSON-RPC 2.0 call to the service''s MCP endpoint (POST /public/mcp); the JSON-RPC answer as it came';
