-- fdw_nested: the nested lists of document 001 (paging rule 4) as foreign
-- tables: the items are read from the nested object (data.events, ...),
-- the cursor from its pagination, and sent back to the detail URL.  The
-- sandbox's second page is always short, so a walk that stopped at the
-- first short page would lose items; every count is checked against the
-- sandbox's own list sizes (GET /_sandbox/nested) and every walk against
-- the requests the sandbox received.
\getenv sandbox_url PSVC_SANDBOX_URL
CREATE SERVER nested FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url', page_size '20');
CREATE USER MAPPING FOR PUBLIC SERVER nested OPTIONS (api_key 'sandbox-key');
CREATE SCHEMA nested;
IMPORT FOREIGN SCHEMA movies
  LIMIT TO (concert_events, award_nominations, book_adaptations, collection_movies)
  FROM SERVER nested INTO nested;
SET search_path = nested, public;
SELECT table_name, string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position)
FROM information_schema.columns WHERE table_schema = 'nested'
GROUP BY 1 ORDER BY 1;
SELECT c.relname, obj_description(c.oid, 'pg_class')
FROM pg_class c WHERE c.relnamespace = 'nested'::regnamespace ORDER BY 1;

-- the sizes the sandbox serves, by detail path
CREATE TEMP TABLE sizes AS
SELECT e ->> 'path' AS path, (e ->> 'count')::int AS n
FROM (SELECT string_agg(l, '')::jsonb AS j FROM sandbox.call('GET', '/_sandbox/nested') l) s,
     jsonb_array_elements(j -> 'data') e;
SELECT path, n FROM sizes
WHERE path IN ('/concerts/1', '/concerts/2', '/awards/1', '/books/1', '/collections/franchise/1')
ORDER BY path;

--
-- concert 1: 65 events in pages of 20, the second one short
--
CALL sandbox.reset_stats();
SELECT count(*), count(DISTINCT position), min(position), max(position),
       count(DISTINCT id) AS ids, bool_and(id = 'evt-1-' || position) AS ids_match
FROM concert_events WHERE concert = '1';
SELECT seq, route, path, regexp_replace(query, 'cursor=[^&]+', 'cursor=...') AS query, status
FROM sandbox.requests();
SELECT concert, position, id, title, performer, stage, day, start_time
FROM concert_events WHERE concert = '1' ORDER BY position LIMIT 3;

-- the same walk for the other three lists (ids 1: 61, 70 and 64 items)
CALL sandbox.reset_stats();
SELECT count(*), count(DISTINCT position), max(position), bool_and(movie ? 'movie_id') AS movies
FROM award_nominations WHERE award = '1';
SELECT count(*), count(DISTINCT position), max(position),
       count(*) FILTER (WHERE medium = 'film') = count(movie_id) AS film_has_movie
FROM book_adaptations WHERE book = '1';
SELECT count(*), count(DISTINCT movie_id), max(position)
FROM collection_movies WHERE type = 'franchise' AND collection = '1';
SELECT route, count(*) AS requests, count(*) FILTER (WHERE query LIKE '%cursor=%') AS with_cursor,
       min(status) AS min_status, max(status) AS max_status
FROM sandbox.requests() GROUP BY 1 ORDER BY 1;

-- an empty list, unknown ids (404 concert_not_found, ...): no rows
CALL sandbox.reset_stats();
SELECT count(*) FROM concert_events WHERE concert = '2';
SELECT count(*) FROM concert_events WHERE concert = '41';
SELECT count(*) FROM award_nominations WHERE award = 'oscars';
SELECT count(*) FROM collection_movies WHERE type = 'shelf' AND collection = '1';
SELECT route, path, status FROM sandbox.requests();

-- LIMIT reaches the service and the walk stops there, short page or not
CALL sandbox.reset_stats();
SELECT position FROM concert_events WHERE concert = '1' LIMIT 25;
SELECT regexp_replace(query, 'cursor=[^&]+', 'cursor=...') AS query FROM sandbox.requests();

--
-- path values from a join: VALUES, LATERAL, = ANY, and two path columns
--
CALL sandbox.reset_stats();
SELECT v.concert, count(e.position) AS events, s.n AS sandbox
FROM (VALUES ('1'), ('2'), ('3'), ('4'), ('5')) AS v(concert)
LEFT JOIN LATERAL (SELECT position FROM concert_events c WHERE c.concert = v.concert) e ON true
JOIN sizes s ON s.path = '/concerts/' || v.concert
GROUP BY v.concert, s.n ORDER BY 1;
SELECT count(*) AS requests, count(DISTINCT path) AS concerts FROM sandbox.requests();
EXPLAIN (COSTS OFF)
SELECT v.concert, e.position FROM (VALUES ('1'), ('2')) AS v(concert)
JOIN concert_events e ON e.concert = v.concert;

CALL sandbox.reset_stats();
SELECT b.book, count(*) AS adaptations, s.n AS sandbox
FROM book_adaptations b JOIN sizes s ON s.path = '/books/' || b.book
WHERE b.book = ANY (ARRAY['1', '3', '6', '7']) GROUP BY 1, 3 ORDER BY 1;
SELECT count(DISTINCT path) AS books FROM sandbox.requests();

-- type and collection both fanned out: one stream per pair
CALL sandbox.reset_stats();
SELECT type, collection, count(*) AS movies, s.n AS sandbox
FROM collection_movies c JOIN sizes s ON s.path = format('/collections/%s/%s', c.type, c.collection)
WHERE type = ANY (ARRAY['franchise', 'director']) AND collection = ANY (ARRAY['1', '3'])
GROUP BY 1, 2, 4 ORDER BY 1, 2;
SELECT DISTINCT path FROM sandbox.requests() ORDER BY 1;
EXPLAIN (COSTS OFF)
SELECT * FROM collection_movies
WHERE type = ANY (ARRAY['franchise', 'director']) AND collection = ANY (ARRAY['1', '3']);
-- both path values from the outer side of a nested loop
CALL sandbox.reset_stats();
SELECT v.t, v.c, count(m.movie_id)
FROM (VALUES ('curated', '1'), ('director', '2')) AS v(t, c)
JOIN collection_movies m ON m.type = v.t AND m.collection = v.c
GROUP BY 1, 2 ORDER BY 1, 2;
SELECT path, n FROM sizes WHERE path IN ('/collections/curated/1', '/collections/director/2') ORDER BY 1;
SELECT DISTINCT path FROM sandbox.requests() ORDER BY 1;
EXPLAIN (COSTS OFF)
SELECT * FROM (VALUES ('curated', '1'), ('director', '2')) AS v(t, c)
JOIN collection_movies m ON m.type = v.t AND m.collection = v.c;

-- one stream per pair, so the pairs are bounded: 400 x 300 values are
-- refused (54000) before anything is sent
CALL sandbox.reset_stats();
SELECT sandbox.try($$SELECT count(*) FROM collection_movies
  WHERE type = ANY (ARRAY(SELECT 't' || g FROM generate_series(1, 400) g))
    AND collection = ANY (ARRAY(SELECT g::text FROM generate_series(1, 300) g))$$);
SELECT count(*) AS requests FROM sandbox.requests();

-- a required path column is named when missing
SELECT * FROM collection_movies WHERE type = 'franchise';
SELECT sandbox.try('SELECT * FROM concert_events');
SELECT sandbox.try($$SELECT * FROM book_adaptations WHERE book = repeat('x', 256)$$);
EXPLAIN (COSTS OFF) SELECT * FROM concert_events WHERE concert = '7' AND day = 1 LIMIT 5;

--
-- a cursor refused in the middle of a nested walk: the sandbox spoils
-- data.events.pagination.next_cursor of the second page (skip 1), so the
-- third request is refused with 400 invalid_cursor.  A clear error, every
-- request sent to the concert's detail URL (never to a list route or
-- another concert), and the session goes on.
--
CALL sandbox.clear_faults();
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /concerts/{concert}", "kind": "corrupt_cursor", "skip": 1, "count": 1}');
SELECT count(*) FROM concert_events WHERE concert = '1';
SELECT seq, method, route, path, regexp_replace(query, 'cursor=[^&]+', 'cursor=...') AS query,
       query LIKE '%SPOILED' AS spoiled_cursor, status
FROM sandbox.requests();
-- the same walk again, for its SQLSTATE (22023, as for a top-level list)
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /concerts/{concert}", "kind": "corrupt_cursor", "skip": 1, "count": 1}');
SELECT sandbox.try($$SELECT position FROM concert_events WHERE concert = '1'$$);
SELECT count(*) AS requests, count(*) FILTER (WHERE path <> '/concerts/1') AS elsewhere,
       count(*) FILTER (WHERE status = 400) AS refused
FROM sandbox.requests();
-- the fault is used up: the next walk is whole, and a join fanning out over
-- two concerts works in the same session
CALL sandbox.reset_stats();
SELECT count(*), count(DISTINCT position) FROM concert_events WHERE concert = '1';
SELECT v.concert, count(e.position) FROM (VALUES ('1'), ('3')) AS v(concert)
JOIN concert_events e ON e.concert = v.concert GROUP BY 1 ORDER BY 1;
SELECT n FROM sizes WHERE path = '/concerts/3';
SELECT count(*) FILTER (WHERE status <> 200) AS failed FROM sandbox.requests();
-- the other three nested lists: their cursors are spoiled too (first page)
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /awards/{award}", "kind": "corrupt_cursor", "count": 1}');
CALL sandbox.fault('{"route": "GET /books/{book}", "kind": "corrupt_cursor", "count": 1}');
CALL sandbox.fault('{"route": "GET /collections/{type}/{collection}", "kind": "corrupt_cursor", "count": 1}');
SELECT sandbox.try($$SELECT * FROM award_nominations WHERE award = '1'$$);
SELECT sandbox.try($$SELECT * FROM book_adaptations WHERE book = '1'$$);
SELECT sandbox.try($$SELECT * FROM collection_movies WHERE type = 'franchise' AND collection = '1'$$);
SELECT route, path, query LIKE '%SPOILED' AS spoiled_cursor, status
FROM sandbox.requests() ORDER BY seq;
CALL sandbox.clear_faults();

-- the nested-list routes take their own rate-limit row (our choice)
SELECT route, "limit", resource FROM partner_svc.rate_limits
WHERE server = 'nested' ORDER BY route;

-- the later tests expect one server of each service
SET client_min_messages = warning;
DROP SERVER nested CASCADE;
DROP SCHEMA nested CASCADE;
RESET client_min_messages;
