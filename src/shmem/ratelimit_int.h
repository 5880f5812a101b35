/*-------------------------------------------------------------------------
 *
 * ratelimit_int.h
 *		  Internals shared by the files of the ratelimit module
 *		  (ratelimit*.c, quota*.c), and by no other file.
 *
 * The public side of the limiter is in ratelimit.h; this header holds
 * what the files of the module share among themselves: the rule a
 * request is limited by, the clock, the layout of the shared memory that
 * the views read, and the fleet quota.  The locking rules are in the
 * header of ratelimit.c.  Layers, lowest first: ratelimit_clock.c;
 * ratelimit_rules.c; quota.c; ratelimit.c; quota_exchange.c,
 * ratelimit_request.c, ratelimit_views.c.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/ratelimit_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_RATELIMIT_INT_H
#define PSVC_RATELIMIT_INT_H

#include "lib/ilist.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "ratelimit.h"

struct PsvcServer;

/* Buckets per window: the limiter lets through BUCKETS/(BUCKETS+1) of it. */
#define PSVC_RL_BUCKETS			60
#define PSVC_RL_RING			(PSVC_RL_BUCKETS + 1)

/* "METHOD /route/{template}" and a resource id, with their NULs. */
#define PSVC_RL_ROUTE_LEN		96
#define PSVC_RL_RESOURCE_LEN	64

/* A partner account's digest with its NUL (PSVC_ACCOUNT_LEN, options.h). */
#define PSVC_RL_ACCOUNT_LEN		33

/* The resource of the key that ids share when the table is full. */
#define PSVC_RL_OVERFLOW		"*"

/*
 * Who holds a key of the table: the database and the role whose user
 * mapping gave the request its API key.  The table is shared fairly among
 * owners when it is full (ratelimit.c, "The table is full").
 */
typedef struct PsvcRlOwner
{
	Oid			dbid;
	Oid			roleid;
} PsvcRlOwner;

/* ---- ratelimit_rules.c ---- */

/* What limits one request: the result of psvc_rl_rule(). */
typedef struct PsvcRlRule
{
	int			limit;			/* requests per window; 0 = unlimited */
	const char *row;			/* the row as the table or override writes
								 * it, for messages */
	bool		overridden;		/* the limit comes from option rate_limits */
	const char *resource;		/* the resource id the row counts per (a
								 * path value of the request), or NULL */
	const char *tier;			/* the server's tier, by its name */
	char	   *route;			/* "METHOD route" of the call's operation:
								 * what the stats and messages name */
} PsvcRlRule;

/*
 * The limit of req on its server: the server's override if it has one,
 * else the row of the table that the request's operation names
 * (catalog.c) at the server's tier, else unlimited.
 */
extern void psvc_rl_rule(const struct PsvcCallKey *key, PsvcRlRule *rule);

/* ---- ratelimit.c: shared memory ---- */

/*
 * A key of the limiter: one budget.  The partner account (a digest of the
 * base URL and the API key, server_account.c), never a server or a
 * database: the service counts per partner, so servers with one key share
 * a budget wherever they are, and a name another role chooses cannot
 * reach anyone's.
 */
typedef struct PsvcRlKey
{
	char		account[PSVC_RL_ACCOUNT_LEN];
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
	/* the server that took a unit last: for display only, not the budget */
	Oid			dbid;
	Oid			serverid;
	/* who asked last, and when (monotonic): whose key it is when full */
	PsvcRlOwner owner;
	int64		last_used;

	/*
	 * The fleet quota (quota.c), used only while partner_svc.quota_coordinator
	 * is set.  A unit may start an attempt only when the local budget above
	 * allows it and, in leased mode, one of the leased units is left.
	 */
	char		servername[NAMEDATALEN];	/* of serverid, for messages */
	int32		route_limit;	/* the route's limit (limit may be a share) */
	int32		leased;			/* units granted and not started yet */
	int64		lease_until;	/* they may start until then (monotonic) */
	int64		lease_retry_at; /* the coordinator had none: ask again then */
	bool		lease_wanted;	/* the worker should ask for a lease */
	int32		report_moved;	/* leased units that ended: count them now */
	int32		report_added;	/* units of fallback mode that ended */
	int32		report_returned;	/* leased units that never reached the
									 * service (expired, 429) */
	int64		report_block;	/* a 429 to pass on: blocked until then */
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
	int64		cache_hits;		/* answered by the response cache (cache.c) */
	int64		cache_misses;	/* looked up in it, not found: sent */
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
 * A request's dealings with the limiter (ratelimit.h): allocated in the
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
	int			share;			/* percent of limit it may use, without
								 * waiting; 100: all, waiting as usual */
	PsvcRlKey	key;
	PsvcStatsKey skey;
	PsvcRlOwner owner;			/* this database and the mapping's role */
	bool		from_lease;		/* the held unit came from a fleet lease */
	bool		quota_wait;		/* the last failed take waits for a lease */
	bool		attempt_waited;	/* the current attempt waited for budget */
	double		attempt_wait_ms;
	double		wait_ms;		/* all attempts */
};

/* The settings are guc.c's (guc.h). */

/* NULL unless the library was preloaded. */
extern PsvcRlShared *psvc_rl_shared;
extern HTAB *psvc_rl_key_table;
extern HTAB *psvc_rl_stats_table;

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
 * table has no room for the lease's owner.
 */
extern PsvcRlEntry *psvc_rl_take(PsvcRlLease *lease, int64 now,
								 int64 *frees_at, bool *blocked);
/*
 * Ends a unit held on e now; a 429 blocks the key instead of counting.
 * from_lease: the unit came from a fleet lease (quota.c).
 */
extern void psvc_rl_put(PsvcRlEntry *e, bool got_429, long hold_ms,
						bool from_lease);
/*
 * Forgets what keys have counted and been blocked for: the keys of
 * partner account account, and those that server serverid of this
 * database used last (another role's account through it); with account
 * NULL, every key.  Keys that then carry nothing are removed; units in
 * flight stay held.  Returns how many keys had counts or a block.  Takes
 * the table's lock; never raises.
 */
extern long psvc_rl_forget(const char *account, Oid serverid);
/*
 * in ratelimit_clock.c: bucket width for the window now in force:
 * (W + margin) / BUCKETS.
 */
extern int64 psvc_rl_bucket_width(void);
/* The stats row that counts routes without a row of their own. */
extern void psvc_rl_stats_overflow_key(PsvcStatsKey *key);

/* ---- quota.c, quota_exchange.c: one quota for a fleet of nodes ---- */

/* How this node budgets limited requests (partner_svc.rate_limits.mode). */
typedef enum PsvcQuotaMode
{
	PSVC_QUOTA_LOCAL,			/* no coordinator: this node's limiter alone */
	PSVC_QUOTA_CONNECTING,		/* waiting for the worker's first contact */
	PSVC_QUOTA_LEASED,			/* units are leased from the coordinator */
	PSVC_QUOTA_FALLBACK			/* coordinator unreachable: a share */
} PsvcQuotaMode;


/*
 * The mode requests of this node are in; for FALLBACK, *fallback_from is
 * when the share may be used (before it, nothing may start).  Starts the
 * worker when the mode needs one and it is not running.  Never raises.
 */
extern PsvcQuotaMode psvc_quota_mode(int64 now, int64 *fallback_from);
extern const char *psvc_quota_mode_name(PsvcQuotaMode mode);
/* Units per lease for a route of the given limit. */
extern int	psvc_quota_lease_size(int limit);
/* Lease validity, and how long a unit may be in flight at most (us). */
extern int64 psvc_quota_lease_valid_us(void);
/* Wakes the worker (a key wants a lease or has something to report). */
extern void psvc_quota_wake_worker(void);
/* This backend waits (or no longer waits) for the worker's answer. */
extern void psvc_quota_set_waiting(bool waiting);

/* Shared by quota.c and quota_exchange.c */
typedef struct PsvcQuotaShared
{
	slock_t		mutex;			/* protects everything below but waiting[] */
	PsvcQuotaMode mode;			/* as the worker last saw it */
	int64		fallback_from;	/* FALLBACK: the share may be used from then */
	int64		lost_at;		/* first failure since the last contact */
	int			worker_state;	/* 0 none, 1 starting, 2 running */
	int64		worker_started; /* monotonic time of the registration */
	Latch	   *worker_latch;
	int64		last_contact;	/* wall clock (TimestampTz) */
	char		last_error[256];
	int			nprocs;
	bool		waiting[FLEXIBLE_ARRAY_MEMBER]; /* by pgprocno */
} PsvcQuotaShared;

extern PsvcQuotaShared *psvc_quota_shared;

#endif							/* PSVC_RATELIMIT_INT_H */
