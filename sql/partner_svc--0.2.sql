-- partner_svc--0.2.sql: built by make from the files sql/install/NN_name.sql; do not edit

\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

-- from sql/install/00_wrapper.sql
-- 00_wrapper.sql: the foreign-data wrapper, its handler and validator


CREATE FUNCTION @extschema@.fdw_handler()
RETURNS pg_catalog.fdw_handler
AS 'MODULE_PATHNAME', 'psvc_fdw_handler'
LANGUAGE C STRICT;

COMMENT ON FUNCTION @extschema@.fdw_handler()
IS 'handler of the partner_svc foreign-data wrapper';

CREATE FUNCTION @extschema@.fdw_validator(pg_catalog.text[], pg_catalog.oid)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_options_validator'
LANGUAGE C STRICT;

COMMENT ON FUNCTION @extschema@.fdw_validator(pg_catalog.text[], pg_catalog.oid)
IS 'validator of the options of partner_svc servers, user mappings, foreign tables and columns';

CREATE FOREIGN DATA WRAPPER partner_svc
  HANDLER @extschema@.fdw_handler
  VALIDATOR @extschema@.fdw_validator;

COMMENT ON FOREIGN DATA WRAPPER partner_svc
IS 'HTTP JSON partner services as foreign tables';

CREATE FUNCTION @extschema@.version()
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_module_version'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.version()
IS 'version of the loaded partner_svc library';

-- Every role may look into the schema: what a role may do there is decided
-- by the grants on each object (functions are EXECUTE for PUBLIC and check
-- USAGE on the server they call; foreign tables are granted by their
-- owner; see docs/privileges.md).
GRANT USAGE ON SCHEMA @extschema@ TO PUBLIC;

-- from sql/install/20_functions_orders_content.sql
-- 20_functions_orders_content.sql: the SQL functions of the order, movie,
-- catalog and generation services (src/functions_orders.c,
-- src/functions_content.c; docs/functions.md).
--
-- Every function takes as its last argument the server to use, by default
-- the one partner_svc server of its service.  They are SECURITY INVOKER:
-- the caller needs USAGE on the server, and the key is the caller's user
-- mapping.  They are VOLATILE (they talk to a service) and not STRICT
-- (server defaults to NULL); a NULL first argument gives NULL.


CREATE FUNCTION @extschema@.create_order(payload pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_create'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.create_order(pg_catalog.jsonb, pg_catalog.name)
IS 'creates orders (POST /public/orders); looks them up by custom id before sending again when an answer is lost';

CREATE FUNCTION @extschema@.validate_order(payload pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_validate'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.validate_order(pg_catalog.jsonb, pg_catalog.name)
IS 'checks an order payload (POST /public/orders/validate); {"valid": false, "error": ...} instead of an error';

CREATE FUNCTION @extschema@.order_detail(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_detail'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.order_detail(pg_catalog.text, pg_catalog.name)
IS 'the order with this id or custom id (GET /public/orders/{id})';

CREATE FUNCTION @extschema@.order_status(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_orders_status'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.order_status(pg_catalog.text, pg_catalog.name)
IS 'the status of the order with this id or custom id (GET /public/orders/{id}/status)';

CREATE FUNCTION @extschema@.cancel_pending(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_cancel_pending'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.cancel_pending(pg_catalog.text, pg_catalog.name)
IS 'cancels a PENDING order (POST /public/orders/{id}/cancel-pending)';

CREATE FUNCTION @extschema@.cancel_deferred(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_orders_cancel_deferred'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.cancel_deferred(pg_catalog.text, pg_catalog.name)
IS 'cancels a DEFERRED order (POST /public/orders/{id}/cancel-deferred)';

CREATE FUNCTION @extschema@.movie_summary(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_content_movie_summary'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_summary(pg_catalog.text, pg_catalog.name)
IS 'the Markdown summary of a movie (id or slug); NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_spoiler_free_summary(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_content_movie_spoiler_free_summary'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_spoiler_free_summary(pg_catalog.text, pg_catalog.name)
IS 'the Markdown spoiler-free summary of a movie; NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_ending(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_content_movie_ending'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_ending(pg_catalog.text, pg_catalog.name)
IS 'the Markdown explanation of the ending of a movie; NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_setting(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_movie_setting'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_setting(pg_catalog.text, pg_catalog.name)
IS 'the setting (place and time) of a movie; NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_profile(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_movie_profile'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_profile(pg_catalog.text, pg_catalog.name)
IS 'the mood and content profile of a movie; NULL when the movie has none';

CREATE FUNCTION @extschema@.movie_detail(movie pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_movie_detail'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.movie_detail(pg_catalog.text, pg_catalog.name)
IS 'the movie object (GET /v1/movies/{movie}), with available_content';

CREATE FUNCTION @extschema@.business_question(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_business_question'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.business_question(pg_catalog.text, pg_catalog.name)
IS 'a business question with its status, acceptance criteria and policies';

CREATE FUNCTION @extschema@.business_question_answer(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_business_question_answer'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.business_question_answer(pg_catalog.text, pg_catalog.name)
IS 'the answer of a business question: snapshot figures, or a blocker';

CREATE FUNCTION @extschema@.generate(request pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_generate'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.generate(pg_catalog.jsonb, pg_catalog.name)
IS 'generates threads (POST /v1/generate)';

CREATE FUNCTION @extschema@.validate_key(server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_content_validate_key'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.validate_key(pg_catalog.name)
IS 'checks the API key of the caller (GET /v1/key/validate); {"valid": false, ...} for a refused key';

-- from sql/install/21_functions_files_scheduler.sql
-- 21_functions_files_scheduler.sql: SQL functions of the files and the
-- scheduler services (src/functions_files.c, src/functions_scheduler.c;
-- docs/functions-files-scheduler.md).  Each takes the server last; NULL
-- means the one server of the service.  A NULL main argument gives NULL
-- and sends nothing.


CREATE FUNCTION @extschema@.create_upload(filename pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_files_create_upload'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.create_upload(pg_catalog.text, pg_catalog.name)
IS 'POST /uploads: a new, empty file of the files service; returns its FileInfo';

CREATE FUNCTION @extschema@.append_upload(file_id pg_catalog.text, chunk pg_catalog.bytea, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_files_append_upload'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.append_upload(pg_catalog.text, pg_catalog.bytea, pg_catalog.name)
IS 'appends chunk to an upload session (PUT /uploads/{file_id} per 5 MiB, each exactly once); returns the FileInfo';

CREATE FUNCTION @extschema@.upload_file(filename pg_catalog.text, data pg_catalog.bytea, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_files_upload_file'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.upload_file(pg_catalog.text, pg_catalog.bytea, pg_catalog.name)
IS 'uploads data as a new file: POST /uploads, then PUT /uploads/{file_id} per 5 MiB, each exactly once; returns the FileInfo';

CREATE FUNCTION @extschema@.file_info(file_id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_files_file_info'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.file_info(pg_catalog.text, pg_catalog.name)
IS 'GET /files/{file_id}: the FileInfo of a file';

CREATE FUNCTION @extschema@.save_job(job pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_scheduler_save_job'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.save_job(pg_catalog.jsonb, pg_catalog.name)
IS 'PUT /api/user-jobs: creates (no id) or replaces (with id) a scheduled job; returns the UserJob';

CREATE FUNCTION @extschema@.run_job(job_id pg_catalog.int8, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_scheduler_run_job'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.run_job(pg_catalog.int8, pg_catalog.name)
IS 'GET /api/user-jobs/run/{jobId}: starts an execution now; returns it (never retried after a failure)';

CREATE FUNCTION @extschema@.stop_job(job_id pg_catalog.int8, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_scheduler_stop_job'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.stop_job(pg_catalog.int8, pg_catalog.name)
IS 'GET /api/user-jobs/stop/{jobId}: stops the running executions of a job';

CREATE FUNCTION @extschema@.pause_job(job_id pg_catalog.int8, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_scheduler_pause_job'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.pause_job(pg_catalog.int8, pg_catalog.name)
IS 'GET /api/user-jobs/pause/{jobId}: stops a job from running on its schedule';

CREATE FUNCTION @extschema@.activate_job(job_id pg_catalog.int8, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_scheduler_activate_job'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.activate_job(pg_catalog.int8, pg_catalog.name)
IS 'GET /api/user-jobs/activate/{jobId}: resumes the schedule of a paused job';

CREATE FUNCTION @extschema@.clone_job(job_id pg_catalog.int8, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'psvc_scheduler_clone_job'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.clone_job(pg_catalog.int8, pg_catalog.name)
IS 'GET /api/user-jobs/clone/{jobId}: copies a job; returns the new job id (never retried after a failure)';

CREATE FUNCTION @extschema@.sync_job_token(job_id pg_catalog.int8, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'psvc_scheduler_sync_job_token'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.sync_job_token(pg_catalog.int8, pg_catalog.name)
IS 'GET /api/user-jobs/sync-token/{jobId}: copies the token of the job to the other jobs of its user; returns newJobId';

CREATE FUNCTION @extschema@.delete_job(job_id pg_catalog.int8, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_scheduler_delete_job'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.delete_job(pg_catalog.int8, pg_catalog.name)
IS 'DELETE /api/user-jobs/{id}: deletes a job and its executions';

CREATE FUNCTION @extschema@.job_execution_summary(job_id pg_catalog.int8, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_scheduler_job_execution_summary'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.job_execution_summary(pg_catalog.int8, pg_catalog.name)
IS 'GET /api/user-jobs/user-job-executions/{jobId}: the last 15 executions of a job and their totals';

CREATE FUNCTION @extschema@.send_execution_email(execution_id pg_catalog.int8, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_scheduler_send_execution_email'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.send_execution_email(pg_catalog.int8, pg_catalog.name)
IS 'GET /api/email/jobExecution/{id}: sends the email of a job execution (never retried after a failure)';

-- from sql/install/25_quota.sql
-- 25_quota.sql: one partner quota for a fleet of nodes: the coordinator's
-- side and the node's status (src/quota.c, docs/scale-out.md); before
-- 30_ratelimit.sql, whose view partner_svc.rate_limits shows the mode


-- One row per limiter key (server name, route, resource id) and window
-- length.  buckets/counts: the units of the key counted at the time of
-- bucket b (of width (window + margin) / 60, microseconds since the
-- epoch), sorted; buckets ahead of now hold granted units not reported yet.
CREATE TABLE @extschema@.quota_windows (
    key pg_catalog.text NOT NULL,
    window_ms pg_catalog.int4 NOT NULL,
    "limit" pg_catalog.int4 NOT NULL,
    buckets pg_catalog.int8[] NOT NULL DEFAULT '{}',
    counts pg_catalog.int4[] NOT NULL DEFAULT '{}',
    blocked_until pg_catalog.timestamptz,
    granted pg_catalog.int8 NOT NULL DEFAULT 0,
    updated_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now()
);
CREATE UNIQUE INDEX quota_windows_key ON @extschema@.quota_windows (key, window_ms);

COMMENT ON TABLE @extschema@.quota_windows
IS 'the fleet quota at the coordinator: units counted per key and window (partner_svc.quota_lease)';

-- Grants up to want units of key (at most the limit within any window,
-- counting every unit from its grant until hold_ms later, or until a node
-- reports it), after applying a node's reports: moved units ended (count
-- them now), added units were sent in fallback mode (count them now),
-- returned units never reached the service (forget them), block_ms a 429
-- (block the key that long for every node).  Answers the units granted,
-- how long the key is blocked, and when none was granted, in how many ms
-- to ask again.
CREATE FUNCTION @extschema@.quota_lease(
    lease_key pg_catalog.text,
    win_ms pg_catalog.int4,
    quota pg_catalog.int4,
    want pg_catalog.int4,
    moved pg_catalog.int4 DEFAULT 0,
    added pg_catalog.int4 DEFAULT 0,
    returned pg_catalog.int4 DEFAULT 0,
    block_ms pg_catalog.int4 DEFAULT 0,
    hold_ms pg_catalog.int4 DEFAULT 0,
    OUT granted pg_catalog.int4,
    OUT blocked_ms pg_catalog.int4,
    OUT retry_ms pg_catalog.int4)
RETURNS record
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    w_us int8;
    width int8;
    now_ts timestamptz := clock_timestamp();
    now_us int8 := (extract(epoch FROM clock_timestamp()) * 1000000)::int8;
    head int8;
    b int8[];
    c int4[];
    blk timestamptz;
    used int4;
    n int4;
    t int4;
    cum int4;
BEGIN
    IF win_ms <= 0 OR quota < 0 OR want < 0 OR moved < 0 OR added < 0
       OR returned < 0 OR block_ms < 0 OR hold_ms < 0 THEN
        RAISE EXCEPTION 'invalid argument of partner_svc.quota_lease'
            USING ERRCODE = '22023',
                  DETAIL = 'The window must be positive, the other numbers zero or more.';
    END IF;
    w_us := win_ms::int8 * 1000;
    width := (w_us + greatest(w_us / 1000, 1000) + 59) / 60;
    head := now_us / width;

    INSERT INTO @extschema@.quota_windows AS q (key, window_ms, "limit")
    VALUES (lease_key, win_ms, quota)
    ON CONFLICT (key, window_ms)
    DO UPDATE SET "limit" = EXCLUDED."limit"
    RETURNING q.buckets, q.counts, q.blocked_until INTO b, c, blk;

    -- forget what left the window (the ring of ratelimit.c: 61 buckets)
    SELECT coalesce(array_agg(u.bb ORDER BY u.bb), '{}'),
           coalesce(array_agg(u.cc ORDER BY u.bb), '{}')
      INTO b, c
      FROM unnest(b, c) AS u(bb, cc)
     WHERE u.bb >= head - 60 AND u.cc > 0;

    -- ended and returned units leave the earliest buckets ahead of now
    n := moved + returned;
    FOR i IN 1 .. coalesce(array_length(b, 1), 0) LOOP
        EXIT WHEN n = 0;
        IF b[i] > head THEN
            t := least(n, c[i]);
            c[i] := c[i] - t;
            n := n - t;
        END IF;
    END LOOP;
    IF moved + added > 0 THEN
        b := b || head;
        c := c || (moved + added);
    END IF;

    IF block_ms > 0 THEN
        blk := greatest(coalesce(blk, now_ts), now_ts + block_ms * interval '1 ms');
    END IF;
    IF blk <= now_ts THEN
        blk := NULL;
    END IF;

    SELECT coalesce(sum(u.cc), 0)::int4 INTO used FROM unnest(c) AS u(cc);
    granted := 0;
    blocked_ms := 0;
    retry_ms := 0;
    IF blk IS NOT NULL THEN
        blocked_ms := ceil(extract(epoch FROM blk - now_ts) * 1000)::int4;
        retry_ms := blocked_ms;
    ELSE
        granted := least(want, greatest(quota - used, 0));
        IF granted > 0 THEN
            b := b || ((now_us + hold_ms::int8 * 1000) / width);
            c := c || granted;
        ELSIF want > 0 THEN
            -- when enough units leave the window for one more
            SELECT coalesce(array_agg(u.bb ORDER BY u.bb), '{}'),
                   coalesce(array_agg(u.cc ORDER BY u.bb), '{}')
              INTO b, c
              FROM (SELECT v.bb, sum(v.cc)::int4 AS cc
                      FROM unnest(b, c) AS v(bb, cc)
                     GROUP BY v.bb HAVING sum(v.cc) > 0) u;
            cum := 0;
            retry_ms := 1;
            FOR i IN 1 .. coalesce(array_length(b, 1), 0) LOOP
                cum := cum + c[i];
                IF cum >= used - quota + 1 THEN
                    retry_ms := greatest(((b[i] + 61) * width - now_us + 999) / 1000, 1)::int4;
                    EXIT;
                END IF;
            END LOOP;
        END IF;
    END IF;

    -- merge equal buckets, drop empty ones, keep them sorted
    SELECT coalesce(array_agg(u.bb ORDER BY u.bb), '{}'),
           coalesce(array_agg(u.cc ORDER BY u.bb), '{}')
      INTO b, c
      FROM (SELECT v.bb, sum(v.cc)::int4 AS cc
              FROM unnest(b, c) AS v(bb, cc)
             GROUP BY v.bb HAVING sum(v.cc) > 0) u;

    UPDATE @extschema@.quota_windows AS q
       SET buckets = b, counts = c, blocked_until = blk,
           granted = q.granted + quota_lease.granted,
           updated_at = now_ts
     WHERE q.key = lease_key AND q.window_ms = win_ms;
END
$fn$;

COMMENT ON FUNCTION @extschema@.quota_lease(pg_catalog.text, pg_catalog.int4,
    pg_catalog.int4, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4,
    pg_catalog.int4, pg_catalog.int4, pg_catalog.int4)
IS 'the quota coordinator: grants a node units of a rate-limit key, never more than the limit in any window, and takes its reports';

REVOKE ALL ON FUNCTION @extschema@.quota_lease(pg_catalog.text, pg_catalog.int4,
    pg_catalog.int4, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4,
    pg_catalog.int4, pg_catalog.int4, pg_catalog.int4) FROM PUBLIC;

CREATE FUNCTION @extschema@.quota_status(
    OUT mode pg_catalog.text,
    OUT coordinator_reached pg_catalog.timestamptz,
    OUT fallback_from pg_catalog.timestamptz,
    OUT last_error pg_catalog.text)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_quota_status'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.quota_status()
IS 'this node''s fleet quota: local, connecting, leased or fallback, the last answer of the coordinator, since when the fallback share applies, the last error';

-- from sql/install/30_ratelimit.sql
-- 30_ratelimit.sql: the rate limiter's views, its rules and the request stats
-- (src/ratelimit*.c, docs/ratelimit.md)


CREATE FUNCTION @extschema@.rate_limit_rules(server pg_catalog.name,
    OUT route pg_catalog.text,
    OUT per_resource pg_catalog.bool,
    OUT "limit" pg_catalog.int4,
    OUT source pg_catalog.text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_rl_rules'
LANGUAGE C STRICT STABLE;

COMMENT ON FUNCTION @extschema@.rate_limit_rules(pg_catalog.name)
IS 'the rate limits requests of a server get: the table for its tier, with its rate_limits overrides';

CREATE FUNCTION @extschema@.rate_limits(
    OUT dbid pg_catalog.oid,
    OUT serverid pg_catalog.oid,
    OUT method pg_catalog.text,
    OUT route pg_catalog.text,
    OUT resource pg_catalog.text,
    OUT "limit" pg_catalog.int4,
    OUT used pg_catalog.int4,
    OUT in_flight pg_catalog.int4,
    OUT frees_at pg_catalog.timestamptz,
    OUT resets_at pg_catalog.timestamptz,
    OUT blocked_until pg_catalog.timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_rl_rate_limits'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.rate_limits AS
  SELECT s.srvname AS server, r.method, r.route, r.resource, r."limit",
         r.used, r.in_flight, GREATEST(r."limit" - r.used, 0) AS available,
         r.frees_at, r.resets_at, r.blocked_until, r.dbid, r.serverid,
         (SELECT qs.mode FROM @extschema@.quota_status() qs) AS mode
  FROM @extschema@.rate_limits() r
  LEFT JOIN pg_catalog.pg_foreign_server s
    ON s.oid = r.serverid
   AND r.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                 WHERE d.datname = pg_catalog.current_database());

COMMENT ON VIEW @extschema@.rate_limits
IS 'the rate limiter''s keys (server, route, resource id) with their limit, use in the current window and when budget frees';

CREATE FUNCTION @extschema@.stats(
    OUT dbid pg_catalog.oid,
    OUT serverid pg_catalog.oid,
    OUT method pg_catalog.text,
    OUT route pg_catalog.text,
    OUT requests pg_catalog.int8,
    OUT retries pg_catalog.int8,
    OUT ok pg_catalog.int8,
    OUT client_errors pg_catalog.int8,
    OUT rate_limited pg_catalog.int8,
    OUT server_errors pg_catalog.int8,
    OUT other_status pg_catalog.int8,
    OUT failures pg_catalog.int8,
    OUT bytes_sent pg_catalog.int8,
    OUT bytes_received pg_catalog.int8,
    OUT total_time pg_catalog.float8,
    OUT max_time pg_catalog.float8,
    OUT limiter_waits pg_catalog.int8,
    OUT limiter_wait_time pg_catalog.float8,
    OUT stats_since pg_catalog.timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_rl_stats'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.stats AS
  SELECT s.srvname AS server, st.method, st.route, st.requests, st.retries,
         st.ok, st.client_errors, st.rate_limited, st.server_errors,
         st.other_status, st.failures, st.bytes_sent, st.bytes_received,
         st.total_time, st.max_time,
         CASE WHEN st.requests > 0 THEN st.total_time / st.requests END AS mean_time,
         st.limiter_waits, st.limiter_wait_time, st.stats_since,
         st.dbid, st.serverid
  FROM @extschema@.stats() st
  LEFT JOIN pg_catalog.pg_foreign_server s
    ON s.oid = st.serverid
   AND st.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                  WHERE d.datname = pg_catalog.current_database());

COMMENT ON VIEW @extschema@.stats
IS 'HTTP requests per server and route since the last stats_reset(): attempts, retries, outcomes by class, bytes, time, waits for the rate limiter';

CREATE FUNCTION @extschema@.stats_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_rl_stats_reset'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.stats_reset()
IS 'forgets partner_svc.stats (not the rate limiter''s budgets)';

GRANT SELECT ON @extschema@.rate_limits, @extschema@.stats TO PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.stats_reset() FROM PUBLIC;

-- from sql/install/40_webhooks.sql
-- 40_webhooks.sql: what the webhook worker writes (webhook_events,
-- order_states, transactions, webhook_rejects) and how to watch it
-- (webhook_status()).  The worker (src/webhook_worker.c) inserts with the
-- statements of src/webhook_store.c; keep the two in step.


-- Every accepted delivery, once.  dedupe_key is sha256(environment, NUL,
-- body): a retried delivery (same body) conflicts on it and is not stored
-- again.
CREATE TABLE @extschema@.webhook_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  received_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
  environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
  event_type text NOT NULL,
  status text NOT NULL,
  unique_id text,
  custom_id text,
  transaction_id text,
  pdf_url text,
  payload jsonb NOT NULL,
  dedupe_key bytea NOT NULL UNIQUE
);
CREATE INDEX ON @extschema@.webhook_events (unique_id);
CREATE INDEX ON @extschema@.webhook_events (transaction_id);

COMMENT ON TABLE @extschema@.webhook_events
IS 'every webhook delivery the worker accepted, once (retries of the same body are not stored again)';

-- Latest known status of each order.  A status only ever moves up in
-- CREATED < PENDING, DEFERRED < ACTIVE < REFUNDED, so a late retry of an
-- older event changes nothing; pdf_url, once known, is kept.
CREATE TABLE @extschema@.order_states (
  unique_id text PRIMARY KEY,
  custom_id text,
  status text NOT NULL,
  pdf_url text,
  updated_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);

COMMENT ON TABLE @extschema@.order_states
IS 'latest status of each order seen in webhooks; never moved backwards';

-- Latest checkout status of each transaction (CREATED < SUCCESS, FAILED),
-- with the orders its last webhook listed.
CREATE TABLE @extschema@.transactions (
  transaction_id text PRIMARY KEY,
  status text NOT NULL,
  order_ids text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);

COMMENT ON TABLE @extschema@.transactions
IS 'latest checkout status of each transaction seen in CHECKOUT_STATUS_CHANGED webhooks';

-- Deliveries answered 400: not JSON, or not one of the three events.
CREATE TABLE @extschema@.webhook_rejects (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  received_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
  environment text NOT NULL,
  reason text NOT NULL,
  body_bytes integer NOT NULL,
  body text NOT NULL
);

COMMENT ON TABLE @extschema@.webhook_rejects
IS 'webhook deliveries answered 400, with the reason and the body (truncated to 8 kB)';

-- The order of statuses; higher wins.  Unknown statuses never get here
-- (the worker answers them 400).
CREATE FUNCTION @extschema@.webhook_status_rank(status text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE status
  WHEN 'CREATED' THEN 1
  WHEN 'PENDING' THEN 2
  WHEN 'DEFERRED' THEN 2
  WHEN 'ACTIVE' THEN 3
  WHEN 'REFUNDED' THEN 4
  WHEN 'SUCCESS' THEN 2
  WHEN 'FAILED' THEN 2
  ELSE 0
END;

COMMENT ON FUNCTION @extschema@.webhook_status_rank(text)
IS 'rank of an order or checkout status: order_states and transactions only move to a higher rank';

CREATE FUNCTION @extschema@.webhook_status(
  OUT state text,
  OUT listen_address text,
  OUT port integer,
  OUT database text,
  OUT pid integer,
  OUT listening_since timestamptz,
  OUT requests bigint,
  OUT accepted bigint,
  OUT duplicates bigint,
  OUT rejected bigint,
  OUT unauthorized bigint,
  OUT too_large bigint,
  OUT not_found bigint,
  OUT bad_method bigint,
  OUT failed bigint,
  OUT timed_out bigint,
  OUT batches bigint,
  OUT max_batch integer,
  OUT last_error text)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_webhook_status'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.webhook_status()
IS 'state, address and counters of the webhook worker (since it last started)';

REVOKE ALL ON FUNCTION @extschema@.webhook_status() FROM PUBLIC;

-- Backups: the four tables hold data the partner will not send again, so
-- pg_dump must keep their rows (an extension's tables are otherwise dumped
-- as CREATE EXTENSION only), and the identity sequences their positions.
SELECT pg_catalog.pg_extension_config_dump('@extschema@.webhook_events', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.order_states', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.transactions', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.webhook_rejects', '');
SELECT pg_catalog.pg_extension_config_dump(
  pg_catalog.pg_get_serial_sequence('@extschema@.webhook_events', 'id')::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump(
  pg_catalog.pg_get_serial_sequence('@extschema@.webhook_rejects', 'id')::pg_catalog.regclass, '');
