/*-------------------------------------------------------------------------
 *
 * functions_scheduler.c
 *		  SQL functions of the job scheduler: save a job, run, stop, pause,
 *		  activate, clone, sync its token, delete it, read the summary of
 *		  its executions, and send the email of an execution.
 *
 * The operations on a job id are one table, sched_ops[]: method, route,
 * whether the request changes state, and what the answer becomes (jsonb,
 * nothing, or the newJobId of {"newJobId": N}).  Each SQL function is one
 * line that names its row.
 *
 * The scheduler changes state with GET requests (run, stop, pause,
 * activate, clone, sync-token, the execution email).  Repeating one is not
 * harmless: a second run starts a second execution, a second clone makes a
 * second job, a second email is a second email.  Those rows are marked
 * unsafe, which makes http.c treat them like a POST: retried only on 429
 * and when no connection could be made, never after a 5xx, a timeout or a
 * lost connection (that error says the outcome is unknown).  The plain
 * reads (the execution summary) are retried as any GET.  PUT (save) and
 * DELETE are never repeated by http.c either.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions_scheduler.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "functions.h"

PG_FUNCTION_INFO_V1(psvc_scheduler_save_job);
PG_FUNCTION_INFO_V1(psvc_scheduler_run_job);
PG_FUNCTION_INFO_V1(psvc_scheduler_stop_job);
PG_FUNCTION_INFO_V1(psvc_scheduler_pause_job);
PG_FUNCTION_INFO_V1(psvc_scheduler_activate_job);
PG_FUNCTION_INFO_V1(psvc_scheduler_clone_job);
PG_FUNCTION_INFO_V1(psvc_scheduler_sync_job_token);
PG_FUNCTION_INFO_V1(psvc_scheduler_delete_job);
PG_FUNCTION_INFO_V1(psvc_scheduler_job_execution_summary);
PG_FUNCTION_INFO_V1(psvc_scheduler_send_execution_email);

/* What the answer of an operation becomes. */
typedef enum SchedResult
{
	SCHED_JSONB,				/* the body, as jsonb */
	SCHED_VOID,					/* nothing (the body is empty) */
	SCHED_NEW_JOB_ID			/* bigint newJobId of {"newJobId": N} */
} SchedResult;

/* One operation on a job or execution id. */
typedef struct SchedOp
{
	const char *method;
	const char *route;			/* one {name}: the id argument */
	const char *param;			/* that name */
	bool		unsafe;			/* changes state: never repeat */
	SchedResult result;
} SchedOp;

enum
{
	OP_RUN, OP_STOP, OP_PAUSE, OP_ACTIVATE, OP_CLONE, OP_SYNC_TOKEN,
	OP_DELETE, OP_SUMMARY, OP_EMAIL
};

static const SchedOp sched_ops[] = {
	[OP_RUN] = {"GET", "/api/user-jobs/run/{jobId}", "jobId", true, SCHED_JSONB},
	[OP_STOP] = {"GET", "/api/user-jobs/stop/{jobId}", "jobId", true, SCHED_VOID},
	[OP_PAUSE] = {"GET", "/api/user-jobs/pause/{jobId}", "jobId", true, SCHED_VOID},
	[OP_ACTIVATE] = {"GET", "/api/user-jobs/activate/{jobId}", "jobId", true, SCHED_VOID},
	[OP_CLONE] = {"GET", "/api/user-jobs/clone/{jobId}", "jobId", true, SCHED_NEW_JOB_ID},
	[OP_SYNC_TOKEN] = {"GET", "/api/user-jobs/sync-token/{jobId}", "jobId", true, SCHED_NEW_JOB_ID},
	[OP_DELETE] = {"DELETE", "/api/user-jobs/{id}", "id", false, SCHED_VOID},
	[OP_SUMMARY] = {"GET", "/api/user-jobs/user-job-executions/{jobId}", "jobId", false, SCHED_JSONB},
	[OP_EMAIL] = {"GET", "/api/email/jobExecution/{id}", "id", true, SCHED_VOID},
};

/* The bigint newJobId of an answer {"newJobId": N}. */
static int64
new_job_id(Jsonb *answer, const SchedOp *op)
{
	JsonbValue *v = NULL;

	if (answer != NULL && JB_ROOT_IS_OBJECT(answer))
		v = getKeyJsonValueFromContainer(&answer->root, "newJobId", 8, NULL);
	if (v == NULL || v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("response of %s %s has no numeric \"newJobId\"",
						op->method, op->route),
				 errdetail("An object {\"newJobId\": N} was expected.")));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8,
											 NumericGetDatum(v->val.numeric)));
}

/*
 * Runs operation op on the id in argument 0, with the server of argument
 * 1.  A NULL id sends nothing and returns NULL.  Errors as http.c maps
 * them (an unknown id is P0002).
 */
static Datum
sched_call(FunctionCallInfo fcinfo, int opno)
{
	const SchedOp *op = &sched_ops[opno];
	PsvcHttpRequest req = {0};
	Jsonb	   *answer;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();

	req.server = psvc_fn_server("scheduler", fcinfo, 1);
	req.method = op->method;
	req.route = op->route;
	req.path_params = list_make1(psvc_kv(op->param,
										 psprintf(INT64_FORMAT, PG_GETARG_INT64(0))));
	req.unsafe = op->unsafe;
	answer = psvc_fn_call(&req, false);

	switch (op->result)
	{
		case SCHED_JSONB:
			if (answer == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_ERROR),
						 errmsg("response of %s %s is empty", op->method, op->route),
						 errdetail("A JSON object was expected.")));
			PG_RETURN_JSONB_P(answer);
		case SCHED_NEW_JOB_ID:
			PG_RETURN_INT64(new_job_id(answer, op));
		case SCHED_VOID:
			break;
	}
	PG_RETURN_VOID();
}

/*
 * save_job(job jsonb, server name DEFAULT NULL) RETURNS jsonb
 *
 * PUT /api/user-jobs: creates the job (no "id") or replaces it (with
 * "id"); returns the UserJob as stored.
 */
Datum
psvc_scheduler_save_job(PG_FUNCTION_ARGS)
{
	PsvcHttpRequest req = {0};
	Jsonb	   *job;
	Jsonb	   *answer;
	char	   *body;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	job = PG_GETARG_JSONB_P(0);
	if (!JB_ROOT_IS_OBJECT(job) || JB_ROOT_IS_SCALAR(job))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("job must be a JSON object"),
				 errhint("Pass the UserJob fields, e.g. '{\"name\": ..., \"isActive\": true, \"timeZone\": \"UTC\", \"jobCronExpression\": \"0 0 6 * * *\"}'.")));

	req.server = psvc_fn_server("scheduler", fcinfo, 1);
	req.method = "PUT";
	req.route = "/api/user-jobs";
	body = JsonbToCString(NULL, &job->root, VARSIZE(job));
	req.body = body;
	req.body_len = strlen(body);
	req.content_type = "application/json";
	answer = psvc_fn_call(&req, false);
	if (answer == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("response of PUT /api/user-jobs is empty"),
				 errdetail("The saved UserJob was expected.")));
	PG_RETURN_JSONB_P(answer);
}

/* run_job(job_id bigint, server name DEFAULT NULL) RETURNS jsonb (Execution) */
Datum
psvc_scheduler_run_job(PG_FUNCTION_ARGS)
{
	return sched_call(fcinfo, OP_RUN);
}

/* stop_job(job_id bigint, server name DEFAULT NULL) RETURNS void */
Datum
psvc_scheduler_stop_job(PG_FUNCTION_ARGS)
{
	return sched_call(fcinfo, OP_STOP);
}

/* pause_job(job_id bigint, server name DEFAULT NULL) RETURNS void */
Datum
psvc_scheduler_pause_job(PG_FUNCTION_ARGS)
{
	return sched_call(fcinfo, OP_PAUSE);
}

/* activate_job(job_id bigint, server name DEFAULT NULL) RETURNS void */
Datum
psvc_scheduler_activate_job(PG_FUNCTION_ARGS)
{
	return sched_call(fcinfo, OP_ACTIVATE);
}

/* clone_job(job_id bigint, server name DEFAULT NULL) RETURNS bigint (newJobId) */
Datum
psvc_scheduler_clone_job(PG_FUNCTION_ARGS)
{
	return sched_call(fcinfo, OP_CLONE);
}

/* sync_job_token(job_id bigint, server name DEFAULT NULL) RETURNS bigint (newJobId) */
Datum
psvc_scheduler_sync_job_token(PG_FUNCTION_ARGS)
{
	return sched_call(fcinfo, OP_SYNC_TOKEN);
}

/* delete_job(job_id bigint, server name DEFAULT NULL) RETURNS void */
Datum
psvc_scheduler_delete_job(PG_FUNCTION_ARGS)
{
	return sched_call(fcinfo, OP_DELETE);
}

/* job_execution_summary(job_id bigint, server name DEFAULT NULL) RETURNS jsonb */
Datum
psvc_scheduler_job_execution_summary(PG_FUNCTION_ARGS)
{
	return sched_call(fcinfo, OP_SUMMARY);
}

/* send_execution_email(execution_id bigint, server name DEFAULT NULL) RETURNS void */
Datum
psvc_scheduler_send_execution_email(PG_FUNCTION_ARGS)
{
	return sched_call(fcinfo, OP_EMAIL);
}
