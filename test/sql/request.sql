-- request: partner_svc.request(), one request to any route of a server.
-- Each answer is checked together with what the sandbox received
-- (sandbox.requests()) and how partner_svc.stats counted it.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();

SELECT pg_get_function_arguments('partner_svc.request'::regproc) AS arguments,
       pg_get_function_result('partner_svc.request'::regproc) AS result;

--
-- a route of the catalogue: its row's rules, the whole body as the result
--
CALL sandbox.reset_stats();
SELECT partner_svc.stats_reset();
SELECT split_part(partner_svc.request('GET', '/v1/movies/inception/content/summary',
                                      server => 'movies') ->> 'data', E'\n', 1) AS summary;
SELECT r ? 'data' AS enveloped, jsonb_typeof(r -> 'data') AS data
FROM partner_svc.request('get', '/v1/movies/inception', server => 'movies') r;
-- query parameters: a number; then a string encoded, a boolean, an array
-- repeated, null as the name alone (the sandbox refuses the unknown ones
-- with 400, raised as the built-in calls raise it: the request log shows
-- what was sent)
SELECT jsonb_array_length(r -> 'data') AS movies, r #>> '{pagination,has_more}' AS has_more
FROM partner_svc.request('GET', '/movies', '{"limit": 2}', server => 'movies') r;
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/movies',
          '{"limit": 1, "q": "a b&c", "flag": true, "tag": ["x", "y"], "bare": null}',
          server => 'movies')$$);
-- a read is retried after a 503, as its row allows
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}", "kind": "error", "value": 503, "count": 1}');
SELECT partner_svc.request('GET', '/v1/movies/inception', server => 'movies') #>> '{data,slug}' AS after_503;
CALL sandbox.clear_faults();
SELECT method, route, path, query, status FROM sandbox.requests();
-- counted under the operation's template, not the movie's path
SELECT method, route, requests, ok FROM partner_svc.stats
WHERE server = 'movies' ORDER BY route;

--
-- refused before anything is sent: the path, the method, a body on a read
--
CALL sandbox.reset_stats();
SELECT sandbox.try($$SELECT partner_svc.request('GET', 'movies', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/v1/../movies', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/v1/./movies', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', '//evil.example/movies', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/movies/', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/movies?limit=1', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/movies%2F..', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', 'http://127.0.0.1/movies', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('TRACE', '/movies', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/movies', body => '{}', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/movies', '[1]', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/movies', '{"a": {"b": 1}}', server => 'movies')$$);
SELECT sandbox.try($$SELECT partner_svc.request(NULL, '/movies', server => 'movies')$$);
SELECT left(sandbox.try($$SELECT partner_svc.request('GET', repeat('/a', 1025), server => 'movies')$$), 58) AS long_path;
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/movies', server => 'no_such_server')$$);
-- several servers and no default: name one
SELECT sandbox.try($$SELECT partner_svc.request('GET', '/movies')$$);
SELECT count(*) AS requests FROM sandbox.requests();

--
-- the service's errors are raised as the built-in calls raise them
--
CALL sandbox.reset_stats();
SELECT sandbox.sqlstate_of($$SELECT partner_svc.request('GET', '/v1/movies/no-such-movie', server => 'movies')$$) AS unknown_movie;
SELECT sandbox.sqlstate_of($$SELECT partner_svc.request('GET', '/v1/nothing/here', server => 'movies')$$) AS unknown_route;
SELECT method, path, status FROM sandbox.requests();

--
-- a write: sent once (a 503 is not retried, as the todos row says),
-- refused in a read-only transaction
--
CALL sandbox.reset_stats();
SELECT r ->> 'title' AS title, r ? 'id' AS has_id
FROM partner_svc.request('POST', '/todos', body => '{"title": "from request()", "userId": 1}', server => 'todos') r;
CALL sandbox.fault('{"route": "POST /todos", "kind": "error", "value": 503, "count": 1}');
SELECT sandbox.sqlstate_of($$SELECT partner_svc.request('POST', '/todos', body => '{"title": "once", "userId": 1}', server => 'todos')$$) AS unavailable;
CALL sandbox.clear_faults();
BEGIN READ ONLY;
SELECT sandbox.sqlstate_of($$SELECT partner_svc.request('POST', '/todos', body => '{"title": "no"}', server => 'todos')$$) AS read_only;
COMMIT;
SELECT method, path, status FROM sandbox.requests();

--
-- routes the catalogue lacks: counted under the template of a row of
-- rate_limits (the server's) or of the partner's table when one matches,
-- under the path itself otherwise
--
CREATE SERVER req_orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url', rate_limits 'GET /widgets/{widget}=5');
CREATE USER MAPPING FOR CURRENT_USER SERVER req_orders OPTIONS (api_key 'sandbox-key');
CALL sandbox.reset_stats();
SELECT partner_svc.stats_reset();
SELECT sandbox.sqlstate_of($$SELECT partner_svc.request('GET', '/public/widgets/7', server => 'req_orders')$$) AS w7,
       sandbox.sqlstate_of($$SELECT partner_svc.request('GET', '/public/widgets/8', server => 'req_orders')$$) AS w8,
       sandbox.sqlstate_of($$SELECT partner_svc.request('GET', '/elsewhere', server => 'req_orders')$$) AS other;
SELECT method, path, status FROM sandbox.requests();
SELECT method, route, requests FROM partner_svc.stats WHERE server = 'req_orders' ORDER BY route;
SELECT route, "limit", source FROM partner_svc.rate_limit_rules('req_orders') WHERE route LIKE '%widget%';
DROP SERVER req_orders CASCADE;

--
-- the server option idempotency_header: a write carries the call's own
-- idempotency key in that header and is retried as a read is (the 503
-- above was not); the key is the same for every attempt of the call
--
CREATE SERVER todos_keyed FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url :'sandbox_url', idempotency_header 'Idempotency-Key');
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /todos", "kind": "error", "value": 503, "count": 1}');
SELECT r ->> 'title' AS title
FROM partner_svc.request('POST', '/todos', body => '{"title": "keyed", "userId": 1}', server => 'todos_keyed') r;
CALL sandbox.clear_faults();
SELECT method, path, status FROM sandbox.requests();
SELECT sandbox.try($$ALTER SERVER todos_keyed OPTIONS (SET idempotency_header 'Idempotency Key')$$);
DROP SERVER todos_keyed;
