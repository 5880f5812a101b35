/*-------------------------------------------------------------------------
 *
 * ratelimit.h
 *		  The client-side rate limiter of partner_svc and the request
 *		  statistics, in shared memory.
 *
 * The module is ratelimit.c (shared memory, keys and buckets),
 * ratelimit_clock.c (its clock and window), ratelimit_request.c (one
 * request's lease), ratelimit_rules.c (the table of limits, tiers and
 * per-route overrides), ratelimit_views.c (partner_svc.stats and
 * partner_svc.rate_limits) and the fleet quota (quota.c,
 * quota_exchange.c, src/call/quota_worker.c); their shared internals are in ratelimit_int.h, with
 * the locking rules in the header of ratelimit.c.  The call module
 * (call.h) is its only caller for requests; fdw_options.c checks the
 * rate_limits option with it.
 *
 * Memory: the limiter's state is in shared memory; a lease is allocated
 * in the context given to psvc_rl_prepare (the transfer's).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/ratelimit.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_RATELIMIT_H
#define PSVC_RATELIMIT_H

#include "utils/palloc.h"

struct PsvcCallKey;				/* options.h */

struct PsvcSegment;				/* segments.h */
/* The limiter's and the fleet quota's segments in shared memory. */
extern const struct PsvcSegment psvc_rl_segment;
extern const struct PsvcSegment psvc_quota_segment;

/*
 * One request's dealings with the limiter and the stats, opaque outside
 * ratelimit.c.  http.c calls, for each request: psvc_rl_prepare once when
 * it starts (the lease lives in the given context); psvc_rl_acquire before
 * every attempt (waits for budget, interruptibly, or raises); then
 * psvc_rl_attempt_done when the attempt ended, or psvc_rl_release from the
 * transfer's cleanup when it was abandoned mid-attempt (never raises).
 */
typedef struct PsvcRlLease PsvcRlLease;

extern PsvcRlLease *psvc_rl_prepare(const struct PsvcCallKey *key, MemoryContext cxt);
extern void psvc_rl_acquire(PsvcRlLease *lease);
/*
 * status: the HTTP status, 0 when no response came.  hold_ms: for a 429,
 * how long the service asked to wait (Retry-After, or the backoff chosen),
 * -1 when unknown.  retrying: another attempt follows.
 */
extern void psvc_rl_attempt_done(PsvcRlLease *lease, long status,
								 size_t bytes_sent, size_t bytes_received,
								 double elapsed_ms, bool retrying, long hold_ms);
extern void psvc_rl_release(PsvcRlLease *lease);
/* Counts a hit or a miss of the response cache in partner_svc.stats. */
extern void psvc_rl_count_cache(Oid serverid, const char *method,
								const char *route, bool hit);
/* Time this request waited for budget so far, in milliseconds. */
extern double psvc_rl_waited_ms(const PsvcRlLease *lease);

/* in ratelimit_rules.c: the table of limits, tiers and per-route overrides */

/* Checks the value of server option "rate_limits"; raises on a bad one. */
extern void psvc_rl_check_overrides(const char *value);

/* in ratelimit_clock.c: monotonic clock, microseconds; the same in every
 * process. */
extern int64 psvc_rl_now(void);

/*
 * The fleet quota's exchange with its coordinator (quota_exchange.c), for
 * the quota worker (src/call/quota_worker.c), which owns the process and
 * the connection: what is due for each key, sent as one item, and the
 * coordinator's answer read into the same item.
 */
typedef struct PsvcQuotaItem
{
	struct PsvcRlKey *key;		/* the limiter's: which entry */
	char	   *qkey;			/* the key at the coordinator */
	int			limit;
	int			want;
	int			moved;
	int			added;
	int			returned;
	int			block_ms;
	int64		report_block;	/* the limiter's: put back on failure */
	int			granted;		/* the answer */
	int			blocked_ms;
	int			retry_ms;
} PsvcQuotaItem;

/* The worker runs with latch (NULL: it exits); false without preloading. */
extern bool psvc_quota_worker_running(struct Latch *latch);
/*
 * Takes what is due to the coordinator from every key: the items, sorted
 * by qkey, allocated in the current context.
 */
extern PsvcQuotaItem *psvc_quota_collect(int *nitems);
/* The answers (ok), or everything put back to be sent again (!ok). */
extern void psvc_quota_apply(PsvcQuotaItem *items, int n, bool ok, int64 sent_at);
/* The coordinator answered: leased mode. */
extern void psvc_quota_note_contact(void);
/* It did not (msg: one line, what and why): fallback mode. */
extern void psvc_quota_note_failure(const char *msg);
/* Sets the latch of every backend that waits for the worker. */
extern void psvc_quota_wake_waiters(void);
/* The coordinator's setting was emptied: every lease and report forgotten. */
extern void psvc_quota_forget(void);
/* How long a unit may be in flight at most (us). */
extern int64 psvc_quota_hold_us(void);

#endif							/* PSVC_RATELIMIT_H */
