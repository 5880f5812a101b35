-- 20_functions_orders_content.sql: the SQL functions of the order, movie,
-- catalog and generation services (src/functions/functions_orders.c,
-- src/functions/functions_content.c; docs/functions.md).
--
-- Every function takes as its last argument the server to use, by default
-- the one partner_svc server of its service.  They are SECURITY INVOKER:
-- the caller needs USAGE on the server, and the key is the caller's user
-- mapping.  They are VOLATILE (they talk to a service) and not STRICT
-- (server defaults to NULL); a NULL first argument gives NULL.

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

CREATE FUNCTION @extschema@.create_order(payload pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_create'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.create_order(pg_catalog.jsonb, pg_catalog.name)
IS 'creates orders (POST /public/orders); looks them up by custom id before sending again when an answer is lost';

CREATE FUNCTION @extschema@.validate_order(payload pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_validate'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.validate_order(pg_catalog.jsonb, pg_catalog.name)
IS 'checks an order payload (POST /public/orders/validate); {"valid": false, "error": ...} instead of an error';

CREATE FUNCTION @extschema@.order_detail(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_detail'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.order_detail(pg_catalog.text, pg_catalog.name)
IS 'the order with this id or custom id (GET /public/orders/{id})';

CREATE FUNCTION @extschema@.order_status(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_orders_status'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.order_status(pg_catalog.text, pg_catalog.name)
IS 'the status of the order with this id or custom id (GET /public/orders/{id}/status)';

CREATE FUNCTION @extschema@.cancel_pending(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_cancel_pending'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.cancel_pending(pg_catalog.text, pg_catalog.name)
IS 'cancels a PENDING order (POST /public/orders/{id}/cancel-pending)';

CREATE FUNCTION @extschema@.cancel_deferred(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_cancel_deferred'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.cancel_deferred(pg_catalog.text, pg_catalog.name)
IS 'cancels a DEFERRED order (POST /public/orders/{id}/cancel-deferred)';

CREATE FUNCTION @extschema@.movie_summary(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_content_movie_summary'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_summary(pg_catalog.text, pg_catalog.name)
IS 'the Markdown summary of a movie (id or slug); NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_spoiler_free_summary(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_content_movie_spoiler_free_summary'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_spoiler_free_summary(pg_catalog.text, pg_catalog.name)
IS 'the Markdown spoiler-free summary of a movie; NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_ending(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_content_movie_ending'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_ending(pg_catalog.text, pg_catalog.name)
IS 'the Markdown explanation of the ending of a movie; NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_setting(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_movie_setting'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_setting(pg_catalog.text, pg_catalog.name)
IS 'the setting (place and time) of a movie; NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_profile(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_movie_profile'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_profile(pg_catalog.text, pg_catalog.name)
IS 'the mood and content profile of a movie; NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_detail(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_movie_detail'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_detail(pg_catalog.text, pg_catalog.name)
IS 'the movie object (GET /v1/movies/{movie}), with available_content';

CREATE FUNCTION @extschema@.business_question(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_business_question'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.business_question(pg_catalog.text, pg_catalog.name)
IS 'a business question with its status, acceptance criteria and policies';

CREATE FUNCTION @extschema@.business_question_answer(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_business_question_answer'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.business_question_answer(pg_catalog.text, pg_catalog.name)
IS 'the answer of a business question: snapshot figures, or a blocker';

CREATE FUNCTION @extschema@.generate(request pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_generate'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.generate(pg_catalog.jsonb, pg_catalog.name)
IS 'generates threads (POST /v1/generate)';

CREATE FUNCTION @extschema@.validate_key(server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_validate_key'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.validate_key(pg_catalog.name)
IS 'checks the API key of the caller (GET /v1/key/validate); {"valid": false, ...} for a refused key';
