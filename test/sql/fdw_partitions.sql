-- fdw_partitions: a partitioned table over foreign partitions (issue 27,
-- item 8).  A condition on the partitioned table reaches every partition
-- whole; each partition sends only the values its bound admits, so each
-- row comes once, async or not.  A value known only when the scan starts
-- is checked against the bound locally.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();
SET partner_svc.learn_estimates = off;
CREATE SCHEMA part;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies INTO part;
CREATE SERVER movies_async_part FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url', async_capable 'true');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_async_part
  OPTIONS (api_key 'sandbox-key');

-- the truth: the themes of two movies, read from the plain table
SELECT movie, count(*) AS themes FROM part.movie_themes
WHERE movie IN ('inception', 'frozen-station') GROUP BY movie ORDER BY movie;

CREATE TABLE part.themes (movie text NOT NULL, position int, title text)
  PARTITION BY LIST (movie);
CREATE FOREIGN TABLE part.themes_inception PARTITION OF part.themes
  FOR VALUES IN ('inception') SERVER movies OPTIONS (resource 'movie_themes');
CREATE FOREIGN TABLE part.themes_frozen PARTITION OF part.themes
  FOR VALUES IN ('frozen-station') SERVER movies OPTIONS (resource 'movie_themes');

-- each partition asks for its own movie only: each row once, one request
-- a movie
CALL sandbox.reset_stats();
SELECT movie, count(*) AS themes FROM part.themes
WHERE movie IN ('inception', 'frozen-station') GROUP BY movie ORDER BY movie;
SELECT path, count(*) AS requests FROM sandbox.requests() GROUP BY path ORDER BY path;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT * FROM part.themes WHERE movie IN ('inception', 'frozen-station');
-- a value no partition admits sends nothing
CALL sandbox.reset_stats();
SELECT count(*) FROM part.themes WHERE movie IN ('inception', 'no-such-partition');
SELECT path FROM sandbox.requests() ORDER BY path;

-- async partitions: the same rows, the same requests
CREATE TABLE part.themes_async (movie text NOT NULL, position int, title text)
  PARTITION BY LIST (movie);
CREATE FOREIGN TABLE part.themes_async_inception PARTITION OF part.themes_async
  FOR VALUES IN ('inception') SERVER movies_async_part OPTIONS (resource 'movie_themes');
CREATE FOREIGN TABLE part.themes_async_frozen PARTITION OF part.themes_async
  FOR VALUES IN ('frozen-station') SERVER movies_async_part OPTIONS (resource 'movie_themes');
CALL sandbox.reset_stats();
SELECT movie, count(*) AS themes FROM part.themes_async
WHERE movie IN ('inception', 'frozen-station') GROUP BY movie ORDER BY movie;
SELECT path, count(*) AS requests FROM sandbox.requests() GROUP BY path ORDER BY path;
EXPLAIN (COSTS OFF)
SELECT * FROM part.themes_async WHERE movie IN ('inception', 'frozen-station');

-- a value known only when the scan starts (a generic plan's parameter):
-- the bound filters the rows locally, so each row still comes once
SET plan_cache_mode = force_generic_plan;
PREPARE part_movies(text[]) AS
  SELECT movie, count(*) AS themes FROM part.themes WHERE movie = ANY ($1)
  GROUP BY movie ORDER BY movie;
CALL sandbox.reset_stats();
EXECUTE part_movies('{inception,frozen-station}');
-- (each partition asks for both movies then: the bound is checked on the
-- rows, not before the requests)
SELECT path, count(*) AS requests FROM sandbox.requests() GROUP BY path ORDER BY path;
EXPLAIN (COSTS OFF) EXECUTE part_movies('{inception,frozen-station}');
DEALLOCATE part_movies;
RESET plan_cache_mode;

DROP SCHEMA part CASCADE;
DROP SERVER movies_async_part CASCADE;
