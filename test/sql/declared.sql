-- declared: foreign tables over routes declared in SQL (table option
-- endpoint, docs/declared-endpoints.md), against the sandbox's job
-- families (docs/sandbox-jobs.md), each paged in a style of its own.
-- Every answer is checked with what the sandbox received.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();

-- a partner of the user's: service custom, no catalogue
CREATE SERVER jobs FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'custom', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER jobs OPTIONS (api_key 'sandbox-key');

--
-- cursor in the body (ocr): the defaults, pagination.next_cursor sent
-- back as cursor, the items in data
--
CREATE FOREIGN TABLE ocr_history (
  family text OPTIONS (param 'path'),
  id text,
  model text,
  status text OPTIONS (param 'query'),
  created_at timestamptz,
  finished_at timestamptz,
  error_code text OPTIONS (json_path 'error.code'),
  error jsonb,
  raw jsonb
) SERVER jobs OPTIONS (endpoint 'GET /jobs/{family}/history', items 'data',
                       paging 'cursor');

EXPLAIN (COSTS OFF) SELECT id FROM ocr_history WHERE family = 'ocr';
-- the first row comes before the last page: LIMIT 1 sends one request,
-- asking for one item
CALL sandbox.reset_stats();
SELECT id, model, status, created_at, finished_at, error_code, error,
       raw ->> 'file_id' AS file_id
FROM ocr_history WHERE family = 'ocr' LIMIT 1;
SELECT method, route, path, query, status FROM sandbox.requests();
-- the whole walk with pages of 10: the second page holds 5 items and is
-- not the last; every job once, 45 of them
ALTER FOREIGN TABLE ocr_history OPTIONS (ADD page_size '10');
CALL sandbox.reset_stats();
SELECT count(*) AS jobs, count(DISTINCT id) AS distinct_ids,
       count(*) FILTER (WHERE status = 'failed') AS failed,
       count(error_code) AS with_error_code
FROM ocr_history WHERE family = 'ocr';
SELECT seq, path, regexp_replace(query, 'cursor=[^&]+', 'cursor=...') AS query, status
FROM sandbox.requests() ORDER BY seq;
-- a filter column is sent as its query parameter, and rechecked
CALL sandbox.reset_stats();
SELECT count(*) AS failed FROM ocr_history WHERE family = 'ocr' AND status = 'failed';
SELECT path, regexp_replace(query, 'cursor=[^&]+', 'cursor=...') AS query
FROM sandbox.requests() ORDER BY seq;
-- the path column is required: a plan-time error naming it
SELECT sandbox.try($$SELECT count(*) FROM ocr_history$$);
-- a cursor the answer names wrongly (cursor_path at a number): the
-- sandbox refuses it, the error is the service's
ALTER FOREIGN TABLE ocr_history OPTIONS (ADD cursor_path 'pagination.limit');
SELECT sandbox.try($$SELECT count(*) FROM ocr_history WHERE family = 'ocr'$$);
ALTER FOREIGN TABLE ocr_history OPTIONS (SET cursor_path 'pagination.next_cursor');
SELECT count(*) FROM ocr_history WHERE family = 'ocr';

--
-- Link header (summarize): the body is the array
--
CREATE FOREIGN TABLE summarize_history (
  id text, model text, status text, created_at timestamptz
) SERVER jobs OPTIONS (endpoint 'GET /jobs/summarize/history', paging 'link',
                       page_size '10');
CALL sandbox.reset_stats();
SELECT id FROM summarize_history LIMIT 1;
SELECT count(*) AS requests FROM sandbox.requests();
CALL sandbox.reset_stats();
SELECT count(*) AS jobs, count(DISTINCT id) AS distinct_ids FROM summarize_history;
SELECT seq, path, regexp_replace(query, 'after=[^&]+', 'after=...') AS query, status
FROM sandbox.requests() ORDER BY seq;

--
-- next URL in the body (translate): its query leads to the next page.
-- The route takes an OAuth2 token: the server's auth 'oauth2' fetches it
-- by the client-credentials grant at token_url (the client in the user
-- mapping), once, before the first page
--
SELECT format('%s/oauth/token', :'sandbox_url') AS token_url \gset
CREATE SERVER jobs_oauth FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'custom', base_url :'sandbox_url', auth 'oauth2',
           token_url :'token_url');
CREATE USER MAPPING FOR PUBLIC SERVER jobs_oauth
  OPTIONS (client_id 'client-sandbox-key', client_secret 'sandbox-key');
CREATE FOREIGN TABLE translate_history (
  id text, model text
) SERVER jobs_oauth OPTIONS (endpoint 'GET /jobs/translate/history', items 'results',
                             paging 'next_url', page_size '10');
CALL sandbox.reset_stats();
SELECT id FROM translate_history LIMIT 1;
-- one grant, then one page
SELECT path, status FROM sandbox.requests() ORDER BY seq;
CALL sandbox.reset_stats();
SELECT count(*) AS jobs, count(DISTINCT id) AS distinct_ids FROM translate_history;
-- the token is kept: no second grant
SELECT seq, path, regexp_replace(query, 'page_token=[^&]+', 'page_token=...') AS query, status
FROM sandbox.requests() ORDER BY seq;

--
-- page number (extract): page from 1 and per_page; the end is has_more
-- false or an empty page
--
CREATE FOREIGN TABLE extract_history (
  id text, status text
) SERVER jobs OPTIONS (endpoint 'GET /jobs/extract/history', items 'data',
                       paging 'page', page_param 'page', limit_param 'per_page',
                       page_size '10');
CALL sandbox.reset_stats();
SELECT count(*) AS jobs, count(DISTINCT id) AS distinct_ids FROM extract_history;
SELECT seq, path, query, status FROM sandbox.requests() ORDER BY seq;
-- under a LIMIT the first page asks for what the LIMIT needs, and a later
-- page keeps its size (page 2 of 2 items would repeat the first page's)
CALL sandbox.reset_stats();
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids
FROM (SELECT id FROM extract_history LIMIT 12) t;
SELECT seq, path, query, status FROM sandbox.requests() ORDER BY seq;
SELECT (SELECT array_agg(id) FROM (SELECT id FROM extract_history LIMIT 12) a)
     = (SELECT (array_agg(id))[1:12] FROM extract_history) AS first_twelve;

--
-- offset (classify): offset advanced by the items received; this route
-- wants the key in the query parameter api_key: a server of auth 'query'
-- sends it there, and EXPLAIN, errors and the views never show it
--
CREATE SERVER jobs_query FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'custom', base_url :'sandbox_url', auth 'query', auth_param 'api_key');
CREATE USER MAPPING FOR PUBLIC SERVER jobs_query OPTIONS (api_key 'sandbox-key');
CREATE FOREIGN TABLE classify_history (
  id text, status text
) SERVER jobs_query OPTIONS (endpoint 'GET /jobs/classify/history', items 'items',
                             paging 'offset', page_size '10');
SET partner_svc.learn_estimates = off;
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM classify_history LIMIT 12;
RESET partner_svc.learn_estimates;
CALL sandbox.reset_stats();
SELECT count(*) AS jobs, count(DISTINCT id) AS distinct_ids FROM classify_history;
SELECT seq, path, query, status FROM sandbox.requests() ORDER BY seq;
SELECT count(*) AS views_with_the_key
FROM partner_svc.stats s WHERE s::text LIKE '%sandbox-key%';
-- under a LIMIT: the offset follows the items received, whatever the size
CALL sandbox.reset_stats();
SELECT (SELECT array_agg(id) FROM (SELECT id FROM classify_history LIMIT 12) a)
     = (SELECT (array_agg(id))[1:12] FROM classify_history) AS first_twelve;
SELECT seq, path, query, status FROM sandbox.requests() ORDER BY seq;

--
-- the engine's other parts hold for declared tables: EXPLAIN ANALYZE
-- counts the pages and requests, an Append runs two declared scans
-- asynchronously (one per family and style), with the rows of both
--
SELECT * FROM sandbox.explain_analyze($$SELECT id FROM extract_history$$) AS "QUERY PLAN"
WHERE "QUERY PLAN" ~ 'Foreign Scan|Partner (Requests|Pages|Request)';
ALTER FOREIGN TABLE ocr_history OPTIONS (ADD async_capable 'true');
ALTER FOREIGN TABLE summarize_history OPTIONS (ADD async_capable 'true');
EXPLAIN (COSTS OFF)
SELECT id FROM ocr_history WHERE family = 'ocr' UNION ALL SELECT id FROM summarize_history;
SELECT split_part(id, '_', 1) AS family, count(*) FROM
  (SELECT id FROM ocr_history WHERE family = 'ocr' UNION ALL SELECT id FROM summarize_history) u
GROUP BY 1 ORDER BY 1;

--
-- none (redact): one answer
--
CREATE FOREIGN TABLE redact_models (
  id text, family text, version text, is_default boolean OPTIONS (json_path 'default')
) SERVER jobs OPTIONS (endpoint 'GET /jobs/redact/models', items 'models');
CALL sandbox.reset_stats();
SELECT id, family, is_default FROM redact_models ORDER BY id;
SELECT path, query FROM sandbox.requests();

--
-- an items path that names nothing in the answer: a clear error
--
CREATE FOREIGN TABLE wrong_items (id text)
  SERVER jobs OPTIONS (endpoint 'GET /jobs/redact/models', items 'results');
SELECT sandbox.try($$SELECT * FROM wrong_items$$);

--
-- a declared route on a server of a built-in service, beside the
-- catalogue's table over the same pages
--
CREATE FOREIGN TABLE themes_declared (
  movie text OPTIONS (param 'path'),
  position integer,
  theme text OPTIONS (json_path 'title'),
  emoji text,
  explanation text
) SERVER movies OPTIONS (endpoint 'GET /v1/movies/{movie}/content/themes',
                         items 'data', paging 'cursor');
CREATE SCHEMA decl_builtin;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies INTO decl_builtin;
SELECT (SELECT count(*) FROM themes_declared WHERE movie = 'inception') AS declared,
       (SELECT count(*) FROM decl_builtin.movie_themes WHERE movie = 'inception') AS builtin;
-- the same rows: nothing in one and not the other
(SELECT * FROM themes_declared WHERE movie = 'inception'
 EXCEPT SELECT movie, position, title, emoji, explanation FROM decl_builtin.movie_themes WHERE movie = 'inception')
UNION ALL
(SELECT movie, position, title, emoji, explanation FROM decl_builtin.movie_themes WHERE movie = 'inception'
 EXCEPT SELECT * FROM themes_declared WHERE movie = 'inception');
SELECT position, theme FROM themes_declared WHERE movie = 'inception' ORDER BY position LIMIT 2;
-- = ANY fans out over the path column: one walk a movie, the same
-- requests as the built-in table's
CALL sandbox.reset_stats();
SELECT movie, count(*) FROM themes_declared
WHERE movie = ANY ('{inception,crimson-garden}') GROUP BY movie ORDER BY movie;
SELECT path, query FROM sandbox.requests() ORDER BY path, query;
CALL sandbox.reset_stats();
SELECT movie, count(*) FROM decl_builtin.movie_themes
WHERE movie = ANY ('{inception,crimson-garden}') GROUP BY movie ORDER BY movie;
SELECT path, query FROM sandbox.requests() ORDER BY path, query;
EXPLAIN (COSTS OFF) SELECT * FROM themes_declared WHERE movie = ANY ('{inception,crimson-garden}') LIMIT 3;

--
-- writes with RETURNING: todos declared by hand
--
CREATE FOREIGN TABLE todos_declared (
  id bigint, title text, completed boolean, user_id bigint OPTIONS (json_path 'userId')
) SERVER todos OPTIONS (endpoint 'GET /todos', insert 'POST /todos',
                        update 'PUT /todos/{id}', delete 'DELETE /todos/{id}');
EXPLAIN (COSTS OFF) INSERT INTO todos_declared (title) VALUES ('x');
CALL sandbox.reset_stats();
INSERT INTO todos_declared (title, completed, user_id) VALUES ('declared', false, 7)
RETURNING id > 3 AS new_id, title, completed, user_id;
UPDATE todos_declared SET completed = true WHERE title = 'declared'
RETURNING title, completed, user_id;
SELECT title, completed, user_id FROM todos_declared WHERE title = 'declared';
DELETE FROM todos_declared WHERE title = 'declared' RETURNING title;
SELECT count(*) FROM todos_declared WHERE title = 'declared';
SELECT method, route, regexp_replace(path, '[0-9]+$', 'N') AS path, status FROM sandbox.requests() ORDER BY seq;

--
-- validation: every option's errors, at CREATE or ALTER
--
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs
  OPTIONS (endpoint 'GET /a', resource 'movies')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint '/a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'POST /a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a/{id')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a/{Id}')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a/x{id}')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a/{id}/{id}')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a/../b')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a?b=1')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a//b')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'cursors')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', items 'data..x')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'cursor', cursor_path '')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'cursor', cursor_param 'a&b')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'next_url', next_path '.next')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'offset', offset_param '')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'page', page_param 'p g')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'page', limit_param '?')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'page', page_size '0')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'page', page_size 'ten')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', insert 'GET /a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', update 'PUT a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', delete 'GET /a/{id}')$$);
-- options of one paging style on a table of another, or of none
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'page', cursor_path 'next')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'cursor', offset_param 'o')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', next_path 'next')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', page_size '10')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', limit_param 'n')$$);
-- declared-route options without endpoint
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER movies OPTIONS (resource 'movies', paging 'cursor')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (items 'data')$$);
-- with their details and hints
CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a/{id');
CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpoint 'GET /a', paging 'cursor', next_path 'next');
-- column options
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text OPTIONS (param 'body')) SERVER jobs OPTIONS (endpoint 'GET /a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text OPTIONS (param_name 'x')) SERVER jobs OPTIONS (endpoint 'GET /a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text OPTIONS (param 'query', param_name 'a=b')) SERVER jobs OPTIONS (endpoint 'GET /a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text OPTIONS (json_path 'a.')) SERVER jobs OPTIONS (endpoint 'GET /a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text OPTIONS (raw 'yes please')) SERVER jobs OPTIONS (endpoint 'GET /a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id jsonb OPTIONS (raw 'true', json_path 'a')) SERVER jobs OPTIONS (endpoint 'GET /a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text OPTIONS (jsonpath 'a')) SERVER jobs OPTIONS (endpoint 'GET /a')$$);
SELECT sandbox.try($$CREATE FOREIGN TABLE v (id text) SERVER jobs OPTIONS (endpiont 'GET /a')$$);
-- ALTER is checked as CREATE
SELECT sandbox.try($$ALTER FOREIGN TABLE ocr_history OPTIONS (SET paging 'pages')$$);
SELECT sandbox.try($$ALTER FOREIGN TABLE ocr_history ALTER COLUMN family OPTIONS (SET param 'header')$$);
-- what only the table's columns and server tell, when it is planned
CREATE FOREIGN TABLE no_path_column (id text)
  SERVER jobs OPTIONS (endpoint 'GET /jobs/{family}/history');
SELECT sandbox.try($$SELECT * FROM no_path_column$$);
CREATE FOREIGN TABLE stray_path_column (id text, fam text OPTIONS (param 'path'))
  SERVER jobs OPTIONS (endpoint 'GET /jobs/ocr/history');
SELECT sandbox.try($$SELECT * FROM stray_path_column$$);
CREATE FOREIGN TABLE resource_on_custom (id text) SERVER jobs OPTIONS (resource 'movies');
SELECT sandbox.try($$SELECT * FROM resource_on_custom$$);
CREATE FOREIGN TABLE update_without_key (id text, title text)
  SERVER todos OPTIONS (endpoint 'GET /todos', update 'PUT /todos/{key}');
SELECT sandbox.try($$SELECT * FROM update_without_key$$);
DROP FOREIGN TABLE no_path_column, stray_path_column, resource_on_custom,
  update_without_key, wrong_items;
