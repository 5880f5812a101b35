-- func_scheduler: the scheduler functions: save, run, stop, pause,
-- activate, clone, sync the token, delete, the execution summary and
-- email; what each sends; and that the state-changing GETs are never
-- repeated after a failure whose outcome is unknown.  Ids the service
-- assigns are kept in variables and never printed.
SET search_path = public;
CALL sandbox.clear_faults();

-- an admin route's JSON answer
CREATE FUNCTION pg_temp.admin(path text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT string_agg(l, '')::jsonb FROM sandbox.call('GET', path, NULL, 'sandbox-key') AS l
$$;

--
-- save_job: PUT /api/user-jobs creates a job without "id", replaces one with it
--
CALL sandbox.reset_stats();
SELECT partner_svc.save_job('{"name": "Nightly export", "isActive": true, "timeZone": "UTC",
  "jobCronExpression": "0 0 1 * * *", "jobRunFrequency": "DAILY"}') AS job \gset
SELECT j ->> 'name' AS name, j ->> 'status' AS status, j -> 'isActive' AS active,
       j ->> 'jobRunFrequency' AS frequency, (j ->> 'id')::bigint > 1000002 AS new_id
FROM (SELECT :'job'::jsonb AS j) AS s;
SELECT (:'job'::jsonb ->> 'id')::bigint AS job_id \gset
SELECT j ->> 'name' AS name, j -> 'jobRunFrequency' AS frequency, (j ->> 'id')::bigint = :job_id AS same_id
FROM partner_svc.save_job(jsonb_build_object('id', :job_id, 'name', 'Nightly export v2',
  'isActive', true, 'timeZone', 'Europe/Berlin', 'jobCronExpression', '0 0 2 * * *'), 'scheduler') AS j;
SELECT name, time_zone, job_cron_expression, status FROM user_jobs WHERE id = :job_id;
SELECT method, route, status FROM sandbox.requests();

--
-- run (twice: executions run side by side), summary, stop
--
CALL sandbox.reset_stats();
SELECT e ->> 'status' AS status, (e ->> 'jobId')::bigint = :job_id AS of_job, e -> 'endTime' AS end_time
FROM partner_svc.run_job(:job_id) AS e;
SELECT (partner_svc.run_job(:job_id) ->> 'id')::bigint AS exec_id \gset
SELECT s ->> 'jobName' AS job_name, s -> 'totalExecutions' AS total,
       s -> 'successfulExecutions' AS succeeded, s -> 'failedExecutions' AS failed,
       jsonb_array_length(s -> 'executions') AS listed,
       (s -> 'executions' -> 0 ->> 'id')::bigint = :exec_id AS newest_first
FROM partner_svc.job_execution_summary(:job_id) AS s;
SELECT status FROM user_jobs WHERE id = :job_id;
SELECT partner_svc.stop_job(:job_id);
SELECT status, error_message, count(*) FROM job_executions WHERE job_id = :job_id GROUP BY 1, 2;
SELECT method, route, path = replace(route, '{jobId}', :'job_id') AS this_job, status
FROM sandbox.requests();

--
-- pause and activate
--
CALL sandbox.reset_stats();
SELECT partner_svc.pause_job(:job_id);
SELECT is_active, next_run IS NULL AS no_next_run FROM user_jobs WHERE id = :job_id;
SELECT partner_svc.activate_job(:job_id);
SELECT is_active, next_run IS NULL AS no_next_run FROM user_jobs WHERE id = :job_id;
SELECT method, route, status FROM sandbox.requests();

--
-- clone: a new job of the same settings; sync-token: this job's token
-- copied to every other job (the answer's newJobId is the job itself)
--
CALL sandbox.reset_stats();
SELECT partner_svc.clone_job(:job_id) AS clone_id \gset
SELECT :clone_id <> :job_id AS new_job;
SELECT c.name = j.name AS same_name, c.job_cron_expression = j.job_cron_expression AS same_cron,
       c.status AS clone_status
FROM user_jobs c, user_jobs j WHERE c.id = :clone_id AND j.id = :job_id;
SELECT count(DISTINCT value) > 1 AS several_tokens FROM jsonb_each_text(pg_temp.admin('/_sandbox/scheduler/tokens'));
SELECT partner_svc.sync_job_token(:job_id) = :job_id AS answers_job_id;
SELECT count(DISTINCT value) AS tokens,
       bool_and(value = pg_temp.admin('/_sandbox/scheduler/tokens') ->> :'job_id') AS all_this_jobs
FROM jsonb_each_text(pg_temp.admin('/_sandbox/scheduler/tokens'));
SELECT method, route, status FROM sandbox.requests();

--
-- the email of an execution is recorded by the sandbox
--
CALL sandbox.reset_stats();
SELECT partner_svc.send_execution_email(:exec_id);
SELECT e ->> 'jobName' AS job_name, e ->> 'executionStatus' AS status, jsonb_typeof(e -> 'to') AS recipients
FROM jsonb_array_elements(pg_temp.admin('/_sandbox/scheduler/emails')) AS e
WHERE (e ->> 'executionId')::bigint = :exec_id;
SELECT method, route, status FROM sandbox.requests();

--
-- delete; a job that is gone is an error (P0002), for every operation
--
CALL sandbox.reset_stats();
SELECT partner_svc.delete_job(:clone_id);
SELECT count(*) AS left FROM user_jobs WHERE id = :clone_id;
SELECT sandbox.try(format('SELECT partner_svc.delete_job(%s)', :clone_id));
SELECT sandbox.try(format('SELECT partner_svc.run_job(%s)', :clone_id));
SELECT sandbox.try(format('SELECT partner_svc.job_execution_summary(%s)', :clone_id));
SELECT sandbox.try('SELECT partner_svc.send_execution_email(1)');
SELECT method, route, status FROM sandbox.requests() WHERE route <> '/api/user-jobs/{id}' OR method <> 'GET';
\set VERBOSITY terse
SELECT partner_svc.delete_job(:clone_id);
\set VERBOSITY default

--
-- NULL and invalid arguments: nothing is sent, or the service's 400
--
CALL sandbox.reset_stats();
SELECT partner_svc.run_job(NULL) IS NULL AS run, partner_svc.save_job(NULL) IS NULL AS save,
       partner_svc.clone_job(NULL) IS NULL AS clone, partner_svc.stop_job(NULL) IS NULL AS stop;
SELECT partner_svc.save_job('[1, 2]');
SELECT partner_svc.run_job(1000001, 'todos');
SELECT partner_svc.save_job('{"name": "no cron", "isActive": true, "timeZone": "UTC"}');
SELECT method, route, status FROM sandbox.requests();

--
-- the state-changing GETs (run, clone, email, ...) are never repeated
-- after a 5xx or a lost answer: the service may have acted
--
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "GET /api/user-jobs/run/{jobId}", "kind": "error", "value": 503, "count": 1}');
SELECT sandbox.try(format('SELECT partner_svc.run_job(%s)', :job_id));
CALL sandbox.fault('{"route": "GET /api/user-jobs/clone/{jobId}", "kind": "drop_after_apply", "count": 1}');
SELECT sandbox.try(format('SELECT partner_svc.clone_job(%s)', :job_id));
CALL sandbox.fault('{"route": "GET /api/email/jobExecution/{id}", "kind": "error", "value": 500, "count": 1}');
SELECT sandbox.try(format('SELECT partner_svc.send_execution_email(%s)', :exec_id));
-- a plain read is retried
CALL sandbox.fault('{"route": "GET /api/user-jobs/user-job-executions/{jobId}", "kind": "error", "value": 503, "count": 1}');
SELECT sandbox.try(format('SELECT partner_svc.job_execution_summary(%s)', :job_id));
-- a 429 is retried for every operation: the service did nothing
CALL sandbox.fault('{"route": "GET /api/user-jobs/pause/{jobId}", "kind": "429", "count": 1}');
SELECT sandbox.try(format('SELECT partner_svc.pause_job(%s)', :job_id));
SELECT method, route, status FROM sandbox.requests();
CALL sandbox.clear_faults();
-- the clone whose answer was lost was made, once
SELECT count(*) AS clones FROM user_jobs WHERE name = 'Nightly export v2' AND id <> :job_id;

-- clean up: the jobs made here
SELECT partner_svc.delete_job(id) FROM user_jobs WHERE name = 'Nightly export v2';
SELECT count(*) AS left FROM user_jobs WHERE name LIKE 'Nightly export%';
