-- partner_svc--0.3.sql: built by make from the files sql/install/NN_name.sql; do not edit

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
-- catalog and generation services (src/functions/functions_orders.c,
-- src/functions/functions_content.c; docs/functions.md).
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
-- scheduler services (src/functions/functions_files.c, src/functions/functions_scheduler.c;
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

-- from sql/install/22_functions_partner.sql
-- 22_functions_partner.sql: the SQL functions of the other routes of the
-- order service's rate-limit table: vehicle validation, transactions paid
-- through the service's checkout, and /mcp (docs/functions.md).  New in
-- 0.3; sql/upgrade/0.2--0.3/30_surface.sql is a link to this file.
--
-- As every function of the extension: the last argument is the server to
-- use, by default the one partner_svc server of service "orders"; SECURITY
-- INVOKER (USAGE on the server, the caller's user mapping); VOLATILE; not
-- STRICT; a NULL first argument gives NULL.


CREATE FUNCTION @extschema@.validate_vehicle(vehicle pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_validate_vehicle'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.validate_vehicle(pg_catalog.jsonb, pg_catalog.name)
IS 'checks a vehicle {"plate", "country"} (POST /public/validate-vehicle); {"valid": false, "error": ...} instead of an error';

CREATE FUNCTION @extschema@.create_transaction(payload pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_create'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.create_transaction(pg_catalog.jsonb, pg_catalog.name)
IS 'creates orders paid through the service''s checkout (POST /public/transaction/create); looks them up by custom id before sending again when an answer is lost';

CREATE FUNCTION @extschema@.transaction_status(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_tx_status'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.transaction_status(pg_catalog.text, pg_catalog.name)
IS 'the checkout status of a transaction, by transaction id or the id of one of its orders (GET /public/transaction/{unique_id}/status); NULL when the partner paid';

CREATE FUNCTION @extschema@.transaction_fee(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_fee'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.transaction_fee(pg_catalog.text, pg_catalog.name)
IS 'amount, fee and total of a transaction (GET /public/transaction/{unique_id}/fee)';

CREATE FUNCTION @extschema@.transaction_data(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_data'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.transaction_data(pg_catalog.text, pg_catalog.name)
IS 'the transaction object (GET /public/transaction/{id}/data)';

CREATE FUNCTION @extschema@.cancel_transaction(id pg_catalog.text, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_cancel'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.cancel_transaction(pg_catalog.text, pg_catalog.name)
IS 'cancels an open checkout (POST /public/transaction/{id}/cancel); reads the transaction when an answer is lost';

CREATE FUNCTION @extschema@.mcp(request pg_catalog.jsonb, server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_tx_mcp'
LANGUAGE C VOLATILE SECURITY INVOKER;

COMMENT ON FUNCTION @extschema@.mcp(pg_catalog.jsonb, pg_catalog.name)
IS 'one JSON-RPC 2.0 call to the service''s MCP endpoint (POST /public/mcp); the JSON-RPC answer as it came';

-- from sql/install/25_quota.sql
-- 25_quota.sql: one partner quota for a fleet of nodes: the coordinator's
-- side and the node's status (src/shmem/quota.c, docs/scale-out.md); before
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

-- When quota_lease last pruned quota_windows (one row).  A row of
-- quota_windows whose buckets have all left the window and whose key is
-- not blocked holds nothing: the next lease of its key would start from
-- the same empty count.  Rows of keys no node asks for any more (one per
-- order id of the per-id routes, say) would stay for ever, so quota_lease
-- deletes such rows, at most once a minute (at its end).
CREATE TABLE @extschema@.quota_prune (
    only_row pg_catalog.bool PRIMARY KEY DEFAULT true CHECK (only_row),
    pruned_at pg_catalog.timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO @extschema@.quota_prune DEFAULT VALUES;

COMMENT ON TABLE @extschema@.quota_prune
IS 'when partner_svc.quota_lease last deleted the rows of quota_windows that hold nothing';

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

    -- once a minute (the one row of quota_prune says when), delete the
    -- rows that hold nothing: every bucket out of its window (of its own
    -- width), no block.  SKIP LOCKED: a row another call holds is in use,
    -- and no call ever waits here for another.
    UPDATE @extschema@.quota_prune AS p SET pruned_at = now_ts
     WHERE p.pruned_at < now_ts - interval '1 minute'
       AND p.ctid = (SELECT p2.ctid FROM @extschema@.quota_prune AS p2
                      FOR UPDATE SKIP LOCKED);
    IF FOUND THEN
        DELETE FROM @extschema@.quota_windows AS q
         WHERE q.ctid IN (
               SELECT d.ctid FROM @extschema@.quota_windows AS d
                WHERE (d.blocked_until IS NULL OR d.blocked_until <= now_ts)
                  AND NOT EXISTS (
                      SELECT FROM unnest(d.buckets) AS u(bb)
                       WHERE u.bb >= now_us / ((d.window_ms::int8 * 1000
                                 + greatest(d.window_ms::int8, 1000) + 59) / 60) - 60)
                FOR UPDATE SKIP LOCKED);
    END IF;
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

-- PUBLIC may call it too; the grant keeps monitoring roles able to should
-- PUBLIC's EXECUTE be revoked (docs/privileges.md)
GRANT EXECUTE ON FUNCTION @extschema@.quota_status() TO pg_monitor;

-- from sql/install/30_ratelimit.sql
-- 30_ratelimit.sql: the rate limiter's views and rules, and the reset of the
-- request stats (src/ratelimit*.c, docs/ratelimit.md); the stats view itself
-- is 31_stats.sql


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

CREATE FUNCTION @extschema@.stats_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_rl_stats_reset'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.stats_reset()
IS 'forgets partner_svc.stats (not the rate limiter''s budgets)';

CREATE FUNCTION @extschema@.rate_limits_reset(server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'psvc_rl_rate_limits_reset'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.rate_limits_reset(pg_catalog.name)
IS 'forgets the rate limiter''s counts and 429 blocks of the partner account a server reaches with your user mapping and of the keys it used last, or with NULL of every key; returns how many keys had any (for tests: a sandbox that forgot its own counters)';

GRANT SELECT ON @extschema@.rate_limits TO PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.stats_reset() FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.rate_limits_reset(pg_catalog.name) FROM PUBLIC;

-- from sql/install/31_stats.sql
-- 31_stats.sql: the request stats per server and route, with the answers of
-- the response cache (src/shmem/ratelimit_views.c, docs/ratelimit.md).  The
-- update 0.2 -> 0.3 drops the 0.2 view and function and runs this file
-- again (sql/upgrade/0.2--0.3/41_stats.sql links here).


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
    OUT cache_hits pg_catalog.int8,
    OUT cache_misses pg_catalog.int8,
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
         st.limiter_waits, st.limiter_wait_time, st.cache_hits,
         st.cache_misses, st.stats_since,
         st.dbid, st.serverid
  FROM @extschema@.stats() st
  LEFT JOIN pg_catalog.pg_foreign_server s
    ON s.oid = st.serverid
   AND st.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                  WHERE d.datname = pg_catalog.current_database());

COMMENT ON VIEW @extschema@.stats
IS 'HTTP requests per server and route since the last stats_reset(): attempts, retries, outcomes by class, bytes, time, waits for the rate limiter, answers of the response cache';

GRANT SELECT ON @extschema@.stats TO PUBLIC;

-- from sql/install/35_cache.sql
-- 35_cache.sql: the shared response cache (src/shmem/cache.c, docs/cache.md);
-- its hits and misses per route are columns of partner_svc.stats
-- (31_stats.sql)


CREATE FUNCTION @extschema@.cache_reset()
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'psvc_cache_reset'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.cache_reset()
IS 'empties the response cache of the whole server and zeroes its counters; returns the number of entries forgotten';

CREATE FUNCTION @extschema@.cache_usage(
    OUT size_limit pg_catalog.int8,
    OUT shared_bytes pg_catalog.int8,
    OUT bytes_used pg_catalog.int8,
    OUT bytes_cached pg_catalog.int8,
    OUT entries pg_catalog.int8,
    OUT max_entries pg_catalog.int4,
    OUT max_entry_bytes pg_catalog.int8,
    OUT hits pg_catalog.int8,
    OUT misses pg_catalog.int8,
    OUT stores pg_catalog.int8,
    OUT evictions pg_catalog.int8,
    OUT not_stored pg_catalog.int8,
    OUT revalidated pg_catalog.int8,
    OUT decoded_hits pg_catalog.int8,
    OUT reset_at pg_catalog.timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_cache_usage'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.cache_usage AS
  SELECT * FROM @extschema@.cache_usage();

COMMENT ON VIEW @extschema@.cache_usage
IS 'the response cache: its memory (partner_svc.cache_size, what it took, what its entries hold), entries, and hits (decoded_hits: served with their decoded page), misses, stores, evictions and revalidations since cache_reset()';

GRANT SELECT ON @extschema@.cache_usage TO PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.cache_reset() FROM PUBLIC;

-- from sql/install/40_webhooks.sql
-- 40_webhooks.sql: what the webhook worker writes (webhook_events,
-- order_states, transactions, webhook_rejects) and how to watch it
-- (webhook_status()).  The worker (src/webhook/webhook_worker.c) inserts with the
-- statements of src/webhook/webhook_store.c; keep the two in step.


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
-- the worker deletes rows older than keep_events of partner_svc.worker_tasks
CREATE INDEX ON @extschema@.webhook_events (received_at);

COMMENT ON TABLE @extschema@.webhook_events
IS 'every webhook delivery the worker accepted, once (retries of the same body are not stored again)';

-- Latest known status of each order.  A status only ever moves up in
-- CREATED < PENDING, DEFERRED < ACTIVE < EXPIRED < REFUNDED, so a late
-- retry of an older event changes nothing; pdf_url, once known, is kept.
--
-- source says who told the status: 'webhook', 'poll' (the worker's
-- reconciler read it with GET /public/orders/{id}/status) or 'created'
-- (the answer of create_order or create_transaction, before any webhook).
-- server and created_by name the server and role of a create (the
-- reconciler polls with that role's user mapping); created_by is the
-- role's OID (regrole: a renamed role keeps its orders, a dropped one is
-- never taken for a new role of its name); polled_at is the last
-- time the reconciler read the status (docs/webhooks.md#reconciliation).
CREATE TABLE @extschema@.order_states (
  unique_id text PRIMARY KEY,
  custom_id text,
  status text NOT NULL,
  pdf_url text,
  updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
  source text NOT NULL DEFAULT 'webhook' CHECK (source IN ('webhook', 'poll', 'created')),
  server name,
  created_by regrole,
  polled_at timestamptz
);

COMMENT ON TABLE @extschema@.order_states
IS 'latest status of each order, from webhooks first, else from status polling; never moved backwards';

-- Latest checkout status of each transaction (CREATED < SUCCESS, FAILED),
-- with the orders its last webhook listed.
-- source, server, created_by and polled_at as in order_states.
CREATE TABLE @extschema@.transactions (
  transaction_id text PRIMARY KEY,
  status text NOT NULL,
  order_ids text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
  source text NOT NULL DEFAULT 'webhook' CHECK (source IN ('webhook', 'poll', 'created')),
  server name,
  created_by regrole,
  polled_at timestamptz
);

COMMENT ON TABLE @extschema@.transactions
IS 'latest checkout status of each transaction, from CHECKOUT_STATUS_CHANGED webhooks first, else from status polling';

-- Deliveries answered 400: not JSON, or not one of the three events.  The
-- worker deletes rows older than keep_rejects and keeps at most
-- max_rejects rows (partner_svc.worker_tasks), oldest deleted first.
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

-- The order of statuses; a status moves only to a higher rank.  The worker
-- applies the table of moves in src/webhook/webhook_store.c (status_moves); these
-- ranks give the same order, for readers of order_states and transactions.
-- Unknown statuses never get here (the worker answers them 400).
CREATE FUNCTION @extschema@.webhook_status_rank(status text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE status
  WHEN 'CREATED' THEN 1
  WHEN 'PENDING' THEN 2
  WHEN 'DEFERRED' THEN 2
  WHEN 'ACTIVE' THEN 3
  WHEN 'EXPIRED' THEN 4
  WHEN 'REFUNDED' THEN 5
  WHEN 'FAILED' THEN 2
  WHEN 'SUCCESS' THEN 3
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
  OUT last_error text,
  OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_webhook_status'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.webhook_status()
IS 'state, address and counters of the webhook worker (since stats_reset, when it last started)';

REVOKE ALL ON FUNCTION @extschema@.webhook_status() FROM PUBLIC;
-- monitoring roles read the worker's state as they read pg_stat_activity
GRANT EXECUTE ON FUNCTION @extschema@.webhook_status() TO pg_monitor;

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

-- from sql/install/50_estimates.sql
-- 50_estimates.sql: row estimates learned from complete scans
-- (src/shmem/estimates.c, docs/estimates.md)


CREATE FUNCTION @extschema@.estimates(
    OUT dbid pg_catalog.oid,
    OUT serverid pg_catalog.oid,
    OUT route pg_catalog.text,
    OUT kind pg_catalog.text,
    OUT columns pg_catalog.text,
    OUT key pg_catalog.text,
    OUT rows pg_catalog.float8,
    OUT scans pg_catalog.int8,
    OUT last_rows pg_catalog.int8,
    OUT last_scan pg_catalog.timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_est_entries'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.estimates AS
  SELECT s.srvname AS server, e.route, e.kind, e.columns, e.key, e.rows,
         e.scans, e.last_rows, e.last_scan, e.dbid, e.serverid
  FROM @extschema@.estimates() e
  LEFT JOIN pg_catalog.pg_foreign_server s
    ON s.oid = e.serverid
   AND e.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                 WHERE d.datname = pg_catalog.current_database());

COMMENT ON VIEW @extschema@.estimates
IS 'row estimates learned from complete scans, per server, list route and key value, and their average per route';

CREATE FUNCTION @extschema@.estimates_reset(server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'psvc_est_reset'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.estimates_reset(pg_catalog.name)
IS 'forgets the learned row estimates of one server of this database, or with NULL of every server';

GRANT SELECT ON @extschema@.estimates TO PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.estimates_reset(pg_catalog.name) FROM PUBLIC;

-- from sql/install/55_requests.sql
-- 55_requests.sql: the requests in flight of every backend, as
-- pg_stat_activity shows its queries (src/shmem/inflight.c,
-- docs/ratelimit.md#requests-in-flight)


CREATE FUNCTION @extschema@.requests(
    OUT pid pg_catalog.int4,
    OUT dbid pg_catalog.oid,
    OUT server pg_catalog.text,
    OUT route pg_catalog.text,
    OUT state pg_catalog.text,
    OUT started pg_catalog.timestamptz,
    OUT bytes pg_catalog.int8,
    OUT request pg_catalog.text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'psvc_inflight_requests'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW @extschema@.requests AS
  SELECT r.pid, d.datname AS database, r.server, r.route, r.state,
         r.started, r.bytes, r.request
  FROM @extschema@.requests() r
  LEFT JOIN pg_catalog.pg_database d ON d.oid = r.dbid;

COMMENT ON VIEW @extschema@.requests
IS 'the requests in flight of every backend: server, route template, state (waiting for budget, sending, receiving, backing off), start and bytes of the current attempt; the request''s path and query only for superusers and pg_read_all_stats';

GRANT SELECT ON @extschema@.requests TO PUBLIC;

-- from sql/install/60_deferred.sql
-- 60_deferred.sql: deferred calls, sent after COMMIT by the senders
-- (src/deferred/, docs/deferred-calls.md)


-- The cluster and database a call was queued in: '<system identifier>/<database oid>'.
CREATE FUNCTION @extschema@.deferred_origin()
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_deferred_origin'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE SEQUENCE @extschema@.deferred_queue_id_seq;

-- The queue.  Written by defer() (as the extension's owner) and by the
-- senders; read through the view deferred_calls.  role is the queuing
-- role by its OID (regrole: shown by its current name, or as the bare OID
-- once the role is dropped): a renamed role keeps its calls, a dropped
-- role's calls fail and are never sent as another role of the same name;
-- a dump writes the name and a restore looks it up (docs/privileges.md).
CREATE TABLE @extschema@.deferred_queue (
    id pg_catalog.int8 PRIMARY KEY
        DEFAULT pg_catalog.nextval('@extschema@.deferred_queue_id_seq'),
    operation pg_catalog.text NOT NULL,
    args pg_catalog.jsonb NOT NULL,
    server pg_catalog.name,
    role pg_catalog.regrole NOT NULL,
    lanes pg_catalog.text[] NOT NULL,
    state pg_catalog.text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'sending', 'done', 'failed')),
    attempts pg_catalog.int4 NOT NULL DEFAULT 0,
    next_attempt_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now(),
    sender pg_catalog.int4,
    sent_at pg_catalog.timestamptz,
    checkpoint pg_catalog.jsonb,
    answer pg_catalog.jsonb,
    sqlstate pg_catalog.text,
    message pg_catalog.text,
    detail pg_catalog.text,
    hint pg_catalog.text,
    created_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now(),
    done_at pg_catalog.timestamptz,
    origin pg_catalog.text NOT NULL DEFAULT @extschema@.deferred_origin()
);
ALTER SEQUENCE @extschema@.deferred_queue_id_seq OWNED BY @extschema@.deferred_queue.id;

CREATE INDEX deferred_queue_unfinished ON @extschema@.deferred_queue (id)
  WHERE state IN ('queued', 'sending');
CREATE INDEX deferred_queue_done_at ON @extschema@.deferred_queue (done_at)
  WHERE done_at IS NOT NULL;

COMMENT ON TABLE @extschema@.deferred_queue
IS 'deferred calls of partner_svc (read them through the view deferred_calls)';

-- pg_dump keeps the queue and its sequence; a restored queue is held by
-- its origin (docs/backups.md)
SELECT pg_catalog.pg_extension_config_dump('@extschema@.deferred_queue', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.deferred_queue_id_seq', '');

CREATE VIEW @extschema@.deferred_calls WITH (security_barrier) AS
  SELECT q.id, q.operation, q.args, q.server, q.role, q.state, q.attempts,
         q.next_attempt_at, q.answer, q.sqlstate, q.message, q.created_at,
         q.done_at,
         q.state IN ('queued', 'sending') AND q.origin <> @extschema@.deferred_origin() AS held
  FROM @extschema@.deferred_queue q
  WHERE q.role OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles r
                                        WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
     OR pg_catalog.pg_has_role(CURRENT_USER, 'pg_read_all_stats', 'USAGE');

COMMENT ON VIEW @extschema@.deferred_calls
IS 'deferred calls: one row per call (a role sees its own; superusers and pg_read_all_stats all)';

GRANT SELECT ON @extschema@.deferred_calls TO PUBLIC;

CREATE FUNCTION @extschema@.defer(operation pg_catalog.text,
    args pg_catalog.jsonb DEFAULT '{}', server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'psvc_deferred_defer'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.defer(pg_catalog.text, pg_catalog.jsonb, pg_catalog.name)
IS 'queues a call of a function that changes state at a partner, sent once after COMMIT; returns its id';

CREATE FUNCTION @extschema@.deferred_result(id pg_catalog.int8,
    wait pg_catalog.interval DEFAULT '0')
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_deferred_result'
LANGUAGE C VOLATILE STRICT;

COMMENT ON FUNCTION @extschema@.deferred_result(pg_catalog.int8, pg_catalog.interval)
IS 'the answer of a deferred call, or its error raised; waits up to wait for it to finish';

-- Held calls (queued in another cluster or database, restored from a
-- dump): released to be sent here, or cancelled.  Superusers decide.
CREATE FUNCTION @extschema@.deferred_release(ids pg_catalog.int8[] DEFAULT NULL)
RETURNS pg_catalog.int8
LANGUAGE sql VOLATILE
AS $$
  WITH r AS (
    UPDATE @extschema@.deferred_queue
       SET origin = @extschema@.deferred_origin(), next_attempt_at = pg_catalog.now(),
           sender = NULL
     WHERE origin <> @extschema@.deferred_origin()
       AND state IN ('queued', 'sending')
       AND (ids IS NULL OR id = ANY (ids))
    RETURNING 1)
  SELECT pg_catalog.count(*) FROM r
$$;

CREATE FUNCTION @extschema@.deferred_cancel(ids pg_catalog.int8[] DEFAULT NULL)
RETURNS pg_catalog.int8
LANGUAGE sql VOLATILE
AS $$
  WITH r AS (
    UPDATE @extschema@.deferred_queue
       SET state = 'failed', sqlstate = '57014',
           message = 'deferred call cancelled by deferred_cancel()',
           detail = NULL, hint = NULL, done_at = pg_catalog.now()
     WHERE origin <> @extschema@.deferred_origin()
       AND state IN ('queued', 'sending')
       AND (ids IS NULL OR id = ANY (ids))
    RETURNING 1)
  SELECT pg_catalog.count(*) FROM r
$$;

REVOKE ALL ON FUNCTION @extschema@.deferred_release(pg_catalog.int8[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.deferred_cancel(pg_catalog.int8[]) FROM PUBLIC;

COMMENT ON FUNCTION @extschema@.deferred_release(pg_catalog.int8[])
IS 'lets the senders send held deferred calls (restored from another cluster or database); returns how many';
COMMENT ON FUNCTION @extschema@.deferred_cancel(pg_catalog.int8[])
IS 'marks held deferred calls failed without sending them; returns how many';
