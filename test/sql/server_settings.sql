--
-- server_settings: connect_timeout, request_timeout, max_retries,
-- page_size, fanout and prefetch as server options that override the
-- GUCs; the TLS and proxy options; what EXPLAIN VERBOSE shows of them.
-- Uses the sandbox helpers and servers of fdw_setup.
--
\getenv sandbox_url PSVC_SANDBOX_URL
CALL sandbox.clear_faults();

--
-- validation: good values, with the GUCs' units
--
CREATE SERVER tuned FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url', connect_timeout '2s',
           request_timeout '1500', max_retries '0', page_size '2', fanout '2',
           prefetch 'off');
SELECT option FROM pg_foreign_server, unnest(srvoptions) AS option
WHERE srvname = 'tuned' AND option NOT LIKE 'base_url=%' ORDER BY 1;
CREATE SERVER tuned_limits FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url 'http://127.0.0.1:9', connect_timeout '10min',
           request_timeout '1h', max_retries '10', page_size '1', fanout '64',
           prefetch 'true');
DROP SERVER tuned_limits;

--
-- validation: bad values, named with the option and its bounds
--
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', connect_timeout '0');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', connect_timeout '11min');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', request_timeout '2 fortnights');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', request_timeout 'soon');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', request_timeout '2h');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', max_retries '11');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', max_retries '-1');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', max_retries 'three');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', page_size '101');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', page_size '0');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', fanout '65');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', prefetch 'maybe');
-- misspelt names get the nearest option
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', conect_timeout '1s');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', max_retry '1');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', ssl_ca '/etc/ssl/ca.pem');
-- a server's setting is not a table's
CREATE FOREIGN TABLE bad (x int) SERVER tuned
  OPTIONS (resource 'movie_themes', page_size '5');
-- ALTER checks the same way
ALTER SERVER tuned OPTIONS (SET page_size '500');
ALTER SERVER tuned OPTIONS (ADD page_size '5');

--
-- TLS options: absolute paths, the key only with a certificate
--
CREATE SERVER tls FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https://127.0.0.1:9', ssl_ca_file '/nonexistent/ca.pem',
           ssl_cert_file '/nonexistent/client.pem', ssl_key_file '/nonexistent/client.key');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https://h', ssl_ca_file 'ca.pem');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https://h', ssl_key_file '/nonexistent/client.key');
ALTER SERVER tls OPTIONS (DROP ssl_cert_file);
CREATE USER MAPPING FOR CURRENT_USER SERVER tls OPTIONS (api_key 'sk-tls-secret');

--
-- files read by the server: only superusers and pg_read_server_files
--
CREATE ROLE settings_owner;
GRANT USAGE ON FOREIGN DATA WRAPPER partner_svc TO settings_owner;
SET ROLE settings_owner;
CREATE SERVER owned FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https://h', connect_timeout '3s', proxy 'http://127.0.0.1:3128');
ALTER SERVER owned OPTIONS (ADD ssl_ca_file '/nonexistent/ca.pem');
ALTER SERVER owned OPTIONS (ADD ssl_cert_file '/nonexistent/client.pem');
RESET ROLE;
-- a superuser may; the owner can then no longer change the server's options
ALTER SERVER owned OPTIONS (ADD ssl_ca_file '/nonexistent/ca.pem');
SET ROLE settings_owner;
ALTER SERVER owned OPTIONS (SET connect_timeout '4s');
RESET ROLE;
GRANT pg_read_server_files TO settings_owner;
SET ROLE settings_owner;
ALTER SERVER owned OPTIONS (SET connect_timeout '4s', ADD ssl_cert_file '/nonexistent/client.pem');
RESET ROLE;
SELECT unnest(srvoptions) AS option FROM pg_foreign_server WHERE srvname = 'owned' ORDER BY 1;
DROP SERVER owned;
REVOKE pg_read_server_files FROM settings_owner;
REVOKE USAGE ON FOREIGN DATA WRAPPER partner_svc FROM settings_owner;
DROP ROLE settings_owner;

--
-- proxy: a URL without credentials or path, or "environment"
--
CREATE SERVER proxied FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https://h', proxy 'http://127.0.0.1:3128');
ALTER SERVER proxied OPTIONS (SET proxy 'socks5h://localhost:1080/');
ALTER SERVER proxied OPTIONS (SET proxy 'environment');
ALTER SERVER proxied OPTIONS (SET proxy 'ftp://127.0.0.1:21');
ALTER SERVER proxied OPTIONS (SET proxy '127.0.0.1:3128');
ALTER SERVER proxied OPTIONS (SET proxy 'http://someone:hunter2@127.0.0.1:3128');
ALTER SERVER proxied OPTIONS (SET proxy 'http://127.0.0.1:3128/path');
ALTER SERVER proxied OPTIONS (SET proxy 'http://');
ALTER SERVER proxied OPTIONS (SET proxy 'http://127.0.0.1:99999');
DROP SERVER proxied;

--
-- EXPLAIN VERBOSE: the effective settings, "(server)" where the server
-- sets them, else the GUCs as they are now; never the key
--
-- (the row estimates are the defaults, whatever earlier tests scanned:
-- docs/estimates.md)
SET partner_svc.learn_estimates = off;
CREATE USER MAPPING FOR PUBLIC SERVER tuned OPTIONS (api_key 'sandbox-key');
CREATE SCHEMA tuned;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER tuned INTO tuned;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT position FROM tuned.movie_themes WHERE movie = 'epic-saga';
EXPLAIN (VERBOSE, COSTS OFF)
SELECT position FROM m.movie_themes WHERE movie = 'epic-saga';
SET partner_svc.page_size = 5;
SET partner_svc.connect_timeout = '250ms';
SET partner_svc.prefetch = off;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT position FROM tuned.movie_themes WHERE movie = 'epic-saga';
EXPLAIN (VERBOSE, COSTS OFF)
SELECT position FROM m.movie_themes WHERE movie = 'epic-saga';
RESET partner_svc.page_size;
RESET partner_svc.connect_timeout;
RESET partner_svc.prefetch;
-- the TLS files and the proxy, when set; no key in any format
ALTER SERVER tls OPTIONS (ADD proxy 'http://127.0.0.1:3128');
CREATE FOREIGN TABLE tls_themes (movie text, "position" int) SERVER tls
  OPTIONS (resource 'movie_themes');
EXPLAIN (VERBOSE, COSTS OFF)
SELECT position FROM tls_themes WHERE movie = 'epic-saga';
CREATE FUNCTION pg_temp.explain_text(q text, fmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; acc text := '';
BEGIN
  FOR r IN EXECUTE format('EXPLAIN (VERBOSE, FORMAT %s) %s', fmt, q) LOOP
    acc := acc || r || E'\n';
  END LOOP;
  RETURN acc;
END $$;
SELECT fmt, position('sandbox-key' IN t) = 0 AND position('sk-tls-secret' IN t) = 0 AS no_key,
       t ~ 'Partner.Settings' AS has_settings
FROM unnest(ARRAY['TEXT', 'JSON', 'YAML', 'XML']) AS fmt,
     LATERAL (SELECT pg_temp.explain_text('SELECT * FROM tls_themes WHERE movie = ''x''', fmt)
              || pg_temp.explain_text('SELECT * FROM tuned.movie_themes WHERE movie = ''x''', fmt) AS t) s;
-- plain EXPLAIN shows no settings
EXPLAIN (COSTS OFF) SELECT position FROM tuned.movie_themes WHERE movie = 'epic-saga';
RESET partner_svc.learn_estimates;
DROP FOREIGN TABLE tls_themes;

--
-- precedence in action.  The movie is named by its id (1000 is inception)
-- so that the requests checked here are told apart from those of earlier
-- tests that the sandbox may still be answering.
--
CREATE VIEW my_requests AS
  SELECT * FROM sandbox.requests() WHERE path LIKE '/v1/movies/1000/%';
-- page_size: the server's 2, whatever the GUC says (5 themes)
SET partner_svc.page_size = 50;
CALL sandbox.reset_stats();
SELECT count(*) FROM tuned.movie_themes WHERE movie = '1000';
SELECT count(*) AS requests, min(query) AS first_query FROM my_requests;
CALL sandbox.reset_stats();
SELECT count(*) FROM m.movie_themes WHERE movie = '1000';
SELECT count(*) AS requests, min(query) AS first_query FROM my_requests;
RESET partner_svc.page_size;

-- max_retries: the server's 0 against the GUC's 2, one 503 each
SET partner_svc.max_retries = 2;
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "error", "count": 1}');
SELECT count(*) FROM tuned.movie_themes WHERE movie = '1000';
SELECT status FROM my_requests;
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "error", "count": 1}');
SELECT count(*) FROM m.movie_themes WHERE movie = '1000';
SELECT status FROM my_requests;
-- and the other way round: the server allows 2, the GUC none
ALTER SERVER tuned OPTIONS (SET max_retries '2');
SET partner_svc.max_retries = 0;
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "error", "count": 1}');
SELECT count(*) FROM tuned.movie_themes WHERE movie = '1000';
SELECT status FROM my_requests;
RESET partner_svc.max_retries;

-- request_timeout: the server's limit, named in the message and the hint
ALTER SERVER tuned OPTIONS (SET max_retries '0', SET request_timeout '300ms');
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/themes", "kind": "latency", "value": 1500, "count": 1}');
SELECT count(*) FROM tuned.movie_themes WHERE movie = '1000';
CALL sandbox.clear_faults();
-- the sandbox logs the request once it has answered it: wait for that
-- (at most 15 s), so that no late request of ours reaches a later test
DO $$
BEGIN
  FOR i IN 1..150 LOOP
    EXIT WHEN EXISTS (SELECT FROM my_requests);
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT count(*) AS timed_out_requests FROM my_requests;
-- dropping the option brings the GUC back
ALTER SERVER tuned OPTIONS (DROP request_timeout, DROP page_size);
SET partner_svc.page_size = 4;
CALL sandbox.reset_stats();
SELECT count(*) FROM tuned.movie_themes WHERE movie = '1000';
SELECT min(query) AS first_query FROM my_requests;
RESET partner_svc.page_size;

-- functions use their server's settings too: its max_retries 0 against
-- the GUC's 2, then its 2 against the GUC's 0
ALTER SERVER tuned OPTIONS (SET max_retries '0');
SET partner_svc.max_retries = 2;
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/summary", "kind": "error", "count": 1}');
SELECT sandbox.try($$SELECT partner_svc.movie_summary('1000', server => 'tuned')$$);
SELECT status FROM my_requests;
ALTER SERVER tuned OPTIONS (SET max_retries '2');
SET partner_svc.max_retries = 0;
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /v1/movies/{movie}/content/summary", "kind": "error", "count": 1}');
SELECT partner_svc.movie_summary('1000', server => 'tuned') LIKE '%Cobb%' AS answered;
SELECT status FROM my_requests;
RESET partner_svc.max_retries;
CALL sandbox.clear_faults();
DROP VIEW my_requests;

DROP SCHEMA tuned CASCADE;
DROP SERVER tuned CASCADE;
DROP SERVER tls CASCADE;

-- every invalid value of a server option is HV024, as the FDW's
-- validators report it (max_response_size used to give 22023)
DO $$
DECLARE
	opt text;
	val text;
	st text;
BEGIN
	FOR opt, val IN VALUES ('max_response_size', 'lots'), ('max_response_size', '1B'),
		('cache_ttl', 'soon'), ('connect_timeout', '-1'), ('page_size', 'many')
	LOOP
		BEGIN
			EXECUTE format('CREATE SERVER hv024_probe FOREIGN DATA WRAPPER partner_svc OPTIONS (service %L, base_url %L, %I %L)',
						   'movies', 'http://127.0.0.1:1', opt, val);
			RAISE NOTICE '% %: accepted', opt, val;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
			RAISE NOTICE '% %: %', opt, val, st;
		END;
	END LOOP;
END
$$;
