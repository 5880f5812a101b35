/*-------------------------------------------------------------------------
 *
 * functions_scheduler.c
 *		  SQL functions of the job scheduler: save a job, run, stop, pause,
 *		  activate, clone, sync its token, delete it, read the summary of
 *		  its executions, and send the email of an execution.
 *
 * Each function is one operation of the catalogue (catalog.c) run by the
 * executor (functions_exec.c): the row gives the route, the id argument
 * (a bigint path value), what the answer becomes (jsonb, nothing, or the
 * newJobId of {"newJobId": N}), and whether the request may be repeated.
 *
 * The scheduler changes state with GET requests (run, stop, pause,
 * activate, clone, sync-token, the execution email).  Repeating one is not
 * harmless: a second run starts a second execution, a second clone makes a
 * second job, a second email is a second email.  Those rows are not safe,
 * which makes the call module treat them like a POST: retried only on 429 and when
 * no connection could be made, never after a 5xx, a timeout or a lost
 * connection (that error says the outcome is unknown).  The plain reads
 * (the execution summary) are retried as any GET.  PUT (save) and DELETE
 * are never repeated by the call module either.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions_scheduler.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "catalog.h"
#include "functions.h"

/*
 * save_job(job jsonb, server name DEFAULT NULL) RETURNS jsonb
 * PUT /api/user-jobs: creates the job (no "id") or replaces it (with
 * "id"); returns the UserJob as stored.
 */
PSVC_OPERATION_FUNCTION(psvc_scheduler_save_job, PSVC_OP_JOB_SAVE)

/* run_job(job_id bigint, server name DEFAULT NULL) RETURNS jsonb (Execution) */
PSVC_OPERATION_FUNCTION(psvc_scheduler_run_job, PSVC_OP_JOB_RUN)

/* stop_job(job_id bigint, server name DEFAULT NULL) RETURNS void */
PSVC_OPERATION_FUNCTION(psvc_scheduler_stop_job, PSVC_OP_JOB_STOP)

/* pause_job(job_id bigint, server name DEFAULT NULL) RETURNS void */
PSVC_OPERATION_FUNCTION(psvc_scheduler_pause_job, PSVC_OP_JOB_PAUSE)

/* activate_job(job_id bigint, server name DEFAULT NULL) RETURNS void */
PSVC_OPERATION_FUNCTION(psvc_scheduler_activate_job, PSVC_OP_JOB_ACTIVATE)

/* clone_job(job_id bigint, server name DEFAULT NULL) RETURNS bigint (newJobId) */
PSVC_OPERATION_FUNCTION(psvc_scheduler_clone_job, PSVC_OP_JOB_CLONE)

/* sync_job_token(job_id bigint, server name DEFAULT NULL) RETURNS bigint (newJobId) */
PSVC_OPERATION_FUNCTION(psvc_scheduler_sync_job_token, PSVC_OP_JOB_SYNC_TOKEN)

/* delete_job(job_id bigint, server name DEFAULT NULL) RETURNS void */
PSVC_OPERATION_FUNCTION(psvc_scheduler_delete_job, PSVC_OP_JOB_DELETE)

/* job_execution_summary(job_id bigint, server name DEFAULT NULL) RETURNS jsonb */
PSVC_OPERATION_FUNCTION(psvc_scheduler_job_execution_summary, PSVC_OP_JOB_EXECUTIONS)

/* send_execution_email(execution_id bigint, server name DEFAULT NULL) RETURNS void */
PSVC_OPERATION_FUNCTION(psvc_scheduler_send_execution_email, PSVC_OP_EXECUTION_EMAIL)
