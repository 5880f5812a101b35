-- estimates: the planner's row estimates of foreign scans are learned from
-- what complete scans kept (docs/estimates.md).  A server of its own
-- (est_movies) and movies no other test reads (ids 50..59 of the
-- sandbox's generated data, seed 1) keep the entries of this test apart;
-- it starts by forgetting that server's entries.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();
CREATE SERVER est_movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER est_movies OPTIONS (api_key 'sandbox-key');
CREATE SCHEMA est;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes, movie_characters)
  FROM SERVER est_movies INTO est;
SELECT partner_svc.estimates_reset('est_movies');

-- the plan's row estimate (the top node's "Plan Rows")
CREATE FUNCTION pg_temp.plan_rows(q text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j -> 0 -> 'Plan' ->> 'Plan Rows')::numeric;
END $$;
-- this server's entries, as the view shows them
CREATE VIEW est.entries AS
  SELECT route, kind, columns, key, round(rows::numeric, 2) AS rows, scans, last_rows,
         last_scan IS NOT NULL AND last_scan <= now() AS scanned
  FROM partner_svc.estimates WHERE server = 'est_movies';

--
-- before any scan: the default (a list the service filters: 250 rows)
--
EXPLAIN (VERBOSE, COSTS OFF) SELECT title FROM est.movie_themes WHERE movie = '52';
SELECT pg_temp.plan_rows($$SELECT title FROM est.movie_themes WHERE movie = '52'$$);
-- plain EXPLAIN does not show it
EXPLAIN (COSTS OFF) SELECT title FROM est.movie_themes WHERE movie = '52';

--
-- one complete scan (6 themes): the next plan expects 6 rows
--
SELECT count(*) FROM est.movie_themes WHERE movie = '52';
EXPLAIN (VERBOSE, COSTS OFF) SELECT title FROM est.movie_themes WHERE movie = '52';
SELECT pg_temp.plan_rows($$SELECT title FROM est.movie_themes WHERE movie = '52'$$);
-- local conditions still scale it (6 * 0.005 for an equality, at least 1)
SELECT pg_temp.plan_rows($$SELECT title FROM est.movie_themes WHERE movie = '52' AND emoji = 'x'$$);
SELECT * FROM est.entries ORDER BY kind, key;

--
-- scans that stop early record nothing: a pushed LIMIT (56 themes, 3
-- asked for), a LIMIT the executor applies (local filter), a LIMIT inside
-- a nested loop that is rescanned, and an error on the second page
--
SELECT title FROM est.movie_themes WHERE movie = '50' LIMIT 3;
SELECT title FROM est.movie_themes WHERE movie = '54' AND title <> 'none' LIMIT 2;
SELECT v.m, x.title
FROM (VALUES ('55'), ('56')) v(m),
     LATERAL (SELECT title FROM est.movie_themes t WHERE t.movie = v.m LIMIT 1) x
ORDER BY 1;
SET partner_svc.page_size = 5;
SET partner_svc.max_retries = 0;
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "error", "value": 500, "count": 1, "skip": 1}');
\set VERBOSITY terse
SELECT count(*) FROM est.movie_themes WHERE movie = '59';
\set VERBOSITY default
CALL sandbox.clear_faults();
RESET partner_svc.page_size;
RESET partner_svc.max_retries;
-- still one scan, of movie 52
SELECT * FROM est.entries ORDER BY kind, key;
-- so those movies are estimated by the average of the others (one scan: 6)
EXPLAIN (VERBOSE, COSTS OFF) SELECT title FROM est.movie_themes WHERE movie = '50';

--
-- another key value is independent: 57 (12 themes) learns 12, 52 keeps 6,
-- the average follows both, a movie not seen yet gets the average
--
SELECT count(*) FROM est.movie_themes WHERE movie = '57';
SELECT pg_temp.plan_rows($$SELECT title FROM est.movie_themes WHERE movie = '57'$$) AS m57,
       pg_temp.plan_rows($$SELECT title FROM est.movie_themes WHERE movie = '52'$$) AS m52,
       pg_temp.plan_rows($$SELECT title FROM est.movie_themes WHERE movie = '53'$$) AS m53;
EXPLAIN (VERBOSE, COSTS OFF) SELECT title FROM est.movie_themes WHERE movie = '53';
-- a complete multi-page scan records its whole count (17 themes in pages of 5)
SET partner_svc.page_size = 5;
SELECT count(*) FROM est.movie_themes WHERE movie = '59';
RESET partner_svc.page_size;
-- = ANY: the sum over its values, an unseen one (53) counted as the average
EXPLAIN (VERBOSE, COSTS OFF) SELECT title FROM est.movie_themes WHERE movie = ANY ('{52,57,53}');
-- each stream of a fan-out is learned under its own value
SELECT count(*) FROM est.movie_themes WHERE movie = ANY ('{53,58}');
-- and each value of a nested loop's rescans (a parameterized scan)
SELECT v.m, count(t.title)
FROM (VALUES ('55'), ('56')) v(m) JOIN est.movie_themes t ON t.movie = v.m
GROUP BY 1 ORDER BY 1;
SELECT * FROM est.entries ORDER BY kind, key;
-- the parameterized scan's estimate per value is the average
EXPLAIN (VERBOSE, COSTS OFF)
SELECT v.m, t.title
FROM (VALUES ('55'), ('56')) v(m) JOIN est.movie_themes t ON t.movie = v.m;
-- a second scan of a key averages (the same 6 again)
SELECT count(*) FROM est.movie_themes WHERE movie = '52';
SELECT kind, key, rows, scans, last_rows FROM est.entries WHERE key = $$movie='52'$$;

--
-- a join's plan follows: with the defaults both sides are 250 rows and the
-- characters of 57 are hashed; once the themes of 52 are known to be 6,
-- they are the smaller side and are hashed instead
--
SET partner_svc.learn_estimates = off;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT t.title, c.name
FROM est.movie_themes t JOIN est.movie_characters c ON c.name = t.title
WHERE t.movie = '52' AND c.movie = '57';
RESET partner_svc.learn_estimates;
EXPLAIN (COSTS OFF)
SELECT t.title, c.name
FROM est.movie_themes t JOIN est.movie_characters c ON c.name = t.title
WHERE t.movie = '52' AND c.movie = '57';

--
-- partner_svc.learn_estimates = off: nothing is recorded (movie 51)
--
SET partner_svc.learn_estimates = off;
SELECT count(*) FROM est.movie_themes WHERE movie = '51';
RESET partner_svc.learn_estimates;
SELECT count(*) AS entries_for_51 FROM est.entries WHERE key = $$movie='51'$$;

--
-- who sees key values: superusers and pg_read_all_stats; others see NULL
--
CREATE ROLE est_plain;
CREATE ROLE est_stats IN ROLE pg_read_all_stats;
GRANT USAGE ON SCHEMA est TO est_plain, est_stats;
GRANT SELECT ON est.entries TO est_plain, est_stats;
SET ROLE est_plain;
SELECT kind, columns, key IS NULL AS hidden, key FROM est.entries ORDER BY kind, key LIMIT 3;
SELECT partner_svc.estimates_reset();
RESET ROLE;
SET ROLE est_stats;
SELECT kind, columns, key IS NULL AS hidden, key FROM est.entries ORDER BY kind, key LIMIT 3;
RESET ROLE;

--
-- reset: back to the defaults
--
SELECT partner_svc.estimates_reset('no_such_server');
SELECT partner_svc.estimates_reset('est_movies');
SELECT count(*) FROM est.entries;
EXPLAIN (VERBOSE, COSTS OFF) SELECT title FROM est.movie_themes WHERE movie = '52';

DROP VIEW est.entries;
DROP SCHEMA est CASCADE;
DROP SERVER est_movies CASCADE;
DROP ROLE est_plain;
DROP ROLE est_stats;
