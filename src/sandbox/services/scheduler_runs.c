/*-------------------------------------------------------------------------
 * scheduler_runs.c
 *	  Scheduler sandbox: executions (run, stop, the execution summary),
 *	  notification addresses, execution emails and the admin routes.
 *
 * Design notes:
 *
 * - A run creates an execution RUNNING and a timer for
 *   scheduler.run_duration_min sandbox minutes.  The timer's argument is
 *   no pointer but the execution id and the reset generation packed into
 *   the pointer's bits: nothing is allocated (a reset drops pending
 *   timers without running them), and a job deleted, an execution stopped
 *   or a sandbox reset in between makes the timer find nothing to do.
 * - The outcome is decided when the timer fires: FAILED when the job's
 *   name contains "fail" (any case), else FAILED with probability
 *   scheduler.fail_rate (seeded stream), else SUCCESS.
 * - Emails are not sent anywhere: GET /api/email/jobExecution/{id}
 *   records one, and GET /_sandbox/scheduler/emails shows them.
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scheduler_int.h"

#define SCHED_EXEC_BASE		INT64_C(1000000000)

/* timer argument: generation (low 20 bits) << 40 | execution id */
#define TIMER_ID_BITS	40

_Static_assert(sizeof(void *) >= 8, "timer arguments need 64-bit pointers");
_Static_assert((SB_MAX_PARTNERS + 1) * SCHED_EXEC_BASE < (INT64_C(1) << TIMER_ID_BITS),
			   "execution ids must fit the timer argument");

static void *
timer_arg(int64_t exec_id)
{
	uint64_t	gen = sb_sched_generation & 0xFFFFF;

	return (void *) (uintptr_t) ((gen << TIMER_ID_BITS) | (uint64_t) exec_id);
}

/*
 * Ends a running execution with status (SUCCESS or FAILED) and error
 * (NULL on success), and carries the outcome over to its job: status
 * (unless another execution still runs), jobDuration, jobErrorDetails
 * (set on failure, cleared on success) and jobStatusDetails.
 */
static void
exec_finish(sb_sched_partner *sp, sb_sched_exec *e, sb_sched_status status,
			const char *error)
{
	sb_sched_job *j = sb_sched_job_lookup(sp, e->job_id);
	bool		others = false;

	e->status = status;
	e->end_ms = sb_sandbox_now_ms();
	e->end_at = sb_wall_ms();
	free(e->error);
	e->error = sb_sched_strdup(error);
	if (j == NULL)
		return;
	for (int i = 0; i < sp->execs.n; i++)
	{
		sb_sched_exec *o = sp->execs.v[i];

		if (o->job_id == j->id && o->status == SB_SCHED_RUNNING)
			others = true;
	}
	j->status = others ? SB_SCHED_RUNNING : status;
	j->duration_ms = e->end_ms - e->start_ms;
	if (status == SB_SCHED_FAILED)
	{
		sb_sched_set_text(&j->error_details, "%s", error);
		sb_sched_set_text(&j->status_details, "execution %" PRId64 " failed: %s",
						  e->id, error);
	}
	else
	{
		free(j->error_details);
		j->error_details = NULL;
		sb_sched_set_text(&j->status_details, "execution %" PRId64 " succeeded",
						  e->id);
	}
}

/* Timer: the end of an execution's run time decides its outcome. */
static void
sched_exec_due(void *arg)
{
	uint64_t	v = (uint64_t) (uintptr_t) arg;
	int64_t		exec_id = (int64_t) (v & ((UINT64_C(1) << TIMER_ID_BITS) - 1));
	int			partner = (int) (exec_id / SCHED_EXEC_BASE) - 1;
	sb_sched_partner *sp;
	sb_sched_exec *e;
	sb_sched_job *j;

	if ((v >> TIMER_ID_BITS) != (sb_sched_generation & 0xFFFFF) ||
		partner < 0 || partner >= SB_MAX_PARTNERS)
		return;
	sp = &sb_sched_state[partner];
	if ((e = sb_sched_exec_lookup(sp, exec_id)) == NULL ||
		e->status != SB_SCHED_RUNNING)
		return;
	j = sb_sched_job_lookup(sp, e->job_id);
	if (j != NULL && strcasestr(j->name, "fail") != NULL)
		exec_finish(sp, e, SB_SCHED_FAILED,
					"simulated failure: the job name contains \"fail\"");
	else if (sb_sched_fail_rate > 0 && sb_rand01() < sb_sched_fail_rate)
		exec_finish(sp, e, SB_SCHED_FAILED,
					"simulated failure (scheduler.fail_rate)");
	else
		exec_finish(sp, e, SB_SCHED_SUCCESS, NULL);
}

/*
 * GET /api/user-jobs/run/{jobId}: starts an execution now, also for a
 * paused job (pause only stops the schedule); answers it RUNNING.
 */
void
sb_sched_job_run(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	sb_sched_job *j;
	sb_sched_exec *e;

	if (sp == NULL || (j = sb_sched_job_or_404(sp, req, resp, "jobId")) == NULL)
		return;
	e = calloc(1, sizeof(*e));
	if (e == NULL || !sb_sched_vec_push(&sp->execs, e))
	{
		free(e);
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		return;
	}
	e->id = (sp->index + 1) * SCHED_EXEC_BASE + ++sp->next_exec;
	e->job_id = j->id;
	e->status = SB_SCHED_RUNNING;
	e->start_ms = sb_sandbox_now_ms();
	e->end_ms = -1;
	e->start_at = sb_wall_ms();
	e->end_at = -1;
	j->status = SB_SCHED_RUNNING;
	j->last_run_at = e->start_at;
	sb_sched_set_text(&j->status_details, "execution %" PRId64 " started", e->id);
	sb_timer_add(sb_sched_run_duration_min * SB_MINUTE, sched_exec_due,
				 timer_arg(e->id));
	resp->applied = true;
	sb_reply_json(resp, 200, sb_sched_exec_json(e));
}

/*
 * GET /api/user-jobs/stop/{jobId}: every RUNNING execution of the job
 * ends FAILED with errorMessage "stopped"; 200 empty, also when none ran.
 */
void
sb_sched_job_stop(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	sb_sched_job *j;

	if (sp == NULL || (j = sb_sched_job_or_404(sp, req, resp, "jobId")) == NULL)
		return;
	for (int i = 0; i < sp->execs.n; i++)
	{
		sb_sched_exec *e = sp->execs.v[i];

		if (e->job_id == j->id && e->status == SB_SCHED_RUNNING)
		{
			exec_finish(sp, e, SB_SCHED_FAILED, "stopped");
			resp->applied = true;
		}
	}
	sb_reply_empty(resp, 200);
}

/*
 * GET /api/user-jobs/user-job-executions/{jobId}: the last 15 executions,
 * newest first; the totals count those 15 (the summary's scope), RUNNING
 * ones only in totalExecutions.
 */
void
sb_sched_job_summary(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	sb_sched_job *j;
	json_t	   *arr;
	int			total = 0;
	int			ok = 0;
	int			failed = 0;

	if (sp == NULL || (j = sb_sched_job_or_404(sp, req, resp, "jobId")) == NULL)
		return;
	arr = json_array();
	for (int i = sp->execs.n - 1; i >= 0 && total < SB_SCHED_SUMMARY_MAX; i--)
	{
		sb_sched_exec *e = sp->execs.v[i];

		if (e->job_id != j->id)
			continue;
		total++;
		ok += (e->status == SB_SCHED_SUCCESS);
		failed += (e->status == SB_SCHED_FAILED);
		json_array_append_new(arr, sb_sched_exec_json(e));
	}
	sb_reply_json(resp, 200,
				  json_pack("{s:I, s:s, s:o, s:i, s:i, s:i}",
							"jobId", (json_int_t) j->id,
							"jobName", j->name,
							"executions", arr,
							"totalExecutions", total,
							"successfulExecutions", ok,
							"failedExecutions", failed));
}

/* ---------- notifications ---------- */

/*
 * Email address check of the notification list: local@domain, at most
 * 254 bytes; local part of letters, digits and !#$%&'*+/=?^_`{|}~-
 * with single inner dots; domain of at least two dot-separated labels
 * (1..63 letters, digits, inner hyphens), the last of 2+ letters.
 */
static bool
email_valid(const char *s)
{
	const char *at = strchr(s, '@');
	const char *p;
	const char *label;
	bool		alpha_tld = true;
	int			labels = 0;

	if (at == NULL || at == s || strlen(s) > 254 || strchr(at + 1, '@') != NULL)
		return false;
	for (p = s; p < at; p++)
	{
		if (*p == '.')
		{
			if (p == s || p + 1 == at || p[1] == '.')
				return false;
		}
		else if (!isalnum((unsigned char) *p) &&
				 strchr("!#$%&'*+/=?^_`{|}~-", *p) == NULL)
			return false;
	}
	label = at + 1;
	for (p = label;; p++)
	{
		if (*p == '.' || *p == '\0')
		{
			if (p == label || label[0] == '-' || p[-1] == '-' || p - label > 63)
				return false;
			labels++;
			if (*p == '\0')
				break;
			label = p + 1;
			alpha_tld = true;
		}
		else if (isdigit((unsigned char) *p) || *p == '-')
			alpha_tld = false;
		else if (!isalpha((unsigned char) *p))
			return false;
	}
	return labels >= 2 && alpha_tld && p - label >= 2;
}

/* GET /api/notifications: the partner's addresses, in insertion order. */
void
sb_sched_notif_list(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	json_t	   *arr;

	if (sp == NULL)
		return;
	arr = json_array();
	for (int i = 0; i < sp->notif.n; i++)
		json_array_append_new(arr, json_string(sp->notif.v[i]));
	sb_reply_json(resp, 200, arr);
}

/*
 * The address in a POST /api/notifications body: a JSON string when the
 * trimmed body starts with '"', else the trimmed body itself (any
 * Content-Type).  Malloc'd; NULL after replying 400 (or 507).
 */
static char *
notif_body(sb_request *req, sb_response *resp)
{
	const char *b = req->body;
	const char *e = req->body + req->body_len;
	char	   *addr;

	while (b < e && isspace((unsigned char) *b))
		b++;
	while (e > b && isspace((unsigned char) e[-1]))
		e--;
	if (b < e && *b == '"')
	{
		json_error_t err;
		json_t	   *doc = json_loadb(b, e - b, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

		if (doc == NULL || !json_is_string(doc))
		{
			json_decref(doc);
			sb_reply_error(req, resp, 400, "invalid_request",
						   "body must be a JSON string holding an email address");
			return NULL;
		}
		if (strlen(json_string_value(doc)) != json_string_length(doc))
		{
			json_decref(doc);
			sb_reply_error(req, resp, 400, "invalid_email",
						   "an email address cannot contain NUL");
			return NULL;
		}
		addr = strdup(json_string_value(doc));
		json_decref(doc);
	}
	else if (memchr(b, '\0', e - b) != NULL)
	{
		sb_reply_error(req, resp, 400, "invalid_email",
					   "an email address cannot contain NUL");
		return NULL;
	}
	else
		addr = strndup(b, e - b);
	if (addr == NULL)
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
	return addr;
}

/*
 * POST /api/notifications: validates the address (400 invalid_email),
 * adds it unless already present (compared case-insensitively, so
 * repeating is harmless) and echoes it as a JSON string, 200.
 */
void
sb_sched_notif_add(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	char	   *addr;

	if (sp == NULL || (addr = notif_body(req, resp)) == NULL)
		return;
	if (!email_valid(addr))
	{
		sb_reply_error(req, resp, 400, "invalid_email",
					   "\"%.200s\" is not a valid email address", addr);
		free(addr);
		return;
	}
	for (int i = 0; i < sp->notif.n; i++)
	{
		if (strcasecmp(sp->notif.v[i], addr) == 0)
		{
			sb_reply_json(resp, 200, json_string(addr));
			free(addr);
			return;
		}
	}
	if (!sb_sched_vec_push(&sp->notif, addr))
	{
		free(addr);
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		return;
	}
	resp->applied = true;
	sb_reply_json(resp, 200, json_string(addr));
}

/* ---------- emails and admin ---------- */

/*
 * GET /api/email/jobExecution/{id}: "sends" the execution's email to the
 * notification addresses, i.e. records it; 200 empty, 404 for an
 * execution the partner does not have.
 */
void
sb_sched_email_execution(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	int64_t		id;
	sb_sched_exec *e;
	sb_sched_job *j;
	json_t	   *to;
	char		subject[400];

	if (sp == NULL || !sb_sched_id_param(req, resp, "id", &id))
		return;
	e = sb_sched_exec_lookup(sp, id);
	if (e == NULL)
	{
		sb_reply_error(req, resp, 404, "execution_not_found",
					   "job execution %" PRId64 " does not exist", id);
		return;
	}
	j = sb_sched_job_lookup(sp, e->job_id);
	to = json_array();
	for (int i = 0; i < sp->notif.n; i++)
		json_array_append_new(to, json_string(sp->notif.v[i]));
	snprintf(subject, sizeof(subject), "Job \"%.300s\" execution %" PRId64 ": %s",
			 j ? j->name : "?", e->id, sb_sched_status_name(e->status));
	json_array_append_new(sp->emails,
						  json_pack("{s:I, s:I, s:I, s:s?, s:s, s:o, s:s, s:o}",
									"id", (json_int_t) json_array_size(sp->emails) + 1,
									"executionId", (json_int_t) e->id,
									"jobId", (json_int_t) e->job_id,
									"jobName", j ? j->name : NULL,
									"executionStatus", sb_sched_status_name(e->status),
									"to", to,
									"subject", subject,
									"sentAt", sb_sched_time_json(sb_wall_ms())));
	resp->applied = true;
	sb_reply_empty(resp, 200);
}

/* GET /_sandbox/scheduler/emails (admin, keyed): the partner's emails. */
void
sb_sched_admin_emails(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);

	if (sp != NULL)
		sb_reply_json(resp, 200, json_deep_copy(sp->emails));
}

/* GET /_sandbox/scheduler/tokens (admin, keyed): {"<jobId>": token}. */
void
sb_sched_admin_tokens(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	json_t	   *o;

	if (sp == NULL)
		return;
	o = json_object();
	for (int i = 0; i < sp->jobs.n; i++)
	{
		sb_sched_job *j = sp->jobs.v[i];
		char		key[32];

		snprintf(key, sizeof(key), "%" PRId64, j->id);
		json_object_set_new(o, key, json_string(j->token));
	}
	sb_reply_json(resp, 200, o);
}
