/*-------------------------------------------------------------------------
 *
 * handoff.c
 *		  The ring in shared memory through which backends hand the orders
 *		  and checkouts they created to the poll worker (handoff.h).
 *
 * Design notes:
 *
 * - One fixed ring of PSVC_HANDOFF_RING records, asked for in
 *   the one request and startup of shared memory (segments.h).  One spinlock protects the
 *   ring, the worker's database and its latch; a record is copied in or
 *   out under it (a few hundred bytes, nothing that can raise).
 * - Only the worker's database is recorded: the worker writes into its
 *   own database only (partner_svc.worker_database), so a create in another one
 *   is not handed over (its order_states are not the worker's).  Without
 *   a running worker nothing is handed over, so nothing piles up.
 * - A full ring (creates faster than the poll worker writes them) never
 *   drops a record: the creator waits on a condition variable until the
 *   worker has taken some (it takes them before any poll, and a poll is
 *   bounded by partner_svc.poll_timeout), or until the worker detaches.
 *   Each wait is counted (webhook_status().created_waits).  The wait
 *   sleeps a second at a time and checks for interrupts, so a cancel
 *   ends it (the order exists anyway; only its record is lost).
 * - The worker's latch is set on every push, so the record is written
 *   within a turn of its loop.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/handoff.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/wait_event.h"

#include "handoff.h"
#include "pg_compat.h"
#include "segments.h"

#define PSVC_HANDOFF_RING 1024

typedef struct HandoffShared
{
	slock_t		mutex;
	Oid			dbid;			/* the worker's database; invalid: none */
	Latch	   *latch;			/* the worker's */
	int			head;			/* oldest record */
	int			count;
	uint64		waits;			/* creators that waited for room */
	ConditionVariable room;		/* broadcast when records are taken */
	PsvcCreated ring[PSVC_HANDOFF_RING];
} HandoffShared;

static HandoffShared *handoff = NULL;

static Size
handoff_shmem_size(void)
{
	return MAXALIGN(sizeof(HandoffShared));
}

static void
handoff_shmem_startup(void)
{
	bool		found;

	handoff = ShmemInitStruct("partner_svc created objects", sizeof(HandoffShared), &found);
	if (!found)
	{
		SpinLockInit(&handoff->mutex);
		handoff->dbid = InvalidOid;
		handoff->latch = NULL;
		handoff->head = 0;
		handoff->count = 0;
		handoff->waits = 0;
		ConditionVariableInit(&handoff->room);
	}
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_handoff_segment = {
	.size = handoff_shmem_size,
	.startup = handoff_shmem_startup,
};

bool
psvc_handoff_push(const PsvcCreated *c)
{
	Latch	   *latch = NULL;
	bool		taken = false;
	bool		waited = false;

	if (handoff == NULL)
		return false;
	for (;;)
	{
		bool		full = false;

		SpinLockAcquire(&handoff->mutex);
		if (OidIsValid(handoff->dbid) && handoff->dbid == MyDatabaseId)
		{
			if (handoff->count < PSVC_HANDOFF_RING)
			{
				handoff->ring[(handoff->head + handoff->count) % PSVC_HANDOFF_RING] = *c;
				handoff->count++;
				taken = true;
			}
			else
			{
				full = true;
				if (!waited)
					handoff->waits++;
			}
			latch = handoff->latch;
		}
		SpinLockRelease(&handoff->mutex);
		if (latch != NULL)
			SetLatch(latch);
		if (!full)
			break;
		/* room comes when the worker takes records; it was just woken */
		waited = true;
		(void) ConditionVariableTimedSleep(&handoff->room, 1000,
										   psvc_wait_event(PSVC_WAIT_WORKER));
	}
	if (waited)
		ConditionVariableCancelSleep();
	return taken;
}

void
psvc_handoff_attach(Oid dbid)
{
	if (handoff == NULL)
		return;
	SpinLockAcquire(&handoff->mutex);
	handoff->dbid = dbid;
	handoff->latch = MyLatch;
	SpinLockRelease(&handoff->mutex);
}

void
psvc_handoff_detach(void)
{
	if (handoff == NULL)
		return;
	SpinLockAcquire(&handoff->mutex);
	if (handoff->latch == MyLatch)
	{
		handoff->dbid = InvalidOid;
		handoff->latch = NULL;
	}
	SpinLockRelease(&handoff->mutex);
	/* waiting creators see that nobody takes records any more */
	ConditionVariableBroadcast(&handoff->room);
}

int
psvc_handoff_peek(PsvcCreated *out, int max)
{
	int			n = 0;

	if (handoff == NULL)
		return 0;
	SpinLockAcquire(&handoff->mutex);
	for (; n < max && n < handoff->count; n++)
		out[n] = handoff->ring[(handoff->head + n) % PSVC_HANDOFF_RING];
	SpinLockRelease(&handoff->mutex);
	return n;
}

void
psvc_handoff_drop(int n)
{
	if (handoff == NULL || n <= 0)
		return;
	SpinLockAcquire(&handoff->mutex);
	n = Min(n, handoff->count);
	handoff->head = (handoff->head + n) % PSVC_HANDOFF_RING;
	handoff->count -= n;
	SpinLockRelease(&handoff->mutex);
	ConditionVariableBroadcast(&handoff->room);
}

uint64
psvc_handoff_waits(void)
{
	uint64		n;

	if (handoff == NULL)
		return 0;
	SpinLockAcquire(&handoff->mutex);
	n = handoff->waits;
	SpinLockRelease(&handoff->mutex);
	return n;
}

int
psvc_handoff_pending(void)
{
	int			n;

	if (handoff == NULL)
		return 0;
	SpinLockAcquire(&handoff->mutex);
	n = handoff->count;
	SpinLockRelease(&handoff->mutex);
	return n;
}
