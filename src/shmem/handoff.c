/*-------------------------------------------------------------------------
 *
 * handoff.c
 *		  The ring in shared memory through which backends hand the orders
 *		  and checkouts they created to the webhook worker (handoff.h).
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
 * - A full ring (the worker stuck for a long time while creates go on)
 *   drops the record with a WARNING: the order exists at the partner and
 *   its webhooks still fill order_states; only the fallback polling of
 *   that order is lost.
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
#include "storage/spin.h"

#include "handoff.h"
#include "segments.h"

#define PSVC_HANDOFF_RING 1024

typedef struct HandoffShared
{
	slock_t		mutex;
	Oid			dbid;			/* the worker's database; invalid: none */
	Latch	   *latch;			/* the worker's */
	int			head;			/* oldest record */
	int			count;
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
	bool		full = false;

	if (handoff == NULL)
		return false;
	SpinLockAcquire(&handoff->mutex);
	if (OidIsValid(handoff->dbid) && handoff->dbid == MyDatabaseId)
	{
		if (handoff->count < PSVC_HANDOFF_RING)
		{
			handoff->ring[(handoff->head + handoff->count) % PSVC_HANDOFF_RING] = *c;
			handoff->count++;
			taken = true;
			latch = handoff->latch;
		}
		else
			full = true;
	}
	SpinLockRelease(&handoff->mutex);
	if (latch != NULL)
		SetLatch(latch);
	if (full)
		ereport(WARNING,
				(errmsg("%s \"%s\" is not recorded for status polling",
						c->checkout ? "checkout" : "order", c->id),
				 errdetail("The %d records waiting for the webhook worker fill its queue.",
						   PSVC_HANDOFF_RING),
				 errhint("Check that the webhook worker runs (partner_svc.webhook_status()).")));
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
}

int
psvc_handoff_take(PsvcCreated *out, int max)
{
	int			n = 0;

	if (handoff == NULL)
		return 0;
	SpinLockAcquire(&handoff->mutex);
	while (n < max && handoff->count > 0)
	{
		out[n++] = handoff->ring[handoff->head];
		handoff->head = (handoff->head + 1) % PSVC_HANDOFF_RING;
		handoff->count--;
	}
	SpinLockRelease(&handoff->mutex);
	return n;
}
