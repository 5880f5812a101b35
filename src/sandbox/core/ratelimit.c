/*-------------------------------------------------------------------------
 * ratelimit.c
 *	  The partner document's rate-limit table, enforced the way the
 *	  document describes: per partner, per route, per resource id on
 *	  {id} and {unique_id} routes, in fixed windows.
 *
 * Windows are fixed and aligned at an offset the client cannot know
 * (rl_offset_ms, by default derived from the seed), so a client that
 * assumes wall-clock minutes gets caught.  Counting uses sandbox time, so
 * --time-scale shrinks the minute like every other duration.  A request
 * answered 429 does not count.  The table is data: a row per route with
 * the three tiers' limits; knobs "rate_limit.<row>" override a row for
 * every tier.
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rl_row
{
	const char *row;
	int64_t		limit[3];		/* standard, premium, enterprise */
	int64_t		override;		/* -1 = none */
} rl_row;

/*
 * From 000's Limits table.  Rows marked "our choice" have no row there:
 * the validate endpoint is rate limited without a published threshold, and
 * generation answers 429 "over a small limit" that the document does not
 * give.  The nested-list details of the movie document (which shows no
 * limits at all) have rows of our own too, counted per route.
 */
static rl_row rows[] = {
	{"GET /products", {50, 100, 300}, -1},
	{"GET /products/status", {25, 100, 300}, -1},
	{"GET /users", {100, 500, 1000}, -1},
	{"GET /users/{id}/orders", {50, 200, 1000}, -1},
	{"GET /users/{id}/vehicles", {50, 200, 1000}, -1},
	{"POST /orders", {200, 1000, 2500}, -1},
	{"GET /orders", {100, 500, 1000}, -1},
	{"GET /orders/{id}", {25, 50, 100}, -1},
	{"GET /orders/{id}/status", {15, 30, 50}, -1},
	{"POST /orders/{id}/cancel-pending", {25, 100, 250}, -1},
	{"POST /orders/{id}/cancel-deferred", {25, 100, 250}, -1},
	{"POST /validate-vehicle", {250, 1000, 2500}, -1},
	{"POST /transaction/create", {50, 250, 1000}, -1},
	{"GET /transactions", {100, 500, 1000}, -1},
	{"GET /transaction/{unique_id}/status", {100, 300, 1000}, -1},
	{"GET /transaction/{unique_id}/fee", {50, 200, 500}, -1},
	{"GET /transaction/{id}/data", {100, 300, 1000}, -1},
	{"POST /transaction/{id}/cancel", {25, 100, 250}, -1},
	{"/mcp", {100, 300, 1000}, -1},
	/* our choice: not in the document's table */
	{"POST /orders/validate", {100, 500, 1000}, -1},
	{"POST /v1/generate", {10, 30, 100}, -1},
	{"GET /v1/key/validate", {30, 60, 120}, -1},
	/* our choice: docs/sandbox-movies.md shows no rate limits; nested-list details */
	{"GET /concerts/{concert}", {100, 300, 1000}, -1},
	{"GET /awards/{award}", {100, 300, 1000}, -1},
	{"GET /books/{book}", {100, 300, 1000}, -1},
	{"GET /collections/{type}/{collection}", {100, 300, 1000}, -1},
	/* our choice: the job families (docs/sandbox-jobs.md), per partner and route */
	{"GET /jobs/ocr/history", {100, 300, 1000}, -1},
	{"GET /jobs/translate/history", {100, 300, 1000}, -1},
	{"GET /jobs/summarize/history", {100, 300, 1000}, -1},
	{"GET /jobs/classify/history", {100, 300, 1000}, -1},
	{"GET /jobs/extract/history", {100, 300, 1000}, -1},
	{"GET /jobs/redact/history", {100, 300, 1000}, -1},
	{"POST /jobs/ocr", {30, 100, 300}, -1},
	{"POST /jobs/translate", {30, 100, 300}, -1},
	{"POST /jobs/summarize", {30, 100, 300}, -1},
	{"POST /jobs/classify", {30, 100, 300}, -1},
	{"POST /jobs/extract", {30, 100, 300}, -1},
	{"POST /jobs/redact", {30, 100, 300}, -1},
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

typedef struct rl_counter
{
	char	   *key;			/* "partner|row|resource" */
	int64_t		window;			/* index of the window counted */
	int64_t		used;
	struct rl_counter *next;
} rl_counter;

#define NBUCKETS 1024
static rl_counter *buckets[NBUCKETS];
static pthread_mutex_t rl_lock = PTHREAD_MUTEX_INITIALIZER;

static rl_row *
find_row(const char *name)
{
	for (size_t i = 0; i < NROWS; i++)
		if (strcmp(rows[i].row, name) == 0)
			return &rows[i];
	return NULL;
}

void
sb_rl_init(void)
{
	if (sb_cfg.rl_offset_ms < 0)
		sb_cfg.rl_offset_ms = (int64_t) (sb_hash(0x0ff5e7ULL, 0) % (uint64_t) sb_cfg.rl_window_ms);
}

/*
 * The resource id of an {id} / {unique_id} route; NULL for plain routes.
 * The row name decides, so a route counts per id exactly when the
 * document's table says "for the same {id}".
 */
static const char *
resource_of(sb_request *req, const char *row)
{
	if (strstr(row, "{id}"))
		return sb_param(req, "id");
	if (strstr(row, "{unique_id}"))
		return sb_param(req, "unique_id");
	return NULL;
}

void
sb_rl_check(sb_request *req, sb_rl_verdict *v)
{
	rl_row	   *row;
	const char *res;
	char		key[600];
	uint64_t	h;
	rl_counter *c;
	int64_t		now,
				win,
				shifted;

	v->limited = false;
	v->reset_in_real_ms = 0;
	v->limit = 0;
	if (!sb_cfg.rl_enabled || req->route->rl_row == NULL || req->partner == NULL)
		return;
	row = find_row(req->route->rl_row);
	if (row == NULL)
		return;
	res = resource_of(req, row->row);
	snprintf(key, sizeof(key), "%d|%s|%s", req->partner->index, row->row, res ? res : "");
	v->limit = row->override >= 0 ? row->override : row->limit[req->partner->tier];

	now = sb_sandbox_now_ms();
	shifted = now - sb_cfg.rl_offset_ms + 1000 * sb_cfg.rl_window_ms;	/* keep >= 0 */
	win = shifted / sb_cfg.rl_window_ms;
	v->reset_in_real_ms = sb_scaled_ms((double) (sb_cfg.rl_window_ms - shifted % sb_cfg.rl_window_ms));

	h = sb_hash_str(key, 0) % NBUCKETS;
	pthread_mutex_lock(&rl_lock);
	for (c = buckets[h]; c; c = c->next)
		if (strcmp(c->key, key) == 0)
			break;
	if (c == NULL)
	{
		c = calloc(1, sizeof(rl_counter));
		c->key = strdup(key);
		c->window = win;
		c->next = buckets[h];
		buckets[h] = c;
	}
	if (c->window != win)
	{
		c->window = win;
		c->used = 0;
	}
	if (c->used >= v->limit)
		v->limited = true;
	else
		c->used++;
	pthread_mutex_unlock(&rl_lock);
}

/* Knob "rate_limit.<row>": an integer for every tier, or null to restore. */
int
sb_rl_set(const char *name, json_t *value)
{
	rl_row	   *row;

	if (strncmp(name, "rate_limit.", 11) != 0)
		return 0;
	row = find_row(name + 11);
	if (row == NULL)
		return -1;
	if (json_is_null(value))
		row->override = -1;
	else if (json_is_integer(value) && json_integer_value(value) >= 0)
		row->override = json_integer_value(value);
	else
		return -1;
	return 1;
}

void
sb_rl_get(json_t *out)
{
	json_t	   *tab = json_object();

	for (size_t i = 0; i < NROWS; i++)
		json_object_set_new(tab, rows[i].row,
							json_pack("{s:I, s:I, s:I, s:o}",
									  "standard", (json_int_t) rows[i].limit[0],
									  "premium", (json_int_t) rows[i].limit[1],
									  "enterprise", (json_int_t) rows[i].limit[2],
									  "override", rows[i].override >= 0 ?
									  json_integer(rows[i].override) : json_null()));
	json_object_set_new(out, "rate_limits", tab);
}

void
sb_rl_reset(void)
{
	pthread_mutex_lock(&rl_lock);
	for (int i = 0; i < NBUCKETS; i++)
	{
		while (buckets[i])
		{
			rl_counter *c = buckets[i];

			buckets[i] = c->next;
			free(c->key);
			free(c);
		}
	}
	pthread_mutex_unlock(&rl_lock);
}
