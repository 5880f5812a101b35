-- func_cache: a function finds the one server of its service once per
-- backend, with its options, and forgets it as soon as any server changes
-- (src/functions/functions.c).  Each step checks what the sandbox received.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();
-- refused connections fail at once, without backoff
SET partner_svc.max_retries = 0;

-- repeated calls: every one is sent
CALL sandbox.reset_stats();
SELECT count(*) FILTER (WHERE partner_svc.movie_summary('inception') LIKE '%Cobb%') AS calls
FROM generate_series(1, 3);
SELECT method, path, status FROM sandbox.requests();

-- ALTER SERVER is seen by the next call: a base_url where nothing
-- listens fails to connect (HV00N), and nothing reaches the sandbox
ALTER SERVER movies OPTIONS (SET base_url 'http://127.0.0.1:9');
CALL sandbox.reset_stats();
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('inception')$$) AS moved;
SELECT count(*) AS requests FROM sandbox.requests();
ALTER SERVER movies OPTIONS (SET base_url :'sandbox_url');
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('inception')$$) AS back;
SELECT method, path, status FROM sandbox.requests();

-- a second server of the service, inside a transaction, is seen at once;
-- when it is the only one left it is used (it has no user mapping: 42704,
-- before anything is sent); after ROLLBACK it is gone and
-- "movies" is the one server again
CALL sandbox.reset_stats();
BEGIN;
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('inception')$$) AS before;
CREATE SERVER movies_elsewhere FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://127.0.0.1:9');
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('inception')$$) AS two_servers;
SET client_min_messages = warning;
DROP SERVER movies CASCADE;
RESET client_min_messages;
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('inception')$$) AS only_elsewhere;
ROLLBACK;
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('inception')$$) AS after_rollback;
SELECT method, path, status FROM sandbox.requests();

-- USAGE is checked at every call, for the current user, even when the
-- server is already known
CREATE ROLE psvc_cache_user;
GRANT USAGE ON SCHEMA partner_svc TO psvc_cache_user;
SET ROLE psvc_cache_user;
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('inception')$$) AS without_usage;
RESET ROLE;
GRANT USAGE ON FOREIGN SERVER movies TO psvc_cache_user;
SET ROLE psvc_cache_user;
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('inception')$$) AS with_usage;
RESET ROLE;
REVOKE USAGE ON FOREIGN SERVER movies FROM psvc_cache_user;
REVOKE USAGE ON SCHEMA partner_svc FROM psvc_cache_user;
DROP ROLE psvc_cache_user;

RESET partner_svc.max_retries;
