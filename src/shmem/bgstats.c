/*-------------------------------------------------------------------------
 *
 * bgstats.c
 *		  The cumulative counters of the background work in shared memory
 *		  (bgstats.h), and the functions behind partner_svc.stat_background.
 *
 * Design notes:
 *
 * - One struct of 64-bit atomics, a segment of the one request and
 *   startup of shared memory (segments.h).  Adding is one atomic fetch-add, from any
 *   process, with no lock: the producers are the senders' and the
 *   worker's hot paths.  A reset writes zeros and the new stats_reset;
 *   an add racing with it may survive the reset, as in pg_stat_*.
 * - The counters start at zero and stats_reset at the server's start: a
 *   worker that restarts finds them as they were.  They are not written
 *   to disk.
 * - calls_waiting and oldest_unfinished are not counters: the view reads
 *   them from partner_svc.deferred_queue (sql/install/65_stat_background.sql).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/bgstats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "bgstats.h"
#include "segments.h"

typedef struct BgsShared
{
	pg_atomic_uint64 counters[PSVC_BGS_COUNT];
	pg_atomic_uint64 stats_reset;	/* a TimestampTz */
} BgsShared;

static BgsShared *bgs = NULL;

PG_FUNCTION_INFO_V1(psvc_bgs_stats);
PG_FUNCTION_INFO_V1(psvc_bgs_reset);

static Size
bgs_shmem_size(void)
{
	return MAXALIGN(sizeof(BgsShared));
}

static void
bgs_shmem_startup(void)
{
	bool		found;

	bgs = ShmemInitStruct("partner_svc background counters", sizeof(BgsShared), &found);
	if (!found)
	{
		for (int i = 0; i < PSVC_BGS_COUNT; i++)
			pg_atomic_init_u64(&bgs->counters[i], 0);
		pg_atomic_init_u64(&bgs->stats_reset, (uint64) GetCurrentTimestamp());
	}
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_bgs_segment = {
	.size = bgs_shmem_size,
	.startup = bgs_shmem_startup,
};

void
psvc_bgs_add(PsvcBgsCounter which, int64 n)
{
	if (bgs == NULL || n <= 0 || which < 0 || which >= PSVC_BGS_COUNT)
		return;
	pg_atomic_fetch_add_u64(&bgs->counters[which], (uint64) n);
}

void
psvc_bgs_call_outcome(int64 id, const char *op, const char *state,
					  const char *sqlstate, const char *message)
{
	if (strcmp(state, "done") == 0)
		psvc_bgs_add(PSVC_BGS_CALLS_DONE, 1);
	else if (strcmp(state, "queued") == 0)
		psvc_bgs_add(PSVC_BGS_CALLS_RETRIED, 1);
	else if (strcmp(state, "failed") == 0)
	{
		psvc_bgs_add(PSVC_BGS_CALLS_FAILED, 1);
		ereport(LOG,
				(errmsg("partner_svc deferred call " INT64_FORMAT " (%s) failed for good: %s",
						id, op ? op : "?", message ? message : "no message"),
				 errdetail("SQLSTATE %s; partner_svc.deferred_result(" INT64_FORMAT ") shows the error.",
						   sqlstate ? sqlstate : "none", id)));
	}
}

/*
 * partner_svc.stat_background_counters(): the counters and stats_reset,
 * one row (the view adds what it reads from the queue).  Without the
 * preloaded library every column is null.
 */
Datum
psvc_bgs_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[PSVC_BGS_COUNT + 1];
	bool		nulls[PSVC_BGS_COUNT + 1];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(nulls, bgs == NULL, sizeof(nulls));
	for (int i = 0; i < PSVC_BGS_COUNT; i++)
		values[i] = Int64GetDatum(bgs ? (int64) pg_atomic_read_u64(&bgs->counters[i]) : 0);
	values[PSVC_BGS_COUNT] = TimestampTzGetDatum(bgs ? (TimestampTz) pg_atomic_read_u64(&bgs->stats_reset) : 0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* partner_svc.stat_background_reset(): every counter to zero, from now. */
Datum
psvc_bgs_reset(PG_FUNCTION_ARGS)
{
	if (bgs == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("stat_background_reset() needs partner_svc in shared_preload_libraries"),
				 errdetail("The counters of the background work live in shared memory, which partner_svc has only when it is preloaded.")));
	for (int i = 0; i < PSVC_BGS_COUNT; i++)
		pg_atomic_write_u64(&bgs->counters[i], 0);
	pg_atomic_write_u64(&bgs->stats_reset, (uint64) GetCurrentTimestamp());
	PG_RETURN_VOID();
}
