/*-------------------------------------------------------------------------
 * scheduler.c
 *	  Sandbox of docs/sandbox-files-scheduler.md: user jobs, their executions,
 *	  notification addresses and execution emails.  This file holds the
 *	  state, its JSON forms, the knobs and the route table; the handlers
 *	  are in scheduler_jobs.c and scheduler_runs.c.
 *
 * Design notes:
 *
 * - Each partner has its own jobs, executions, notification addresses
 *   and sent emails; the first request of a partner seeds two jobs.  Ids
 *   are unique across partners (jobs (p+1)*10^6 + n, executions
 *   (p+1)*10^9 + n), so one partner's id is a clean 404 for another.
 * - Jobs never run on their cron schedule: only GET /api/user-jobs/run
 *   starts an execution.  An execution is RUNNING for the knob
 *   scheduler.run_duration_min sandbox minutes, then a timer ends it
 *   SUCCESS or FAILED.  It fails when the job's name contains "fail"
 *   (any case) or, otherwise, with probability scheduler.fail_rate.
 * - The job's status follows its executions: READY until the first run,
 *   RUNNING while any execution runs, else the status of the execution
 *   that ended last.
 * - Timestamps are real wall-clock times (as everywhere in the sandbox);
 *   durations (duration, jobDuration) are sandbox ms, like every
 *   documented duration, so with --time-scale they differ from
 *   endTime - startTime.
 * - Choices the spec leaves open are listed in docs/sandbox-files-scheduler.md.
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scheduler_int.h"

#define SCHED_JOB_BASE		INT64_C(1000000)

sb_sched_partner sb_sched_state[SB_MAX_PARTNERS];
uint64_t	sb_sched_generation;	/* bumped by reset; timers compare it */
double		sb_sched_run_duration_min = 1;
double		sb_sched_fail_rate = 0;

const char *const sb_sched_frequencies[] = {
	"HOURLY", "DAILY", "WEEKLY", "MONTHLY", NULL
};

static const char *const sched_no_params[] = {NULL};

/* ---------- small helpers ---------- */

bool
sb_sched_vec_push(sb_sched_vec *vec, void *item)
{
	if (vec->n == vec->cap)
	{
		int			ncap = vec->cap ? vec->cap * 2 : 8;
		void	  **n = realloc(vec->v, ncap * sizeof(*n));

		if (n == NULL)
			return false;
		vec->v = n;
		vec->cap = ncap;
	}
	vec->v[vec->n++] = item;
	return true;
}

/* strdup that passes NULL through. */
char *
sb_sched_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Replaces a malloc'd string field with a printf-formatted copy. */
void
sb_sched_set_text(char **field, const char *fmt,...)
{
	va_list		ap;
	char	   *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	free(*field);
	*field = s;
}

/* ISO-8601 string of an epoch ms, or JSON null for -1. */
json_t *
sb_sched_time_json(int64_t epoch_ms)
{
	char		buf[40];

	if (epoch_ms < 0)
		return json_null();
	sb_iso8601(epoch_ms, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *
json_text(const char *s)
{
	return s ? json_string(s) : json_null();
}

const char *
sb_sched_status_name(sb_sched_status s)
{
	static const char *const names[] = {"READY", "RUNNING", "SUCCESS", "FAILED"};

	return names[s];
}

/*
 * Next run time (epoch ms) of an active job: the next UTC boundary of its
 * jobRunFrequency (full hour, midnight, Monday midnight, first of the
 * month).  The cron expression and time zone are not evaluated; -1 when
 * the job is paused or has no frequency.
 */
static int64_t
sched_next_run(const sb_sched_job *j)
{
	const int64_t hour = 3600000;
	const int64_t day = 24 * hour;
	int64_t		now = sb_wall_ms();
	int64_t		days = now / day;
	time_t		secs;
	struct tm	tm;

	if (!j->active || j->freq == NULL)
		return -1;
	if (strcmp(j->freq, "HOURLY") == 0)
		return (now / hour + 1) * hour;
	if (strcmp(j->freq, "DAILY") == 0)
		return (days + 1) * day;
	if (strcmp(j->freq, "WEEKLY") == 0)
		return (days + 7 - (days + 3) % 7) * day;	/* 1970-01-01 was a Thursday */
	secs = (time_t) (now / 1000);
	gmtime_r(&secs, &tm);
	tm.tm_mday = 1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_mon++;
	return (int64_t) timegm(&tm) * 1000;
}

/* ---------- state ---------- */

void
sb_sched_job_free(sb_sched_job *j)
{
	free(j->name);
	free(j->tz);
	free(j->cron);
	free(j->start_time);
	free(j->status_details);
	free(j->error_details);
	free(j);
}

void
sb_sched_exec_free(sb_sched_exec *e)
{
	free(e->error);
	free(e);
}

/* POST /_sandbox/reset: forget everything; pending timers become no-ops. */
static void
sched_reset(void)
{
	for (int p = 0; p < SB_MAX_PARTNERS; p++)
	{
		sb_sched_partner *sp = &sb_sched_state[p];

		for (int i = 0; i < sp->jobs.n; i++)
			sb_sched_job_free(sp->jobs.v[i]);
		for (int i = 0; i < sp->execs.n; i++)
			sb_sched_exec_free(sp->execs.v[i]);
		for (int i = 0; i < sp->notif.n; i++)
			free(sp->notif.v[i]);
		free(sp->jobs.v);
		free(sp->execs.v);
		free(sp->notif.v);
		json_decref(sp->emails);
		memset(sp, 0, sizeof(*sp));
	}
	sb_sched_generation++;
}

/*
 * Adds a new job (status READY) with a fresh id and its own token; NULL
 * when memory runs out.  freq must be one of sb_sched_frequencies or NULL.
 */
sb_sched_job *
sb_sched_job_new(sb_sched_partner *sp, const char *name, bool active,
				 const char *tz, const char *cron, const char *freq,
				 const char *start_time)
{
	sb_sched_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->id = (sp->index + 1) * SCHED_JOB_BASE + ++sp->next_job;
	j->name = sb_sched_strdup(name);
	j->active = active;
	j->tz = sb_sched_strdup(tz);
	j->cron = sb_sched_strdup(cron);
	j->freq = freq;
	j->start_time = sb_sched_strdup(start_time);
	j->status = SB_SCHED_READY;
	j->last_run_at = -1;
	j->duration_ms = -1;
	sb_sched_set_text(&j->status_details, "created");
	snprintf(j->token, sizeof(j->token), "tok_%016" PRIx64,
			 sb_hash((uint64_t) j->id, 0x746f6b656eULL));
	if (j->name == NULL || j->tz == NULL || j->cron == NULL ||
		!sb_sched_vec_push(&sp->jobs, j))
	{
		sb_sched_job_free(j);
		return NULL;
	}
	return j;
}

/*
 * Start of every handler: rejects query parameters (none of the routes
 * takes one; 400 unknown_parameter as everywhere in the sandbox) and
 * returns the partner's state, seeded with two jobs on first use.
 * Returns NULL after replying.
 */
sb_sched_partner *
sb_sched_begin(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = &sb_sched_state[req->partner->index];

	if (!sb_query_check(req, resp, sched_no_params))
		return NULL;
	if (!sp->seeded)
	{
		sp->seeded = true;
		sp->index = req->partner->index;
		sp->emails = json_array();
		sb_sched_job_new(sp, "Daily revenue report", true,
						 "Europe/Berlin", "0 0 6 * * *", "DAILY", NULL);
		sb_sched_job_new(sp, "Weekly supplier export", false,
						 "UTC", "0 30 7 * * MON", "WEEKLY", NULL);
	}
	return sp;
}

sb_sched_job *
sb_sched_job_lookup(sb_sched_partner *sp, int64_t id)
{
	for (int i = 0; i < sp->jobs.n; i++)
		if (((sb_sched_job *) sp->jobs.v[i])->id == id)
			return sp->jobs.v[i];
	return NULL;
}

sb_sched_exec *
sb_sched_exec_lookup(sb_sched_partner *sp, int64_t id)
{
	for (int i = 0; i < sp->execs.n; i++)
		if (((sb_sched_exec *) sp->execs.v[i])->id == id)
			return sp->execs.v[i];
	return NULL;
}

/*
 * Reads path parameter name as an int64 id; replies 400 invalid_id and
 * returns false when it is not an integer.
 */
bool
sb_sched_id_param(sb_request *req, sb_response *resp, const char *name,
				  int64_t *out)
{
	const char *s = sb_param(req, name);

	if (s == NULL || !sb_parse_int64(s, out))
	{
		sb_reply_error(req, resp, 400, "invalid_id",
					   "%s must be an integer (int64), got \"%.100s\"", name,
					   s ? s : "");
		return false;
	}
	return true;
}

/* The partner's job named by path parameter name, or NULL after 400/404. */
sb_sched_job *
sb_sched_job_or_404(sb_sched_partner *sp, sb_request *req, sb_response *resp,
					const char *name)
{
	int64_t		id;
	sb_sched_job *j;

	if (!sb_sched_id_param(req, resp, name, &id))
		return NULL;
	j = sb_sched_job_lookup(sp, id);
	if (j == NULL)
		sb_reply_error(req, resp, 404, "job_not_found",
					   "user job %" PRId64 " does not exist", id);
	return j;
}

/* ---------- JSON forms ---------- */

/* UserJob; the task lists are always null in reads (spec). */
json_t *
sb_sched_job_json(const sb_sched_job *j, int partner)
{
	json_t	   *o = json_object();

	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "name", json_string(j->name));
	json_object_set_new(o, "isActive", json_boolean(j->active));
	json_object_set_new(o, "timeZone", json_string(j->tz));
	json_object_set_new(o, "jobCronExpression", json_string(j->cron));
	json_object_set_new(o, "jobRunFrequency", json_text(j->freq));
	json_object_set_new(o, "userId", json_integer(partner + 1));
	json_object_set_new(o, "status", json_string(sb_sched_status_name(j->status)));
	json_object_set_new(o, "lastRun", sb_sched_time_json(j->last_run_at));
	json_object_set_new(o, "nextRun", sb_sched_time_json(sched_next_run(j)));
	json_object_set_new(o, "userJobStartTime", json_text(j->start_time));
	json_object_set_new(o, "jobDuration", j->duration_ms < 0 ? json_null() :
						json_integer(j->duration_ms));
	json_object_set_new(o, "jobStatusDetails", json_text(j->status_details));
	json_object_set_new(o, "jobErrorDetails", json_text(j->error_details));
	json_object_set_new(o, "userReportGenerationTasks", json_null());
	json_object_set_new(o, "userEmailTasks", json_null());
	return o;
}

/* Execution; also the shape of the entries of a summary's executions. */
json_t *
sb_sched_exec_json(const sb_sched_exec *e)
{
	json_t	   *o = json_object();

	json_object_set_new(o, "id", json_integer(e->id));
	json_object_set_new(o, "jobId", json_integer(e->job_id));
	json_object_set_new(o, "status", json_string(sb_sched_status_name(e->status)));
	json_object_set_new(o, "startTime", sb_sched_time_json(e->start_at));
	json_object_set_new(o, "endTime", sb_sched_time_json(e->end_at));
	json_object_set_new(o, "duration", e->end_ms < 0 ? json_null() :
						json_integer(e->end_ms - e->start_ms));
	json_object_set_new(o, "errorMessage", json_text(e->error));
	return o;
}

/* ---------- knobs ---------- */

static json_t *
json_num(double v)
{
	return v == (double) (json_int_t) v ? json_integer((json_int_t) v) : json_real(v);
}

/* scheduler.run_duration_min (>= 0) and scheduler.fail_rate (0..1). */
static int
sched_set(const char *name, json_t *value)
{
	double		v;

	if (strcmp(name, "scheduler.run_duration_min") != 0 &&
		strcmp(name, "scheduler.fail_rate") != 0)
		return 0;
	if (!json_is_number(value))
		return -1;
	v = json_number_value(value);
	if (strcmp(name, "scheduler.run_duration_min") == 0)
	{
		if (v < 0)
			return -1;
		sb_sched_run_duration_min = v;
	}
	else
	{
		if (v < 0 || v > 1)
			return -1;
		sb_sched_fail_rate = v;
	}
	return 1;
}

static void
sched_get(json_t *out)
{
	json_object_set_new(out, "scheduler.run_duration_min",
						json_num(sb_sched_run_duration_min));
	json_object_set_new(out, "scheduler.fail_rate", json_num(sb_sched_fail_rate));
}

/* ---------- routes ---------- */

#define S_AUTH SB_AUTH, SB_STYLE_PLAIN, NULL
#define S_ADMIN SB_AUTH | SB_ADMIN, SB_STYLE_PLAIN, NULL

static const sb_route sched_routes[] = {
	{"GET", "/api/user-jobs", S_AUTH, sb_sched_jobs_list},
	{"PUT", "/api/user-jobs", S_AUTH, sb_sched_jobs_save},
	{"GET", "/api/user-jobs/{id}", S_AUTH, sb_sched_job_get},
	{"DELETE", "/api/user-jobs/{id}", S_AUTH, sb_sched_job_delete},
	{"GET", "/api/user-jobs/run/{jobId}", S_AUTH, sb_sched_job_run},
	{"GET", "/api/user-jobs/stop/{jobId}", S_AUTH, sb_sched_job_stop},
	{"GET", "/api/user-jobs/pause/{jobId}", S_AUTH, sb_sched_job_pause},
	{"GET", "/api/user-jobs/activate/{jobId}", S_AUTH, sb_sched_job_activate},
	{"GET", "/api/user-jobs/sync-token/{jobId}", S_AUTH, sb_sched_job_sync_token},
	{"GET", "/api/user-jobs/clone/{jobId}", S_AUTH, sb_sched_job_clone},
	{"GET", "/api/user-jobs/user-job-executions/{jobId}", S_AUTH, sb_sched_job_summary},
	{"GET", "/api/notifications", S_AUTH, sb_sched_notif_list},
	{"POST", "/api/notifications", S_AUTH, sb_sched_notif_add},
	{"GET", "/api/email/jobExecution/{id}", S_AUTH, sb_sched_email_execution},
	{"GET", "/_sandbox/scheduler/emails", S_ADMIN, sb_sched_admin_emails},
	{"GET", "/_sandbox/scheduler/tokens", S_ADMIN, sb_sched_admin_tokens},
	{NULL}
};

const sb_service sb_service_scheduler = {
	.name = "scheduler",
	.routes = sched_routes,
	.reset = sched_reset,
	.set = sched_set,
	.get = sched_get,
};
