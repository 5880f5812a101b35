--
-- options: validation of the options of partner_svc servers, user mappings,
-- foreign tables and columns.
--
\getenv sandbox_url PSVC_SANDBOX_URL
CREATE EXTENSION partner_svc;

--
-- the wrapper itself takes no options
--
ALTER FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'orders');

--
-- servers: valid forms
--
CREATE SERVER orders_srv FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url');
CREATE SERVER orders_premium FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url 'https://partner.example.com', tier 'premium');
CREATE SERVER orders_enterprise FOREIGN DATA WRAPPER partner_svc
  OPTIONS (tier 'enterprise', base_url 'HTTPS://partner.example.com:8443/api/v2/', service 'orders');
CREATE SERVER orders_standard FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url 'http://[::1]:8765', tier 'standard');
CREATE SERVER movies_srv FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE SERVER catalog_srv FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'catalog', base_url 'http://127.0.0.1:9/');
CREATE SERVER todos_srv FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url 'http://localhost');
CREATE SERVER generation_srv FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'generation', base_url 'https://gen.example.com/v1');
CREATE SERVER files_srv FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'https://files.example.com');
CREATE SERVER scheduler_srv FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'scheduler', base_url 'https://jobs.example.com');

SELECT srvname, srvoptions FROM pg_foreign_server
WHERE srvname NOT IN ('orders_srv', 'movies_srv') ORDER BY srvname;

--
-- servers: required options
--
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc;
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc OPTIONS (base_url 'http://h');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies');

--
-- servers: unknown options, with the closest match when there is one
--
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', baseurl 'http://h');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (servce 'movies', base_url 'http://h');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url 'http://h', tear 'premium');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', host 'h');
-- an option of another object says where it belongs
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', api_key 'sk-secret-123');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', resource 'movies');

-- a repeated option (PostgreSQL catches it before the validator does, and
-- the validator catches it when called directly)
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', service 'orders', base_url 'http://h');
SELECT partner_svc.fdw_validator(
  ARRAY['service=movies', 'base_url=http://h', 'service=orders'],
  'pg_foreign_server'::regclass);

--
-- servers: bad values of service and tier
--
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movie', base_url 'http://h');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'Orders', base_url 'http://h');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'weather', base_url 'http://h');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service '', base_url 'http://h');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url 'http://h', tier 'gold');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url 'http://h', tier 'premum');

-- tier only for service orders
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://h', tier 'standard');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (tier 'premium', service 'scheduler', base_url 'http://h');

--
-- servers: bad base_url values
--
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '127.0.0.1:8765');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'ftp://files.example.com');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https:///v1');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https://api.example.com/v1?key=1');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https://api.example.com/v1#top');
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https://api.example.com/my movies');
-- credentials in the URL are refused without echoing the URL
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'https://user:sk-secret-123@api.example.com');
-- what libcurl refuses is refused too
CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://api.example.com:99999');

SELECT count(*) AS bad_servers FROM pg_foreign_server WHERE srvname = 'bad';

--
-- servers: ALTER SERVER revalidates the whole new option list
--
ALTER SERVER movies_srv OPTIONS (SET base_url 'https://movies.example.com/');
ALTER SERVER movies_srv OPTIONS (SET base_url 'ftp://movies.example.com');
ALTER SERVER movies_srv OPTIONS (DROP base_url);
ALTER SERVER movies_srv OPTIONS (DROP service);
ALTER SERVER movies_srv OPTIONS (ADD tier 'premium');
ALTER SERVER movies_srv OPTIONS (ADD base_url 'https://other.example.com');
ALTER SERVER movies_srv OPTIONS (SET service 'orders');
ALTER SERVER movies_srv OPTIONS (ADD tier 'premium');
-- an order server with a tier cannot become another service
ALTER SERVER movies_srv OPTIONS (SET service 'movies');
ALTER SERVER movies_srv OPTIONS (DROP tier, SET service 'movies');
SELECT srvoptions FROM pg_foreign_server WHERE srvname = 'movies_srv';

--
-- user mappings: api_key, optional, never echoed
--
CREATE USER MAPPING FOR CURRENT_USER SERVER orders_srv
  OPTIONS (api_key 'sk-secret-123');
CREATE USER MAPPING FOR PUBLIC SERVER todos_srv;
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv
  OPTIONS (api_key 'sk-secret-123', apikey 'x');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv
  OPTIONS (api_key 'sk-secret-123', base_url 'http://h');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv
  OPTIONS (api_key 'sk-secret-123', token 'sk-secret-123');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv
  OPTIONS (api_key '');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv
  OPTIONS (api_key 'sk-secret 123');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv
  OPTIONS (api_key E'sk-secret-123\r\nX-Injected: 1');
SELECT partner_svc.fdw_validator(
  ARRAY['api_key=sk-secret-123', 'api_key=sk-secret-123'],
  'pg_user_mapping'::regclass);
ALTER USER MAPPING FOR CURRENT_USER SERVER orders_srv
  OPTIONS (SET api_key 'sk-secret-456');
ALTER USER MAPPING FOR CURRENT_USER SERVER orders_srv
  OPTIONS (ADD api_secret 'sk-secret-123');
-- (the stored key is compared, not shown)
SELECT srvname, umoptions = '{api_key=sk-secret-456}' AS key_updated,
       umoptions IS NULL AS no_options
FROM pg_user_mappings ORDER BY srvname;

-- the same failures, checked by machine: no message, detail or hint of the
-- error contains the secret (sk-secret-..., not the option client_secret's name)
CREATE FUNCTION pg_temp.error_echoes_secret(stmt text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  m text;
  d text;
  h text;
BEGIN
  EXECUTE stmt;
  RAISE EXCEPTION 'statement succeeded: %', stmt;
EXCEPTION WHEN fdw_error OR syntax_error OR duplicate_object THEN
  GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL,
                          h = PG_EXCEPTION_HINT;
  RETURN concat_ws(' ', m, d, h) LIKE '%sk-secret%';
END
$$;
SELECT stmt, pg_temp.error_echoes_secret(stmt) FROM (VALUES
  ($q$CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv OPTIONS (api_key 'sk-secret-123', apikey 'x')$q$),
  ($q$CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv OPTIONS (apikey 'sk-secret-123')$q$),
  ($q$CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv OPTIONS (api_key 'sk-secret 123')$q$),
  ($q$CREATE USER MAPPING FOR CURRENT_USER SERVER movies_srv OPTIONS (api_key 'sk-secret-123', api_key 'sk-secret-123')$q$),
  ($q$SELECT partner_svc.fdw_validator(ARRAY['api_key=sk-secret-123', 'api_key=sk-secret-123'], 'pg_user_mapping'::regclass)$q$),
  ($q$CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', base_url 'http://h', api_key 'sk-secret-123')$q$),
  ($q$CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', base_url 'https://user:sk-secret-123@api.example.com')$q$)
) AS v(stmt);

--
-- foreign tables: resource, required, one of the catalogue
--
CREATE FOREIGN TABLE ft_orders (id text, email text, raw jsonb)
  SERVER orders_srv OPTIONS (resource 'orders');
CREATE FOREIGN TABLE ft_themes (movie text, title text, raw jsonb)
  SERVER movies_srv OPTIONS (resource 'movie_themes');
CREATE FOREIGN TABLE ft_bad (id text) SERVER movies_srv;
CREATE FOREIGN TABLE ft_bad (id text) SERVER movies_srv
  OPTIONS (resource 'movie_theme');
CREATE FOREIGN TABLE ft_bad (id text) SERVER movies_srv
  OPTIONS (resource 'weather');
CREATE FOREIGN TABLE ft_bad (id text) SERVER movies_srv
  OPTIONS (resource 'movies', resources 'movies');
CREATE FOREIGN TABLE ft_bad (id text) SERVER movies_srv
  OPTIONS (resource 'movies', field 'id');
ALTER FOREIGN TABLE ft_themes OPTIONS (SET resource 'movie_faqs');
ALTER FOREIGN TABLE ft_themes OPTIONS (SET resource 'faqs');
ALTER FOREIGN TABLE ft_themes OPTIONS (DROP resource);
SELECT c.relname, t.ftoptions
FROM pg_foreign_table t JOIN pg_class c ON c.oid = t.ftrelid ORDER BY 1;

--
-- columns: field
--
CREATE FOREIGN TABLE ft_todos (
  id bigint OPTIONS (field 'id'),
  user_id bigint OPTIONS (field 'userId'),
  title text,
  raw jsonb)
  SERVER todos_srv OPTIONS (resource 'todos');
CREATE FOREIGN TABLE ft_bad (user_id bigint OPTIONS (fields 'userId'))
  SERVER todos_srv OPTIONS (resource 'todos');
CREATE FOREIGN TABLE ft_bad (user_id bigint OPTIONS (resource 'todos'))
  SERVER todos_srv OPTIONS (resource 'todos');
CREATE FOREIGN TABLE ft_bad (user_id bigint OPTIONS (field ''))
  SERVER todos_srv OPTIONS (resource 'todos');
ALTER FOREIGN TABLE ft_todos ALTER COLUMN title OPTIONS (ADD field 'title');
ALTER FOREIGN TABLE ft_todos ALTER COLUMN title OPTIONS (ADD json_path 'title');
SELECT attname, attfdwoptions FROM pg_attribute
WHERE attrelid = 'ft_todos'::regclass AND attnum > 0 ORDER BY attnum;

--
-- writing: only writable resources (todos, notifications) allow it, and
-- PostgreSQL refuses the others itself before anything is sent (writing
-- is tested in fdw_modify, reading in fdw_*)
--
DELETE FROM ft_orders WHERE id = 'x';
INSERT INTO ft_themes (movie, title) VALUES ('x', 'y');
UPDATE ft_orders SET email = 'a@example.com';
SELECT c.relname, pg_catalog.pg_relation_is_updatable(c.oid, false) AS events
FROM pg_class c WHERE c.relname IN ('ft_orders', 'ft_themes', 'ft_todos') ORDER BY 1;

SET client_min_messages = warning;
DROP EXTENSION partner_svc CASCADE;
