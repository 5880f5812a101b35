-- partner_svc_sandbox_helpers--1.0.sql: SQL helpers for pg_regress suites
-- that run against partner_svc_sandbox (docs/testing-with-the-sandbox.md).
--
-- How they reach the sandbox: partner_svc has no function for a raw HTTP
-- request (every function of it is one documented operation), so these
-- helpers run curl on the server's host through COPY ... FROM PROGRAM.
-- That needs curl there and a superuser (or pg_execute_server_program),
-- which is what a throw-away test instance has; it is not meant for a
-- production server, and the functions are revoked from PUBLIC.  All the
-- curl details live here, once: -g so that braces in a route are not
-- globbed, CSV mode with control characters as delimiter and quote so
-- that every line arrives as one field, and the HTTP status on a last line
-- of its own.
--
-- The sandbox's URL comes from the setting partner_svc_sandbox.url, which
-- partner_svc_regress writes into the temporary instance's configuration
-- (or SET it yourself).

\echo Use "CREATE EXTENSION partner_svc_sandbox_helpers" to load this file. \quit

-- the sandbox's base URL, without a trailing slash
CREATE FUNCTION @extschema@.url() RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
  u text := pg_catalog.current_setting('partner_svc_sandbox.url', true);
BEGIN
  IF u IS NULL OR u = '' THEN
    RAISE EXCEPTION 'the sandbox''s URL is not set'
      USING ERRCODE = 'undefined_object',
            DETAIL = 'The setting partner_svc_sandbox.url is empty.',
            HINT = 'Run the tests with partner_svc_regress, or SET partner_svc_sandbox.url to the URL partner_svc_sandbox printed.';
  END IF;
  RETURN pg_catalog.rtrim(u, '/');
END $$;

-- one shell word, single-quoted
CREATE FUNCTION @extschema@.shell_quote(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS
$$ SELECT '''' || pg_catalog.replace(t, '''', '''\''''') || '''' $$;

-- percent-encodes every byte but the unreserved characters (RFC 3986)
CREATE FUNCTION @extschema@.urlencode(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT coalesce(pg_catalog.string_agg(
           CASE WHEN b BETWEEN 48 AND 57 OR b BETWEEN 65 AND 90 OR b BETWEEN 97 AND 122
                     OR b IN (45, 46, 95, 126)
                THEN pg_catalog.chr(b)
                ELSE '%' || pg_catalog.upper(pg_catalog.lpad(pg_catalog.to_hex(b), 2, '0')) END,
           '' ORDER BY i), '')
  FROM (SELECT pg_catalog.convert_to(t, 'UTF8') AS bytes) AS s,
       LATERAL pg_catalog.generate_series(0, pg_catalog.length(s.bytes) - 1) AS i,
       LATERAL (SELECT pg_catalog.get_byte(s.bytes, i) AS b) AS x
$$;

-- Sends one request to the sandbox: METHOD PATH (as sent: encode the query
-- yourself, braces are fine), an optional body (sent as JSON) and an
-- optional partner key (Authorization: Bearer KEY).  Returns the HTTP
-- status and the body; raises only when the sandbox cannot be reached.
CREATE FUNCTION @extschema@.request(method text, path text, body text DEFAULT NULL,
                                    key text DEFAULT NULL,
                                    OUT status integer, OUT response text)
LANGUAGE plpgsql AS $$
DECLARE
  cmd text := pg_catalog.format('curl -s -S -g --max-time 60 -X %s %s -w %s',
                                @extschema@.shell_quote(method),
                                @extschema@.shell_quote(@extschema@.url() || path),
                                @extschema@.shell_quote(E'\n%{http_code}\n'));
  last_n integer;
BEGIN
  IF key IS NOT NULL THEN
    cmd := cmd || ' -H ' || @extschema@.shell_quote('Authorization: Bearer ' || key);
  END IF;
  IF body IS NOT NULL THEN
    cmd := cmd || ' -H ''Content-Type: application/json'' --data-binary ' || @extschema@.shell_quote(body);
  END IF;
  IF pg_catalog.to_regclass('pg_temp.partner_svc_sandbox_out') IS NULL THEN
    CREATE TEMP TABLE partner_svc_sandbox_out (n serial, line text);
  END IF;
  TRUNCATE pg_temp.partner_svc_sandbox_out;
  BEGIN
    EXECUTE pg_catalog.format('COPY pg_temp.partner_svc_sandbox_out (line) FROM PROGRAM %L (FORMAT csv, DELIMITER %L, QUOTE %L)',
                              cmd, E'\x1f', E'\x1e');
  EXCEPTION WHEN external_routine_exception OR io_error THEN
    RAISE EXCEPTION 'could not reach the sandbox for % %', method, path
      USING ERRCODE = 'connection_failure',
            DETAIL = 'curl failed: is partner_svc_sandbox running at partner_svc_sandbox.url?';
  END;
  SELECT pg_catalog.max(o.n) INTO last_n FROM pg_temp.partner_svc_sandbox_out o;
  SELECT o.line::integer INTO status FROM pg_temp.partner_svc_sandbox_out o WHERE o.n = last_n;
  SELECT coalesce(pg_catalog.string_agg(coalesce(o.line, ''), E'\n' ORDER BY o.n), '')
    INTO response FROM pg_temp.partner_svc_sandbox_out o WHERE o.n < last_n;
  IF status IS NULL OR status = 0 THEN
    RAISE EXCEPTION 'could not reach the sandbox for % %', method, path
      USING ERRCODE = 'connection_failure',
            DETAIL = 'curl got no HTTP answer: is partner_svc_sandbox running at partner_svc_sandbox.url?';
  END IF;
END $$;

-- A control route that must succeed: its JSON answer, or an error carrying
-- the sandbox's own message.
CREATE FUNCTION @extschema@.control(method text, path text, body jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  SELECT * INTO r FROM @extschema@.request(method, path, body::text);
  IF r.status <> 200 THEN
    RAISE EXCEPTION 'the sandbox refused % %', method, path
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = pg_catalog.format('HTTP %s: %s', r.status, r.response);
  END IF;
  RETURN r.response::jsonb;
END $$;

-- forgets everything: data of every service, timers, faults, stats; a
-- frozen clock runs again
CREATE FUNCTION @extschema@.reset() RETURNS void LANGUAGE sql AS
$$ SELECT @extschema@.control('POST', '/_sandbox/reset') $$;

-- clears the stats and the request log
CREATE FUNCTION @extschema@.reset_stats() RETURNS void LANGUAGE sql AS
$$ SELECT @extschema@.control('POST', '/_sandbox/stats/reset') $$;

-- forgets every rate-limit counter
CREATE FUNCTION @extschema@.reset_rate_limits() RETURNS void LANGUAGE sql AS
$$ SELECT @extschema@.control('POST', '/_sandbox/rate-limits/reset') $$;

-- adds a fault rule (or an array of rules; docs/sandbox.md, "Fault
-- injection"), e.g. '{"route": "GET /v1/movies/{movie}", "kind": "status", "value": 503, "count": 1}'
CREATE FUNCTION @extschema@.add_fault(rule jsonb) RETURNS void LANGUAGE sql AS
$$ SELECT @extschema@.control('POST', '/_sandbox/faults', rule) $$;

CREATE FUNCTION @extschema@.clear_faults() RETURNS void LANGUAGE sql AS
$$ SELECT @extschema@.control('DELETE', '/_sandbox/faults') $$;

-- the fault rules with their remaining counts and hits
CREATE FUNCTION @extschema@.faults() RETURNS jsonb LANGUAGE sql AS
$$ SELECT @extschema@.control('GET', '/_sandbox/faults') -> 'faults' $$;

-- sets knobs (docs/sandbox.md, "Knobs"); returns every knob
CREATE FUNCTION @extschema@.set_config(knobs jsonb) RETURNS jsonb LANGUAGE sql AS
$$ SELECT @extschema@.control('POST', '/_sandbox/config', knobs) $$;

-- requests per method and route template since the last reset_stats()
CREATE FUNCTION @extschema@.stats()
RETURNS TABLE (method text, route text, count bigint, status_2xx bigint, status_3xx bigint,
               status_4xx bigint, status_5xx bigint, status_429 bigint, dropped bigint,
               bytes_in bigint, bytes_out bigint)
LANGUAGE sql AS $$
  SELECT r ->> 'method', r ->> 'route', (r ->> 'count')::bigint, (r ->> '2xx')::bigint,
         (r ->> '3xx')::bigint, (r ->> '4xx')::bigint, (r ->> '5xx')::bigint,
         (r ->> '429')::bigint, (r ->> 'dropped')::bigint, (r ->> 'bytes_in')::bigint,
         (r ->> 'bytes_out')::bigint
  FROM pg_catalog.jsonb_array_elements(@extschema@.control('GET', '/_sandbox/stats') -> 'routes') AS r
  ORDER BY 2, 1
$$;

-- the requests the sandbox received since the last reset_stats(), oldest
-- first; route_filter is 'METHOD /template' or '/template'
CREATE FUNCTION @extschema@.requests(route_filter text DEFAULT NULL)
RETURNS TABLE (seq bigint, method text, route text, path text, query text, status integer,
               partner integer)
LANGUAGE sql AS $$
  SELECT (r ->> 'seq')::bigint, r ->> 'method', r ->> 'route', r ->> 'path', r ->> 'query',
         (r ->> 'status')::integer, (r ->> 'partner')::integer
  FROM pg_catalog.jsonb_array_elements(
         @extschema@.control('GET', '/_sandbox/requests' ||
           CASE WHEN route_filter IS NULL THEN ''
                ELSE '?route=' || @extschema@.urlencode(route_filter) END) -> 'requests') AS r
  ORDER BY 1
$$;

-- the sandbox clock: {"now_ms", "frozen", "advanced_ms"}
CREATE FUNCTION @extschema@.clock() RETURNS jsonb LANGUAGE sql AS
$$ SELECT @extschema@.control('GET', '/_sandbox/clock') $$;

-- moves sandbox time forward at once; every timer it passes (order state
-- changes, webhook retries, job executions) fires, in order
CREATE FUNCTION @extschema@.advance_clock(by_time interval) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF by_time < interval '0' THEN
    RAISE EXCEPTION 'the sandbox clock cannot go back'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  PERFORM @extschema@.control('POST', '/_sandbox/clock',
    pg_catalog.jsonb_build_object('advance_ms',
      pg_catalog.round(pg_catalog.date_part('epoch', by_time) * 1000)::bigint));
END $$;

-- stops (true) or restarts (false) sandbox time
CREATE FUNCTION @extschema@.freeze_clock(frozen boolean DEFAULT true) RETURNS void LANGUAGE sql AS
$$ SELECT @extschema@.control('POST', '/_sandbox/clock', pg_catalog.jsonb_build_object('freeze', frozen)) $$;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA @extschema@ FROM PUBLIC;
