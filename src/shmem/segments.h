/*-------------------------------------------------------------------------
 *
 * segments.h
 *		  One shared-memory request and one startup for every segment of
 *		  partner_svc.
 *
 * A module that keeps state in shared memory describes its segment as a
 * PsvcSegment (its size, its named LWLock tranche, what to do at startup)
 * instead of chaining shmem_request_hook and shmem_startup_hook itself.
 * The composition root (_PG_init, src/init/partner_svc.c) hands the list
 * to psvc_shmem_install while preloading, which chains the two hooks once:
 * the request asks for the sum of the sizes and every tranche; the
 * startup runs each segment's startup under AddinShmemInitLock, then each
 * one's after_startup outside it.
 *
 * Memory: shared memory only; nothing is allocated here.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/segments.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_SEGMENTS_H
#define PSVC_SEGMENTS_H

typedef struct PsvcSegment
{
	/* bytes of the segment, its hash tables included (the GUCs are set) */
	Size		(*size) (void);
	const char *tranche;		/* named LWLock tranche, or NULL */
	int			nlocks;			/* locks of the tranche */
	/*
	 * Makes (postmaster, or each backend under EXEC_BACKEND) or attaches to
	 * the segment: ShmemInitStruct and ShmemInitHash, initialised when new.
	 * Called with AddinShmemInitLock held.
	 */
	void		(*startup) (void);
	/* Optional: what follows startup without the lock (a file to load). */
	void		(*after_startup) (void);
} PsvcSegment;

/* From _PG_init while preloading: the one pair of hooks for segs[0..n-1]. */
extern void psvc_shmem_install(const PsvcSegment *const *segs, int n);

#endif							/* PSVC_SEGMENTS_H */
