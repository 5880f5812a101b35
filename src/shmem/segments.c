/*-------------------------------------------------------------------------
 *
 * segments.c
 *		  The one shmem_request_hook and shmem_startup_hook of partner_svc,
 *		  for every segment the composition root lists (segments.h).
 *
 * Before, each of eight segments chained both hooks itself, each with its
 * own copy of the locking; now the order of the segments is the order of
 * the list, and AddinShmemInitLock is taken once around all of them.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/segments.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "segments.h"

static const PsvcSegment *const *segments = NULL;
static int	nsegments = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
segments_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	for (int i = 0; i < nsegments; i++)
	{
		RequestAddinShmemSpace(segments[i]->size());
		if (segments[i]->tranche != NULL)
			RequestNamedLWLockTranche(segments[i]->tranche, segments[i]->nlocks);
	}
}

static void
segments_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	for (int i = 0; i < nsegments; i++)
		segments[i]->startup();
	LWLockRelease(AddinShmemInitLock);
	for (int i = 0; i < nsegments; i++)
		if (segments[i]->after_startup != NULL)
			segments[i]->after_startup();
}

void
psvc_shmem_install(const PsvcSegment *const *segs, int n)
{
	Assert(process_shared_preload_libraries_in_progress);
	segments = segs;
	nsegments = n;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = segments_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = segments_startup;
}
