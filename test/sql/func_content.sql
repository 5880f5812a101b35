-- func_content: the SQL functions of the movie, catalog and generation
-- services.  Each result is checked together with what the sandbox
-- received (sandbox.requests()).
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();

SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result, p.prosecdef, p.provolatile, p.proisstrict
FROM pg_proc p
WHERE p.pronamespace = 'partner_svc'::regnamespace
  AND (p.proname LIKE 'movie\_%' OR p.proname LIKE 'business\_question%'
       OR p.proname IN ('generate', 'validate_key'))
ORDER BY 1;

--
-- movies: the Markdown texts as text, the other objects as jsonb
--
CALL sandbox.reset_stats();
SELECT split_part(partner_svc.movie_summary('inception'), E'\n', 1) AS summary;
SELECT left(partner_svc.movie_spoiler_free_summary('inception'), 40) AS spoiler_free;
SELECT split_part(partner_svc.movie_ending('inception'), E'\n', 1) AS ending;
SELECT s #>> '{place,name}' AS place, s #>> '{time,period}' AS period
FROM partner_svc.movie_setting('inception') s;
SELECT partner_svc.movie_profile('inception');
SELECT partner_svc.movie_detail('inception');
SELECT partner_svc.movie_detail('1000') ->> 'slug' AS by_id;
SELECT method, path, query, status FROM sandbox.requests();

-- content a movie lacks is NULL (404 content_not_available)
CALL sandbox.reset_stats();
SELECT partner_svc.movie_summary('summary-only') IS NOT NULL AS summary,
       partner_svc.movie_spoiler_free_summary('summary-only') IS NULL AS no_spoiler_free,
       partner_svc.movie_ending('summary-only') IS NULL AS no_ending,
       partner_svc.movie_setting('summary-only') IS NULL AS no_setting,
       partner_svc.movie_profile('summary-only') IS NULL AS no_profile,
       partner_svc.movie_detail('summary-only') -> 'available_content' AS available;
SELECT path, status FROM sandbox.requests();

-- an unknown movie is an error (P0002), in every movie function
CALL sandbox.reset_stats();
SELECT partner_svc.movie_ending('no-such-movie');
SELECT partner_svc.movie_detail('no-such-movie');
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('no-such-movie')$$) AS summary,
       sandbox.sqlstate_of($$SELECT partner_svc.movie_profile('no-such-movie')$$) AS profile;
SELECT path, status FROM sandbox.requests();

-- NULL gives NULL; a movie reference of 0 or over 255 characters is
-- refused before anything is sent (22023)
CALL sandbox.reset_stats();
SELECT partner_svc.movie_summary(NULL) IS NULL AS summary, partner_svc.movie_detail(NULL) IS NULL AS detail;
SELECT partner_svc.movie_summary('');
SELECT sandbox.sqlstate_of(format('SELECT partner_svc.movie_profile(%L)', repeat('m', 256)));
SELECT count(*) AS requests FROM sandbox.requests();

-- several movie servers: name one; a server of another service is refused
CREATE SERVER movies_two FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_two OPTIONS (api_key 'premium-key');
CALL sandbox.reset_stats();
SELECT partner_svc.movie_detail('inception');
SELECT partner_svc.movie_detail('inception', 'movies_two') ->> 'title' AS title;
SELECT partner_svc.movie_detail('inception', server => 'catalog');
SELECT method, path, status FROM sandbox.requests();
DROP SERVER movies_two CASCADE;

--
-- business questions: the envelope, the answer or its blocker
--
CALL sandbox.reset_stats();
SELECT q #>> '{result,id}' AS id, q #>> '{result,persona}' AS persona,
       q #> '{result,status}' AS status, q #>> '{authorization,scopes,0}' AS scope,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(q) k) AS members
FROM partner_svc.business_question('BQ-GF-001') q;
SELECT a ->> 'business_answer_included' AS included, a #>> '{snapshot,approved}' AS approved,
       jsonb_array_length(a -> 'figures') AS figures, a #>> '{figures,0,unit}' AS unit,
       a -> 'scope' AS scope
FROM partner_svc.business_question_answer('BQ-GF-001') a;
-- a blocker is a normal result (200)
SELECT partner_svc.business_question_answer('BQ-GF-009');
SELECT q #> '{result,status,blocker}' ->> 'code' AS blocker
FROM partner_svc.business_question('BQ-HR-012') q;
SELECT method, path, status FROM sandbox.requests();

-- an id without the documented start BQ-(GF|EK|KA|HR)- is refused before
-- anything is sent; the service checks the rest (its pattern is three
-- digits: 400 invalid_question_id), and an unknown question is P0002
CALL sandbox.reset_stats();
SELECT partner_svc.business_question('BQ-XX-001');
SELECT id, sandbox.sqlstate_of(format('SELECT partner_svc.business_question_answer(%L)', id)) AS refused
FROM unnest(ARRAY['bq-gf-001', 'BQ-GF', 'BQ-GF-', 'BQ-GF001', 'BQ-GFX-001', 'BQ-GF-0/1',
                  'BQ-GF-' || repeat('1', 33), 'XBQ-GF-001']) id;
SELECT count(*) AS requests FROM sandbox.requests();
SELECT partner_svc.business_question('BQ-GF-1');
SELECT partner_svc.business_question_answer('BQ-GF-099');
SELECT method, path, status FROM sandbox.requests();

-- the caller needs USAGE on the server (42501)
CREATE ROLE regress_fc_user;
GRANT USAGE ON SCHEMA partner_svc TO regress_fc_user;
CALL sandbox.reset_stats();
SET ROLE regress_fc_user;
SELECT partner_svc.business_question('BQ-GF-001');
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('inception')$$);
RESET ROLE;
SELECT count(*) AS requests FROM sandbox.requests();
REVOKE ALL ON SCHEMA partner_svc FROM regress_fc_user;
DROP ROLE regress_fc_user;

--
-- generation and key validation
--
-- no server of the service yet
SELECT partner_svc.validate_key();
CREATE SERVER generation FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'generation', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER generation OPTIONS (api_key 'sandbox-key');
SELECT count(*) AS reset FROM sandbox.call('POST', '/_sandbox/rate-limits/reset');
CALL sandbox.reset_stats();
SELECT partner_svc.validate_key();
SELECT g ->> 'id' LIKE 'gen\_%' AS id, g ->> 'prompt' AS prompt, g -> 'count' AS count,
       jsonb_array_length(g -> 'threads') AS threads,
       g #>> '{threads,0,text}' AS first_thread,
       g #>> '{threads,1,id}' LIKE 'thr\_%' AS thread_id
FROM partner_svc.generate('{"prompt": "road trips", "count": 2}') g;
SELECT partner_svc.generate('{"prompt": ""}');
SELECT method, route, status FROM sandbox.requests();

-- a refused key is a result, not an error; the key appears nowhere
CREATE SERVER generation_badkey FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'generation', base_url :'sandbox_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER generation_badkey OPTIONS (api_key 'sk-not-a-real-key');
CREATE USER MAPPING FOR CURRENT_USER SERVER generation;
SELECT r - 'error' AS result, r #>> '{error,status}' AS status, r #>> '{error,type}' AS type,
       strpos(r::text, 'sk-not') = 0 AS key_not_shown
FROM partner_svc.validate_key('generation_badkey') r;
-- a mapping without api_key sends no key: refused too
SELECT partner_svc.validate_key('generation') #>> '{error,type}' AS no_key;
DROP USER MAPPING FOR CURRENT_USER SERVER generation;
DROP SERVER generation_badkey CASCADE;

-- 429: retried (backoff; here without Retry-After), then a clear error
-- with the problem's title
SET partner_svc.max_retries = 2;
CALL sandbox.set('{"retry_after": false}');
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "POST /v1/generate", "kind": "429", "count": 1}');
SELECT partner_svc.generate('{"prompt": "once more", "count": 1}') -> 'count' AS count;
SELECT method, route, status FROM sandbox.requests();
-- one window for the whole test, so that none ends in the middle of it
SELECT string_agg(l, '')::jsonb ->> 'rl_offset_ms' AS rl_offset FROM sandbox.call('GET', '/_sandbox/config') l \gset
CALL sandbox.set('{"rate_limit.POST /v1/generate": 2, "rl_window_ms": 1000000000, "rl_offset_ms": 0}');
SELECT count(*) AS reset FROM sandbox.call('POST', '/_sandbox/rate-limits/reset');
CALL sandbox.reset_stats();
SELECT partner_svc.generate('{"prompt": "a"}') IS NOT NULL AS first,
       partner_svc.generate('{"prompt": "b"}') IS NOT NULL AS second;
SELECT partner_svc.generate('{"prompt": "c"}');
SELECT sandbox.sqlstate_of($$SELECT partner_svc.generate('{"prompt": "d"}')$$);
SELECT method, route, status, count(*) FROM sandbox.requests() GROUP BY 1, 2, 3 ORDER BY 3;
RESET partner_svc.max_retries;
CALL sandbox.set(format('{"rate_limit.POST /v1/generate": null, "retry_after": true, "rl_window_ms": 60000, "rl_offset_ms": %s}', :'rl_offset'));
SELECT count(*) AS reset FROM sandbox.call('POST', '/_sandbox/rate-limits/reset');
SELECT partner_svc.generate(NULL) IS NULL AS generate_null;
