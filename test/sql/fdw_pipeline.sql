-- fdw_pipeline: the requests of a walk when the next page is asked for
-- before the current one is decoded (prefetch, on a cursor read from the
-- end of the body): every page once, each cursor once, none refused,
-- nothing after the last page; the same number of requests without
-- prefetch; EXPLAIN ANALYZE shows the first request as planned.
SET search_path = m, public;
CALL sandbox.clear_faults();
-- the requests of the walks below: a request an earlier test abandoned
-- (fdw_faults waits for the two it holds, but a slower one) reaches the sandbox's log when it is
-- answered, which may be during them
CREATE FUNCTION pg_temp.saga_requests() RETURNS TABLE (query text, status int)
LANGUAGE sql AS $$
  SELECT query, status FROM sandbox.requests()
  WHERE path = '/v1/movies/epic-saga/content/themes'
$$;

-- a walk of 100 pages with prefetch (the default)
SHOW partner_svc.prefetch;
CALL sandbox.reset_stats();
SELECT count(*), count(DISTINCT position), min(position), max(position)
FROM movie_themes WHERE movie = 'epic-saga';
SELECT count(*) AS requests, count(DISTINCT query) AS distinct_queries,
       count(*) FILTER (WHERE status = 200) AS answered_200,
       count(*) FILTER (WHERE query = 'limit=100') AS without_cursor
FROM pg_temp.saga_requests();

-- the same walk with every column, whose pages take longer to consume
CALL sandbox.reset_stats();
SELECT count(*), count(DISTINCT raw ->> 'position'), bool_and(raw ->> 'title' = title)
FROM movie_themes WHERE movie = 'epic-saga';
SELECT count(*) AS requests, count(DISTINCT query) AS distinct_queries,
       count(*) FILTER (WHERE status = 200) AS answered_200
FROM pg_temp.saga_requests();

-- pages that are short or empty while has_more is true
CALL sandbox.set('{"short_page_rate": 0.5}');
CALL sandbox.reset_stats();
SELECT count(*), count(DISTINCT position) FROM movie_themes WHERE movie = 'epic-saga';
SELECT count(*) = count(DISTINCT query) AS each_cursor_once,
       bool_and(status = 200) AS all_answered
FROM pg_temp.saga_requests();
CALL sandbox.set('{"short_page_rate": 0}');

-- without prefetch: as many requests, one after the other
SET partner_svc.prefetch = off;
CALL sandbox.reset_stats();
SELECT count(*) FROM movie_themes WHERE movie = 'epic-saga';
SELECT count(*) AS requests, count(DISTINCT query) AS distinct_queries
FROM pg_temp.saga_requests();
RESET partner_svc.prefetch;

-- a pushed-down LIMIT over several pages: full pages, then what is left,
-- and no page asked for beyond it
CALL sandbox.reset_stats();
SELECT count(*), max(position)
FROM (SELECT position FROM movie_themes WHERE movie = 'epic-saga' LIMIT 250) s;
SELECT split_part(query, '&', 1) AS page, count(*), bool_and(status = 200) AS answered
FROM pg_temp.saga_requests() GROUP BY 1 ORDER BY 1;
CALL sandbox.reset_stats();
SELECT count(*), max(position)
FROM (SELECT position FROM movie_themes WHERE movie = 'epic-saga' LIMIT 300) s;
SELECT split_part(query, '&', 1) AS page, count(*), bool_and(status = 200) AS answered
FROM pg_temp.saga_requests() GROUP BY 1 ORDER BY 1;

-- a scan stopped early by a LIMIT that is not pushed down (a local
-- condition) drops the page asked for in advance and asks for no more;
-- the connection stays usable
CALL sandbox.reset_stats();
SELECT count(*) FROM (SELECT position FROM movie_themes
                      WHERE movie = 'epic-saga' AND title <> '' LIMIT 150) s;
SELECT count(*) BETWEEN 2 AND 3 AS at_most_one_page_ahead,
       count(*) FILTER (WHERE query = 'limit=100') AS without_cursor
FROM pg_temp.saga_requests();
SELECT count(*) FROM movie_themes WHERE movie = 'inception';

-- EXPLAIN ANALYZE of a pushed-down LIMIT: the request as planned (limit=10),
-- not what is left to fetch after the run
CREATE FUNCTION pg_temp.explain_analyze(q text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
  RETURN j;
END $$;
SELECT p ->> 'Partner Request' AS request, p ->> 'Partner Limit' AS "limit",
       p ->> 'Partner Pages' AS pages, p ->> 'Partner Requests' AS requests
FROM (SELECT pg_temp.explain_analyze(
        'SELECT position FROM movie_themes WHERE movie = ''epic-saga'' LIMIT 10')
        -> 0 -> 'Plan' -> 'Plans' -> 0 AS p) s;
