/*-------------------------------------------------------------------------
 *
 * quota.c
 *		  One partner quota for a fleet of PostgreSQL nodes: the settings,
 *		  the node's shared state, and what the limiter's backends ask of it.
 *
 * Without partner_svc.quota_coordinator (the default) nothing here runs:
 * every limited request is budgeted by this node's limiter alone
 * (ratelimit.c), as before.  With it, a limited attempt needs two things:
 * the node's own budget (the sliding window of ratelimit.c, unchanged) and
 * a unit of a lease that the coordinator granted to this node for the key.
 * Leases are fetched by one process per node, the quota worker
 * (src/call/quota_worker.c, through quota_exchange.c), never by the backends: a backend without a unit marks
 * its key as wanting one, wakes the worker and waits on its latch; the
 * worker batches the keys that want something into one statement to the
 * coordinator, partner_svc.quota_lease() (sql/install/35_quota.sql), and
 * wakes the waiters.  The same statement hands back what the node learnt:
 * units that ended (to be counted at the coordinator's now), units that
 * never reached the service (a 429, a lease that expired unused), and 429
 * blocks, which the coordinator passes to every node in its answers.
 *
 * Why the fleet never exceeds a limit.  quota_lease counts every granted
 * unit at a time c that is no earlier than the request's arrival at the
 * service: when granted, at grant + validity + the longest attempt (a unit
 * may start only within the validity, and an attempt ends within its
 * connect and request timeouts); when the node reports the unit ended, at
 * the time of the report.  It grants only while the units with c inside
 * the last W' (W plus the limiter's margin, in buckets as ratelimit.c) and
 * those with c still ahead stay below the limit.  The local limiter's
 * proof then carries over with "grant" for "start": of limit + 1 arrivals
 * within W, the one granted last, Z, was granted when every other one was
 * either counted ahead or inside the last W', so limit units were counted
 * and Z was not granted.  Reports are anonymous counts; moving "the
 * earliest n" of the units counted ahead keeps every remaining count at
 * least as late as its true one, so the argument holds.
 *
 * Fallback.  When the worker cannot reach the coordinator, the node
 * budgets each key alone with floor(limit * quota_fallback_share).  Units
 * other nodes were granted before the coordinator was lost arrive before
 * lost + validity + longest attempt, so the share is used only from one
 * window W' after that (before it nothing starts): no window at the
 * service sees both leased and fallback requests, and the shares together
 * stay within the limit when they add up to at most 1.
 *
 * Locking.  psvc_quota_shared->mutex (a spinlock) protects the node state;
 * waiting[] is written by each backend for its own slot only and read by
 * the worker without the lock (a missed or spurious wakeup costs one
 * timeout, never correctness).  The per-key fleet fields live in the
 * limiter's entries, under the entries' mutexes (ratelimit.c's rules).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/quota.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/twophase.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "bgw.h"
#include "guc.h"
#include "pg_compat.h"
#include "ratelimit_int.h"
#include "segments.h"

/* A registered worker that has not started within this is registered again. */
#define QUOTA_START_GRACE_US	(INT64CONST(10) * 1000000)

/* A lease's units may start within this after the worker asked for it. */
#define QUOTA_LEASE_VALID_US	(INT64CONST(1000000))

PsvcQuotaShared *psvc_quota_shared = NULL;


PG_FUNCTION_INFO_V1(psvc_quota_status);

static int
quota_nprocs(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

static Size
quota_shmem_size(void)
{
	return add_size(offsetof(PsvcQuotaShared, waiting),
					mul_size(sizeof(bool), quota_nprocs()));
}

static void
quota_shmem_startup(void)
{
	bool		found;

	psvc_quota_shared = ShmemInitStruct("partner_svc fleet quota",
										quota_shmem_size(), &found);
	if (!found)
	{
		memset(psvc_quota_shared, 0, quota_shmem_size());
		SpinLockInit(&psvc_quota_shared->mutex);
		psvc_quota_shared->mode = PSVC_QUOTA_CONNECTING;
		psvc_quota_shared->nprocs = quota_nprocs();
	}
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_quota_segment = {
	.size = quota_shmem_size,
	.startup = quota_shmem_startup,
};

int64
psvc_quota_lease_valid_us(void)
{
	return QUOTA_LEASE_VALID_US;
}

/*
 * How long after its grant a leased unit may still reach the service:
 * the validity plus one attempt's connect and request timeouts.
 */
int64
psvc_quota_hold_us(void)
{
	return QUOTA_LEASE_VALID_US +
		((int64) psvc_guc_connect_timeout + psvc_guc_request_timeout) * 1000;
}

/*
 * Units per lease: one for limits below 100 (the per-id limits of the
 * order service: a unit left on one node would be missed by the others),
 * a twentieth of the limit above, at most 10000.
 */
int
psvc_quota_lease_size(int limit)
{
	if (limit < 100)
		return 1;
	return Min(limit / 20, 10000);
}

const char *
psvc_quota_mode_name(PsvcQuotaMode mode)
{
	switch (mode)
	{
		case PSVC_QUOTA_LOCAL:
			return "local";
		case PSVC_QUOTA_CONNECTING:
			return "connecting";
		case PSVC_QUOTA_LEASED:
			return "leased";
		case PSVC_QUOTA_FALLBACK:
			return "fallback";
	}
	return "local";
}

/*
 * Registers the quota worker (a dynamic background worker: nothing runs
 * while no coordinator is set).  When no worker slot is free the node
 * falls back as if the coordinator were unreachable.
 */
static void
start_worker(int64 now)
{
	static const PsvcBgwSpec spec = {
		.type = "partner_svc quota worker",
		.function = "psvc_quota_worker_main",	/* src/call/quota_worker.c */
		.database = false,
		.start = BgWorkerStart_ConsistentState,
		.restart_s = BGW_NEVER_RESTART,
	};
	bool		ok = psvc_bgw_start(&spec);

	if (!ok)
	{
		bool		changed = false;

		SpinLockAcquire(&psvc_quota_shared->mutex);
		if (psvc_quota_shared->mode != PSVC_QUOTA_FALLBACK)
		{
			changed = true;
			psvc_quota_shared->lost_at = now;
			psvc_quota_shared->fallback_from = now + psvc_quota_hold_us() +
				psvc_rl_bucket_width() * PSVC_RL_BUCKETS;
			pg_write_barrier();
			psvc_quota_shared->mode = PSVC_QUOTA_FALLBACK;
			strlcpy(psvc_quota_shared->last_error,
					"no background worker slot for the quota worker",
					sizeof(psvc_quota_shared->last_error));
		}
		SpinLockRelease(&psvc_quota_shared->mutex);
		if (changed)
			ereport(WARNING,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("partner_svc could not start its quota worker, falling back to %g of each rate limit",
							psvc_guc_quota_fallback_share),
					 errhint("Raise max_worker_processes.")));
	}
}

PsvcQuotaMode
psvc_quota_mode(int64 now, int64 *fallback_from)
{
	PsvcQuotaMode mode;
	bool		start = false;

	if (psvc_guc_quota_coordinator == NULL || psvc_guc_quota_coordinator[0] == '\0' ||
		psvc_quota_shared == NULL)
		return PSVC_QUOTA_LOCAL;

	/*
	 * The fast path, every request while the worker runs: aligned reads
	 * without the lock; a stale value only delays a change of mode by one
	 * request.
	 */
	if (psvc_quota_shared->worker_state == 2)
	{
		mode = psvc_quota_shared->mode;
		pg_read_barrier();		/* fallback_from is written before mode */
		*fallback_from = psvc_quota_shared->fallback_from;
		return mode == PSVC_QUOTA_LOCAL ? PSVC_QUOTA_CONNECTING : mode;
	}

	SpinLockAcquire(&psvc_quota_shared->mutex);
	mode = psvc_quota_shared->mode;
	*fallback_from = psvc_quota_shared->fallback_from;
	if (psvc_quota_shared->worker_state == 0 ||
		(psvc_quota_shared->worker_state == 1 &&
		 now - psvc_quota_shared->worker_started > QUOTA_START_GRACE_US))
	{
		start = true;
		psvc_quota_shared->worker_state = 1;
		psvc_quota_shared->worker_started = now;
	}
	SpinLockRelease(&psvc_quota_shared->mutex);

	if (start)
		start_worker(now);
	if (mode == PSVC_QUOTA_LOCAL)
		mode = PSVC_QUOTA_CONNECTING;
	return mode;
}

void
psvc_quota_wake_worker(void)
{
	Latch	   *latch;

	if (psvc_quota_shared == NULL)
		return;
	SpinLockAcquire(&psvc_quota_shared->mutex);
	latch = psvc_quota_shared->worker_latch;
	SpinLockRelease(&psvc_quota_shared->mutex);
	if (latch != NULL)
		SetLatch(latch);
}

void
psvc_quota_set_waiting(bool waiting)
{
	int			me = psvc_proc_index();

	if (psvc_quota_shared == NULL || me < 0 || me >= psvc_quota_shared->nprocs)
		return;
	psvc_quota_shared->waiting[me] = waiting;
}

/*
 * partner_svc.quota_status(): the node's mode (local, connecting, leased,
 * fallback), the last contact with the coordinator, since when the
 * fallback share may be used, and the last error of the worker.  Reads
 * shared memory only; starts nothing.
 */
Datum
psvc_quota_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	PsvcQuotaMode mode = PSVC_QUOTA_LOCAL;
	int64		fallback_from = 0;
	TimestampTz last_contact = 0;
	char		err[sizeof(psvc_quota_shared->last_error)];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	err[0] = '\0';
	if (psvc_guc_quota_coordinator[0] != '\0' && psvc_quota_shared != NULL)
	{
		SpinLockAcquire(&psvc_quota_shared->mutex);
		mode = psvc_quota_shared->mode;
		fallback_from = psvc_quota_shared->fallback_from;
		last_contact = psvc_quota_shared->last_contact;
		memcpy(err, psvc_quota_shared->last_error, sizeof(err));
		SpinLockRelease(&psvc_quota_shared->mutex);
		if (mode == PSVC_QUOTA_LOCAL)
			mode = PSVC_QUOTA_CONNECTING;
	}
	values[0] = CStringGetTextDatum(psvc_quota_mode_name(mode));
	if (last_contact == 0)
		nulls[1] = true;
	else
		values[1] = TimestampTzGetDatum(last_contact);
	if (mode != PSVC_QUOTA_FALLBACK)
		nulls[2] = true;
	else
		values[2] = TimestampTzGetDatum(psvc_rl_timestamp(fallback_from));
	if (err[0] == '\0')
		nulls[3] = true;
	else
		values[3] = CStringGetTextDatum(err);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
