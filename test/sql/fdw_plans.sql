-- fdw_plans: every row satisfies its WHERE (pushed conditions are
-- rechecked), a detail route is reachable from each identifier it accepts,
-- every query shape plans whenever PostgreSQL can supply a required key,
-- and when nothing can, the error is the documented HV000 naming the
-- column, raised when the scan runs, never XX000 at planning.  Also the
-- options of IMPORT FOREIGN SCHEMA.
SET search_path = public;
CALL sandbox.clear_faults();
-- the plans shown here must not depend on what earlier tests scanned:
-- default row estimates, not learned ones (docs/estimates.md)
SET partner_svc.learn_estimates = off;
CREATE SCHEMA plans;
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO plans;
IMPORT FOREIGN SCHEMA orders FROM SERVER orders INTO plans;
IMPORT FOREIGN SCHEMA scheduler FROM SERVER scheduler INTO plans;
SET search_path = plans, public;

--
-- IMPORT FOREIGN SCHEMA takes no options: unknown ones are HV00D, and an
-- option of another object says where it belongs
--
\set VERBOSITY default
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO plans OPTIONS (foo 'bar');
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO plans OPTIONS (resource 'movies');
SELECT sandbox.sqlstate_of($$IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO plans OPTIONS (api_key 'k')$$) AS api_key;

--
-- orders: PL-1 starts in 2030 (DEFERRED), PL-2 in 2026 (PENDING)
--
CALL sandbox.set('{"orders.pending_after_min": 0, "orders.active_after_min": 100000, "orders.deferred_active_after_min": 100000}');
SELECT count(*) FROM sandbox.call('POST', '/public/orders', $${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ PL-001", "country": "SI"}],
  "vignettes": [{"custom_id": "PL-1", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2030-01-01"}]}$$,
  'sandbox-key');
SELECT count(*) FROM sandbox.call('POST', '/public/orders', $${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ PL-002", "country": "SI"}],
  "vignettes": [{"custom_id": "PL-2", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2026-01-01"}]}$$,
  'sandbox-key');
SELECT pg_sleep(0.3);
SELECT custom_id, status FROM orders WHERE custom_id LIKE 'PL-%' ORDER BY 1;

-- custom_id = reads the detail route, as id = does; the row is rechecked
CALL sandbox.reset_stats();
SELECT custom_id, id LIKE 'ord_%' AS service_id, status FROM orders WHERE custom_id = 'PL-1';
-- the same detail answers for the custom id, but its id is not 'PL-1':
-- no row, so no row contradicts "id = 'PL-1'"
SELECT count(*) FROM orders WHERE id = 'PL-1';
-- by its real id
SELECT o.custom_id FROM orders o WHERE o.id = (SELECT id FROM orders WHERE custom_id = 'PL-2');
-- both conditions: one detail read, the other checked locally
SELECT count(*) FROM orders WHERE custom_id = 'PL-1' AND id = 'PL-2';
SELECT method, route, regexp_replace(path, 'ord_[0-9a-f]+$', 'ord_<id>') AS path, status
FROM sandbox.requests();
EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE custom_id = 'PL-1';

-- status: DEFERRED is asked for with the filter value WILL BE ACTIVE; a
-- value no filter selects exactly (WILL BE ACTIVE itself, which is no
-- order's status, or CREATED) lists without the filter and checks locally
CALL sandbox.reset_stats();
SELECT custom_id, status FROM orders WHERE status = 'DEFERRED' AND custom_id LIKE 'PL-%';
SELECT count(*) FROM orders WHERE status = 'WILL BE ACTIVE';
SELECT count(*) FROM orders WHERE status = 'CREATED' AND custom_id LIKE 'PL-%';
SELECT custom_id, status FROM orders WHERE status = 'PENDING' AND custom_id LIKE 'PL-%';
SELECT method, route, replace(replace(query, '+', ' '), '%20', ' ') AS query, status
FROM sandbox.requests();
EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE status = 'DEFERRED';
-- the same with a parameter, mapped when the scan starts
PREPARE by_status(text) AS
  SELECT custom_id, status FROM orders WHERE status = $1 AND custom_id LIKE 'PL-%';
EXECUTE by_status('DEFERRED');
EXECUTE by_status('WILL BE ACTIVE');
DEALLOCATE by_status;
-- contradictory conditions give nothing, whatever the service sends
SELECT count(*) FROM orders WHERE status = 'ACTIVE' AND status IS DISTINCT FROM 'ACTIVE';

-- genre: the service matches it case-insensitively against genres; the
-- column echoes the filter only for movies whose genres hold it
SELECT count(*) AS drama, bool_and(genres ? 'drama') AS all_hold
FROM movies WHERE genre = 'DRAMA';
SELECT count(*) AS by_genres FROM movies WHERE genres ? 'drama';
SELECT count(*) FILTER (WHERE genre IS NOT NULL) AS echoed FROM movies;

--
-- plans: a required key from a constant, a parameter or the other side of
-- a join; otherwise HV000 naming the column, when the scan runs
--
CREATE TEMP TABLE wanted (slug text, note text);
INSERT INTO wanted VALUES ('inception', 'hand-written'), ('summary-only', 'no content');

-- two movie tables joined on movie: nothing gives the key ...
SELECT sandbox.try($$SELECT count(*) FROM movie_themes a JOIN movie_faqs b ON a.movie = b.movie$$) AS no_key;
-- ... planning alone succeeds: EXPLAIN shows the plan
EXPLAIN (COSTS OFF) SELECT * FROM movie_themes a JOIN movie_faqs b ON a.movie = b.movie;
-- ... and a constant on either side is enough
SELECT count(*) FROM movie_themes a JOIN movie_faqs b ON a.movie = b.movie WHERE b.movie = 'inception';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM movie_themes a JOIN movie_faqs b ON a.movie = b.movie WHERE b.movie = 'inception';

-- a table alone without a key: the documented error, not a planner failure
SELECT sandbox.try($$SELECT * FROM movie_themes$$) AS alone;
SELECT sandbox.try($$SELECT * FROM movie_themes WHERE title = 'x'$$) AS other_column;
EXPLAIN (COSTS OFF) SELECT * FROM movie_themes;
SELECT * FROM movie_characters;
\echo :LAST_ERROR_SQLSTATE

-- self-join of job_executions on job_id
SELECT count(*) FROM sandbox.call('GET', '/api/user-jobs/run/1000002', NULL, 'sandbox-key');
SELECT sandbox.try($$SELECT count(*) FROM job_executions a JOIN job_executions b ON a.job_id = b.job_id$$) AS self_no_key;
SELECT count(*) > 0 AS pairs FROM job_executions a JOIN job_executions b ON a.job_id = b.job_id
WHERE a.job_id = 1000002;
SELECT count(*) > 0 AS via_jobs FROM user_jobs j JOIN job_executions e ON e.job_id = j.id
WHERE j.id = 1000002;

-- outer joins with a local table: the local side gives the key ...
SELECT w.slug, count(t.title) AS themes
FROM wanted w LEFT JOIN movie_themes t ON t.movie = w.slug GROUP BY 1 ORDER BY 1;
SELECT w.slug, count(t.title) AS themes
FROM movie_themes t RIGHT JOIN wanted w ON t.movie = w.slug GROUP BY 1 ORDER BY 1;
EXPLAIN (COSTS OFF)
SELECT * FROM wanted w LEFT JOIN movie_themes t ON t.movie = w.slug;
-- ... but not when the movie table is the preserved side
SELECT sandbox.try($$SELECT count(*) FROM movie_themes t LEFT JOIN wanted w ON t.movie = w.slug$$) AS preserved;
SELECT count(*) FROM movie_themes t LEFT JOIN wanted w ON t.movie = w.slug WHERE t.movie = 'inception';
SELECT sandbox.try($$SELECT count(*) FROM movie_themes t FULL JOIN wanted w ON t.movie = w.slug$$) AS full_join;

-- semi-joins, LATERAL, correlated subqueries, parameters
SELECT count(*) FROM movie_themes WHERE movie IN (SELECT slug FROM wanted);
SELECT w.slug, x.n FROM wanted w,
  LATERAL (SELECT count(*) AS n FROM movie_timeline t WHERE t.movie = w.slug) x ORDER BY 1;
SELECT w.slug, (SELECT count(*) FROM movie_characters c WHERE c.movie = w.slug) AS n
FROM wanted w ORDER BY 1;
SELECT slug FROM wanted w WHERE EXISTS (SELECT 1 FROM movie_faqs f WHERE f.movie = w.slug) ORDER BY 1;
PREPARE themes_of(text) AS SELECT count(*) FROM movie_themes WHERE movie = $1;
EXECUTE themes_of('inception');
DEALLOCATE themes_of;
SELECT count(*) FROM movie_themes WHERE movie = (SELECT slug FROM wanted WHERE note = 'hand-written');

-- MERGE whose source is a movie table: the key from the target or the
-- source's own condition
CREATE TEMP TABLE theme_copy (movie text, title text);
INSERT INTO theme_copy VALUES ('inception', 'Dreams');
SELECT sandbox.try($$MERGE INTO theme_copy c USING movie_themes s ON c.movie = s.movie AND c.title = s.title
  WHEN NOT MATCHED THEN INSERT VALUES (s.movie, s.title)$$) AS merge_no_key;
MERGE INTO theme_copy c
USING (SELECT * FROM movie_themes WHERE movie = 'inception') s ON c.movie = s.movie AND c.title = s.title
WHEN NOT MATCHED THEN INSERT VALUES (s.movie, s.title);
SELECT count(*) FROM theme_copy;
MERGE INTO theme_copy c USING movie_themes s ON c.movie = s.movie AND c.title = s.title
WHEN MATCHED THEN UPDATE SET title = s.title;
SELECT count(*) FROM theme_copy;

-- set operations and CTEs
SELECT count(*) FROM (SELECT title FROM movie_themes WHERE movie = 'inception'
  UNION ALL SELECT title FROM movie_timeline WHERE movie = 'inception') u;
WITH m AS (SELECT slug FROM movies WHERE slug = 'inception')
SELECT count(*) FROM m JOIN movie_characters c ON c.movie = m.slug;

-- JIT: the cost of partner requests does not count towards jit_above_cost
-- (fdw_jit.c).  The foreign scan's plan costs more than the threshold, so
-- the standard rule alone would compile it; the local plan is compiled
-- when this server can JIT at all.
SET jit = on;
SET jit_above_cost = 1000;
CREATE FUNCTION pg_temp.jit_plan(q text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  p json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO p;
  RETURN p->0;
END $$;
SELECT (pg_temp.jit_plan('SELECT count(*) FROM movies')->'Plan'->>'Total Cost')::float8 > 1000
         AS costs_more_than_threshold,
       pg_temp.jit_plan('SELECT count(*) FROM movies')->'JIT' IS NULL AS partner_scan_not_compiled,
       NOT pg_jit_available()
         OR pg_temp.jit_plan('SELECT count(*) FROM generate_series(1, 100000) g')->'JIT' IS NOT NULL
         AS local_plan_compiled;
RESET jit_above_cost;
RESET jit;

RESET search_path;
