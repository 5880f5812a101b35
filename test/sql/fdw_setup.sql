-- fdw_setup: what the foreign-table tests share.  The sandbox's address
-- comes from the environment, so no port appears in the expected output.
-- Helpers in schema "sandbox" call the sandbox's control routes with curl
-- (COPY ... FROM PROGRAM, run by the server as its OS user), so each test
-- can check what its SQL really sent.
\getenv sandbox_url PSVC_SANDBOX_URL
CREATE EXTENSION partner_svc;
-- the tests count what reaches the sandbox, request by request: the
-- response cache is off for every later session of this database
-- (sql/cache.sql turns it on where it is tested)
DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I SET partner_svc.cache = off', current_database());
END $$;
CREATE SCHEMA sandbox;
CREATE TABLE sandbox.config (url text NOT NULL);
INSERT INTO sandbox.config VALUES (:'sandbox_url');

-- one shell word, single-quoted
CREATE FUNCTION sandbox.sh(t text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT '''' || replace(t, '''', '''\''''') || '''' $$;

-- calls a route of the sandbox (as partner "key" if given); returns the
-- answer's lines
CREATE FUNCTION sandbox.call(method text, path text, body text DEFAULT NULL,
                             key text DEFAULT NULL)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  cmd text := format('curl -s -S -f -X %s %s', method,
                     sandbox.sh((SELECT url FROM sandbox.config) || path));
BEGIN
  IF key IS NOT NULL THEN
    cmd := cmd || ' -H ' || sandbox.sh('Authorization: Bearer ' || key);
  END IF;
  IF body IS NOT NULL THEN
    cmd := cmd || ' -H ''Content-Type: application/json'' --data-binary ' || sandbox.sh(body);
  END IF;
  IF to_regclass('pg_temp.sandbox_out') IS NULL THEN
    CREATE TEMP TABLE sandbox_out (line text);
  END IF;
  TRUNCATE sandbox_out;
  EXECUTE format('COPY sandbox_out FROM PROGRAM %L (FORMAT csv, DELIMITER %L, QUOTE %L)',
                 cmd, E'\x1f', E'\x1e');
  RETURN QUERY SELECT line FROM sandbox_out;
END $$;

CREATE PROCEDURE sandbox.reset_stats() LANGUAGE sql AS
$$ SELECT count(*) FROM sandbox.call('POST', '/_sandbox/stats/reset') $$;
CREATE PROCEDURE sandbox.fault(rule text) LANGUAGE sql AS
$$ SELECT count(*) FROM sandbox.call('POST', '/_sandbox/faults', rule) $$;
CREATE PROCEDURE sandbox.clear_faults() LANGUAGE sql AS
$$ SELECT count(*) FROM sandbox.call('DELETE', '/_sandbox/faults') $$;
CREATE PROCEDURE sandbox.set(knobs text) LANGUAGE sql AS
$$ SELECT count(*) FROM sandbox.call('POST', '/_sandbox/config', knobs) $$;

-- the requests the sandbox received since the last reset_stats()
CREATE FUNCTION sandbox.requests()
RETURNS TABLE (seq int, method text, route text, path text, query text, status int)
LANGUAGE sql AS $$
  SELECT split_part(l, E'\t', 1)::int, split_part(l, E'\t', 2), split_part(l, E'\t', 3),
         split_part(l, E'\t', 4), split_part(l, E'\t', 5), split_part(l, E'\t', 6)::int
  FROM sandbox.call('GET', '/_sandbox/requests.tsv') AS l
  ORDER BY 1
$$;

-- helpers any test role may call (sandbox.call itself needs a superuser)
GRANT USAGE ON SCHEMA sandbox TO PUBLIC;

-- the SQLSTATE a statement fails with ('ok' when it does not)
CREATE FUNCTION sandbox.sqlstate_of(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE stmt;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;

-- EXPLAIN ANALYZE of a query, free of what differs between runs and
-- PostgreSQL majors: no costs, times or buffers (shown by default from
-- 18), and a node's rows as a whole number (18 prints "rows=5.00" where
-- 15 prints "rows=5"), so that one expected file serves every major
CREATE FUNCTION sandbox.explain_analyze(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    RETURN NEXT regexp_replace(l, '(rows=[0-9]+)\.00( |\))', '\1\2', 'g');
  END LOOP;
END $$;

-- the SQLSTATE and message of a statement's error, and whether its
-- detail says the outcome is unknown
CREATE FUNCTION sandbox.try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  st text; msg text; det text;
BEGIN
  EXECUTE stmt;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ': ' || msg ||
    CASE WHEN det LIKE '%outcome of the request is unknown%' THEN ' (outcome unknown)' ELSE '' END;
END $$;

CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url :'sandbox_url');
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url');
CREATE SERVER catalog FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'catalog', base_url :'sandbox_url');
CREATE SERVER todos FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url :'sandbox_url');
CREATE SERVER scheduler FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'scheduler', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
CREATE USER MAPPING FOR PUBLIC SERVER catalog OPTIONS (api_key 'sandbox-key');
CREATE USER MAPPING FOR PUBLIC SERVER todos;
CREATE USER MAPPING FOR PUBLIC SERVER scheduler OPTIONS (api_key 'sandbox-key');

CALL sandbox.reset_stats();
SELECT count(*) AS requests FROM sandbox.requests();
