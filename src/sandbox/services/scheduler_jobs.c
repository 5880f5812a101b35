/*-------------------------------------------------------------------------
 * scheduler_jobs.c
 *	  Scheduler sandbox: the user-job routes that change or read jobs
 *	  only: list, save (create/update), read, delete, pause, activate,
 *	  clone and sync-token.
 *
 * Design notes:
 *
 * - PUT /api/user-jobs is a full replace of the writable fields (name,
 *   isActive, timeZone, jobCronExpression, jobRunFrequency,
 *   userJobStartTime); read-only fields in the body (status, lastRun,
 *   ..., the task lists) are ignored, as is userId (the partner's).
 * - Every job has a hidden token (shown by GET /_sandbox/scheduler/tokens)
 *   so that sync-token, which the spec says copies "the token of this job
 *   to all other jobs of the user", has an observable effect.
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler_int.h"

/*
 * A cron expression as Spring and Quartz write it: 5 to 7 fields separated
 * by blanks, made of letters, digits and * / , - ? #.  Field ranges are
 * not checked.
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

/* GET /api/user-jobs: every job of the partner, in creation order. */
void
sb_sched_jobs_list(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	json_t	   *arr;

	if (sp == NULL)
		return;
	arr = json_array();
	for (int i = 0; i < sp->jobs.n; i++)
		json_array_append_new(arr, sb_sched_job_json(sp->jobs.v[i], sp->index));
	sb_reply_json(resp, 200, arr);
}

/*
 * Checks the optional members of a saved job; on success stores the
 * frequency (a sb_sched_frequencies entry or NULL) and the start time (in
 * body, or NULL).  Replies 400 invalid_field and returns false otherwise.
 */
static bool
save_optionals(sb_request *req, sb_response *resp, json_t *body,
			   const char **freq, const char **start)
{
	json_t	   *v = json_object_get(body, "jobRunFrequency");

	*freq = NULL;
	*start = NULL;
	if (v != NULL && !json_is_null(v))
	{
		for (int i = 0; sb_sched_frequencies[i]; i++)
			if (json_is_string(v) &&
				strcmp(json_string_value(v), sb_sched_frequencies[i]) == 0)
				*freq = sb_sched_frequencies[i];
		if (*freq == NULL)
		{
			sb_reply_error(req, resp, 400, "invalid_field",
						   "jobRunFrequency must be HOURLY, DAILY, WEEKLY or MONTHLY");
			return false;
		}
	}
	v = json_object_get(body, "userJobStartTime");
	if (v != NULL && !json_is_null(v))
	{
		if (!json_is_string(v) || !datetime_valid(json_string_value(v)))
		{
			sb_reply_error(req, resp, 400, "invalid_field",
						   "userJobStartTime must be a date-time string");
			return false;
		}
		*start = json_string_value(v);
	}
	return true;
}

/*
 * PUT /api/user-jobs: creates a job when the body has no id, replaces the
 * writable fields of an existing job when it has one (404 if unknown).
 * Both answer 200 with the job.
 */
void
sb_sched_jobs_save(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	json_t	   *body;
	json_t	   *id;
	json_t	   *name;
	json_t	   *active;
	json_t	   *tz;
	json_t	   *cron;
	const char *freq;
	const char *start;
	sb_sched_job *j = NULL;

	if (sp == NULL || (body = sb_json_body(req, resp, true)) == NULL)
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
		j = sb_sched_job_lookup(sp, json_integer_value(id));
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
	if (!save_optionals(req, resp, body, &freq, &start))
		goto done;

	if (j == NULL)
	{
		j = sb_sched_job_new(sp, json_string_value(name), json_is_true(active),
							 json_string_value(tz), json_string_value(cron),
							 freq, start);
		if (j == NULL)
		{
			sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
			goto done;
		}
	}
	else
	{
		sb_sched_set_text(&j->name, "%s", json_string_value(name));
		j->active = json_is_true(active);
		sb_sched_set_text(&j->tz, "%s", json_string_value(tz));
		sb_sched_set_text(&j->cron, "%s", json_string_value(cron));
		j->freq = freq;
		free(j->start_time);
		j->start_time = sb_sched_strdup(start);
	}
	resp->applied = true;
	sb_reply_json(resp, 200, sb_sched_job_json(j, sp->index));
done:
	json_decref(body);
}

/* GET /api/user-jobs/{id} */
void
sb_sched_job_get(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	sb_sched_job *j;

	if (sp != NULL && (j = sb_sched_job_or_404(sp, req, resp, "id")) != NULL)
		sb_reply_json(resp, 200, sb_sched_job_json(j, sp->index));
}

/* DELETE /api/user-jobs/{id}: the job and all its executions; 200 empty. */
void
sb_sched_job_delete(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	sb_sched_job *j;
	int			keep = 0;

	if (sp == NULL || (j = sb_sched_job_or_404(sp, req, resp, "id")) == NULL)
		return;
	for (int i = 0; i < sp->execs.n; i++)
	{
		sb_sched_exec *e = sp->execs.v[i];

		if (e->job_id == j->id)
			sb_sched_exec_free(e);
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
	sb_sched_job_free(j);
	resp->applied = true;
	sb_reply_empty(resp, 200);
}

/* pause/activate: only isActive changes (manual runs stay possible). */
static void
job_set_active(sb_request *req, sb_response *resp, bool active)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	sb_sched_job *j;

	if (sp == NULL || (j = sb_sched_job_or_404(sp, req, resp, "jobId")) == NULL)
		return;
	j->active = active;
	resp->applied = true;
	sb_reply_empty(resp, 200);
}

/* GET /api/user-jobs/pause/{jobId}: isActive = false; 200 empty. */
void
sb_sched_job_pause(sb_request *req, sb_response *resp)
{
	job_set_active(req, resp, false);
}

/* GET /api/user-jobs/activate/{jobId}: isActive = true; 200 empty. */
void
sb_sched_job_activate(sb_request *req, sb_response *resp)
{
	job_set_active(req, resp, true);
}

/*
 * GET /api/user-jobs/sync-token/{jobId}: copies the job's token to every
 * other job of the partner; no job is created, newJobId is jobId itself.
 */
void
sb_sched_job_sync_token(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	sb_sched_job *j;

	if (sp == NULL || (j = sb_sched_job_or_404(sp, req, resp, "jobId")) == NULL)
		return;
	for (int i = 0; i < sp->jobs.n; i++)
		memcpy(((sb_sched_job *) sp->jobs.v[i])->token, j->token, sizeof(j->token));
	resp->applied = true;
	sb_reply_json(resp, 200, json_pack("{s:I}", "newJobId", (json_int_t) j->id));
}

/*
 * GET /api/user-jobs/clone/{jobId}: a new job with the same writable
 * fields and token, status READY, no executions; answers its id.
 */
void
sb_sched_job_clone(sb_request *req, sb_response *resp)
{
	sb_sched_partner *sp = sb_sched_begin(req, resp);
	sb_sched_job *j;
	sb_sched_job *c;

	if (sp == NULL || (j = sb_sched_job_or_404(sp, req, resp, "jobId")) == NULL)
		return;
	c = sb_sched_job_new(sp, j->name, j->active, j->tz, j->cron, j->freq,
						 j->start_time);
	if (c == NULL)
	{
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		return;
	}
	memcpy(c->token, j->token, sizeof(c->token));
	sb_sched_set_text(&c->status_details, "cloned from job %" PRId64, j->id);
	resp->applied = true;
	sb_reply_json(resp, 200, json_pack("{s:I}", "newJobId", (json_int_t) c->id));
}
