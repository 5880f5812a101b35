/*-------------------------------------------------------------------------
 *
 * quota_exchange.c
 *		  The limiter's side of the fleet quota's exchange with the
 *		  coordinator: what is due to it, taken from the key table, and its
 *		  answers put back; the modes the exchange puts the node in.
 *
 * The quota worker (src/call/quota_worker.c) runs the exchange: it owns
 * the process and the libpq connection, and reaches the limiter's shared
 * state only through these functions (ratelimit.h), so that the state's
 * locking stays in this module (the header of quota.c).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/quota_exchange.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/proc.h"
#include "utils/timestamp.h"

#include "guc.h"
#include "ratelimit_int.h"

/* Reports of large routes without a lease request go at least this often. */
#define BULK_REPORT_US		(INT64CONST(1000000))

/*
 * The quota worker runs (latch: the worker's, which the backends set), or
 * no longer does (NULL: at its exit; the backends start a new one when
 * they need it).  False without the limiter's shared memory.
 */
bool
psvc_quota_worker_running(Latch *latch)
{
	if (psvc_quota_shared == NULL || psvc_rl_shared == NULL)
		return false;
	SpinLockAcquire(&psvc_quota_shared->mutex);
	psvc_quota_shared->worker_state = latch ? 2 : 0;
	psvc_quota_shared->worker_latch = latch;
	SpinLockRelease(&psvc_quota_shared->mutex);
	return true;
}

/* Sets every waiting backend's latch. */
void
psvc_quota_wake_waiters(void)
{
	for (int i = 0; i < psvc_quota_shared->nprocs; i++)
	{
		if (psvc_quota_shared->waiting[i])
			SetLatch(&ProcGlobal->allProcs[i].procLatch);
	}
}

/* The coordinator answered: leased mode (logged when it is a change). */
void
psvc_quota_note_contact(void)
{
	PsvcQuotaMode old;

	SpinLockAcquire(&psvc_quota_shared->mutex);
	old = psvc_quota_shared->mode;
	psvc_quota_shared->mode = PSVC_QUOTA_LEASED;
	psvc_quota_shared->last_contact = GetCurrentTimestamp();
	psvc_quota_shared->last_error[0] = '\0';
	SpinLockRelease(&psvc_quota_shared->mutex);
	if (old != PSVC_QUOTA_LEASED)
	{
		ereport(LOG,
				(errmsg("partner_svc quota worker: leasing rate-limit budget from the coordinator")));
		psvc_quota_wake_waiters();
	}
}

/* True when msg ends with a full stop, question or exclamation mark. */
static bool
ends_sentence(const char *msg)
{
	size_t		len = strlen(msg);

	return len > 0 && strchr(".?!", msg[len - 1]) != NULL;
}

/*
 * The coordinator did not answer: fallback mode, whose share may be used
 * one window plus the longest life of a lease after now (quota.c).  msg is
 * one line: what was being done and the error.
 */
void
psvc_quota_note_failure(const char *msg)
{
	PsvcQuotaMode old;
	int64		now = psvc_rl_now();
	int64		from;

	SpinLockAcquire(&psvc_quota_shared->mutex);
	old = psvc_quota_shared->mode;
	if (old != PSVC_QUOTA_FALLBACK)
	{
		psvc_quota_shared->lost_at = now;
		psvc_quota_shared->fallback_from = now + psvc_quota_hold_us() +
			psvc_rl_bucket_width() * PSVC_RL_BUCKETS;
		/* backends read mode without the lock (quota.c) */
		pg_write_barrier();
		psvc_quota_shared->mode = PSVC_QUOTA_FALLBACK;
	}
	from = psvc_quota_shared->fallback_from;
	strlcpy(psvc_quota_shared->last_error, msg,
			sizeof(psvc_quota_shared->last_error));
	SpinLockRelease(&psvc_quota_shared->mutex);

	if (old != PSVC_QUOTA_FALLBACK)
	{
		ereport(LOG,
				(errmsg("partner_svc quota worker: coordinator unreachable, falling back to %g of each rate limit",
						psvc_guc_quota_fallback_share),
				 errdetail("%s%s  The share is used from %s on; the worker keeps trying to reach the coordinator.",
						   msg, ends_sentence(msg) ? "" : ".",
						   timestamptz_to_str(psvc_rl_timestamp(from)))));
		psvc_quota_wake_waiters();
	}
}

static int
item_cmp(const void *a, const void *b)
{
	return strcmp(((const PsvcQuotaItem *) a)->qkey, ((const PsvcQuotaItem *) b)->qkey);
}

/*
 * Takes from every entry what is due to the coordinator.  Returns the
 * items, sorted by key (so the coordinator locks its rows in one order),
 * allocated in the current context.
 */
PsvcQuotaItem *
psvc_quota_collect(int *nitems)
{
	static int64 next_bulk = 0;
	HASH_SEQ_STATUS seq;
	PsvcRlEntry *e;
	int64		now = psvc_rl_now();
	int			n = 0;
	int			cap;
	PsvcQuotaItem  *items;
	bool		bulk = now >= next_bulk;

	LWLockAcquire(psvc_rl_shared->lock, LW_SHARED);
	cap = Max((int) hash_get_num_entries(psvc_rl_key_table), 1);
	items = palloc0(sizeof(PsvcQuotaItem) * cap);
	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		PsvcQuotaItem  *it = &items[n];

		if (n >= cap)
		{
			hash_seq_term(&seq);
			break;
		}
		SpinLockAcquire(&e->mutex);
		if (e->leased > 0 && now >= e->lease_until)
		{
			e->report_returned += e->leased;
			e->leased = 0;
		}
		it->want = (e->lease_wanted && now >= e->lease_retry_at) ?
			psvc_quota_lease_size(e->route_limit) : 0;

		/*
		 * Reports alone go at once for keys of small limits, whose
		 * throughput the delay costs most; for large routes (leases of
		 * more than one unit) with the next lease, or once a second.
		 */
		if (it->want > 0 || e->report_block > now ||
			((bulk || psvc_quota_lease_size(e->route_limit) == 1) &&
			 (e->report_moved > 0 || e->report_added > 0 ||
			  e->report_returned > 0)))
		{
			it->key = palloc(sizeof(PsvcRlKey));
			*it->key = e->key;
			it->limit = e->route_limit;
			it->moved = e->report_moved;
			it->added = e->report_added;
			it->returned = e->report_returned;
			it->report_block = e->report_block;
			it->block_ms = e->report_block > now ?
				(int) Min((e->report_block - now) / 1000 + 1, INT_MAX) : 0;
			e->report_moved = e->report_added = e->report_returned = 0;
			e->report_block = 0;
			if (it->want > 0)
				e->lease_wanted = false;
			/* the account's digest: one fleet budget per partner account */
			it->qkey = psprintf("%s|%s|%s", e->key.account, e->key.route,
								e->key.resource);
			n++;
		}
		else if (e->report_block != 0 && e->report_block <= now)
			e->report_block = 0;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(psvc_rl_shared->lock);

	if (bulk)
		next_bulk = now + BULK_REPORT_US;
	if (n > 1)
		qsort(items, n, sizeof(PsvcQuotaItem), item_cmp);
	*nitems = n;
	return items;
}

/*
 * Applies the coordinator's answers (ok) or puts everything back to be
 * sent again (!ok).  sent_at: monotonic time the statement was sent.
 */
void
psvc_quota_apply(PsvcQuotaItem *items, int n, bool ok, int64 sent_at)
{
	int64		now = psvc_rl_now();

	LWLockAcquire(psvc_rl_shared->lock, LW_SHARED);
	for (int i = 0; i < n; i++)
	{
		PsvcQuotaItem  *it = &items[i];
		PsvcRlEntry *e = hash_search(psvc_rl_key_table, it->key, HASH_FIND, NULL);

		/* an evicted key: granted units stay counted until they expire */
		if (e == NULL)
			continue;
		SpinLockAcquire(&e->mutex);
		if (!ok)
		{
			e->report_moved += it->moved;
			e->report_added += it->added;
			e->report_returned += it->returned;
			e->report_block = Max(e->report_block, it->report_block);
			if (it->want > 0)
				e->lease_wanted = true;
		}
		else
		{
			if (it->granted > 0)
			{
				/*
				 * Units left of an older lease go back: they may start only
				 * within their own lease's validity.
				 */
				e->report_returned += e->leased;
				e->leased = it->granted;
				e->lease_until = sent_at + psvc_quota_lease_valid_us();
			}
			if (it->want > 0 && it->granted == 0)
				e->lease_retry_at = now + (int64) Max(it->retry_ms, 1) * 1000;
			if (it->blocked_ms > 0)
				e->blocked_until = Max(e->blocked_until,
									   now + (int64) it->blocked_ms * 1000);
		}
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(psvc_rl_shared->lock);
}

/* The setting was emptied: forget every lease and report, then exit. */
void
psvc_quota_forget(void)
{
	HASH_SEQ_STATUS seq;
	PsvcRlEntry *e;

	LWLockAcquire(psvc_rl_shared->lock, LW_SHARED);
	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		SpinLockAcquire(&e->mutex);
		e->leased = 0;
		e->lease_wanted = false;
		e->lease_retry_at = 0;
		e->report_moved = e->report_added = e->report_returned = 0;
		e->report_block = 0;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(psvc_rl_shared->lock);

	SpinLockAcquire(&psvc_quota_shared->mutex);
	psvc_quota_shared->mode = PSVC_QUOTA_CONNECTING;
	psvc_quota_shared->last_error[0] = '\0';
	psvc_quota_shared->last_contact = 0;
	SpinLockRelease(&psvc_quota_shared->mutex);
	psvc_quota_wake_waiters();
}
