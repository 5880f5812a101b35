-- fdw_faults: what a scan does when the service misbehaves: a cursor
-- refused mid-walk, 5xx that recover on retry and 5xx that do not, 429
-- with Retry-After, malformed JSON, a truncated body, a timeout, a cancel.
SET search_path = m, public;
CALL sandbox.clear_faults();
SET partner_svc.max_retries = 2;

-- the second page's cursor is refused: a clear error, not a silent restart
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "corrupt_cursor", "count": 1}');
SELECT count(*) FROM movie_themes WHERE movie = 'epic-saga';
SELECT query LIKE 'limit=100&cursor=%SPOILED' AS spoiled_cursor, status FROM sandbox.requests() WHERE seq > 1;

-- two 503s, then success: retried, counted in EXPLAIN ANALYZE
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "error", "count": 2}');
SELECT * FROM sandbox.explain_analyze($$SELECT * FROM movie_themes WHERE movie = 'inception'$$) AS "QUERY PLAN";
SELECT status FROM sandbox.requests();

-- a 5xx that does not recover
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "error", "value": 502, "count": 5}');
SELECT count(*) FROM movie_themes WHERE movie = 'inception';
SELECT status FROM sandbox.requests();
CALL sandbox.clear_faults();

-- 429 with Retry-After (1 second) is waited out
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "429", "value": 1, "count": 1}');
SELECT clock_timestamp() AS t0 \gset
SELECT count(*) FROM movie_themes WHERE movie = 'inception';
SELECT clock_timestamp() - :'t0'::timestamptz >= interval '0.9 s' AS waited_retry_after;

-- malformed JSON is not retried: it is an error naming the request
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "malformed", "count": 1}');
SELECT count(*) FROM movie_themes WHERE movie = 'inception';

-- a body cut short is retried (a GET is safe to repeat)
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "truncate", "count": 1}');
SELECT count(*) FROM movie_themes WHERE movie = 'inception';
SELECT status FROM sandbox.requests();

-- a slow answer times out after partner_svc.request_timeout
CALL sandbox.reset_stats();
SET partner_svc.request_timeout = '200ms';
SET partner_svc.max_retries = 0;
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "latency", "value": 3000, "count": 1}');
SELECT count(*) FROM movie_themes WHERE movie = 'inception';
RESET partner_svc.request_timeout;
RESET partner_svc.max_retries;

-- statement_timeout cancels a slow transfer promptly; the session goes on
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "latency", "value": 5000, "count": 1}');
SELECT clock_timestamp() AS t0 \gset
SET statement_timeout = '300ms';
SELECT count(*) FROM movie_themes WHERE movie = 'inception';
RESET statement_timeout;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '2 s' AS cancelled_promptly;
SELECT count(*) FROM movie_themes WHERE movie = 'inception';
-- the two requests given up above are answered by the sandbox 3 s and 5 s
-- after they came, and reach its log only then: wait for them (at most
-- 10 s), or they land in the request log of a later test (fdw_plans
-- listed one on a fast run)
DO $$
BEGIN
  FOR i IN 1..100 LOOP
    EXIT WHEN (SELECT count(*) FROM sandbox.requests()
               WHERE path = '/v1/movies/inception/content/themes') >= 3;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT count(*) AS themes_requests FROM sandbox.requests()
WHERE path = '/v1/movies/inception/content/themes';

-- the service refuses the key: the hint says where the key lives, and the
-- key itself appears nowhere
\getenv sandbox_url PSVC_SANDBOX_URL
CREATE SERVER movies_badkey FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_badkey OPTIONS (api_key 'sk-live-very-secret');
CREATE FOREIGN TABLE public.badkey (movie text, title text)
  SERVER movies_badkey OPTIONS (resource 'movie_themes');
SELECT * FROM public.badkey WHERE movie = 'inception';

-- nobody listens: a connection error, retried, then reported
CREATE SERVER movies_down FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://127.0.0.1:9');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_down OPTIONS (api_key 'sandbox-key');
CREATE FOREIGN TABLE public.unreachable (movie text, title text)
  SERVER movies_down OPTIONS (resource 'movie_themes');
SET partner_svc.max_retries = 0;
\set VERBOSITY terse
SELECT * FROM public.unreachable WHERE movie = 'inception';
\set VERBOSITY default
RESET partner_svc.max_retries;
CALL sandbox.clear_faults();
