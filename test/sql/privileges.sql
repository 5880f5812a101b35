-- privileges: the key sent is that of the role PostgreSQL checks a
-- foreign table as (the view owner through a view; the current user
-- otherwise), and for functions the calling role's; without a user
-- mapping the error is 42704 before anything is sent (except for the
-- keyless todo service); a role with USAGE on a server and its own mapping
-- needs no other grant for that server's functions, nor for the tables
-- granted to it; rate_limits shows resource ids only to superusers and
-- members of pg_read_all_stats.
--
-- The sandbox runs with three keys, each its own partner; its request log
-- says which partner (so which key) sent each request.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();
\set VERBOSITY default

-- the tier of the partner whose key each request since reset_stats() carried;
-- this test reads movie 1000 (inception) by id, which no other test does, so
-- a late request of an earlier test never shows here
CREATE FUNCTION sandbox.keys_sent()
RETURNS TABLE (seq int, route text, status int, tier text) LANGUAGE sql AS $$
  WITH r AS (SELECT string_agg(l, E'\n')::jsonb AS j FROM sandbox.call('GET', '/_sandbox/requests') l),
       c AS (SELECT string_agg(l, E'\n')::jsonb AS j FROM sandbox.call('GET', '/_sandbox/config') l)
  SELECT (q->>'seq')::int, q->>'route', (q->>'status')::int,
         coalesce((SELECT p->>'tier' FROM c, jsonb_array_elements(c.j->'partners') p
                   WHERE (p->>'index')::int = (q->>'partner')::int), 'none')
  FROM r, jsonb_array_elements(r.j->'requests') q
  WHERE q->>'path' LIKE '/v1/movies/1000/%' OR q->>'path' = '/todos'
  ORDER BY 1
$$;

CREATE ROLE regress_psvc_owner;
CREATE ROLE regress_psvc_reader;
CREATE ROLE regress_psvc_nomap;
CREATE ROLE regress_psvc_stats IN ROLE pg_read_all_stats;

-- a movies server whose mappings are per role, with no PUBLIC mapping
CREATE SERVER movies_p FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE USER MAPPING FOR regress_psvc_owner SERVER movies_p OPTIONS (api_key 'premium-key');
CREATE USER MAPPING FOR regress_psvc_reader SERVER movies_p OPTIONS (api_key 'enterprise-key');
CREATE SCHEMA priv;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies_p INTO priv;
GRANT USAGE ON SCHEMA priv TO regress_psvc_owner, regress_psvc_reader, regress_psvc_nomap;
GRANT CREATE ON SCHEMA priv TO regress_psvc_owner;
GRANT SELECT ON priv.movie_themes TO regress_psvc_owner, regress_psvc_nomap;

-- the owner's view over the table, readable by the reader
SET ROLE regress_psvc_owner;
CREATE VIEW priv.owner_themes AS SELECT * FROM priv.movie_themes WHERE movie = '1000';
GRANT SELECT ON priv.owner_themes TO regress_psvc_reader, regress_psvc_nomap;
RESET ROLE;

-- the table read directly: the current user's key
CALL sandbox.reset_stats();
SET ROLE regress_psvc_owner;
SELECT count(*) FROM priv.movie_themes WHERE movie = '1000';
RESET ROLE;
SELECT route, status, tier FROM sandbox.keys_sent();

-- through the view: the view owner's key, whoever reads it
CALL sandbox.reset_stats();
SET ROLE regress_psvc_reader;
SELECT count(*) FROM priv.owner_themes;
RESET ROLE;
SET ROLE regress_psvc_nomap;
SELECT count(*) FROM priv.owner_themes;
RESET ROLE;
SELECT route, status, tier FROM sandbox.keys_sent();

-- no mapping for the role the table is checked as: 42704, nothing sent
CALL sandbox.reset_stats();
SET ROLE regress_psvc_nomap;
SELECT count(*) FROM priv.movie_themes WHERE movie = '1000';
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- a view whose owner has no mapping: the owner is named
ALTER VIEW priv.owner_themes OWNER TO regress_psvc_nomap;
SET ROLE regress_psvc_reader;
SELECT count(*) FROM priv.owner_themes;
RESET ROLE;
ALTER VIEW priv.owner_themes OWNER TO regress_psvc_owner;
SELECT count(*) AS requests FROM sandbox.keys_sent();

-- functions: the calling role's key; USAGE on the server is all they need
CALL sandbox.reset_stats();
SET ROLE regress_psvc_reader;
SELECT sandbox.try($$SELECT partner_svc.movie_summary('1000', server => 'movies_p')$$) AS without_usage;
RESET ROLE;
GRANT USAGE ON FOREIGN SERVER movies_p TO regress_psvc_reader, regress_psvc_nomap;
SET ROLE regress_psvc_reader;
SELECT partner_svc.movie_summary('1000', server => 'movies_p') LIKE '%Cobb%' AS summary;
RESET ROLE;
SET ROLE regress_psvc_nomap;
SELECT partner_svc.movie_summary('1000', server => 'movies_p');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT route, status, tier FROM sandbox.keys_sent();

-- the reader, granted the table too, reads it with its own key
GRANT SELECT ON priv.movie_themes TO regress_psvc_reader;
CALL sandbox.reset_stats();
SET ROLE regress_psvc_reader;
SELECT count(*) FROM priv.movie_themes WHERE movie = '1000';
RESET ROLE;
SELECT route, status, tier FROM sandbox.keys_sent();

-- todos: the documents describe no key, so no mapping is needed
CREATE SERVER todos_p FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url :'sandbox_url');
IMPORT FOREIGN SCHEMA todos FROM SERVER todos_p INTO priv;
GRANT SELECT ON priv.todos TO regress_psvc_nomap;
CALL sandbox.reset_stats();
SET ROLE regress_psvc_nomap;
SELECT count(*) > 0 AS todos FROM priv.todos;
RESET ROLE;
SELECT route, status, tier FROM sandbox.keys_sent();

-- rate_limits: resource ids (an order id here) for superusers and
-- pg_read_all_stats only
SELECT count(*) FROM orders WHERE custom_id = 'PL-2';
SELECT count(*) > 0 AS superuser_sees FROM partner_svc.rate_limits WHERE resource = 'PL-2';
SET ROLE regress_psvc_reader;
SELECT count(*) > 0 AS rows_shown, count(resource) AS ids_shown
FROM partner_svc.rate_limits WHERE route = '/public/orders/{id}';
RESET ROLE;
SET ROLE regress_psvc_stats;
SELECT count(*) > 0 AS stats_role_sees FROM partner_svc.rate_limits WHERE resource = 'PL-2';
RESET ROLE;

SET client_min_messages = warning;
DROP SCHEMA priv CASCADE;
DROP SERVER movies_p CASCADE;
DROP SERVER todos_p CASCADE;
DROP ROLE regress_psvc_owner, regress_psvc_reader, regress_psvc_nomap, regress_psvc_stats;
DROP FUNCTION sandbox.keys_sent();
RESET client_min_messages;
