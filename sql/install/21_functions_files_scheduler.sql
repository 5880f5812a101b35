-- 21_functions_files_scheduler.sql: SQL functions of the files and the
-- scheduler services (src/functions/functions_files.c, src/functions/functions_scheduler.c;
-- docs/functions-files-scheduler.md).  Each takes the server last; NULL
-- means the one server of the service.  A NULL main argument gives NULL
-- and sends nothing.

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

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
