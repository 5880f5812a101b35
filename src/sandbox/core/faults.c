/*-------------------------------------------------------------------------
 * faults.c
 *	  Fault injection: rules that make a route slow, fail, or misbehave on
 *	  the wire, set at start (--fault) or at run time (/_sandbox/faults).
 *
 * A rule is (route, kind, value, rate, count): it applies to requests of
 * the route ("*" for all, "METHOD /template", or "/template" for any
 * method) with probability rate, at most count times (-1 = no bound).  A
 * count lets a test say "fail the next two requests, then recover".
 * Kinds and where they act:
 *	 latency=MS      wait MS real ms before answering
 *	 error[=STATUS]  answer STATUS (default 503) instead of running the route
 *	 429[=SECONDS]   answer 429 instead; with a value, send Retry-After
 *	 malformed       answer 200 with a body that is not valid JSON
 *	 truncate        send half the body, then close (Content-Length is full)
 *	 reset           send half the body, then reset the connection (RST)
 *	 drip=MS         send the body 16 bytes at a time, MS ms apart
 *	 drop_after_apply  run the route, then close without answering
 *	 corrupt_cursor  run the route, then spoil pagination.next_cursor (and
 *	                 data.<list>.pagination.next_cursor of a nested list), so
 *	                 the client's next page is refused as an invalid cursor
 * A rule may also skip its first N matching requests ("skip"), so a test
 * can let a scan's first page through and fail the second.
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum fkind
{
	F_LATENCY, F_ERROR, F_429, F_MALFORMED, F_TRUNCATE, F_RESET, F_DRIP, F_DROP,
	F_CURSOR
} fkind;

static const char *const kind_names[] = {
	"latency", "error", "429", "malformed", "truncate", "reset", "drip",
	"drop_after_apply", "corrupt_cursor"
};

typedef struct frule
{
	char	   *route;
	fkind		kind;
	int64_t		value;			/* -1 = not given */
	double		rate;
	int64_t		count;			/* remaining; -1 = unlimited */
	int64_t		skip;			/* matching requests still to let through */
	int64_t		hits;
	struct frule *next;
} frule;

static frule *rules = NULL;
static frule **rules_tail = &rules;
static pthread_mutex_t flock = PTHREAD_MUTEX_INITIALIZER;

static bool
route_matches(const char *pattern, const char *method, const char *route)
{
	size_t		mlen = strlen(method);

	if (strcmp(pattern, "*") == 0)
		return true;
	if (pattern[0] == '/')
		return strcmp(pattern, route) == 0;
	return strncmp(pattern, method, mlen) == 0 && pattern[mlen] == ' ' &&
		strcmp(pattern + mlen + 1, route) == 0;
}

static bool
add_rule(const char *route, const char *kind, int64_t value, double rate,
		 int64_t count, int64_t skip, char *err, size_t errlen)
{
	frule	   *r;
	int			k = -1;

	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (strcmp(kind, kind_names[i]) == 0)
			k = (int) i;
	if (k < 0)
	{
		snprintf(err, errlen, "unknown fault kind \"%s\"", kind);
		return false;
	}
	if (rate < 0 || rate > 1)
	{
		snprintf(err, errlen, "rate must be between 0 and 1");
		return false;
	}
	if ((k == F_LATENCY || k == F_DRIP) && value < 0)
	{
		snprintf(err, errlen, "fault \"%s\" needs a value in milliseconds", kind);
		return false;
	}
	if (k == F_ERROR && value >= 0 && (value < 400 || value > 599))
	{
		snprintf(err, errlen, "error status must be from 400 to 599");
		return false;
	}
	r = calloc(1, sizeof(frule));
	r->route = strdup(route);
	r->kind = (fkind) k;
	r->value = value;
	r->rate = rate;
	r->count = count;
	r->skip = skip < 0 ? 0 : skip;
	pthread_mutex_lock(&flock);
	*rules_tail = r;
	rules_tail = &r->next;
	pthread_mutex_unlock(&flock);
	return true;
}

/* ROUTE:KIND[=VALUE][,rate=R][,count=N][,skip=N] */
bool
sb_fault_add_spec(const char *spec, char *err, size_t errlen)
{
	char	   *copy = strdup(spec);
	char	   *colon = strrchr(copy, ':');
	char	   *kind,
			   *opt,
			   *save = NULL;
	int64_t		value = -1;
	double		rate = 1.0;
	int64_t		count = -1;
	int64_t		skip = 0;
	bool		ok;

	if (colon == NULL)
	{
		snprintf(err, errlen, "fault \"%s\" is not ROUTE:KIND[=VALUE][,rate=R][,count=N]", spec);
		free(copy);
		return false;
	}
	*colon = '\0';
	kind = strtok_r(colon + 1, ",", &save);
	if (kind == NULL)
	{
		snprintf(err, errlen, "fault \"%s\" has no kind", spec);
		free(copy);
		return false;
	}
	if (strchr(kind, '='))
	{
		char	   *eq = strchr(kind, '=');

		*eq = '\0';
		value = atoll(eq + 1);
	}
	while ((opt = strtok_r(NULL, ",", &save)) != NULL)
	{
		if (strncmp(opt, "rate=", 5) == 0)
			rate = atof(opt + 5);
		else if (strncmp(opt, "count=", 6) == 0)
			count = atoll(opt + 6);
		else if (strncmp(opt, "skip=", 5) == 0)
			skip = atoll(opt + 5);
		else
		{
			snprintf(err, errlen, "unknown fault option \"%s\"", opt);
			free(copy);
			return false;
		}
	}
	ok = add_rule(copy, kind, value, rate, count, skip, err, errlen);
	free(copy);
	return ok;
}

/* {"route": "...", "kind": "...", "value": N, "rate": R, "count": N} */
bool
sb_fault_add_json(json_t *rule, char *err, size_t errlen)
{
	json_t	   *route = json_object_get(rule, "route");
	json_t	   *kind = json_object_get(rule, "kind");
	json_t	   *value = json_object_get(rule, "value");
	json_t	   *rate = json_object_get(rule, "rate");
	json_t	   *count = json_object_get(rule, "count");
	json_t	   *skip = json_object_get(rule, "skip");

	if (!json_is_object(rule) || !json_is_string(kind) ||
		(route && !json_is_string(route)) ||
		(value && !json_is_integer(value) && !json_is_null(value)) ||
		(rate && !json_is_number(rate)) || (count && !json_is_integer(count)) ||
		(skip && !json_is_integer(skip)))
	{
		snprintf(err, errlen, "a fault is {\"route\": string, \"kind\": string, \"value\": integer, \"rate\": number, \"count\": integer, \"skip\": integer}");
		return false;
	}
	return add_rule(route ? json_string_value(route) : "*", json_string_value(kind),
					json_is_integer(value) ? json_integer_value(value) : -1,
					rate ? json_number_value(rate) : 1.0,
					count ? json_integer_value(count) : -1,
					skip ? json_integer_value(skip) : 0, err, errlen);
}

void
sb_faults_plan(const char *method, const char *route, sb_fault_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->retry_after = -1;
	pthread_mutex_lock(&flock);
	for (frule *r = rules; r; r = r->next)
	{
		if (r->count == 0 || !route_matches(r->route, method, route))
			continue;
		if (r->skip > 0)
		{
			r->skip--;
			continue;
		}
		if (r->rate < 1.0 && sb_rand01() >= r->rate)
			continue;
		if (r->count > 0)
			r->count--;
		r->hits++;
		switch (r->kind)
		{
			case F_LATENCY:
				plan->latency_ms += r->value;
				break;
			case F_ERROR:
				plan->error_status = r->value > 0 ? (int) r->value : 503;
				break;
			case F_429:
				plan->inject_429 = true;
				plan->retry_after = r->value;
				break;
			case F_MALFORMED:
				plan->malformed = true;
				break;
			case F_TRUNCATE:
				plan->truncate = true;
				break;
			case F_RESET:
				plan->reset = true;
				break;
			case F_DRIP:
				plan->drip_ms = r->value;
				break;
			case F_DROP:
				plan->drop_after_apply = true;
				break;
			case F_CURSOR:
				plan->corrupt_cursor = true;
				break;
		}
	}
	pthread_mutex_unlock(&flock);
}

void
sb_faults_clear(void)
{
	pthread_mutex_lock(&flock);
	while (rules)
	{
		frule	   *r = rules;

		rules = r->next;
		free(r->route);
		free(r);
	}
	rules_tail = &rules;
	pthread_mutex_unlock(&flock);
}

json_t *
sb_faults_json(void)
{
	json_t	   *arr = json_array();

	pthread_mutex_lock(&flock);
	for (frule *r = rules; r; r = r->next)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:o, s:f, s:I, s:I, s:I}",
											 "route", r->route,
											 "kind", kind_names[r->kind],
											 "value", r->value >= 0 ? json_integer(r->value) : json_null(),
											 "rate", r->rate,
											 "count", (json_int_t) r->count,
											 "skip", (json_int_t) r->skip,
											 "hits", (json_int_t) r->hits));
	pthread_mutex_unlock(&flock);
	return arr;
}
