/*-------------------------------------------------------------------------
 *
 * ratelimit_int.h
 *		  Internals shared by ratelimit.c, ratelimit_rules.c and
 *		  ratelimit_views.c, and by no other file.
 *
 * The public side of the limiter is in partner_svc.h; this header holds
 * what the three files of the module share among themselves: the rule a
 * request is limited by, and the layout of the shared memory that the
 * views read.  The locking rules are in the header of ratelimit.c.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/ratelimit_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_RATELIMIT_INT_H
#define PSVC_RATELIMIT_INT_H

#include "lib/ilist.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "partner_svc.h"

/* Buckets per window: the limiter lets through BUCKETS/(BUCKETS+1) of it. */
#define PSVC_RL_BUCKETS			60
#define PSVC_RL_RING			(PSVC_RL_BUCKETS + 1)

/* "METHOD /route/{template}" and a resource id, with their NULs. */
#define PSVC_RL_ROUTE_LEN		96
#define PSVC_RL_RESOURCE_LEN	64

/* The resource of the key that ids share when the table is full. */
#define PSVC_RL_OVERFLOW		"*"

/* ---- ratelimit_rules.c ---- */

/* What limits one request: the result of psvc_rl_rule(). */
typedef struct PsvcRlRule
{
	int			limit;			/* requests per window; 0 = unlimited */
	const char *row;			/* the row as the table or override writes
								 * it, for messages */
	bool		overridden;		/* the limit comes from option rate_limits */
	int			resource_segment;	/* path segment of the request's route
									 * holding the resource id, or -1 */
} PsvcRlRule;

/*
 * The limit of method + route (a template as sent, e.g.
 * "/public/orders/{id}") on server: the server's override if it has one,
 * else the table's row for its service and tier, else unlimited.
 */
extern void psvc_rl_rule(const PsvcServer *server, const char *method,
						 const char *route, PsvcRlRule *rule);

/* ---- ratelimit.c: shared memory ---- */

/* A key of the limiter: one budget. */
typedef struct PsvcRlKey
{
	Oid			dbid;
	Oid			serverid;
	char		route[PSVC_RL_ROUTE_LEN];	/* "GET /public/orders/{id}" */
	char		resource[PSVC_RL_RESOURCE_LEN];	/* "" on plain routes */
} PsvcRlKey;

/*
 * The budget of one key.  counts[] is a ring of the bucket counts of the
 * last RING buckets ending with bucket "head" (bucket b covers monotonic
 * time [b * width_us, (b + 1) * width_us)); total is their sum.  A request
 * is counted in the bucket of the time its attempt ended; until then it is
 * in_flight.  All fields but key are protected by mutex.
 */
typedef struct PsvcRlEntry
{
	PsvcRlKey	key;
	slock_t		mutex;
	int32		limit;			/* as of the latest acquire */
	int32		in_flight;
	int32		total;
	int32		counts[PSVC_RL_RING];
	int64		width_us;
	int64		head;
	int64		blocked_until;	/* after a 429: monotonic microseconds */
} PsvcRlEntry;

/* A row of partner_svc.stats: one server and route. */
typedef struct PsvcStatsKey
{
	Oid			dbid;
	Oid			serverid;
	char		route[PSVC_RL_ROUTE_LEN];
} PsvcStatsKey;

typedef struct PsvcStatsCounters
{
	int64		requests;		/* attempts sent, retries included */
	int64		retries;		/* attempts followed by another attempt */
	int64		ok;				/* 2xx */
	int64		client_errors;	/* 4xx other than 429 */
	int64		rate_limited;	/* 429 */
	int64		server_errors;	/* 5xx */
	int64		other_status;	/* 1xx, 3xx, anything else */
	int64		failures;		/* no response: connection, timeout, ... */
	int64		bytes_sent;
	int64		bytes_received;
	double		total_time;		/* ms, attempts */
	double		max_time;
	int64		waits;			/* attempts that waited for budget */
	double		wait_time;		/* ms */
} PsvcStatsCounters;

typedef struct PsvcStatsEntry
{
	PsvcStatsKey key;
	slock_t		mutex;
	PsvcStatsCounters c;
} PsvcStatsEntry;

/* The fixed part of the shared state. */
typedef struct PsvcRlShared
{
	LWLock	   *lock;			/* the key table */
	LWLock	   *stats_lock;		/* the stats table */
	int			resource_keys;	/* keys with a resource id (lock) */
	TimestampTz stats_since;	/* last reset (stats_lock) */
} PsvcRlShared;

/*
 * A request's dealings with the limiter (partner_svc.h): allocated in the
 * transfer's context by psvc_rl_prepare.
 */
struct PsvcRlLease
{
	dlist_node	node;			/* in the backend's held list while held */
	bool		held;			/* one unit of entry is in flight */
	PsvcRlEntry *entry;			/* while held */
	int			limit;			/* 0: the route is not limited */
	const char *row;			/* the rule's row, for messages */
	bool		overridden;
	const char *tier;
	const char *servername;
	const char *route;			/* "METHOD /route" */
	bool		has_resource;
	PsvcRlKey	key;
	PsvcStatsKey skey;
	bool		attempt_waited;	/* the current attempt waited for budget */
	double		attempt_wait_ms;
	double		wait_ms;		/* all attempts */
};

/* Settings (ratelimit.c) */
extern bool psvc_rl_enabled;
extern int	psvc_rl_window_ms;
extern int	psvc_rl_max_wait_ms;
extern int	psvc_rl_max_keys;
extern int	psvc_rl_stats_max;

/* NULL unless the library was preloaded. */
extern PsvcRlShared *psvc_rl_shared;
extern HTAB *psvc_rl_key_table;
extern HTAB *psvc_rl_stats_table;

/* Monotonic clock, microseconds; the same in every process. */
extern int64 psvc_rl_now(void);
/* A monotonic time as a timestamp of the wall clock. */
extern TimestampTz psvc_rl_timestamp(int64 mono_us);
/* Brings e's ring up to now (caller holds e->mutex). */
extern void psvc_rl_advance(PsvcRlEntry *e, int64 now);
/*
 * When one more request of e will be allowed (0: now), and when e's usage
 * drops to zero, counting requests in flight as if they ended now; e is
 * advanced to now and locked by the caller.
 */
extern int64 psvc_rl_frees_at(const PsvcRlEntry *e, int64 now);
extern int64 psvc_rl_resets_at(const PsvcRlEntry *e);

/*
 * Takes one unit of the lease's key when its budget allows: returns the
 * entry the unit is held on, else NULL with *frees_at (monotonic time
 * when to try again) and *blocked (by a 429).  Raises 53400 when the key
 * table has no room.
 */
extern PsvcRlEntry *psvc_rl_take(PsvcRlLease *lease, int64 now,
								 int64 *frees_at, bool *blocked);
/* Ends a unit held on e now; a 429 blocks the key instead of counting. */
extern void psvc_rl_put(PsvcRlEntry *e, bool got_429, long hold_ms);
/* The stats row that counts routes without a row of their own. */
extern void psvc_rl_stats_overflow_key(PsvcStatsKey *key);

#endif							/* PSVC_RATELIMIT_INT_H */
