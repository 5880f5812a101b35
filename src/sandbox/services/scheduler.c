/*-------------------------------------------------------------------------
 * scheduler.c
 *	  Sandbox of section E of document 002: user jobs, their executions,
 *	  notification addresses and execution emails.
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
 * - Timers carry (partner, execution id, reset generation), never a
 *   pointer: a job deleted or a sandbox reset in between makes the timer
 *   find nothing and do nothing.
 * - The job's status follows its executions: READY until the first run,
 *   RUNNING while any execution runs, else the status of the execution
 *   that ended last.
 * - Choices the spec leaves open are listed in docs/sandbox-files-scheduler.md.
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sandbox.h"

#define SCHED_SUMMARY_MAX	15	/* "last 15 executions" */
#define SCHED_JOB_BASE		INT64_C(1000000)
#define SCHED_EXEC_BASE		INT64_C(1000000000)

static const char *const ST_FAILED = "FAILED";
static const char *const ST_RUNNING = "RUNNING";
static const char *const ST_SUCCESS = "SUCCESS";
static const char *const ST_READY = "READY";

static const char *const sched_frequencies[] = {
	"HOURLY", "DAILY", "WEEKLY", "MONTHLY", NULL
};

typedef struct sched_job
{
	int64_t		id;
	char	   *name;
	bool		active;
	char	   *tz;
	char	   *cron;
	const char *freq;			/* one of sched_frequencies, or NULL */
	char	   *start_time;		/* userJobStartTime as given, or NULL */
	const char *status;
	int64_t		last_run_ms;	/* sandbox ms, -1 = never */
	int64_t		duration_ms;	/* of the execution that ended last, -1 */
	char	   *status_details;
	char	   *error_details;
	char		token[24];		/* copied by sync-token; admin route shows it */
} sched_job;

typedef struct sched_exec
{
	int64_t		id;
	int64_t		job_id;
	const char *status;
	int64_t		start_ms;
	int64_t		end_ms;			/* -1 while running */
	char	   *error;
} sched_exec;

/* A growable array of pointers. */
typedef struct sched_vec
{
	void	  **v;
	int			n;
	int			cap;
} sched_vec;

typedef struct sched_partner
{
	bool		seeded;
	sched_vec	jobs;			/* sched_job *, creation order */
	sched_vec	execs;			/* sched_exec *, start order */
	sched_vec	notif;			/* char *, insertion order */
	json_t	   *emails;			/* array of recorded emails */
	int64_t		next_job;
	int64_t		next_exec;
} sched_partner;

typedef struct sched_timer_arg
{
	int			partner;
	int64_t		exec_id;
	uint64_t	generation;
} sched_timer_arg;

static sched_partner sched_state[SB_MAX_PARTNERS];
static uint64_t sched_generation;	/* bumped by reset */
static double sched_run_duration_min = 1;
static double sched_fail_rate = 0;
static int64_t sched_clock_base;
static bool sched_clock_set;

/* ---------- small helpers ---------- */

static bool
vec_push(sched_vec *vec, void *item)
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

static char *
xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Replaces a malloc'd string field with a printf-formatted copy. */
static void
set_text(char **field, const char *fmt,...) __attribute__((format(printf, 2, 3)));
static void
set_text(char **field, const char *fmt,...)
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

/* Epoch ms on the sandbox wall clock (start time + elapsed sandbox time). */
static int64_t
sched_epoch(int64_t sandbox_ms)
{
	if (!sched_clock_set)
	{
		sched_clock_base = sb_wall_ms() - sb_sandbox_now_ms();
		sched_clock_set = true;
	}
	return sched_clock_base + sandbox_ms;
}

static json_t *
json_time(int64_t sandbox_ms)
{
	char		buf[40];

	if (sandbox_ms < 0)
		return json_null();
	sb_iso8601(sched_epoch(sandbox_ms), buf, sizeof(buf));
	return json_string(buf);
}

static json_t *
json_text(const char *s)
{
	return s ? json_string(s) : json_null();
}

/*
 * Next run time (epoch ms) of an active job: the next UTC boundary of its
 * jobRunFrequency (full hour, midnight, Monday midnight, first of the
 * month).  The cron expression and time zone are not evaluated; -1 when
 * the job is paused or has no frequency.
 */
static int64_t
sched_next_run(const sched_job *j)
{
	const int64_t hour = 3600000;
	const int64_t day = 24 * hour;
	int64_t		now = sched_epoch(sb_sandbox_now_ms());
	int64_t		days = now / day;

	if (!j->active || j->freq == NULL)
		return -1;
	if (strcmp(j->freq, "HOURLY") == 0)
		return (now / hour + 1) * hour;
	if (strcmp(j->freq, "DAILY") == 0)
		return (days + 1) * day;
	if (strcmp(j->freq, "WEEKLY") == 0)
		return (days + 7 - (days + 3) % 7) * day;	/* 1970-01-01 was a Thursday */
	{
		time_t		secs = (time_t) (now / 1000);
		struct tm	tm;

		gmtime_r(&secs, &tm);
		tm.tm_mday = 1;
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_mon++;
		return (int64_t) timegm(&tm) * 1000;
	}
}

/* ---------- state ---------- */

static void
job_free(sched_job *j)
{
	free(j->name);
	free(j->tz);
	free(j->cron);
	free(j->start_time);
	free(j->status_details);
	free(j->error_details);
	free(j);
}

static void
exec_free(sched_exec *e)
{
	free(e->error);
	free(e);
}

static void
sched_reset(void)
{
	for (int p = 0; p < SB_MAX_PARTNERS; p++)
	{
		sched_partner *sp = &sched_state[p];

		for (int i = 0; i < sp->jobs.n; i++)
			job_free(sp->jobs.v[i]);
		for (int i = 0; i < sp->execs.n; i++)
			exec_free(sp->execs.v[i]);
		for (int i = 0; i < sp->notif.n; i++)
			free(sp->notif.v[i]);
		free(sp->jobs.v);
		free(sp->execs.v);
		free(sp->notif.v);
		json_decref(sp->emails);
		memset(sp, 0, sizeof(*sp));
	}
	sched_generation++;
}

/* Adds a new job (status READY) with a fresh id; NULL on out of memory. */
static sched_job *
job_new(sched_partner *sp, int partner, const char *name, bool active,
		const char *tz, const char *cron, const char *freq,
		const char *start_time)
{
	sched_job  *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->id = (partner + 1) * SCHED_JOB_BASE + ++sp->next_job;
	j->name = xstrdup(name);
	j->active = active;
	j->tz = xstrdup(tz);
	j->cron = xstrdup(cron);
	j->freq = freq;
	j->start_time = xstrdup(start_time);
	j->status = ST_READY;
	j->last_run_ms = -1;
	j->duration_ms = -1;
	set_text(&j->status_details, "created");
	snprintf(j->token, sizeof(j->token), "tok_%016" PRIx64,
			 sb_hash((uint64_t) j->id, 0x746f6b656eULL));
	if (!vec_push(&sp->jobs, j))
	{
		job_free(j);
		return NULL;
	}
	return j;
}

/* The partner's state, seeded with two jobs on first use. */
static sched_partner *
sched_partner_state(sb_partner *partner)
{
	sched_partner *sp = &sched_state[partner->index];

	if (!sp->seeded)
	{
		sp->seeded = true;
		sp->emails = json_array();
		job_new(sp, partner->index, "Daily revenue report", true,
				"Europe/Berlin", "0 0 6 * * *", "DAILY", NULL);
		job_new(sp, partner->index, "Weekly supplier export", false,
				"UTC", "0 30 7 * * MON", "WEEKLY", NULL);
	}
	return sp;
}

static sched_job *
job_lookup(sched_partner *sp, int64_t id)
{
	for (int i = 0; i < sp->jobs.n; i++)
		if (((sched_job *) sp->jobs.v[i])->id == id)
			return sp->jobs.v[i];
	return NULL;
}

static sched_exec *
exec_lookup(sched_partner *sp, int64_t id)
{
	for (int i = 0; i < sp->execs.n; i++)
		if (((sched_exec *) sp->execs.v[i])->id == id)
			return sp->execs.v[i];
	return NULL;
}

static json_t *
job_json(const sched_job *j, int partner)
{
	json_t	   *o = json_object();

	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "name", json_string(j->name));
	json_object_set_new(o, "isActive", json_boolean(j->active));
	json_object_set_new(o, "timeZone", json_string(j->tz));
	json_object_set_new(o, "jobCronExpression", json_string(j->cron));
	json_object_set_new(o, "jobRunFrequency", json_text(j->freq));
	json_object_set_new(o, "userId", json_integer(partner + 1));
	json_object_set_new(o, "status", json_string(j->status));
	json_object_set_new(o, "lastRun", json_time(j->last_run_ms));
	{
		int64_t		next = sched_next_run(j);
		char		buf[40];

		if (next < 0)
			json_object_set_new(o, "nextRun", json_null());
		else
		{
			sb_iso8601(next, buf, sizeof(buf));
			json_object_set_new(o, "nextRun", json_string(buf));
		}
	}
	json_object_set_new(o, "userJobStartTime", json_text(j->start_time));
	json_object_set_new(o, "jobDuration", j->duration_ms < 0 ? json_null() :
						json_integer(j->duration_ms));
	json_object_set_new(o, "jobStatusDetails", json_text(j->status_details));
	json_object_set_new(o, "jobErrorDetails", json_text(j->error_details));
	json_object_set_new(o, "userReportGenerationTasks", json_null());
	json_object_set_new(o, "userEmailTasks", json_null());
	return o;
}

static json_t *
exec_json(const sched_exec *e)
{
	json_t	   *o = json_object();

	json_object_set_new(o, "id", json_integer(e->id));
	json_object_set_new(o, "jobId", json_integer(e->job_id));
	json_object_set_new(o, "status", json_string(e->status));
	json_object_set_new(o, "startTime", json_time(e->start_ms));
	json_object_set_new(o, "endTime", json_time(e->end_ms));
	json_object_set_new(o, "duration", e->end_ms < 0 ? json_null() :
						json_integer(e->end_ms - e->start_ms));
	json_object_set_new(o, "errorMessage", json_text(e->error));
	return o;
}

/*
 * Ends a running execution with status (SUCCESS or FAILED) and error
 * (NULL on success), and carries the outcome over to its job.
 */
static void
exec_finish(sched_partner *sp, sched_exec *e, const char *status,
			const char *error)
{
	sched_job  *j = job_lookup(sp, e->job_id);
	bool		others = false;

	e->status = status;
	e->end_ms = sb_sandbox_now_ms();
	free(e->error);
	e->error = xstrdup(error);
	if (j == NULL)
		return;
	for (int i = 0; i < sp->execs.n; i++)
	{
		sched_exec *o = sp->execs.v[i];

		if (o->job_id == j->id && o->status == ST_RUNNING)
			others = true;
	}
	j->status = others ? ST_RUNNING : status;
	j->duration_ms = e->end_ms - e->start_ms;
	if (status == ST_FAILED)
	{
		set_text(&j->error_details, "%s", error);
		set_text(&j->status_details, "execution %" PRId64 " failed: %s",
				 e->id, error);
	}
	else
	{
		free(j->error_details);
		j->error_details = NULL;
		set_text(&j->status_details, "execution %" PRId64 " succeeded", e->id);
	}
}

/* Timer: the end of an execution's run time decides its outcome. */
static void
sched_exec_due(void *arg)
{
	sched_timer_arg *t = arg;
	sched_partner *sp = &sched_state[t->partner];
	sched_exec *e;
	sched_job  *j;

	if (t->generation != sched_generation ||
		(e = exec_lookup(sp, t->exec_id)) == NULL || e->status != ST_RUNNING)
	{
		free(t);
		return;
	}
	j = job_lookup(sp, e->job_id);
	if (j != NULL && strcasestr(j->name, "fail") != NULL)
		exec_finish(sp, e, ST_FAILED,
					"simulated failure: the job name contains \"fail\"");
	else if (sched_fail_rate > 0 && sb_rand01() < sched_fail_rate)
		exec_finish(sp, e, ST_FAILED,
					"simulated failure (scheduler.fail_rate)");
	else
		exec_finish(sp, e, ST_SUCCESS, NULL);
	free(t);
}

/* ---------- validation ---------- */

/*
 * Reads path parameter name as an int64 id; replies 400 invalid_id and
 * returns false when it is not an integer.
 */
static bool
id_param(sb_request *req, sb_response *resp, const char *name, int64_t *out)
{
	const char *s = sb_param(req, name);

	if (s == NULL || !sb_parse_int64(s, out))
	{
		sb_reply_error(req, resp, 400, "invalid_id",
					   "%s must be an integer (int64), got \"%s\"", name,
					   s ? s : "");
		return false;
	}
	return true;
}

/* The job named by path parameter name, or NULL after replying 400/404. */
static sched_job *
job_or_error(sb_request *req, sb_response *resp, const char *name)
{
	sched_partner *sp = sched_partner_state(req->partner);
	int64_t		id;
	sched_job  *j;

	if (!id_param(req, resp, name, &id))
		return NULL;
	j = job_lookup(sp, id);
	if (j == NULL)
		sb_reply_error(req, resp, 404, "job_not_found",
					   "user job %" PRId64 " does not exist", id);
	return j;
}

/*
 * A cron expression as Spring and Quartz write it: 5 to 7 fields separated
 * by whitespace, made of digits, letters and * / , - ? L W #.  Field
 * ranges are not checked.
 */
static bool
cron_valid(const char *s)
{
	int			fields = 0;

	while (*s)
	{
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		fields++;
		while (*s && *s != ' ' && *s != '\t')
		{
			if (!isalnum((unsigned char) *s) && strchr("*/,-?#", *s) == NULL)
				return false;
			s++;
		}
	}
	return fields >= 5 && fields <= 7;
}

/*
 * Email address check of the notification list: local@domain, at most
 * 254 bytes; local part of letters, digits and !#$%&'*+/=?^_`{|}~-
 * with single inner dots; domain of at least two dot-separated labels
 * of letters, digits and inner hyphens, the last one 2+ letters.
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
		else if (isalpha((unsigned char) *p))
			continue;
		else if (isdigit((unsigned char) *p) || *p == '-')
			alpha_tld = false;
		else
			return false;
	}
	return labels >= 2 && alpha_tld && p - label >= 2;
}

/* True if s starts like an ISO-8601 date-time (YYYY-MM-DDTHH:MM). */
static bool
datetime_valid(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd";

	for (size_t i = 0; i < sizeof(shape) - 1; i++)
	{
		if (shape[i] == 'd' ? !isdigit((unsigned char) s[i]) : s[i] != shape[i])
			return false;
	}
	return true;
}

/*
 * Reads required member name of obj as a non-empty string (or, with
 * boolean, a boolean); replies 400 missing_field / invalid_field and
 * returns NULL when it is absent, null or of the wrong type.
 */
static json_t *
required_member(sb_request *req, sb_response *resp, json_t *obj,
				const char *name, bool boolean)
{
	json_t	   *v = json_object_get(obj, name);

	if (v == NULL || json_is_null(v))
	{
		sb_reply_error(req, resp, 400, "missing_field", "%s is required", name);
		return NULL;
	}
	if (boolean ? !json_is_boolean(v) :
		(!json_is_string(v) || json_string_length(v) == 0))
	{
		sb_reply_error(req, resp, 400, "invalid_field", "%s must be %s", name,
					   boolean ? "a boolean" : "a non-empty string");
		return NULL;
	}
	return v;
}

/* ---------- handlers: jobs ---------- */

/* GET /api/user-jobs: every job of the partner, in creation order. */
static void
h_jobs_list(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	json_t	   *arr = json_array();

	for (int i = 0; i < sp->jobs.n; i++)
		json_array_append_new(arr, job_json(sp->jobs.v[i], req->partner->index));
	sb_reply_json(resp, 200, arr);
}

/*
 * PUT /api/user-jobs: creates a job when the body has no id, replaces the
 * writable fields of an existing job when it has one (404 if unknown).
 */
static void
h_jobs_save(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	json_t	   *body = sb_json_body(req, resp, true);
	json_t	   *id;
	json_t	   *name;
	json_t	   *active;
	json_t	   *tz;
	json_t	   *cron;
	json_t	   *v;
	const char *freq = NULL;
	const char *start = NULL;
	sched_job  *j = NULL;

	if (body == NULL)
		return;
	if (!json_is_object(body))
	{
		sb_reply_error(req, resp, 400, "invalid_request",
					   "body must be a UserJob JSON object");
		goto done;
	}
	id = json_object_get(body, "id");
	if (id != NULL && !json_is_null(id))
	{
		if (!json_is_integer(id))
		{
			sb_reply_error(req, resp, 400, "invalid_field", "id must be an integer");
			goto done;
		}
		j = job_lookup(sp, json_integer_value(id));
		if (j == NULL)
		{
			sb_reply_error(req, resp, 404, "job_not_found",
						   "user job %" JSON_INTEGER_FORMAT " does not exist",
						   json_integer_value(id));
			goto done;
		}
	}
	if ((name = required_member(req, resp, body, "name", false)) == NULL ||
		(active = required_member(req, resp, body, "isActive", true)) == NULL ||
		(tz = required_member(req, resp, body, "timeZone", false)) == NULL ||
		(cron = required_member(req, resp, body, "jobCronExpression", false)) == NULL)
		goto done;
	if (!cron_valid(json_string_value(cron)))
	{
		sb_reply_error(req, resp, 400, "invalid_cron",
					   "jobCronExpression must have 5 to 7 cron fields");
		goto done;
	}
	v = json_object_get(body, "jobRunFrequency");
	if (v != NULL && !json_is_null(v))
	{
		for (int i = 0; sched_frequencies[i]; i++)
			if (json_is_string(v) && strcmp(json_string_value(v), sched_frequencies[i]) == 0)
				freq = sched_frequencies[i];
		if (freq == NULL)
		{
			sb_reply_error(req, resp, 400, "invalid_field",
						   "jobRunFrequency must be HOURLY, DAILY, WEEKLY or MONTHLY");
			goto done;
		}
	}
	v = json_object_get(body, "userJobStartTime");
	if (v != NULL && !json_is_null(v))
	{
		if (!json_is_string(v) || !datetime_valid(json_string_value(v)))
		{
			sb_reply_error(req, resp, 400, "invalid_field",
						   "userJobStartTime must be a date-time string");
			goto done;
		}
		start = json_string_value(v);
	}

	if (j == NULL)
	{
		j = job_new(sp, req->partner->index, json_string_value(name),
					json_is_true(active), json_string_value(tz),
					json_string_value(cron), freq, start);
		if (j == NULL)
		{
			sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
			goto done;
		}
	}
	else
	{
		set_text(&j->name, "%s", json_string_value(name));
		j->active = json_is_true(active);
		set_text(&j->tz, "%s", json_string_value(tz));
		set_text(&j->cron, "%s", json_string_value(cron));
		j->freq = freq;
		free(j->start_time);
		j->start_time = xstrdup(start);
	}
	resp->applied = true;
	sb_reply_json(resp, 200, job_json(j, req->partner->index));
done:
	json_decref(body);
}

/* GET /api/user-jobs/{id} */
static void
h_job_get(sb_request *req, sb_response *resp)
{
	sched_job  *j = job_or_error(req, resp, "id");

	if (j != NULL)
		sb_reply_json(resp, 200, job_json(j, req->partner->index));
}

/* DELETE /api/user-jobs/{id}: the job and all its executions. */
static void
h_job_delete(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	sched_job  *j = job_or_error(req, resp, "id");
	int			keep = 0;

	if (j == NULL)
		return;
	for (int i = 0; i < sp->execs.n; i++)
	{
		sched_exec *e = sp->execs.v[i];

		if (e->job_id == j->id)
			exec_free(e);
		else
			sp->execs.v[keep++] = e;
	}
	sp->execs.n = keep;
	for (int i = 0; i < sp->jobs.n; i++)
	{
		if (sp->jobs.v[i] == j)
		{
			memmove(&sp->jobs.v[i], &sp->jobs.v[i + 1],
					(sp->jobs.n - i - 1) * sizeof(void *));
			sp->jobs.n--;
			break;
		}
	}
	job_free(j);
	resp->applied = true;
	sb_reply_empty(resp, 200);
}

/* GET /api/user-jobs/run/{jobId}: starts an execution now. */
static void
h_job_run(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	sched_job  *j = job_or_error(req, resp, "jobId");
	sched_exec *e;
	sched_timer_arg *t;

	if (j == NULL)
		return;
	e = calloc(1, sizeof(*e));
	t = malloc(sizeof(*t));
	if (e == NULL || t == NULL || !vec_push(&sp->execs, e))
	{
		free(e);
		free(t);
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		return;
	}
	e->id = (req->partner->index + 1) * SCHED_EXEC_BASE + ++sp->next_exec;
	e->job_id = j->id;
	e->status = ST_RUNNING;
	e->start_ms = sb_sandbox_now_ms();
	e->end_ms = -1;
	j->status = ST_RUNNING;
	j->last_run_ms = e->start_ms;
	set_text(&j->status_details, "execution %" PRId64 " started", e->id);
	t->partner = req->partner->index;
	t->exec_id = e->id;
	t->generation = sched_generation;
	sb_timer_add(sched_run_duration_min * SB_MINUTE, sched_exec_due, t);
	resp->applied = true;
	sb_reply_json(resp, 200, exec_json(e));
}

/* GET /api/user-jobs/stop/{jobId}: running executions end FAILED "stopped". */
static void
h_job_stop(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	sched_job  *j = job_or_error(req, resp, "jobId");

	if (j == NULL)
		return;
	for (int i = 0; i < sp->execs.n; i++)
	{
		sched_exec *e = sp->execs.v[i];

		if (e->job_id == j->id && e->status == ST_RUNNING)
		{
			exec_finish(sp, e, ST_FAILED, "stopped");
			resp->applied = true;
		}
	}
	sb_reply_empty(resp, 200);
}

/* GET /api/user-jobs/pause/{jobId} and .../activate/{jobId} */
static void
job_set_active(sb_request *req, sb_response *resp, bool active)
{
	sched_job  *j = job_or_error(req, resp, "jobId");

	if (j == NULL)
		return;
	j->active = active;
	resp->applied = true;
	sb_reply_empty(resp, 200);
}

static void
h_job_pause(sb_request *req, sb_response *resp)
{
	job_set_active(req, resp, false);
}

static void
h_job_activate(sb_request *req, sb_response *resp)
{
	job_set_active(req, resp, true);
}

/*
 * GET /api/user-jobs/sync-token/{jobId}: copies the job's token to every
 * other job of the partner; no job is created, newJobId is jobId itself.
 */
static void
h_job_sync_token(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	sched_job  *j = job_or_error(req, resp, "jobId");

	if (j == NULL)
		return;
	for (int i = 0; i < sp->jobs.n; i++)
		memcpy(((sched_job *) sp->jobs.v[i])->token, j->token, sizeof(j->token));
	resp->applied = true;
	sb_reply_json(resp, 200, json_pack("{s:I}", "newJobId", (json_int_t) j->id));
}

/* GET /api/user-jobs/clone/{jobId}: a copy (same fields, no history). */
static void
h_job_clone(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	sched_job  *j = job_or_error(req, resp, "jobId");
	sched_job  *c;

	if (j == NULL)
		return;
	c = job_new(sp, req->partner->index, j->name, j->active, j->tz, j->cron,
				j->freq, j->start_time);
	if (c == NULL)
	{
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		return;
	}
	memcpy(c->token, j->token, sizeof(c->token));
	set_text(&c->status_details, "cloned from job %" PRId64, j->id);
	resp->applied = true;
	sb_reply_json(resp, 200, json_pack("{s:I}", "newJobId", (json_int_t) c->id));
}

/*
 * GET /api/user-jobs/user-job-executions/{jobId}: the last 15 executions,
 * newest first; the totals count those 15 (the summary's scope).
 */
static void
h_job_summary(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	sched_job  *j = job_or_error(req, resp, "jobId");
	json_t	   *arr;
	int			total = 0;
	int			ok = 0;
	int			failed = 0;

	if (j == NULL)
		return;
	arr = json_array();
	for (int i = sp->execs.n - 1; i >= 0 && total < SCHED_SUMMARY_MAX; i--)
	{
		sched_exec *e = sp->execs.v[i];

		if (e->job_id != j->id)
			continue;
		total++;
		ok += (e->status == ST_SUCCESS);
		failed += (e->status == ST_FAILED);
		json_array_append_new(arr, exec_json(e));
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

/* ---------- handlers: notifications and emails ---------- */

/* GET /api/notifications: the partner's addresses, in insertion order. */
static void
h_notif_list(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	json_t	   *arr = json_array();

	for (int i = 0; i < sp->notif.n; i++)
		json_array_append_new(arr, json_string(sp->notif.v[i]));
	sb_reply_json(resp, 200, arr);
}

/*
 * POST /api/notifications: the body is a JSON string ("a@b.example"), or
 * the bare address as text.  Adds it unless already present (compared
 * case-insensitively, so repeating is harmless) and echoes it.
 */
static void
h_notif_add(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	const char *b = req->body;
	const char *e = req->body + req->body_len;
	char	   *addr;
	json_t	   *doc = NULL;

	while (b < e && isspace((unsigned char) *b))
		b++;
	while (e > b && isspace((unsigned char) e[-1]))
		e--;
	if (b < e && *b == '"')
	{
		json_error_t err;

		doc = json_loadb(b, e - b, JSON_DECODE_ANY, &err);
		if (doc == NULL || !json_is_string(doc))
		{
			json_decref(doc);
			sb_reply_error(req, resp, 400, "invalid_request",
						   "body must be a JSON string holding an email address");
			return;
		}
		addr = strdup(json_string_value(doc));
		json_decref(doc);
	}
	else
		addr = strndup(b, e - b);
	if (addr == NULL)
	{
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		return;
	}
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
	if (!vec_push(&sp->notif, addr))
	{
		free(addr);
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		return;
	}
	resp->applied = true;
	sb_reply_json(resp, 200, json_string(addr));
}

/*
 * GET /api/email/jobExecution/{id}: "sends" the execution's email, i.e.
 * records it for GET /_sandbox/scheduler/emails.
 */
static void
h_email_execution(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	int64_t		id;
	sched_exec *e;
	sched_job  *j;
	json_t	   *to;
	char		subject[400];
	char		now[40];

	if (!id_param(req, resp, "id", &id))
		return;
	e = exec_lookup(sp, id);
	if (e == NULL)
	{
		sb_reply_error(req, resp, 404, "execution_not_found",
					   "job execution %" PRId64 " does not exist", id);
		return;
	}
	j = job_lookup(sp, e->job_id);
	to = json_array();
	for (int i = 0; i < sp->notif.n; i++)
		json_array_append_new(to, json_string(sp->notif.v[i]));
	snprintf(subject, sizeof(subject), "Job \"%.300s\" execution %" PRId64 ": %s",
			 j ? j->name : "?", e->id, e->status);
	sb_iso8601(sched_epoch(sb_sandbox_now_ms()), now, sizeof(now));
	json_array_append_new(sp->emails,
						  json_pack("{s:I, s:I, s:I, s:s?, s:s, s:o, s:s, s:s}",
									"id", (json_int_t) json_array_size(sp->emails) + 1,
									"executionId", (json_int_t) e->id,
									"jobId", (json_int_t) e->job_id,
									"jobName", j ? j->name : NULL,
									"executionStatus", e->status,
									"to", to,
									"subject", subject,
									"sentAt", now));
	resp->applied = true;
	sb_reply_empty(resp, 200);
}

/* GET /_sandbox/scheduler/emails (admin): the partner's sent emails. */
static void
h_admin_emails(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);

	sb_reply_json(resp, 200, json_deep_copy(sp->emails));
}

/* GET /_sandbox/scheduler/tokens (admin): {"<jobId>": token} of the partner. */
static void
h_admin_tokens(sb_request *req, sb_response *resp)
{
	sched_partner *sp = sched_partner_state(req->partner);
	json_t	   *o = json_object();

	for (int i = 0; i < sp->jobs.n; i++)
	{
		sched_job  *j = sp->jobs.v[i];
		char		key[32];

		snprintf(key, sizeof(key), "%" PRId64, j->id);
		json_object_set_new(o, key, json_string(j->token));
	}
	sb_reply_json(resp, 200, o);
}

/* ---------- knobs ---------- */

static json_t *
json_num(double v)
{
	return v == (double) (json_int_t) v ? json_integer((json_int_t) v) : json_real(v);
}

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
		sched_run_duration_min = v;
	}
	else
	{
		if (v < 0 || v > 1)
			return -1;
		sched_fail_rate = v;
	}
	return 1;
}

static void
sched_get(json_t *out)
{
	json_object_set_new(out, "scheduler.run_duration_min",
						json_num(sched_run_duration_min));
	json_object_set_new(out, "scheduler.fail_rate", json_num(sched_fail_rate));
}

static void
sched_init(void)
{
	(void) sched_epoch(0);
}

#define S_AUTH SB_AUTH, SB_STYLE_PLAIN, NULL

static const sb_route sched_routes[] = {
	{"GET", "/api/user-jobs", S_AUTH, h_jobs_list},
	{"PUT", "/api/user-jobs", S_AUTH, h_jobs_save},
	{"GET", "/api/user-jobs/{id}", S_AUTH, h_job_get},
	{"DELETE", "/api/user-jobs/{id}", S_AUTH, h_job_delete},
	{"GET", "/api/user-jobs/run/{jobId}", S_AUTH, h_job_run},
	{"GET", "/api/user-jobs/stop/{jobId}", S_AUTH, h_job_stop},
	{"GET", "/api/user-jobs/pause/{jobId}", S_AUTH, h_job_pause},
	{"GET", "/api/user-jobs/activate/{jobId}", S_AUTH, h_job_activate},
	{"GET", "/api/user-jobs/sync-token/{jobId}", S_AUTH, h_job_sync_token},
	{"GET", "/api/user-jobs/clone/{jobId}", S_AUTH, h_job_clone},
	{"GET", "/api/user-jobs/user-job-executions/{jobId}", S_AUTH, h_job_summary},
	{"GET", "/api/notifications", S_AUTH, h_notif_list},
	{"POST", "/api/notifications", S_AUTH, h_notif_add},
	{"GET", "/api/email/jobExecution/{id}", S_AUTH, h_email_execution},
	{"GET", "/_sandbox/scheduler/emails", SB_AUTH | SB_ADMIN, SB_STYLE_PLAIN, NULL,
	h_admin_emails},
	{"GET", "/_sandbox/scheduler/tokens", SB_AUTH | SB_ADMIN, SB_STYLE_PLAIN, NULL,
	h_admin_tokens},
	{NULL}
};

const sb_service sb_service_scheduler = {
	.name = "scheduler",
	.routes = sched_routes,
	.init = sched_init,
	.reset = sched_reset,
	.set = sched_set,
	.get = sched_get,
};
