/*-------------------------------------------------------------------------
 *
 * bgstats.h
 *		  Cumulative counters of the background work (deferred calls, status
 *		  polls, webhooks) in shared memory, for the view
 *		  partner_svc.stat_background (bgstats.c).
 *
 * The counters live in shared memory, so they outlive a worker's restart
 * (not the server's), and count from stats_reset: the server's start or
 * the last partner_svc.stat_background_reset().  Each producer adds with
 * one call, psvc_bgs_add(counter, n), where the thing happened:
 * defer() (queued), the deferred sender's record of an outcome
 * (psvc_bgs_call_outcome: done, retried, failed, the last logged once),
 * the reconciler (polls, changes, failures), the webhook store (received,
 * stored, rejected).  Counts are not transactional, as pg_stat_* are not:
 * a defer() rolled back was counted as queued.
 *
 * Memory: shared memory only; the view's row in the caller's context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/bgstats.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_BGSTATS_H
#define PSVC_BGSTATS_H

#include "fmgr.h"

/* The counters, in the order of the view's columns. */
typedef enum PsvcBgsCounter
{
	PSVC_BGS_CALLS_QUEUED,		/* defer() */
	PSVC_BGS_CALLS_DONE,		/* a call ended done */
	PSVC_BGS_CALLS_FAILED,		/* a call ended failed (for good) */
	PSVC_BGS_CALLS_RETRIED,		/* an attempt failed, the call queued again */
	PSVC_BGS_POLLS,				/* status requests of the reconciler */
	PSVC_BGS_POLL_CHANGES,		/* polls that changed a stored status */
	PSVC_BGS_POLL_FAILURES,		/* polls that raised an error */
	PSVC_BGS_WEBHOOKS_RECEIVED, /* complete deliveries taken for storage */
	PSVC_BGS_WEBHOOKS_STORED,	/* answered 200: kept in webhook_events */
	PSVC_BGS_WEBHOOKS_REJECTED, /* answered 400: kept in webhook_rejects */
	PSVC_BGS_COUNT
} PsvcBgsCounter;

struct PsvcSegment;				/* segments.h */
extern const struct PsvcSegment psvc_bgs_segment;

/* Adds n to a counter; nothing without shared memory.  Never raises. */
extern void psvc_bgs_add(PsvcBgsCounter which, int64 n);

/*
 * The outcome of one attempt of deferred call id (operation op) as the
 * sender records it, state "done", "queued" (retried) or "failed":
 * counted; a failure is also logged, once (the record of a final state is
 * written once), with its SQLSTATE and message (never a key: the message
 * is the call's own error, which holds none).
 */
extern void psvc_bgs_call_outcome(int64 id, const char *op, const char *state,
								  const char *sqlstate, const char *message);

extern Datum psvc_bgs_stats(PG_FUNCTION_ARGS);
extern Datum psvc_bgs_reset(PG_FUNCTION_ARGS);

#endif							/* PSVC_BGSTATS_H */
