-- fdw_async: foreign scans an Append runs asynchronously (option
-- async_capable, src/fdw/fdw_scan.c).  What the sandbox saw is the
-- evidence: its request log (the time each answer was made, at_ms) and the
-- most requests of a route it handled at once (max_in_flight).  The test's
-- servers use the sandbox's second key, premium-key (test/with_sandbox.sh),
-- so that its log tells their requests from those earlier tests dropped
-- and the sandbox still holds (a latency fault on themes in fdw_faults).
\getenv sandbox_url PSVC_SANDBOX_URL

-- the option: a boolean, on servers and foreign tables only
CREATE SERVER movies_async FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url', async_capable 'maybe');
CREATE SERVER movies_async FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url', async_capable 'true',
           max_retries '0');
CREATE USER MAPPING FOR PUBLIC SERVER movies_async
  OPTIONS (api_key 'premium-key', async_capable 'true');
CREATE USER MAPPING FOR PUBLIC SERVER movies_async OPTIONS (api_key 'premium-key');
CREATE SCHEMA a;
IMPORT FOREIGN SCHEMA movies
  LIMIT TO (movie_themes, movie_characters, movie_faqs, movie_timeline)
  FROM SERVER movies_async INTO a;
ALTER FOREIGN TABLE a.movie_faqs OPTIONS (ADD async_capable 'no');
ALTER FOREIGN TABLE a.movie_faqs OPTIONS (SET async_capable 'off please');
-- the same tables on a server without the option, and one content list of
-- that server made asynchronous by its own option
CREATE SERVER movies_sync FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER movies_sync OPTIONS (api_key 'premium-key');
CREATE SCHEMA s;
IMPORT FOREIGN SCHEMA movies
  LIMIT TO (movie_themes, movie_characters, movie_faqs, movie_timeline)
  FROM SERVER movies_sync INTO s;
CREATE FOREIGN TABLE s.themes_async (movie text, "position" integer, title text)
  SERVER movies_sync OPTIONS (resource 'movie_themes', async_capable 'true');

CREATE VIEW a.content AS
  SELECT 'theme' AS kind, "position", title FROM a.movie_themes WHERE movie = 'inception'
  UNION ALL
  SELECT 'character', "position", name FROM a.movie_characters WHERE movie = 'inception'
  UNION ALL
  SELECT 'faq', "position", question FROM a.movie_faqs WHERE movie = 'inception'
  UNION ALL
  SELECT 'event', "position", title FROM a.movie_timeline WHERE movie = 'inception';
CREATE VIEW s.content AS
  SELECT 'theme' AS kind, "position", title FROM s.movie_themes WHERE movie = 'inception'
  UNION ALL
  SELECT 'character', "position", name FROM s.movie_characters WHERE movie = 'inception'
  UNION ALL
  SELECT 'faq', "position", question FROM s.movie_faqs WHERE movie = 'inception'
  UNION ALL
  SELECT 'event', "position", title FROM s.movie_timeline WHERE movie = 'inception';

-- EXPLAIN: the scans of the server with async_capable are "Async Foreign
-- Scan" with their requests; faqs' own 'no' keeps its scan synchronous; a
-- table of the synchronous server with its own 'true' is asynchronous too
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM a.content;
EXPLAIN (COSTS OFF)
  SELECT title FROM s.themes_async WHERE movie = 'inception'
  UNION ALL
  SELECT title FROM s.movie_themes WHERE movie = 'inception';
-- a scan without an Append is never asynchronous
EXPLAIN (COSTS OFF) SELECT * FROM a.movie_themes WHERE movie = 'inception';
ALTER FOREIGN TABLE a.movie_faqs OPTIONS (SET async_capable 'true');
EXPLAIN (COSTS OFF) SELECT * FROM a.content;

-- the same rows as the synchronous scans.  (A count(*) over the
-- view would not use every column of the UNION ALL, and PostgreSQL puts a
-- Subquery Scan over each branch, which it never runs asynchronously: the
-- counts below read the view whole in a materialized CTE.)
WITH c AS MATERIALIZED (SELECT * FROM a.content)
SELECT count(*) AS rows FROM c;
SELECT count(*) AS differences FROM (
  (SELECT * FROM a.content EXCEPT ALL SELECT * FROM s.content)
  UNION ALL
  (SELECT * FROM s.content EXCEPT ALL SELECT * FROM a.content)) d;

-- every first request reaches the sandbox before any is answered: each of
-- the four requests is held 400 ms, so the four answers are made within
-- 400 ms of each other only if all four were in flight together (one
-- after the other, they are at least 400 ms apart)
CREATE FUNCTION sandbox.mine()
RETURNS TABLE (route text, path text, status int, at_ms bigint) LANGUAGE sql AS $$
  SELECT r ->> 'route', r ->> 'path', (r ->> 'status')::int, (r ->> 'at_ms')::bigint
  FROM jsonb_array_elements((SELECT string_agg(l, '')::jsonb -> 'requests'
                             FROM sandbox.call('GET', '/_sandbox/requests') l)) r
  WHERE (r ->> 'partner')::int = 1
$$;
CREATE FUNCTION sandbox.answers_spread_ms() RETURNS bigint LANGUAGE sql AS $$
  SELECT max(first_ms) - min(first_ms)
  FROM (SELECT min(at_ms) AS first_ms FROM sandbox.mine() WHERE status = 200
        GROUP BY route) f
$$;
CALL sandbox.fault('{"route": "/v1/movies/{movie}/content/themes", "kind": "latency", "value": 400}');
CALL sandbox.fault('{"route": "/v1/movies/{movie}/content/characters", "kind": "latency", "value": 400}');
CALL sandbox.fault('{"route": "/v1/movies/{movie}/content/faqs", "kind": "latency", "value": 400}');
CALL sandbox.fault('{"route": "/v1/movies/{movie}/content/timeline", "kind": "latency", "value": 400}');
CALL sandbox.reset_stats();
WITH c AS MATERIALIZED (SELECT * FROM a.content) SELECT count(*) FROM c;
SELECT count(DISTINCT route) AS routes, sandbox.answers_spread_ms() < 400 AS all_in_flight_together
FROM sandbox.mine() WHERE status = 200;
CALL sandbox.reset_stats();
WITH c AS MATERIALIZED (SELECT * FROM s.content) SELECT count(*) FROM c;
SELECT count(DISTINCT route) AS routes, sandbox.answers_spread_ms() >= 400 AS one_after_another
FROM sandbox.mine() WHERE status = 200;

-- one route (characters, which no earlier test holds): the sandbox counts
-- how many it handled at once
CREATE FUNCTION sandbox.max_in_flight(r text) RETURNS int LANGUAGE sql AS $$
  SELECT max((x ->> 'max_in_flight')::int)
  FROM jsonb_array_elements((SELECT string_agg(l, '')::jsonb -> 'routes'
                             FROM sandbox.call('GET', '/_sandbox/stats') l)) x
  WHERE x ->> 'route' = r
$$;
CALL sandbox.reset_stats();
WITH t AS MATERIALIZED (
  SELECT name FROM a.movie_characters WHERE movie = 'inception'
  UNION ALL SELECT name FROM a.movie_characters WHERE movie = 'summary-only'
  UNION ALL SELECT name FROM a.movie_characters WHERE movie = 'summary-only'
  UNION ALL SELECT name FROM a.movie_characters WHERE movie = 'inception')
SELECT count(*) FROM t;
SELECT sandbox.max_in_flight('/v1/movies/{movie}/content/characters') AS async_max_in_flight;
CALL sandbox.reset_stats();
WITH t AS MATERIALIZED (
  SELECT name FROM s.movie_characters WHERE movie = 'inception'
  UNION ALL SELECT name FROM s.movie_characters WHERE movie = 'summary-only')
SELECT count(*) FROM t;
SELECT sandbox.max_in_flight('/v1/movies/{movie}/content/characters') AS sync_max_in_flight;
CALL sandbox.clear_faults();

-- LIMIT over the Append: the scans stop when it has its rows.  epic-saga's
-- lists are long (10,000 themes, 2,500 events, ...); with pages of 2 each
-- scan asks for its first page, and the next one when a page becomes its
-- current one (prefetch).  A page becomes current only to give a row, and
-- the Append holds at most one row of each scan besides the 5 it returns,
-- so the four scans send at most 5 + 4 pages made current plus 4 next
-- ones: 13 requests, whatever the order in which the pages arrive
ALTER SERVER movies_async OPTIONS (ADD page_size '2');
CREATE VIEW a.saga AS
  SELECT 'theme' AS kind, "position" FROM a.movie_themes WHERE movie = 'epic-saga'
  UNION ALL SELECT 'character', "position" FROM a.movie_characters WHERE movie = 'epic-saga'
  UNION ALL SELECT 'faq', "position" FROM a.movie_faqs WHERE movie = 'epic-saga'
  UNION ALL SELECT 'event', "position" FROM a.movie_timeline WHERE movie = 'epic-saga';
CALL sandbox.reset_stats();
EXPLAIN (COSTS OFF) SELECT * FROM a.saga LIMIT 5;
WITH l AS MATERIALIZED (SELECT * FROM a.saga LIMIT 5) SELECT count(*) FROM l;
-- the sandbox logs a request once it has answered it, and the statement
-- ends without waiting for the answers it no longer needs: wait (at most
-- 10 s) until every scan's first request is in the log
CREATE FUNCTION pg_temp.wait_for_routes(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 100 LOOP
    EXIT WHEN (SELECT count(DISTINCT route) FROM sandbox.mine()) >= n;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT pg_temp.wait_for_routes(4);
SELECT count(*) BETWEEN 4 AND 13 AS few_requests,
       count(DISTINCT route) AS routes
FROM sandbox.mine();
-- with a filter the service cannot apply, rows are still taken as pages come
CALL sandbox.reset_stats();
WITH l AS MATERIALIZED (SELECT * FROM a.saga WHERE "position" % 7 = 3 LIMIT 3)
SELECT count(*) FROM l;
SELECT count(*) < 40 AS few_requests FROM sandbox.mine();
ALTER SERVER movies_async OPTIONS (DROP page_size);

-- an error in one branch: its request fails (500, no retry on this
-- server) and the statement fails with the usual error of the table, as
-- soon as the answer comes, without waiting for the slow themes; the
-- other scans' requests are dropped with the statement (the backend has
-- none left in flight)
CALL sandbox.fault('{"route": "/v1/movies/{movie}/content/faqs", "kind": "error", "value": 500}');
CALL sandbox.fault('{"route": "/v1/movies/{movie}/content/themes", "kind": "latency", "value": 2000}');
SELECT clock_timestamp() AS t0 \gset
SELECT * FROM a.content;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '1 s' AS failed_before_the_slow_branch;
SELECT count(*) AS requests_in_flight FROM partner_svc.requests WHERE pid = pg_backend_pid();
SELECT sandbox.sqlstate_of('SELECT * FROM a.content') AS sqlstate;
CALL sandbox.clear_faults();
WITH c AS MATERIALIZED (SELECT * FROM a.content) SELECT count(*) FROM c;

-- statement_timeout while every scan waits: 57014, promptly
CALL sandbox.fault('{"route": "/v1/movies/{movie}/content/themes", "kind": "latency", "value": 2000, "count": 1}');
CALL sandbox.fault('{"route": "/v1/movies/{movie}/content/timeline", "kind": "latency", "value": 2000, "count": 1}');
SELECT clock_timestamp() AS t0 \gset
SET statement_timeout = '300ms';
WITH c AS MATERIALIZED (SELECT * FROM a.content) SELECT count(*) FROM c;
RESET statement_timeout;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '1.5 s' AS cancelled_promptly;
CALL sandbox.clear_faults();
WITH c AS MATERIALIZED (SELECT * FROM a.content) SELECT count(*) FROM c;

-- EXPLAIN ANALYZE: every scan counts its own pages and requests
SELECT * FROM sandbox.explain_analyze($$SELECT * FROM a.content$$) AS "QUERY PLAN";

-- a rescan: the Append is the inner side of a nested loop, run once per
-- movie
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
CREATE VIEW a.both AS
  SELECT m.movie, c.title
  FROM (VALUES ('inception'), ('summary-only'), ('inception')) AS m(movie)
    CROSS JOIN LATERAL (
      SELECT title FROM a.movie_themes t WHERE t.movie = m.movie
      UNION ALL SELECT name FROM a.movie_characters c WHERE c.movie = m.movie) c;
EXPLAIN (COSTS OFF) SELECT * FROM a.both;
WITH b AS MATERIALIZED (SELECT * FROM a.both)
SELECT movie, count(*) FROM b GROUP BY movie ORDER BY movie;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

DROP VIEW a.content, a.saga, a.both, s.content;
DROP FUNCTION sandbox.answers_spread_ms(), sandbox.max_in_flight(text), sandbox.mine();
DROP SCHEMA a, s CASCADE;
DROP SERVER movies_async CASCADE;
DROP SERVER movies_sync CASCADE;
-- the sandbox still holds requests the statements above dropped (2 s
-- latency): they are answered, and logged, before the next test counts
SELECT pg_sleep(2);
