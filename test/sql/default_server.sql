-- default_server: a function called without a server uses the default
-- server of its service, which only superusers and the extension's owner
-- decide.  A role with USAGE on the wrapper may create servers of its own
-- (used when named), but its server never changes, nor breaks, the server
-- the other roles' calls use, and it cannot set the option "default".
-- The sandbox's request log shows where each call went: the role's server
-- has the base URL of the sandbox plus "/tenant".
\getenv sandbox_url PSVC_SANDBOX_URL
\set tenant_url :sandbox_url '/tenant'
SET search_path = public;
CALL sandbox.clear_faults();
\set VERBOSITY default
-- every call reaches the sandbox and its request log
SET partner_svc.cache = off;

-- the requests since reset_stats() of this test's movie, with the path
-- prefix of the tenant's server kept
CREATE FUNCTION sandbox.ds_requests() RETURNS TABLE (path text, status int)
LANGUAGE sql AS $$
  SELECT path, status FROM sandbox.requests()
  WHERE path LIKE '%/v1/movies/1000/%' ORDER BY seq
$$;

-- earlier tests leave other movies servers of the superuser (fdw_faults'
-- movies_badkey and movies_down): the superuser keeps them out of the
-- choice with "default 'false'", so "movies" is the default
DO $$
DECLARE s name;
BEGIN
  FOR s IN SELECT srvname FROM pg_foreign_server
           WHERE 'service=movies' = ANY (srvoptions) AND srvname <> 'movies' LOOP
    EXECUTE format('ALTER SERVER %I OPTIONS (ADD default %L)', s, 'false');
  END LOOP;
END $$;
CALL sandbox.reset_stats();
SELECT partner_svc.movie_summary('1000') LIKE '%Cobb%' AS one_default;
SELECT * FROM sandbox.ds_requests();

CREATE ROLE regress_ds_tenant;
CREATE ROLE regress_ds_user;
GRANT USAGE ON FOREIGN DATA WRAPPER partner_svc TO regress_ds_tenant;
GRANT USAGE ON FOREIGN SERVER movies TO regress_ds_user;

-- the tenant creates a second movies server, usable by everyone
SET ROLE regress_ds_tenant;
CREATE SERVER movies_tenant FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'tenant_url');
GRANT USAGE ON FOREIGN SERVER movies_tenant TO PUBLIC;
CREATE USER MAPPING FOR PUBLIC SERVER movies_tenant OPTIONS (api_key 'sandbox-key');
-- and cannot make it, or another, the default
ALTER SERVER movies_tenant OPTIONS (ADD default 'true');
\echo :LAST_ERROR_SQLSTATE
CREATE SERVER movies_tenant2 FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'tenant_url', default 'true');
\echo :LAST_ERROR_SQLSTATE
-- nor step aside with "default 'false'"
ALTER SERVER movies_tenant OPTIONS (ADD default 'false');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- every role's default calls still go to "movies" (no 42P08)
CALL sandbox.reset_stats();
SELECT partner_svc.movie_summary('1000') LIKE '%Cobb%' AS superuser_default;
SET ROLE regress_ds_user;
SELECT partner_svc.movie_summary('1000') LIKE '%Cobb%' AS user_default;
RESET ROLE;
SET ROLE regress_ds_tenant;
SELECT sandbox.try($$SELECT partner_svc.movie_summary('1000')$$) AS tenant_default;
RESET ROLE;
SELECT * FROM sandbox.ds_requests();

-- the tenant's server is used when named
CALL sandbox.reset_stats();
SET ROLE regress_ds_user;
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('1000', 'movies_tenant')$$) <> 'ok' AS named_tenant_fails;
RESET ROLE;
SELECT path FROM sandbox.ds_requests() LIMIT 1;

-- only servers of other owners: no default (42704), the detail names
-- them, nothing sent
CALL sandbox.reset_stats();
BEGIN;
SET client_min_messages = warning;
DO $$
DECLARE s name;
BEGIN
  FOR s IN SELECT srvname FROM pg_foreign_server
           WHERE 'service=movies' = ANY (srvoptions) AND srvname <> 'movies_tenant' LOOP
    EXECUTE format('DROP SERVER %I CASCADE', s);
  END LOOP;
END $$;
RESET client_min_messages;
SELECT partner_svc.movie_summary('1000');
ROLLBACK;
SELECT count(*) AS sent FROM sandbox.ds_requests();

-- a superuser's second server: ambiguous (42P08), the hint says how to decide
CREATE SERVER movies_b FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER movies_b OPTIONS (api_key 'premium-key');
SELECT partner_svc.movie_summary('1000');
-- the superuser decides: movies_b is the default
ALTER SERVER movies_b OPTIONS (ADD default 'true');
CALL sandbox.reset_stats();
SELECT partner_svc.movie_summary('1000') LIKE '%Cobb%' AS marked_default;
SELECT count(*) AS sent FROM sandbox.ds_requests();
SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('1000', 'movies')$$) AS named_other;
-- two marked defaults: 42P08 naming both
ALTER SERVER movies OPTIONS (ADD default 'true');
SELECT partner_svc.movie_summary('1000');
-- "default 'false'" takes a server out of the choice
ALTER SERVER movies OPTIONS (SET default 'false');
ALTER SERVER movies_b OPTIONS (DROP default);
SELECT partner_svc.movie_summary('1000') LIKE '%Cobb%' AS false_steps_aside;
ALTER SERVER movies OPTIONS (DROP default);
SELECT partner_svc.movie_summary('1000', 'movies_b') LIKE '%Cobb%' AS named_b;
-- a marked server handed to the tenant is no longer a candidate, and the
-- tenant cannot change its options while the option is there
ALTER SERVER movies_b OPTIONS (ADD default 'true');
ALTER SERVER movies_b OWNER TO regress_ds_tenant;
CALL sandbox.reset_stats();
SELECT partner_svc.movie_summary('1000') LIKE '%Cobb%' AS back_to_movies;
SET ROLE regress_ds_tenant;
ALTER SERVER movies_b OPTIONS (SET base_url 'http://127.0.0.1:9');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- the value is a boolean
ALTER SERVER movies_b OPTIONS (SET default 'maybe');

SELECT sandbox.sqlstate_of($$SELECT partner_svc.movie_summary('1000')$$) AS still_movies;
SET client_min_messages = warning;
DROP SERVER movies_b CASCADE;
DROP SERVER movies_tenant CASCADE;
RESET client_min_messages;
DO $$
DECLARE s name;
BEGIN
  FOR s IN SELECT srvname FROM pg_foreign_server WHERE 'default=false' = ANY (srvoptions) LOOP
    EXECUTE format('ALTER SERVER %I OPTIONS (DROP default)', s);
  END LOOP;
END $$;
REVOKE USAGE ON FOREIGN SERVER movies FROM regress_ds_user;
REVOKE USAGE ON FOREIGN DATA WRAPPER partner_svc FROM regress_ds_tenant;
DROP ROLE regress_ds_tenant, regress_ds_user;
DROP FUNCTION sandbox.ds_requests();
RESET partner_svc.cache;
