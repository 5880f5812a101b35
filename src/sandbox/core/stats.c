/*-------------------------------------------------------------------------
 * stats.c
 *	  What the sandbox was asked: counters per method and route template,
 *	  and the most recent requests with their query strings, so a test can
 *	  check what a SQL statement really sent.
 *
 * Counters are unbounded in routes (the route tables are finite); the
 * request log is a ring of the last RECENT_MAX requests, numbered by a
 * sequence that never restarts except on /_sandbox/stats/reset.  Each
 * logged request says which credentials it carried (server.c's
 * auth_kinds: "bearer:key", "bearer:token", "query:api_key", ...), never
 * their values, so a test can prove which header or parameter a client
 * sent.
 *
 * Concurrency per route: a request is in flight from when it has passed
 * the checks of path and key (before any injected latency) until its
 * answer is made, just before it is recorded (server.c calls sb_stats_enter and
 * sb_stats_leave); max_in_flight is the most of one route in flight at
 * once since the last reset.  A reset starts a new epoch, and a request
 * that entered before it leaves without touching the new counters.
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECENT_MAX 5000

typedef struct route_stat
{
	char	   *method;
	char	   *route;
	int64_t		count;
	int64_t		by_class[6];	/* 1xx..5xx by status/100, [0] = dropped */
	int64_t		status_429;
	int64_t		bytes_in;
	int64_t		bytes_out;
	int			in_flight;		/* requests of the route being handled now */
	int			max_in_flight;	/* the most at once since the last reset */
	struct route_stat *next;
} route_stat;

typedef struct recent
{
	int64_t		seq;
	int64_t		at_ms;
	char	   *method;
	char	   *route;
	char	   *path;
	char	   *query;
	char	   *auth;			/* the credentials the request carried */
	int			status;
	int			partner;
} recent;

static pthread_mutex_t slock = PTHREAD_MUTEX_INITIALIZER;
static route_stat *stats = NULL;
static recent ring[RECENT_MAX];
static int64_t next_seq = 1;
static int64_t epoch = 1;		/* counts resets; see sb_stats_enter */

static void
recent_clear(recent *r)
{
	free(r->method);
	free(r->route);
	free(r->path);
	free(r->query);
	free(r->auth);
	memset(r, 0, sizeof(*r));
}

/* The counters of method and route, made if new; the caller holds slock. */
static route_stat *
route_stat_of(const char *method, const char *route)
{
	route_stat *s;

	for (s = stats; s; s = s->next)
		if (strcmp(s->method, method) == 0 && strcmp(s->route, route) == 0)
			return s;
	s = calloc(1, sizeof(route_stat));
	s->method = strdup(method);
	s->route = strdup(route);
	s->next = stats;
	stats = s;
	return s;
}

/*
 * A request of method and route is being handled from now on; returns the
 * epoch to hand to sb_stats_leave when it is answered.
 */
int64_t
sb_stats_enter(const char *method, const char *route)
{
	route_stat *s;
	int64_t		e;

	pthread_mutex_lock(&slock);
	s = route_stat_of(method, route);
	s->in_flight++;
	if (s->in_flight > s->max_in_flight)
		s->max_in_flight = s->in_flight;
	e = epoch;
	pthread_mutex_unlock(&slock);
	return e;
}

/* The request that sb_stats_enter returned entered_epoch for is answered. */
void
sb_stats_leave(const char *method, const char *route, int64_t entered_epoch)
{
	pthread_mutex_lock(&slock);
	if (entered_epoch == epoch)
	{
		route_stat *s = route_stat_of(method, route);

		if (s->in_flight > 0)
			s->in_flight--;
	}
	pthread_mutex_unlock(&slock);
}

void
sb_stats_record(const char *method, const char *route, const char *path,
				const char *query, const char *auth, int status,
				const sb_partner *partner, size_t bytes_in, size_t bytes_out)
{
	route_stat *s;
	recent	   *r;

	pthread_mutex_lock(&slock);
	s = route_stat_of(method, route);
	s->count++;
	s->by_class[(status >= 100 && status < 600) ? status / 100 : 0]++;
	if (status == 429)
		s->status_429++;
	s->bytes_in += (int64_t) bytes_in;
	s->bytes_out += (int64_t) bytes_out;

	r = &ring[next_seq % RECENT_MAX];
	recent_clear(r);
	r->seq = next_seq++;
	r->at_ms = sb_wall_ms();
	r->method = strdup(method);
	r->route = strdup(route);
	r->path = strdup(path);
	r->query = strdup(query ? query : "");
	r->auth = strdup(auth ? auth : "none");
	r->status = status;
	r->partner = partner ? partner->index : -1;
	pthread_mutex_unlock(&slock);
}

json_t *
sb_stats_json(void)
{
	json_t	   *arr = json_array();

	pthread_mutex_lock(&slock);
	for (route_stat *s = stats; s; s = s->next)
		json_array_append_new(arr,
							  json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i}",
										"method", s->method, "route", s->route,
										"count", (json_int_t) s->count,
										"2xx", (json_int_t) s->by_class[2],
										"3xx", (json_int_t) s->by_class[3],
										"4xx", (json_int_t) s->by_class[4],
										"5xx", (json_int_t) s->by_class[5],
										"429", (json_int_t) s->status_429,
										"dropped", (json_int_t) s->by_class[0],
										"bytes_in", (json_int_t) s->bytes_in,
										"bytes_out", (json_int_t) s->bytes_out,
										"max_in_flight", s->max_in_flight));
	pthread_mutex_unlock(&slock);
	return json_pack("{s:o}", "routes", arr);
}

static bool
filter_ok(const recent *r, const char *route_filter)
{
	char		both[600];

	if (route_filter == NULL || *route_filter == '\0')
		return true;
	snprintf(both, sizeof(both), "%s %s", r->method, r->route);
	return strcmp(route_filter, r->route) == 0 || strcmp(route_filter, both) == 0;
}

json_t *
sb_requests_json(const char *route_filter)
{
	json_t	   *arr = json_array();
	int64_t		first = next_seq - RECENT_MAX;

	pthread_mutex_lock(&slock);
	for (int64_t seq = first < 1 ? 1 : first; seq < next_seq; seq++)
	{
		recent	   *r = &ring[seq % RECENT_MAX];

		if (r->seq != seq || !filter_ok(r, route_filter))
			continue;
		json_array_append_new(arr,
							  json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:i, s:i, s:s}",
										"seq", (json_int_t) r->seq,
										"at_ms", (json_int_t) r->at_ms,
										"method", r->method, "route", r->route,
										"path", r->path, "query", r->query,
										"status", r->status, "partner", r->partner,
										"auth", r->auth));
	}
	pthread_mutex_unlock(&slock);
	return json_pack("{s:o}", "requests", arr);
}

/* Appends to a growing malloc'd buffer. */
static void
buf_add(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t		n = strlen(s);

	if (*len + n + 1 > *cap)
	{
		*cap = (*len + n + 1) * 2;
		*buf = realloc(*buf, *cap);
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
}

/*
 * Tab-separated forms, for readers without a JSON parser (COPY ... FROM
 * PROGRAM in a pg_regress test).  Fields never contain tabs or newlines:
 * paths and queries are as sent on the request line.
 */
char *
sb_requests_tsv(const char *route_filter, bool with_auth, size_t *len)
{
	char	   *buf = NULL;
	size_t		cap = 0;
	char		line[8192];
	int64_t		first = next_seq - RECENT_MAX;

	*len = 0;
	buf_add(&buf, len, &cap, "");
	pthread_mutex_lock(&slock);
	for (int64_t seq = first < 1 ? 1 : first; seq < next_seq; seq++)
	{
		recent	   *r = &ring[seq % RECENT_MAX];

		if (r->seq != seq || !filter_ok(r, route_filter))
			continue;
		snprintf(line, sizeof(line), "%lld\t%s\t%s\t%s\t%s\t%d%s%s\n",
				 (long long) r->seq, r->method, r->route, r->path, r->query, r->status,
				 with_auth ? "\t" : "", with_auth ? r->auth : "");
		buf_add(&buf, len, &cap, line);
	}
	pthread_mutex_unlock(&slock);
	return buf;
}

char *
sb_stats_tsv(size_t *len)
{
	char	   *buf = NULL;
	size_t		cap = 0;
	char		line[1024];

	*len = 0;
	buf_add(&buf, len, &cap, "");
	pthread_mutex_lock(&slock);
	for (route_stat *s = stats; s; s = s->next)
	{
		snprintf(line, sizeof(line), "%s\t%s\t%lld\t%lld\t%lld\t%lld\t%d\n",
				 s->method, s->route, (long long) s->count,
				 (long long) s->by_class[4], (long long) s->by_class[5],
				 (long long) s->status_429, s->max_in_flight);
		buf_add(&buf, len, &cap, line);
	}
	pthread_mutex_unlock(&slock);
	return buf;
}

void
sb_stats_reset(void)
{
	pthread_mutex_lock(&slock);
	while (stats)
	{
		route_stat *s = stats;

		stats = s->next;
		free(s->method);
		free(s->route);
		free(s);
	}
	for (int i = 0; i < RECENT_MAX; i++)
		recent_clear(&ring[i]);
	next_seq = 1;
	epoch++;
	pthread_mutex_unlock(&slock);
}
