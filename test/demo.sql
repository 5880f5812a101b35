-- partner_svc demo: a psql session against the sandbox, which fakes the
-- partner services on a loopback port.
\set VERBOSITY default
\pset footer on
\getenv sandbox_url PSVC_SANDBOX_URL

CREATE EXTENSION partner_svc;

-- one server per service, the API key in a user mapping
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies OPTIONS (api_key 'sandbox-key');
CREATE SERVER catalog FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'catalog', base_url :'sandbox_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER catalog OPTIONS (api_key 'sandbox-key');
CREATE SERVER scheduler FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'scheduler', base_url :'sandbox_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER scheduler OPTIONS (api_key 'sandbox-key');
CREATE SERVER todos FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url :'sandbox_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER todos;

IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO public;
IMPORT FOREIGN SCHEMA catalog FROM SERVER catalog INTO public;
IMPORT FOREIGN SCHEMA scheduler FROM SERVER scheduler INTO public;
IMPORT FOREIGN SCHEMA todos FROM SERVER todos INTO public;
\dE

-- the movie is pushed into the path, LIMIT into the page size
SELECT movie, position, title, emoji FROM movie_themes WHERE movie = 'inception' LIMIT 5;
EXPLAIN (COSTS OFF) SELECT title FROM movie_themes WHERE movie = 'epic-saga' LIMIT 5;

-- 10,000 themes, walked lazily page by page; EXPLAIN ANALYZE counts the requests
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT count(*) FROM movie_themes WHERE movie = 'epic-saga';

-- several movies at once: their first pages are fetched concurrently
SELECT movie, count(*) AS characters FROM movie_characters
WHERE movie = ANY (ARRAY['inception', 'epic-saga', 'bench-100k']) GROUP BY movie ORDER BY movie;

-- other filters become query parameters
SELECT question, answer FROM movie_faqs WHERE movie = 'inception' AND section = 'ending';

-- the movie search and the catalog
SELECT title, year, genres FROM movies WHERE genre = 'western' LIMIT 5;
SELECT persona, answerability, count(*) FROM business_questions
WHERE persona = 'einkauf' GROUP BY 1, 2 ORDER BY 3 DESC;

-- jobs of the scheduler, todos
SELECT id, name, is_active, status, job_run_frequency FROM user_jobs ORDER BY id;
SELECT id, title, completed FROM todos ORDER BY id;

-- functions for single-object reads and mutations
SELECT left(partner_svc.movie_summary('inception'), 120) AS summary;
SELECT partner_svc.business_question_answer('BQ-HR-007') -> 'blocker' ->> 'code' AS blocker;

CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url', tier 'standard');
CREATE USER MAPPING FOR CURRENT_USER SERVER orders OPTIONS (api_key 'sandbox-key');
SELECT o ->> 'custom_id' AS custom_id, o ->> 'status' AS status
FROM jsonb_array_elements(partner_svc.create_order($${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ AB-123", "country": "SI"}],
  "vignettes": [{"custom_id": "DEMO-1", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2026-01-01"}]
}$$) -> 'orders') AS o;
SELECT partner_svc.validate_order('{"vehicles": [], "vignettes": []}') AS invalid_payload;
SELECT partner_svc.order_status('DEMO-1');

-- a writable foreign table
INSERT INTO todos (title, user_id) VALUES ('Try partner_svc', 7) RETURNING id, title, completed;

-- a required filter that is missing is a clear error
SELECT * FROM movie_themes;
