-- fdw_conditions: which conditions reach the service.  Only an equality
-- that compares exactly is sent: a built-in operator under a
-- deterministic collation (the column's own, or the default); a condition
-- on a citext column or under a non-deterministic collation is checked
-- locally, as PostgreSQL would match it.  Several conditions on one
-- column are intersected: only values that satisfy every one are sent,
-- and none when no value does; so a reader's condition on a
-- security_barrier view never sends a value the view hides.
-- A fanned-out scan has its requests in flight together, so they reach
-- the sandbox in any order: the request listings are sorted by path.
SET search_path = public;
CALL sandbox.clear_faults();
SET partner_svc.learn_estimates = off;
CREATE SCHEMA cond;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies INTO cond;
IMPORT FOREIGN SCHEMA catalog LIMIT TO (business_questions) FROM SERVER catalog INTO cond;
SET search_path = cond, public;
CREATE EXTENSION citext SCHEMA cond;
CREATE COLLATION cond.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);

--
-- citext and non-deterministic collations: checked locally
--
CREATE FOREIGN TABLE bq_citext (id text, persona citext, answerability text)
  SERVER catalog OPTIONS (resource 'business_questions');
CREATE FOREIGN TABLE bq_ci (id text, persona text COLLATE cond.ci, answerability text COLLATE cond.ci)
  SERVER catalog OPTIONS (resource 'business_questions');
CREATE FOREIGN TABLE orders_ci (id text COLLATE cond.ci, custom_id text COLLATE cond.ci, status text)
  SERVER orders OPTIONS (resource 'orders');
SELECT count(*) AS hr FROM business_questions WHERE persona = 'hr' \gset
CALL sandbox.reset_stats();
SELECT count(*) = :hr AS same FROM bq_citext WHERE persona = 'HR';
SELECT count(*) = :hr AS same FROM bq_citext WHERE persona IN ('HR', 'nobody');
SELECT count(*) = :hr AS same FROM bq_ci WHERE persona = 'Hr';
SELECT count(*) = :hr AS same FROM bq_ci WHERE persona = 'HR' OR persona = 'nobody';
SELECT count(*) = :hr AS same FROM business_questions WHERE persona = 'HR' COLLATE cond.ci;
SELECT count(*) > 0 AS some FROM bq_ci WHERE answerability = 'SOURCE_REQUIRED';
-- the whole list, each time: no filter was sent
SELECT method, route, query, status FROM sandbox.requests();
-- under the default collation the condition is still sent
CALL sandbox.reset_stats();
SELECT count(*) = :hr AS same FROM bq_ci WHERE persona = 'hr' COLLATE "default";
SELECT method, route, query, status FROM sandbox.requests();
-- a detail key under a case-insensitive collation: the list is read, so
-- the order of custom id PL-1 (fdw_plans) is found by 'pl-1'
CALL sandbox.reset_stats();
SELECT custom_id FROM orders_ci WHERE custom_id = 'pl-1';
SELECT method, route, status FROM sandbox.requests();
EXPLAIN (COSTS OFF) SELECT * FROM bq_citext WHERE persona = 'HR';
EXPLAIN (COSTS OFF) SELECT * FROM orders_ci WHERE custom_id = 'pl-1';

--
-- several conditions on one column: their intersection is sent
--
CALL sandbox.reset_stats();
SELECT count(*) FROM movie_themes WHERE movie = 'inception' AND movie = ANY ('{frozen-station}');
SELECT count(*) FROM movie_themes WHERE movie IN ('inception', 'frozen-station') AND movie = 'inception' AND movie <> 'x';
SELECT count(*) FROM movie_themes
WHERE (movie = 'inception' OR movie = 'frozen-station' OR movie = 'x') AND movie IN ('frozen-station', 'inception', 'y');
SELECT path, status FROM sandbox.requests() ORDER BY path, status;
EXPLAIN (COSTS OFF) SELECT * FROM movie_themes WHERE movie = 'inception' AND movie = ANY ('{frozen-station}');
EXPLAIN (COSTS OFF) SELECT * FROM movie_themes WHERE movie IN ('inception', 'frozen-station') AND movie = 'inception';
EXPLAIN (COSTS OFF) SELECT * FROM business_questions WHERE persona IN ('hr', 'einkauf') AND persona IN ('einkauf', 'kalkulation');
-- with parameters: intersected when the scan starts
SET plan_cache_mode = force_generic_plan;
PREPARE themes_in(text[], text) AS
  SELECT movie, count(*) FROM movie_themes WHERE movie = ANY ($1) AND movie IN ($2, 'inception') GROUP BY 1 ORDER BY 1;
CALL sandbox.reset_stats();
EXECUTE themes_in('{frozen-station,inception}', 'frozen-station');
EXECUTE themes_in('{frozen-station}', 'x');
EXECUTE themes_in('{inception,y}', 'x');
SELECT path, status FROM sandbox.requests() ORDER BY path, status;
EXPLAIN (COSTS OFF) EXECUTE themes_in('{x}', 'x');
DEALLOCATE themes_in;
RESET plan_cache_mode;

--
-- a security_barrier view limited to one movie: a reader's condition on
-- movie sends nothing outside it
--
CREATE ROLE regress_psvc_cond_reader;
CREATE VIEW cond.inception_themes WITH (security_barrier) AS
  SELECT * FROM cond.movie_themes WHERE movie = 'inception';
GRANT USAGE ON SCHEMA cond TO regress_psvc_cond_reader;
GRANT SELECT ON cond.inception_themes TO regress_psvc_cond_reader;
CALL sandbox.reset_stats();
SET ROLE regress_psvc_cond_reader;
SELECT count(*) FROM inception_themes WHERE movie = ANY ('{frozen-station}');
SELECT count(*) FROM inception_themes WHERE movie IN ('frozen-station', 'no-such-movie');
SELECT count(*) > 0 AS some FROM inception_themes WHERE movie IN ('frozen-station', 'inception');
RESET ROLE;
SELECT path, status FROM sandbox.requests() ORDER BY path, status;
SET ROLE regress_psvc_cond_reader;
SELECT * FROM sandbox.explain_analyze($$SELECT * FROM inception_themes WHERE movie = ANY ('{frozen-station}')$$) AS "QUERY PLAN";
RESET ROLE;
-- a view whose conditions on movie are all sent: the reader's leakproof
-- condition still chooses the request, within the view's values
CREATE VIEW cond.two_themes WITH (security_barrier) AS
  SELECT * FROM cond.movie_themes WHERE movie IN ('inception', 'frozen-station');
GRANT SELECT ON cond.two_themes TO regress_psvc_cond_reader;
SET ROLE regress_psvc_cond_reader;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT title FROM two_themes WHERE movie = 'frozen-station';
EXPLAIN (VERBOSE, COSTS OFF)
SELECT title FROM two_themes WHERE movie IN ('frozen-station', 'no-such-movie');
RESET ROLE;

--
-- a security_barrier view that limits movie by a condition the service
-- cannot apply (LIKE): PostgreSQL plans the reader's leakproof condition
-- inside the view, beside the view's own; only values that pass the
-- view's condition are sent, so no request with the view owner's key
-- names a movie beyond the barrier
--
CREATE VIEW cond.incep_themes WITH (security_barrier) AS
  SELECT * FROM cond.movie_themes WHERE movie LIKE 'incep%';
GRANT SELECT ON cond.incep_themes TO regress_psvc_cond_reader;
CALL sandbox.reset_stats();
SET ROLE regress_psvc_cond_reader;
SELECT count(*) FROM incep_themes WHERE movie = 'frozen-station';
SELECT count(*) FROM incep_themes WHERE movie IN ('frozen-station', 'no-such-movie');
SELECT count(*) > 0 AS some FROM incep_themes WHERE movie IN ('frozen-station', 'inception');
SELECT count(*) > 0 AS some FROM incep_themes WHERE movie = 'inception';
RESET ROLE;
-- only inception, twice: never frozen-station or no-such-movie
SELECT path, status FROM sandbox.requests() ORDER BY path, status;
SET ROLE regress_psvc_cond_reader;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT title FROM incep_themes WHERE movie = 'frozen-station';
EXPLAIN (VERBOSE, COSTS OFF)
SELECT title FROM incep_themes WHERE movie IN ('frozen-station', 'inception');
SELECT * FROM sandbox.explain_analyze($$SELECT * FROM incep_themes WHERE movie = 'frozen-station'$$) AS "QUERY PLAN";
-- a value known only when the scan starts cannot be checked against the
-- view's condition when planning: it is not sent (the scan has no movie)
SET plan_cache_mode = force_generic_plan;
PREPARE incep_one(text) AS SELECT count(*) FROM incep_themes WHERE movie = $1;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE incep_one('frozen-station');
\set VERBOSITY terse
EXECUTE incep_one('frozen-station');
\set VERBOSITY default
DEALLOCATE incep_one;
RESET plan_cache_mode;
RESET ROLE;

-- the same condition in a view without security_barrier: PostgreSQL
-- merges the view into the query, and the reader's value is sent as
-- in a plain query
CREATE VIEW cond.incep_plain AS
  SELECT * FROM cond.movie_themes WHERE movie LIKE 'incep%';
GRANT SELECT ON cond.incep_plain TO regress_psvc_cond_reader;
SET ROLE regress_psvc_cond_reader;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT title FROM incep_plain WHERE movie = 'frozen-station';
RESET ROLE;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT title FROM movie_themes WHERE movie = 'frozen-station' AND movie LIKE 'incep%';

--
-- a security_barrier view that limits movie by a join with a local table
-- of allowed movies: the join stays local, so a reader's value of movie
-- is never sent.  Read whole, the view's rows come by the join's values;
-- a reader who names a movie gets the missing-movie error, since
-- PostgreSQL turns the join into a condition on each side and leaves no
-- join value to send
--
CREATE TABLE cond.allowed_movies (movie text);
INSERT INTO cond.allowed_movies VALUES ('inception');
ANALYZE cond.allowed_movies;
CREATE VIEW cond.allowed_themes WITH (security_barrier) AS
  SELECT t.* FROM cond.movie_themes t JOIN cond.allowed_movies a ON t.movie = a.movie;
GRANT SELECT ON cond.allowed_themes TO regress_psvc_cond_reader;
CALL sandbox.reset_stats();
SET ROLE regress_psvc_cond_reader;
SELECT count(*) > 0 AS some FROM allowed_themes;
SELECT count(*) FROM allowed_themes WHERE movie = 'frozen-station';
RESET ROLE;
SELECT path, status FROM sandbox.requests() ORDER BY path, status;

RESET partner_svc.learn_estimates;
SET search_path = public;
SET client_min_messages = warning;
DROP SCHEMA cond CASCADE;
DROP ROLE regress_psvc_cond_reader;
RESET client_min_messages;
