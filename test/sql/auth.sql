-- auth: the server option auth (bearer, header, query, oauth2) against
-- the sandbox's job families (docs/sandbox-jobs.md#authentication),
-- through partner_svc.request(); the sandbox's request log (its auth
-- field names which credentials a request carried, never their values)
-- proves what was sent.  No key, secret or token appears below.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();

-- the requests with the log's auth field
CREATE FUNCTION sandbox.requests_auth()
RETURNS TABLE (method text, path text, query text, status int, auth text)
LANGUAGE sql AS $$
  SELECT split_part(l, E'\t', 2), split_part(l, E'\t', 4), split_part(l, E'\t', 5),
         split_part(l, E'\t', 6)::int, split_part(l, E'\t', 7)
  FROM sandbox.call('GET', '/_sandbox/requests.tsv?with=auth') AS l
  ORDER BY split_part(l, E'\t', 1)::int
$$;
-- a statement's SQLSTATE, message, detail, hint (the hint of a 401 fits
-- the server's auth style) and context, and whether any of them holds the
-- sandbox's key
CREATE FUNCTION sandbox.try_all(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  st text; msg text; det text; hnt text; ctx text;
BEGIN
  EXECUTE stmt;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                          det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT,
                          ctx = PG_EXCEPTION_CONTEXT;
  ctx := regexp_replace(ctx, E'\n?SQL statement.*$', '');
  RETURN st || ': ' || msg || E'\n  detail: ' || coalesce(det, '') ||
         CASE WHEN coalesce(hnt, '') <> '' THEN E'\n  hint: ' || hnt ELSE '' END ||
         E'\n  context: ' || replace(coalesce(ctx, ''), (SELECT url FROM sandbox.config), 'SANDBOX') ||
         CASE WHEN concat(msg, det, hnt, ctx) LIKE '%sandbox-key%' THEN E'\n  KEY LEAKED' ELSE '' END;
END $$;

--
-- validation: a wrong combination is refused at CREATE and ALTER,
-- naming the option
--
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'basic')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'header')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth_header 'X-Key')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'header', auth_header 'X Key')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'header', auth_header 'X-Key', auth_param 'k')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'query')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'query', auth_param 'a&b')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'header', auth_header 'X-Key', auth_prefix '  ')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'oauth2')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', token_url 'http://127.0.0.1:1/token')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'query', auth_param 'k', scopes 'jobs')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'oauth2', token_url 'ftp://127.0.0.1/token')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'oauth2', token_url 'http://u:secret@127.0.0.1/token')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'oauth2', token_url 'http://127.0.0.1:99999/token')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'oauth2', token_url 'http://127.0.0.1/token?x=1')$$);
SELECT sandbox.try($$CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', auth 'oauth2', token_url 'http://127.0.0.1/token', scopes 'a  b')$$);
-- on a user mapping: a client is its id and its secret; values never echoed
CREATE SERVER a1 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1');
SELECT sandbox.try($$CREATE USER MAPPING FOR CURRENT_USER SERVER a1 OPTIONS (client_id 'c1')$$);
SELECT sandbox.try($$CREATE USER MAPPING FOR CURRENT_USER SERVER a1 OPTIONS (client_secret 's1')$$);
SELECT sandbox.try($$CREATE USER MAPPING FOR CURRENT_USER SERVER a1 OPTIONS (client_id 'c1', client_secret 'top secret')$$);
SELECT sandbox.try($$CREATE USER MAPPING FOR CURRENT_USER SERVER a1 OPTIONS (client_secret 's1', token_url 'http://127.0.0.1/t')$$);
SELECT sandbox.try($$CREATE SERVER a2 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:1', client_id 'c1')$$);
-- ALTER sees the whole resulting list: both ways
SELECT sandbox.try($$ALTER SERVER a1 OPTIONS (ADD auth 'query')$$);
SELECT sandbox.try($$ALTER SERVER a1 OPTIONS (ADD auth 'query', ADD auth_param 'api_key')$$);
SELECT sandbox.try($$ALTER SERVER a1 OPTIONS (SET auth 'bearer')$$);
SELECT sandbox.try($$ALTER SERVER a1 OPTIONS (DROP auth_param, SET auth 'bearer')$$);
DROP SERVER a1;

--
-- bearer, the default: the Bearer API key
--
CREATE SERVER jobs FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER jobs OPTIONS (api_key 'sandbox-key');
CALL sandbox.reset_stats();
SELECT jsonb_array_length(r -> 'data') AS models
FROM partner_svc.request('GET', '/jobs/ocr/models', server => 'jobs') r;
SELECT * FROM sandbox.requests_auth();

--
-- header: the key in a header of the partner's choice, with or without a
-- word before it (the job routes read only Bearer, so the sandbox refuses
-- it; its log shows what was sent)
--
CREATE SERVER jobs_header FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url :'sandbox_url', auth 'header', auth_header 'X-API-Key');
CREATE USER MAPPING FOR PUBLIC SERVER jobs_header OPTIONS (api_key 'sandbox-key');
CALL sandbox.reset_stats();
SELECT sandbox.try_all($$SELECT partner_svc.request('GET', '/jobs/ocr/models', server => 'jobs_header')$$);
ALTER SERVER jobs_header OPTIONS (SET auth_header 'X-Partner-Key', ADD auth_prefix 'Token');
SELECT sandbox.try_all($$SELECT partner_svc.request('GET', '/jobs/ocr/models', server => 'jobs_header')$$);
SELECT * FROM sandbox.requests_auth();

--
-- query: the key in the query parameter api_key (classify), never in
-- what partner_svc shows of the URL
--
CREATE SERVER jobs_query FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url :'sandbox_url', auth 'query', auth_param 'api_key');
CREATE USER MAPPING FOR PUBLIC SERVER jobs_query OPTIONS (api_key 'sandbox-key');
CALL sandbox.reset_stats();
SELECT partner_svc.stats_reset();
SELECT jsonb_array_length(r -> 'items') AS items, r -> 'offset' AS "offset"
FROM partner_svc.request('GET', '/jobs/classify/history', '{"limit": 3, "offset": 2}',
                         server => 'jobs_query') r;
-- an error of the service: its context shows the request without the key
SELECT sandbox.try_all($$SELECT partner_svc.request('GET', '/jobs/classify/history', '{"limit": 0}', server => 'jobs_query')$$);
-- the Bearer style does not reach classify
SELECT sandbox.try_all($$SELECT partner_svc.request('GET', '/jobs/classify/models', server => 'jobs')$$);
SELECT * FROM sandbox.requests_auth();
SELECT server, method, route, requests FROM partner_svc.stats
WHERE server LIKE 'jobs%' ORDER BY route, server;
SELECT count(*) AS views_with_the_key FROM partner_svc.stats
WHERE concat_ws(' ', route, server) LIKE '%sandbox-key%';
-- a foreign table of a server of auth 'query': EXPLAIN's Partner Request
-- and the scan's error show the URL without the key (the movies
-- routes read only Bearer: the sandbox refuses it, the log shows it sent)
CREATE SERVER movies_query FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url', auth 'query', auth_param 'api_key');
CREATE USER MAPPING FOR PUBLIC SERVER movies_query OPTIONS (api_key 'sandbox-key');
CREATE SCHEMA auth_q;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movies) FROM SERVER movies_query INTO auth_q;
SET partner_svc.learn_estimates = off;
EXPLAIN (VERBOSE, COSTS OFF) SELECT title FROM auth_q.movies LIMIT 2;
RESET partner_svc.learn_estimates;
CALL sandbox.reset_stats();
SELECT sandbox.try_all($$SELECT title FROM auth_q.movies LIMIT 2$$);
SELECT * FROM sandbox.requests_auth();
DROP SCHEMA auth_q CASCADE;
DROP SERVER movies_query CASCADE;

--
-- oauth2: client credentials at the token route; one grant serves many
-- requests; an expired token is renewed once
--
SELECT format('%s/oauth/token', :'sandbox_url') AS token_url \gset
CREATE SERVER jobs_oauth FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url :'sandbox_url', auth 'oauth2',
           token_url :'token_url', scopes 'jobs');
-- no client in the mapping
CREATE USER MAPPING FOR PUBLIC SERVER jobs_oauth OPTIONS (api_key 'sandbox-key');
CALL sandbox.reset_stats();
SELECT sandbox.try_all($$SELECT partner_svc.request('GET', '/jobs/translate/models', server => 'jobs_oauth')$$);
-- a wrong secret: the token route's error, nothing sent to the route
ALTER USER MAPPING FOR PUBLIC SERVER jobs_oauth
  OPTIONS (DROP api_key, ADD client_id 'client-sandbox-key', ADD client_secret 'not-the-key');
SELECT sandbox.try_all($$SELECT partner_svc.request('GET', '/jobs/translate/models', server => 'jobs_oauth')$$);
SELECT * FROM sandbox.requests_auth();
ALTER USER MAPPING FOR PUBLIC SERVER jobs_oauth OPTIONS (SET client_secret 'sandbox-key');
CALL sandbox.reset_stats();
SELECT jsonb_array_length(r -> 'results') AS models
FROM partner_svc.request('GET', '/jobs/translate/models', server => 'jobs_oauth') r;
SELECT jsonb_array_length(r -> 'results') AS jobs
FROM partner_svc.request('GET', '/jobs/translate/history', '{"limit": 2}', server => 'jobs_oauth') r;
-- another session takes the same token from shared memory
\c
SET search_path = public;
SELECT jsonb_array_length(r -> 'results') AS models
FROM partner_svc.request('GET', '/jobs/translate/models', server => 'jobs_oauth') r;
-- one grant for the three requests
SELECT * FROM sandbox.requests_auth();
-- an hour of sandbox time later the token has expired: the 401 brings one
-- new grant, and the request is sent again with it
CALL sandbox.reset_stats();
SELECT count(*) FROM sandbox.call('POST', '/_sandbox/clock', '{"advance_ms": 3600000}');
SELECT jsonb_array_length(r -> 'results') AS models
FROM partner_svc.request('GET', '/jobs/translate/models', server => 'jobs_oauth') r;
SELECT jsonb_array_length(r -> 'results') AS models
FROM partner_svc.request('GET', '/jobs/translate/models', server => 'jobs_oauth') r;
SELECT * FROM sandbox.requests_auth();
-- a token the partner refuses again after the renewal is an error, not a loop
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /jobs/translate/models", "kind": "error", "value": 401, "count": 2}');
SELECT sandbox.try_all($$SELECT partner_svc.request('GET', '/jobs/translate/models', server => 'jobs_oauth')$$);
CALL sandbox.clear_faults();
SELECT method, path, status FROM sandbox.requests_auth();

DROP SERVER jobs, jobs_header, jobs_query, jobs_oauth CASCADE;
DROP FUNCTION sandbox.requests_auth(), sandbox.try_all(text);
