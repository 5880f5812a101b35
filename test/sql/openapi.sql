-- openapi: IMPORT FOREIGN SCHEMA openapi, the tables of an OpenAPI 3
-- document's list routes (src/fdw/fdw_openapi.c).  The document of the
-- sandbox's job families (test/openapi/sandbox-jobs.json) is imported
-- through spec_json and spec_file; a small document written here holds
-- the parts the import skips, each with its NOTICE.
\getenv sandbox_url PSVC_SANDBOX_URL
\getenv abs_srcdir PG_ABS_SRCDIR
\set spec_path :abs_srcdir '/openapi/sandbox-jobs.json'
SET search_path = public;
\set VERBOSITY default

CREATE SERVER oa_jobs FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER oa_jobs OPTIONS (api_key 'sandbox-key');

-- the tables, their options and columns, and what the import wrote about
-- them, in one place for each import below
CREATE FUNCTION oa_tables(s name) RETURNS TABLE (tab name, options text[])
LANGUAGE sql AS $$
  SELECT c.relname, ft.ftoptions FROM pg_foreign_table ft
  JOIN pg_class c ON c.oid = ft.ftrelid
  WHERE c.relnamespace = s::regnamespace ORDER BY 1 $$;
CREATE FUNCTION oa_columns(s name, t name)
RETURNS TABLE (col name, type text, options text[], comment text)
LANGUAGE sql AS $$
  SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attfdwoptions,
         col_description(a.attrelid, a.attnum)
  FROM pg_attribute a
  WHERE a.attrelid = format('%I.%I', s, t)::regclass AND a.attnum > 0
  ORDER BY a.attnum $$;

--
-- the sandbox's document through spec_json (read here as superuser)
--
SELECT pg_read_file(:'spec_path') AS spec \gset
CREATE SCHEMA oa;
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_jobs INTO oa OPTIONS (spec_json :'spec');
-- one table for each of the twelve list routes, its paging guessed: the
-- cursor in pagination.next_cursor (ocr), the next URL in next
-- (translate), the Link header (summarize), offset (classify), page
-- (extract), none (redact)
SELECT * FROM oa_tables('oa');
-- columns from the item's properties (types from the schema: date-time
-- is timestamptz, a $ref'd nullable object jsonb), a query parameter on
-- a member is that member's column with param 'query', raw after the members
SELECT * FROM oa_columns('oa', 'jobs_ocr_history');
SELECT * FROM oa_columns('oa', 'jobs_extract_models');
SELECT tab, obj_description(format('oa.%I', tab)::regclass, 'pg_class') AS comment
FROM oa_tables('oa') WHERE tab LIKE '%ocr%' OR tab = 'jobs_redact_history';
-- the information schema sees the same columns
SELECT column_name, data_type FROM information_schema.columns
WHERE table_schema = 'oa' AND table_name = 'jobs_summarize_models' ORDER BY ordinal_position;
-- a guess is overridden as any option
ALTER FOREIGN TABLE oa.jobs_redact_models OPTIONS (SET paging 'page', ADD page_param 'p');
SELECT options FROM oa_tables('oa') WHERE tab = 'jobs_redact_models';

--
-- spec_file, with LIMIT TO and EXCEPT
--
CREATE SCHEMA oa_file;
IMPORT FOREIGN SCHEMA openapi LIMIT TO (jobs_ocr_history, jobs_redact_models, no_such_table)
  FROM SERVER oa_jobs INTO oa_file OPTIONS (spec_file :'spec_path');
SELECT tab FROM oa_tables('oa_file');
CREATE SCHEMA oa_except;
IMPORT FOREIGN SCHEMA openapi EXCEPT (jobs_ocr_history, jobs_ocr_models)
  FROM SERVER oa_jobs INTO oa_except OPTIONS (spec_file :'spec_path');
SELECT count(*) AS tables, bool_or(tab LIKE 'jobs_ocr%') AS ocr FROM oa_tables('oa_except');
-- the same document gives the same tables by either option
SELECT (SELECT array_agg(options) FROM oa_tables('oa') WHERE tab = 'jobs_ocr_history') =
       (SELECT array_agg(options) FROM oa_tables('oa_file') WHERE tab = 'jobs_ocr_history')
       AS same_options;

--
-- parts the import skips or maps loosely, each named by a NOTICE; the
-- other routes are imported all the same
--
CREATE SCHEMA oa_odd;
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_jobs INTO oa_odd OPTIONS (spec_json $json$
{"openapi": "3.1.0",
 "paths": {
  "x-internal": {},
  "orders": {"get": {}},
  "/orders": {"post": {"responses": {"201": {"description": "made"}}}},
  "/orders/{orderId}": {
    "get": {"summary": "One order",
            "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}}}}},
  "/users/{userId}/orders": {
    "parameters": [{"name": "userId", "in": "path", "required": true, "description": "The user.", "schema": {"type": "integer"}}],
    "get": {
      "description": "Orders of a user",
      "parameters": [{"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                     {"$ref": "other.json#/components/parameters/Sort"},
                     {"name": "placedAfter", "in": "query", "schema": {"type": "string", "format": "date"}},
                     {"name": "offset", "in": "query", "schema": {"type": "integer"}},
                     {"name": "limit", "in": "query", "schema": {"type": "integer"}}],
      "responses": {"2XX": {"content": {"application/json": {"schema":
        {"type": "array", "items": {"$ref": "#/components/schemas/Order"}}}}}}}},
  "/users/{user_id}/orders-": {
    "get": {"responses": {"200": {"content": {"application/json": {"schema":
        {"type": "object", "properties": {"a": {"type": "array"}, "b": {"type": "array"}}}}}}}}},
  "/loop": {
    "get": {"responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}}},
  "/users-orders/{id}": {
    "get": {"responses": {"200": {"content": {"application/json": {"schema":
        {"type": "object", "properties": {"orders": {"type": "array", "items": {"type": "object", "properties":
          {"id": {"type": ["integer", "null"], "description": "Order id."}}}}}}}}}}}}
 },
 "components": {"schemas": {
   "A": {"$ref": "#/components/schemas/B"},
   "B": {"$ref": "#/components/schemas/A"},
   "Order": {"type": "object", "description": "An order.", "properties": {
     "orderId": {"type": "string", "description": "Order id."},
     "placedAfter": {"type": "string"},
     "total": {"type": "number"},
     "lines": {"type": "array", "items": {"type": "object"}},
     "paid": {"$ref": "#/components/schemas/Flag"},
     "shipTo": {"oneOf": [{"type": "string"}, {"type": "object"}]},
     "raw": {"type": "string", "description": "A member named raw."}}},
   "Flag": {"type": "boolean", "description": "Whether it is paid."}}}}
$json$);
-- /orders/{orderId} answers one order, an object whose only array member
-- is its lines: by the rule it reads as a list of lines (LIMIT TO or
-- EXCEPT leaves such a route out)
SELECT * FROM oa_tables('oa_odd');
-- a member named raw is raw_2: raw is the whole item
SELECT * FROM oa_columns('oa_odd', 'users_user_id_orders');
-- a {name} no parameter declares is a path column too, of its own name
-- even when a member has it
SELECT * FROM oa_columns('oa_odd', 'users_orders_id');

--
-- errors: the whole import fails only for a wrong statement or document
--
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_jobs INTO oa_odd;
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_jobs INTO oa_odd
  OPTIONS (spec_json '{}', spec_file '/nonexistent');
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_jobs INTO oa_odd OPTIONS (spec_jsn '{}');
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_jobs INTO oa_odd OPTIONS (spec_json '{"paths": {}}');
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_jobs INTO oa_odd OPTIONS (spec_json 'not json');
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_jobs INTO oa_odd OPTIONS (spec_file 'relative.json');
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_jobs INTO oa_odd OPTIONS (spec_file '/nonexistent/openapi.json');
-- a service's import takes no document
IMPORT FOREIGN SCHEMA movies FROM SERVER oa_jobs INTO oa_odd OPTIONS (spec_json '{}');
-- a table name already taken fails the import, as CREATE would
IMPORT FOREIGN SCHEMA openapi LIMIT TO (jobs_ocr_models) FROM SERVER oa_jobs INTO oa
  OPTIONS (spec_json :'spec');

--
-- spec_file is the server's file: only for superusers and members of
-- pg_read_server_files, as COPY FROM a file; spec_json is for anyone
--
CREATE ROLE oa_plain;
CREATE ROLE oa_reader IN ROLE pg_read_server_files;
CREATE SCHEMA oa_roles;
GRANT USAGE ON FOREIGN SERVER oa_jobs TO oa_plain, oa_reader;
GRANT CREATE, USAGE ON SCHEMA oa_roles TO oa_plain, oa_reader;
SET ROLE oa_plain;
IMPORT FOREIGN SCHEMA openapi LIMIT TO (jobs_ocr_models) FROM SERVER oa_jobs INTO oa_roles
  OPTIONS (spec_file :'spec_path');
IMPORT FOREIGN SCHEMA openapi LIMIT TO (jobs_ocr_models) FROM SERVER oa_jobs INTO oa_roles
  OPTIONS (spec_json :'spec');
SET ROLE oa_reader;
IMPORT FOREIGN SCHEMA openapi LIMIT TO (jobs_extract_models) FROM SERVER oa_jobs INTO oa_roles
  OPTIONS (spec_file :'spec_path');
RESET ROLE;
SELECT tab, pg_get_userbyid(c.relowner) AS owner
FROM oa_tables('oa_roles') JOIN pg_class c ON c.relname = tab
  AND c.relnamespace = 'oa_roles'::regnamespace;

--
-- the imported tables answer through the declared-endpoint engine: on a
-- server of service custom, each family's paging as guessed, small pages
-- so that every style walks several
--
CREATE SERVER oa_custom FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'custom', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER oa_custom OPTIONS (api_key 'sandbox-key');
CREATE SCHEMA oa_sel;
IMPORT FOREIGN SCHEMA openapi LIMIT TO (jobs_ocr_history, jobs_ocr_models,
  jobs_summarize_history, jobs_extract_history, jobs_extract_models, jobs_redact_history)
  FROM SERVER oa_custom INTO oa_sel OPTIONS (spec_json :'spec');
ALTER FOREIGN TABLE oa_sel.jobs_ocr_history OPTIONS (ADD page_size '10');
ALTER FOREIGN TABLE oa_sel.jobs_summarize_history OPTIONS (ADD page_size '10');
ALTER FOREIGN TABLE oa_sel.jobs_extract_history OPTIONS (ADD page_size '10');
-- the seeded history comes first (jobs other tests create come after it)
SELECT id, model, status, created_at FROM oa_sel.jobs_ocr_history ORDER BY created_at, id LIMIT 3;
-- cursor, Link header, page number, none: the whole seeded history of 45
SELECT (SELECT count(*) FROM oa_sel.jobs_ocr_history) >= 45 AS cursor,
       (SELECT count(*) FROM oa_sel.jobs_summarize_history) >= 45 AS link,
       (SELECT count(*) FROM oa_sel.jobs_extract_history) >= 45 AS page,
       (SELECT count(*) FROM oa_sel.jobs_redact_history) >= 45 AS none;
SELECT id, "default" FROM oa_sel.jobs_ocr_models ORDER BY id;
SELECT id, version FROM oa_sel.jobs_extract_models ORDER BY id;
-- the query parameter status is sent, and checked on every row
EXPLAIN (COSTS OFF) SELECT * FROM oa_sel.jobs_ocr_history WHERE status = 'failed';
SELECT count(*) > 0 AS some, bool_and(status = 'failed') AS all_failed
FROM oa_sel.jobs_ocr_history WHERE status = 'failed';
-- a route the engine refuses (a {name} that is not a whole segment) is
-- skipped with the validator's reason; the others are imported
CREATE SCHEMA oa_refused;
IMPORT FOREIGN SCHEMA openapi FROM SERVER oa_custom INTO oa_refused OPTIONS (spec_json $json$
{"openapi": "3.0.3", "paths": {
  "/reports/{year}.json": {"get": {"responses": {"200": {"content": {"application/json":
    {"schema": {"type": "array", "items": {"type": "object"}}}}}}}},
  "/reports": {"get": {"responses": {"200": {"content": {"application/json":
    {"schema": {"type": "array", "items": {"type": "object"}}}}}}}}}}
$json$);
SELECT tab FROM oa_tables('oa_refused');
SET client_min_messages = warning;
DROP SCHEMA oa_refused CASCADE;
DROP SCHEMA oa_sel CASCADE;
RESET client_min_messages;
DROP USER MAPPING FOR PUBLIC SERVER oa_custom;
DROP SERVER oa_custom;

SET client_min_messages = warning;
DROP SCHEMA oa, oa_file, oa_except, oa_odd, oa_roles CASCADE;
RESET client_min_messages;
DROP OWNED BY oa_plain, oa_reader;
DROP ROLE oa_plain, oa_reader;
DROP USER MAPPING FOR PUBLIC SERVER oa_jobs;
DROP SERVER oa_jobs;
DROP FUNCTION oa_tables(name), oa_columns(name, name);
