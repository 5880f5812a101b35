/*-------------------------------------------------------------------------
 * jobs.c
 *	  Sandbox of the six document-processing job families, whose paths and
 *	  shapes the service's description leaves open; the shapes chosen are
 *	  in docs/sandbox-jobs.md: per family a model list, a job history, job
 *	  creation, a job's status and its result.
 *
 * Design notes:
 *
 * - The families are data (jobs_families[]): a name, a paging style and
 *   the models.  Each family pages its lists in a style of its own
 *   (services/jobs_pages.c), so that a client can be tested against every
 *   style real services use: ocr a cursor in the body, translate a next
 *   URL, summarize a Link header, classify offset, extract page numbers,
 *   redact none.
 * - Authentication is a route flag checked by the core (core/server.c):
 *   translate takes an OAuth2 access token of POST /oauth/token
 *   (core/oauth.c), classify its key in the query parameter api_key, the
 *   others the Bearer API key of every other service.
 * - History is oldest first: JOBS_SEEDED jobs drawn from the seed (the
 *   same for every partner, services/jobs_content.c), then the jobs the
 *   partner created, so that a walk in progress never sees a page move.
 * - A created job takes a file_id of the partner's uploads
 *   (services/files.h) and runs on sandbox time: queued for the first
 *   tenth of jobs.run_s, running until jobs.run_s sandbox seconds have
 *   passed, then succeeded (failed with empty_file for a file of 0 bytes).
 *   Its status is computed when read, so no timer is needed.
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "files.h"

static const char *const models_ocr[] = {
	"ocr-standard", "ocr-accurate", "ocr-handwriting", "ocr-tables", NULL};
static const char *const models_translate[] = {
	"nmt-general", "nmt-legal", "nmt-technical", "nmt-fast", "nmt-glossary", NULL};
static const char *const models_summarize[] = {
	"sum-short", "sum-detailed", "sum-bullets", NULL};
static const char *const models_classify[] = {
	"cls-doctype", "cls-language", "cls-sensitivity", "cls-priority",
	"cls-topic", "cls-sentiment", NULL};
static const char *const models_extract[] = {
	"ext-invoice", "ext-receipt", "ext-id-card", "ext-generic", NULL};
static const char *const models_redact[] = {
	"red-pii", "red-financial", "red-custom", NULL};

const jobs_family jobs_families[] = {
	{"ocr", JOBS_PAGING_CURSOR, models_ocr},
	{"translate", JOBS_PAGING_NEXT_URL, models_translate},
	{"summarize", JOBS_PAGING_LINK, models_summarize},
	{"classify", JOBS_PAGING_OFFSET, models_classify},
	{"extract", JOBS_PAGING_PAGE, models_extract},
	{"redact", JOBS_PAGING_NONE, models_redact},
};
const int	jobs_nfamilies = sizeof(jobs_families) / sizeof(jobs_families[0]);

#define JOBS_NFAMILIES 6

static const char *const statuses[] = {"queued", "running", "succeeded", "failed", NULL};

typedef struct jobs_job
{
	char		id[48];
	const char *model;			/* points into the family's models */
	char		file_id[64];
	json_t	   *options;		/* the request's options object, or NULL */
	bool		empty_file;		/* the file had 0 bytes: the job fails */
	int64_t		created_wall;	/* epoch ms, real */
	int64_t		created_ms;		/* sandbox monotonic ms */
} jobs_job;

typedef struct jobs_list
{
	jobs_job   *jobs;
	int			n;
	int			cap;
} jobs_list;

static jobs_list jobs_store[SB_MAX_PARTNERS][JOBS_NFAMILIES];
static uint64_t jobs_seq = 1;
static double jobs_run_s = 10;

static void
jobs_reset(void)
{
	for (int p = 0; p < SB_MAX_PARTNERS; p++)
		for (int f = 0; f < JOBS_NFAMILIES; f++)
		{
			jobs_list  *l = &jobs_store[p][f];

			for (int i = 0; i < l->n; i++)
				json_decref(l->jobs[i].options);
			free(l->jobs);
			memset(l, 0, sizeof(*l));
		}
	jobs_seq = 1;
}

/* The family of the route: the segment after /jobs/ of its template. */
static const jobs_family *
jobs_family_of(sb_request *req)
{
	const char *name = req->route->path + strlen("/jobs/");
	size_t		len = strcspn(name, "/");

	for (int f = 0; f < jobs_nfamilies; f++)
		if (strlen(jobs_families[f].name) == len &&
			strncmp(jobs_families[f].name, name, len) == 0)
			return &jobs_families[f];
	return &jobs_families[0];	/* cannot happen: every route names one */
}

static int
family_index(const jobs_family *fam)
{
	return (int) (fam - jobs_families);
}

/*
 * 400 on a query parameter other than the family's paging parameters, the
 * extra ones (NULL-terminated, may be NULL) and, on a route whose key
 * travels in the query, api_key.  Returns false after replying.
 */
static bool
jobs_query_check(sb_request *req, sb_response *resp, const jobs_family *fam,
				 bool paged, const char *const *extra)
{
	const char *allowed[12];
	int			n = 0;

	if (paged)
		for (const char *const *p = jobs_paging_params(fam); *p; p++)
			allowed[n++] = *p;
	for (const char *const *p = extra; p && *p; p++)
		allowed[n++] = *p;
	if (req->route->flags & SB_AUTH_QUERY)
		allowed[n++] = "api_key";
	allowed[n] = NULL;
	return sb_query_check(req, resp, allowed);
}

static const char *
job_status(const jobs_job *j, int64_t *finished_wall)
{
	int64_t		run_ms = (int64_t) (jobs_run_s * 1000.0);
	int64_t		elapsed = sb_sandbox_now_ms() - j->created_ms;

	*finished_wall = 0;
	if (elapsed < run_ms / 10)
		return "queued";
	if (elapsed < run_ms)
		return "running";
	*finished_wall = j->created_wall + sb_scaled_ms((double) run_ms);
	return j->empty_file ? "failed" : "succeeded";
}

static json_t *
job_json(const jobs_job *j)
{
	int64_t		fin;
	const char *st = job_status(j, &fin);
	char		created[40];
	char		finished[40];

	sb_iso8601(j->created_wall, created, sizeof(created));
	if (fin)
		sb_iso8601(fin, finished, sizeof(finished));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o}",
					 "id", j->id, "model", j->model, "file_id", j->file_id,
					 "status", st, "created_at", created,
					 "finished_at", fin ? json_string(finished) : json_null(),
					 "error", strcmp(st, "failed") == 0 ?
					 json_pack("{s:s, s:s}", "code", "empty_file",
							   "message", "the file holds no bytes") :
					 json_null());
}

/* GET /jobs/<family>/models */
static void
jobs_models(sb_request *req, sb_response *resp)
{
	const jobs_family *fam = jobs_family_of(req);
	json_t	   *items;
	char		bind[64];

	if (!jobs_query_check(req, resp, fam, true, NULL))
		return;
	snprintf(bind, sizeof(bind), "models|%s", fam->name);
	items = jobs_models_json(fam);
	jobs_reply_list(req, resp, fam, bind, items, "models");
	json_decref(items);
}

/* GET /jobs/<family>/history[?status=S]: oldest first */
static void
jobs_history(sb_request *req, sb_response *resp)
{
	static const char *const filters[] = {"status", NULL};
	const jobs_family *fam = jobs_family_of(req);
	jobs_list  *l = &jobs_store[req->partner->index][family_index(fam)];
	const char *status = sb_query(req, "status");
	json_t	   *items;
	char		bind[128];

	if (!jobs_query_check(req, resp, fam, true, filters))
		return;
	if (status != NULL)
	{
		bool		known = false;

		for (int i = 0; statuses[i]; i++)
			known = known || strcmp(statuses[i], status) == 0;
		if (!known)
		{
			sb_reply_error(req, resp, 400, "invalid_parameter",
						   "status must be one of queued, running, succeeded, failed");
			return;
		}
	}
	items = json_array();
	for (int i = 0; i < JOBS_SEEDED; i++)
		json_array_append_new(items, jobs_seeded_job(fam, i));
	for (int i = 0; i < l->n; i++)
		json_array_append_new(items, job_json(&l->jobs[i]));
	if (status != NULL)
	{
		json_t	   *kept = json_array();
		size_t		i;
		json_t	   *job;

		json_array_foreach(items, i, job)
		{
			if (strcmp(json_string_value(json_object_get(job, "status")), status) == 0)
				json_array_append(kept, job);
		}
		json_decref(items);
		items = kept;
	}
	snprintf(bind, sizeof(bind), "history|%s|%s|%d", fam->name,
			 status ? status : "", req->partner->index);
	jobs_reply_list(req, resp, fam, bind, items, "jobs");
	json_decref(items);
}

/*
 * POST /jobs/<family> {"file_id", "model"?, "options"?}: 201 with the job
 * and a Location header.  translate requires options.target_language.
 */
static void
jobs_create(sb_request *req, sb_response *resp)
{
	const jobs_family *fam = jobs_family_of(req);
	jobs_list  *l = &jobs_store[req->partner->index][family_index(fam)];
	json_t	   *body;
	json_t	   *file_id;
	json_t	   *model;
	json_t	   *options;
	const char *model_name = fam->models[0];
	size_t		size = 0;
	sb_file_state fst;
	jobs_job   *j;
	char		location[96];

	if (!jobs_query_check(req, resp, fam, false, NULL) ||
		(body = sb_json_body(req, resp, true)) == NULL)
		return;
	if (!json_is_object(body))
	{
		sb_reply_error(req, resp, 400, "invalid_request",
					   "body must be a JSON object with a file_id");
		goto done;
	}
	file_id = json_object_get(body, "file_id");
	model = json_object_get(body, "model");
	options = json_object_get(body, "options");
	if (file_id == NULL || json_is_null(file_id))
	{
		sb_reply_error(req, resp, 400, "missing_field", "file_id is required");
		goto done;
	}
	if (!json_is_string(file_id) || json_string_length(file_id) == 0 ||
		json_string_length(file_id) >= sizeof(j->file_id))
	{
		sb_reply_error(req, resp, 400, "invalid_field", "file_id must be a file id string");
		goto done;
	}
	if (model != NULL && !json_is_null(model))
	{
		model_name = NULL;
		for (int i = 0; json_is_string(model) && fam->models[i]; i++)
			if (strcmp(fam->models[i], json_string_value(model)) == 0)
				model_name = fam->models[i];
		if (model_name == NULL)
		{
			sb_reply_error(req, resp, 400, "unknown_model",
						   "model is not a model of the %s family (GET /jobs/%s/models)",
						   fam->name, fam->name);
			goto done;
		}
	}
	if (options != NULL && !json_is_null(options) && !json_is_object(options))
	{
		sb_reply_error(req, resp, 400, "invalid_field", "options must be an object");
		goto done;
	}
	if (strcmp(fam->name, "translate") == 0)
	{
		json_t	   *t = json_is_object(options) ? json_object_get(options, "target_language") : NULL;

		if (!json_is_string(t) || json_string_length(t) < 2 || json_string_length(t) > 8)
		{
			sb_reply_error(req, resp, 400, "missing_field",
						   "options.target_language (a language code such as \"en\") is required");
			goto done;
		}
	}
	fst = sb_files_state(req->partner->index, json_string_value(file_id), &size);
	if (fst != SB_FILE_LIVE)
	{
		sb_reply_error(req, resp, 400, fst == SB_FILE_EXPIRED ? "file_expired" : "file_not_found",
					   "file %s %s", json_string_value(file_id),
					   fst == SB_FILE_EXPIRED ? "has expired" : "does not exist");
		goto done;
	}
	if (l->n == l->cap)
	{
		int			ncap = l->cap ? l->cap * 2 : 16;
		jobs_job   *n = realloc(l->jobs, (size_t) ncap * sizeof(*n));

		if (n == NULL)
		{
			sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
			goto done;
		}
		l->jobs = n;
		l->cap = ncap;
	}
	j = &l->jobs[l->n++];
	memset(j, 0, sizeof(*j));
	snprintf(j->id, sizeof(j->id), "%s_%012" PRIx64, fam->name,
			 sb_hash(((uint64_t) req->partner->index << 40) | jobs_seq++,
					 0x6a0b5ULL + (uint64_t) family_index(fam)) & UINT64_C(0xffffffffffff));
	j->model = model_name;
	snprintf(j->file_id, sizeof(j->file_id), "%s", json_string_value(file_id));
	j->options = json_is_object(options) ? json_incref(options) : NULL;
	j->empty_file = size == 0;
	j->created_wall = sb_wall_ms();
	j->created_ms = sb_sandbox_now_ms();
	resp->applied = true;
	sb_reply_json(resp, 201, job_json(j));
	snprintf(location, sizeof(location), "/jobs/%s/%s", fam->name, j->id);
	sb_add_header(resp, "Location", location);
done:
	json_decref(body);
}

/*
 * The job {job_id} of the route's family for the partner: a created one
 * (*created set) or a seeded one (*seeded, a new reference).  Replies 404
 * and returns false when there is none.
 */
static bool
jobs_find(sb_request *req, sb_response *resp, const jobs_family *fam,
		  jobs_job **created, json_t **seeded)
{
	jobs_list  *l = &jobs_store[req->partner->index][family_index(fam)];
	const char *id = sb_param(req, "job_id");

	*created = NULL;
	*seeded = NULL;
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->jobs[i].id, id) == 0)
		{
			*created = &l->jobs[i];
			return true;
		}
	for (int i = 0; i < JOBS_SEEDED; i++)
	{
		json_t	   *job = jobs_seeded_job(fam, i);

		if (strcmp(json_string_value(json_object_get(job, "id")), id) == 0)
		{
			*seeded = job;
			return true;
		}
		json_decref(job);
	}
	sb_reply_error(req, resp, 404, "job_not_found", "job %s does not exist", id);
	return false;
}

/* GET /jobs/<family>/{job_id}: the job, its status included */
static void
jobs_status(sb_request *req, sb_response *resp)
{
	const jobs_family *fam = jobs_family_of(req);
	jobs_job   *j;
	json_t	   *seeded;

	if (!jobs_query_check(req, resp, fam, false, NULL) ||
		!jobs_find(req, resp, fam, &j, &seeded))
		return;
	sb_reply_json(resp, 200, j ? job_json(j) : seeded);
}

/*
 * GET /jobs/<family>/{job_id}/result: 200 with the family's result once
 * succeeded; 409 job_not_finished before, 409 job_failed after a failure.
 */
static void
jobs_result(sb_request *req, sb_response *resp)
{
	const jobs_family *fam = jobs_family_of(req);
	jobs_job   *j;
	json_t	   *seeded;
	json_t	   *job;
	const char *st;

	if (!jobs_query_check(req, resp, fam, false, NULL) ||
		!jobs_find(req, resp, fam, &j, &seeded))
		return;
	job = j ? job_json(j) : seeded;
	st = json_string_value(json_object_get(job, "status"));
	if (strcmp(st, "succeeded") == 0)
		sb_reply_json(resp, 200, jobs_result_json(fam, sb_param(req, "job_id"),
												  j ? j->options : NULL));
	else if (strcmp(st, "failed") == 0)
		sb_reply_error(req, resp, 409, "job_failed", "job %s failed: %s",
					   sb_param(req, "job_id"),
					   json_string_value(json_object_get(json_object_get(job, "error"), "message")));
	else
		sb_reply_error(req, resp, 409, "job_not_finished", "job %s is %s; read its status until it is succeeded",
					   sb_param(req, "job_id"), st);
	json_decref(job);
}

/* Knob jobs.run_s: sandbox seconds from creation to the end of a job. */
static int
jobs_set(const char *name, json_t *value)
{
	if (strcmp(name, "jobs.run_s") != 0)
		return 0;
	if (!json_is_number(value) || json_number_value(value) <= 0)
		return -1;
	jobs_run_s = json_number_value(value);
	return 1;
}

static void
jobs_get(json_t *out)
{
	double		v = jobs_run_s;

	json_object_set_new(out, "jobs.run_s", v == (double) (json_int_t) v ?
						json_integer((json_int_t) v) : json_real(v));
}

/*
 * A family's five routes; the list routes come before /{job_id}, which
 * would match them too.  History and creation have rate-limit rows of
 * their own (core/ratelimit.c).
 */
#define JOBS_ROUTES(F, AUTH) \
	{"GET", "/jobs/" F "/models", AUTH, SB_STYLE_PLAIN, NULL, jobs_models}, \
	{"GET", "/jobs/" F "/history", AUTH, SB_STYLE_PLAIN, "GET /jobs/" F "/history", jobs_history}, \
	{"POST", "/jobs/" F, AUTH, SB_STYLE_PLAIN, "POST /jobs/" F, jobs_create}, \
	{"GET", "/jobs/" F "/{job_id}", AUTH, SB_STYLE_PLAIN, NULL, jobs_status}, \
	{"GET", "/jobs/" F "/{job_id}/result", AUTH, SB_STYLE_PLAIN, NULL, jobs_result}

static const sb_route jobs_routes[] = {
	JOBS_ROUTES("ocr", SB_AUTH),
	JOBS_ROUTES("translate", SB_AUTH_OAUTH2),
	JOBS_ROUTES("summarize", SB_AUTH),
	JOBS_ROUTES("classify", SB_AUTH_QUERY),
	JOBS_ROUTES("extract", SB_AUTH),
	JOBS_ROUTES("redact", SB_AUTH),
	{NULL}
};

const sb_service sb_service_jobs = {
	.name = "jobs",
	.routes = jobs_routes,
	.reset = jobs_reset,
	.set = jobs_set,
	.get = jobs_get,
};
