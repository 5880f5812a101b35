-- fdw_movies: the movie content tables: import, lazy cursor paging,
-- pushdown of movie, section and genre, LIMIT, fan-out, joins, rescans.
-- Each query is followed by what the sandbox received.
CREATE SCHEMA m;
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO m;
SELECT foreign_table_name FROM information_schema.foreign_tables
WHERE foreign_table_schema = 'm' ORDER BY 1;
-- IMPORT comments every table and column from the catalogue: what it
-- reads, which condition a query must give, which filters are sent
\d+ m.movie_themes
SELECT c.relname, obj_description(c.oid, 'pg_class') FROM pg_class c
WHERE c.relnamespace = 'm'::regnamespace ORDER BY 1;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_faqs) FROM SERVER movies INTO public;
IMPORT FOREIGN SCHEMA movies EXCEPT (movie_faqs, movies) FROM SERVER movies INTO public;
SELECT foreign_table_name FROM information_schema.foreign_tables
WHERE foreign_table_schema = 'public' ORDER BY 1;
DROP FOREIGN TABLE movie_faqs, movie_themes, movie_timeline, movie_characters;
-- the remote schema is the server's service
IMPORT FOREIGN SCHEMA orders FROM SERVER movies INTO public;
SET search_path = m, public;

-- a small list: one request with the largest page
CALL sandbox.reset_stats();
SELECT movie, position, title, emoji FROM movie_themes WHERE movie = 'inception' ORDER BY position;
SELECT method, path, query, status FROM sandbox.requests();

-- LIMIT on a movie with 10,000 themes: exactly one request, limit=10
CALL sandbox.reset_stats();
SELECT position FROM movie_themes WHERE movie = 'epic-saga' LIMIT 10;
SELECT method, path, query, status FROM sandbox.requests();
CALL sandbox.reset_stats();
SELECT position FROM movie_themes WHERE movie = 'epic-saga' LIMIT 3 OFFSET 2;
SELECT method, path, query, status FROM sandbox.requests();
EXPLAIN (COSTS OFF) SELECT position FROM movie_themes WHERE movie = 'epic-saga' LIMIT 10;
-- EXPLAIN shows a value the plan knows as it is sent: encoded, braces
-- included ({name} is the placeholder of a value known only at run time)
EXPLAIN (COSTS OFF) SELECT position FROM movie_themes WHERE movie = '{x} %7B' LIMIT 10;

-- a full scan returns every item once, also when pages are short
CALL sandbox.set('{"short_page_rate": 0.5}');
CALL sandbox.reset_stats();
SELECT count(*), count(DISTINCT position), min(position), max(position)
FROM movie_themes WHERE movie = 'epic-saga';
SELECT count(*) > 100 AS more_than_100_pages,
       count(*) FILTER (WHERE query LIKE 'limit=100&cursor=%') = count(*) - 1 AS followed_cursors
FROM sandbox.requests();
CALL sandbox.set('{"short_page_rate": 0}');

-- a required path parameter that the query does not give
SELECT * FROM movie_themes;
SELECT * FROM movie_themes WHERE title = 'x';
SELECT count(*) FROM movie_timeline WHERE movie <> 'inception';
-- the hint names the condition on the column that cannot be sent: an OR
-- across columns, a LIKE, a function of the column
SELECT count(*) FROM movie_faqs WHERE movie = 'inception' OR section = 'ending';
SELECT count(*) FROM movie_themes WHERE movie LIKE 'incep%';
SELECT count(*) FROM movie_themes WHERE movie ILIKE 'INCEP%';
SELECT count(*) FROM movie_themes WHERE lower(movie) = 'inception';
SELECT count(*) FROM movie_themes WHERE upper(movie) LIKE 'INCEP%' AND title <> 'x';

-- fan-out: one stream per distinct movie; a movie without themes gives none
CALL sandbox.reset_stats();
SELECT movie, count(*) FROM movie_themes
WHERE movie = ANY (ARRAY['inception', 'summary-only', '1000', 'inception', NULL])
GROUP BY movie ORDER BY movie;
SELECT method, path, query, status FROM sandbox.requests() ORDER BY path;
SELECT count(*) FROM movie_themes WHERE movie = ANY ('{}'::text[]);
SELECT count(*) FROM movie_themes WHERE movie = NULL;

-- other filters become query parameters; local conditions stay local
CALL sandbox.reset_stats();
SELECT section, count(*) FROM movie_faqs WHERE movie = 'inception' AND section = 'ending' GROUP BY 1;
SELECT section, count(*) FROM movie_faqs WHERE movie = 'inception' GROUP BY 1 ORDER BY 1;
SELECT position, title FROM movie_themes WHERE movie = 'inception' AND title LIKE '%e%' ORDER BY position LIMIT 2;
SELECT method, path, query, status FROM sandbox.requests();
EXPLAIN (COSTS OFF) SELECT position FROM movie_themes WHERE movie = 'inception' AND title LIKE '%e%' LIMIT 2;

-- the movie search, with the genre filter echoed into its column
CALL sandbox.reset_stats();
SELECT count(*) > 0 AS some, bool_and(genre = 'drama') AS echoed,
       bool_and(genres ? 'drama') AS all_drama
FROM movies WHERE genre = 'drama';
SELECT method, path, query, status FROM sandbox.requests();
SELECT count(*) FROM movies;

-- raw carries the whole item; a column mapped with the option "field"
SELECT raw ->> 'title' = title AS same, jsonb_typeof(raw) FROM movie_themes WHERE movie = 'inception' LIMIT 1;
CREATE FOREIGN TABLE public.my_characters (movie text, who text OPTIONS (field 'name'), person_id bigint)
  SERVER movies OPTIONS (resource 'movie_characters');
SELECT who, person_id FROM public.my_characters WHERE movie = 'inception' ORDER BY who LIMIT 3;
CREATE FOREIGN TABLE public.bad_columns (movie text, nonsense text)
  SERVER movies OPTIONS (resource 'movie_themes');
SELECT * FROM public.bad_columns WHERE movie = 'inception';
CREATE FOREIGN TABLE public.wrong_service (id text) SERVER movies OPTIONS (resource 'orders');
SELECT * FROM public.wrong_service;
DROP FOREIGN TABLE public.bad_columns, public.wrong_service;

-- a join gives the movie: a parameterized scan, rescanned per outer row
CREATE TEMP TABLE wanted (movie text);
INSERT INTO wanted VALUES ('inception'), ('epic-saga'), ('inception');
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
SELECT w.movie, count(*) FROM wanted w JOIN movie_characters c ON c.movie = w.movie GROUP BY 1;
CALL sandbox.reset_stats();
SELECT w.movie, count(*) FROM wanted w JOIN movie_characters c ON c.movie = w.movie GROUP BY 1 ORDER BY 1;
SELECT path, count(*) FROM sandbox.requests() GROUP BY path ORDER BY path;
SELECT v.m, (SELECT count(*) FROM movie_timeline t WHERE t.movie = v.m)
FROM (VALUES ('inception'), ('1000')) v(m);
RESET enable_hashjoin;
RESET enable_mergejoin;

-- unknown movie: no rows for it, as a table gives none for a key it does
-- not hold, alone or as one value of a fan-out; EXPLAIN ANALYZE counts
-- such answers (Partner Not Found), so a mistyped slug stays visible
CALL sandbox.reset_stats();
SELECT * FROM movie_themes WHERE movie = 'no-such-movie';
SELECT movie, count(*) FROM movie_themes
WHERE movie = ANY (ARRAY['inception', 'no-such-movie', 'frozen-station']) GROUP BY movie ORDER BY movie;
SELECT path, status FROM sandbox.requests() ORDER BY path;
SELECT * FROM sandbox.explain_analyze($$SELECT * FROM movie_themes WHERE movie IN ('inception', 'no-such-movie', 'no-such-film')$$) AS "QUERY PLAN";
-- a bad request stays an error (the bad cursor: fdw_faults.sql)
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "error", "value": 400, "count": 1}');
SELECT count(*) FROM movie_themes WHERE movie = 'inception';
